// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/drain.c and capacity.c: the saturated drain learned from
 * synthetic blasts whose drain is known in closed form, and the model's
 * capacity calibrated to it, checked against the solver's own capacity
 * (bneck_compute()'s stage capacity, a second computation of the same
 * rate from the calibrated inputs).
 *
 * The workload: a receiver on CPU 1 that pays C_NS per packet with a full
 * queue. A blast covers a share of each 250-ms epoch; inside it the
 * receiver is always runnable and gets a share s of its CPU, in slices of
 * SLICE_NS on the CPU, each followed by a preemption of SLICE_NS (1 - s)/s;
 * outside it sleeps. Its drain while behind the backlog is then s / C_NS
 * packets per second whatever share of the epoch the blast covers, while
 * pkts_out / epoch falls with that share.
 */
#include "tests/unit/inputs_fixture.h"

#include "daemon/model/capacity.h"
#include "daemon/model/drain.h"
#include "daemon/model/prior.h"
#include "solver/bneck.h"
#include "tests/unit/unit_main.h"

/* @e into @f with [model] capacity = @mode; frees @e. */
static void take_mode(struct ifix *f, struct rxb_epoch *e, enum capacity_mode mode)
{
	struct inputs_env env = env_for(e);

	env.capacity = mode;
	inputs_update(&f->l, &f->d, PORT, e, G_EPOCH_S, &env, &f->r);
	free(e);
}

/* The tests below run with [model] capacity = drain unless they say. */
#define dtake(f, e) take_mode(f, e, CAPACITY_MODE_DRAIN)

#define C_NS		1200.0
#define SLICE_NS	3e6
#define PAYLOAD		1472.0

/*
 * Epoch @seq: @hogs CPU-bound tasks counted on CPU 1 (@eff their effective
 * count, < 0: not measured), a blast over @cover of the epoch in which the
 * receiver gets @share of the CPU; @drops rcvbuf drops, @wakeups wake-ups.
 */
static struct rxb_epoch *blast(uint64_t seq, double hogs, double eff, double share,
			       double cover, uint64_t drops, uint64_t wakeups)
{
	struct rxb_epoch *e = g_epoch(seq, hogs);
	double stretch = cover * G_EPOCH_S * 1e9, slices = floor(stretch * share / SLICE_NS);
	double pkts = floor(slices * SLICE_NS / C_NS);
	struct rxb_sock_meas *s = g_sock(e, (uint64_t)pkts, pkts * C_NS, wakeups, drops);

	if (eff >= 0) {
		e->cpus[1].cpu_bound_eff = eff;
		e->cpus[1].cpu_bound_eff_valid = true;
	}
	s->receivers_valid = true;
	s->receiver_preemptions = (uint64_t)slices;
	s->run_before_preempt_ns = SLICE_NS;
	s->preempt_off_ns = SLICE_NS * (1 - share) / share;
	return e;
}

/*
 * Epoch @seq as blast()'s, but the receiver is never preempted: each run
 * of WOKEN_RUN_NS drains its queue dry and it blocks; the next packet
 * wakes it at once, and it waits @wait_ns for its CPU (the co-runners'
 * turn) while the queue overflows. Its drain is then
 * (WOKEN_RUN_NS / C_NS) / (WOKEN_RUN_NS + @wait_ns) packets per second.
 */
#define WOKEN_RUN_NS	1.2e6
static struct rxb_epoch *woken(uint64_t seq, double hogs, double wait_ns, double cover)
{
	struct rxb_epoch *e = g_epoch(seq, hogs);
	double stretch = cover * G_EPOCH_S * 1e9, runs = floor(stretch / (WOKEN_RUN_NS + wait_ns));
	double pkts = runs * floor(WOKEN_RUN_NS / C_NS);
	struct rxb_sock_meas *s = g_sock(e, (uint64_t)pkts, runs * WOKEN_RUN_NS, (uint64_t)runs, 200);

	s->receivers_valid = true;
	s->receiver_preemptions = 0;
	s->preempt_off_ns = NAN;
	s->wake_waits = (uint64_t)runs;
	s->wake_wait_ns = wait_ns;
	return e;
}

/* The overflowed stage B's capacity (pkts / s) as the solver computes it. */
static double solver_capacity_pps(const struct rxb_stage_inputs *st, uint32_t n)
{
	struct bneck_xfer x = {
		.payload_bytes = PAYLOAD, .file_bytes = 200e6, .one_way_delay_s = 0.1,
		.line_rate_bps = 10e9, .min_rate_bps = 0.2e9, .points = 16,
		.rounds = BNECK_ROUNDS_BURST,
	};
	struct bneck_result r;
	struct bneck_ws ws;
	double c;

	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, st, n, &x, NULL, &r), 0);
	c = r.stage[n - 1].capacity_full_bps > 0 ? r.stage[n - 1].capacity_full_bps :
						   r.stage[n - 1].capacity_bps;
	bneck_ws_finish(&ws);
	return c / (8 * PAYLOAD);
}

/*
 * Two busy loops, the receiver with 0.9 of its fair third in the blasts
 * (a hog's slices are not quite equal to its): the drain is 0.3 / C_NS
 * from blasts that cover 30-100 % of their epochs, while the epoch's
 * pkts_out / length would give 0.09-0.3 / C_NS. The solve's capacity is
 * that drain.
 */
static void test_busy_loops(void **state)
{
	struct ifix *f = *state;
	double truth = 0.9 / 3 / C_NS * 1e9, load;
	uint64_t seq = 0, st = 7;

	for (int i = 0; i < 8; i++)
		dtake(f, g_light(++seq, 2, 20000, &st));
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_COST);
	assert_non_null(strstr(f->r.b.capacity.why, "no saturated drain yet"));
	for (int i = 0; i < 6; i++) {
		dtake(f, blast(++seq, 2, -1, 0.3, 0.3 + 0.14 * i, 500, 2));
		dtake(f, g_light(++seq, 2, 20000, &st));
	}
	assert_int_equal(f->l.drain.taken, 6);
	check_rel_strict(drain_pkts_per_s(&f->l.drain, &load), truth, 1e-6);
	check_rel_strict(load, 2, 1e-12);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	assert_string_equal(capacity_basis_name(f->r.b.capacity.basis), "saturated_drain");
	check_rel_strict(f->r.b.capacity.pkts_per_s, truth, 1e-6);
	check_rel_strict(solver_capacity_pps(f->r.stages, f->r.nstages), truth, 1e-6);
	check_rel_strict(f->r.b.mu_net_per_s.v, f->r.stages[f->r.nstages - 1].mu_net_per_s, 0);
	print_message("2 hogs: drain %.0f pkts/s (truth %.0f), the cost gave %.0f, scale %.3f\n",
		      f->r.b.capacity.drain_pkts_per_s, truth, f->r.b.capacity.cost_pkts_per_s,
		      f->r.b.capacity.scale);
}

/*
 * The arrivals beside the drain: blasts alike, each dropping three times
 * what the receiver read, arrive at 4 x the drain over the same busy
 * time (decay or not: every blast the same); light epochs between them
 * add nothing. Before a blast, neither is known.
 */
static void test_arrivals(void **state)
{
	struct ifix *f = *state;
	const double share = 0.3, cover = 0.6;
	double slices = floor(cover * G_EPOCH_S * 1e9 * share / SLICE_NS);
	double pkts = floor(slices * SLICE_NS / C_NS), truth = share / C_NS * 1e9;
	uint64_t seq = 0, st = 7;

	dtake(f, g_light(++seq, 2, 20000, &st));
	assert_true(isnan(drain_arrivals_pps(&f->l.drain)));
	assert_true(isnan(f->r.b.capacity.drain_arrivals_pps));
	for (int i = 0; i < 5; i++) {
		dtake(f, blast(++seq, 2, -1, share, cover, 3 * (uint64_t)pkts, 2));
		dtake(f, g_light(++seq, 2, 20000, &st));
	}
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), truth, 1e-6);
	check_rel_strict(drain_arrivals_pps(&f->l.drain), 4 * truth, 1e-6);
	check_rel_strict(f->r.b.capacity.drain_arrivals_pps, 4 * truth, 1e-6);
	print_message("arrivals %.0f pkts/s beside a drain of %.0f (truth %.0f, %.0f)\n",
		      f->r.b.capacity.drain_arrivals_pps, f->r.b.capacity.drain_pkts_per_s,
		      4 * truth, truth);
}

/*
 * Two busy loops and a receiver that preempts them when woken, drains its
 * queue dry and blocks, never preempted itself (as the EEVDF scheduler
 * lets a sleeper do): its waits for the CPU all follow wake-ups. With
 * 2.8 ms waits after 1.2 ms runs it drains 0.3 / C_NS, not the 1 / C_NS
 * that its on-CPU time alone would give; a mix of such epochs and
 * preempted ones at the same share gives the same drain.
 */
static void test_woken_not_preempted(void **state)
{
	struct ifix *f = *state;
	double truth = 0.3 / C_NS * 1e9;
	uint64_t seq = 0;

	for (int i = 0; i < 4; i++)
		dtake(f, woken(++seq, 2, 2.8e6, 0.4 + 0.2 * i));
	assert_int_equal(f->l.drain.taken, 4);
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), truth, 1e-9);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	check_rel_strict(solver_capacity_pps(f->r.stages, f->r.nstages), truth, 1e-6);
	for (int i = 0; i < 4; i++)
		dtake(f, blast(++seq, 2, -1, 0.3, 0.5 + 0.1 * i, 500, 2));
	assert_int_equal(f->l.drain.taken, 8);
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), truth, 1e-6);
}

/*
 * A hog under a CPU quota: counted as 0.33 of a task (effective count),
 * so the share the model gives is 1 / 1.33 = 0.75, while the receiver got
 * 0.56 in the blasts. The capacity from the cost is 1.34 x the truth; the
 * calibrated one is the truth. Then the load changes (a third hog) and the
 * drain measured at the old one is not used; at the old load again it is,
 * until it is older than DRAIN_MAX_AGE_NS.
 */
static void test_quota_and_staleness(void **state)
{
	struct ifix *f = *state;
	double truth = 0.56 / C_NS * 1e9;
	uint64_t seq = 0;

	for (int i = 0; i < 6; i++)
		dtake(f, blast(++seq, 2, 0.33, 0.56, 0.5, 800, 1));
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), truth, 1e-6);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	check_rel_strict(solver_capacity_pps(f->r.stages, f->r.nstages), truth, 1e-6);
	check_rel_strict(f->r.b.capacity.cost_pkts_per_s / truth, 1 / 1.33 / 0.56, 1e-3);
	print_message("quota: drain %.0f pkts/s, the cost gave %.0f (x %.3f)\n",
		      f->r.b.capacity.drain_pkts_per_s, f->r.b.capacity.cost_pkts_per_s,
		      f->r.b.capacity.cost_pkts_per_s / truth);
	/* Another load: an epoch without overflow keeps the drain, unused. */
	dtake(f, blast(++seq, 3, 1.33, 0.25, 0.5, 0, 1));
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), truth, 1e-6);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_COST);
	assert_non_null(strstr(f->r.b.capacity.why, "measured at #C+#I 0.33, now 1.33"));
	/* The old load, within the age: used again. */
	dtake(f, blast(++seq, 2, 0.33, 0.56, 0.5, 0, 1));
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	/*
	 * An overflow at the other load starts the sums again: the drain is
	 * that load's alone (0.25 / C_NS, 25000 packets), not a mix; back at
	 * the first load it is not used.
	 */
	dtake(f, blast(++seq, 3, 1.33, 0.25, 0.5, 300, 1));
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), 0.25 / C_NS * 1e9, 1e-6);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	check_rel_strict(solver_capacity_pps(f->r.stages, f->r.nstages), 0.25 / C_NS * 1e9, 1e-6);
	dtake(f, blast(++seq, 2, 0.33, 0.56, 0.5, 0, 1));
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_COST);
	for (int i = 0; i < 2; i++)
		dtake(f, blast(++seq, 2, 0.33, 0.56, 0.5, 800, 1));
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), truth, 1e-6);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	/* Eleven minutes later. */
	seq += 660;
	dtake(f, blast(seq, 2, 0.33, 0.56, 0.5, 0, 1));
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_COST);
	assert_non_null(strstr(f->r.b.capacity.why, "s old"));
	check_rel_strict(f->r.b.capacity.pkts_per_s, f->r.b.capacity.cost_pkts_per_s, 0);
}

/*
 * Overflowing epochs that do not measure a drain are refused and leave it
 * as it was: many wake-ups (the receiver kept catching up), few packets,
 * an unknown spin, busy time longer than the epoch; an epoch without
 * overflow is not taken at all.
 */
static void test_refused(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e;
	double before;
	uint64_t seq = 0;

	for (int i = 0; i < 4; i++)
		dtake(f, blast(++seq, 2, -1, 0.3, 1.0, 100, 1));
	before = drain_pkts_per_s(&f->l.drain, NULL);
	check_rel_strict(before, 0.3 / C_NS * 1e9, 1e-6);
	dtake(f, blast(++seq, 2, -1, 0.3, 1.0, 100, 1000));
	e = blast(++seq, 2, -1, 0.3, 1.0, 100, 1);
	e->socks[0].pkts_out = 500;
	dtake(f, e);
	e = blast(++seq, 2, -1, 0.3, 1.0, 100, 1);
	e->socks[0].empty_reads = e->socks[0].pkts_out;
	dtake(f, e);
	e = blast(++seq, 2, -1, 0.3, 1.0, 100, 1);
	e->socks[0].preempt_off_ns *= 3;
	dtake(f, e);
	assert_int_equal(f->l.drain.refused, 4);
	dtake(f, blast(++seq, 2, -1, 0.3, 1.0, 0, 1));
	assert_int_equal(f->l.drain.refused, 4);
	assert_int_equal(f->l.drain.taken, 4);
	check_rel_strict(drain_pkts_per_s(&f->l.drain, NULL), before, 1e-12);
}

/*
 * capacity_calibrate() on its own, with I/O-bound tasks (the end-system
 * net's share is not linear in mu_net then) and interrupt time per
 * packet: the scaled inputs give the target capacity in the solver, and
 * the overflowed rate keeps its ratio to the kept-up one.
 */
static void test_calibrate_io_irq(void **state)
{
	struct rxb_stage_inputs in = {
		.cpu_bound = 1, .io_bound = 1, .mu_pio_per_s = 2000, .mu_disk_per_s = 500,
		.mu_net_per_s = 1e9 / (900.0 * 64), .mu_net_full_per_s = 1e9 / (1100.0 * 64),
		.queue_pkts = 3000, .batch_pkts = 64, .irq_ns_per_pkt = 150,
	};
	struct drain d = { .pkts = 1e5, .busy_ns = 1e5 / 300000.0 * 1e9, .load_pkts = 2e5,
			   .ok = true, .taken = 3, .last_ns = 1000 };
	double ratio = in.mu_net_full_per_s / in.mu_net_per_s;
	struct capacity c;

	(void)state;
	capacity_calibrate(&d, 2.2, 2000, CAPACITY_MODE_DRAIN, &in, &c);
	assert_int_equal(c.basis, CAPACITY_DRAIN);
	check_rel_strict(c.drain_pkts_per_s, 300000, 1e-12);
	check_rel_strict(solver_capacity_pps(&in, 1), 300000, 1e-6);
	check_rel_strict(in.mu_net_full_per_s / in.mu_net_per_s, ratio, 1e-12);
	check_rel_strict(capacity_pkts_per_s(&in, in.mu_net_full_per_s), 300000, 1e-6);
	print_message("#C 1, #I 1, irq 150 ns: scale %.4f, cost gave %.0f pkts/s\n", c.scale,
		      c.cost_pkts_per_s);
	/* A drain four times off the cost is not taken. */
	in.mu_net_full_per_s /= 8;
	in.mu_net_per_s /= 8;
	capacity_calibrate(&d, 2.2, 2000, CAPACITY_MODE_DRAIN, &in, &c);
	assert_int_equal(c.basis, CAPACITY_COST);
	assert_non_null(strstr(c.why, "not taken"));
}

/*
 * [model] capacity = cost: the same learned state with and without its
 * drain gives bit-identical stage inputs, while the drain, usable, is
 * reported (drain_scale) and with capacity = drain changes them;
 * drain_floor puts the drain into the stage as its saturated drain.
 */
static void test_cost_mode_identical(void **state)
{
	struct ifix *f = *state;
	struct learn *bare = malloc(sizeof(*bare));
	struct inputs *with = malloc(sizeof(*with)), *without = malloc(sizeof(*without));
	struct rxb_epoch *e;
	struct inputs_env env;
	uint64_t seq = 0, st = 7;

	assert_non_null(bare);
	assert_non_null(with);
	assert_non_null(without);
	for (int i = 0; i < 6; i++) {
		take_mode(f, blast(++seq, 2, -1, 0.3, 0.3 + 0.14 * i, 500, 2), CAPACITY_MODE_COST);
		take_mode(f, g_light(++seq, 2, 20000, &st), CAPACITY_MODE_COST);
	}
	assert_int_equal(f->l.drain.taken, 6);
	*bare = f->l;
	memset(&bare->drain, 0, sizeof(bare->drain));
	e = blast(++seq, 2, -1, 0.3, 0.5, 0, 2);
	env = env_for(e);
	env.capacity = CAPACITY_MODE_COST;
	inputs_compute(&f->l, &f->d, PORT, e, &env, with);
	inputs_compute(bare, &f->d, PORT, e, &env, without);
	assert_int_equal(with->nstages, without->nstages);
	assert_true(with->nstages > 0);
	assert_memory_equal(with->stages, without->stages,
			    sizeof(with->stages[0]) * with->nstages);
	assert_int_equal(with->b.capacity.basis, CAPACITY_COST);
	assert_true(isfinite(with->b.capacity.drain_scale));
	assert_true(fabs(with->b.capacity.drain_scale - 1) > 0.05);
	assert_true(isnan(without->b.capacity.drain_scale));
	assert_non_null(strstr(with->b.capacity.why, "[model] capacity = cost"));
	assert_string_equal(capacity_mode_name(with->b.capacity.mode), "cost");
	/* [model] drain_floor: the usable drain into the stage, nothing else. */
	env.drain_floor = true;
	inputs_compute(&f->l, &f->d, PORT, e, &env, with);
	inputs_compute(bare, &f->d, PORT, e, &env, without);
	assert_true(with->stages[with->nstages - 1].sat_drain_pkts_per_s ==
		    with->b.capacity.drain_pkts_per_s);
	assert_true(without->stages[without->nstages - 1].sat_drain_pkts_per_s == 0.0);
	assert_true(with->stages[with->nstages - 1].sat_drain_arrivals_pps ==
		    with->b.capacity.drain_arrivals_pps);
	assert_true(without->stages[without->nstages - 1].sat_drain_arrivals_pps == 0.0);
	with->stages[with->nstages - 1].sat_drain_pkts_per_s = 0.0;
	with->stages[with->nstages - 1].sat_drain_arrivals_pps = 0.0;
	assert_memory_equal(with->stages, without->stages,
			    sizeof(with->stages[0]) * with->nstages);
	env.drain_floor = false;
	env.capacity = CAPACITY_MODE_DRAIN;
	inputs_compute(&f->l, &f->d, PORT, e, &env, with);
	assert_int_equal(with->b.capacity.basis, CAPACITY_DRAIN);
	check_rel_strict(with->stages[with->nstages - 1].mu_net_per_s,
		  without->stages[without->nstages - 1].mu_net_per_s *
			  with->b.capacity.scale, 1e-12);
	free(e);
	free(bare);
	free(with);
	free(without);
}

/*
 * Closed form: #C CPU-bound tasks, no I/O-bound ones, so the receiver's
 * service rate is mu / (#C + 1) (equal-share processor sharing) and the
 * stage's capacity x / (1 + x irq) with x = N mu / (#C + 1). The scaled
 * mu must be (#C + 1) / N x D / (1 - D irq) for a drain D; with capacity
 * = cost nothing moves.
 */
static void test_closed_form(void **state)
{
	const double dr = 250000, irq_s = 200e-9, n = 32, cpu = 2;
	struct rxb_stage_inputs in = {
		.cpu_bound = cpu, .mu_pio_per_s = 2000, .mu_disk_per_s = 500,
		.mu_net_per_s = 1e9 / (1500.0 * n),
		.queue_pkts = 3000, .batch_pkts = n, .irq_ns_per_pkt = irq_s * 1e9,
	};
	struct rxb_stage_inputs orig = in;
	struct drain d = { .pkts = dr, .busy_ns = 1e9, .load_pkts = 2 * dr,
			   .ok = true, .taken = 3, .last_ns = 1000 };
	double want_mu = (cpu + 1) / n * dr / (1 - dr * irq_s);
	struct capacity c;

	(void)state;
	capacity_calibrate(&d, cpu, 2000, CAPACITY_MODE_COST, &in, &c);
	assert_memory_equal(&in, &orig, sizeof(in));
	check_rel_strict(c.drain_scale, want_mu / orig.mu_net_per_s, 1e-6);
	check_rel_strict(c.pkts_per_s, c.cost_pkts_per_s, 0);
	capacity_calibrate(&d, cpu, 2000, CAPACITY_MODE_DRAIN, &in, &c);
	assert_int_equal(c.basis, CAPACITY_DRAIN);
	check_rel_strict(in.mu_net_per_s, want_mu, 1e-6);
	check_rel_strict(c.scale, want_mu / orig.mu_net_per_s, 1e-6);
	check_rel_strict(c.pkts_per_s, dr, 1e-12);
	check_rel_strict(solver_capacity_pps(&in, 1), dr, 1e-6);
}

/*
 * A new port on the same host (prior_from()) starts with the settled
 * flow's drain: with capacity = drain its first inputs have the same
 * capacity, from the drain, and the same mu_net.
 */
static void test_prior_carries_drain(void **state)
{
	struct ifix *f = *state;
	struct learn *fresh = malloc(sizeof(*fresh));
	struct inputs *r = malloc(sizeof(*r));
	struct rxb_epoch *e;
	struct inputs_env env;
	uint64_t seq = 0, st = 7;

	assert_non_null(fresh);
	assert_non_null(r);
	for (int i = 0; i < 6; i++) {
		dtake(f, blast(++seq, 2, -1, 0.3, 0.3 + 0.14 * i, 500, 2));
		dtake(f, g_light(++seq, 2, 20000, &st));
	}
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_DRAIN);
	learn_init(fresh);
	prior_from(fresh, &f->l, PORT);
	prior_place(fresh, 1, f->l.rcvbuf_bytes);
	e = g_light(++seq, 2, 20000, &st);
	env = env_for(e);
	env.capacity = CAPACITY_MODE_DRAIN;
	inputs_compute(&f->l, &f->d, PORT, e, &env, &f->r);
	inputs_compute(fresh, &f->d, PORT + 1, e, &env, r);
	assert_int_equal(r->b.capacity.basis, CAPACITY_DRAIN);
	check_rel_strict(r->b.capacity.pkts_per_s, f->r.b.capacity.pkts_per_s, 0);
	check_rel_strict(r->stages[r->nstages - 1].mu_net_per_s,
		  f->r.stages[f->r.nstages - 1].mu_net_per_s, 1e-12);
	free(e);
	free(fresh);
	free(r);
}

/*
 * A receiver that got 0.05 of its CPU in the blasts beside two counted
 * busy loops: its drain, 0.05 / C_NS, is about a sixth of what the cost
 * and the counts give (a third of 1 / C_NS). Too far off to be taken as
 * the capacity, with either [model] capacity; but it is what the receiver
 * drained, so [model] drain_floor puts it into the stage all the same.
 */
static void test_floor_beyond_scale(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e;
	struct inputs_env env;
	const struct rxb_stage_inputs *b;
	uint64_t seq = 0, st = 7;

	for (int i = 0; i < 6; i++) {
		dtake(f, blast(++seq, 2, -1, 0.05, 0.6 + 0.08 * i, 500, 2));
		dtake(f, g_light(++seq, 2, 20000, &st));
	}
	e = blast(++seq, 2, -1, 0.05, 1.0, 0, 2);
	env = env_for(e);
	env.capacity = CAPACITY_MODE_DRAIN;
	env.drain_floor = true;
	inputs_compute(&f->l, &f->d, PORT, e, &env, &f->r);
	b = &f->r.stages[f->r.nstages - 1];
	check_rel_strict(f->r.b.capacity.drain_pkts_per_s, 0.05 / C_NS * 1e9, 1e-6);
	assert_true(f->r.b.capacity.cost_pkts_per_s > 4 * f->r.b.capacity.drain_pkts_per_s);
	assert_int_equal(f->r.b.capacity.basis, CAPACITY_COST);
	assert_true(isnan(f->r.b.capacity.drain_scale));
	assert_non_null(strstr(f->r.b.capacity.why, "not taken as the capacity"));
	assert_true(f->r.b.capacity.drain_usable);
	assert_true(b->sat_drain_pkts_per_s == f->r.b.capacity.drain_pkts_per_s);
	/* Without the floor nothing of the drain reaches the stage. */
	env.drain_floor = false;
	inputs_compute(&f->l, &f->d, PORT, e, &env, &f->r);
	assert_true(f->r.stages[f->r.nstages - 1].sat_drain_pkts_per_s == 0.0);
	free(e);
}

UNIT_TEST_MAIN(
	IFIX_TEST(test_busy_loops),
	IFIX_TEST(test_woken_not_preempted),
	IFIX_TEST(test_arrivals),
	IFIX_TEST(test_quota_and_staleness),
	IFIX_TEST(test_refused),
	cmocka_unit_test(test_calibrate_io_irq),
	IFIX_TEST(test_cost_mode_identical),
	cmocka_unit_test(test_closed_form),
	IFIX_TEST(test_prior_carries_drain),
	IFIX_TEST(test_floor_beyond_scale),
)
