// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for what rxbneckctl reads from the control socket: the
 * daemon's answer (answer_parse, ctl/view/answer.c) and every view of the
 * document in it (ctl/view/view_*.c). The first byte picks the input's
 * kind:
 *   even  the rest is an answer: status line and JSON body. A parsed
 *         answer is shown through every view, verbose;
 *   odd   the rest is doubles (8 bytes each), put through every vfmt
 *         number format.
 *
 * Properties besides "no crash, no leak, no sanitizer report":
 *  - a parsed OK answer has a JSON object; an ERR one a code of A-Z and _
 *    and a message without control characters;
 *  - no view writes a control character other than '\n' (the daemon's
 *    strings are made printable);
 *  - a number format never writes "nan" or "inf" and stays within
 *    VFMT_LEN.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl/view/answer.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"
#include "ctl/view/view_buffers.h"
#include "ctl/view/view_measure.h"
#include "ctl/view/view_senders.h"
#include "ctl/view/view_status.h"
#include "tests/fuzz/fuzz_pick.h"

static void check_printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\n')
			abort();
}

static void views(const struct json_object *doc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	view_status(f, doc, VIEW_VERBOSE);
	view_status(f, doc, 0);
	view_senders(f, doc, 0);
	view_reload(f, doc, 0);
	view_version(f, doc);
	view_measure(f, doc);
	view_buffers(f, doc, VIEW_VERBOSE);
	view_buffers(f, doc, 0);
	fclose(f);
	check_printable(buf, len);
	free(buf);
}

static void answer(const uint8_t *data, size_t size)
{
	char why[ANSWER_WHY_LEN];
	struct answer a;

	if (answer_parse((const char *)data, size, &a, why)) {
		if (!why[0])
			abort();
		return;
	}
	if (a.ok && !json_object_is_type(a.doc, json_type_object))
		abort();
	if (!a.ok) {
		if (!a.code[0] || strspn(a.code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(a.code))
			abort();
		check_printable(a.message, strlen(a.message));
	}
	if (a.doc)
		views(a.doc);
	answer_release(&a);
}

static void check_number(const char *s)
{
	if (strlen(s) >= VFMT_LEN || strcasestr(s, "nan") || strcasestr(s, "inf"))
		abort();
}

static void numbers(const uint8_t *data, size_t size)
{
	for (; size >= sizeof(double); data += sizeof(double), size -= sizeof(double)) {
		char b[VFMT_LEN];
		double v;

		memcpy(&v, data, sizeof(v));
		check_number(vfmt_fixed(b, v, (int)(data[0] % 12) - 1));
		check_number(vfmt_si(b, v));
		check_number(vfmt_count(b, v));
		check_number(vfmt_rate(b, v));
		check_number(vfmt_bytes(b, v));
		check_number(vfmt_dur(b, v));
		check_number(vfmt_pct(b, v, data[1] % 8));
		check_number(vfmt_prob(b, v));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_pick(data, size, numbers, answer);
}
