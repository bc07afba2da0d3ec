// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/rbudp/bitmap: the packet bitmap and the codec of the
 * per-round missing sets, including every rejection of malformed input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/wire.h"
#include "tests/unit/unit_main.h"

static void test_bitmap_basics(void **state)
{
	static const uint32_t sizes[] = { 1, 63, 64, 65, 1000 };
	struct rbudp_bitmap b;

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];

		assert_int_equal(rbudp_bitmap_init(&b, n, true), 0);
		assert_int_equal(rbudp_bitmap_count(&b), n);	/* no bits past the end */
		assert_int_equal(rbudp_bitmap_next_set(&b, 0), 0);
		assert_int_equal(rbudp_bitmap_next_set(&b, n - 1), n - 1);
		assert_int_equal(rbudp_bitmap_next_set(&b, n), n);
		rbudp_bitmap_fill(&b, false);
		assert_int_equal(rbudp_bitmap_count(&b), 0);
		assert_int_equal(rbudp_bitmap_next_set(&b, 0), n);
		assert_false(rbudp_bitmap_test_and_set(&b, n - 1));
		assert_true(rbudp_bitmap_test_and_set(&b, n - 1));
		assert_int_equal(rbudp_bitmap_next_set(&b, 0), n - 1);
		rbudp_bitmap_finish(&b);
	}
	assert_int_equal(rbudp_bitmap_init(&b, 0, true), 0);
	assert_int_equal(rbudp_bitmap_count(&b), 0);
	assert_int_equal(rbudp_bitmap_next_set(&b, 0), 0);
	rbudp_bitmap_finish(&b);
}

static void test_bitmap_ranges_and_subset(void **state)
{
	struct rbudp_bitmap a, b;

	(void)state;
	assert_int_equal(rbudp_bitmap_init(&a, 500, false), 0);
	assert_int_equal(rbudp_bitmap_init(&b, 500, false), 0);
	rbudp_bitmap_set_range(&a, 3, 200);	/* crosses three word boundaries */
	assert_int_equal(rbudp_bitmap_count(&a), 200);
	assert_false(rbudp_bitmap_test(&a, 2));
	assert_true(rbudp_bitmap_test(&a, 3));
	assert_true(rbudp_bitmap_test(&a, 202));
	assert_false(rbudp_bitmap_test(&a, 203));
	assert_int_equal(rbudp_bitmap_next_set(&a, 100), 100);
	assert_int_equal(rbudp_bitmap_next_set(&a, 203), 500);
	assert_false(rbudp_bitmap_is_subset(&a, &b));
	rbudp_bitmap_set_range(&b, 0, 500);
	assert_true(rbudp_bitmap_is_subset(&a, &b));
	rbudp_bitmap_set_range(&a, 499, 1);
	rbudp_bitmap_set_range(&a, 499, 0);
	assert_int_equal(rbudp_bitmap_count(&a), 201);
	rbudp_bitmap_finish(&a);
	rbudp_bitmap_finish(&b);
}

/* Encode @have's missing set, decode it, and compare with the complement. */
static void round_trip(const struct rbudp_bitmap *have, uint8_t want_enc_first_seg)
{
	uint8_t *buf = malloc(RBUDP_SEG_MAX_DATA);
	struct rbudp_bitmap miss;
	uint64_t total_missing = 0;

	assert_non_null(buf);
	assert_int_equal(rbudp_bitmap_init(&miss, have->nbits, false), 0);
	for (uint32_t k = 0; k < rbudp_bitmap_seg_count(have->nbits); k++) {
		const char *why = NULL;
		uint32_t n_missing;
		uint8_t enc;
		size_t len = rbudp_bitmap_miss_encode(have, k, buf, &enc, &n_missing);

		assert_true(len <= RBUDP_SEG_MAX_DATA);
		assert_true(len <= (rbudp_bitmap_seg_len(have->nbits, k) + 7) / 8);
		if (k == 0 && want_enc_first_seg != 0xff)
			assert_int_equal(enc, want_enc_first_seg);
		assert_int_equal(rbudp_bitmap_miss_decode(&miss, k, enc, buf, len, n_missing, &why), 0);
		total_missing += n_missing;
	}
	assert_int_equal(total_missing + rbudp_bitmap_count(have), have->nbits);
	for (uint32_t i = 0; i < have->nbits; i++)
		if (rbudp_bitmap_test(have, i) == rbudp_bitmap_test(&miss, i))
			fail_msg("packet %u: have and missing agree", i);
	rbudp_bitmap_finish(&miss);
	free(buf);
}

static void test_missing_round_trips(void **state)
{
	struct rbudp_bitmap have;

	(void)state;
	/* Sparse losses: the run list is smaller. */
	assert_int_equal(rbudp_bitmap_init(&have, 100000, true), 0);
	for (uint32_t i = 17; i < 100000; i += 9973)
		have.words[i >> 6] &= ~(1ULL << (i & 63));
	rbudp_bitmap_set_range(&have, 0, 0);
	round_trip(&have, RBUDP_MISS_RANGES);
	/* Dense, scattered losses: the bitmap is smaller. */
	srand(3);
	for (uint32_t i = 0; i < 100000; i++)
		if (rand() % 3 == 0)
			have.words[i >> 6] &= ~(1ULL << (i & 63));
	round_trip(&have, RBUDP_MISS_BITMAP);
	/* Everything missing: one run. Nothing missing: no runs. */
	rbudp_bitmap_fill(&have, false);
	round_trip(&have, RBUDP_MISS_RANGES);
	rbudp_bitmap_fill(&have, true);
	round_trip(&have, RBUDP_MISS_RANGES);
	rbudp_bitmap_finish(&have);
	/* Odd sizes: the last byte of a bitmap has padding bits. */
	for (uint32_t n = 1; n < 140; n += 13) {
		assert_int_equal(rbudp_bitmap_init(&have, n, false), 0);
		for (uint32_t i = 0; i < n; i += 2)
			rbudp_bitmap_set(&have, i);
		round_trip(&have, 0xff);
		rbudp_bitmap_finish(&have);
	}
}

static void test_missing_multi_segment(void **state)
{
	struct rbudp_bitmap have;

	(void)state;
	/* Two segments: a full one and a short tail; losses near the seam. */
	assert_int_equal(rbudp_bitmap_init(&have, RBUDP_SEG_PKTS + 1000, true), 0);
	assert_int_equal(rbudp_bitmap_seg_count(have.nbits), 2);
	assert_int_equal(rbudp_bitmap_seg_len(have.nbits, 1), 1000);
	for (uint32_t i = RBUDP_SEG_PKTS - 5; i < RBUDP_SEG_PKTS + 5; i++)
		have.words[i >> 6] &= ~(1ULL << (i & 63));
	round_trip(&have, RBUDP_MISS_RANGES);
	rbudp_bitmap_finish(&have);
}

static int decode(uint32_t nbits, uint32_t k, uint8_t enc, const uint8_t *d, size_t len,
		  uint32_t n_missing)
{
	struct rbudp_bitmap miss;
	const char *why = NULL;
	int err;

	assert_int_equal(rbudp_bitmap_init(&miss, nbits, false), 0);
	err = rbudp_bitmap_miss_decode(&miss, k, enc, d, len, n_missing, &why);
	if (err)
		assert_non_null(why);
	rbudp_bitmap_finish(&miss);
	return err;
}

static void put_run(uint8_t *p, uint32_t off, uint32_t len)
{
	rbudp_put_u32(p, off);
	rbudp_put_u32(p + 4, len);
}

static void test_missing_rejects_bad_input(void **state)
{
	uint8_t d[64] = { 0 };

	(void)state;
	/* Bitmaps: 20 packets = 3 bytes, 4 padding bits. */
	d[0] = 0x81;
	assert_int_equal(decode(20, 0, RBUDP_MISS_BITMAP, d, 3, 2), 0);
	assert_int_equal(decode(20, 0, RBUDP_MISS_BITMAP, d, 2, 2), -EBADMSG);	/* short */
	assert_int_equal(decode(20, 0, RBUDP_MISS_BITMAP, d, 4, 2), -EBADMSG);	/* long */
	assert_int_equal(decode(20, 0, RBUDP_MISS_BITMAP, d, 3, 3), -EBADMSG);	/* count */
	d[2] = 0x10;							/* padding bit */
	assert_int_equal(decode(20, 0, RBUDP_MISS_BITMAP, d, 3, 3), -EBADMSG);
	memset(d, 0, sizeof(d));

	/* Runs. */
	put_run(d, 2, 3);
	put_run(d + 8, 10, 10);
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 13), 0);
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 12), -EBADMSG);	/* sum */
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 12, 13), -EBADMSG);	/* partial */
	put_run(d + 8, 10, 11);						/* past the end */
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 14), -EBADMSG);
	put_run(d + 8, 0xffffffffu, 2);					/* wraps in 32 bits */
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 5), -EBADMSG);
	put_run(d + 8, 4, 2);						/* overlaps */
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 5), -EBADMSG);
	put_run(d + 8, 1, 1);						/* out of order */
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 4), -EBADMSG);
	put_run(d + 8, 12, 0);						/* empty */
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 16, 3), -EBADMSG);
	/* More runs than packets. */
	assert_int_equal(decode(1, 0, RBUDP_MISS_RANGES, d, 16, 1), -EBADMSG);

	/* Segment index, encoding, counts, size. */
	assert_int_equal(decode(20, 1, RBUDP_MISS_BITMAP, d, 3, 0), -EBADMSG);
	assert_int_equal(decode(20, 0, 2, d, 3, 0), -EBADMSG);
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, 0, 21), -EBADMSG);
	assert_int_equal(decode(20, 0, RBUDP_MISS_RANGES, d, RBUDP_SEG_MAX_DATA + 8, 0),
			 -EBADMSG);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_bitmap_basics),
	cmocka_unit_test(test_bitmap_ranges_and_subset),
	cmocka_unit_test(test_missing_round_trips),
	cmocka_unit_test(test_missing_multi_segment),
	cmocka_unit_test(test_missing_rejects_bad_input),
)
