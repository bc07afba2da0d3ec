// SPDX-License-Identifier: GPL-2.0-or-later
/* Packet bitmaps and the missing-set codec. See bitmap.h. */
#include "tools/rbudp/bitmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/rbudp/wire.h"

/* Mask of the valid bits of word @w. */
static uint64_t word_mask(const struct rbudp_bitmap *b, uint32_t w)
{
	uint32_t tail = b->nbits & 63;

	if (w + 1 < b->nwords || tail == 0)
		return ~0ULL;
	return (1ULL << tail) - 1;
}

int rbudp_bitmap_init(struct rbudp_bitmap *b, uint32_t nbits, bool set)
{
	b->nbits = nbits;
	b->nwords = (uint32_t)(((uint64_t)nbits + 63) / 64);
	/* calloc of 0 words may return NULL; keep one word so words is valid. */
	b->words = calloc(b->nwords ? b->nwords : 1, sizeof(uint64_t));
	if (!b->words)
		return -ENOMEM;
	if (set)
		rbudp_bitmap_fill(b, true);
	return 0;
}

void rbudp_bitmap_finish(struct rbudp_bitmap *b)
{
	free(b->words);
	memset(b, 0, sizeof(*b));
}

void rbudp_bitmap_fill(struct rbudp_bitmap *b, bool set)
{
	for (uint32_t w = 0; w < b->nwords; w++)
		b->words[w] = set ? word_mask(b, w) : 0;
}

void rbudp_bitmap_set_range(struct rbudp_bitmap *b, uint32_t from, uint32_t len)
{
	uint64_t i = from, end = (uint64_t)from + len;

	while (i < end && (i & 63)) {
		b->words[i >> 6] |= 1ULL << (i & 63);
		i++;
	}
	while (i + 64 <= end) {
		b->words[i >> 6] = ~0ULL;
		i += 64;
	}
	while (i < end) {
		b->words[i >> 6] |= 1ULL << (i & 63);
		i++;
	}
}

uint64_t rbudp_bitmap_count(const struct rbudp_bitmap *b)
{
	uint64_t n = 0;

	for (uint32_t w = 0; w < b->nwords; w++)
		n += (uint64_t)__builtin_popcountll(b->words[w]);
	return n;
}

uint32_t rbudp_bitmap_next_set(const struct rbudp_bitmap *b, uint32_t from)
{
	uint32_t w;
	uint64_t v;

	if (from >= b->nbits)
		return b->nbits;
	w = from >> 6;
	v = b->words[w] & (~0ULL << (from & 63));
	for (;;) {
		if (v) {
			uint64_t i = ((uint64_t)w << 6) + (uint64_t)__builtin_ctzll(v);

			return i < b->nbits ? (uint32_t)i : b->nbits;
		}
		if (++w >= b->nwords)
			return b->nbits;
		v = b->words[w];
	}
}

bool rbudp_bitmap_is_subset(const struct rbudp_bitmap *a, const struct rbudp_bitmap *b)
{
	if (a->nbits != b->nbits)
		return false;
	for (uint32_t w = 0; w < a->nwords; w++)
		if (a->words[w] & ~b->words[w])
			return false;
	return true;
}

/* ---------------------------------------------------------- missing -- */

/* Missing bits (clear in @have) of word @w, limited to the bitmap. */
static uint64_t missing_word(const struct rbudp_bitmap *have, uint32_t w)
{
	return ~have->words[w] & word_mask(have, w);
}

/* First bit in [from, end) that is set (or clear, when !@set); @end if none. */
static uint32_t scan(const struct rbudp_bitmap *b, uint32_t from, uint32_t end, bool set)
{
	uint64_t i = from;

	while (i < end) {
		uint64_t v = set ? b->words[i >> 6] : ~b->words[i >> 6];

		v &= ~0ULL << (i & 63);
		if (v) {
			i = (i & ~63ULL) + (uint64_t)__builtin_ctzll(v);
			return i < end ? (uint32_t)i : end;
		}
		i = (i | 63) + 1;
	}
	return end;
}

size_t rbudp_bitmap_miss_encode(const struct rbudp_bitmap *have, uint32_t k, uint8_t *out,
				uint8_t *enc, uint32_t *n_missing)
{
	uint32_t base = k * RBUDP_SEG_PKTS, count = rbudp_bitmap_seg_len(have->nbits, k);
	uint32_t w0 = base >> 6, w1 = (uint32_t)(((uint64_t)base + count + 63) >> 6);
	uint64_t prev = 0, missing = 0, runs = 0;
	size_t bitmap_len = (count + 7) / 8, n = 0;

	/* One pass to size both encodings. A run starts at a missing bit whose
	 * predecessor is present; segments start on a word boundary. */
	for (uint32_t w = w0; w < w1; w++) {
		uint64_t m = missing_word(have, w);

		missing += (uint64_t)__builtin_popcountll(m);
		runs += (uint64_t)__builtin_popcountll(m & ~((m << 1) | prev));
		prev = m >> 63;
	}
	*n_missing = (uint32_t)missing;

	if (runs * 8 < bitmap_len) {
		uint32_t end = base + count, i = base;

		*enc = RBUDP_MISS_RANGES;
		for (;;) {
			uint32_t start = scan(have, i, end, false), stop;

			if (start >= end)
				break;
			stop = scan(have, start, end, true);
			rbudp_put_u32(out + n, start - base);
			rbudp_put_u32(out + n + 4, stop - start);
			n += 8;
			i = stop;
		}
		return n;
	}

	*enc = RBUDP_MISS_BITMAP;
	for (uint32_t w = w0; w < w1; w++) {
		uint64_t m = missing_word(have, w);

		for (int byte = 0; byte < 8 && n < bitmap_len; byte++)
			out[n++] = (uint8_t)(m >> (8 * byte));
	}
	return n;
}

static int decode_bitmap(struct rbudp_bitmap *missing, uint32_t base, uint32_t count,
			 const uint8_t *data, size_t len, uint32_t n_missing,
			 const char **why)
{
	uint64_t n = 0;

	if (len != (count + 7) / 8) {
		*why = "bitmap length does not match the segment size";
		return -EBADMSG;
	}
	if ((count & 7) && (data[len - 1] >> (count & 7))) {
		*why = "bitmap has bits set past the end of the segment";
		return -EBADMSG;
	}
	for (size_t j = 0; j < len; j += 8) {
		uint64_t v = 0;

		for (size_t b = 0; b < 8 && j + b < len; b++)
			v |= (uint64_t)data[j + b] << (8 * b);
		n += (uint64_t)__builtin_popcountll(v);
		missing->words[(base >> 6) + j / 8] |= v;
	}
	if (n != n_missing) {
		*why = "bitmap population differs from the announced missing count";
		return -EBADMSG;
	}
	return 0;
}

static int decode_ranges(struct rbudp_bitmap *missing, uint32_t base, uint32_t count,
			 const uint8_t *data, size_t len, uint32_t n_missing,
			 const char **why)
{
	uint64_t prev_end = 0, n = 0;

	if (len % 8 || len / 8 > count) {
		*why = "run list length is not a whole number of runs within the segment";
		return -EBADMSG;
	}
	for (size_t j = 0; j < len; j += 8) {
		uint64_t off = rbudp_get_u32(data + j), run = rbudp_get_u32(data + j + 4);

		if (run == 0) {
			*why = "empty run";
			return -EBADMSG;
		}
		if (off < prev_end) {
			*why = "runs out of order or overlapping";
			return -EBADMSG;
		}
		if (off + run > count) {
			*why = "run past the end of the segment";
			return -EBADMSG;
		}
		rbudp_bitmap_set_range(missing, base + (uint32_t)off, (uint32_t)run);
		prev_end = off + run;
		n += run;
	}
	if (n != n_missing) {
		*why = "runs cover a different number of packets than announced";
		return -EBADMSG;
	}
	return 0;
}

int rbudp_bitmap_miss_decode(struct rbudp_bitmap *missing, uint32_t k, uint8_t enc,
			     const uint8_t *data, size_t len, uint32_t n_missing,
			     const char **why)
{
	uint32_t count;

	if (k >= rbudp_bitmap_seg_count(missing->nbits)) {
		*why = "segment index past the end of the transfer";
		return -EBADMSG;
	}
	count = rbudp_bitmap_seg_len(missing->nbits, k);
	if (n_missing > count) {
		*why = "more packets missing than the segment holds";
		return -EBADMSG;
	}
	if (len > RBUDP_SEG_MAX_DATA) {
		*why = "segment data too long";
		return -EBADMSG;
	}
	switch (enc) {
	case RBUDP_MISS_BITMAP:
		return decode_bitmap(missing, k * RBUDP_SEG_PKTS, count, data, len,
				     n_missing, why);
	case RBUDP_MISS_RANGES:
		return decode_ranges(missing, k * RBUDP_SEG_PKTS, count, data, len,
				     n_missing, why);
	default:
		*why = "unknown missing-set encoding";
		return -EBADMSG;
	}
}
