// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/collect/netplan (learn, then sample the per-packet probes):
 * when learning starts and ends on the epochs' clock, which changes of a
 * flow's receive path start it (new flow, a CPU the receiver was not
 * learned on, #C or #I of its CPU moved by half a task since it was learned
 * there, slow drifts added up) and which do not (small moves, values going
 * missing between transfers, a receiver moving among CPUs it was learned
 * on, a brief visit to another CPU).
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
#include "tests/unit/unit_main.h"

#define S	RXB_NSEC_PER_SEC
#define LEARN	(15 * S)

/* A receiver all on @cpu (-1: placement unknown), that CPU at #C @c, #I @i. */
static struct netplan_obs obs(uint16_t port, int cpu, double c, double i)
{
	struct netplan_obs o = { .port = port };

	if (cpu >= 0)
		o.cpus[o.ncpus++] = (struct netplan_cpu){ .cpu = cpu, .share = 1.0,
							  .cpu_bound = c, .io_bound = i };
	return o;
}

/* Add CPU @cpu with @share of the receiver's time (the first one's shrinks). */
static void also_on(struct netplan_obs *o, int cpu, double share, double c, double i)
{
	o->cpus[0].share -= share;
	o->cpus[o->ncpus++] = (struct netplan_cpu){ .cpu = cpu, .share = share,
						    .cpu_bound = c, .io_bound = i };
}

#define C(o)	((o).cpus[0].cpu_bound)
#define I(o)	((o).cpus[0].io_bound)

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
	C(o[0]) = 0.45;
	assert_false(netplan_epoch(&np, t += S, o, 2));
	C(o[0]) = 0.55;
	assert_false(netplan_epoch(&np, t += S, o, 2));
	C(o[0]) = 0.6;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 5001: #C of CPU 1 0.10 -> 0.60");
	/* Learned again at 0.6: back to 0.2 is a change, 0.2 -> 0.6 again too. */
	t += LEARN;
	C(o[0]) = 0.2;
	assert_false(netplan_epoch(&np, t += S, o, 2));
	C(o[0]) = 0.1;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	t += LEARN;

	/* #I likewise, on the second flow. */
	I(o[1]) = 2.0;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 6001: #I of CPU 0 0.00 -> 2.00");
	t += LEARN;

	/* The receiver on a CPU it was not learned on. */
	o[0].cpus[0].cpu = 0;
	assert_true(netplan_epoch(&np, t += S, o, 2));
	assert_string_equal(np.why, "port 5001: receiver on CPU 0 (learned on CPU 1)");
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
	C(o) = 0.0;
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
		C(u) = 1.0;
		assert_true(netplan_epoch(&np2, 3 * S + LEARN, &u, 1));
		/* #C unknown now: no change, and 1.0 stays what was learned. */
		C(u) = NAN;
		assert_false(netplan_epoch(&np2, 3 * S + 2 * LEARN, &u, 1));
		C(u) = 3.0;
		assert_true(netplan_epoch(&np2, 4 * S + 2 * LEARN, &u, 1));
		assert_string_equal(np2.why, "port 7001: #C of CPU 1 1.00 -> 3.00");
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

/*
 * An unpinned receiver: it moves between CPUs 0 and 1 every epoch or two,
 * sometimes split between them, for 200 epochs. Learning starts once (the
 * new flow), the CPUs it reaches while learning join; the moves after are
 * no change. One that first leaves CPU 0 after learning starts learning
 * once more, then never again.
 */
static void test_migrating_receiver(void **state)
{
	struct netplan np;
	uint64_t t = S;

	(void)state;
	start(&np, 32, LEARN);
	for (int k = 0; k < 200; k++, t += S) {
		struct netplan_obs o = obs(5001, k / 2 % 2, 0.0, 0.0);

		if (k % 7 == 3)
			also_on(&o, 1 - o.cpus[0].cpu, 0.5, 0.0, 0.0);
		netplan_epoch(&np, t, &o, 1);
	}
	assert_int_equal(np.learn_starts, 1);
	assert_string_equal(np.why, "start");
	assert_int_equal(np.base[0].ncpus, 2);
	assert_false(netplan_learning(&np, t));
	netplan_finish(&np);

	start(&np, 32, LEARN);
	t = S;
	for (int k = 0; k < 200; k++, t += S) {
		struct netplan_obs o = obs(5001, t <= S + LEARN ? 0 : (k + 1) % 2, 0.0, 0.0);

		netplan_epoch(&np, t, &o, 1);
		if (t == S + LEARN + S) {
			assert_int_equal(np.learn_starts, 2);
			assert_string_equal(np.why, "port 5001: receiver on CPU 1 (learned on CPU 0)");
		}
	}
	assert_int_equal(np.learn_starts, 2);
	netplan_finish(&np);
}

/*
 * Loads are compared CPU by CPU: a receiver moving between a loaded CPU
 * (#C 1) and an idle one is no change; a load change on a CPU it is not on
 * is none either until it runs there again.
 */
static void test_loads_per_cpu(void **state)
{
	struct netplan np;
	struct netplan_obs on0 = obs(5001, 0, 1.0, 0.0), on1 = obs(5001, 1, 0.0, 0.0);
	uint64_t t = S;

	(void)state;
	start(&np, 32, LEARN);
	assert_true(netplan_epoch(&np, t, &on0, 1));
	assert_false(netplan_epoch(&np, t += S, &on1, 1));	/* joins while learning */
	t += LEARN;
	for (int k = 0; k < 20; k++)
		assert_false(netplan_epoch(&np, t += S, k % 2 ? &on0 : &on1, 1));
	/* A hog starts on CPU 1 while the receiver is on CPU 0. */
	C(on1) = 1.0;
	assert_false(netplan_epoch(&np, t += S, &on0, 1));
	assert_true(netplan_epoch(&np, t += S, &on1, 1));
	assert_string_equal(np.why, "port 5001: #C of CPU 1 0.00 -> 1.00");
	t += LEARN;
	/* Learned at 1.0 on CPU 1; CPU 0 keeps its 1.0. */
	assert_false(netplan_epoch(&np, t += S, &on0, 1));
	assert_false(netplan_epoch(&np, t += S, &on1, 1));
	assert_int_equal(np.learn_starts, 2);
	netplan_finish(&np);
}

/* A brief visit to another CPU (under NETPLAN_MIN_SHARE, not the most) is
 * no move; a quarter of its time there is. */
static void test_brief_visit(void **state)
{
	struct netplan np;
	struct netplan_obs o = obs(5001, 0, 0.0, 0.0);
	uint64_t t = S;

	(void)state;
	start(&np, 32, LEARN);
	assert_true(netplan_epoch(&np, t, &o, 1));
	t += LEARN;
	also_on(&o, 1, 0.1, 0.0, 0.0);
	assert_false(netplan_epoch(&np, t += S, &o, 1));
	o.cpus[0].share = 0.75;
	o.cpus[1].share = 0.25;
	assert_true(netplan_epoch(&np, t += S, &o, 1));
	assert_string_equal(np.why, "port 5001: receiver on CPU 1 (learned on CPU 0)");
	/* Mostly elsewhere, even in small shares: the largest one counts. */
	t += LEARN;
	o = obs(5001, 2, 0.0, 0.0);
	o.cpus[0].share = 0.2;
	also_on(&o, 3, 0.0, 0.0, 0.0);
	o.cpus[1].share = 0.1;
	assert_true(netplan_epoch(&np, t += S, &o, 1));
	assert_string_equal(np.why, "port 5001: receiver on CPU 2 (learned on CPU 0,1)");
	netplan_finish(&np);
}

/* More CPUs than it keeps: the one used longest ago makes room, and a
 * receiver back there is on a CPU it was not learned on. */
static void test_many_cpus(void **state)
{
	struct netplan np;
	uint64_t t = S;
	struct netplan_obs o;

	(void)state;
	start(&np, 32, 100 * S);
	for (int cpu = 0; cpu < NETPLAN_MAX_CPUS + 1; cpu++) {
		o = obs(5001, cpu, 0.0, 0.0);
		netplan_epoch(&np, t += S, &o, 1);
	}
	assert_int_equal(np.learn_starts, 1);
	assert_int_equal(np.base[0].ncpus, NETPLAN_MAX_CPUS);
	t += 100 * S;
	o = obs(5001, NETPLAN_MAX_CPUS, 0.0, 0.0);
	assert_false(netplan_epoch(&np, t += S, &o, 1));
	o = obs(5001, 0, 0.0, 0.0);
	assert_true(netplan_epoch(&np, t += S, &o, 1));
	/* 0 took the place of 1, now the longest unused. */
	o = obs(5001, 1, 0.0, 0.0);
	assert_true(netplan_epoch(&np, t += 100 * S + S, &o, 1));
	netplan_finish(&np);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_params),
	cmocka_unit_test(test_start_and_settle),
	cmocka_unit_test(test_changes),
	cmocka_unit_test(test_missing),
	cmocka_unit_test(test_reload_and_learn),
	cmocka_unit_test(test_many_flows),
	cmocka_unit_test(test_migrating_receiver),
	cmocka_unit_test(test_loads_per_cpu),
	cmocka_unit_test(test_brief_visit),
	cmocka_unit_test(test_many_cpus),
)
