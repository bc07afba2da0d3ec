/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * End-to-end integrity for RBUDP transfers.
 *
 * CRC32C (Castagnoli, the iSCSI/ext4 polynomial) of each packet's payload,
 * folded into an order-independent 64-bit file digest:
 *
 *	term(seq, crc) = rbudp_mix64(((u64)seq << 32) | crc)
 *	digest         = sum of term(seq, crc32c(payload of seq)) mod 2^64
 *
 * Because the sum commutes, the receiver may add packets in arrival order
 * (needed with --discard, where nothing is stored) or in file order after
 * the transfer; both give the sender's value. The sequence number is mixed
 * in, so a payload written at the wrong offset changes the digest too.
 *
 * CRC32C uses the SSE4.2 crc32 instruction when the CPU has it and a
 * slicing-by-8 table otherwise; both give identical results.
 */
#ifndef RBUDP_INTEG_H
#define RBUDP_INTEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The splitmix64 finaliser: a bijective 64-bit mixer. */
static inline uint64_t rbudp_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* CRC32C of @len bytes, continuing from @crc (0 for a fresh CRC). */
uint32_t rbudp_crc32c(uint32_t crc, const void *buf, size_t len);
/* The portable table implementation, exposed for tests. */
uint32_t rbudp_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* True when rbudp_crc32c() uses the CPU instruction. */
bool rbudp_crc32c_is_hw(void);

static inline uint64_t rbudp_digest_term(uint32_t seq, const void *payload, size_t len)
{
	return rbudp_mix64(((uint64_t)seq << 32) | rbudp_crc32c(0, payload, len));
}

/*
 * Digest of a whole file held in memory, cut into packets of @payload_bytes
 * (the last one shorter). This is what sender and receiver compare.
 */
uint64_t rbudp_digest_buf(const void *data, uint64_t file_bytes, uint32_t payload_bytes);

#endif
