// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The burst round model (bulkq_burst(), rbudp_time_burst(), bneck with
 * BNECK_ROUNDS_BURST) against independent truths:
 *  - closed forms: M/M/1/K's absorbed count c = sum (pi_K / pi_m) P(Q <= m)
 *    P(Q >= m) in long double (K (K + 5) / (6 (K + 1)) at lambda = mu), the
 *    fluid limit n (1 - C / lambda) - K, Banerjee et al.'s eq. (3) when c = 0,
 *    one round when l = 0;
 *  - the exact transient: E[lost among the first n arrivals] from an empty
 *    queue by the embedded chain at arrival epochs, O(n K);
 *  - a seeded Monte Carlo simulation of bursts (Poisson and deterministic
 *    arrivals, single and batch service) and of whole RBUDP transfers.
 * bneck's use of it, and loss in episodes: test_solver_rounds_bneck.c.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "solver/bulkq.h"
#include "solver/rbudp.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/unit_main.h"
#include "tests/unit/test_rng.h"

static int burst(const struct bulkq_params *p, struct bulkq_burst_result *r)
{
	double *w = calloc(BULKQ_BURST_WORK(p->queue_pkts), sizeof(*w));
	int err;

	assert_non_null(w);
	err = bulkq_burst(p, w, r);
	free(w);
	return err;
}

/* M/M/1/K: c, E[Q] and l in long double from pi_m proportional to rho^m. */
static void mm1k_closed(double rho, uint32_t K, long double *c, long double *eq,
			long double *l)
{
	long double *pi = calloc(K + 1, sizeof(*pi)), z = 0, below = 0;

	assert_non_null(pi);
	for (uint32_t m = 0; m <= K; m++)
		z += pi[m] = powl(rho, m);
	for (uint32_t m = 0; m <= K; m++)
		pi[m] /= z;
	*c = 0;
	*eq = 0;
	for (uint32_t m = 0; m < K; m++) {
		below += pi[m];
		*c += pi[K] / pi[m] * below * (1 - below + pi[m]);
		*eq += 1 - below;
	}
	*l = pi[K];
	free(pi);
}

static void test_closed_forms(void **state)
{
	const double rhos[] = { 0.5, 0.9, 1.0, 1.5, 3.0 };
	const uint32_t ks[] = { 1, 5, 50, 500 };

	(void)state;
	for (size_t i = 0; i < sizeof(rhos) / sizeof(rhos[0]); i++) {
		for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
			struct bulkq_params p = {
				.arrival_per_s = rhos[i] * 1000.0, .service_per_s = 1000.0,
				.queue_pkts = ks[j], .batch_pkts = 1, .rule = RXB_BATCH_PARTIAL,
			};
			struct bulkq_burst_result r;
			long double c, eq, l;

			assert_int_equal(burst(&p, &r), 0);
			mm1k_closed(rhos[i], ks[j], &c, &eq, &l);
			check_abs(r.absorb_pkts, (double)c, 1e-10 * (1 + (double)c), "c");
			check_abs(r.mean_queue_pkts, (double)eq, 1e-10 * (1 + (double)eq), "E[Q]");
			check_abs(r.loss, (double)l, 1e-12 * (double)l, "l");
			assert_true(r.absorb_pkts <= r.mean_queue_pkts + 1 - r.loss + 1e-9);
			assert_true(r.max_extra_loss <= 1.0 + 1e-12);
		}
	}
	/* lambda = mu: c = K (K + 5) / (6 (K + 1)), about a third of E[Q] = K / 2. */
	for (uint32_t K = 1; K <= 4096; K *= 4) {
		struct bulkq_params p = {
			.arrival_per_s = 5.0, .service_per_s = 5.0, .queue_pkts = K,
			.batch_pkts = 1, .rule = RXB_BATCH_PARTIAL,
		};
		struct bulkq_burst_result r;

		assert_int_equal(burst(&p, &r), 0);
		check_abs(r.absorb_pkts, K * (K + 5.0) / (6.0 * (K + 1.0)), 1e-9 * K, "c at rho 1");
		check_abs(r.mean_queue_pkts, K / 2.0, 1e-9 * K, "E[Q] at rho 1");
	}
	/* Light load: c underflows with l; large K is fine. */
	{
		struct bulkq_params p = {
			.arrival_per_s = 1.0, .service_per_s = 3.0, .queue_pkts = 65536,
			.batch_pkts = 64, .rule = RXB_BATCH_STRICT,
		};
		struct bulkq_burst_result r;

		assert_int_equal(burst(&p, &r), 0);
		assert_true(r.absorb_pkts == 0.0 && r.loss == 0.0);
		assert_true(r.mean_queue_pkts > 0.0 && r.mean_queue_pkts < 64.0);
	}
}

/*
 * A deep buffer above capacity, where bulkq_burst() computes only the top
 * of the queue and adds the settled g_m of the rest in one step:
 *  - M/M/1/K at K = 65536, rho 1.05 and 1.1 against the closed form in
 *    long double over all K states;
 *  - M/M[N]/1/K (N = 6, both rules): deepening the buffer by D states
 *    leaves l unchanged and adds D l / (1 - r N) to c, the fixed point of
 *    g_m = l + r (g_{m-1} + ... + g_{m-N}) where P(Q >= m) = 1. With
 *    l = 1 - r N on a deep buffer that is D: D more places absorb D more
 *    packets of a burst;
 *  - the same queue near capacity (lambda = 1.02 mu N), where the top
 *    reaches far down, against the same identity.
 */
static void test_deep_overload(void **state)
{
	const double rhos[] = { 1.05, 1.1 };	/* 1.1^65536 ~ 1e2712 fits a long double */
	const struct { double load; enum rxb_batch_rule rule; } qs[] = {
		{ 2.0, RXB_BATCH_PARTIAL }, { 2.0, RXB_BATCH_STRICT },
		{ 1.02, RXB_BATCH_PARTIAL }, { 1.02, RXB_BATCH_STRICT },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rhos) / sizeof(rhos[0]); i++) {
		struct bulkq_params p = {
			.arrival_per_s = rhos[i] * 1000.0, .service_per_s = 1000.0,
			.queue_pkts = 65536, .batch_pkts = 1, .rule = RXB_BATCH_PARTIAL,
		};
		struct bulkq_burst_result r;
		long double c, eq, l;

		assert_int_equal(burst(&p, &r), 0);
		mm1k_closed(rhos[i], p.queue_pkts, &c, &eq, &l);
		check_abs(r.absorb_pkts, (double)c, 1e-10 * (double)c, "deep c");
		check_abs(r.mean_queue_pkts, (double)eq, 1e-10 * (double)eq, "deep E[Q]");
		check_abs(r.loss, (double)l, 1e-12 * (double)l, "deep l");
	}
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		const uint32_t N = 6, K = 65536, D = 4096;
		struct bulkq_params p = {
			.arrival_per_s = qs[i].load * 1000.0 * N, .service_per_s = 1000.0,
			.queue_pkts = K, .batch_pkts = N, .rule = qs[i].rule,
		};
		struct bulkq_burst_result a, b;
		double rN = 1.0 / qs[i].load, gstar;	/* mu N / lambda */

		assert_int_equal(burst(&p, &a), 0);
		p.queue_pkts = K + D;
		assert_int_equal(burst(&p, &b), 0);
		gstar = a.loss / (1.0 - rN);
		check_abs(b.loss, a.loss, 1e-12 * a.loss, "l independent of K");
		check_abs(b.absorb_pkts - a.absorb_pkts, D * gstar, 1e-9 * a.absorb_pkts,
			  "c grows by D l / (1 - r N)");
		check_abs(b.mean_queue_pkts - a.mean_queue_pkts, D, 1e-9 * a.mean_queue_pkts,
			  "E[Q] grows by D");
		fprintf(stderr, "  N %u %s load %.2f: l %.6g, c(K) %.6g, c(K + %u) - c(K) %.6g "
			"against D l / (1 - r N) %.6g\n", N,
			qs[i].rule == RXB_BATCH_STRICT ? "strict" : "partial", qs[i].load,
			a.loss, a.absorb_pkts, D, b.absorb_pkts - a.absorb_pkts, D * gstar);
	}
}

/*
 * Exact E[lost among the first n arrivals] from an empty queue: the queue
 * length just before each arrival; between arrivals (Poisson, or @det_gap_s
 * > 0 for deterministic spacing) services fire at rate mu while they can.
 */
static double exact_lost(const struct bulkq_params *p, uint32_t n, double det_gap_s)
{
	uint32_t K = p->queue_pkts, N = p->batch_pkts;
	double *x = calloc(K + 2, sizeof(*x)), *y = calloc(K + 2, sizeof(*y));
	double lost = 0.0, q = p->service_per_s / (p->arrival_per_s + p->service_per_s);
	double *pois = NULL;

	assert_true(x && y);
	if (det_gap_s > 0.0) {
		/* Services in a gap of fixed length: Poisson(mu gap) while allowed. */
		double m = p->service_per_s * det_gap_s;

		pois = calloc(K + 2, sizeof(*pois));
		assert_non_null(pois);
		pois[0] = exp(-m);
		for (uint32_t k = 1; k <= K + 1; k++)
			pois[k] = pois[k - 1] * m / k;
	}
	x[0] = 1.0;
	for (uint32_t a = 0; a < n; a++) {
		lost += x[K];
		/* The arrival: one more unless full. */
		for (uint32_t m = K; m-- > 0;) {
			x[m + 1] += x[m];
			x[m] = 0.0;
		}
		memset(y, 0, (K + 2) * sizeof(*y));
		for (uint32_t m = K + 1; m-- > 0;) {
			if (!x[m])
				continue;
			if (!pois) {
				/* Next event: a service w.p. q if it can fire. */
				bool can = p->rule == RXB_BATCH_STRICT ? m >= N : m >= 1;

				if (can) {
					uint32_t d = m < N ? m : N;

					x[m - d] += q * x[m];
					y[m] += (1 - q) * x[m];
				} else {
					y[m] += x[m];
				}
			} else {
				/* k services in the gap while they can fire. */
				double left = x[m];
				uint32_t cur = m;

				for (uint32_t k = 0;; k++) {
					bool can = p->rule == RXB_BATCH_STRICT ? cur >= N : cur >= 1;

					if (!can) {
						y[cur] += left;
						break;
					}
					y[cur] += x[m] * pois[k];
					left -= x[m] * pois[k];
					cur -= cur < N ? cur : N;
					if (k + 1 > K + 1) {
						y[cur] += left;
						break;
					}
				}
			}
		}
		/* Fold the over-full state (a blocked arrival) back to K. */
		y[K] += y[K + 1];
		y[K + 1] = 0.0;
		memcpy(x, y, (K + 2) * sizeof(*x));
	}
	free(x);
	free(y);
	free(pois);
	return lost;
}

static void test_exact_transient(void **state)
{
	const struct bulkq_params ps[] = {
		{ 1000.0, 1000.0, 20, 1, RXB_BATCH_PARTIAL },	/* rho 1 */
		{ 2000.0, 1000.0, 30, 1, RXB_BATCH_PARTIAL },	/* rho 2 */
		{ 800.0, 1000.0, 8, 1, RXB_BATCH_PARTIAL },	/* rho 0.8 */
		{ 6000.0, 1000.0, 24, 4, RXB_BATCH_PARTIAL },	/* lambda = 1.5 mu N */
		{ 4400.0, 1000.0, 24, 4, RXB_BATCH_STRICT },	/* lambda = 1.1 mu N */
		/* Far above capacity on a deeper queue: bulkq_burst() computes
		 * only the top of it and the settled g_m in one step. */
		{ 40000.0, 1000.0, 300, 4, RXB_BATCH_PARTIAL },	/* lambda = 10 mu N */
		{ 40000.0, 1000.0, 300, 4, RXB_BATCH_STRICT },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct bulkq_burst_result r;
		uint32_t n = 20000;
		double ex;

		assert_int_equal(burst(&ps[i], &r), 0);
		ex = exact_lost(&ps[i], n, 0.0);
		/* The asymptote n l - c is reached to 1e-6 packets. */
		check_abs(ex, n * r.loss - r.absorb_pkts, 1e-6 * (1 + ex), "exact transient");
		fprintf(stderr, "  K %u N %u rho %.2f: exact %.4f  n l - c %.4f  n l - E[Q] %.4f\n",
			ps[i].queue_pkts, ps[i].batch_pkts,
			ps[i].arrival_per_s / (ps[i].service_per_s * ps[i].batch_pkts), ex,
			n * r.loss - r.absorb_pkts, n * r.loss - r.mean_queue_pkts);
	}
}

/* ------------------------------------------------------- Monte Carlo -- */

static uint64_t rng_state;

static double uniform(void)
{
	return test_uniform_open(&rng_state);
}

static double expo(double rate)
{
	return -log(uniform()) / rate;
}

/* One burst of n arrivals into an empty queue: the number lost. */
static uint32_t sim_burst(const struct bulkq_params *p, uint32_t n, bool det)
{
	uint32_t q = 0, lost = 0, N = p->batch_pkts;

	for (uint32_t a = 0; a < n; a++) {
		double gap = det ? 1.0 / p->arrival_per_s : expo(p->arrival_per_s);

		if (q == p->queue_pkts)
			lost++;
		else
			q++;
		/* Services in the gap (memoryless: restart each gap). */
		for (;;) {
			bool can = p->rule == RXB_BATCH_STRICT ? q >= N : q >= 1;
			double s;

			if (!can)
				break;
			s = expo(p->service_per_s);
			if (s >= gap)
				break;
			gap -= s;
			q -= q < N ? q : N;
		}
	}
	return lost;
}

struct mc_point {
	struct bulkq_params p;
	uint32_t n, reps;
	bool det;
	double model_tol;	/* what the model may differ by besides noise */
};

static void test_monte_carlo_bursts(void **state)
{
	const struct mc_point pts[] = {
		{ { 1000.0, 1000.0, 20, 1, RXB_BATCH_PARTIAL }, 10000, 300, false, 0.5 },
		{ { 2000.0, 1000.0, 100, 1, RXB_BATCH_PARTIAL }, 5000, 200, false, 0.5 },
		{ { 1250.0, 1000.0, 200, 1, RXB_BATCH_PARTIAL }, 10000, 200, false, 0.5 },
		{ { 6000.0, 1000.0, 60, 4, RXB_BATCH_PARTIAL }, 6000, 200, false, 0.5 },
		{ { 4800.0, 1000.0, 40, 4, RXB_BATCH_STRICT }, 8000, 200, false, 0.5 },
		/*
		 * Deterministic arrivals (the RBUDP pacer) in overload: the model
		 * assumes Poisson ones; with lambda = 2 mu the queue stays near
		 * full and both lose n - served - Q_end, which differ by O(1).
		 */
		{ { 2000.0, 1000.0, 100, 1, RXB_BATCH_PARTIAL }, 5000, 200, true, 3.0 },
	};

	(void)state;
	rng_state = 0x9E3779B97F4A7C15ULL;
	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		const struct mc_point *t = &pts[i];
		struct bulkq_burst_result r;
		double sum = 0.0, sum2 = 0.0, mean, se, model;

		assert_int_equal(burst(&t->p, &r), 0);
		for (uint32_t k = 0; k < t->reps; k++) {
			double v = sim_burst(&t->p, t->n, t->det);

			sum += v;
			sum2 += v * v;
		}
		mean = sum / t->reps;
		se = sqrt((sum2 / t->reps - mean * mean) / (t->reps - 1));
		model = t->n * r.loss - r.absorb_pkts;
		fprintf(stderr, "  MC K %u N %u rho %.2f n %u %s: sim %.2f +- %.2f (SE)  model n l - c %.2f"
			"  (n l - E[Q] %.2f, fluid %.2f)\n",
			t->p.queue_pkts, t->p.batch_pkts,
			t->p.arrival_per_s / (t->p.service_per_s * t->p.batch_pkts), t->n,
			t->det ? "det" : "poisson", mean, se, model,
			t->n * r.loss - r.mean_queue_pkts,
			t->n * (1 - t->p.service_per_s * t->p.batch_pkts / t->p.arrival_per_s) -
			t->p.queue_pkts);
		if (t->det) {
			/* The simulator against the exact transient of the same queue. */
			double ex = exact_lost(&t->p, t->n, 1.0 / t->p.arrival_per_s);

			fprintf(stderr, "    exact (deterministic arrivals) %.2f\n", ex);
			check_abs(mean, ex, 4.0 * se, "MC vs exact, deterministic");
		}
		/* 4 standard errors: a false failure once in ~16000 runs per point. */
		check_abs(mean, model, 4.0 * se + t->model_tol, "MC lost per burst");
	}
}

/* A whole transfer: rounds until a round loses nothing. */
static void test_monte_carlo_rounds(void **state)
{
	const struct {
		struct bulkq_params p;
		double n0;
		uint32_t reps;
	} pts[] = {
		/* Absorbed: 3 resend rounds and the 4th burst fits in K. */
		{ { 2000.0, 1000.0, 100, 1, RXB_BATCH_PARTIAL }, 2000, 200 },
		{ { 6000.0, 1000.0, 60, 4, RXB_BATCH_PARTIAL }, 3000, 200 },
		/* K = 1: nearly geometric (Banerjee et al.'s regime). */
		{ { 1000.0, 1000.0, 1, 1, RXB_BATCH_PARTIAL }, 1000, 1000 },
	};

	(void)state;
	rng_state = 0xD1B54A32D192ED03ULL;
	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		struct bulkq_burst_result r;
		struct rbudp_stage st;
		struct rbudp_time t;
		struct rbudp_params rp = {
			.file_bytes = pts[i].n0 * 1000.0, .payload_bytes = 1000.0,
			.one_way_delay_s = 0.01,
		};
		double sum = 0.0, sum2 = 0.0, mean, se, l1 = 0.0;

		assert_int_equal(burst(&pts[i].p, &r), 0);
		st.loss = r.loss;
		st.pass = 1.0 - r.loss;
		st.absorb_pkts = r.absorb_pkts;
		assert_int_equal(rbudp_time_burst(&rp, 1e6, &st, 1, &t), 0);
		for (uint32_t k = 0; k < pts[i].reps; k++) {
			uint32_t n = (uint32_t)pts[i].n0, rounds = 0;

			while ((n = sim_burst(&pts[i].p, n, false)) > 0)
				rounds++;
			sum += rounds;
			sum2 += (double)rounds * rounds;
		}
		mean = sum / pts[i].reps;
		se = sqrt((sum2 / pts[i].reps - mean * mean) / (pts[i].reps - 1));
		l1 = rbudp_round_lost(&st, 1, pts[i].n0);
		fprintf(stderr, "  MC rounds K %u N %u n0 %.0f: sim %.3f +- %.3f resends, model N_resend %.3f"
			" (rounds >= 1 pkt: %.0f), first round lost %.1f\n",
			pts[i].p.queue_pkts, pts[i].p.batch_pkts, pts[i].n0, mean, se,
			t.n_resend, t.resend_rounds, l1);
		/*
		 * The model counts expected packets per round (mean field): the
		 * round count is good to one round plus the noise.
		 */
		check_abs(mean, t.n_resend, 1.0 + 4.0 * se, "MC resend rounds");
	}
}

/* ------------------------------------------------------------ limits -- */

static void test_limits(void **state)
{
	const struct rbudp_params rp = {
		.file_bytes = 200e6, .payload_bytes = 1472.0, .one_way_delay_s = 0.01,
	};
	const double ls[] = { 1e-9, 1e-3, 0.05, 0.3, 0.5, 0.8, 0.95 };
	struct rbudp_time seed, b;
	double n0 = rp.file_bytes / rp.payload_bytes;

	(void)state;
	/* c = 0: Banerjee et al.'s geometric rounds. */
	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		struct rbudp_stage st = { ls[i], 1.0 - ls[i], 0.0, 0.0 };
		double tail = 0.0;

		assert_int_equal(rbudp_time(&rp, 5e8, log(ls[i]), &seed), 0);
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
		assert_true(b.resend_rounds == floor(seed.n_resend));
		/* Plus the expected rounds of the last sub-packet counts. */
		for (double x = n0 * pow(ls[i], b.resend_rounds + 1); x > 1e-18; x *= ls[i])
			tail += x;
		check_abs(b.n_resend, b.resend_rounds + tail, 1e-9 * (1 + b.n_resend), "c=0 rounds");
		/* All rounds: n0 l / (1 - l); Banerjee et al. sum the first ceil(N). */
		check_abs(b.resend_pkts, n0 * ls[i] / (1 - ls[i]), 1e-9 * b.resend_pkts,
			  "c=0 resent packets");
		assert_true(b.resend_pkts >= seed.resend_pkts * (1 - 1e-12));
	}
	/* l = 0: one round. */
	{
		struct rbudp_stage st = { 0.0, 1.0, 5.0, 0.0 };

		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
		assert_true(b.n_resend == 0.0 && b.resend_rounds == 0.0 && b.resend_pkts == 0.0);
		check_abs(b.time_s, 0.01 + 0.4 + (200e6 / (8 * 1472.0 * 5e8) + 0.01), 1e-15, "l=0");
	}
	/* l = 1: never completes. */
	{
		struct rbudp_stage st = { 1.0, 0.0, 5.0, 0.0 };

		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
		assert_true(isinf(b.time_s));
	}
	/*
	 * Fluid: l = 1 - C / lambda, c = K. K = 3641 and lambda = 2 C as on
	 * the e2e testbed: n_{i+1} = n_i / 2 - 3641.
	 */
	{
		struct rbudp_stage st = { 0.5, 0.5, 3641.0, 0.0 };
		double n = n0, N = 0.0, P = 0.0;

		while ((n = n / 2 - 3641.0) > 0.0) {
			N += n >= 1.0 ? 1.0 : n;
			P += n;
		}
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
		check_abs(b.n_resend, N, 1e-9, "fluid rounds");
		check_abs(b.resend_pkts, P, 1e-6, "fluid packets");
		check_abs(rbudp_round_lost(&st, 1, n0), n0 * 0.5 - 3641.0, 1e-9, "fluid round 1");
	}
	/* The bulk queue's own heavy-load limit: c -> K, l -> 1 - C/lambda. */
	{
		struct bulkq_params p = {
			.arrival_per_s = 3000.0, .service_per_s = 1000.0, .queue_pkts = 10000,
			.batch_pkts = 1, .rule = RXB_BATCH_PARTIAL,
		};
		struct bulkq_burst_result r;
		double n = 1e6;

		assert_int_equal(burst(&p, &r), 0);
		/* Within 1 / (rho - 1) + 1 packets of n (1 - C/lambda) - K. */
		check_abs(n * r.loss - r.absorb_pkts, n * (1 - 1 / 3.0) - 10000.0, 1.5, "fluid bulkq");
		p.batch_pkts = 8;
		p.service_per_s = 125.0;
		assert_int_equal(burst(&p, &r), 0);
		check_abs(n * r.loss - r.absorb_pkts, n * (1 - 1 / 3.0) - 10000.0, 8.0,
			  "fluid bulkq N 8");
	}
	/* Continuity of N_resend in c across the point where a round vanishes. */
	{
		struct rbudp_stage st = { 0.5, 0.5, 0.0, 0.0 };
		double prev = NAN;

		/*
		 * |d n_i / d c| <= 1 / (1 - l) = 2, and from c = 0.5 on at most
		 * one round is below a packet: steps of 0.01 move N by < 0.05.
		 * (Near c = 0 each of the ~log2(1 / c) sub-packet rounds moves:
		 * continuous, but steep.)
		 */
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
		prev = b.n_resend;
		st.absorb_pkts = 1e-9;
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
		check_abs(b.n_resend, prev, 1e-6, "c -> 0");
		prev = NAN;
		for (double c = 0.5; c <= 3000.0; c += 0.01) {
			st.absorb_pkts = c;
			assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), 0);
			if (!isnan(prev))
				assert_true(fabs(b.n_resend - prev) <= 0.05);
			prev = b.n_resend;
		}
	}
	/* Bad stages. */
	{
		struct rbudp_stage st = { 0.5, 0.4, 0.0, 0.0 };

		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), -EINVAL);
		st.pass = 0.5;
		st.absorb_pkts = -1.0;
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &b), -EINVAL);
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 0, &b), -EINVAL);
	}
}

/* Two stages: the map is the composition of the two. */
static void test_two_stage_map(void **state)
{
	const struct rbudp_stage st[2] = { { 0.2, 0.8, 100.0, 0.0 }, { 0.4, 0.6, 300.0, 0.0 } };

	(void)state;
	for (double n = 0.0; n < 5000.0; n += 7.3) {
		double a = fmax(0.0, n * 0.2 - 100.0);
		double b = fmax(0.0, (n - a) * 0.4 - 300.0);

		check_abs(rbudp_round_lost(st, 2, n), a + b, 1e-9, "composition");
	}
}

/*
 * The queues' emptying after every blast, round by round (a second method
 * against the closed form on the map's pieces): a round of n_s into stage
 * s leaves min(n_s l_s, c_s) to drain at D_s. Rounds are followed until
 * less than 1e-13 packets are left.
 */
static double drain_by_rounds(const struct rbudp_stage *st, unsigned ns, double n)
{
	double d = 0.0;

	for (long r = 0; n > 1e-13 && r < 10000000; r++) {
		double in = n, lost = 0.0;

		for (unsigned s = 0; s < ns; s++) {
			double x = in * st[s].loss - st[s].absorb_pkts;

			d += fmin(in * st[s].loss, st[s].absorb_pkts) / st[s].drain_pkts_per_s;
			if (x > 0.0) {
				lost += x;
				in -= x;
			}
		}
		n = lost;
	}
	return d;
}

static void test_drain(void **state)
{
	const struct rbudp_params rp = {
		.file_bytes = 200e6, .payload_bytes = 1472.0, .one_way_delay_s = 0.01,
	};
	const double n0 = rp.file_bytes / rp.payload_bytes;
	struct rbudp_time with, without;

	(void)state;
	/*
	 * Fluid queue at twice its capacity (l = 1/2, c = K = 3641, D = C):
	 * every round that loses ends with K queued, the last one with n l.
	 */
	{
		struct rbudp_stage st = { 0.5, 0.5, 3641.0, 2.12e5 };
		double n = n0, lossy = 0.0, d;

		while (n * 0.5 > 3641.0) {
			lossy++;
			n = n * 0.5 - 3641.0;
		}
		d = (lossy * 3641.0 + n * 0.5) / 2.12e5;
		assert_int_equal(rbudp_time_burst(&rp, 7.5e8, &st, 1, &with), 0);
		check_abs(with.drain_s, d, 1e-12, "fluid drain");
		st.drain_pkts_per_s = 0.0;
		assert_int_equal(rbudp_time_burst(&rp, 7.5e8, &st, 1, &without), 0);
		assert_true(without.drain_s == 0.0);
		check_abs(with.time_s - without.time_s, d, 1e-12, "T gains the drain");
		check_abs(with.n_resend, without.n_resend, 0.0, "rounds unchanged");
	}
	/* Below capacity (l = 0): one round, nothing left queued. */
	{
		struct rbudp_stage st = { 0.0, 1.0, 3641.0, 2.12e5 };

		assert_int_equal(rbudp_time_burst(&rp, 2e8, &st, 1, &with), 0);
		assert_true(with.drain_s == 0.0);
	}
	/*
	 * One stage and two: heavy and light loss, and c of a packet or two,
	 * whose last rounds are below one packet.
	 */
	{
		const struct rbudp_stage cases[][2] = {
			{ { 0.3, 0.7, 500.0, 1e5 }, { 0.0, 1.0, 0.0, 1.0 } },
			{ { 0.05, 0.95, 3641.0, 3e5 }, { 0.0, 1.0, 0.0, 1.0 } },
			{ { 0.4, 0.6, 2.0, 2e5 }, { 0.0, 1.0, 0.0, 1.0 } },
			{ { 0.2, 0.8, 100.0, 1e6 }, { 0.4, 0.6, 300.0, 1e5 } },
			{ { 0.01, 0.99, 1000.0, 1e6 }, { 0.6, 0.4, 3641.0, 2e5 } },
			{ { 0.3, 0.7, 0.5, 1e6 }, { 0.5, 0.5, 1.5, 2e5 } },
		};
		const unsigned ns[] = { 1, 1, 1, 2, 2, 2 };

		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
			double d = drain_by_rounds(cases[i], ns[i], n0);

			assert_int_equal(rbudp_time_burst(&rp, 5e8, cases[i], ns[i], &with), 0);
			fprintf(stderr, "  drain case %zu: closed form %.9g s, by rounds %.9g s\n",
				i, with.drain_s, d);
			check_abs(with.drain_s, d, 1e-9 * d + 1e-15, "drain by rounds");
		}
	}
	/* A bad drain rate. */
	{
		struct rbudp_stage st = { 0.5, 0.5, 10.0, -1.0 };

		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &with), -EINVAL);
		st.drain_pkts_per_s = NAN;
		assert_int_equal(rbudp_time_burst(&rp, 5e8, &st, 1, &with), -EINVAL);
	}
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_closed_forms),
	cmocka_unit_test(test_exact_transient),
	cmocka_unit_test(test_deep_overload),
	cmocka_unit_test(test_monte_carlo_bursts),
	cmocka_unit_test(test_monte_carlo_rounds),
	cmocka_unit_test(test_limits),
	cmocka_unit_test(test_two_stage_map),
	cmocka_unit_test(test_drain),
)
