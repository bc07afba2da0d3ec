// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Model-sized buffers: the searches against a scan of every K, the loss
 * computed there by the plain O(K) recursion and the vacation loss in
 * closed form; M/M/1/K and vacation sizes by hand; the time criterion on
 * the bulk queue + RBUDP model (bneck_eval_at()) and on a closed form.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "solver/bneck.h"
#include "solver/bufsize.h"
#include "solver/bulkq.h"
#include "tests/unit/unit_main.h"

/* The stage loss at K by a second method: plain recursion, closed form. */
static double loss_ref(const struct bufsize_stage *s, uint32_t k)
{
	struct bulkq_params p = {
		.arrival_per_s = s->arrival_per_s, .service_per_s = s->service_per_s,
		.queue_pkts = k, .batch_pkts = s->batch_pkts, .rule = s->rule,
	};
	struct bulkq_result r;
	double vac = 0.0;

	assert_int_equal(bulkq_loss_full(&p, &r), 0);
	if (s->vacation_s > 0.0 && s->arrival_per_s > 0.0) {
		vac = (s->vacation_s - k / s->arrival_per_s) / s->vacation_period_s;
		if (vac < 0.0)
			vac = 0.0;
	}
	return r.loss > vac ? r.loss : vac;
}

/* The smallest K in [lo, hi] with loss <= target, by trying every K; 0: none. */
static uint32_t scan_loss(const struct bufsize_stage *s, double target,
			  uint32_t lo, uint32_t hi, int *rises)
{
	double prev = 2.0;
	uint32_t first = 0;

	for (uint32_t k = lo; k <= hi; k++) {
		double l = loss_ref(s, k);

		if (l > prev * (1.0 + 1e-9))
			(*rises)++;
		prev = l;
		if (!first && l <= target)
			first = k;
	}
	return first;
}

static void test_loss_vs_scan(void **state)
{
	const double rhos[] = { 0.3, 0.8, 0.95, 1.0, 1.05 };
	const uint32_t ns[] = { 1, 4, 16 };
	const double targets[] = { 1e-2, 1e-4, 1e-7 };
	const double vac[][2] = { { 0, 0 }, { 0.004, 0.012 } };
	int cases = 0, met = 0, strict_rises = 0;

	(void)state;
	for (size_t a = 0; a < 5; a++)
	for (size_t b = 0; b < 3; b++)
	for (int rule = 0; rule < 2; rule++)
	for (size_t v = 0; v < 2; v++)
	for (size_t t = 0; t < 3; t++) {
		/* lambda 20 000/s: a vacation of 4 ms is 80 packets' worth */
		struct bufsize_stage s = {
			.arrival_per_s = 20000.0,
			.service_per_s = 20000.0 / (rhos[a] * ns[b]),
			.batch_pkts = ns[b], .rule = rule,
			.vacation_s = vac[v][0], .vacation_period_s = vac[v][1],
		};
		const uint32_t kmax = 1500;
		struct bufsize_result r;
		int rises = 0;
		/* a strict server needs N places */
		uint32_t lo = rule == RXB_BATCH_STRICT ? ns[b] : 1;
		uint32_t want = scan_loss(&s, targets[t], lo, kmax, &rises);

		if (rule == RXB_BATCH_PARTIAL)
			assert_int_equal(rises, 0);	/* proven monotone */
		strict_rises += rises;
		assert_int_equal(bufsize_for_loss(&s, targets[t], 1, kmax, &r), 0);
		cases++;
		if (!want) {
			assert_false(r.met);
			assert_int_equal(r.queue_pkts, kmax);
			continue;
		}
		met++;
		if (r.queue_pkts != want || !r.met)
			fprintf(stderr, "rho %g N %u rule %d vac %zu target %g: "
				"search %u scan %u\n", rhos[a], ns[b], rule, v,
				targets[t], r.queue_pkts, want);
		assert_true(r.met);
		assert_int_equal(r.queue_pkts, want);
		assert_true(r.loss <= targets[t]);
		/* O(log K), not a scan */
		assert_true(r.evaluations <= 2 + 2 * 11);
	}
	assert_int_equal(cases, 180);
	/* enough of the cases are met for the comparison to mean something */
	assert_true(met >= 100);
	assert_int_equal(strict_rises, 0);
}

/* M/M/1/K: l = rho^K (1 - rho) / (1 - rho^(K+1)); at rho 0.5 and 1e-3,
 * K = 8 gives 1.96e-3 and K = 9 gives 9.78e-4. */
static void test_mm1k_by_hand(void **state)
{
	struct bufsize_stage s = {
		.arrival_per_s = 500.0, .service_per_s = 1000.0, .batch_pkts = 1,
	};
	struct bufsize_result r;

	(void)state;
	assert_int_equal(bufsize_for_loss(&s, 1e-3, 1, 100000, &r), 0);
	assert_true(r.met);
	assert_int_equal(r.queue_pkts, 9);
	assert_true(fabs(r.loss - 0.5 * pow(0.5, 9) / (1 - pow(0.5, 10))) < 1e-15);
	/* the range's bottom already meets it */
	assert_int_equal(bufsize_for_loss(&s, 1e-3, 20, 100000, &r), 0);
	assert_int_equal(r.queue_pkts, 20);
	/* above capacity no K does: l -> 1 - 1/rho */
	s.arrival_per_s = 2000.0;
	assert_int_equal(bufsize_for_loss(&s, 1e-3, 1, 100000, &r), 0);
	assert_false(r.met);
	assert_int_equal(r.queue_pkts, 100000);
	assert_true(fabs(r.loss_at_max - 0.5) < 1e-12);
}

/*
 * A server that is off 5 ms of every 15 and otherwise far faster than
 * the arrivals: (0.005 - K / 1e5) / 0.015 <= 1e-3 needs K >= 498.5.
 */
static void test_vacation_by_hand(void **state)
{
	struct bufsize_stage s = {
		.arrival_per_s = 1e5, .service_per_s = 1e5, .batch_pkts = 64,
		.vacation_s = 0.005, .vacation_period_s = 0.015,
	};
	struct bufsize_result r;

	(void)state;
	assert_int_equal(bufsize_for_loss(&s, 1e-3, 1, 1u << 20, &r), 0);
	assert_int_equal(r.queue_pkts, 499);
	assert_true(fabs(r.loss - (0.005 - 499e-5) / 0.015) < 1e-12);
	/* target 0: the whole window */
	assert_int_equal(bufsize_for_loss(&s, 0.0, 1, 1u << 20, &r), 0);
	assert_true(r.queue_pkts >= 500);
}

/* A T that falls as 1 + 100 / K: within 1 % of T(10000) = 1.01 from K =
 * 100 / (1.01 x 1.01 - 1) = 4975.12 on, so 4976. */
static int t_closed(void *ctx, uint32_t k, double *t)
{
	(*(int *)ctx)++;
	*t = 1.0 + 100.0 / k;
	return 0;
}

static int t_fail(void *ctx, uint32_t k, double *t)
{
	(void)ctx;
	*t = 1.0;
	return k < 50 ? -EDOM : 0;
}

static void test_time_closed_form(void **state)
{
	struct bufsize_result r;
	int calls = 0;

	(void)state;
	assert_int_equal(bufsize_for_time(t_closed, &calls, 0.01, 1, 10000, &r), 0);
	assert_int_equal(r.queue_pkts, 4976);
	assert_true(r.met);
	assert_int_equal((int)r.evaluations, calls);
	assert_true(calls < 80);
	assert_true(fabs(r.time_ref_s - 1.01) < 1e-12);
	/* the bottom holds: answered at once */
	assert_int_equal(bufsize_for_time(t_closed, &calls, 0.01, 6000, 10000, &r), 0);
	assert_int_equal(r.queue_pkts, 6000);
	/* errors come back */
	assert_int_equal(bufsize_for_time(t_fail, NULL, 0.01, 1, 10000, &r), -EDOM);
	assert_int_equal(bufsize_for_time(t_closed, &calls, -1, 1, 10000, &r), -EINVAL);
	assert_int_equal(bufsize_for_time(t_closed, &calls, 0.01, 10, 5, &r), -EINVAL);
}

/* T(K) of the bulk queue + RBUDP model at one rate. */
struct tctx {
	struct bneck_ws ws;
	struct rxb_stage_inputs st;
	struct bneck_xfer x;
	double rate_bps;
};

static int t_model(void *arg, uint32_t k, double *t)
{
	struct tctx *c = arg;
	struct rxb_stage_inputs st = c->st;
	struct bneck_at at;
	int err;

	st.queue_pkts = k;
	err = bneck_eval_at(&c->ws, &st, 1, &c->x, NULL, c->rate_bps, &at);
	*t = at.pt.time_s;
	return err;
}

/*
 * On the model: the searched K against a scan of every K, at rates below,
 * at and above the stage's capacity, both round models, both rules.
 */
static void test_time_vs_scan(void **state)
{
	struct tctx c = {
		.st = {
			.cpu_bound = 2, .io_bound = 1, .mu_pio_per_s = 4600.0,
			.mu_disk_per_s = 1010.0, .mu_net_per_s = 41600.0,
			.batch_pkts = 6,
		},
		.x = {
			.payload_bytes = 1468.0, .file_bytes = 50e6,
			.one_way_delay_s = 0.01, .line_rate_bps = 1e9,
			.min_rate_bps = 1e7, .points = 2,
		},
	};
	const double rates[] = { 600e6, 800e6, 862e6, 900e6 };
	const uint32_t kmax = 700;
	int nontrivial = 0;

	(void)state;
	assert_int_equal(bneck_ws_init(&c.ws, 2), 0);
	for (int rule = 0; rule < 2; rule++)
	for (int rounds = 0; rounds < 2; rounds++)
	for (size_t i = 0; i < 4; i++) {
		struct bufsize_result r;
		double tref, t;
		uint32_t want = 0;

		c.st.rule = rule;
		c.x.rounds = rounds;
		c.rate_bps = rates[i];
		assert_int_equal(t_model(&c, kmax, &tref), 0);
		for (uint32_t k = 6; k <= kmax && !want; k++) {
			assert_int_equal(t_model(&c, k, &t), 0);
			if (t <= 1.01 * tref)
				want = k;
		}
		assert_int_equal(bufsize_for_time(t_model, &c, 0.01, 6, kmax, &r), 0);
		if (r.queue_pkts != want)
			fprintf(stderr, "rule %d rounds %d rate %g: search %u scan %u\n",
				rule, rounds, rates[i], r.queue_pkts, want);
		assert_int_equal(r.queue_pkts, want);
		assert_true(r.time_s <= 1.01 * tref);
		nontrivial += want > 6 && want < kmax;
	}
	assert_true(nontrivial >= 8);
	bneck_ws_finish(&c.ws);
}

/* bneck_eval_at() at the bottleneck rate is what bneck_compute() found. */
static void test_eval_at_matches(void **state)
{
	struct rxb_stage_inputs st = {
		.cpu_bound = 2, .io_bound = 1, .mu_pio_per_s = 4600.0,
		.mu_disk_per_s = 1010.0, .mu_net_per_s = 41600.0,
		.queue_pkts = 64, .batch_pkts = 6, .irq_ns_per_pkt = 300,
	};
	struct bneck_xfer x = {
		.payload_bytes = 1468.0, .file_bytes = 500e6, .one_way_delay_s = 0.1,
		.line_rate_bps = 1e9, .min_rate_bps = 1e7, .points = 200,
	};
	struct bneck_ws ws;
	struct bneck_result res;
	struct bneck_at at;

	(void)state;
	assert_int_equal(bneck_ws_init(&ws, x.points), 0);
	assert_int_equal(bneck_compute(&ws, &st, 1, &x, NULL, &res), 0);
	assert_int_equal(bneck_eval_at(&ws, &st, 1, &x, NULL, res.rate_bps, &at), 0);
	assert_true(fabs(at.pt.time_s - res.time_s) <= 1e-12 * res.time_s);
	assert_true(fabs(at.stage_loss[0] - res.stage[0].loss) <=
		    1e-12 * res.stage[0].loss);
	assert_true(fabs(at.stage_arrival_per_s[0] - res.stage[0].arrival_per_s) <=
		    1e-9 * res.stage[0].arrival_per_s);
	/* the interrupt share: mu (1 - lambda x 300 ns) */
	assert_true(fabs(at.stage_service_per_s[0] -
			 res.stage[0].service_rate_per_s *
			 (1.0 - at.stage_arrival_per_s[0] * 300e-9)) <=
		    1e-9 * at.stage_service_per_s[0]);
	assert_int_equal(bneck_eval_at(&ws, &st, 1, &x, NULL, 0.0, &at), -EINVAL);
	bneck_ws_finish(&ws);
}

static void test_bytes(void **state)
{
	const double ts[] = { 768.0, 2304.0, 4352.7 };

	(void)state;
	for (size_t i = 0; i < 3; i++)
		for (uint32_t k = 1; k < 100000; k += 997) {
			uint64_t b = bufsize_bytes(k, ts[i]);

			assert_int_equal(b % 2, 0);
			assert_true((double)b >= k * ts[i]);
			assert_int_equal(bufsize_pkts(b, ts[i]), k);
		}
	assert_int_equal(bufsize_bytes(455, 2304.0), 1048320);
	assert_int_equal(bufsize_pkts(1048576, 2304.0), 455);
	assert_int_equal(bufsize_pkts(100, 2304.0), 1);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_loss_vs_scan),
	cmocka_unit_test(test_mm1k_by_hand),
	cmocka_unit_test(test_vacation_by_hand),
	cmocka_unit_test(test_time_closed_form),
	cmocka_unit_test(test_time_vs_scan),
	cmocka_unit_test(test_eval_at_matches),
	cmocka_unit_test(test_bytes),
)
