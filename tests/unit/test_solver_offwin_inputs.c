// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The off-CPU windows on their way to the solver: the sched probe's
 * per-thread off_hist and wake_hist deltas, weighted by the thread's share
 * (collect_sched_add_off_hist(), collect_sched_add_wake_hist()), and an epoch's socket histogram into
 * stage B's inputs (inputs.c: windows per second of the epoch, the
 * histogram, the mean run a preemption ended; the wake-up waits per second
 * and their histogram), checked against the numbers put in; and their
 * learning over epochs (learn.c), checked against the decay worked by hand,
 * for all rates together and by the rate packets arrived at ([model]
 * windows_by_rate: each band decays over the time between its own epochs,
 * stands for its rates while fresh, fed 0.1 s and at the present load;
 * all rates' windows too stand only at the load they were fed at;
 * an epoch without the per-packet probes feeds the band of its rate
 * estimated from the receiver's time).
 */
#include "tests/unit/inputs_fixture.h"

#include "daemon/collect/collect_sched.h"
#include "tests/unit/unit_main.h"

/*
 * A new epoch @seq of 0.5 s with traffic on port 1000 whose receivers the
 * scheduler probe saw; its socket record.
 */
static struct rxb_sock_meas *seen_epoch(struct ifix *f, uint64_t seq)
{
	struct rxb_sock_meas *s = add_sock(ifix_epoch(f, seq, 0.5), 1000, 2000, 250);

	s->receivers_valid = true;
	return s;
}

/* @f's learned fastest reads, in stage B and in the stage, agree. */
static double seen_pps(const struct ifix *f)
{
	assert_true(f->r.b.windows_seen_pps == f->r.stages[0].windows_seen_pps);
	return f->r.b.windows_seen_pps;
}

/*
 * The fastest the receiver read while its windows were met: packets read
 * per second of receiving (not arriving: a packet the full socket dropped
 * cost the receiver nothing), the largest over the epochs with traffic;
 * kept through idle epochs, and forgotten once its epoch's weight,
 * decayed by d an epoch with traffic, falls below LEARN_WAKE_MAX_MIN_W.
 */
static void test_windows_seen(void **state)
{
	struct ifix *f = *state;
	double d = exp(-0.5 / LEARN_TAU_S), w = 1.0;
	struct rxb_sock_meas *s = seen_epoch(f, 1);
	uint64_t seq = 2;

	s->offcpu_hist[22] = 3.0;
	ifix_feed(f, 0.5);
	check_rel_strict(seen_pps(f), 1000 / 0.5, 1e-15);
	s = seen_epoch(f, seq++);
	s->pkts_in = 900;
	s->pkts_out = 600;
	s->active_ns = 0.1e9;
	ifix_feed(f, 0.5);
	check_rel_strict(seen_pps(f), 600 / 0.1, 1e-15);
	for (int i = 0; i < 20; i++) {
		ifix_epoch(f, seq++, 0.5);
		ifix_feed(f, 0.5);
	}
	check_rel_strict(seen_pps(f), 6000.0, 1e-15);
	for (;;) {
		s = seen_epoch(f, seq++);
		s->pkts_out = 100;
		ifix_feed(f, 0.5);
		w *= d;
		if (w < LEARN_WAKE_MAX_MIN_W)
			break;
		check_rel_strict(seen_pps(f), 6000.0, 1e-15);
	}
	check_rel_strict(seen_pps(f), 100 / 0.5, 1e-15);
}

static void test_add_off_hist(void **state)
{
	struct sched_rx_tid prev, cur;
	double hist[RXB_OFFCPU_SLOTS] = { 0 };
	struct rxb_win_sums sums = { 0 };

	(void)state;
	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	cur.off_hist[21] = 10;
	cur.off_hist[13] = 4;
	/* Ten windows of 3 ms: 30 ms and 10 x 3000 us squared. */
	cur.off_sum_ns[21] = 30000000;
	cur.off_sq_us2[21] = 90000000;
	collect_sched_add_off_hist(NULL, &cur, 0.5, hist, &sums);
	assert_true(hist[21] == 5.0 && hist[13] == 2.0 && hist[0] == 0.0);
	check_rel_strict(sums.sum_s[21], 0.015, 1e-15);
	check_rel_strict(sums.sq_s2[21], 4.5e-5, 1e-15);
	assert_true(sums.sum_s[13] == 0.0);
	/* Deltas; a counter that went back (a reused tid) adds nothing. */
	prev.off_hist[21] = 4;
	prev.off_hist[13] = 9;
	prev.off_sum_ns[21] = 12000000;
	prev.off_sq_us2[21] = 36000000;
	collect_sched_add_off_hist(&prev, &cur, 1.0, hist, &sums);
	assert_true(hist[21] == 11.0 && hist[13] == 2.0);
	check_rel_strict(sums.sum_s[21], 0.015 + 0.018, 1e-15);
	check_rel_strict(sums.sq_s2[21], 4.5e-5 + 5.4e-5, 1e-15);
	/* The wake-up waits are folded from wake_hist alone. */
	memset(hist, 0, sizeof(hist));
	memset(&sums, 0, sizeof(sums));
	cur.wake_hist[12] = 40;
	prev.wake_hist[12] = 10;
	cur.wake_sum_ns[12] = 200000;
	prev.wake_sum_ns[12] = 50000;
	collect_sched_add_wake_hist(&prev, &cur, 0.25, hist, &sums);
	assert_true(hist[12] == 7.5 && hist[21] == 0.0 && hist[13] == 0.0);
	check_rel_strict(sums.sum_s[12], 0.25 * 150000e-9, 1e-15);
	assert_true(sums.sum_s[21] == 0.0);
	collect_sched_add_wake_hist(NULL, &cur, 1.0, hist, &sums);
	assert_true(hist[12] == 47.5);
}

static void test_epoch_to_stage(void **state)
{
	struct ifix *f = *state;
	struct rxb_sock_meas *s = seen_epoch(f, 1);

	s->offcpu_hist[22] = 3.0;
	s->offcpu_hist[14] = 5.5;
	s->offcpu_hist[3] = NAN;	/* not a count: left out */
	s->offcpu_hist[4] = -1.0;
	s->run_before_preempt_ns = 2e6;
	s->wake_hist[12] = 100.0;
	s->wake_hist[22] = 1.0;
	s->wake_hist[5] = INFINITY;	/* not a count: left out */
	/* Slot 22's three windows: 5, 6 and 7 ms (mean 6, sd (2/3)^½ ms). */
	s->offcpu_sums.sum_s[22] = 0.018;
	s->offcpu_sums.sq_s2[22] = 25e-6 + 36e-6 + 49e-6;
	/* The waits: slot 12 without sums (no moments), slot 22's one of 10 ms. */
	s->wake_sums.sum_s[22] = 0.010;
	s->wake_sums.sq_s2[22] = 1e-4;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.stages[0].offcpu_mean_s[22], 6e-3, 1e-12);
	check_rel_strict(f->r.stages[0].offcpu_sd_s[22], sqrt(2.0 / 3.0) * 1e-3, 1e-9);
	assert_true(f->r.stages[0].offcpu_mean_s[14] == 0.0);
	assert_true(f->r.stages[0].wake_mean_s[12] == 0.0);
	check_rel_strict(f->r.stages[0].wake_mean_s[22], 0.010, 1e-12);
	assert_true(f->r.stages[0].wake_sd_s[22] == 0.0);
	check_rel_strict(f->r.stages[0].wake_per_s, 101.0 / 0.5, 1e-15);
	assert_true(f->r.stages[0].wake_hist[12] == 100.0 && f->r.stages[0].wake_hist[5] == 0.0);
	assert_true(f->r.b.present);
	check_rel_strict(f->r.b.offcpu_per_s, 8.5 / 0.5, 1e-15);
	check_rel_strict(f->r.b.offcpu_gap_s, 2e-3, 1e-15);
	assert_true(f->r.b.offcpu_hist[22] == 3.0 && f->r.b.offcpu_hist[14] == 5.5);
	assert_true(f->r.b.offcpu_hist[3] == 0.0 && f->r.b.offcpu_hist[4] == 0.0);
	check_rel_strict(f->r.stages[0].offcpu_per_s, 17.0, 1e-15);
	check_rel_strict(f->r.stages[0].offcpu_gap_s, 2e-3, 1e-15);
	assert_true(f->r.stages[0].offcpu_hist[22] == 3.0);
}

/* No window seen yet: no run between windows either, and no waits. */
static void test_no_windows(void **state)
{
	struct ifix *f = *state;
	struct rxb_sock_meas *s = seen_epoch(f, 1);

	s->run_before_preempt_ns = 5e6;
	ifix_feed(f, 0.5);
	assert_true(f->r.b.offcpu_per_s == 0.0 && f->r.b.offcpu_gap_s == 0.0);
	assert_true(f->r.b.wake_per_s == 0.0 && f->r.stages[0].offcpu_per_s == 0.0);
}

/*
 * The windows are learned over the epochs with traffic, decayed like the
 * costs (d = exp(-dt / LEARN_TAU_S) an epoch), and kept through idle ones:
 * the windows per second are the decayed count over the decayed seconds
 * of receiving, worked by hand below.
 */
static void test_windows_learned(void **state)
{
	struct ifix *f = *state;
	double d = exp(-0.5 / LEARN_TAU_S), per_s, n, secs;
	struct rxb_sock_meas *s = seen_epoch(f, 1);

	s->offcpu_hist[22] = 3.0;
	s->offcpu_hist[14] = 5.5;
	s->run_before_preempt_ns = 2e6;
	s->wake_hist[12] = 100.0;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.offcpu_per_s, 17.0, 1e-15);

	/* Without the scheduler's view of the receivers: nothing new, kept. */
	s = add_sock(ifix_epoch(f, 2, 0.5), 1000, 2000, 250);
	s->offcpu_hist[22] = 1000.0;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.offcpu_per_s, 17.0, 1e-14);
	check_rel_strict(f->r.b.offcpu_hist[22], 3.0 * d, 1e-15);
	check_rel_strict(f->r.b.offcpu_gap_s, 2e-3, 1e-14);
	check_rel_strict(f->r.b.wake_per_s, 200.0, 1e-14);

	/* Seen, no window: a half second of receiving without one. The run
	 * a preemption ended stays the windows' own. */
	s = seen_epoch(f, 3);
	s->run_before_preempt_ns = 5e6;
	ifix_feed(f, 0.5);
	n = 8.5 * d * d;
	secs = 0.5 * d * d + 0.5;
	check_rel_strict(f->r.b.offcpu_per_s, n / secs, 1e-14);
	check_rel_strict(f->r.b.offcpu_gap_s, 2e-3, 1e-14);
	check_rel_strict(f->r.b.wake_per_s, 100.0 * d * d / secs, 1e-14);
	check_rel_strict(f->r.stages[0].offcpu_per_s, n / secs, 1e-14);
	per_s = f->r.b.offcpu_per_s;

	/* Idle (no traffic): everything decays alike, the rates stay. */
	ifix_epoch(f, 4, 0.5);
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.offcpu_per_s, per_s, 1e-14);
	check_rel_strict(f->r.b.offcpu_hist[14], 5.5 * d * d * d, 1e-14);

	/* Traffic again, two windows of 1-2 ms after runs of 1 ms. */
	s = seen_epoch(f, 5);
	s->offcpu_hist[20] = 2.0;
	s->run_before_preempt_ns = 1e6;
	ifix_feed(f, 0.5);
	n = 8.5 * pow(d, 4) + 2.0;
	secs = (0.5 * d * d * d + 0.5 * d) * d + 0.5;
	check_rel_strict(f->r.b.offcpu_per_s, n / secs, 1e-14);
	check_rel_strict(f->r.b.offcpu_gap_s,
		  (2e6 * 8.5 * pow(d, 4) + 1e6 * 2.0) / (8.5 * pow(d, 4) + 2.0) / 1e9, 1e-14);
	assert_true(f->r.b.offcpu_hist[20] == 2.0);
}

/*
 * Per second of traffic: an epoch of 0.5 s whose receiver was active
 * 0.2 s of it gives its windows and waits over 0.2 s; an active time
 * above the epoch's (rounding) is held to the epoch.
 */
static void test_windows_per_active_second(void **state)
{
	struct ifix *f = *state;
	double d = exp(-0.5 / LEARN_TAU_S), secs;
	struct rxb_sock_meas *s = seen_epoch(f, 1);

	s->offcpu_hist[22] = 3.0;
	s->offcpu_hist[14] = 5.5;
	s->wake_hist[21] = 12.0;
	s->active_ns = 0.2e9;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.offcpu_per_s, 8.5 / 0.2, 1e-14);
	check_rel_strict(f->r.b.wake_per_s, 12.0 / 0.2, 1e-14);
	s = seen_epoch(f, 2);
	s->wake_hist[21] = 6.0;
	s->active_ns = 0.8e9;
	ifix_feed(f, 0.5);
	secs = 0.2 * d + 0.5;
	check_rel_strict(f->r.b.wake_per_s, (12.0 * d + 6.0) / secs, 1e-14);
	check_rel_strict(f->r.b.offcpu_per_s, 8.5 * d / secs, 1e-14);
}

/*
 * The longest wait after a wake-up: the largest of the epochs with
 * traffic whose weight (d an epoch, idle ones included) is still
 * LEARN_WAKE_MAX_MIN_W; an epoch without the receivers' view adds none.
 */
static void test_wake_max_learned(void **state)
{
	struct ifix *f = *state;
	double d = exp(-0.5 / LEARN_TAU_S);
	struct rxb_sock_meas *s = seen_epoch(f, 1);
	uint64_t seq = 3;
	int idle;

	s->wake_hist[23] = 2.0;
	s->wake_max_ns = 9e6;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.stages[0].wake_max_s, 9e-3, 1e-15);
	s = add_sock(ifix_epoch(f, 2, 0.5), 1000, 2000, 250);
	s->wake_max_ns = 20e6;		/* receivers not seen: left out */
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.wake_max_s, 9e-3, 1e-15);
	s = seen_epoch(f, seq++);
	s->wake_hist[22] = 5.0;
	s->wake_max_ns = 4e6;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.stages[0].wake_max_s, 9e-3, 1e-15);
	/* Idle epochs: 9 ms weighs d^(2 + idle), 4 ms d^idle. */
	for (idle = 1; pow(d, 2 + idle) >= LEARN_WAKE_MAX_MIN_W; idle++) {
		ifix_epoch(f, seq++, 0.5);
		ifix_feed(f, 0.5);
		check_rel_strict(f->r.b.wake_max_s, 9e-3, 1e-15);
	}
	for (; pow(d, idle) >= LEARN_WAKE_MAX_MIN_W; idle++) {
		ifix_epoch(f, seq++, 0.5);
		ifix_feed(f, 0.5);
		check_rel_strict(f->r.b.wake_max_s, 4e-3, 1e-15);
	}
	ifix_epoch(f, seq++, 0.5);
	ifix_feed(f, 0.5);
	assert_true(f->r.b.wake_max_s == 0.0);
	/* The histogram still holds those waits, at 5 % of their count. */
	assert_true(f->r.b.wake_hist[23] > 0.0);
}

/* A seen epoch @seq with @pkts arriving and read in its 0.5 s, @n windows in slot @slot. */
static void band_epoch(struct ifix *f, uint64_t seq, uint64_t pkts, int slot, double n)
{
	struct rxb_sock_meas *s = seen_epoch(f, seq);

	s->pkts_in = s->pkts_out = s->pkts_enqueued = pkts;
	s->offcpu_hist[slot] = n;
	f->env.windows_by_rate = true;
	ifix_feed(f, 0.5);
}

/* A seen epoch @seq with a busy loop beside the receiver, windows by rate on. */
static struct rxb_sock_meas *loaded_epoch(struct ifix *f, uint64_t seq)
{
	struct rxb_sock_meas *s = seen_epoch(f, seq);

	f->e->cpus[1].cpu_bound = 1.0;
	f->env.windows_by_rate = true;
	return s;
}

/*
 * All rates' windows are of the load they were fed at: a busy loop that
 * comes while the flow is idle leaves them out (the stage is solved
 * without windows, by its queue at the new #C); within
 * LEARN_BAND_LOAD_TASKS of their load, or back at it, they count. An epoch
 * with traffic at another load starts them afresh, and they count once
 * LEARN_WIN_FRESH_S (1 s) of receiving has fed them. The flow's first
 * windows count at once; the load of its first epoch is unknown (the
 * receiver not placed yet).
 */
static void test_windows_other_load(void **state)
{
	struct ifix *f = *state;
	double d = exp(-0.5 / LEARN_TAU_S);
	struct rxb_sock_meas *s = seen_epoch(f, 1);

	s->offcpu_hist[14] = 5.0;
	s->wake_hist[12] = 50.0;
	ifix_feed(f, 0.5);
	assert_true(isnan(f->r.b.windows_load));
	check_rel_strict(f->r.b.offcpu_per_s, 10.0, 1e-15);
	s = seen_epoch(f, 2);
	s->offcpu_hist[14] = 5.0;
	s->wake_hist[12] = 50.0;
	ifix_feed(f, 0.5);
	assert_true(f->r.b.windows_load == 0.0 && !f->r.b.windows_other_load);
	check_rel_strict(f->r.b.windows_fresh_s, 1.0, 1e-15);
	check_rel_strict(f->r.b.offcpu_per_s, 10.0, 1e-14);

	/* Idle, 0.4 of a task more: still theirs. */
	ifix_epoch(f, 3, 0.5)->cpus[1].cpu_bound = 0.4;
	ifix_feed(f, 0.5);
	assert_false(f->r.b.windows_other_load);
	check_rel_strict(f->r.stages[0].offcpu_per_s, 10.0, 1e-14);

	/* Idle, a busy loop: left out, the stage still modelled. */
	ifix_epoch(f, 4, 0.5)->cpus[1].cpu_bound = 1.0;
	ifix_feed(f, 0.5);
	assert_true(f->r.b.windows_other_load && f->r.b.windows_load == 0.0);
	assert_int_equal(f->r.nstages, 1);
	assert_true(f->r.b.offcpu_per_s == 0.0 && f->r.b.wake_per_s == 0.0);
	assert_true(f->r.stages[0].offcpu_per_s == 0.0 && f->r.stages[0].wake_per_s == 0.0);
	assert_true(f->r.stages[0].wake_max_s == 0.0 && f->r.stages[0].offcpu_hist[14] == 0.0);
	check_rel_strict(f->r.stages[0].cpu_bound, 1.0, 1e-15);

	/* The loop gone: theirs again, decayed alike, the rates kept. */
	ifix_epoch(f, 5, 0.5);
	ifix_feed(f, 0.5);
	assert_false(f->r.b.windows_other_load);
	check_rel_strict(f->r.b.offcpu_per_s, 10.0, 1e-14);
	check_rel_strict(f->r.b.wake_per_s, 100.0, 1e-14);
	check_rel_strict(f->r.b.offcpu_hist[14], 5.0 * (d + 1.0) * d * d * d, 1e-14);

	/* Traffic beside the loop: afresh, this epoch's windows alone, left
	 * out until 1 s of receiving has fed them. */
	s = loaded_epoch(f, 6);
	s->offcpu_hist[20] = 2.0;
	ifix_feed(f, 0.5);
	assert_false(f->r.b.windows_other_load);
	check_rel_strict(f->r.b.windows_load, 1.0, 1e-15);
	check_rel_strict(f->r.b.windows_fresh_s, 0.5, 1e-15);
	assert_true(f->r.b.offcpu_per_s == 0.0 && f->r.stages[0].offcpu_per_s == 0.0);
	s = loaded_epoch(f, 7);
	s->offcpu_hist[20] = 2.0;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.windows_fresh_s, 1.0, 1e-15);
	check_rel_strict(f->r.b.offcpu_per_s, 4.0, 1e-14);
	check_rel_strict(f->r.stages[0].offcpu_per_s, 4.0, 1e-14);
	assert_true(f->r.b.offcpu_hist[14] == 0.0 && f->r.b.wake_per_s == 0.0);

	/* Traffic without the loop: afresh, 0.2 s of it, then 0.5 s, 0.5 s. */
	s = seen_epoch(f, 8);
	s->offcpu_hist[13] = 1.0;
	s->active_ns = 0.2e9;
	ifix_feed(f, 0.5);
	assert_true(f->r.b.windows_load == 0.0 && !f->r.b.windows_other_load);
	check_rel_strict(f->r.b.windows_fresh_s, 0.2, 1e-15);
	assert_true(f->r.b.offcpu_per_s == 0.0 && f->r.stages[0].offcpu_per_s == 0.0);
	seen_epoch(f, 9)->offcpu_hist[13] = 1.0;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.windows_fresh_s, 0.7, 1e-15);
	assert_true(f->r.b.offcpu_per_s == 0.0);
	seen_epoch(f, 10)->offcpu_hist[13] = 1.0;
	ifix_feed(f, 0.5);
	check_rel_strict(f->r.b.offcpu_per_s, (d * d + d + 1.0) / (0.2 * d * d + 0.5 * d + 0.5),
			 1e-14);
	assert_true(f->r.b.offcpu_hist[20] == 0.0);
}

/*
 * The windows by rate. A band decays by d = exp(-0.5 / LEARN_BAND_TAU_S)
 * for each of its own 0.5-s epochs, however long the wall time between
 * them, and stands for its rates once fed LEARN_BAND_MIN_S (two epochs).
 * All rates' windows decay by the epochs (each 0.5 s here) as before.
 */
static void test_windows_by_rate(void **state)
{
	struct ifix *f = *state;
	double d = exp(-0.5 / LEARN_BAND_TAU_S), dp = exp(-0.5 / LEARN_TAU_S), slow;
	uint64_t seq;

	/* 2000 pkts/s, 30 s apart: 10 then 5 windows in slot 14. */
	band_epoch(f, 1, 1000, 14, 10.0);
	band_epoch(f, 31, 1000, 14, 5.0);
	assert_int_equal(f->r.nbands, 0);	/* one band: all rates' windows */
	/* 8000 pkts/s: 2 then 1 windows in slot 22; live once fed 1 s. */
	band_epoch(f, 32, 4000, 22, 2.0);
	assert_int_equal(f->r.nbands, 0);
	band_epoch(f, 33, 4000, 22, 1.0);
	assert_int_equal(f->r.nbands, 2);
	check_rel_strict(f->r.band_at_pps[0], 2000.0, 1e-15);
	check_rel_strict(f->r.band_at_pps[1], 8000.0, 1e-15);
	slow = (10.0 * d + 5.0) / (0.5 * d + 0.5);
	check_rel_strict(f->r.band_b[0].offcpu_per_s, slow, 1e-14);
	check_rel_strict(f->r.band_b[1].offcpu_per_s, (2.0 * d + 1.0) / (0.5 * d + 0.5), 1e-14);
	assert_true(f->r.band_b[0].offcpu_hist[22] == 0.0 && f->r.band_b[1].offcpu_hist[14] == 0.0);
	/* The rest of stage B is the flow's; all rates' windows mixed there. */
	assert_true(f->r.band_b[0].mu_net_per_s == f->r.stages[0].mu_net_per_s);
	assert_true(f->r.band_b[1].queue_pkts == f->r.stages[0].queue_pkts);
	check_rel_strict(f->r.stages[0].offcpu_per_s,
			 (10.0 * pow(dp, 3) + 5.0 * dp * dp + 2.0 * dp + 1.0) /
			 (0.5 * (pow(dp, 3) + dp * dp + dp + 1.0)), 1e-14);
	check_rel_strict(f->r.band_b[1].windows_seen_pps, 8000.0, 1e-15);

	/* Off: all rates' windows. */
	f->env.windows_by_rate = false;
	inputs_compute(&f->l, &f->d, PORT, f->e, &f->env, &f->r);
	assert_int_equal(f->r.nbands, 0);

	/* A busy loop beside the receiver: the bands fed without it are not
	 * of this load; the one fed now is the only one of it (its first
	 * epoch at the new load is folded into what it held: the load is
	 * known once the epoch is). */
	loaded_epoch(f, 34)->offcpu_hist[14] = 1.0;
	ifix_feed(f, 0.5);
	assert_int_equal(f->r.nbands, 0);
	check_rel_strict(f->l.band_load, 1.0, 1e-15);
	/* Overrun: 4000 arrived, 1000 read. The band is that of the rate
	 * sent, the fast one, fed at the other load: it starts afresh, and
	 * stands for its rates once fed 1 s at this one. */
	loaded_epoch(f, 35)->pkts_in = 4000;
	ifix_feed(f, 0.5);
	assert_int_equal(f->r.nbands, 0);
	loaded_epoch(f, 36)->pkts_in = 4000;
	ifix_feed(f, 0.5);
	assert_int_equal(f->r.nbands, 2);
	check_rel_strict(f->r.band_b[0].offcpu_per_s,
			 (slow * (0.5 * d + 0.5) * d + 1.0) / ((0.5 * d + 0.5) * d + 0.5), 1e-14);
	assert_true(f->r.band_b[1].offcpu_per_s == 0.0);	/* not 2000 pps' windows */

	/* Stale: more than LEARN_BAND_KEEP_S before the last traffic. */
	seq = 36 + (uint64_t)LEARN_BAND_KEEP_S;
	loaded_epoch(f, seq - 1);
	ifix_feed(f, 0.5);
	assert_int_equal(f->r.nbands, 2);
	loaded_epoch(f, seq + 1);
	ifix_feed(f, 0.5);
	assert_int_equal(f->r.nbands, 0);
}

/*
 * More rates than bands, each fed LEARN_BAND_MIN_S: the first LEARN_BANDS
 * stand for their rates, and the two after them take no band (none is
 * spent or short of that receiving).
 */
static void test_windows_by_rate_evict(void **state)
{
	struct ifix *f = *state;
	uint64_t pkts = 1000, seq = 1;
	int live[LEARN_BANDS];

	for (int i = 0; i < LEARN_BANDS + 2; i++) {
		band_epoch(f, seq++, pkts, 14, 1.0);
		band_epoch(f, seq++, pkts, 14, 1.0);
		pkts = (uint64_t)(pkts * 1.2);
	}
	assert_int_equal(learn_bands_live(&f->l, 0.0, live), LEARN_BANDS);
	assert_int_equal(f->r.nbands, LEARN_BANDS);
	check_rel_strict(f->r.band_at_pps[0], 2000.0, 1e-15);
	for (uint32_t j = 1; j < f->r.nbands; j++)
		assert_true(f->r.band_at_pps[j] > f->r.band_at_pps[j - 1]);
	pkts = 1000;
	for (int i = 0; i < LEARN_BANDS - 1; i++)
		pkts = (uint64_t)(pkts * 1.2);
	check_rel_strict(f->r.band_at_pps[LEARN_BANDS - 1], 2.0 * pkts, 1e-15);
}

/*
 * A sweep of 1.5 x LEARN_BANDS rates, one 0.5-s epoch each per pass, with
 * an epoch of 0.05 s of receiving at a stray rate between two rates: after
 * four passes the first LEARN_BANDS rates stand for themselves (a pass
 * takes 48 s, within LEARN_BAND_HOLD_S: the rest take no band), and no
 * stray rate has a band. (The band fed longest ago giving way would have
 * every band taken before its rate came round again: none would stand.)
 */
static void test_windows_by_rate_sweep(void **state)
{
	struct ifix *f = *state;
	const int nrates = LEARN_BANDS * 3 / 2;
	uint64_t seq = 1;
	int live[LEARN_BANDS];

	for (int pass = 0; pass < 4; pass++) {
		uint64_t pkts = 1000;

		for (int i = 0; i < nrates; i++) {
			struct rxb_sock_meas *s;

			band_epoch(f, seq++, pkts, 14, 1.0);
			s = seen_epoch(f, seq++);
			s->pkts_in = s->pkts_out = s->pkts_enqueued = 7 + i;
			s->active_ns = 5e7;
			s->offcpu_hist[20] = 1.0;
			f->env.windows_by_rate = true;
			ifix_feed(f, 0.5);
			assert_int_equal(f->l.band_fed, -1);
			pkts = (uint64_t)(pkts * 1.2);
		}
	}
	assert_int_equal(learn_bands_live(&f->l, 0.0, live), LEARN_BANDS);
	assert_int_equal(f->r.nbands, LEARN_BANDS);
	for (uint32_t j = 0; j < f->r.nbands; j++) {
		assert_true(f->r.band_at_pps[j] >= 2000.0);
		assert_true(f->r.band_b[j].offcpu_hist[20] == 0.0);
	}
	/* The stray epochs' windows are in all rates' mix. */
	assert_true(f->r.stages[0].offcpu_hist[20] > 0.0);
}

/*
 * An epoch @seq of 0.5 s, net_probe_every 32, with @p read and @w
 * wake-ups at 7 us a wake-up and 1.3 us a packet, and one window in
 * @slot; @sampled: the per-packet probes counted its packets (else they
 * are zero, as the collector leaves them).
 */
static struct rxb_sock_meas *timed_epoch(struct ifix *f, uint64_t seq, uint64_t p,
					 uint64_t w, bool sampled, int slot)
{
	struct rxb_sock_meas *s = seen_epoch(f, seq);

	f->e->net_probe_every = 32;
	f->e->net_sampled = sampled;
	f->env.windows_by_rate = true;
	s->receiver_oncpu_ns = 7000 * w + 1300 * p;
	s->ran_on[0].oncpu_ns = s->receiver_oncpu_ns;
	s->recv_wakeups = w;
	s->offcpu_hist[slot] = 1.0;
	s->counts_valid = sampled;
	s->pkts_in = s->pkts_out = s->pkts_enqueued = sampled ? p : 0;
	return s;
}

/*
 * Without the per-packet probes in every epoch ([measure] net_probe_every
 * 32): an unsampled epoch's windows go to the band of the rate its
 * packets are estimated at from the receiver's time (struct arrive), once
 * the estimate is trusted - here exact: the time is 7 us a wake-up and
 * 1.3 us a packet - and not into all rates' windows, which the sampled
 * epochs alone feed. An estimate joins the band nearest it within a band
 * step.
 */
static void test_windows_by_rate_unsampled(void **state)
{
	static const uint64_t train[][2] = {
		{ 3000, 500 }, { 9000, 90 }, { 6000, 150 }, { 12000, 24 },
	};
	struct ifix *f = *state;
	uint64_t seq = 1;
	int found = -1, band;

	/* Nothing learned: the epoch feeds no band. */
	timed_epoch(f, seq++, 50000, 700, false, 20);
	ifix_feed(f, 0.5);
	assert_int_equal(f->l.band_fed, -1);
	for (int i = 0; !arrive_trusted(&f->l.arrive); i++) {
		assert_true(i < 40);
		timed_epoch(f, seq++, train[i % 4][0], train[i % 4][1], true, 14);
		ifix_feed(f, 0.5);
	}
	/* 50000 read, 1000 dropped, in each of two 0.5-s epochs: 102000 pkts/s. */
	for (int i = 0; i < 2; i++) {
		timed_epoch(f, seq++, 50000, 700, false, 20)->drops = 1000;
		ifix_feed(f, 0.5);
		assert_true(f->l.band_fed >= 0);
		check_rel_strict(f->l.band[f->l.band_fed].estimated_s, 0.5 * (i + 1), 1e-15);
	}
	for (uint32_t j = 0; j < f->r.nbands; j++)
		if (fabs(f->r.band_at_pps[j] / 102000.0 - 1) < 1e-6)
			found = (int)j;
	assert_true(found >= 0);
	check_rel_strict(f->r.band_b[found].offcpu_per_s, 2.0, 1e-12);
	assert_true(f->r.band_b[found].offcpu_hist[14] == 0.0);
	check_rel_strict(f->r.band_b[found].windows_seen_pps, 100000.0, 1e-6);
	assert_true(f->r.stages[0].offcpu_hist[20] == 0.0);
	assert_true(f->r.stages[0].offcpu_hist[14] > 0.0);
	assert_int_equal(f->l.arrive.estimated, 2);
	/*
	 * 111180 pkts/s, 9 % above: past the band's edge (its key's top is
	 * 2^(134/8) = 110200 pkts/s), within a band step of its rate: it joins
	 * the band. 20 % above it: a band of its own.
	 */
	band = f->l.band_fed;
	timed_epoch(f, seq++, 54590, 700, false, 20)->drops = 1000;
	ifix_feed(f, 0.5);
	assert_int_equal(f->l.band_fed, band);
	check_rel_strict(f->l.band[band].estimated_s, 1.5, 1e-15);
	timed_epoch(f, seq++, 60200, 700, false, 20)->drops = 1000;
	ifix_feed(f, 0.5);
	assert_true(f->l.band_fed >= 0 && f->l.band_fed != band);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_add_off_hist),
	cmocka_unit_test_setup_teardown(test_windows_seen, ifix_setup, ifix_teardown),
	cmocka_unit_test_setup_teardown(test_windows_other_load, ifix_setup, ifix_teardown),
	cmocka_unit_test_setup_teardown(test_epoch_to_stage, ifix_setup, ifix_teardown),
	IFIX_TEST(test_windows_learned),
	IFIX_TEST(test_no_windows),
	IFIX_TEST(test_windows_per_active_second),
	IFIX_TEST(test_wake_max_learned),
	IFIX_TEST(test_windows_by_rate),
	IFIX_TEST(test_windows_by_rate_evict),
	IFIX_TEST(test_windows_by_rate_sweep),
	IFIX_TEST(test_windows_by_rate_unsampled),
)
