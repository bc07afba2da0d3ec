// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/collect/netplan (learn, then sample the per-packet probes):
 * when learning starts and ends on the epochs' clock, which changes of a
 * flow's receive path start it (new flow, other CPU, #C or #I moved by half
 * a task since it was learned, slow drifts added up) and which do not
 * (small moves, values going missing between transfers).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/collect/netplan.h"

#define S	RXB_NSEC_PER_SEC
#define LEARN	(15 * S)

static struct netplan_obs obs(uint16_t port, int cpu, double c, double i)
{
	return (struct netplan_obs){ .port = port, .cpu = cpu, .cpu_bound = c,
				     .io_bound = i };
}

static void start(struct netplan *np, uint32_t every, uint64_t learn_ns)
{
	struct netplan_params p = { .steady_every = every, .learn_ns = learn_ns };

	assert_int_equal(netplan_init(np, &p), 0);
}

static void test_params(void **state)
{
	struct netplan np;
	struct netplan_params bad = { .steady_every = 0, .learn_ns = LEARN };
	struct netplan_params good = { .steady_every = 4, .learn_ns = 0 };

	(void)state;
	assert_int_equal(netplan_init(&np, &bad), -EINVAL);
	start(&np, 8, LEARN);
	/* Before the first epoch: learning, so the collector starts with 1. */
	assert_true(netplan_learning(&np, 0));
	assert_int_equal(netplan_every(&np, 0), 1);
	assert_int_equal(netplan_set_params(&np, &bad), -EINVAL);
	assert_int_equal(np.p.steady_every, 8);
	/* learn 0: always one in steady_every, changes or not. */
	assert_int_equal(netplan_set_params(&np, &good), 0);
	assert_int_equal(netplan_every(&np, 0), 4);
	assert_true(netplan_epoch(&np, S, NULL, 0));
	assert_int_equal(netplan_every(&np, S), 4);
	assert_false(netplan_learning(&np, S));
	netplan_finish(&np);

	/* steady_every 1: every epoch whatever happens. */
	start(&np, 1, LEARN);
	assert_true(netplan_epoch(&np, S, NULL, 0));
	assert_int_equal(netplan_every(&np, S + LEARN + 1), 1);
	netplan_finish(&np);
}

static void test_start_and_settle(void **state)
{
	struct netplan np;
	struct netplan_obs o = obs(5001, 1, 0.0, 0.0);
	uint64_t t0 = 100 * S;

	(void)state;
	start(&np, 8, LEARN);
	assert_true(netplan_epoch(&np, t0, &o, 1));
	assert_string_equal(np.why, "start");
	assert_int_equal(np.learn_starts, 1);
	/* Every epoch until learn_ns after the change, then one in 8. */
	for (uint64_t t = t0 + S; t < t0 + LEARN; t += S) {
		assert_false(netplan_epoch(&np, t, &o, 1));
		assert_int_equal(netplan_every(&np, t), 1);
	}
	assert_false(netplan_epoch(&np, t0 + LEARN, &o, 1));
	assert_int_equal(netplan_every(&np, t0 + LEARN), 8);
	assert_int_equal(netplan_every(&np, t0 + LEARN - 1), 1);
	assert_int_equal(np.learn_starts, 1);
	netplan_finish(&np);
}

static void test_changes(void **state)
{
	struct netplan np;
	struct netplan_obs o[2] = { obs(5001, 1, 0.1, 0.0), obs(6001, 0, 1.0, 0.0) };
	uint64_t t = 0;

	(void)state;
	start(&np, 8, LEARN);
	assert_true(netplan_epoch(&np, t += S, o, 1));
	t += LEARN;
	assert_false(netplan_epoch(&np, t, o, 1));
	assert_false(netplan_learning(&np, t));

	/* A new flow. */
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 6001: new flow");
	assert_true(netplan_learning(&np, t));
	assert_int_equal(netplan_every(&np, t), 1);
	t += LEARN;

	/* #C moves by less than half a task: no change; the drift adds up
	 * against what was learned, not against the last epoch. */
	o[0].cpu_bound = 0.45;
	assert_false(netplan_epoch(&np, t += S, o, 2));
	o[0].cpu_bound = 0.55;
	assert_false(netplan_epoch(&np, t += S, o, 2));
	o[0].cpu_bound = 0.6;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 5001: #C 0.10 -> 0.60");
	/* Learned again at 0.6: back to 0.2 is a change, 0.2 -> 0.6 again too. */
	t += LEARN;
	o[0].cpu_bound = 0.2;
	assert_false(netplan_epoch(&np, t += S, o, 2));
	o[0].cpu_bound = 0.1;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	t += LEARN;

	/* #I likewise, on the second flow. */
	o[1].io_bound = 2.0;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 6001: #I 0.00 -> 2.00");
	t += LEARN;

	/* The receiver on another CPU. */
	o[0].cpu = 0;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 5001: receiver moved from CPU 1 to 0");
	t += LEARN;
	assert_false(netplan_learning(&np, t));
	assert_int_equal(np.learn_starts, 6);
	netplan_finish(&np);
}

/* Between transfers the receiver is gone: missing is no change. */
static void test_missing(void **state)
{
	struct netplan np;
	struct netplan_obs o = obs(5001, 1, 2.0, 0.0);
	struct netplan_obs gone = obs(5001, -1, NAN, NAN);
	uint64_t t = S;

	(void)state;
	start(&np, 8, LEARN);
	assert_true(netplan_epoch(&np, t, &o, 1));
	t += LEARN;
	assert_false(netplan_epoch(&np, t += S, &gone, 1));
	/* The next transfer: same CPU, same load: what was learned holds. */
	assert_false(netplan_epoch(&np, t += S, &o, 1));
	assert_false(netplan_learning(&np, t));
	/* Under another load it does not. */
	assert_false(netplan_epoch(&np, t += S, &gone, 1));
	o.cpu_bound = 0.0;
	assert_true(netplan_epoch(&np, t += S, &o, 1));
	t += LEARN;

	/* Unknown when learned: the first known value fills in, no change;
	 * a move from it afterwards is one. */
	{
		struct netplan np2;
		struct netplan_obs u = obs(7001, -1, NAN, NAN);

		start(&np2, 8, LEARN);
		assert_true(netplan_epoch(&np2, S, &u, 1));
		u = obs(7001, 1, 3.0, 0.0);
		assert_false(netplan_epoch(&np2, 2 * S + LEARN, &u, 1));
		assert_false(netplan_learning(&np2, 2 * S + LEARN));
		u.cpu_bound = 1.0;
		assert_true(netplan_epoch(&np2, 3 * S + LEARN, &u, 1));
		u.cpu = 0;
		assert_true(netplan_epoch(&np2, 4 * S + LEARN, &u, 1));
		netplan_finish(&np2);
	}

	/* A flow that went away and comes back is new. */
	assert_false(netplan_epoch(&np, t += S, NULL, 0));
	assert_int_equal(np.nbase, 0);
	assert_true(netplan_epoch(&np, t += S, &o, 1));
	assert_string_equal(np.why, "port 5001: new flow");
	netplan_finish(&np);
}

/* A reload keeps what was learned; an explicit learn restarts the clock. */
static void test_reload_and_learn(void **state)
{
	struct netplan np;
	struct netplan_obs o = obs(5001, 1, 0.0, 0.0);
	struct netplan_params p = { .steady_every = 16, .learn_ns = 5 * S };
	uint64_t t = S;

	(void)state;
	start(&np, 8, LEARN);
	assert_true(netplan_epoch(&np, t, &o, 1));
	t += LEARN;
	assert_int_equal(netplan_every(&np, t), 8);
	assert_int_equal(netplan_set_params(&np, &p), 0);
	assert_int_equal(np.nbase, 1);
	assert_false(netplan_epoch(&np, t += S, &o, 1));
	assert_int_equal(netplan_every(&np, t), 16);
	netplan_learn(&np, t, "asked");
	assert_int_equal(netplan_every(&np, t + 5 * S - 1), 1);
	assert_int_equal(netplan_every(&np, t + 5 * S), 16);
	assert_string_equal(np.why, "asked");
	netplan_finish(&np);
}

/* More flows than it keeps: the rest are ignored, nothing overflows. */
static void test_many_flows(void **state)
{
	struct netplan np;
	struct netplan_obs o[NETPLAN_MAX_FLOWS + 4];

	(void)state;
	for (int i = 0; i < NETPLAN_MAX_FLOWS + 4; i++)
		o[i] = obs((uint16_t)(1000 + i), i % 2, 0, 0);
	start(&np, 8, LEARN);
	assert_true(netplan_epoch(&np, S, o, NETPLAN_MAX_FLOWS + 4));
	assert_int_equal(np.nbase, NETPLAN_MAX_FLOWS);
	assert_false(netplan_epoch(&np, 2 * S, o, NETPLAN_MAX_FLOWS + 4));
	netplan_finish(&np);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_start_and_settle),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_reload_and_learn),
		cmocka_unit_test(test_many_flows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
