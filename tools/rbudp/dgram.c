// SPDX-License-Identifier: GPL-2.0-or-later
/* The RBUDP data datagram. See dgram.h. */
#include "tools/rbudp/dgram.h"

void rbudp_dgram_seal(struct rbudp_keys *k, uint8_t hdr[RBUDP_DGRAM_HDR], uint32_t seq,
		      uint32_t round, const uint8_t *payload, uint32_t len)
{
	rbudp_put_u32(hdr, seq);
	rbudp_put_u32(hdr + 4, round);
	rbudp_auth_dgram_tag(k, seq, round, payload, len, hdr + RBUDP_DGRAM_AUTH_OFF);
}

enum rbudp_dgram_verdict rbudp_dgram_check(struct rbudp_keys *k, const struct rbudp_setup *su,
					   uint32_t round, const uint8_t *d, uint32_t len,
					   bool truncated, uint32_t *seq, uint32_t *plen)
{
	uint32_t r;

	*seq = 0;
	if (len < RBUDP_DGRAM_HDR)
		return RBUDP_DGRAM_SHORT;
	*seq = rbudp_get_u32(d);
	r = rbudp_get_u32(d + 4);
	if (*seq >= su->total_pkts)
		return RBUDP_DGRAM_SEQ;
	*plen = rbudp_pkt_len(su->file_bytes, su->payload_bytes, *seq);
	if (truncated || len - RBUDP_DGRAM_HDR != *plen)
		return RBUDP_DGRAM_LENGTH;
	if (r == 0 || r > round ||
	    !rbudp_auth_dgram_verify(k, *seq, r, d + RBUDP_DGRAM_HDR, *plen, d + RBUDP_DGRAM_AUTH_OFF))
		return RBUDP_DGRAM_FORGED;
	return RBUDP_DGRAM_OK;
}
