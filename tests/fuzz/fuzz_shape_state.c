// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for rxbneck-shape's state records (tools/shape/state.c).
 * Beyond "no crash", an accepted file must format back to text that parses
 * to the same record, and a rejected one must leave the output untouched
 * and name a line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/shape/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shape_state s, again, before;
	static char text[SHAPE_STATE_MAX_FILE];
	char err[256];
	int len;

	memset(&s, 0x5a, sizeof(s));
	before = s;
	if (shape_state_parse((const char *)data, size, &s, err, sizeof(err))) {
		/* Every error names its line, but those about the whole file. */
		bool whole = size == 0 || size > SHAPE_STATE_MAX_FILE;

		if (memcmp(&s, &before, sizeof(s)) != 0 ||
		    (!whole && strncmp(err, "line ", 5) != 0) || (whole && !err[0]))
			abort();
		return 0;
	}
	len = shape_state_format(&s, text, sizeof(text));
	if (len < 0)
		abort();
	memset(&again, 0, sizeof(again));
	if (shape_state_parse(text, (size_t)len, &again, err, sizeof(err)) ||
	    memcmp(&s, &again, sizeof(s)) != 0)
		abort();
	return 0;
}
