// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The per-datagram cost of checking RBUDP datagrams, and why UMAC-64 with a
 * pre-shared key: nanoseconds per 1456-byte payload for the tools' own seal
 * and check (tools/rbudp/dgram.h) in both modes - the session token without
 * a key, UMAC-64 from nettle with one - and for the other MACs nettle
 * offers (UMAC-32, whose 2^-30 forgery bound is too weak to use, UMAC-128,
 * GMAC with AES-128, Poly1305-AES, HMAC-SHA256), each next to the
 * reference measured in the same run: copying the payload, which the
 * receiver does for every datagram anyway. Also the SHA-256 file digest's
 * throughput. Best of 7 passes of 200 000 datagrams each.
 *
 * Informational (exit 0); the transfer-rate target is bench/rbudp_auth.sh.
 * Run by `make bench` under flock /tmp/rxbneck-heavy.lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/gcm.h>
#include <nettle/hmac.h>
#include <nettle/poly1305.h>
#include <nettle/umac.h>

#include "common/util.h"
#include "tools/rbudp/auth.h"
#include "tools/rbudp/dgram.h"
#include "tools/rbudp/digest.h"

#define N	200000
#define PASSES	7
#define PL	1456

static uint8_t dgram[RBUDP_DGRAM_HDR + PL], sink[PL], tag[32];
static struct rbudp_keys keys, keys_token;
static struct rbudp_setup su = { .payload_bytes = PL, .total_pkts = N, .file_bytes = (uint64_t)N * PL };

enum {
	M_COPY, M_TSEAL, M_TCHECK, M_SEAL, M_CHECK, M_UMAC64, M_UMAC32, M_UMAC128, M_GMAC, M_POLY,
	M_HMAC, M_COUNT
};
static const char *const names[M_COUNT] = {
	"copy (reference)", "token seal (no key)", "token check (no key)",
	"UMAC-64 seal (key)", "UMAC-64 check (key)", "UMAC-64 payload only", "UMAC-32 (weak)",
	"UMAC-128", "GMAC (AES-128)", "Poly1305-AES", "HMAC-SHA256",
};

/* UMAC-@bits of the payload under @nonce; the three sizes differ in the tag only. */
#define UMAC_PAYLOAD(bits, ctx, nonce)						\
	do {									\
		umac##bits##_set_nonce(ctx, 16, nonce);				\
		umac##bits##_update(ctx, PL, dgram + RBUDP_DGRAM_HDR);		\
		umac##bits##_digest(ctx, (bits) / 8, tag);			\
	} while (0)

static void pass(int m)
{
	static struct umac32_ctx u32;
	static struct umac64_ctx u64;
	static struct umac128_ctx u128;
	static struct gcm_aes128_ctx gcm;
	static struct poly1305_aes_ctx poly;
	static struct hmac_sha256_ctx hmac;
	static const uint8_t key[32] = { 7 };
	uint8_t nonce[16] = { 0 };
	uint32_t seq, plen;

	umac32_set_key(&u32, key);
	umac64_set_key(&u64, key);
	umac128_set_key(&u128, key);
	gcm_aes128_set_key(&gcm, key);
	poly1305_aes_set_key(&poly, key);
	hmac_sha256_set_key(&hmac, 32, key);
	for (uint32_t i = 0; i < N; i++) {
		rbudp_put_u32(nonce + 12, i);
		switch (m) {
		case M_COPY:
			memcpy(sink, dgram + RBUDP_DGRAM_HDR, PL);
			__asm__ volatile("" : : "r"(sink) : "memory");
			break;
		case M_TSEAL:
			rbudp_dgram_seal(&keys_token, dgram, i, 1, dgram + RBUDP_DGRAM_HDR, PL);
			__asm__ volatile("" : : "r"(dgram) : "memory");
			break;
		case M_TCHECK:
			rbudp_put_u32(dgram, i);
			if (rbudp_dgram_check(&keys_token, &su, 1, dgram, sizeof(dgram), false, &seq,
					      &plen) != RBUDP_DGRAM_OK)
				abort();
			break;
		case M_SEAL:
			rbudp_dgram_seal(&keys, dgram, i, 1, dgram + RBUDP_DGRAM_HDR, PL);
			break;
		case M_CHECK:
			rbudp_put_u32(dgram, i);	/* a wrong tag costs the same */
			(void)rbudp_dgram_check(&keys, &su, 1, dgram, sizeof(dgram), false, &seq,
						&plen);
			break;
		case M_UMAC64:
			UMAC_PAYLOAD(64, &u64, nonce);
			break;
		case M_UMAC32:
			UMAC_PAYLOAD(32, &u32, nonce);
			break;
		case M_UMAC128:
			UMAC_PAYLOAD(128, &u128, nonce);
			break;
		case M_GMAC:
			gcm_aes128_set_iv(&gcm, 12, nonce + 4);
			gcm_aes128_update(&gcm, PL, dgram + RBUDP_DGRAM_HDR);
			gcm_aes128_digest(&gcm, 16, tag);
			break;
		case M_POLY:
			poly1305_aes_set_nonce(&poly, nonce);
			poly1305_aes_update(&poly, PL, dgram + RBUDP_DGRAM_HDR);
			poly1305_aes_digest(&poly, 16, tag);
			break;
		case M_HMAC:
			hmac_sha256_update(&hmac, PL, dgram + RBUDP_DGRAM_HDR);
			hmac_sha256_digest(&hmac, 32, tag);
			break;
		}
	}
}

int main(void)
{
	static const uint8_t ikm[32] = { 1 }, ns[32] = { 2 }, nr[32] = { 3 };
	double best[M_COUNT];
	size_t big = 256u << 20;
	uint8_t *file = malloc(big), d[RBUDP_DIGEST_LEN];
	double sha_best = 1e30;

	if (!file)
		return 1;
	memset(file, 0x5a, big);
	for (size_t i = 0; i < sizeof(dgram); i++)
		dgram[i] = (uint8_t)(i * 13);
	rbudp_auth_keys_derive(&keys, RBUDP_AUTH_PSK, ikm, sizeof(ikm), ns, nr, true);
	rbudp_auth_keys_derive(&keys_token, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), ns, nr, true);
	rbudp_dgram_seal(&keys_token, dgram, 0, 1, dgram + RBUDP_DGRAM_HDR, PL);
	for (int m = 0; m < M_COUNT; m++)
		best[m] = 1e30;
	/* Interleaved passes: drift hits every method alike. */
	for (int p = 0; p < PASSES; p++) {
		for (int m = 0; m < M_COUNT; m++) {
			uint64_t t = rxb_mono_ns();

			pass(m);
			t = rxb_mono_ns() - t;
			if ((double)t / N < best[m])
				best[m] = (double)t / N;
		}
		{
			uint64_t t = rxb_mono_ns();

			rbudp_digest_buf(file, big, d);
			t = rxb_mono_ns() - t;
			if ((double)t < sha_best)
				sha_best = (double)t;
		}
	}
	printf("per %d-byte datagram, best of %d x %d:\n", PL, PASSES, N);
	for (int m = 0; m < M_COUNT; m++)
		printf("  %-22s %7.1f ns  %5.2f x copy\n", names[m], best[m], best[m] / best[M_COPY]);
	printf("SHA-256 file digest: %.2f GB/s (%.0f ns per %d bytes, %.2f x copy)\n",
	       (double)big / sha_best, sha_best * PL / (double)big, PL,
	       sha_best * PL / (double)big / best[M_COPY]);
	free(file);
	rbudp_auth_keys_clear(&keys);
	rbudp_auth_keys_clear(&keys_token);
	return 0;
}
