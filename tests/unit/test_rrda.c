// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RRDA (Liu et al., eq. (1)-(6)) on scripted rate series, every value
 * worked out by hand in the comments; the memory limits; the bounds.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "solver/rrda.h"
#include "tests/unit/unit_main.h"

static void near(double got, double want, double tol, int line)
{
	if (!(fabs(got - want) <= tol)) {
		fprintf(stderr, "line %d: got %.17g want %.17g\n", line, got, want);
		fail();
	}
}
#define assert_near(got, want, tol) near((got), (want), (tol), __LINE__)

static const struct rrda_params paper = {
	.dt_s = 0.1, .k = 3, .beta = 16.0, .omega = 0.5,
	.floor_bytes = 4608, .ceiling_bytes = 64ULL << 20,
};

static struct rrda_input in_of(double recv, double srv, uint64_t cur, double alpha)
{
	struct rrda_input in = {
		.recv_bytes = recv, .srv_bytes = srv, .interval_s = 0.1,
		.cur_bytes = cur, .mem_util = alpha,
		.kernel_max_bytes = RRDA_SK_RCVBUF_MAX,
	};

	return in;
}

/*
 * omega 0.5, k 3, beta 16, alpha 0.25, L_0 = 100000 bytes; each step's L_n
 * is the previous target (applied).
 */
static void test_scripted_series(void **state)
{
	static const struct {
		double recv, srv;
		double vb, ema;
		int f;
		uint64_t target;
		enum rrda_why why;
	} want[] = {
		/* v' = 0.5 v + 0.5 v'_prev, from v'_0 = 0 */
		{ 11000, 10000, 1000, 500, 0, 100000, RRDA_WARMUP },
		{ 12000, 10000, 2000, 1250, 0, 100000, RRDA_WARMUP },
		{ 9000, 10000, -1000, 125, 0, 100000, RRDA_WARMUP },
		/* {500, 1250, 125} > 0: + 0.75 x 16 x 2062.5 = 24750 */
		{ 14000, 10000, 4000, 2062.5, 1, 124750, RRDA_GROW },
		/* + 0.75 x 16 x 2531.25 = 30375 -> 155125, even: 155126 */
		{ 13000, 10000, 3000, 2531.25, 1, 155126, RRDA_GROW },
		/* {125, 2062.5, 2531.25}: + 3187.5 -> 158313.5 -> 158314 */
		{ 8000, 10000, -2000, 265.625, 1, 158314, RRDA_GROW },
		/*
		 * Eq. (2) looks at the three values before this one, all > 0,
		 * and eq. (4) takes |v'_b,n| although v'_b,n < 0:
		 * + 0.75 x 16 x 1867.1875 = 22406.25 -> 180720.25 -> 180722
		 */
		{ 6000, 10000, -4000, -1867.1875, 1, 180722, RRDA_GROW },
		/* {2531.25, 265.625, -1867.1875}: mixed */
		{ 5000, 10000, -5000, -3433.59375, 0, 180722, RRDA_STEADY },
		{ 5000, 10000, -5000, -4216.796875, 0, 180722, RRDA_STEADY },
		/* all < 0: - 0.25 x 16 x 4608.3984375 = 18433.59375 -> 162288 */
		{ 5000, 10000, -5000, -4608.3984375, -1, 162288, RRDA_SHRINK },
	};
	struct rrda_state s;
	uint64_t cur = 100000;

	(void)state;
	rrda_init(&s);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct rrda_input in = in_of(want[i].recv, want[i].srv, cur, 0.25);
		struct rrda_decision d;

		assert_int_equal(rrda_step(&paper, &s, &in, &d), 0);
		assert_near(d.vb_bytes, want[i].vb, 1e-9);
		assert_near(d.ema_bytes, want[i].ema, 1e-9);
		assert_int_equal(d.f, want[i].f);
		assert_int_equal(d.target_bytes, want[i].target);
		assert_int_equal(d.why, want[i].why);
		cur = d.target_bytes;
	}
	assert_int_equal(s.steps, 10);
}

/* Drive @s with @n epochs of surplus @vb (bytes per epoch) at L = @cur. */
static struct rrda_decision drive(const struct rrda_params *p, struct rrda_state *s,
				  double vb, int n, uint64_t cur, double alpha)
{
	struct rrda_decision d = { 0 };

	for (int i = 0; i < n; i++) {
		struct rrda_input in = in_of(vb > 0 ? 10000 + vb : 10000,
					     vb > 0 ? 10000 : 10000 - vb, cur, alpha);

		assert_int_equal(rrda_step(p, s, &in, &d), 0);
	}
	return d;
}

/* A fresh @s driven by four epochs of the same input @in. */
static struct rrda_decision drive_fresh(const struct rrda_params *p, struct rrda_state *s,
					const struct rrda_input *in)
{
	struct rrda_decision d = { 0 };

	rrda_init(s);
	for (int i = 0; i < 4; i++) {
		struct rrda_input each = *in;

		assert_int_equal(rrda_step(p, s, &each, &d), 0);
	}
	return d;
}

/*
 * omega = 1: v' = v. With a constant surplus the step is exactly
 * (1 - alpha) beta v (grow) or alpha beta v (shrink): eq. (4) at every
 * alpha, and its limits eq. (5) (alpha -> 1: no growth, shrink by
 * beta |v'|) and eq. (6) (alpha -> 0: grow by beta |v'|, no shrink).
 */
static void test_memory_limits(void **state)
{
	struct rrda_params p = paper;
	const double alphas[] = { 0.0, 1e-9, 0.1, 0.5, 0.9, 1.0 - 1e-9, 1.0 };
	const uint64_t L = 1000000;

	(void)state;
	p.omega = 1.0;
	for (size_t i = 0; i < sizeof(alphas) / sizeof(alphas[0]); i++) {
		double a = alphas[i];
		struct rrda_state s;
		struct rrda_decision g, sh;
		double up = (1.0 - a) * 16.0 * 5000.0, down = a * 16.0 * 5000.0;

		rrda_init(&s);
		g = drive(&p, &s, 5000.0, 4, L, a);
		assert_int_equal(g.f, 1);
		assert_near(g.step_bytes, up, 1e-6);
		/* rounded up to even; nothing at alpha = 1 (eq. 5) */
		assert_int_equal(g.target_bytes, a == 1.0 ? L :
				 (uint64_t)(2 * ceil(((double)L + up) / 2)));
		assert_int_equal(g.why, a == 1.0 ? RRDA_NO_MEMORY : RRDA_GROW);

		rrda_init(&s);
		sh = drive(&p, &s, -5000.0, 4, L, a);
		assert_int_equal(sh.f, -1);
		assert_near(sh.step_bytes, -down, 1e-6);
		/* rounded down to even; nothing at alpha = 0 (eq. 6) */
		assert_int_equal(sh.target_bytes, a == 0.0 ? L :
				 (uint64_t)(2 * floor(((double)L - down) / 2)));
		assert_int_equal(sh.why, a == 0.0 ? RRDA_NO_SHRINK : RRDA_SHRINK);
	}
	/* The exact limits: alpha 0 grows by beta |v'|, alpha 1 shrinks by it. */
	{
		struct rrda_state s;

		rrda_init(&s);
		assert_int_equal(drive(&p, &s, 5000.0, 4, L, 0.0).target_bytes,
				 L + 80000);
		rrda_init(&s);
		assert_int_equal(drive(&p, &s, -5000.0, 4, L, 1.0).target_bytes,
				 L - 80000);
	}
}

/* The floor, the ceiling, the kernel's maximum, udp_mem pressure. */
static void test_bounds(void **state)
{
	struct rrda_params p = paper;
	struct rrda_state s;
	struct rrda_decision d;
	struct rrda_input in;

	(void)state;
	p.omega = 1.0;
	p.floor_bytes = 65536;
	p.ceiling_bytes = 1000001;	/* odd: the largest even below counts */

	/* Growth stops at the ceiling... */
	rrda_init(&s);
	d = drive(&p, &s, 50000.0, 4, 900000, 0.0);	/* + 800000 */
	assert_int_equal(d.target_bytes, 1000000);
	assert_int_equal(d.why, RRDA_GROW);
	d = drive(&p, &s, 50000.0, 1, 1000000, 0.0);
	assert_int_equal(d.target_bytes, 1000000);
	assert_int_equal(d.why, RRDA_AT_CEILING);
	/* ... and a socket set above it is left there, not pulled down. */
	d = drive(&p, &s, 50000.0, 1, 4000000, 0.0);
	assert_int_equal(d.target_bytes, 4000000);
	assert_int_equal(d.why, RRDA_AT_CEILING);

	/* The kernel's maximum below the ceiling (SO_RCVBUF, rmem_max 200000). */
	in = in_of(60000, 10000, 300000, 0.0);
	in.kernel_max_bytes = rrda_kernel_max_bytes(200000, false);
	d = drive_fresh(&p, &s, &in);
	assert_int_equal(d.target_bytes, 400000);

	/* Shrinking stops at the floor; a socket below it is not raised. */
	rrda_init(&s);
	d = drive(&p, &s, -50000.0, 4, 100000, 1.0);	/* - 800000 */
	assert_int_equal(d.target_bytes, 65536);
	assert_int_equal(d.why, RRDA_SHRINK);
	d = drive(&p, &s, -50000.0, 1, 65536, 1.0);
	assert_int_equal(d.target_bytes, 65536);
	assert_int_equal(d.why, RRDA_AT_FLOOR);
	d = drive(&p, &s, -50000.0, 1, 8192, 1.0);
	assert_int_equal(d.target_bytes, 8192);
	assert_int_equal(d.why, RRDA_AT_FLOOR);

	/* No growth while udp_mem is under pressure; shrinking goes on. */
	in = in_of(60000, 10000, 300000, 0.5);
	in.mem_pressure = true;
	d = drive_fresh(&p, &s, &in);
	assert_int_equal(d.f, 1);
	assert_int_equal(d.target_bytes, 300000);
	assert_int_equal(d.why, RRDA_PRESSURE);
	in = in_of(10000, 20000, 300000, 0.5);
	in.mem_pressure = true;
	d = drive_fresh(&p, &s, &in);
	assert_int_equal(d.target_bytes, 300000 - 80000);
}

/* A late timer: twice the bytes over twice the interval is the same rate. */
static void test_interval_scaling(void **state)
{
	struct rrda_state a, b;
	struct rrda_decision da, db;
	struct rrda_input ia = in_of(30000, 10000, 500000, 0.3);
	struct rrda_input ib = in_of(60000, 20000, 500000, 0.3);

	(void)state;
	ib.interval_s = 0.2;
	rrda_init(&a);
	rrda_init(&b);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(rrda_step(&paper, &a, &ia, &da), 0);
		assert_int_equal(rrda_step(&paper, &b, &ib, &db), 0);
	}
	assert_near(db.vb_bytes, 20000.0, 1e-9);
	assert_near(da.ema_bytes, db.ema_bytes, 1e-9);
	assert_int_equal(da.target_bytes, db.target_bytes);
}

/*
 * omega = 0 never moves v' from 0, which is neither > 0 nor < 0: f = 0
 * for ever. k = 1 decides on the previous value alone.
 */
static void test_omega_and_k(void **state)
{
	struct rrda_params p = paper;
	struct rrda_state s;
	struct rrda_decision d;

	(void)state;
	p.omega = 0.0;
	rrda_init(&s);
	d = drive(&p, &s, 99999.0, 20, 100000, 0.0);
	assert_int_equal(d.f, 0);
	assert_int_equal(d.target_bytes, 100000);

	p.omega = 1.0;
	p.k = 1;
	rrda_init(&s);
	d = drive(&p, &s, 1000.0, 1, 100000, 0.0);
	assert_int_equal(d.why, RRDA_WARMUP);
	d = drive(&p, &s, 1000.0, 1, 100000, 0.0);
	assert_int_equal(d.f, 1);
	assert_int_equal(d.target_bytes, 116000);
	/* Changes below min_step_bytes are not made: 16 x 100 = 1600 < 4096. */
	p.min_step_bytes = 4096;
	rrda_init(&s);
	d = drive(&p, &s, 100.0, 2, 100000, 0.0);
	assert_int_equal(d.f, 1);
	assert_int_equal(d.target_bytes, 100000);
	assert_int_equal(d.why, RRDA_SMALL);
	d = drive(&p, &s, 300.0, 1, 100000, 0.0);	/* 4800: made */
	assert_int_equal(d.target_bytes, 104800);
	assert_int_equal(d.why, RRDA_GROW);
	p.min_step_bytes = 0;
	/* RRDA_K_MAX: the ring holds exactly enough. */
	p.k = RRDA_K_MAX;
	rrda_init(&s);
	d = drive(&p, &s, -1000.0, RRDA_K_MAX, 100000, 1.0);
	assert_int_equal(d.f, 0);
	d = drive(&p, &s, -1000.0, 1, 100000, 1.0);
	assert_int_equal(d.f, -1);
	assert_int_equal(d.target_bytes, 84000);
}

static void test_bad_input(void **state)
{
	struct rrda_params p = paper;
	struct rrda_state s;
	struct rrda_decision d;
	struct rrda_input in = in_of(1, 1, 100000, 0.5);

	(void)state;
	rrda_init(&s);
	p.k = 0;
	assert_int_equal(rrda_step(&p, &s, &in, &d), -EINVAL);
	p = paper;
	p.k = RRDA_K_MAX + 1;
	assert_int_equal(rrda_params_check(&p), -EINVAL);
	p = paper;
	p.omega = 1.5;
	assert_int_equal(rrda_params_check(&p), -EINVAL);
	p = paper;
	p.ceiling_bytes = p.floor_bytes - 1;
	assert_int_equal(rrda_params_check(&p), -EINVAL);
	p = paper;
	p.ceiling_bytes = RRDA_SK_RCVBUF_MAX + 2;
	assert_int_equal(rrda_params_check(&p), -EINVAL);
	in.mem_util = NAN;
	assert_int_equal(rrda_step(&paper, &s, &in, &d), -EINVAL);
	in = in_of(-1, 1, 100000, 0.5);
	assert_int_equal(rrda_step(&paper, &s, &in, &d), -EINVAL);
	in = in_of(1, 1, 100000, 0.5);
	in.interval_s = 0;
	assert_int_equal(rrda_step(&paper, &s, &in, &d), -EINVAL);
	assert_int_equal(s.steps, 0);	/* nothing remembered */
}

/* What the kernel stores (net/core/sock.c, __sock_set_rcvbuf()). */
static void test_kernel_sizes(void **state)
{
	(void)state;
	assert_int_equal(rrda_kernel_max_bytes(4194304, false), 8388608);
	assert_int_equal(rrda_kernel_max_bytes(4194304, true), 2147483646ULL);
	assert_int_equal(rrda_kernel_max_bytes(UINT64_MAX, false), 2147483646ULL);
	assert_int_equal(rrda_sockopt_val(131072), 65536);
	assert_int_equal(rrda_sockopt_val(131073), 65537);
	assert_int_equal(rrda_sockopt_val(RRDA_SK_RCVBUF_MAX), 1073741823);
	assert_int_equal(rrda_sockopt_val(UINT64_MAX / 4), 1073741823);
	assert_string_equal(rrda_why_name(RRDA_PRESSURE), "udp_mem_pressure");
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_scripted_series),
	cmocka_unit_test(test_memory_limits),
	cmocka_unit_test(test_bounds),
	cmocka_unit_test(test_interval_scaling),
	cmocka_unit_test(test_omega_and_k),
	cmocka_unit_test(test_bad_input),
	cmocka_unit_test(test_kernel_sizes),
)
