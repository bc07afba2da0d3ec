// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for what daemon/collect/sockowner.c parses from /proc:
 * descriptor links (/proc/PID/fd/N) and syscall lines
 * (/proc/PID/task/TID/syscall). The first byte picks the parser.
 *
 * Properties besides "no crash, no sanitizer report":
 *  - an accepted link formats back to exactly the input;
 *  - an accepted syscall line has a call number >= 0 and starts with it.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/collect/sockowner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[512], again[64];
	uint64_t v;
	long nr;

	if (!size)
		return 0;
	if (size - 1 >= sizeof(text))
		size = sizeof(text);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (data[0] & 1) {
		if (sockowner_parse_fdlink(text, &v) == 0) {
			snprintf(again, sizeof(again), "socket:[%" PRIu64 "]", v);
			if (strcmp(again, text))
				abort();
		}
	} else if (sockowner_parse_syscall(text, &nr, &v) == 0) {
		snprintf(again, sizeof(again), "%ld ", nr);
		if (nr < 0 || strncmp(again, text, strlen(again)))
			abort();
	}
	return 0;
}
