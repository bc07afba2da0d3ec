// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/model/flows' pause schedules: a flow's own
 * receiver's preemptions (not another thread's) make the schedule it
 * publishes, and a rate between pauses is offered only while that
 * schedule covers the windows the rate counts on.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/model/flows.h"
#include "tests/unit/flows_fixture.h"
#include "tests/unit/unit_main.h"

/* ------------------------------------------------------------- pause -- */

struct pause_pub {
	int n;
	struct rxbneck_pause last;
};

static int publish_pause(void *ctx, const struct rxbneck_pause *p)
{
	struct pause_pub *pp = ctx;

	pp->n++;
	pp->last = *p;
	return 1;
}

static int publish_rate_quiet(void *ctx, uint16_t port)
{
	(void)ctx;
	(void)port;
	return 0;
}

/* @n preemptions of @tid on CPU 1, a 4 ms run then @off_ns off each,
 * the last ending @ago_ns before now. */
static void add_preempts(struct rxb_rx_preempt *v, size_t *nv, uint32_t tid, int n,
			 uint64_t off_ns, uint64_t ago_ns)
{
	uint64_t cycle = 4000000 + off_ns, t = rxb_mono_ns() - ago_ns - (uint64_t)n * cycle;

	for (int i = 0; i < n; i++) {
		struct rxb_rx_preempt *ev = &v[(*nv)++];

		memset(ev, 0, sizeof(*ev));
		ev->tid = tid;
		ev->cpu = 1;
		ev->flags = RXB_RX_PREEMPT_EEVDF;
		ev->run_start_ns = t;
		ev->out_ns = t + 4000000;
		ev->in_ns = ev->out_ns + off_ns;
		ev->slice_ns = ev->next_slice_ns = 1400000;
		t = ev->in_ns;
	}
}

/* A flow whose receiver (tid 77, 2 hogs) is off 8 ms in every 12. */
struct pause_env {
	struct flows *f;
	struct pause_pub pp;
	struct flows_params p;
	struct rxb_rx_preempt *v;
	struct rxb_epoch *e1;		/* with the preemptions */
	struct rxb_epoch *e2;		/* without */
};

static void pause_env_init(struct pause_env *env, bool enabled, bool other_thread)
{
	struct flows_ops ops = {
		.ctx = &env->pp,
		.publish_rates = publish_rate_quiet,
		.publish_pause = publish_pause,
	};
	uint16_t port = PORT;
	size_t nv = 0;

	memset(env, 0, sizeof(*env));
	env->f = malloc(sizeof(*env->f));
	env->v = calloc(64, sizeof(*env->v));
	env->e1 = epoch(1, 2, 1000);
	env->e2 = epoch(2, 2, 1000);
	assert_non_null(env->f);
	assert_non_null(env->v);
	params(&env->p);
	env->p.pause.enabled = enabled;
	env->p.pause.min_window_ns = 200000;
	env->p.pause.max_window_ns = 100000000;
	env->p.pause.ncpus = 2;
	assert_int_equal(flows_init(env->f, &env->p, &ops), 0);
	assert_int_equal(flows_set_config_ports(env->f, &port, 1), 0);
	env->e1->socks[0].ntids = 1;
	env->e1->socks[0].tids[0] = 77;
	env->e1->cpus[1].cpu_bound_run_ns = 4e6;
	env->e1->cpus[1].cpu_bound_slice_ns = 1.4e6;
	/* The flow's receiver (2 hogs: 8 ms off) and another thread's. */
	add_preempts(env->v, &nv, 77, 30, 8000000, 10000000);
	if (other_thread)
		add_preempts(env->v, &nv, 78, 30, 1000000, 10000000);
	env->e1->rx_preempts = env->v;
	env->e1->nrx_preempts = nv;
}

static void pause_env_finish(struct pause_env *env)
{
	flows_finish(env->f);
	free(env->e1);
	free(env->e2);
	free(env->v);
	free(env->f);
}

/* A reload to @p, then epoch @seq of @e. */
static void reload_then_epoch(struct flows *f, const struct flows_params *p,
			      struct rxb_epoch *e, uint64_t seq)
{
	assert_int_equal(flows_set_params(f, p), 0);
	e->seq = seq;
	flows_epoch(f, e, 1000);
}

/*
 * @sp is offered @nrates rates: 2 with one between pauses, which the
 * flow's schedule must cover, or 1, the plain rate; status says @why_part.
 */
static void check_offer(struct flows *f, const struct sendsrv_peer *sp, int nrates,
			const char *why_part)
{
	const struct flow *fl = flows_find(f, sp->hello.flow_port);
	struct rxbneck_rate r, b;
	char why[200];

	assert_int_equal(flows_rate_for(f, sp, &r, &b), nrates);
	if (nrates == 2)
		assert_true(b.flags & RXBNECK_RATE_BETWEEN_PAUSES);
	else
		assert_int_equal(r.flags & RXBNECK_RATE_BETWEEN_PAUSES, 0);
	assert_true(flows_between_covered(fl, &fl->m[0], why, sizeof(why)) == (nrates == 2));
	assert_non_null(strstr(why, why_part));
}

/*
 * flow_epoch() feeds the flow's own receiver's preemptions (the socket's
 * tids) to the predictor and publishes its schedule, then a CANCEL.
 */
static void test_pause_published(void **state)
{
	struct pause_env env;
	struct flows *f;
	struct rxb_epoch *e1;
	struct sendsrv_peer sp;
	struct flow *fl;

	(void)state;
	pause_env_init(&env, true, true);
	f = env.f;
	e1 = env.e1;
	flows_epoch(f, e1, 1000);
	fl = flows_find(f, PORT);
	assert_non_null(fl);
	assert_int_equal(fl->pause.preemptions, 30);
	assert_int_equal(fl->pause.pred.d_ns, 8000000);
	assert_int_equal(env.pp.n, 1);
	assert_int_equal(env.pp.last.port, PORT);
	assert_int_equal(env.pp.last.flags, 0);
	/*
	 * The socket queue (K = 212992 / 2304 = 92 packets) takes the first
	 * 92 x payload / rate of the 8 ms window: only the rest is paused,
	 * starting that much into the window.
	 */
	assert_true(fl->m[0].has_rate && fl->m[0].rate.rate_bps > 0);
	/*
	 * The windows are stage B's vacations: a sender that pauses through
	 * them gets its own rate (PROTOCOL.md §6.3), at least the plain one,
	 * and the queue absorbs at that rate.
	 */
	assert_true(fl->m[0].has_rate_between);
	assert_int_equal(fl->m[0].rate_between.flags, RXBNECK_RATE_BETWEEN_PAUSES);
	assert_true(fl->m[0].rate_between.rate_bps >= fl->m[0].rate.rate_bps * (1 - 1e-6));
	assert_true(fl->m[0].good.has_between && fl->m[0].good.between.pause_fraction > 0);
	assert_true(fl->m[0].rate_between.loss <= fl->m[0].rate.loss);
	{
		double absorb_us = 92.0 * PAYLOAD * 8 / (double)fl->m[0].rate_between.rate_bps * 1e6;

		assert_true(absorb_us > 0 && absorb_us < 8000);
		assert_true(fabs((double)env.pp.last.duration_us - (8000 - absorb_us)) <= 1.0);
		assert_true(env.pp.last.start_in_us < 12000 + absorb_us);
	}
	assert_int_equal(env.pp.last.period_us, 12000);
	assert_int_equal(fl->pause.published, 1);
	assert_int_equal(fl->pause.last_sent, 1);
	/*
	 * The receivers' preemptions are followed within the epoch only for
	 * a flow with senders: with a schedule out once per its period
	 * (12 ms, + 1 so that each read finds the last turn), else at the
	 * daemon's pace.
	 */
	assert_int_equal(flows_rx_early_ns(f, 10000000), 0);
	sp = peer(1, PORT);
	assert_int_equal(flows_sender_hello(f, &sp), 0);
	assert_int_equal(flows_rx_early_ns(f, 10000000), 13000000);
	assert_int_equal(flows_rx_early_ns(f, 20000000), 20000000);

	/* The windows stop: CANCEL, once. */
	flows_epoch(f, env.e2, 1000);
	assert_int_equal(env.pp.n, 2);
	assert_int_equal(env.pp.last.flags, RXBNECK_PAUSE_CANCEL);
	assert_int_equal(flows_rx_early_ns(f, 10000000), 10000000);
	env.e2->seq = 3;
	flows_epoch(f, env.e2, 1000);
	assert_int_equal(env.pp.n, 2);

	/* Disabled by a reload: the windows are measured, nothing is sent. */
	env.p.pause.enabled = false;
	reload_then_epoch(f, &env.p, e1, 4);
	assert_int_equal(fl->pause.preemptions, 60);
	assert_int_equal(env.pp.n, 2);
	assert_int_equal(flows_rx_early_ns(f, 10000000), 0);
	pause_env_finish(&env);
}

/*
 * PROTOCOL.md §6.3: the rate between pauses is offered only while the
 * flow's published schedule pauses every window that rate counts on:
 * not with [pause] disabled (no schedule), not when max_window_ms cuts the
 * windows short, not after the windows stopped (CANCEL); the plain rate
 * then, with status saying why.
 */
static void test_between_needs_schedule(void **state)
{
	struct pause_env env;
	struct flows *f;
	struct rxb_epoch *e1;
	struct sendsrv_peer sp = peer(1, PORT);
	const struct flow *fl;

	(void)state;
	pause_env_init(&env, false, false);
	f = env.f;
	e1 = env.e1;
	assert_int_equal(flows_sender_hello(f, &sp), 0);
	fl = flows_find(f, PORT);

	/* Disabled: windows in the model, a rate for them, no schedule. */
	flows_epoch(f, e1, 1000);
	assert_true(fl->m[0].has_rate_between);
	assert_int_equal(env.pp.n, 0);
	check_offer(f, &sp, 1, "no PAUSE schedule out");

	/* Enabled: the schedule covers the 8 ms windows every 12 ms. */
	env.p.pause.enabled = true;
	reload_then_epoch(f, &env.p, e1, 2);
	assert_int_equal(env.pp.n, 1);
	check_offer(f, &sp, 2, "between pauses");

	/* Windows capped at 5 ms: the schedule pauses less than the rate
	 * counts on. */
	env.p.pause.max_window_ns = 5000000;
	reload_then_epoch(f, &env.p, e1, 3);
	assert_int_equal(env.pp.n, 2);
	assert_int_equal(env.pp.last.flags, 0);
	check_offer(f, &sp, 1, "does not cover");

	/* Back to whole windows, then they stop: CANCEL, the plain rate. */
	env.p.pause.max_window_ns = 100000000;
	reload_then_epoch(f, &env.p, e1, 4);
	check_offer(f, &sp, 2, "between pauses");
	env.e2->seq = 5;
	flows_epoch(f, env.e2, 1000);
	assert_int_equal(env.pp.last.flags, RXBNECK_PAUSE_CANCEL);
	check_offer(f, &sp, 1, "no pause windows in the model");
	pause_env_finish(&env);
}

/* The window (stage B's vacation) the flow's last good solve counts on. */
static double solved_vacation_s(const struct flow *fl)
{
	const struct flow_estimate *g = &fl->m[0].good;

	return g->inputs[g->nstages - 1].vacation_s;
}

/*
 * The schedule follows each epoch's predicted windows; the rate between
 * pauses follows its solve's. When the windows shrink (a hog's share
 * drops: 8 ms every 12 becomes 7.2 ms every 11.2), a solve deferred to
 * 5 % of a CPU would leave the senders on the plain rate: the flow is
 * solved once the solver is within 25 % of one, and they keep a rate
 * between pauses, now for the new windows.
 */
static void test_between_follows_windows(void **state)
{
	struct pause_env env;
	struct flows *f;
	struct rxb_epoch *e1;
	struct sendsrv_peer sp = peer(1, PORT);
	struct flow *fl;
	uint64_t solves;

	(void)state;
	pause_env_init(&env, true, false);
	f = env.f;
	e1 = env.e1;
	assert_int_equal(flows_sender_hello(f, &sp), 0);
	flows_epoch(f, e1, 1000);
	fl = flows_find(f, PORT);
	check_offer(f, &sp, 2, "between pauses");
	assert_true(fabs(solved_vacation_s(fl) - 8e-3) < 1e-9);
	/* A last solve of 100 ms: a moved input waits 2 s for the next,
	 * uncovered windows 0.4 s. */
	fl->m[0].good.solve_ms = 100;
	solves = fl->m[0].solves;

	/* The same epoch again: nothing moved, the solve is kept. */
	e1->seq = 2;
	flows_epoch(f, e1, 1000);
	assert_int_equal(fl->m[0].solves, solves);
	check_offer(f, &sp, 2, "between pauses");

	/* 1.8 CPU-bound tasks: 7.2 ms windows every 11.2 ms, at once: kept
	 * (0 s since the solve); an epoch later: solved. */
	e1->seq = 3;
	e1->cpus[1].cpu_bound = 1.8;
	flows_epoch(f, e1, 1000);
	assert_int_equal(fl->m[0].solves, solves);
	check_offer(f, &sp, 1, "does not cover");
	e1->seq = 4;
	e1->start_ns += 1000000000;
	e1->end_ns += 1000000000;
	flows_epoch(f, e1, 1000);
	assert_int_equal(fl->pause.sched_dur_ns, 7200000);
	assert_int_equal(fl->m[0].solves, solves + 1);
	assert_true(fabs(solved_vacation_s(fl) - 7.2e-3) < 1e-9);
	check_offer(f, &sp, 2, "between pauses");
	fl->m[0].good.solve_ms = 100;

	/* Windows 4 % longer (7.488 ms every 11.488): moved, but the schedule
	 * still pauses the solved ones, so the solve waits its 2 s. */
	e1->seq = 5;
	e1->start_ns += 1000000000;
	e1->end_ns += 1000000000;
	e1->cpus[1].cpu_bound = 1.872;
	flows_epoch(f, e1, 1000);
	assert_int_equal(fl->pause.sched_dur_ns, 7488000);
	assert_int_equal(fl->m[0].solves, solves + 1);
	check_offer(f, &sp, 2, "between pauses");
	pause_env_finish(&env);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_pause_published),
	cmocka_unit_test(test_between_needs_schedule),
	cmocka_unit_test(test_between_follows_windows),
)
