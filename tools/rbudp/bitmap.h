/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fixed-size bitmap of packet sequence numbers, and the codec for the
 * "missing packets" sets the receiver reports at the end of each round.
 *
 * The missing set of a transfer is cut into segments of at most
 * RBUDP_SEG_PKTS packets: segment k covers [k * RBUDP_SEG_PKTS,
 * min((k + 1) * RBUDP_SEG_PKTS, total)). Each segment is encoded either as
 * a bitmap (bit i of byte j, least significant first, set = packet
 * base + 8j + i is missing) or, when that is smaller, as a list of runs
 * (u32 offset from base, u32 length; big-endian; sorted, non-overlapping,
 * length >= 1). Either way a segment's data is at most RBUDP_SEG_MAX_DATA
 * bytes, so every control frame stays bounded whatever the file size.
 */
#ifndef RBUDP_BITMAP_H
#define RBUDP_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rbudp_bitmap {
	uint64_t *words;
	uint32_t nbits;
	uint32_t nwords;
};

/* All bits clear (or all set when @set); bits past @nbits stay clear. -ENOMEM. */
int rbudp_bitmap_init(struct rbudp_bitmap *b, uint32_t nbits, bool set);
void rbudp_bitmap_finish(struct rbudp_bitmap *b);
void rbudp_bitmap_fill(struct rbudp_bitmap *b, bool set);

static inline bool rbudp_bitmap_test(const struct rbudp_bitmap *b, uint32_t i)
{
	return (b->words[i >> 6] >> (i & 63)) & 1;
}

static inline void rbudp_bitmap_set(struct rbudp_bitmap *b, uint32_t i)
{
	b->words[i >> 6] |= 1ULL << (i & 63);
}

/* Set bit @i and return its previous value. */
static inline bool rbudp_bitmap_test_and_set(struct rbudp_bitmap *b, uint32_t i)
{
	uint64_t m = 1ULL << (i & 63);
	bool old = b->words[i >> 6] & m;

	b->words[i >> 6] |= m;
	return old;
}

/* Set bits [from, from + len); the caller guarantees from + len <= nbits. */
void rbudp_bitmap_set_range(struct rbudp_bitmap *b, uint32_t from, uint32_t len);
uint64_t rbudp_bitmap_count(const struct rbudp_bitmap *b);
/* First set bit at or after @from; b->nbits when there is none. */
uint32_t rbudp_bitmap_next_set(const struct rbudp_bitmap *b, uint32_t from);
/* True when every bit set in @a is set in @b (same size). */
bool rbudp_bitmap_is_subset(const struct rbudp_bitmap *a, const struct rbudp_bitmap *b);

/* ------------------------------------------------------ missing sets -- */

#define RBUDP_SEG_PKTS		(1u << 23)		/* packets per segment */
#define RBUDP_SEG_MAX_DATA	(RBUDP_SEG_PKTS / 8)	/* 1 MiB */

enum rbudp_miss_enc {
	RBUDP_MISS_BITMAP = 0,
	RBUDP_MISS_RANGES = 1,
};

/* Number of segments for @total packets. */
static inline uint32_t rbudp_bitmap_seg_count(uint32_t total)
{
	return (uint32_t)(((uint64_t)total + RBUDP_SEG_PKTS - 1) / RBUDP_SEG_PKTS);
}

/* Packets in segment @k of a transfer of @total packets. */
static inline uint32_t rbudp_bitmap_seg_len(uint32_t total, uint32_t k)
{
	uint64_t base = (uint64_t)k * RBUDP_SEG_PKTS;
	uint64_t left = total > base ? total - base : 0;

	return left < RBUDP_SEG_PKTS ? (uint32_t)left : RBUDP_SEG_PKTS;
}

/*
 * Encode segment @k of the packets NOT set in @have into @out (room for
 * RBUDP_SEG_MAX_DATA bytes), choosing the smaller encoding. Returns the
 * number of data bytes; *enc and *n_missing are set.
 */
size_t rbudp_bitmap_miss_encode(const struct rbudp_bitmap *have, uint32_t k, uint8_t *out,
				uint8_t *enc, uint32_t *n_missing);

/*
 * Decode segment @k (as received from an untrusted peer) and set the
 * packets it lists in @missing (nbits = total packets). Every field is
 * checked: encoding, exact length, padding bits, run order and bounds, and
 * that the listed packets number exactly @n_missing. Returns 0, or
 * -EBADMSG with *why naming the problem; @missing is then partly written
 * and the caller must discard it.
 */
int rbudp_bitmap_miss_decode(struct rbudp_bitmap *missing, uint32_t k, uint8_t enc,
			     const uint8_t *data, size_t len, uint32_t n_missing,
			     const char **why);

#endif
