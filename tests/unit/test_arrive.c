// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/arrive.c: the arrivals of an epoch without the per-packet
 * probes, from the receiver's on-CPU time and wake-ups and the socket's
 * drops. Checked against a receiver whose time is exactly a w + b p (the
 * estimate is then its packets and drops), and the check's error and bias
 * against ln(estimate / counted) worked by hand when its cost per packet
 * steps up.
 */
#include "tests/unit/inputs_fixture.h"
#include "tests/unit/unit_main.h"

/* Packets read and wake-ups of the training epochs: 6 to 500 per wake-up. */
static const uint64_t tr_epochs[][2] = {
	{ 30000, 5000 }, { 90000, 900 }, { 60000, 1500 }, { 120000, 240 },
	{ 45000, 4500 }, { 100000, 200 },
};
#define TR_A_NS		7000.0
#define TR_B_NS		1300.0
#define TR_ACT_S	0.5

/*
 * A socket record of a receiver seen by the scheduler probe: @p read, @w
 * wake-ups, @drops dropped, its time @b_ns per packet and TR_A_NS per
 * wake-up; @counted: the per-packet probes counted its packets.
 */
static struct rxb_sock_meas sock(uint64_t p, uint64_t w, uint64_t drops, double b_ns,
				 bool counted)
{
	struct rxb_sock_meas s = { 0 };

	s.receivers_valid = true;
	s.counts_valid = counted;
	s.receiver_oncpu_ns = (uint64_t)llround(TR_A_NS * (double)w + b_ns * (double)p);
	s.recv_wakeups = w;
	s.drops = drops;
	if (counted) {
		s.pkts_out = p;
		s.pkts_in = p + drops;
		s.pkts_enqueued = p;
	}
	return s;
}

/*
 * Train @a on epochs @from to @from + @n - 1 of the table (round and
 * round), decayed by @d each; the checked
 * seconds as they decay (@checked before), and into @w (if not NULL) the
 * checked epochs from @w's value.
 */
static double train(struct arrive *a, int from, int n, double d, double checked, double *w)
{
	for (int i = from; i < from + n; i++) {
		const uint64_t *t = tr_epochs[i % RXB_ARRAY_SIZE(tr_epochs)];
		struct rxb_sock_meas s = sock(t[0], t[1], 0, TR_B_NS, true);
		bool known = a->fit.known;

		arrive_learn(a, &s, TR_ACT_S, d);
		/* An epoch is checked once a fit was known before it. */
		checked = checked * d + (known ? TR_ACT_S : 0);
		check_rel_strict(a->checked_s, checked, 1e-12);
		if (w) {
			*w = *w * d + (known ? 1 : 0);
			check_rel_strict(a->checked_w, *w, 1e-12);
		}
	}
	return checked;
}

/*
 * Exact times: once the fit separates a from b, an epoch's arrivals are
 * its reads and drops, checked to within the nanosecond rounding, and the
 * estimate is trusted once ARRIVE_MIN_CHECKS epochs were checked. Before that,
 * and without the receivers' time, no estimate.
 */
static void test_arrive_exact(void **state)
{
	const double d = exp(-1.0 / LEARN_TAU_S);
	struct rxb_sock_meas s = sock(50000, 700, 2500, TR_B_NS, false);
	struct arrive a;
	double reads, checked = 0, w = 0;

	(void)state;
	arrive_init(&a);
	assert_true(isnan(arrive_estimate(&a, &s, &reads)) && isnan(reads));
	assert_true(isnan(arrive_err(&a)) && !arrive_trusted(&a));
	for (int i = 0; i < 12; i++) {
		checked = train(&a, i, 1, d, checked, &w);
		assert_true(arrive_trusted(&a) == (w >= ARRIVE_MIN_CHECKS));
	}
	assert_true(a.fit.known && arrive_trusted(&a));
	check_rel_strict(a.fit.a_ns, TR_A_NS, 1e-6);
	check_rel_strict(a.fit.b_ns, TR_B_NS, 1e-8);
	assert_true(arrive_err(&a) < 1e-7 && fabs(arrive_bias(&a)) < 1e-7);
	check_rel_strict(arrive_estimate(&a, &s, &reads), 52500.0, 1e-7);
	check_rel_strict(reads, 50000.0, 1e-7);
	/* Fewer wake-ups than the time could pay for: none read, the drops arrived. */
	s.receiver_oncpu_ns = 1000;
	check_rel_strict(arrive_estimate(&a, &s, &reads), 2500.0, 1e-15);
	assert_true(reads == 0.0);
	s.receivers_valid = false;
	assert_true(isnan(arrive_estimate(&a, &s, &reads)));
	/* An idle epoch decays the checks, and the fit keeps its terms. */
	arrive_learn(&a, NULL, 0, d);
	check_rel_strict(a.checked_s, checked * d, 1e-12);
	check_rel_strict(a.fit.b_ns, TR_B_NS, 1e-8);
}

/*
 * The receiver's cost per packet steps up by 70 %: the first epoch after
 * the step is estimated by the fit before it at 1.7 times its reads, plus
 * its drops, and checked before the fit learns it: its error
 * ln((1.7 p + x) / (p + x)), weighted by its seconds among the decayed
 * ones, takes the mean past ARRIVE_MAX_ERR: not trusted.
 */
static void test_arrive_step(void **state)
{
	const double d = exp(-1.0 / LEARN_TAU_S), p = 80000, x = 4000;
	struct rxb_sock_meas s = sock((uint64_t)p, 400, (uint64_t)x, 1.7 * TR_B_NS, true);
	double checked, err_sum, e = log((1.7 * p + x) / (p + x));
	struct arrive a;

	(void)state;
	arrive_init(&a);
	checked = train(&a, 0, 24, d, 0, NULL);
	assert_true(arrive_trusted(&a));
	err_sum = a.err_sum;
	arrive_learn(&a, &s, TR_ACT_S, d);
	check_rel_strict(a.checked_s, checked * d + TR_ACT_S, 1e-12);
	check_rel_strict(a.err_sum, err_sum * d + e * TR_ACT_S, 1e-6);
	check_rel_strict(arrive_err(&a), (err_sum * d + e * TR_ACT_S) / a.checked_s, 1e-12);
	check_rel_strict(arrive_bias(&a), arrive_err(&a), 1e-6);	/* all of it over */
	assert_true(arrive_err(&a) > ARRIVE_MAX_ERR);
	assert_false(arrive_trusted(&a));
	/* An epoch too short to check is still learned from. */
	checked = a.checked_s;
	err_sum = a.fit.sums.n;
	arrive_learn(&a, &s, ARRIVE_MIN_CHECK_EPOCH_S / 2, d);
	check_rel_strict(a.checked_s, checked * d, 1e-12);
	check_rel_strict(a.fit.sums.n, err_sum * d + 1, 1e-12);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_arrive_exact),
	cmocka_unit_test(test_arrive_step),
)
