// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/model/pause, the RBUDP+ pause-window predictor, against
 * schedules built here with known answers:
 *
 *  - the kernel's slice formulas (EEVDF base_slice x (1 + ilog2(min(n, 8))),
 *    CFS max(latency, nr x min_granularity) / nr with the same factor);
 *  - a receiver that is always runnable and k equal-weight CPU hogs on its
 *    CPU, taking turns of one slice s each (what EEVDF and CFS do with
 *    equal weights): the receiver is off for exactly k·s every (k+1)·s, so
 *    the predicted window must be k·s, the period (k+1)·s, every check a
 *    hit with zero error, and the published schedule in phase;
 *  - the same with the CFS slice the predictor must derive itself (no
 *    measured runs, no se.slice);
 *  - jittered schedules (bounded errors), windows below min_window, the
 *    max_window cap, one-shot vs periodic by RTT and period, CANCEL when
 *    the hogs go away, other threads' events ignored.
 */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/model/pause.h"
#include "tests/unit/unit_main.h"

#define RX_TID		4242
#define PORT		9000
#define CPU		1
#define US		1000ULL
#define MS		1000000ULL
#define T0		(1000 * MS)

/* A schedule under construction: events and the matching epoch record. */
struct sched_gen {
	struct rxb_epoch *e;
	struct rxb_rx_preempt ev[4096];
	size_t n;
	uint64_t t;		/* the receiver's current switch-in */
	uint32_t flags;
	uint64_t slice_ns;	/* se.slice reported in the events */
	uint16_t port;		/* the receiver's watched port in the events */
};

static struct sched_gen *gen_new(uint32_t flags, uint64_t slice_ns)
{
	struct sched_gen *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->e = calloc(1, sizeof(*g->e));
	assert_non_null(g->e);
	g->t = T0;
	g->flags = flags;
	g->slice_ns = slice_ns;
	g->port = PORT;
	return g;
}

static void gen_free(struct sched_gen *g)
{
	free(g->e);
	free(g);
}

/* The receiver runs @run_ns, is preempted, is off @off_ns. */
static void gen_cycle(struct sched_gen *g, uint32_t tid, uint64_t run_ns, uint64_t off_ns)
{
	struct rxb_rx_preempt *ev = &g->ev[g->n++];

	assert_true(g->n <= RXB_ARRAY_SIZE(g->ev));
	memset(ev, 0, sizeof(*ev));
	ev->tid = tid;
	ev->port = g->port;
	ev->cpu = CPU;
	ev->flags = g->flags;
	ev->run_start_ns = g->t;
	ev->out_ns = g->t + run_ns;
	ev->in_ns = ev->out_ns + off_ns;
	ev->slice_ns = g->slice_ns;
	ev->next_slice_ns = g->slice_ns;
	g->t = ev->in_ns;
}

/*
 * Close an epoch of the generated events: CPU @CPU has @k CPU-bound
 * tasks whose measured run is @run_ns and se.slice @slice_ns (NaN: not
 * measured).
 */
static const struct rxb_epoch *gen_epoch(struct sched_gen *g, uint64_t seq, double k,
					 double run_ns, double slice_ns)
{
	struct rxb_epoch *e = g->e;

	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->ncpus = 2;
	for (int c = 0; c < 2; c++) {
		e->cpus[c].cpu = c;
		e->cpus[c].cpu_bound = 0;
		e->cpus[c].cpu_bound_run_ns = NAN;
		e->cpus[c].cpu_bound_slice_ns = NAN;
	}
	e->cpus[CPU].cpu_bound = k;
	e->cpus[CPU].cpu_bound_run_ns = run_ns;
	e->cpus[CPU].cpu_bound_slice_ns = slice_ns;
	e->rx_preempts = g->ev;
	e->nrx_preempts = g->n;
	return e;
}

static const int32_t rx_tids[] = { RX_TID };

/* Epoch 1: ten turns of a receiver with two hogs on its CPU, 4-ms turns. */
static void two_hogs_learnt(struct sched_gen *g, struct pause *ps)
{
	for (int i = 0; i < 10; i++)
		gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	pause_epoch(ps, gen_epoch(g, 1, 2, 4e6, 1.4e6), rx_tids, 1);
}

static void params(struct pause_params *p)
{
	memset(p, 0, sizeof(*p));
	p->enabled = true;
	p->min_window_ns = 200 * US;
	p->max_window_ns = 100 * MS;
	p->ncpus = 2;
}

/*
 * The fixture of the schedule tests: a predictor that has learnt a
 * receiver with two hogs on its CPU (two_hogs_learnt()).
 */
struct learnt {
	struct sched_gen *g;
	struct pause_params p;
	struct pause ps;
};

static int learnt_setup(void **state)
{
	struct learnt *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->g = gen_new(RXB_RX_PREEMPT_EEVDF, 1400 * US);
	params(&f->p);
	pause_init(&f->ps, &f->p);
	two_hogs_learnt(f->g, &f->ps);
	*state = f;
	return 0;
}

static int learnt_teardown(void **state)
{
	struct learnt *f = *state;

	pause_finish(&f->ps);
	gen_free(f->g);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ slices -- */

static void test_slice_formulas(void **state)
{
	(void)state;
	/* EEVDF: 0.7 ms x (1 + ilog2(min(n, 8))). */
	assert_int_equal(pause_eevdf_slice_ns(700000, 1), 700000);
	assert_int_equal(pause_eevdf_slice_ns(700000, 2), 1400000);	/* the test VM */
	assert_int_equal(pause_eevdf_slice_ns(700000, 4), 2100000);
	assert_int_equal(pause_eevdf_slice_ns(700000, 8), 2800000);
	assert_int_equal(pause_eevdf_slice_ns(700000, 64), 2800000);	/* capped at 8 */
	/* CFS, 2 CPUs: latency 12 ms, min granularity 1.5 ms (factor 2). */
	assert_int_equal(pause_cfs_slice_ns(6000000, 750000, 1, 2), 12000000);
	assert_int_equal(pause_cfs_slice_ns(6000000, 750000, 3, 2), 4000000);
	assert_int_equal(pause_cfs_slice_ns(6000000, 750000, 8, 2), 1500000);
	/* 10 tasks do not fit the latency: the period stretches, 1.5 ms each. */
	assert_int_equal(pause_cfs_slice_ns(6000000, 750000, 10, 2), 1500000);
	/* 1 CPU: 6 ms / 4 = 1.5 ms; 0 tasks is treated as 1. */
	assert_int_equal(pause_cfs_slice_ns(6000000, 750000, 4, 1), 1500000);
	assert_int_equal(pause_cfs_slice_ns(6000000, 750000, 0, 1), 6000000);
}

/* -------------------------------------------------- exact schedules -- */

/*
 * k hogs and the receiver round-robin with slice s: epoch 1 teaches the
 * predictor (its CPU-bound count is learned at the end of it), epoch 2 is
 * checked against the truth k·s, (k+1)·s.
 */
static void run_round_robin(uint32_t flags, int k, uint64_t s, double run_meas,
			    double slice_meas, bool runs_unseen)
{
	struct sched_gen *g = gen_new(flags, flags ? (uint64_t)slice_meas : 0);
	struct pause_params p;
	struct pause ps;
	struct rxbneck_pause out;
	struct pause_err_summary se, de;
	const int cycles = 50;
	uint64_t now;

	params(&p);
	pause_init(&ps, &p);
	for (int i = 0; i < cycles; i++) {
		gen_cycle(g, RX_TID, s, (uint64_t)k * s);
		/* The receiver's switch-ins not seen: no run measured, so
		 * everything comes from the slices. */
		if (runs_unseen)
			g->ev[g->n - 1].run_start_ns = 0;
	}
	pause_epoch(&ps, gen_epoch(g, 1, k, run_meas, slice_meas), rx_tids, 1);
	assert_int_equal(ps.sched, flags ? PAUSE_SCHED_EEVDF : PAUSE_SCHED_CFS);
	assert_int_equal(ps.runs_n, runs_unseen ? 0 : cycles);
	assert_true(ps.pred.valid);
	assert_int_equal(ps.pred.tio_ns, s);
	assert_int_equal(ps.pred.d_ns, (uint64_t)k * s);
	assert_int_equal(ps.pred.period_ns, (uint64_t)(k + 1) * s);

	/* Epoch 2: every prediction is checked against what followed. */
	g->n = 0;
	for (int i = 0; i < cycles; i++)
		gen_cycle(g, RX_TID, s, (uint64_t)k * s);
	ps.hits = ps.scored = 0;
	ps.recent_hits = ps.recent_scored = 0;
	memset(&ps.start_err, 0, sizeof(ps.start_err));
	memset(&ps.dur_err, 0, sizeof(ps.dur_err));
	pause_epoch(&ps, gen_epoch(g, 2, k, run_meas, slice_meas), rx_tids, 1);
	assert_int_equal(ps.scored, cycles);
	assert_int_equal(ps.hits, cycles);
	pause_err_summary(&ps.start_err, &se);
	pause_err_summary(&ps.dur_err, &de);
	assert_int_equal(se.n, cycles);
	assert_float_equal(se.mean_us, 0, 1e-9);
	assert_float_equal(se.p90_us, 0, 1e-9);
	assert_float_equal(de.mean_us, 0, 1e-9);
	assert_float_equal(de.p90_us, 0, 1e-9);

	/* The schedule: period (k+1)s, window ks, in the phase of the last
	 * return (g->t): windows start at g->t + s + j (k+1)s. */
	now = g->t + 3 * s / 2 + 7 * US;	/* just past one window's start */
	assert_true(pause_plan(&ps, 9000, now, 1000 * MS, 0, 2, 0, &out));
	assert_int_equal(ps.state, PAUSE_PERIODIC);
	assert_int_equal(out.flags, 0);
	assert_int_equal(out.port, 9000);
	assert_int_equal(out.duration_us, (uint64_t)k * s / US);
	assert_int_equal(out.period_us, (uint64_t)(k + 1) * s / US);
	assert_int_equal(out.start_in_us, (g->t + s + (uint64_t)(k + 1) * s - now) / US);
	assert_int_equal(out.repeat_count,
			 (2000 * MS + (uint64_t)(k + 1) * s - 1) / ((uint64_t)(k + 1) * s));
	/* Confidence: the recent hit rate (per mille). */
	assert_int_equal(out.confidence, 1000);
	assert_int_equal(out.epoch, 2);
	pause_note_sent(&ps, &out, 1);

	/* Epoch 3 follows the schedule exactly: all its windows after the
	 * schedule began (all but the first, which had begun before now) are
	 * hits. */
	g->n = 0;
	for (int i = 0; i < cycles; i++)
		gen_cycle(g, RX_TID, s, (uint64_t)k * s);
	pause_epoch(&ps, gen_epoch(g, 3, k, run_meas, slice_meas), rx_tids, 1);
	assert_int_equal(ps.sched_checked, cycles - 1);
	assert_int_equal(ps.sched_hits, cycles - 1);
	pause_finish(&ps);
	gen_free(g);
}

static void test_eevdf_hogs(void **state)
{
	(void)state;
	/* se.slice 1.4 ms, the tick (HZ=250) makes the runs 4 ms: learned
	 * from the receiver's runs, or before those from the hogs' runs. */
	for (int k = 1; k <= 3; k++) {
		run_round_robin(RXB_RX_PREEMPT_EEVDF, k, 4 * MS, 4e6, 1.4e6, false);
		run_round_robin(RXB_RX_PREEMPT_EEVDF, k, 4 * MS, 4e6, 1.4e6, true);
	}
	/* With HRTICK the runs are the slice itself; nothing measured: the
	 * se.slice of the events and of the hogs is used. */
	for (int k = 1; k <= 3; k++) {
		run_round_robin(RXB_RX_PREEMPT_EEVDF, k, 1400 * US, NAN, 1.4e6, false);
		run_round_robin(RXB_RX_PREEMPT_EEVDF, k, 1400 * US, NAN, 1.4e6, true);
	}
}

/*
 * A hog's mean run is cut short when a third task preempts it mid-turn;
 * its turn (and so the window) is not: the receiver's runs give the turn.
 */
static void test_hog_runs_cut_short(void **state)
{
	(void)state;
	run_round_robin(RXB_RX_PREEMPT_EEVDF, 2, 4 * MS, 1.7e6, 1.4e6, false);
}

static void test_cfs_hogs(void **state)
{
	(void)state;
	/*
	 * CFS, 2 CPUs, nothing measured about the hogs: the predictor must
	 * use sched_latency / nr_running itself. k = 2: 3 tasks, 4 ms each;
	 * k = 9: 10 tasks, the period stretches to 10 x 1.5 ms.
	 */
	run_round_robin(0, 2, pause_cfs_slice_ns(6000000, 750000, 3, 2), NAN, NAN, true);
	run_round_robin(0, 9, pause_cfs_slice_ns(6000000, 750000, 10, 2), NAN, NAN, true);
	/* Once the receiver's runs are seen, they give T_I/O and the turn. */
	run_round_robin(0, 2, pause_cfs_slice_ns(6000000, 750000, 3, 2), NAN, NAN, false);
}

/* ------------------------------------------------------------ jitter -- */

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

static void test_jitter_bounded(void **state)
{
	struct sched_gen *g = gen_new(RXB_RX_PREEMPT_EEVDF, 1400 * US);
	struct pause_params p;
	struct pause ps;
	struct pause_err_summary se, de;
	uint64_t x = 12345, s = 4 * MS;
	const uint64_t j = 100 * US;	/* each run and each window +- 100 us */

	(void)state;
	params(&p);
	pause_init(&ps, &p);
	for (int ep = 1; ep <= 3; ep++) {
		g->n = 0;
		for (int i = 0; i < 80; i++) {
			uint64_t run = s - j + lcg(&x) % (2 * j + 1);
			uint64_t off = 2 * s - j + lcg(&x) % (2 * j + 1);

			gen_cycle(g, RX_TID, run, off);
		}
		pause_epoch(&ps, gen_epoch(g, (uint64_t)ep, 2, 4e6, 1.4e6), rx_tids, 1);
	}
	/* Epoch 1 had no CPU-bound count yet: those 80 were misses. */
	assert_int_equal(ps.scored, 240);
	assert_int_equal(ps.missed, 80);
	/* The rest overlap by far more than half. */
	assert_int_equal(ps.hits, 160);
	pause_err_summary(&ps.start_err, &se);
	pause_err_summary(&ps.dur_err, &de);
	/* Run jitter is +-100 us around the median: start errors stay within. */
	assert_true(se.p90_us <= 200);
	assert_true(se.p50_us <= 100);
	/* D = 2 x 4 ms exactly; the windows are 8 ms +- 100 us. */
	assert_true(de.p90_us <= 100 + 1e-9);
	assert_true(fabs(de.bias_us) < 20);
	pause_finish(&ps);
	gen_free(g);
}

/* ------------------------------------------------------------- rules -- */

static void test_min_and_max_window(void **state)
{
	struct sched_gen *g = gen_new(RXB_RX_PREEMPT_EEVDF, 1400 * US);
	struct pause_params p;
	struct pause ps;
	struct rxbneck_pause out;

	(void)state;
	params(&p);
	p.min_window_ns = 10 * MS;	/* the 8 ms windows are too short */
	pause_init(&ps, &p);
	for (int i = 0; i < 20; i++)
		gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	pause_epoch(&ps, gen_epoch(g, 1, 2, 4e6, 1.4e6), rx_tids, 1);
	assert_int_equal(ps.pred.d_model_ns, 8 * MS);
	assert_int_equal(ps.pred.d_ns, 0);
	/* Too short to announce, and windows that short are not scored. */
	assert_false(pause_plan(&ps, 9000, g->t, 1000 * MS, 0, 1, 0, &out));
	assert_int_equal(ps.state, PAUSE_IDLE);
	assert_int_equal(ps.shorts, 20);
	assert_int_equal(ps.scored, 0);

	/* A 5 ms cap: announced windows are 5 ms, the period shrinks too. */
	params(&p);
	p.max_window_ns = 5 * MS;
	pause_set_params(&ps, &p);
	g->n = 0;
	for (int i = 0; i < 20; i++)
		gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	pause_epoch(&ps, gen_epoch(g, 2, 2, 4e6, 1.4e6), rx_tids, 1);
	assert_int_equal(ps.pred.d_ns, 5 * MS);
	assert_true(pause_plan(&ps, 9000, g->t, 1000 * MS, 0, 2, 0, &out));
	assert_int_equal(out.duration_us, 5000);
	assert_int_equal(out.period_us, 9000);
	/* [s, s + 5 ms] covers 5 of the 8 ms: still a hit (>= half). */
	assert_int_equal(ps.hits, 20);
	pause_finish(&ps);
	gen_free(g);
}

static void test_oneshot_vs_periodic(void **state)
{
	struct learnt *f = *state;
	struct sched_gen *g = f->g;
	struct pause *ps = &f->ps;
	struct rxbneck_pause out;

	/* Period 12 ms within a 1 s epoch: periodic whatever the RTT. */
	assert_true(pause_plan(ps, 9000, g->t, 1000 * MS, 100, 1, 0, &out));
	assert_int_equal(out.period_us, 12000);
	assert_int_equal(out.repeat_count, 167);
	/* A 10 ms epoch: at most one window before the refresh. A sender
	 * whose RTT/2 is below D gets a one-shot window ... */
	assert_true(pause_plan(ps, 9000, g->t, 10 * MS, 2000, 1, 0, &out));
	assert_int_equal(ps->state, PAUSE_ONESHOT);
	assert_int_equal(out.period_us, 0);
	assert_int_equal(out.repeat_count, 1);
	assert_int_equal(out.start_in_us, 4000);
	assert_int_equal(out.duration_us, 8000);
	/* ... a far sender (RTT/2 = 10 ms > D) the periodic schedule. */
	assert_true(pause_plan(ps, 9000, g->t, 10 * MS, 20000, 1, 0, &out));
	assert_int_equal(ps->state, PAUSE_PERIODIC);
	assert_int_equal(out.period_us, 12000);
	assert_int_equal(out.repeat_count, 2);
}

/*
 * A receive queue that fills in absorb_ns at the sending rate: the sender
 * stops only for the rest of the window, absorb_ns into it, and not at all
 * when the queue holds the whole window. The schedule is still checked as
 * the predicted windows.
 */
static void test_queue_absorbs(void **state)
{
	struct learnt *f = *state;
	struct sched_gen *g = f->g;
	struct pause *ps = &f->ps;
	struct rxbneck_pause out;

	/* One-shot (10 ms epoch, near sender): window at +4 ms for 8 ms. */
	assert_true(pause_plan(ps, 9000, g->t, 10 * MS, 2000, 1, 3 * MS, &out));
	assert_int_equal(out.flags, 0);
	assert_int_equal(out.start_in_us, 4000 + 3000);
	assert_int_equal(out.duration_us, 8000 - 3000);
	assert_int_equal(ps->sched_start_ns, g->t + 4 * MS);
	assert_int_equal(ps->sched_dur_ns, 8 * MS);
	pause_note_sent(ps, &out, 1);
	/* The queue holds the whole window: CANCEL the schedule, say why. */
	assert_true(pause_plan(ps, 9000, g->t, 10 * MS, 2000, 2, 8 * MS, &out));
	assert_int_equal(out.flags, RXBNECK_PAUSE_CANCEL);
	assert_int_equal(ps->state, PAUSE_IDLE);
	assert_non_null(strstr(ps->why, "absorbs"));
	pause_note_sent(ps, &out, 1);
	/* ... and nothing more while it does. */
	assert_false(pause_plan(ps, 9000, g->t, 10 * MS, 2000, 3, 20 * MS, &out));
}

static void test_cancel_when_hogs_leave(void **state)
{
	struct learnt *f = *state;
	struct sched_gen *g = f->g;
	struct pause_params *p = &f->p;
	struct pause *ps = &f->ps;
	struct rxbneck_pause out;

	assert_true(pause_plan(ps, 9000, g->t, 1000 * MS, 0, 1, 0, &out));
	pause_note_sent(ps, &out, 1);
	/* No preemptions any more: one CANCEL, then silence. */
	g->n = 0;
	pause_epoch(ps, gen_epoch(g, 2, 0, NAN, NAN), rx_tids, 1);
	assert_true(pause_plan(ps, 9000, g->t + 1000 * MS, 1000 * MS, 0, 2, 0, &out));
	assert_int_equal(out.flags, RXBNECK_PAUSE_CANCEL);
	pause_note_sent(ps, &out, 1);
	assert_int_equal(ps->cancels, 1);
	assert_int_equal(ps->state, PAUSE_IDLE);
	pause_epoch(ps, gen_epoch(g, 3, 0, NAN, NAN), rx_tids, 1);
	assert_false(pause_plan(ps, 9000, g->t + 2000 * MS, 1000 * MS, 0, 3, 0, &out));

	/* Disabled: nothing is announced even with windows. */
	params(p);
	p->enabled = false;
	pause_set_params(ps, p);
	g->n = 0;
	for (int i = 0; i < 10; i++)
		gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	pause_epoch(ps, gen_epoch(g, 4, 2, 4e6, 1.4e6), rx_tids, 1);
	assert_false(pause_plan(ps, 9000, g->t, 1000 * MS, 0, 4, 0, &out));
	assert_int_equal(ps->state, PAUSE_DISABLED);
}

/*
 * A new receiver (a new tid) on the flow's port, within an epoch, with no
 * schedule out: pause_early() takes its preemptions by port and says when
 * a schedule can go out - at the PAUSE_MIN_EVENTS-th long window, in the
 * new receiver's phase - and the epoch then counts every event once: a
 * second predictor fed only at the epoch ends with the same counts.
 */
static void test_early_within_epoch(void **state)
{
	struct sched_gen *g = gen_new(RXB_RX_PREEMPT_EEVDF, 1400 * US);
	const int32_t new_tids[] = { RX_TID + 1 };
	struct pause_params p;
	struct pause early, late;
	struct rxbneck_pause out;
	size_t first;

	(void)state;
	params(&p);
	pause_init(&early, &p);
	pause_init(&late, &p);
	/* The old receiver: learnt, no schedule out (its sender left). */
	for (int i = 0; i < 10; i++)
		gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	pause_epoch(&early, gen_epoch(g, 1, 2, 4e6, 1.4e6), rx_tids, 1);
	pause_epoch(&late, gen_epoch(g, 1, 2, 4e6, 1.4e6), rx_tids, 1);
	g->n = 0;

	/* The new one, 1.5 ms out of the old phase; another port's thread. */
	g->t += 1500 * US;
	first = g->n;
	for (int i = 0; i < 3; i++)
		gen_cycle(g, RX_TID + 1, 4 * MS, 8 * MS);
	g->port = PORT + 1;
	gen_cycle(g, RX_TID + 2, 4 * MS, 8 * MS);
	g->port = PORT;
	assert_false(pause_early(&early, g->ev + first, g->n - first, PORT));
	assert_int_equal(early.ep_long, 3);
	first = g->n;
	gen_cycle(g, RX_TID + 1, 4 * MS, 8 * MS);
	assert_true(pause_early(&early, g->ev + first, g->n - first, PORT));
	assert_int_equal(early.ep_long, 4);
	/* The next window starts 4 ms after the new receiver's last return. */
	assert_true(pause_plan(&early, PORT, g->t + 1 * MS, 250 * MS, 2000, 1, 0, &out));
	assert_int_equal(out.start_in_us, 3000);
	assert_int_equal(out.duration_us, 8000);
	assert_int_equal(out.period_us, 12000);
	pause_note_sent(&early, &out, 1);
	assert_int_equal(early.published, 1);
	assert_int_equal(early.published_early, 1);
	/* With a schedule out, an event in its phase asks for nothing. */
	first = g->n;
	gen_cycle(g, RX_TID + 1, 4 * MS, 8 * MS);
	assert_false(pause_early(&early, g->ev + first, g->n - first, PORT));
	assert_int_equal(early.ep_long, 5);
	for (int i = 0; i < 5; i++)
		gen_cycle(g, RX_TID + 1, 4 * MS, 8 * MS);

	/* The epoch: both predictors end with the same counts. */
	pause_epoch(&early, gen_epoch(g, 2, 2, 4e6, 1.4e6), new_tids, 1);
	pause_epoch(&late, gen_epoch(g, 2, 2, 4e6, 1.4e6), new_tids, 1);
	assert_int_equal(early.preemptions, late.preemptions);
	assert_int_equal(early.preemptions, 10 + 10);
	assert_int_equal(early.ep_preemptions, late.ep_preemptions);
	assert_int_equal(early.ep_preemptions, 10);
	assert_int_equal(early.ep_long, late.ep_long);
	assert_int_equal(early.scored, late.scored);
	assert_int_equal(early.hits, late.hits);
	assert_int_equal(early.anchor_ns, late.anchor_ns);
	assert_int_equal(early.run_n, late.run_n);
	/* The epoch's own refresh is not counted as early. */
	assert_true(pause_plan(&early, PORT, g->t + 1 * MS, 250 * MS, 2000, 2, 0, &out));
	pause_note_sent(&early, &out, 1);
	assert_int_equal(early.published, 2);
	assert_int_equal(early.published_early, 1);
	/* The next epoch counts from its own start again. */
	g->n = 0;
	for (int i = 0; i < 2; i++)
		gen_cycle(g, RX_TID + 1, 4 * MS, 8 * MS);
	pause_epoch(&early, gen_epoch(g, 3, 2, 4e6, 1.4e6), new_tids, 1);
	assert_int_equal(early.ep_preemptions, 2);
	pause_finish(&early);
	pause_finish(&late);
	gen_free(g);
}

/*
 * A schedule out, and the turns' order changes within the epoch: the
 * receiver waits one hog turn more (off 12 ms instead of 8), so it comes
 * back 4 ms - a whole turn - after the schedule's return. pause_early()
 * asks for a plan at once and the new schedule's windows start T_I/O
 * after that return; a return 1 ms off (a quarter of the window is 2 ms)
 * and returns in the new phase ask for nothing. The new plan keeps the
 * schedule although the epoch has fewer than PAUSE_MIN_EVENTS windows so
 * far, is counted as re-phased, not as a first schedule, and the epoch's
 * own refresh is neither.
 */
static void test_rephase_within_epoch(void **state)
{
	struct learnt *f = *state;
	struct sched_gen *g = f->g;
	struct pause *ps = &f->ps;
	struct rxbneck_pause out;
	uint64_t back, now;
	size_t first;

	assert_true(pause_plan(ps, PORT, g->t + 1 * MS, 250 * MS, 2000, 1, 0, &out));
	assert_int_equal(out.start_in_us, 3000);
	assert_int_equal(out.period_us, 12000);
	pause_note_sent(ps, &out, 1);
	g->n = 0;

	/* In phase, then 1 ms late: nothing to do. */
	first = g->n;
	gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	gen_cycle(g, RX_TID, 4 * MS, 9 * MS);
	assert_false(pause_early(ps, g->ev + first, g->n - first, PORT));
	/* Back to the schedule's phase (a 3-ms run), then one turn more. */
	first = g->n;
	gen_cycle(g, RX_TID, 3 * MS, 8 * MS);
	assert_false(pause_early(ps, g->ev + first, g->n - first, PORT));
	first = g->n;
	gen_cycle(g, RX_TID, 4 * MS, 12 * MS);
	back = g->t;
	assert_true(pause_early(ps, g->ev + first, g->n - first, PORT));
	assert_int_equal(ps->rephase_err_ns, 4 * MS);
	assert_int_equal(ps->ep_long, 4);
	now = back + 1 * MS;
	assert_true(pause_plan(ps, PORT, now, 250 * MS, 2000, 1, 0, &out));
	assert_false(out.flags & RXBNECK_PAUSE_CANCEL);
	assert_int_equal(out.start_in_us, (back + 4 * MS - now) / US);
	assert_int_equal(out.duration_us, 8000);
	assert_int_equal(out.period_us, 12000);
	pause_note_sent(ps, &out, 1);
	assert_int_equal(ps->rephased, 1);
	assert_int_equal(ps->published, 2);
	assert_int_equal(ps->published_early, 0);

	/* Early in the next epoch (one window so far), a turn less. */
	for (int i = 0; i < 3; i++)
		gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	pause_epoch(ps, gen_epoch(g, 2, 2, 4e6, 1.4e6), rx_tids, 1);
	assert_true(pause_plan(ps, PORT, g->t + 1 * MS, 250 * MS, 2000, 2, 0, &out));
	pause_note_sent(ps, &out, 1);
	assert_int_equal(ps->rephased, 1);
	g->n = 0;
	first = g->n;
	gen_cycle(g, RX_TID, 4 * MS, 4 * MS);
	assert_true(pause_early(ps, g->ev + first, g->n - first, PORT));
	assert_int_equal(ps->rephase_err_ns, 4 * MS);
	assert_int_equal(ps->ep_long, 1);
	now = g->t + 2 * MS;
	assert_true(pause_plan(ps, PORT, now, 250 * MS, 2000, 2, 0, &out));
	assert_false(out.flags & RXBNECK_PAUSE_CANCEL);
	assert_int_equal(out.start_in_us, 2000);
	pause_note_sent(ps, &out, 1);
	assert_int_equal(ps->rephased, 2);
	first = g->n;
	gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	gen_cycle(g, RX_TID, 4 * MS, 8 * MS);
	assert_false(pause_early(ps, g->ev + first, g->n - first, PORT));
}

/*
 * Every return out of phase (here the receiver waits one turn more, then
 * one less, in turn): at most PAUSE_REPHASE_MAX re-plans per epoch, the
 * rest counted as capped; the next epoch may re-plan again.
 */
static void test_rephase_capped(void **state)
{
	struct learnt *f = *state;
	struct sched_gen *g = f->g;
	struct pause *ps = &f->ps;
	struct rxbneck_pause out;
	int planned = 0;

	assert_true(pause_plan(ps, PORT, g->t + 1 * MS, 250 * MS, 2000, 1, 0, &out));
	pause_note_sent(ps, &out, 1);
	g->n = 0;
	for (int i = 0; i < PAUSE_REPHASE_MAX + 4; i++) {
		size_t first = g->n;

		gen_cycle(g, RX_TID, 4 * MS, i % 2 ? 4 * MS : 12 * MS);
		if (pause_early(ps, g->ev + first, 1, PORT)) {
			assert_true(pause_plan(ps, PORT, g->t + 1 * MS, 250 * MS, 2000, 1, 0,
					       &out));
			assert_false(out.flags & RXBNECK_PAUSE_CANCEL);
			pause_note_sent(ps, &out, 1);
			planned++;
		}
	}
	assert_int_equal(planned, PAUSE_REPHASE_MAX);
	assert_int_equal(ps->rephased, PAUSE_REPHASE_MAX);
	/* Of the 4 returns after the cap, the 2 that took the receiver back
	 * into the last plan's phase needed none. */
	assert_int_equal(ps->rephase_capped, 2);

	/* The epoch's plan, then a new epoch: re-plans allowed again. */
	pause_epoch(ps, gen_epoch(g, 2, 2, 4e6, 1.4e6), rx_tids, 1);
	assert_true(pause_plan(ps, PORT, g->t + 1 * MS, 250 * MS, 2000, 2, 0, &out));
	pause_note_sent(ps, &out, 1);
	assert_int_equal(ps->rephased, PAUSE_REPHASE_MAX);
	g->n = 0;
	gen_cycle(g, RX_TID, 4 * MS, 12 * MS);
	assert_true(pause_early(ps, g->ev, 1, PORT));
}

static void test_other_threads_ignored(void **state)
{
	struct sched_gen *g = gen_new(RXB_RX_PREEMPT_EEVDF, 1400 * US);
	struct pause_params p;
	struct pause ps;

	(void)state;
	params(&p);
	pause_init(&ps, &p);
	for (int i = 0; i < 10; i++)
		gen_cycle(g, RX_TID + 1, 4 * MS, 8 * MS);
	/* A malformed event (back before it left) is skipped too. */
	gen_cycle(g, RX_TID, 4 * MS, 0);
	pause_epoch(&ps, gen_epoch(g, 1, 2, 4e6, 1.4e6), rx_tids, 1);
	assert_int_equal(ps.preemptions, 0);
	assert_false(ps.pred.valid);
	assert_int_equal(ps.sched, PAUSE_SCHED_UNKNOWN);
	pause_finish(&ps);
	gen_free(g);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_slice_formulas),
	cmocka_unit_test(test_eevdf_hogs),
	cmocka_unit_test(test_cfs_hogs),
	cmocka_unit_test(test_hog_runs_cut_short),
	cmocka_unit_test(test_jitter_bounded),
	cmocka_unit_test(test_min_and_max_window),
	cmocka_unit_test_setup_teardown(test_oneshot_vs_periodic, learnt_setup, learnt_teardown),
	cmocka_unit_test_setup_teardown(test_cancel_when_hogs_leave, learnt_setup, learnt_teardown),
	cmocka_unit_test_setup_teardown(test_queue_absorbs, learnt_setup, learnt_teardown),
	cmocka_unit_test(test_other_threads_ignored),
	cmocka_unit_test(test_early_within_epoch),
	cmocka_unit_test_setup_teardown(test_rephase_within_epoch, learnt_setup, learnt_teardown),
	cmocka_unit_test_setup_teardown(test_rephase_capped, learnt_setup, learnt_teardown),
)
