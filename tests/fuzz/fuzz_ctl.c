// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for what rxbneckd reads from untrusted local input
 * besides its configuration: rxbneckctl request lines (ctlsrv_parse_request,
 * daemon/serve/ctlsrv.c), lines of the state file (state_parse_line) and
 * the whole file as the daemon loads it (state_load_text,
 * daemon/model/state.c). The first byte picks the parser: odd a request,
 * 0 mod 4 a line, 2 mod 4 a file.
 *
 * Properties besides "no crash, no sanitizer report":
 *  - a parsed request has a lowercase verb, at most CTLSRV_MAX_ARGS
 *    printable arguments, and json set exactly when one of them is "json";
 *  - a parsed state line formats back to a line that parses to the same
 *    port, receiver cost and placement;
 *  - a loaded file gives at most STATE_MAX_PORTS distinct ports, each with
 *    a receiver cost, and no more than its lines.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/serve/ctlsrv.h"
#include "daemon/model/state.h"
#include "tests/fuzz/fuzz_pick.h"

static void request(const uint8_t *data, size_t size)
{
	char line[CTLSRV_MAX_REQUEST + 1];
	struct ctl_request r;
	const char *why = NULL;
	bool json = false;

	if (size > CTLSRV_MAX_REQUEST)
		size = CTLSRV_MAX_REQUEST;
	memcpy(line, data, size);
	line[size] = '\0';
	if (ctlsrv_parse_request(line, &r, &why) != CTL_OK) {
		if (!why)
			abort();
		return;
	}
	if (!r.verb || !r.verb[0] || r.argc < 0 || r.argc > CTLSRV_MAX_ARGS)
		abort();
	for (const char *p = r.verb; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '-' || *p == '_'))
			abort();
	for (int i = 0; i < r.argc; i++) {
		if (!r.argv[i][0])
			abort();
		for (const char *p = r.argv[i]; *p; p++)
			if (*p <= ' ' || *p > '~')
				abort();
		json |= !strcmp(r.argv[i], "json");
	}
	if (json != r.json)
		abort();
}

static void state_line(const uint8_t *data, size_t size)
{
	char line[STATE_MAX_LINE + 2], again[STATE_MAX_LINE + 64];
	struct state_entry e, back;
	int n;

	if (size > STATE_MAX_LINE + 1)
		size = STATE_MAX_LINE + 1;
	memcpy(line, data, size);
	line[size] = '\0';
	if (state_parse_line(line, &e))
		return;
	n = state_format_line(&e, again, sizeof(again));
	if (n <= 0 || (size_t)n >= sizeof(again))
		abort();
	if (n > STATE_MAX_LINE)
		return;		/* a long line of valid items: too long to keep */
	if (state_parse_line(again, &back))
		abort();
	if (back.port != e.port || back.learn.ncpus != e.learn.ncpus ||
	    fabs(ewma_ratio_value(&back.learn.cpu_ns_per_pkt) -
		 ewma_ratio_value(&e.learn.cpu_ns_per_pkt)) >
	    1e-8 * ewma_ratio_value(&e.learn.cpu_ns_per_pkt))
		abort();
}

static void state_file(const uint8_t *data, size_t size)
{
	static struct state s;
	static char text[STATE_MAX_FILE + 1];
	size_t lines = 1;

	if (size > STATE_MAX_FILE)
		size = STATE_MAX_FILE;
	memcpy(text, data, size);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	memset(&s, 0, sizeof(s));
	s.dirfd = -1;
	state_load_text(&s, text, size);
	if (s.n < 0 || s.n > STATE_MAX_PORTS || (size_t)s.n > lines)
		abort();
	for (int i = 0; i < s.n; i++) {
		if (!s.v[i].port || !s.v[i].learn.cpu_ns_per_pkt.ok)
			abort();
		for (int j = 0; j < i; j++)
			if (s.v[j].port == s.v[i].port)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && (data[0] & 3) == 2)
		state_file(data + 1, size - 1);
	else
		fuzz_pick(data, size, request, state_line);
	return 0;
}
