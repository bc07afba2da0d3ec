// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/buffer: sock_diag samples into RRDA (the surplus from the
 * memory held and the drops, worked out by hand), the floor, advise vs
 * apply, the model policy against M/M/1/K in closed form and the time
 * criterion, sockets coming and going.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/model/buffer.h"
#include "tests/unit/unit_main.h"

#define MS	1000000ULL

static struct buffer_params params(enum buffer_mode mode, enum buffer_policy pol)
{
	struct buffer_params p = {
		.mode = mode, .policy = pol,
		.rrda = { .dt_s = 0.1, .k = 3, .beta = 16, .omega = 0.5,
			  .floor_bytes = 0, .ceiling_bytes = 64ULL << 20 },
		.loss_target = 1e-3, .time_slack = 0.01, .force = true,
	};

	return p;
}

/* 100 units total, 75 available: alpha 0.25; udp_mem pressure at 1000 pages. */
static struct procmem_snap mem(uint64_t udp_pages)
{
	struct procmem_snap m = {
		.mem = { .total_bytes = 100, .available_bytes = 75 }, .mem_valid = true,
		.udp_valid = true, .udp_mem_pages = udp_pages,
		.udp_limit_pages = { 500, 1000, 2000 }, .rmem_max_bytes = 212992,
		.page_bytes = 4096,
	};

	return m;
}

static struct buffer_flow flow(uint16_t port)
{
	struct buffer_flow f = { .port = port, .truesize_bytes = 2304 };

	return f;
}

static struct sockdiag_sock sock(uint16_t port, uint64_t inode, uint32_t rmem,
				 uint32_t rcvbuf, uint32_t drops)
{
	struct sockdiag_sock s = {
		.proto = 17, .port = port, .inode = inode, .uid = 1000,
		.have_mem = true, .rmem_alloc = rmem, .rcvbuf = rcvbuf,
		.drops = drops, .have_drops = true,
	};

	return s;
}

static int step(struct buffer_set *b, uint64_t t_ms, const struct sockdiag_sock *s,
		int n, const struct buffer_flow *f, uint64_t udp_pages,
		struct buffer_action *act)
{
	struct procmem_snap m = mem(udp_pages);
	struct buffer_step_in in = {
		.now_ns = t_ms * MS, .socks = s, .nsocks = n, .mem = &m,
		.flows = f, .nflows = 1,
	};

	return buffer_step(b, &in, act, 4);
}

/*
 * Epoch @i (100 ms each) of the growing socket: inode 77 of port 9000 with
 * 131072 bytes of buffer, holding 10000 bytes and having dropped 5
 * datagrams more each epoch; the actions into @act, their count returned.
 */
static int grow_step(struct buffer_set *b, int i, const struct buffer_flow *f,
		     uint64_t udp_pages, struct buffer_action *act)
{
	struct sockdiag_sock s = sock(9000, 77, 10000 * (uint32_t)i, 131072, 5 * (uint32_t)i);

	return step(b, 100 * (uint64_t)i, &s, 1, f, udp_pages, act);
}

/*
 * Every 100 ms the socket holds 10000 bytes more and drops 5 datagrams of
 * 2304 charged bytes: v_b = 10000 + 11520 = 21520 bytes per epoch. From
 * v'_0 = 0 with omega 0.5: 10760, 16140, 18830, 20175; f = +1 from the
 * fourth step on: + 0.75 x 16 x 20175 = 242100.
 */
static void test_rrda_apply(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_APPLY, BUFFER_RRDA);
	struct buffer_flow f = flow(9000);
	struct buffer_action act[4];
	const struct buffer_sock *x;
	int n = 0;

	(void)state;
	assert_int_equal(buffer_init(&b, &p), 0);
	for (int i = 0; i <= 4; i++) {
		n = grow_step(&b, i, &f, 0, act);
		if (i < 4)
			assert_int_equal(n, 0);
	}
	x = buffer_find(&b, 77);
	assert_non_null(x);
	assert_int_equal(x->floor_bytes, 131072);	/* the application's */
	assert_true(fabs(x->last.vb_bytes - 21520) < 1e-9);
	assert_true(fabs(x->last.ema_bytes - 20175) < 1e-9);
	assert_int_equal(n, 1);
	assert_int_equal(act[0].inode, 77);
	assert_int_equal(act[0].from_bytes, 131072);
	assert_int_equal(act[0].to_bytes, 131072 + 242100);
	assert_non_null(strstr(act[0].reason, "rrda grow: f=+1 v_b=+21520"));
	assert_int_equal(x->drops_total, 20);
	/* the least size since the last look: 131072 throughout */
	assert_int_equal(buffer_take_min((struct buffer_sock *)x), 131072);

	/* Applied: the next sample has the new size; the table says so. */
	buffer_applied(&b, &act[0], 131072 + 242100, 0, NULL, 400 * MS);
	/* the least size since: still 131072 (the overflows' size), then the new */
	assert_int_equal(buffer_take_min((struct buffer_sock *)x), 131072);
	assert_int_equal(buffer_take_min((struct buffer_sock *)x), 131072 + 242100);
	assert_int_equal(x->changes, 1);
	assert_int_equal(x->last_to_bytes, 373172);

	/* Refused: the error is kept for status, nothing counted. */
	buffer_applied(&b, &act[0], 0, -EPERM, "owner not allowed", 400 * MS);
	assert_int_equal(x->changes, 1);
	assert_int_equal(x->act_err, -EPERM);
	assert_string_equal(x->act_why, "owner not allowed");
	buffer_finish(&b);
}

/* The queue drains (no drops): shrinking stops at the application's size. */
static void test_rrda_floor(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_APPLY, BUFFER_RRDA);
	struct buffer_flow f = flow(9000);
	struct buffer_action act[4];
	uint32_t rmem = 1000000, rcvbuf = 1048576;
	int shrinks = 0;

	(void)state;
	assert_int_equal(buffer_init(&b, &p), 0);
	/* first seen at 128 KiB: that is its floor */
	{
		struct sockdiag_sock s = sock(9000, 5, rmem, 131072, 0);

		step(&b, 0, &s, 1, &f, 0, act);
	}
	for (int i = 1; i < 60; i++) {
		struct sockdiag_sock s = sock(9000, 5, rmem, rcvbuf, 0);
		int n = step(&b, 100 * (uint64_t)i, &s, 1, &f, 0, act);

		rmem = rmem > 30000 ? rmem - 30000 : 0;
		if (n) {
			assert_true(act[0].to_bytes < act[0].from_bytes);
			assert_true(act[0].to_bytes >= 131072);
			rcvbuf = (uint32_t)act[0].to_bytes;
			shrinks++;
		}
	}
	assert_true(shrinks >= 3);
	assert_int_equal(rcvbuf, 131072);
	buffer_finish(&b);
}

/* Advise: nothing to apply; RRDA steps from its own recommendation. */
static void test_rrda_advise(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_ADVISE, BUFFER_RRDA);
	struct buffer_flow f = flow(9000);
	struct buffer_action act[4];
	uint64_t prev = 0;

	(void)state;
	assert_int_equal(buffer_init(&b, &p), 0);
	for (int i = 0; i <= 8; i++) {
		assert_int_equal(grow_step(&b, i, &f, 0, act), 0);
		if (i >= 5)
			assert_true(buffer_find(&b, 77)->recommend_bytes > prev);
		prev = buffer_find(&b, 77)->recommend_bytes;
	}
	assert_int_equal(buffer_find(&b, 77)->rcvbuf, 131072);
	assert_ptr_equal(buffer_port_sock(&b, 9000), buffer_find(&b, 77));
	assert_null(buffer_port_sock(&b, 9001));
	buffer_finish(&b);
}

/* udp_mem at its pressure threshold: f = +1 but no growth. */
static void test_pressure(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_APPLY, BUFFER_RRDA);
	struct buffer_flow f = flow(9000);
	struct buffer_action act[4];
	int n = 0;

	(void)state;
	assert_int_equal(buffer_init(&b, &p), 0);
	for (int i = 0; i <= 6; i++) {
		n += grow_step(&b, i, &f, 1000, act);
	}
	assert_int_equal(n, 0);
	assert_int_equal(buffer_find(&b, 77)->last.why, RRDA_PRESSURE);
	buffer_finish(&b);
}

/* Sockets of other ports are not followed; closed ones are forgotten. */
static void test_sockets(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_ADVISE, BUFFER_RRDA);
	struct buffer_flow f = flow(9000);
	struct buffer_action act[4];
	struct sockdiag_sock s[3] = {
		sock(9000, 1, 0, 4608, 0), sock(9000, 2, 0, 4608, 0), sock(53, 3, 0, 4608, 0),
	};

	(void)state;
	assert_int_equal(buffer_init(&b, &p), 0);
	step(&b, 0, s, 3, &f, 0, act);
	assert_int_equal(b.n, 2);
	assert_null(buffer_find(&b, 3));
	step(&b, 100, &s[1], 1, &f, 0, act);
	assert_int_equal(b.n, 1);
	assert_null(buffer_find(&b, 1));
	assert_non_null(buffer_find(&b, 2));
	/* the table's limit */
	for (int i = 0; i < BUFFER_MAX_SOCKS + 3; i++) {
		struct sockdiag_sock t = sock(9000, 100 + (uint64_t)i, 0, 4608, 0);

		buffer_step(&b, &(struct buffer_step_in){ .now_ns = 200 * MS, .socks = &t,
			    .nsocks = 1, .flows = &f, .nflows = 1 }, act, 4);
	}
	assert_int_equal(b.n, 1);	/* each step forgets the one before */
	buffer_finish(&b);
}

/*
 * One load-independent stage served at 2000/s, N = 1, 1000-byte payloads
 * at 8 Mb/s: lambda 1000/s, M/M/1/K at rho 0.5, loss <= 1e-3 from K = 9
 * (0.5^9 x 0.5 / (1 - 0.5^10) = 9.78e-4; K = 8: 1.96e-3).
 */
static struct buffer_flow model_flow(double published, double arriving)
{
	struct buffer_flow f = {
		.port = 9000, .have_model = true, .solved_ns = 1, .nstages = 1,
		.stages = { { .mu_net_per_s = 2000, .queue_pkts = 64, .batch_pkts = 1,
			      .load_independent = true } },
		.xfer = { .payload_bytes = 1000, .file_bytes = 1e7, .one_way_delay_s = 0.01,
			  .line_rate_bps = 1e9, .min_rate_bps = 1e6, .points = 200 },
		.published_bps = published, .arrival_bps = arriving, .truesize_bytes = 2304,
	};

	return f;
}

static void test_model_size(void **state)
{
	struct bneck_ws ws;
	struct buffer_model_rec r;
	struct buffer_flow f = model_flow(8e6, 0);

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, 2), 0);
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 4608, 64 << 20, &r), 0);
	assert_true(r.valid);
	assert_false(r.by_time);
	assert_int_equal(r.r.queue_pkts, 9);
	assert_int_equal(r.bytes, 9 * 2304);
	/* the floor and the ceiling bound it */
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 65536, 64 << 20, &r), 0);
	assert_int_equal(r.bytes, 65536);
	/* a ceiling of 10000 bytes holds 4 packets: no K meets the target */
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 0, 10000, &r), 0);
	assert_true(r.by_time);
	assert_true(r.r.queue_pkts <= 4);
	assert_true(r.bytes <= 10000);
	/* traffic measured: sized for what arrives, not for RATE (rho 0.75:
	 * 0.75^K x 0.25 / (1 - 0.75^(K+1)) <= 1e-3 from K = 20) */
	f = model_flow(20e6, 12e6);
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 0, 64 << 20, &r), 0);
	assert_true(fabs(r.rate_bps - 12e6) < 1e-6);
	assert_int_equal(r.r.queue_pkts, 20);
	/*
	 * Above capacity (lambda 3000/s) no K meets the target: sized by
	 * transfer time, within 1 % of the largest buffer's.
	 */
	f = model_flow(24e6, 0);
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 0, 2304 * 4000, &r), 0);
	assert_true(r.by_time);
	assert_false(r.r.loss <= 1e-3);
	assert_true(r.r.time_s <= 1.01 * r.r.time_ref_s);
	assert_true(r.r.queue_pkts > 9 && r.r.queue_pkts < 4000);
	/* nothing to size for */
	f = model_flow(0, 0);
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 0, 64 << 20, &r), -ENODATA);
	assert_false(r.valid);
	f.have_model = false;
	assert_int_equal(buffer_model_size(&ws, &f, 1e-3, 0.01, 0, 64 << 20, &r), -ENODATA);
	bneck_ws_finish(&ws);
}

/*
 * The model policy in apply mode: the size goes to the model's once it is
 * 10 % off; sized again only for a new solve or a rate moved by 10 %.
 */
static void test_model_apply(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_APPLY, BUFFER_MODEL);
	struct buffer_flow f = model_flow(12e6, 0);
	struct buffer_action act[4];
	struct sockdiag_sock s = sock(9000, 9, 0, 4608, 0);
	struct buffer_sock *x;

	(void)state;
	p.rrda.floor_bytes = 4608;
	assert_int_equal(buffer_init(&b, &p), 0);
	assert_int_equal(step(&b, 0, &s, 1, &f, 0, act), 0);
	x = buffer_find(&b, 9);
	assert_int_equal(buffer_model_update(&b, &f, false), 0);
	assert_int_equal(x->model.r.queue_pkts, 20);
	assert_int_equal(step(&b, 100, &s, 1, &f, 0, act), 1);
	assert_int_equal(act[0].to_bytes, 20 * 2304);
	assert_non_null(strstr(act[0].reason, "model: K=20 pkts"));
	/* within the hysteresis: nothing */
	s.rcvbuf = 20 * 2304 + 2000;
	assert_int_equal(step(&b, 200, &s, 1, &f, 0, act), 0);
	/* growth held under udp_mem pressure */
	s.rcvbuf = 4608;
	assert_int_equal(step(&b, 300, &s, 1, &f, 1000, act), 0);
	/* a smaller size only once wanted for BUFFER_SHRINK_HOLD_NS */
	s.rcvbuf = 1 << 20;
	assert_int_equal(step(&b, 400, &s, 1, &f, 0, act), 0);
	assert_int_equal(step(&b, 1300, &s, 1, &f, 0, act), 0);
	assert_int_equal(step(&b, 1400, &s, 1, &f, 0, act), 1);
	assert_int_equal(act[0].to_bytes, 20 * 2304);
	/* wanting the size it has again resets the hold */
	s.rcvbuf = 20 * 2304;
	assert_int_equal(step(&b, 1500, &s, 1, &f, 0, act), 0);
	s.rcvbuf = 1 << 20;
	assert_int_equal(step(&b, 1600, &s, 1, &f, 0, act), 0);
	/* 5 % faster: not sized again; 15 %: sized again */
	f.published_bps = 12.6e6;
	x->model.r.queue_pkts = 1;	/* a marker */
	assert_int_equal(buffer_model_update(&b, &f, false), 0);
	assert_int_equal(x->model.r.queue_pkts, 1);
	f.published_bps = 13.8e6;
	assert_int_equal(buffer_model_update(&b, &f, false), 0);
	assert_true(x->model.r.queue_pkts > 20);
	buffer_finish(&b);
}

/* 2 episodes of 30 datagrams each at a queue of 63, 9000 per second:
 * windows of (63 + 30) / 9000 = 10.33 ms at least. */
static void test_overflow_window(void **state)
{
	(void)state;
	assert_true(fabs(buffer_overflow_window_s(63, 60, 2, 9000) - 93.0 / 9000) < 1e-15);
	assert_true(buffer_overflow_window_s(63, 0, 2, 9000) == 0);
	assert_true(buffer_overflow_window_s(63, 60, 0, 9000) == 0);
	assert_true(buffer_overflow_window_s(63, 60, 2, 0) == 0);
	assert_true(buffer_overflow_window_s(63, 60, 2, NAN) == 0);
}

static void test_params(void **state)
{
	struct buffer_set b;
	struct buffer_params p = params(BUFFER_APPLY, BUFFER_RRDA);

	(void)state;
	p.loss_target = 1.0;
	assert_int_equal(buffer_init(&b, &p), -EINVAL);
	p = params(BUFFER_APPLY, BUFFER_RRDA);
	p.rrda.floor_bytes = p.rrda.ceiling_bytes + 2;
	assert_int_equal(buffer_init(&b, &p), -EINVAL);
	p = params(BUFFER_APPLY, BUFFER_RRDA);
	assert_int_equal(buffer_init(&b, &p), 0);
	p.rrda.k = 0;
	assert_int_equal(buffer_set_params(&b, &p), -EINVAL);
	assert_int_equal(b.p.rrda.k, 3);
	assert_string_equal(buffer_mode_name(BUFFER_ADVISE), "advise");
	assert_string_equal(buffer_policy_name(BUFFER_MODEL), "model");
	buffer_finish(&b);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_rrda_apply),
	cmocka_unit_test(test_rrda_floor),
	cmocka_unit_test(test_rrda_advise),
	cmocka_unit_test(test_pressure),
	cmocka_unit_test(test_sockets),
	cmocka_unit_test(test_model_size),
	cmocka_unit_test(test_model_apply),
	cmocka_unit_test(test_overflow_window),
	cmocka_unit_test(test_params),
)
