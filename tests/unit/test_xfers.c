// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/xfers: parallel transfers from connection counters. Scripted
 * dumps with known bytes per interval: the sample's n and throughput are
 * the streams' count and summed bytes x 8 / interval, exactly; a control
 * connection and a straggler below the share are not streams; a stream
 * that opens, closes or stops being tracked makes its intervals unclean
 * and the count settles again; two peers and two ports are apart; the
 * bounds hold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/model/xfers.h"
#include "tests/unit/unit_main.h"

#define MAXS	16
#define SEC	1000000000ULL

struct got {
	int n;
	struct xfers_sample s[MAXS];
};

static void keep(void *arg, const struct xfers_sample *s)
{
	struct got *g = arg;

	if (g->n < MAXS)
		g->s[g->n++] = *s;
}

/* A connection: peer 10.0.0.@host, local @port, cookie @id, @bytes so far. */
static struct tcpconn conn(int host, uint16_t port, uint64_t id, uint64_t bytes)
{
	struct tcpconn c = { .cookie = id, .family = 2, .state = 1, .lport = port,
			     .have_info = true, .have_bytes = true, .bytes_received = bytes };

	c.raddr[10] = c.raddr[11] = 0xff;
	c.raddr[12] = 10;
	c.raddr[15] = (uint8_t)host;
	return c;
}

/* One dump at second @t of @nc connections; the samples into @g. */
static int dump(struct xfers *x, uint64_t t, const struct tcpconn *c, int nc, struct got *g)
{
	g->n = 0;
	xfers_begin(x, t * SEC);
	for (int i = 0; i < nc; i++)
		xfers_conn(x, &c[i]);
	return xfers_end(x, keep, g);
}

static const struct xfers_params params = {
	.max_conns = 64, .max_groups = 8, .min_stream_bps = 1e5, .min_share = 0.05,
	.settle = 1, .max_n = 64,
};

/* Peer .2 -> 5201: a control connection and @n streams of 1 MB/s (+ i kB/s each). */
static int iperf(struct tcpconn *c, int n, uint64_t t)
{
	c[0] = conn(2, 5201, 100, 300 + t);
	for (int i = 0; i < n; i++)
		c[1 + i] = conn(2, 5201, 200 + (uint64_t)i, t * (1000000 + 1000 * (uint64_t)i));
	return n + 1;
}

static void test_streams_and_settling(void **state)
{
	struct tcpconn c[MAXS];
	struct xfers x;
	struct got g;
	uint64_t t;

	(void)state;
	assert_int_equal(xfers_init(&x, &params), 0);
	/* t = 0: first sight; 1: first whole interval; 2: slow start's; 3 on: samples. */
	for (t = 0; t <= 2; t++)
		assert_int_equal(dump(&x, t, c, iperf(c, 4, t), &g), 0);
	for (; t <= 5; t++) {
		assert_int_equal(dump(&x, t, c, iperf(c, 4, t), &g), 1);
		assert_int_equal(g.s[0].n, 4);
		assert_int_equal(g.s[0].port, 5201);
		assert_int_equal(g.s[0].addr[15], 2);
		/* 4 x 1 MB/s + (0 + 1 + 2 + 3) kB/s, 8 bits a byte, over 1 s. */
		assert_true(g.s[0].bps == 8.0 * (4e6 + 6e3));
		assert_true(g.s[0].dt_s == 1.0);
	}
	/*
	 * Stream 203 closes: that interval is unclean; the next has the same
	 * three streams at both ends of two intervals, and gives a sample.
	 */
	assert_int_equal(dump(&x, t, c, iperf(c, 3, t), &g), 0);
	t++;
	assert_int_equal(dump(&x, t, c, iperf(c, 3, t), &g), 1);
	assert_int_equal(g.s[0].n, 3);
	assert_true(g.s[0].bps == 8.0 * (3e6 + 3e3));
	assert_int_equal(x.st.conns_dropped, 0);
	xfers_finish(&x);
}

static void test_apart_and_thresholds(void **state)
{
	struct tcpconn c[8];
	struct xfers x;
	struct got g;

	(void)state;
	assert_int_equal(xfers_init(&x, &params), 0);
	for (uint64_t t = 0; t <= 3; t++) {
		/* Peer .2 to 5201 (2 streams and a straggler at 4 %), to 5202 (1);
		 * peer .3 to 5201 (1 stream of 10 kB/s: below 100 kb/s). */
		c[0] = conn(2, 5201, 1, t * 2000000);
		c[1] = conn(2, 5201, 2, t * 2000000);
		c[2] = conn(2, 5201, 3, t * 80000);
		c[3] = conn(2, 5202, 4, t * 500000);
		c[4] = conn(3, 5201, 5, t * 10000);
		dump(&x, t, c, 5, &g);
	}
	assert_int_equal(g.n, 2);
	for (int i = 0; i < 2; i++) {
		if (g.s[i].port == 5201) {
			assert_int_equal(g.s[i].n, 2);
			assert_true(g.s[i].bps == 8.0 * 4e6);
		} else {
			assert_int_equal(g.s[i].port, 5202);
			assert_int_equal(g.s[i].n, 1);
			assert_true(g.s[i].bps == 8.0 * 5e5);
		}
	}
	xfers_finish(&x);
}

static void test_bounds_and_resets(void **state)
{
	struct xfers_params p = params;
	struct tcpconn c[MAXS];
	struct xfers x;
	struct got g;
	uint64_t t;

	(void)state;
	p.max_conns = 4;	/* a control connection and 4 streams do not fit */
	assert_int_equal(xfers_init(&x, &p), 0);
	for (t = 0; t <= 4; t++)
		assert_int_equal(dump(&x, t, c, iperf(c, 4, t), &g), 0);
	assert_int_equal(x.st.conns_dropped, 1);
	/* Raised: kept tables are too small, new ones; samples after settling. */
	p.max_conns = 64;
	assert_int_equal(xfers_set_params(&x, &p), 0);
	for (; t <= 7; t++)
		dump(&x, t, c, iperf(c, 4, t), &g);
	assert_int_equal(g.n, 1);
	/* A counter that went backwards (a reused cookie): that interval is unclean. */
	iperf(c, 4, t);
	c[2].bytes_received = 5;
	assert_int_equal(dump(&x, t++, c, 5, &g), 0);
	/* An aborted dump changes nothing: the next interval goes from the last complete one. */
	xfers_begin(&x, t * SEC);
	xfers_abort(&x);
	xfers_finish(&x);
	assert_int_equal(xfers_init(&x, &(struct xfers_params){ 0 }), -EINVAL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_streams_and_settling),
	cmocka_unit_test(test_apart_and_thresholds),
	cmocka_unit_test(test_bounds_and_resets),
)
