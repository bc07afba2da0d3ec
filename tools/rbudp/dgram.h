/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RBUDP data datagram (protocol version 3): a 16-byte header
 *
 *	seq (u32) | round (u32) | authenticator (8 bytes, auth.h)
 *
 * then the packet's file bytes. The authenticator is the session's token
 * without a pre-shared key and a UMAC-64 tag with one. The sender seals
 * each header; the receiver classifies what it reads: cheap shape checks
 * first (so junk costs no MAC computation), then the authenticator, which
 * a datagram of a round that has not started cannot carry either.
 */
#ifndef RBUDP_DGRAM_H
#define RBUDP_DGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/rbudp/auth.h"
#include "tools/rbudp/wire.h"

enum rbudp_dgram_verdict {
	RBUDP_DGRAM_OK,
	RBUDP_DGRAM_SHORT,	/* no room for the header */
	RBUDP_DGRAM_SEQ,	/* sequence number past the end */
	RBUDP_DGRAM_LENGTH,	/* not header + that packet's length (or truncated) */
	RBUDP_DGRAM_FORGED,	/* wrong token or tag, or a future round */
};

/* Write seq, round and the authenticator for @payload into @hdr. */
void rbudp_dgram_seal(struct rbudp_keys *k, uint8_t hdr[RBUDP_DGRAM_HDR], uint32_t seq,
		      uint32_t round, const uint8_t *payload, uint32_t len);

/*
 * Classify datagram @d of @len bytes (@truncated: longer than read) of a
 * transfer shaped by @su, the receiver being in round @round. On
 * RBUDP_DGRAM_OK *seq and *plen say which packet and how long; the
 * payload is at d + RBUDP_DGRAM_HDR. *seq is set whenever the header was
 * there to read.
 */
enum rbudp_dgram_verdict rbudp_dgram_check(struct rbudp_keys *k, const struct rbudp_setup *su,
					   uint32_t round, const uint8_t *d, uint32_t len,
					   bool truncated, uint32_t *seq, uint32_t *plen);

#endif
