// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Solver benchmarks. Every time is printed next to a reference measured in
 * the same run on the same model, as a ratio:
 *
 *  1. the per-epoch bottleneck computation with K = 65536 and a 1000-point
 *     sweep (budget 50 ms on one core), with either rounds rule, against
 *     the same model swept with the plain O(K) recursion (no geometric
 *     tail, and with burst rounds a burst's absorption at every rate)
 *     under the same rounds rule;
 *  1b. the daemon's solve with an uncertain rate (mu_rel_sd, docs/model.md
 *     3.3) against the plain solve of the same inputs, at a 64 MiB socket
 *     buffer's K (budget: 2.5 times the plain solve);
 *  1c. the daemon's solve under loss = service with the windows and waits
 *     of an e2e status at k = 3 (slot moments, a longest wait), the same
 *     with the rate uncertain by that run's measured spread (and with a
 *     saturated drain in force: the step rule), and with a CPU quota's
 *     phases instead, against the queue model's solve of the
 *     same inputs (budget: the per-epoch 50 ms, and the ratio printed);
 *  2. the M/M[N]/1/K cut recursion against the general CTMC path (net ->
 *     reachability -> steady state by dense GTH, and by the band reduction
 *     the automatic choice takes) on the same queues;
 *  3. the one-CPU tagged-customer chains: the band reduction against
 *     Gauss-Seidel on the same chains (steady state and absorption);
 *  4. response-time quantiles: one uniformization pass on the reduced
 *     chain against a whole-chain pass per evaluation of F (the same
 *     bisection);
 *  5. the SMP tagged-customer net at >= 10^5 states: exploration, steady
 *     state and absorption times against one sparse matrix-vector sweep over
 *     the same chain, and the memory held.
 *
 * With --time-chain P C I it instead times the numerical solves of one
 * tagged chain (P CPUs, #C, #I, Table II rates, balancing at 1000/s) and
 * prints them as one JSON line, for bench/storm_compare.py.
 *
 * Run by `make bench` under flock /tmp/rxbneck-heavy.lock. Exit status 1 when
 * a budget or an agreement check fails.
 */
#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/util.h"
#include "solver/bneck.h"
#include "solver/bulkq.h"
#include "solver/offwin.h"
#include "solver/rbudp.h"
#include "solver/tagged.h"

#define REPS		7
#define BUDGET_MS	50.0

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static double ms_since(uint64_t t0)
{
	return (rxb_mono_ns() - t0) / 1e6;
}

static void pin_to_one_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* ------------------------------------------------ 1. bottleneck, K 64Ki -- */

struct bn_case {
	const char *name;
	double cpu_bound, io_bound;
	uint32_t batch;
	enum rxb_batch_rule rule;
	double line_bps;
};

/*
 * The reference: T(B) of the same model over the same grid with the plain
 * recursion and, with burst rounds, every rate's absorption (@work holds
 * BULKQ_BURST_WORK(K) doubles).
 */
static double reference_sweep(const struct rxb_stage_inputs *s, double mu,
			      const struct bneck_xfer *x, double *work,
			      double *best_t)
{
	struct rbudp_params rp = {
		.file_bytes = x->file_bytes, .payload_bytes = x->payload_bytes,
		.one_way_delay_s = x->one_way_delay_s,
		.loss_episode_pkts = x->loss_episode_pkts,
	};
	double step = (x->line_rate_bps - x->min_rate_bps) / (x->points - 1);
	uint64_t t0 = rxb_mono_ns();

	*best_t = INFINITY;
	for (uint32_t k = 0; k < x->points; k++) {
		double rate = x->min_rate_bps + k * step;
		struct bulkq_params p = {
			.arrival_per_s = rate / (8.0 * x->payload_bytes),
			.service_per_s = mu, .queue_pkts = s->queue_pkts,
			.batch_pkts = s->batch_pkts, .rule = s->rule,
		};
		struct bulkq_burst_result br;
		struct bulkq_result r;
		struct rbudp_time t;
		int err = bulkq_loss_full(&p, &r);

		if (!err && x->rounds == BNECK_ROUNDS_BURST) {
			struct rbudp_stage rs = {
				.loss = r.loss, .pass = r.pass,
				.drain_pkts_per_s = mu * s->batch_pkts,
			};

			err = bulkq_burst(&p, work, &br);
			rs.absorb_pkts = br.absorb_pkts;
			if (!err)
				err = rbudp_time_burst(&rp, rate / 8.0, &rs, 1, &t);
		} else if (!err) {
			err = rbudp_time(&rp, rate / 8.0, r.ln_loss, &t);
		}
		if (err)
			return NAN;
		if (t.time_s < *best_t)
			*best_t = t.time_s;
	}
	return ms_since(t0);
}

/* Median ms of REPS solves of @s, NaN when the solve fails. */
static double solve_ms(struct bneck_ws *ws, const struct rxb_stage_inputs *s,
		       const struct bneck_xfer *x, struct bneck_result *r)
{
	double t[REPS];

	for (int i = 0; i < REPS; i++) {
		uint64_t t0 = rxb_mono_ns();

		if (bneck_compute(ws, s, 1, x, NULL, r))
			return NAN;
		t[i] = ms_since(t0);
	}
	return median(t, REPS);
}

static int bench_bottleneck(void)
{
	static const struct bn_case cases[] = {
		{ "seed host #C=2 #I=1, N=6 strict, 1 Gb/s", 2, 1, 6, RXB_BATCH_STRICT, 1e9 },
		{ "seed host #C=2.4 #I=1.5, N=6 partial, 10 Gb/s", 2.4, 1.5, 6, RXB_BATCH_PARTIAL, 1e10 },
		{ "seed host #C=0 #I=0, N=64 partial, 10 Gb/s", 0, 0, 64, RXB_BATCH_PARTIAL, 1e10 },
	};
	static const enum bneck_rounds rules[] = {
		BNECK_ROUNDS_BURST, BNECK_ROUNDS_SEED,
	};
	double *work = malloc(BULKQ_BURST_WORK(65536) * sizeof(*work));
	struct bneck_ws ws;
	int fail = 0;

	printf("1. bottleneck computation, K = 65536, 1000-point sweep + refinement,\n"
	       "   against the same model and rounds rule swept with the plain O(K) recursion\n");
	if (!work || bneck_ws_init(&ws, 1000)) {
		free(work);
		return 1;
	}
	for (size_t c = 0; c < RXB_ARRAY_SIZE(cases); c++) {
		struct rxb_stage_inputs s = {
			.cpu_bound = cases[c].cpu_bound, .io_bound = cases[c].io_bound,
			.mu_pio_per_s = 4600.0, .mu_disk_per_s = 1010.0,
			.mu_net_per_s = 41600.0, .queue_pkts = 65536,
			.batch_pkts = cases[c].batch, .rule = cases[c].rule,
		};

		printf("   %s\n", cases[c].name);
		for (size_t k = 0; k < RXB_ARRAY_SIZE(rules); k++) {
			struct bneck_xfer x = {
				.payload_bytes = 1468.0, .file_bytes = 500e6,
				.one_way_delay_s = 0.1, .line_rate_bps = cases[c].line_bps,
				.min_rate_bps = cases[c].line_bps / 100.0, .points = 1000,
				.rounds = rules[k],
			};
			struct bneck_result r;
			double ref, ref_best, fast;

			fast = solve_ms(&ws, &s, &x, &r);
			if (isnan(fast)) {
				printf("      %s rounds: FAILED to solve\n",
				       bneck_rounds_name(rules[k]));
				fail = 1;
				continue;
			}
			ref = reference_sweep(&s, r.stage[0].service_rate_per_s, &x,
					      work, &ref_best);
			printf("      %-5s rounds: %6.2f ms (%u T(B) evaluations; budget %.0f ms: %s), plain %6.1f ms -> %4.0fx faster\n"
			       "                    bottleneck %.1f Mb/s, loss %.3g, T %.4f s (plain grid minimum %.4f s)\n",
			       bneck_rounds_name(rules[k]), fast, r.evaluations,
			       BUDGET_MS, fast < BUDGET_MS ? "ok" : "OVER BUDGET",
			       ref, ref / fast, r.rate_bps / 1e6, r.loss, r.time_s,
			       ref_best);
			if (fast >= BUDGET_MS || !(r.time_s <= ref_best * (1 + 1e-9)))
				fail = 1;
		}
	}
	bneck_ws_finish(&ws);
	free(work);
	return fail;
}

/* ------------------------------------------- 1b. an uncertain rate -- */

#define UNCERTAIN_MAX_RATIO	2.5

static int bench_uncertain(void)
{
	/* The e2e's receiver at k = 1 with a 64 MiB buffer (docs/model.md §3.3). */
	struct rxb_stage_inputs s = {
		.cpu_bound = 1, .mu_pio_per_s = 1e6, .mu_disk_per_s = 1e6,
		.mu_net_per_s = 1e9 / (1090.0 * 76), .queue_pkts = 29150,
		.batch_pkts = 76, .rule = RXB_BATCH_PARTIAL,
	};
	struct bneck_xfer x = {
		.payload_bytes = 1472.0, .file_bytes = 200e6, .one_way_delay_s = 0.1,
		.line_rate_bps = 10e9, .min_rate_bps = 100e6, .points = 200,
		.rounds = BNECK_ROUNDS_BURST, .loss_episode_pkts = 2000,
	};
	struct bneck_result r;
	struct bneck_ws ws;
	double plain_ms, plain_bps, unc_ms, ratio;
	uint32_t plain_evals;

	printf("\n1b. the daemon's solve with an uncertain rate, K = %u, %u-point sweep\n",
	       s.queue_pkts, x.points);
	if (bneck_ws_init(&ws, x.points))
		return 1;
	plain_ms = solve_ms(&ws, &s, &x, &r);
	plain_bps = r.rate_bps;
	plain_evals = r.evaluations;
	s.mu_rel_sd = 0.12;
	unc_ms = solve_ms(&ws, &s, &x, &r);
	bneck_ws_finish(&ws);
	ratio = unc_ms / plain_ms;
	printf("   plain: %.2f ms (%u evaluations), rate %.3f Gb/s\n"
	       "   sd 0.12: %.2f ms (%u evaluations), rate %.3f Gb/s\n"
	       "   -> %.2fx the plain solve, budget %.1fx: %s\n",
	       plain_ms, plain_evals, plain_bps / 1e9, unc_ms, r.evaluations,
	       r.rate_bps / 1e9, ratio, UNCERTAIN_MAX_RATIO,
	       ratio <= UNCERTAIN_MAX_RATIO ? "ok" : "OVER BUDGET");
	return !(ratio <= UNCERTAIN_MAX_RATIO) || !(r.rate_bps < plain_bps);
}

/* ------------------------------- 1c. the windows and the quota phases -- */

/* tests/e2e line10g-s243, k = 3, at a --follow start (status offcpu_windows). */
static const char k3_offcpu[] =
	"12.6371/12:0.000237322:4970:0,13:0.80765:10378:0,14:4.71835e-06:22721:0,"
	"15:5.33624e-08:33710:0,19:5.31564e-07:991496:0,20:7.53896e-07:1094872:0,"
	"21:0.386817:3961135:235144,22:0.756381:7994091:0,23:16.5583:12085478:1176884";
static const char k3_wake[] =
	"2305.04/0:0.890129,8:1.18165e-06:371:0,9:3.41556e-06:721:0,10:2.55141:1826:0,"
	"11:6.80037:3264:0,12:3101.27:5433:0,13:80.4785:9230:0,14:9.33273:24411:0,"
	"15:4.12423:43521:4137,16:1.72064:80017:0,17:0.136086:177523:0,"
	"18:0.00153169:430266:73540,19:0.465486:769757:82110,20:11.0755:1757154:187848,"
	"21:103.578:3243027:443138,22:29.7271:6153383:1226935,23:24.0167:11143496:1393537";

/* One timed model of 1c: its solve time into @ms, its figures printed. */
static int time_model(struct bneck_ws *ws, const char *name, const struct rxb_stage_inputs *s,
		      const struct bneck_xfer *x, double ref_ms, double *ms)
{
	struct bneck_result r;

	*ms = solve_ms(ws, s, x, &r);
	if (isnan(*ms)) {
		printf("   %-30s FAILED to solve\n", name);
		return 1;
	}
	printf("   %-30s %6.2f ms (%4u evaluations), rate %.3f Gb/s", name, *ms, r.evaluations,
	       r.rate_bps / 1e9);
	if (ref_ms > 0)
		printf(": %.1fx the queue model, budget %.0f ms: %s", *ms / ref_ms, BUDGET_MS,
		       *ms < BUDGET_MS ? "ok" : "OVER BUDGET");
	printf("\n");
	return ref_ms > 0 && !(*ms < BUDGET_MS);
}

static int bench_windows(void)
{
	struct rxb_stage_inputs s = {
		.cpu_bound = 3, .mu_pio_per_s = 1e6, .mu_disk_per_s = 1e6,
		.mu_net_per_s = 11452.3, .queue_pkts = 3641, .batch_pkts = 99,
		.rule = RXB_BATCH_PARTIAL, .queue_release_pkts = 910,
		.offcpu_gap_s = 3.817e-3, .wake_max_s = 16.009e-3, .windows_seen_pps = 567782,
	};
	struct bneck_xfer x = {
		.payload_bytes = 1472.0, .file_bytes = 200e6, .one_way_delay_s = 0.1,
		.line_rate_bps = 10e9, .min_rate_bps = 100e6, .points = 200,
		.rounds = BNECK_ROUNDS_BURST, .loss_model = BNECK_LOSS_QUEUE,
	};
	struct bneck_ws ws;
	double queue_ms, ms;
	int fail = 0;

	printf("\n1c. the daemon's solve with measured windows (e2e k = 3) and with a quota's\n"
	       "    phases, K = %u, %u-point sweep, burst rounds\n", s.queue_pkts, x.points);
	if (offwin_parse(k3_offcpu, &s.offcpu_per_s, s.offcpu_hist, s.offcpu_mean_s,
			 s.offcpu_sd_s, RXB_OFFCPU_SLOTS) ||
	    offwin_parse(k3_wake, &s.wake_per_s, s.wake_hist, s.wake_mean_s, s.wake_sd_s,
			 RXB_OFFCPU_SLOTS) || bneck_ws_init(&ws, x.points))
		return 1;
	fail |= time_model(&ws, "queue:", &s, &x, 0, &queue_ms);
	x.loss_model = BNECK_LOSS_SERVICE;
	x.episodes_from_windows = true;
	fail |= time_model(&ws, "service, windows:", &s, &x, queue_ms, &ms);
	/* The daemon's rate_uncertainty = measured at this run's spread. */
	s.mu_rel_sd = 0.127;
	fail |= time_model(&ws, "service, windows, sd 0.127:", &s, &x, queue_ms, &ms);
	/* And with a saturated drain in force (3.5 Gb/s): the step rule. */
	s.sat_drain_pkts_per_s = 3e5;
	fail |= time_model(&ws, "  + saturated drain:", &s, &x, queue_ms, &ms);
	s.sat_drain_pkts_per_s = 0.0;
	s.mu_rel_sd = 0.0;
	s.quota_period_s = 0.1;
	s.quota_slow_s = 0.05;
	s.quota_slow_share = 0.25;
	s.quota_fast_share = 0.5;
	fail |= time_model(&ws, "service, quota phases:", &s, &x, queue_ms, &ms);
	bneck_ws_finish(&ws);
	return fail;
}

/* ------------------------------------ 2. recursion vs general CTMC path -- */

static int bench_recursion_vs_ctmc(void)
{
	static const uint32_t ks[] = { 64, 256, 1024 };
	struct ctmc_opts dense, band;
	int fail = 0;

	ctmc_opts_default(&dense);
	dense.method = CTMC_METHOD_GTH;
	ctmc_opts_default(&band);
	band.method = CTMC_METHOD_BAND;
	printf("\n2. M/M[N]/1/K loss: O(K) cut recursion vs the general CTMC path (net -> reachability ->\n"
	       "   steady state by dense GTH, and by the band reduction), N = 6, load 0.7\n");
	for (size_t k = 0; k < RXB_ARRAY_SIZE(ks); k++) {
		for (int rule = 0; rule < 2; rule++) {
			struct bulkq_params p = {
				.arrival_per_s = 0.7 * 6 * 12000.0,
				.service_per_s = 12000.0, .queue_pkts = ks[k],
				.batch_pkts = 6, .rule = rule,
			};
			struct bulkq_result rr, rg, rb;
			struct ctmc_stat st;
			double tr[REPS], tg[REPS], tb[REPS], a, g, bd, rel, relb;
			int n = 0;

			for (int i = 0; i < REPS; i++) {
				uint64_t t0 = rxb_mono_ns();

				/* Many repetitions: one recursion is sub-microsecond. */
				for (int j = 0; j < 1000; j++)
					n |= bulkq_loss_full(&p, &rr);
				tr[i] = ms_since(t0) / 1000.0;
				t0 = rxb_mono_ns();
				n |= bulkq_loss_ctmc(&p, &dense, &rg, &st);
				tg[i] = ms_since(t0);
				t0 = rxb_mono_ns();
				n |= bulkq_loss_ctmc(&p, &band, &rb, &st);
				tb[i] = ms_since(t0);
			}
			a = median(tr, REPS);
			g = median(tg, REPS);
			bd = median(tb, REPS);
			rel = fabs(rr.loss - rg.loss) / rg.loss;
			relb = fabs(rr.loss - rb.loss) / rb.loss;
			printf("   K %5u %-7s loss %.6e  recursion %7.4f ms  dense GTH %8.3f ms (%6.0fx)  band %7.3f ms (%4.0fx)  rel. diff %.1e, %.1e\n",
			       ks[k], rule ? "strict" : "partial", rr.loss, a, g,
			       g / a, bd, bd / a, rel, relb);
			if (n || rel > 1e-10 || relb > 1e-10)
				fail = 1;
		}
	}
	return fail;
}

/* ---------------------------------------- tagged chains: shared setup -- */

static const struct tagged_rates table2 = { 4600.0, 1010.0, 41600.0 };

struct chain_case {
	uint32_t cpus, cpu_bound, io_bound;
};

/* The seed net on one CPU, else the SMP net balancing at 1000/s. */
static int chain_model(const struct chain_case *c, struct tagged_model *m)
{
	struct tagged_smp_params p = {
		.ncpus = c->cpus, .cpu_bound = c->cpu_bound,
		.io_bound = c->io_bound, .rates = table2,
		.migrate_per_s = 1000.0,
	};

	if (c->cpus <= 1)
		return tagged_seed_init(m, c->cpu_bound, c->io_bound, &table2);
	return tagged_smp_init(m, &p);
}

struct solve_times {
	double steady_ms, absorb_ms, mean_s;
	struct ctmc_stat steady, absorb;
};

/*
 * Medians over @reps of the two numerical solves of an analysed chain with
 * @o: the background's steady state (into @pi) and the absorption.
 */
static int time_solves(const struct tagged_chain *ch, const struct ctmc_opts *o,
		       int reps, double *pi, struct solve_times *t)
{
	double ts[REPS], ta[REPS];

	if (reps > REPS)
		reps = REPS;
	for (int i = 0; i < reps; i++) {
		uint64_t t0 = rxb_mono_ns();

		if (ctmc_steady_state(&ch->bg.chain, o, pi, &t->steady))
			return -1;
		ts[i] = ms_since(t0);
		t0 = rxb_mono_ns();
		if (ctmc_absorb_mean(&ch->tag.chain, ch->alpha, o, &t->mean_s,
				     NULL, &t->absorb))
			return -1;
		ta[i] = ms_since(t0);
	}
	t->steady_ms = median(ts, reps);
	t->absorb_ms = median(ta, reps);
	return 0;
}

/* ------------------------------- 3. one-CPU chains: band vs Gauss-Seidel -- */

/* Largest relative difference of @a and @b where @b is a normal number. */
static double max_rel_diff(const double *a, const double *b, uint32_t n)
{
	double m = 0.0;

	for (uint32_t i = 0; i < n; i++)
		if (b[i] >= DBL_MIN && fabs(a[i] - b[i]) / b[i] > m)
			m = fabs(a[i] - b[i]) / b[i];
	return m;
}

static int bench_direct(void)
{
	static const struct chain_case cases[] = {
		{ 1, 2, 400 }, { 1, 2, 1000 }, { 1, 2, 2000 }, { 1, 2, 4095 },
		{ 1, 4095, 4095 },
	};
	struct ctmc_opts gs;
	int fail = 0;

	ctmc_opts_default(&gs);
	gs.method = CTMC_METHOD_SOR;
	printf("\n3. one-CPU tagged-customer chains: steady state + absorption by the band reduction\n"
	       "   (the automatic choice) vs Gauss-Seidel on the same chains\n");
	for (size_t c = 0; c < RXB_ARRAY_SIZE(cases); c++) {
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;
		struct solve_times tb, tg;
		double *pb = NULL, *pg = NULL, rel, relpi;
		int err;

		if (chain_model(&cases[c], &m))
			return 1;
		err = tagged_analyze(&m, NULL, &ch, &res);
		if (!err) {
			pb = malloc(ch.bg.nstates * sizeof(*pb));
			pg = malloc(ch.bg.nstates * sizeof(*pg));
			err = !pb || !pg;
		}
		if (!err)
			err = time_solves(&ch, NULL, REPS, pb, &tb);
		if (!err)
			err = time_solves(&ch, &gs, ch.bg.nstates > 2000 ? 1 : 3, pg, &tg);
		if (err) {
			printf("   #C %u #I %u: FAILED\n", cases[c].cpu_bound,
			       cases[c].io_bound);
			fail = 1;
		} else {
			rel = fabs(tb.mean_s - tg.mean_s) / tb.mean_s;
			relpi = max_rel_diff(pg, pb, ch.bg.nstates);
			printf("   #C %4u #I %4u, %4u + %4u states: %s %.3f + %.3f ms | Gauss-Seidel %8.1f ms (%5u sweeps) + %7.1f ms (%5u) -> %6.0fx;\n"
			       "                     E[R] %.12e s, rel. diff %.1e; pi rel. diff <= %.1e\n",
			       cases[c].cpu_bound, cases[c].io_bound,
			       ch.bg.nstates, ch.tag.nstates,
			       ctmc_method_name(tb.steady.method), tb.steady_ms,
			       tb.absorb_ms, tg.steady_ms, tg.steady.iterations,
			       tg.absorb_ms, tg.absorb.iterations,
			       (tg.steady_ms + tg.absorb_ms) /
			       (tb.steady_ms + tb.absorb_ms), tb.mean_s, rel, relpi);
			if (tb.steady.method != CTMC_METHOD_BAND ||
			    tb.absorb.method != CTMC_METHOD_BAND || rel > 1e-10)
				fail = 1;
			tagged_chain_finish(&ch);
		}
		free(pb);
		free(pg);
		tagged_model_finish(&m);
	}
	return fail;
}

/* ------------------------------------------------------ 4. quantiles -- */

/* The reference F(t): a whole-chain uniformization pass per evaluation. */
struct ref_cdf {
	const struct tagged_chain *ch;
	double *pt;
	uint32_t evaluations;
};

static int ref_cdf_at(void *ctx, double t_s, double *f)
{
	struct ref_cdf *r = ctx;
	struct ctmc_stat st;
	int err = ctmc_transient(&r->ch->tag.chain, r->ch->alpha, t_s,
				 TAGGED_QUANTILE_EPS, r->pt, &st);

	r->evaluations++;
	if (!err)
		*f = r->pt[r->ch->absorbed];
	return err;
}

static int bench_quantiles(void)
{
	static const struct chain_case cases[] = {
		{ 1, 2, 1000 }, { 1, 4095, 4095 }, { 3, 4, 6 },
	};
	static const double ps[3] = { 0.5, 0.9, 0.99 };
	int fail = 0;

	printf("\n4. response-time quantiles p50, p90, p99: one uniformization pass on the reduced chain\n"
	       "   vs a whole-chain pass per evaluation of F (the same bisection, F within 1e-12)\n");
	for (size_t c = 0; c < RXB_ARRAY_SIZE(cases); c++) {
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;
		struct ref_cdf ref = { 0 };
		double tq[3], tr[3], fast, slow, rel = 0.0;
		uint64_t t0;
		int err;

		if (chain_model(&cases[c], &m))
			return 1;
		err = tagged_analyze(&m, NULL, &ch, &res);
		if (err) {
			tagged_model_finish(&m);
			return 1;
		}
		t0 = rxb_mono_ns();
		err = tagged_quantiles(&ch, ps, 3, res.mean_response_s, tq);
		fast = ms_since(t0);
		ref.ch = &ch;
		ref.pt = malloc(ch.tag.nstates * sizeof(*ref.pt));
		t0 = rxb_mono_ns();
		for (int j = 0; !err && j < 3; j++)
			err = ref.pt ? tagged_quantile_search(ref_cdf_at, &ref, ps[j],
							      res.mean_response_s, &tr[j])
				     : -1;
		slow = ms_since(t0);
		for (int j = 0; !err && j < 3; j++)
			rel = fmax(rel, fabs(tq[j] - tr[j]) / tr[j]);
		if (err) {
			printf("   P %u #C %u #I %u: FAILED\n", cases[c].cpus,
			       cases[c].cpu_bound, cases[c].io_bound);
			fail = 1;
		} else {
			printf("   P %u #C %4u #I %4u, %6u states: %7.2f ms vs %8.1f ms (%u passes) -> %5.0fx;\n"
			       "                     %.6g, %.6g, %.6g us, rel. diff %.1e\n",
			       cases[c].cpus, cases[c].cpu_bound, cases[c].io_bound,
			       ch.tag.nstates, fast, slow, ref.evaluations,
			       slow / fast, tq[0] * 1e6, tq[1] * 1e6, tq[2] * 1e6,
			       rel);
			if (rel > 1e-9)
				fail = 1;
		}
		free(ref.pt);
		tagged_chain_finish(&ch);
		tagged_model_finish(&m);
	}
	return fail;
}

/* ----------------------------------------- --time-chain, for Storm -- */

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long u = strtoul(s, &end, 10);

	if (!*s || *end || u > 4096)
		return -1;
	*v = (uint32_t)u;
	return 0;
}

static int time_chain(char **argv)
{
	struct chain_case c;
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result res;
	struct solve_times t;
	double analyze_ms, *pi;
	uint64_t t0;
	int err;

	if (parse_u32(argv[0], &c.cpus) || parse_u32(argv[1], &c.cpu_bound) ||
	    parse_u32(argv[2], &c.io_bound) || c.cpus < 1) {
		fprintf(stderr, "bench_solver --time-chain P C I: bad numbers\n");
		return 2;
	}
	if (chain_model(&c, &m))
		return 1;
	t0 = rxb_mono_ns();
	err = tagged_analyze(&m, NULL, &ch, &res);
	analyze_ms = ms_since(t0);
	if (err) {
		tagged_model_finish(&m);
		return 1;
	}
	pi = malloc(ch.bg.nstates * sizeof(*pi));
	err = pi ? time_solves(&ch, NULL, ch.tag.nstates > 20000 ? 3 : REPS, pi, &t)
		 : -1;
	if (!err)
		printf("{\"cpus\": %u, \"cpu_bound\": %u, \"io_bound\": %u, "
		       "\"bg_states\": %u, \"tag_states\": %u, \"tag_transitions\": %u, "
		       "\"mean_s\": %.17g, \"analyze_ms\": %.4f, "
		       "\"steady_ms\": %.4f, \"steady_method\": \"%s\", "
		       "\"absorb_ms\": %.4f, \"absorb_method\": \"%s\"}\n",
		       c.cpus, c.cpu_bound, c.io_bound, ch.bg.nstates,
		       ch.tag.nstates, ch.tag.chain.nnz, t.mean_s, analyze_ms,
		       t.steady_ms, ctmc_method_name(t.steady.method), t.absorb_ms,
		       ctmc_method_name(t.absorb.method));
	free(pi);
	tagged_chain_finish(&ch);
	tagged_model_finish(&m);
	return err ? 1 : 0;
}

/* ----------------------------------------------------- 5. the SMP net -- */

/* One sparse y = x Q sweep over the chain: the unit the solves are counted in. */
static double spmv_ms(const struct ctmc *q)
{
	double *x = malloc(q->n * sizeof(*x)), *y = calloc(q->n, sizeof(*y));
	double t[REPS];

	for (uint32_t i = 0; i < q->n; i++)
		x[i] = 1.0 / q->n;
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = rxb_mono_ns();

		for (uint32_t i = 0; i < q->n; i++)
			for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++)
				y[q->col[e]] += x[i] * q->rate[e];
		t[r] = ms_since(t0);
	}
	free(x);
	free(y);
	return median(t, REPS);
}

static int bench_smp(void)
{
	static const struct chain_case cases[] = { { 4, 7, 10 }, { 4, 8, 12 } };
	int fail = 0;

	printf("\n5. SMP tagged-customer net (P CPUs, load balancing, receiver pinned to CPU 0)\n");
	for (size_t c = 0; c < RXB_ARRAY_SIZE(cases); c++) {
		const struct chain_case *p = &cases[c];
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;
		struct srn_space bg;
		struct ctmc_stat st;
		double t_explore, t_steady, t_total, sweep, *pi;
		uint64_t t0;
		struct rusage ru;

		if (chain_model(p, &m))
			return 1;
		/* The background chain alone, to split the time. */
		t0 = rxb_mono_ns();
		if (srn_explore(&m.net, m.ctx, m.bg_initial, 1, NULL, &bg))
			return 1;
		t_explore = ms_since(t0);
		pi = malloc(bg.nstates * sizeof(*pi));
		t0 = rxb_mono_ns();
		if (ctmc_steady_state(&bg.chain, NULL, pi, &st))
			fail = 1;
		t_steady = ms_since(t0);
		sweep = spmv_ms(&bg.chain);
		free(pi);
		srn_space_finish(&bg);

		/* The whole analysis: both chains, steady state and absorption. */
		t0 = rxb_mono_ns();
		if (tagged_analyze(&m, NULL, &ch, &res)) {
			tagged_model_finish(&m);
			return 1;
		}
		t_total = ms_since(t0);
		getrusage(RUSAGE_SELF, &ru);
		printf("   P %u, #C %u, #I %u: background %u states / %u transitions, tagged %u states / %u transitions\n"
		       "      background: explore %.0f ms, steady state (%s, %u sweeps, residual %.1e) %.0f ms = %.0f matrix-vector sweeps\n"
		       "      whole analysis (explore both, steady state, absorption by %s in %u sweeps): %.0f ms, %s 1 s\n"
		       "      E[R] %.3f us; memory held %.1f MiB (%.0f B/state), peak RSS %.0f MiB\n",
		       p->cpus, p->cpu_bound, p->io_bound, res.bg_states,
		       ch.bg.chain.nnz, res.tag_states, res.tag_transitions,
		       t_explore, ctmc_method_name(st.method), st.iterations,
		       st.residual, t_steady, t_steady / sweep,
		       ctmc_method_name(res.absorb.method), res.absorb.iterations,
		       t_total, t_total < 1000.0 ? "under" : "over",
		       res.mean_response_s * 1e6,
		       tagged_chain_bytes(&ch) / 1048576.0,
		       (double)tagged_chain_bytes(&ch) / (res.bg_states + res.tag_states),
		       ru.ru_maxrss / 1024.0);
		tagged_chain_finish(&ch);
		tagged_model_finish(&m);
	}
	return fail;
}

int main(int argc, char **argv)
{
	int fail = 0;

	pin_to_one_cpu();
	if (argc == 5 && !strcmp(argv[1], "--time-chain"))
		return time_chain(argv + 2);
	if (argc != 1) {
		fprintf(stderr, "usage: bench_solver [--time-chain P C I]\n");
		return 2;
	}
	fail |= bench_bottleneck();
	fail |= bench_uncertain();
	fail |= bench_windows();
	fail |= bench_recursion_vs_ctmc();
	fail |= bench_direct();
	fail |= bench_quantiles();
	fail |= bench_smp();
	printf("\nbench_solver: %s\n", fail ? "FAILED" : "ok");
	return fail;
}
