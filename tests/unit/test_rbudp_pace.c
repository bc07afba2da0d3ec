// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/rbudp pacing and delay emulation, on a simulated
 * clock: the schedule's long-run rate equals the requested one exactly
 * (closed form: bytes = rate x time / 8, within one packet), bursts are
 * capped, pauses and rate changes restart the schedule; the feedback FIFO
 * releases in order and never early.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/rbudp/delay.h"
#include "tools/rbudp/pace.h"
#include "tests/unit/unit_main.h"

#define PKT 1468ULL
#define T0 1000000000ULL	/* an arbitrary monotonic start */

/*
 * Drive a schedule like the sender does, with a perfect clock: at each
 * step send what the quota allows (at most @batch packets), else jump to
 * rbudp_pace_next_ns(). Returns the time the last of @n packets went.
 */
static uint64_t simulate(struct rbudp_pace *p, uint64_t n, unsigned batch, uint64_t now)
{
	uint64_t sent = 0;

	while (sent < n) {
		uint64_t q = rbudp_pace_quota(p, now);
		unsigned k = 0;

		while (k < batch && sent < n && q >= PKT) {
			q -= PKT;
			rbudp_pace_sent(p, PKT);
			sent++;
			k++;
		}
		if (sent == n)
			break;
		if (!k) {
			uint64_t t = rbudp_pace_next_ns(p, PKT);

			assert_true(t > now);
			now = t;
		}
	}
	return now;
}

static void test_pace_rate_is_exact(void **state)
{
	static const uint64_t rates[] = { 10000000ULL, 1000000000ULL, 6000000000ULL,
					  40000000000ULL };

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct rbudp_pace p;
		uint64_t n = 100000, end, ideal_ns;

		rbudp_pace_init(&p, rates[i], 32 * PKT, T0);
		end = simulate(&p, n, 32, T0);
		/* Packet n-1 may leave once n packets' worth of time passed:
		 * n x PKT x 8 / rate, rounded up to the nanosecond. */
		ideal_ns = (n * PKT * 8 * 1000000000ULL + rates[i] - 1) / rates[i];
		assert_true(end - T0 == ideal_ns);
	}
}

static void test_pace_quota_and_next(void **state)
{
	struct rbudp_pace p;
	uint64_t t;

	(void)state;
	rbudp_pace_init(&p, 1000000000ULL, 32 * PKT, T0);	/* 11744 ns per packet */
	assert_int_equal(rbudp_pace_quota(&p, T0), 0);
	t = rbudp_pace_next_ns(&p, PKT);
	assert_int_equal(t - T0, 11744);
	assert_true(rbudp_pace_quota(&p, t - 1) < PKT);
	assert_true(rbudp_pace_quota(&p, t) >= PKT);
	rbudp_pace_sent(&p, PKT);
	assert_int_equal(rbudp_pace_next_ns(&p, PKT) - T0, 2 * 11744);
}

static void test_pace_burst_cap(void **state)
{
	struct rbudp_pace p;
	uint64_t now = T0 + 10000000, q, end;

	(void)state;
	rbudp_pace_init(&p, 1000000000ULL, 8 * PKT, T0);
	/* 10 ms late at 1 Gb/s would be 851 packets of credit: only 8 remain. */
	q = rbudp_pace_quota(&p, now);
	assert_true(q >= 8 * PKT && q < 9 * PKT);
	for (int i = 0; i < 8; i++)
		rbudp_pace_sent(&p, PKT);
	assert_true(rbudp_pace_quota(&p, now) < PKT);
	/* From there on, the rate again. */
	end = simulate(&p, 1000, 8, now);
	assert_true(end - now >= 999 * 11744 - 1 && end - now <= 1000 * 11744 + 1);
}

static void test_pace_restart_and_rate_change(void **state)
{
	struct rbudp_pace p;
	uint64_t pause_end = T0 + 5000000;

	(void)state;
	rbudp_pace_init(&p, 1000000000ULL, 32 * PKT, T0);
	rbudp_pace_restart_at(&p, pause_end);
	/* Nothing goes during the pause, and no credit piles up from it. */
	assert_int_equal(rbudp_pace_quota(&p, pause_end - 1), 0);
	assert_int_equal(rbudp_pace_quota(&p, pause_end), 0);
	assert_int_equal(rbudp_pace_next_ns(&p, PKT), pause_end + 11744);
	/* A new rate applies from the moment it is set. */
	rbudp_pace_set_rate(&p, 2000000000ULL, pause_end);
	assert_int_equal(rbudp_pace_next_ns(&p, PKT), pause_end + 5872);
}

static void test_delay_fifo(void **state)
{
	struct rbudp_outq q;
	const struct rbudp_outq_msg *m;

	(void)state;
	rbudp_delay_outq_init(&q);
	assert_true(rbudp_delay_outq_next_ns(&q) == UINT64_MAX);
	assert_null(rbudp_delay_outq_peek_due(&q, UINT64_MAX));
	assert_int_equal(rbudp_delay_outq_push(&q, "first", 5, 300), 0);
	/* Released earlier than its predecessor: held until it (no overtaking). */
	assert_int_equal(rbudp_delay_outq_push(&q, "second", 6, 100), 0);
	assert_int_equal(rbudp_delay_outq_push(&q, "third", 5, 400), 0);
	assert_int_equal(rbudp_delay_outq_next_ns(&q), 300);
	assert_null(rbudp_delay_outq_peek_due(&q, 299));
	m = rbudp_delay_outq_peek_due(&q, 300);
	assert_non_null(m);
	assert_memory_equal(m->data, "first", 5);
	rbudp_delay_outq_drop(&q);
	m = rbudp_delay_outq_peek_due(&q, 300);
	assert_non_null(m);
	assert_int_equal(m->release_ns, 300);
	assert_memory_equal(m->data, "second", 6);
	rbudp_delay_outq_drop(&q);
	assert_null(rbudp_delay_outq_peek_due(&q, 399));
	assert_int_equal(q.n_msgs, 1);
	/* finish frees what is left (the sanitizer build checks). */
	rbudp_delay_outq_finish(&q);
	assert_int_equal(q.n_msgs, 0);

	assert_true(rbudp_delay_release_ns(10, 5) == 15);
	assert_true(rbudp_delay_release_ns(UINT64_MAX - 1, 5) == UINT64_MAX);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_pace_rate_is_exact),
	cmocka_unit_test(test_pace_quota_and_next),
	cmocka_unit_test(test_pace_burst_cap),
	cmocka_unit_test(test_pace_restart_and_rate_change),
	cmocka_unit_test(test_delay_fifo),
)
