// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Solver benchmarks. Every time is printed next to a reference measured in
 * the same run on the same data, as a ratio:
 *
 *  1. the per-epoch bottleneck computation with K = 65536 and a 1000-point
 *     sweep (budget 50 ms on one core), against the same sweep with the
 *     plain O(K) recursion (no geometric tail);
 *  1b. the daemon's solve with an uncertain rate (mu_rel_sd, docs/model.md
 *     3.3) against the plain solve of the same inputs, at a 64 MiB socket
 *     buffer's K (budget: 2.5 times the plain solve);
 *  2. the M/M[N]/1/K cut recursion against the general CTMC path (net ->
 *     reachability -> dense GTH) on the same queues;
 *  3. the SMP tagged-customer net at >= 10^5 states: exploration, steady
 *     state and absorption times against one sparse matrix-vector sweep over
 *     the same chain, and the memory held.
 *
 * Run by `make bench` under flock /tmp/rxbneck-heavy.lock. Exit status 1 when
 * the 50 ms budget or the agreement checks fail.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/util.h"
#include "solver/bneck.h"
#include "solver/bulkq.h"
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

/* The reference: T(B) over the same grid with the plain recursion. */
static double reference_sweep(const struct rxb_stage_inputs *s, double mu,
			      const struct bneck_xfer *x, double *best_t)
{
	struct rbudp_params rp = {
		.file_bytes = x->file_bytes, .payload_bytes = x->payload_bytes,
		.one_way_delay_s = x->one_way_delay_s,
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
		struct bulkq_result r;
		struct rbudp_time t;

		if (bulkq_loss_full(&p, &r) || rbudp_time(&rp, rate / 8.0, r.ln_loss, &t))
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
	struct bneck_ws ws;
	int fail = 0;

	printf("1. bottleneck computation, K = 65536, 1000-point sweep + refinement\n");
	if (bneck_ws_init(&ws, 1000))
		return 1;
	for (size_t c = 0; c < RXB_ARRAY_SIZE(cases); c++) {
		struct rxb_stage_inputs s = {
			.cpu_bound = cases[c].cpu_bound, .io_bound = cases[c].io_bound,
			.mu_pio_per_s = 4600.0, .mu_disk_per_s = 1010.0,
			.mu_net_per_s = 41600.0, .queue_pkts = 65536,
			.batch_pkts = cases[c].batch, .rule = cases[c].rule,
		};
		struct bneck_xfer x = {
			.payload_bytes = 1468.0, .file_bytes = 500e6,
			.one_way_delay_s = 0.1, .line_rate_bps = cases[c].line_bps,
			.min_rate_bps = cases[c].line_bps / 100.0, .points = 1000,
		};
		struct bneck_result r;
		double ref, ref_best, fast;

		fast = solve_ms(&ws, &s, &x, &r);
		if (isnan(fast)) {
			printf("   %s: FAILED to solve\n", cases[c].name);
			fail = 1;
			continue;
		}
		ref = reference_sweep(&s, r.stage[0].service_rate_per_s, &x, &ref_best);
		printf("   %s\n"
		       "      %.2f ms per computation (%u T(B) evaluations), budget %.0f ms: %s\n"
		       "      plain O(K) recursion, same grid: %.1f ms -> %.0fx faster\n"
		       "      bottleneck %.1f Mb/s, loss %.3g, T %.4f s (grid minimum by the plain recursion %.4f s)\n",
		       cases[c].name, fast, r.evaluations, BUDGET_MS,
		       fast < BUDGET_MS ? "ok" : "OVER BUDGET", ref, ref / fast,
		       r.rate_bps / 1e6, r.loss, r.time_s, ref_best);
		if (fast >= BUDGET_MS || !(r.time_s <= ref_best * (1 + 1e-9)))
			fail = 1;
	}
	bneck_ws_finish(&ws);
	return fail;
}

/* ------------------------------------------- 1b. an uncertain rate -- */

#define UNCERTAIN_MAX_RATIO	2.5

static int bench_uncertain(void)
{
	/* The e2e's receiver at k = 1 with a 64 MiB buffer (docs/e2e.md §5.15). */
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

/* ------------------------------------ 2. recursion vs general CTMC path -- */

static int bench_recursion_vs_ctmc(void)
{
	static const uint32_t ks[] = { 64, 256, 1024 };
	struct ctmc_opts o;
	int fail = 0;

	ctmc_opts_default(&o);
	o.method = CTMC_METHOD_GTH;
	printf("\n2. M/M[N]/1/K loss: O(K) cut recursion vs general CTMC (net -> reachability -> dense GTH), N = 6, load 0.7\n");
	for (size_t k = 0; k < RXB_ARRAY_SIZE(ks); k++) {
		for (int rule = 0; rule < 2; rule++) {
			struct bulkq_params p = {
				.arrival_per_s = 0.7 * 6 * 12000.0,
				.service_per_s = 12000.0, .queue_pkts = ks[k],
				.batch_pkts = 6, .rule = rule,
			};
			struct bulkq_result rr, rg;
			struct ctmc_stat st;
			double tr[REPS], tg[REPS], a, b, rel;
			int n = 0;

			for (int i = 0; i < REPS; i++) {
				uint64_t t0 = rxb_mono_ns();

				/* Many repetitions: one recursion is sub-microsecond. */
				for (int j = 0; j < 1000; j++)
					n |= bulkq_loss_full(&p, &rr);
				tr[i] = ms_since(t0) / 1000.0;
				t0 = rxb_mono_ns();
				n |= bulkq_loss_ctmc(&p, &o, &rg, &st);
				tg[i] = ms_since(t0);
			}
			a = median(tr, REPS);
			b = median(tg, REPS);
			rel = fabs(rr.loss - rg.loss) / rg.loss;
			printf("   K %5u %-7s loss %.6e  recursion %8.4f ms  general %9.3f ms  ratio %8.0fx  rel. diff %.1e\n",
			       ks[k], rule ? "strict" : "partial", rr.loss, a, b,
			       b / a, rel);
			if (n || rel > 1e-10)
				fail = 1;
		}
	}
	return fail;
}

/* ----------------------------------------------------- 3. the SMP net -- */

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
	static const struct tagged_smp_params cases[] = {
		{ .ncpus = 4, .cpu_bound = 7, .io_bound = 10,
		  .rates = { 4600.0, 1010.0, 41600.0 }, .migrate_per_s = 1000.0 },
		{ .ncpus = 4, .cpu_bound = 8, .io_bound = 12,
		  .rates = { 4600.0, 1010.0, 41600.0 }, .migrate_per_s = 1000.0 },
	};
	int fail = 0;

	printf("\n3. SMP tagged-customer net (P CPUs, load balancing, receiver pinned to CPU 0)\n");
	for (size_t c = 0; c < RXB_ARRAY_SIZE(cases); c++) {
		const struct tagged_smp_params *p = &cases[c];
		struct tagged_model m;
		struct tagged_chain ch;
		struct tagged_result res;
		struct srn_space bg;
		struct ctmc_stat st;
		double t_explore, t_steady, t_total, sweep, *pi;
		uint64_t t0;
		struct rusage ru;

		if (tagged_smp_init(&m, p))
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
		       p->ncpus, p->cpu_bound, p->io_bound, res.bg_states,
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

int main(void)
{
	int fail = 0;

	pin_to_one_cpu();
	fail |= bench_bottleneck();
	fail |= bench_uncertain();
	fail |= bench_recursion_vs_ctmc();
	fail |= bench_smp();
	printf("\nbench_solver: %s\n", fail ? "FAILED" : "ok");
	return fail;
}
