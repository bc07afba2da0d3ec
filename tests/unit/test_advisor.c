// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/advisor: buckets' weighted means and spreads against their
 * closed forms (and the fading of old samples, geometric); the advice -
 * the exponential sampling's next n until the throughput stops rising,
 * then the fit's, CAPPED below a receiver cap, refitted when the cap
 * moves -; eviction of peers and buckets, ageing, refusals, restoring.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "check_rel.h"
#include "daemon/model/advisor.h"
#include "rxbneck/proto.h"
#include "tests/unit/unit_main.h"

static const struct advisor_params params = {
	.max_peers = 4, .max_points = 8, .max_weight_s = 600, .max_age_s = 86400,
	.min_weight_s = 2, .max_n = 64, .tolerance = 0.02, .rise = 0.05, .fits_per_epoch = 4,
};

static const uint8_t peer_a[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };
static const uint8_t peer_b[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 3 };

static double cap_value = NAN;

static double cap(void *ctx, uint16_t port, char *why, size_t len)
{
	(void)ctx;
	(void)port;
	snprintf(why, len, "%s", isnan(cap_value) ? "not measured" : "test");
	return cap_value;
}

/* A window-limited path: 100 Mb/s a stream up to 600 Mb/s. */
static double path(uint32_t n)
{
	return fmin(100e6 * n, 600e6);
}

static void test_bucket_stats(void **state)
{
	struct advisor a;
	const struct advisor_peer *p;
	const double x[4] = { 90e6, 110e6, 100e6, 120e6 };
	double mean = 0, var = 0;

	(void)state;
	assert_int_equal(advisor_init(&a, &params), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(advisor_add(&a, peer_a, 5201, 4, x[i], 1.0, ADVISOR_PASSIVE, 100), 0);
		mean += x[i] / 4;
	}
	for (int i = 0; i < 4; i++)
		var += (x[i] - mean) * (x[i] - mean) / 4;
	p = advisor_find(&a, peer_a, 5201);
	assert_non_null(p);
	assert_int_equal(p->nb, 1);
	check_rel(p->b[0].mean_bps, mean, 1e-15, "mean");
	check_rel(advisor_bucket_sd(&p->b[0]), sqrt(var), 1e-12, "sd");
	/* Weighted: a 3 s sample weighs three 1 s ones. */
	assert_int_equal(advisor_add(&a, peer_a, 5201, 8, 100e6, 1.0, ADVISOR_SENDER, 100), 0);
	assert_int_equal(advisor_add(&a, peer_a, 5201, 8, 200e6, 3.0, ADVISOR_SENDER, 101), 0);
	p = advisor_find(&a, peer_a, 5201);
	check_rel(p->b[1].mean_bps, 175e6, 1e-15, "weighted mean");
	assert_int_equal(p->b[1].origins, ADVISOR_SENDER);
	/* Refused: n beyond max_n, zero throughput, NaN time. */
	assert_int_equal(advisor_add(&a, peer_a, 5201, 65, 1e6, 1, ADVISOR_PASSIVE, 1), -EINVAL);
	assert_int_equal(advisor_add(&a, peer_a, 5201, 2, 0, 1, ADVISOR_PASSIVE, 1), -EINVAL);
	assert_int_equal(advisor_add(&a, peer_a, 5201, 2, 1, NAN, ADVISOR_PASSIVE, 1), -EINVAL);
	assert_int_equal(a.st.refused, 3);
	advisor_finish(&a);
}

/* 600 s remembered: k more 1 s samples leave the old ones f^k of the weight. */
static void test_fading(void **state)
{
	struct advisor a;
	const struct advisor_peer *p;
	double f = 599.0 / 600.0, old = pow(f, 300);

	(void)state;
	assert_int_equal(advisor_init(&a, &params), 0);
	for (int i = 0; i < 600; i++)
		advisor_add(&a, peer_a, 5201, 2, 100e6, 1.0, ADVISOR_PASSIVE, 1000);
	for (int i = 0; i < 300; i++)
		advisor_add(&a, peer_a, 5201, 2, 200e6, 1.0, ADVISOR_PASSIVE, 1000);
	p = advisor_find(&a, peer_a, 5201);
	check_rel(p->b[0].weight_s, 600, 1e-12, "weight capped");
	check_rel(p->b[0].mean_bps, 100e6 * old + 200e6 * (1 - old), 1e-9, "geometric fading");
	advisor_finish(&a);
}

static void feed(struct advisor *a, const uint8_t *addr, uint32_t n, uint64_t t)
{
	for (int i = 0; i < 3; i++)
		advisor_add(a, addr, 5201, n, path(n), 1.0, ADVISOR_PASSIVE, t);
}

static void test_advice(void **state)
{
	struct advisor a;
	const struct advisor_peer *p;
	uint64_t ep = 1;

	(void)state;
	assert_int_equal(advisor_init(&a, &params), 0);
	feed(&a, peer_a, 1, 10);
	assert_int_equal(advisor_epoch(&a, ep++, 10, cap, NULL), 1);
	p = advisor_find(&a, peer_a, 5201);
	assert_true(p->adv.valid);
	assert_int_equal(p->adv.streams, 2);
	assert_int_equal(p->adv.flags, RXBNECK_STREAMS_EXPLORE);
	/* Nothing new: no refit. */
	assert_int_equal(advisor_epoch(&a, ep++, 11, cap, NULL), 0);
	for (uint32_t n = 2; n <= 4; n *= 2) {
		feed(&a, peer_a, n, 12);
		advisor_epoch(&a, ep++, 12, cap, NULL);
		assert_int_equal(p->adv.streams, 2 * n);
		assert_true(p->adv.flags & RXBNECK_STREAMS_EXPLORE);
	}
	/* 8 and 16 give 600 Mb/s: the sampling is done at 16, the fit advises. */
	feed(&a, peer_a, 8, 13);
	feed(&a, peer_a, 16, 13);
	advisor_epoch(&a, ep++, 13, cap, NULL);
	assert_int_equal(p->explore_next, 0);
	assert_false(p->adv.flags & RXBNECK_STREAMS_EXPLORE);
	assert_int_equal(p->adv.streams, p->res.n_opt);
	assert_true(p->adv.streams >= 5 && p->adv.streams <= 16);
	assert_true(p->adv.confidence > 0);
	/* A receiver cap at 300 Mb/s: refitted although no sample came. */
	cap_value = 300e6;
	assert_int_equal(advisor_epoch(&a, ep++, 14, cap, NULL), 1);
	assert_true(p->adv.flags & RXBNECK_STREAMS_CAPPED);
	assert_true(p->adv.predicted_bps <= 300e6);
	check_rel(p->cap_bps, 300e6, 0, "cap kept");
	cap_value = NAN;
	advisor_finish(&a);
}

static void test_bounds(void **state)
{
	struct advisor_params pp = params;
	struct advisor a;
	const struct advisor_peer *p;
	struct advisor_bucket b = { .n = 3, .count = 5, .weight_s = 5, .mean_bps = 3e8,
				    .first_unix = 50, .last_unix = 60, .origins = ADVISOR_SENDER };
	uint8_t addr[16] = { 0 };

	(void)state;
	pp.max_peers = 2;
	pp.max_points = 3;
	pp.max_age_s = 100;
	assert_int_equal(advisor_init(&a, &pp), 0);
	/* Three peers: the one heard from longest ago goes. */
	for (int i = 0; i < 3; i++) {
		addr[15] = (uint8_t)i;
		advisor_add(&a, addr, 1, 1, 1e6, 1, ADVISOR_PASSIVE, 100 + (uint64_t)i);
	}
	addr[15] = 0;
	assert_null(advisor_find(&a, addr, 1));
	assert_int_equal(a.npeers, 2);
	assert_int_equal(a.st.peers_evicted, 1);
	/* Four stream counts in three buckets: the oldest goes. */
	for (uint32_t n = 1; n <= 4; n++)
		advisor_add(&a, peer_a, 5201, n, 1e6 * n, 1, ADVISOR_PASSIVE, 200 + n);
	p = advisor_find(&a, peer_a, 5201);
	assert_int_equal(p->nb, 3);
	assert_int_equal(p->b[0].n, 2);
	/* Restoring merges by n; out of bounds is refused. */
	assert_int_equal(advisor_restore(&a, peer_a, 5201, &b), 0);
	assert_int_equal(p->nb, 3);
	assert_int_equal(p->b[1].n, 3);
	check_rel(p->b[1].mean_bps, (3e6 * 1 + 3e8 * 5) / 6, 1e-12, "merged");
	b.n = 0;
	assert_int_equal(advisor_restore(&a, peer_a, 5201, &b), -EINVAL);
	/* Ageing: at 380 the buckets of 201 .. 204 are gone, and the peer with them. */
	advisor_epoch(&a, 1, 380, NULL, NULL);
	assert_null(advisor_find(&a, peer_a, 5201));
	/* A smaller max_peers on reload keeps the newest. */
	pp.max_peers = 1;
	advisor_add(&a, peer_b, 5201, 1, 1e6, 1, ADVISOR_PASSIVE, 400);
	assert_int_equal(advisor_set_params(&a, &pp), 0);
	assert_int_equal(a.npeers, 1);
	assert_non_null(advisor_find(&a, peer_b, 5201));
	advisor_finish(&a);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_bucket_stats),
	cmocka_unit_test(test_fading),
	cmocka_unit_test(test_advice),
	cmocka_unit_test(test_bounds),
)
