/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the sender sends: a file (mapped read-only) or synthetic data.
 *
 * Synthetic data is a function of the file offset only, so transfers of any
 * size need neither disk nor memory, and anyone can regenerate the bytes to
 * check a received file (docs/rbudp.md has a Python version):
 *
 *	byte(o) = pattern[o mod RBUDP_SYNTH_PERIOD]
 *	pattern[i] = byte (i mod 8) of rbudp_mix64((i / 8 + 1) * 0x9e3779b97f4a7c15),
 *	             least significant byte first
 *
 * The period is a prime, so no payload size divides it: packets stay
 * distinct for RBUDP_SYNTH_PERIOD packets (1.5 GB at 1468 bytes), and a
 * packet written at the wrong offset shows in a byte comparison.
 * The pattern is kept with one payload of wrap-around so every packet is a
 * contiguous slice: sending costs no copy and no computation.
 */
#ifndef RBUDP_SOURCE_H
#define RBUDP_SOURCE_H

#include <stdint.h>
#include <stddef.h>

#include "tools/rbudp/wire.h"

#define RBUDP_SYNTH_PERIOD 1048573u	/* prime, just under 2^20 */

/* The splitmix64 finaliser: a bijective 64-bit mixer. */
static inline uint64_t rbudp_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct rbudp_source {
	const uint8_t *base;	/* file mapping, or the synthetic pattern */
	size_t map_len;		/* bytes mapped (file) or allocated (pattern) */
	uint64_t file_bytes;
	uint32_t payload_bytes;
	uint32_t total_pkts;
	int synthetic;
};

/* Map @path read-only. Errors are logged; returns 0 or a negative errno. */
int rbudp_source_open_file(struct rbudp_source *s, const char *path,
			   uint32_t payload_bytes);
/* Synthetic data of @file_bytes. Returns 0, -ENOMEM or -EFBIG. */
int rbudp_source_open_synth(struct rbudp_source *s, uint64_t file_bytes,
			    uint32_t payload_bytes);
void rbudp_source_finish(struct rbudp_source *s);

/* Payload of packet @seq (< total_pkts) and its length. */
static inline const uint8_t *rbudp_source_pkt(const struct rbudp_source *s, uint32_t seq,
					      uint32_t *len)
{
	uint64_t off = (uint64_t)seq * s->payload_bytes;
	uint64_t left = s->file_bytes - off;

	*len = left < s->payload_bytes ? (uint32_t)left : s->payload_bytes;
	if (s->synthetic)
		off %= RBUDP_SYNTH_PERIOD;
	return s->base + off;
}

/* Fill @buf with synthetic bytes for file offsets [off, off + len). */
void rbudp_source_synth_fill(uint8_t *buf, uint64_t off, size_t len);

/* The file digest (digest.h: SHA-256) of the whole source. */
void rbudp_source_digest(const struct rbudp_source *s, uint8_t out[RBUDP_DIGEST_LEN]);

#endif
