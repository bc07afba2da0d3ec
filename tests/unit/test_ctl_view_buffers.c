// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `rxbneckctl buffers` end to end without a daemon: the daemon's document
 * (status_buffer_json() on a buffer table filled as a step would) parsed
 * and shown by the view; a document of nulls shows "-", never "nan".
 */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/json.h"
#include "ctl/view/view.h"
#include "ctl/view/view_buffers.h"
#include "daemon/daemon.h"
#include "daemon/serve/status_buffer.h"
#include "tests/unit/unit_main.h"

static char *show(const char *json, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(view_buffers_text(f, json, strlen(json), flags), 0);
	fclose(f);
	return buf;
}

static void contains(const char *text, const char *want)
{
	if (!strstr(text, want)) {
		fprintf(stderr, "'%s' not in:\n%s\n", want, text);
		fail();
	}
}

static void no_nonfinite(const char *text)
{
	regex_t re;

	assert_int_equal(regcomp(&re, "(^|[^a-z])-?(nan|inf)([^a-z]|$)", REG_EXTENDED | REG_ICASE), 0);
	assert_int_equal(regexec(&re, text, 0, NULL, 0), REG_NOMATCH);
	regfree(&re);
}

static void test_from_the_daemon(void **state)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct buffer_sock *x;
	struct json_writer w;
	char *t;

	(void)state;
	assert_non_null(d);
	d->buf.set.p = (struct buffer_params){
		.mode = BUFFER_APPLY, .policy = BUFFER_RRDA,
		.rrda = { .dt_s = 0.1, .k = 3, .beta = 16, .omega = 0.5,
			  .ceiling_bytes = 64 << 20 },
	};
	d->buf.cfg.allow.nuids = 1;
	d->buf.mem = (struct procmem_snap){ .mem = { .total_bytes = 100, .available_bytes = 88 },
					    .mem_valid = true, .page_bytes = 4096,
					    .udp_valid = true, .udp_mem_pages = 10,
					    .udp_limit_pages = { 1, 100, 200 } };
	d->buf.steps = 10;
	d->buf.step_ns_total = 350000;
	d->buf.changes = 2;
	d->buf.set.n = 1;
	x = &d->buf.set.v[0];
	x->port = 9000;
	x->inode = 4242;
	x->rcvbuf = 373172;
	x->rmem_alloc = 16640;
	x->recommend_bytes = 373172;
	x->floor_bytes = 131072;
	x->drops_total = 20;
	x->have_decision = true;
	x->alpha = 0.25;
	x->last = (struct rrda_decision){ .vb_bytes = 21520, .ema_bytes = 20175, .f = 1,
					  .step_bytes = 242100, .target_bytes = 373172,
					  .why = RRDA_GROW };
	x->changes = 1;
	x->last_change_ns = 1;
	x->last_from_bytes = 131072;
	x->last_to_bytes = 373172;
	snprintf(x->last_reason, sizeof(x->last_reason), "rrda grow: f=+1");
	x->steps = 4;
	x->rcvbuf_sum = 4.0 * 200000;
	x->rcvbuf_peak = 373172;
	json_init(&w, false);
	status_buffer_json(&w, NULL, d, 1 + 2000000000ULL);
	assert_true(json_ok(&w));
	t = show(json_text(&w), VIEW_VERBOSE);
	no_nonfinite(t);
	contains(t, "Buffers        : apply, policy rrda, every 100 ms, ceiling 67.1 MB\n");
	contains(t, "memory used 12.0 % (alpha), UDP memory 41.0 kB of 410 kB before pressure\n");
	contains(t, "applied 2 changes, 0 refused, 0 failed; allowed: 1 users, 0 executables\n");
	contains(t, "  port 9000 socket 4242\n");
	contains(t, "373 kB now, 16.6 kB held, 373 kB wanted (floor 131 kB), 20 drops");
	contains(t, "rrda grow: f +1, v_b 21.5 kB, v' 20.2 kB per step, alpha 0.250, step 242 kB");
	contains(t, "131 kB -> 373 kB, 2.00 s ago: rrda grow: f=+1");
	contains(t, "buffer 200 kB mean, 373 kB peak");
	free(t);
	json_finish(&w);
	free(d);
}

static void test_nulls(void **state)
{
	char *t = show("{\"mode\":\"advise\",\"policy\":\"model\",\"dt_ms\":null,"
		       "\"host\":{\"mem_util\":null},\"sockets\":[{\"port\":9000,\"inode\":null,"
		       "\"owner\":null,\"rcvbuf_bytes\":null,\"rrda\":{\"f\":null,\"why\":\"x\"},"
		       "\"model\":{\"valid\":false,\"why\":\"no model of the flow yet\"},"
		       "\"last_change\":null,\"refused\":null}]}", VIEW_VERBOSE);

	(void)state;
	no_nonfinite(t);
	contains(t, "advise, policy model, every - ms");
	contains(t, "decision     : none: no model of the flow yet\n");
	free(t);
	t = show("{\"mode\":\"off\"}", 0);
	contains(t, "Buffers        : off");
	free(t);
	assert_int_equal(view_buffers_text(stderr, "[1]", 3, 0), -EINVAL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_from_the_daemon),
	cmocka_unit_test(test_nulls),
)
