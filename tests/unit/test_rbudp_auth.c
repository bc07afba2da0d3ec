// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/rbudp/auth: the primitives against their RFCs'
 * test vectors (UMAC-64: RFC 4418, HKDF-SHA256: RFC 5869, HMAC-SHA256:
 * RFC 4231), the session key schedule, the datagram token and both tags
 * against a second computation written out from docs/rbudp.md, and that
 * every change to a tagged datagram or frame (byte, sequence, round,
 * session, counter, direction) and every wrong token is rejected.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <nettle/umac.h>

#include "tools/rbudp/auth.h"
#include "tools/rbudp/wire.h"
#include "tests/unit/unit_main.h"

static void unhex(const char *h, uint8_t *out)
{
	for (size_t i = 0; h[2 * i]; i++) {
		unsigned v;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void test_umac64_rfc4418(void **state)
{
	static const struct { const char *part; size_t reps; const char *tag; } v[] = {
		{ "", 1, "6E155FAD26900BE1" },
		{ "a", 3, "44B5CB542F220104" },
		{ "a", 1 << 10, "26BF2F5D60118BD9" },
		{ "abc", 1, "D4D7B9F6BD4FBFCF" },
		{ "abc", 500, "D4CF26DDEFD5C01A" },
	};
	struct umac64_ctx c;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t tag[8], want[8];

		umac64_set_key(&c, (const uint8_t *)"abcdefghijklmnop");
		umac64_set_nonce(&c, 8, (const uint8_t *)"bcdefghi");
		for (size_t r = 0; r < v[i].reps; r++)
			umac64_update(&c, strlen(v[i].part), (const uint8_t *)v[i].part);
		umac64_digest(&c, 8, tag);
		unhex(v[i].tag, want);
		assert_memory_equal(tag, want, 8);
	}
}

static void test_hkdf_hmac_rfc_vectors(void **state)
{
	uint8_t ikm[22], salt[13], info[10], prk[32], okm[42], want[42], mac[32], wmac[32];
	struct hmac_sha256_ctx h;

	(void)state;
	memset(ikm, 0x0b, sizeof(ikm));
	for (int i = 0; i < 13; i++)
		salt[i] = (uint8_t)i;
	for (int i = 0; i < 10; i++)
		info[i] = (uint8_t)(0xf0 + i);
	hmac_sha256_set_key(&h, sizeof(salt), salt);
	hkdf_extract(&h, (nettle_hash_update_func *)hmac_sha256_update,
		     (nettle_hash_digest_func *)hmac_sha256_digest, 32, sizeof(ikm), ikm, prk);
	hmac_sha256_set_key(&h, sizeof(prk), prk);
	hkdf_expand(&h, (nettle_hash_update_func *)hmac_sha256_update,
		    (nettle_hash_digest_func *)hmac_sha256_digest, 32, sizeof(info), info,
		    sizeof(okm), okm);
	unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
	      "34007208d5b887185865", want);
	assert_memory_equal(okm, want, sizeof(okm));		/* RFC 5869 A.1 */
	hmac_sha256_set_key(&h, 4, (const uint8_t *)"Jefe");
	hmac_sha256_update(&h, 28, (const uint8_t *)"what do ya want for nothing?");
	hmac_sha256_digest(&h, 32, mac);
	unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", wmac);
	assert_memory_equal(mac, wmac, 32);			/* RFC 4231 case 2 */
}

static const uint8_t nonce_s[32] = { 1, 2, 3, [31] = 0x5f };
static const uint8_t nonce_r[32] = { 0xa0, [17] = 0x11, [31] = 0x99 };
static const uint8_t ikm[32] = { 0x42, [30] = 7 };

static void hmac256(const uint8_t *key, size_t klen, const uint8_t *a, size_t alen,
		    const uint8_t *b, size_t blen, uint8_t out[32])
{
	struct hmac_sha256_ctx h;

	hmac_sha256_set_key(&h, klen, key);
	hmac_sha256_update(&h, alen, a);
	hmac_sha256_update(&h, blen, b);
	hmac_sha256_digest(&h, 32, out);
}

/* RFC 5869 written out: PRK = HMAC(salt, IKM); T(i) = HMAC(PRK, T(i-1) | info | i). */
static void hkdf_by_hand(uint8_t okm[128])
{
	static const char info[] = "rxbneck rbudp 3 session keys";
	uint8_t salt[64], prk[32], t[32 + sizeof(info)], block[32];
	size_t tlen = 0;

	memcpy(salt, nonce_s, 32);
	memcpy(salt + 32, nonce_r, 32);
	hmac256(salt, 64, ikm, sizeof(ikm), NULL, 0, prk);
	for (uint8_t i = 1; i <= 4; i++) {
		uint8_t in[32 + sizeof(info)];
		size_t n = 0;

		memcpy(in, t, tlen);
		n = tlen;
		memcpy(in + n, info, sizeof(info) - 1);
		n += sizeof(info) - 1;
		hmac256(prk, 32, in, n, &i, 1, block);
		memcpy(okm + 32 * (i - 1), block, 32);
		memcpy(t, block, 32);
		tlen = 32;
	}
}

static void test_key_schedule_second_computation(void **state)
{
	struct rbudp_keys *snd = malloc(sizeof(*snd)), *rcv = malloc(sizeof(*rcv));
	uint8_t okm[128], payload[100], tag[8], want[8];
	uint8_t nonce[16];
	struct umac64_ctx u;

	(void)state;
	assert_non_null(snd);
	assert_non_null(rcv);
	hkdf_by_hand(okm);
	rbudp_auth_keys_derive(snd, RBUDP_AUTH_PSK, ikm, sizeof(ikm), nonce_s, nonce_r, true);
	rbudp_auth_keys_derive(rcv, RBUDP_AUTH_PSK, ikm, sizeof(ikm), nonce_s, nonce_r, false);
	/* Layout: dgram_key[16] sid[8] ctl_s2r[32] ctl_r2s[32] proof_key[32]. */
	assert_memory_equal(snd->sid, okm + 16, 8);
	assert_memory_equal(snd->ctl_tx, okm + 24, 32);
	assert_memory_equal(snd->ctl_rx, okm + 56, 32);
	assert_memory_equal(rcv->ctl_rx, okm + 24, 32);
	assert_memory_equal(rcv->ctl_tx, okm + 56, 32);
	assert_memory_equal(snd->proof_key, okm + 88, 32);

	/* Datagram tag: UMAC-64(dgram_key, nonce = sid | round | seq, payload). */
	for (int i = 0; i < 100; i++)
		payload[i] = (uint8_t)(i * 7);
	rbudp_auth_dgram_tag(snd, 5, 2, payload, sizeof(payload), tag);
	umac64_set_key(&u, okm);
	memcpy(nonce, okm + 16, 8);
	rbudp_put_u32(nonce + 8, 2);
	rbudp_put_u32(nonce + 12, 5);
	umac64_set_nonce(&u, 16, nonce);
	umac64_update(&u, sizeof(payload), payload);
	umac64_digest(&u, 8, want);
	assert_memory_equal(tag, want, 8);
	assert_true(rbudp_auth_dgram_verify(rcv, 5, 2, payload, sizeof(payload), tag));
	/* Without a pre-shared key: the same keys, and the session id is the
	 * token every datagram carries. */
	rbudp_auth_keys_derive(snd, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), nonce_s, nonce_r, true);
	assert_memory_equal(snd->ctl_tx, okm + 24, 32);
	rbudp_auth_dgram_tag(snd, 5, 2, payload, sizeof(payload), tag);
	assert_memory_equal(tag, okm + 16, 8);
	free(snd);
	free(rcv);
}

static void test_dgram_rejects_every_change(void **state)
{
	struct rbudp_keys *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint8_t payload[64], tag[8], other_nonce[32] = { 9 };

	(void)state;
	rbudp_auth_keys_derive(a, RBUDP_AUTH_PSK, ikm, sizeof(ikm), nonce_s, nonce_r, false);
	rbudp_auth_keys_derive(b, RBUDP_AUTH_PSK, ikm, sizeof(ikm), other_nonce, nonce_r, false);
	memset(payload, 0x33, sizeof(payload));
	rbudp_auth_dgram_tag(a, 77, 1, payload, sizeof(payload), tag);
	assert_true(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload), tag));
	for (size_t i = 0; i < sizeof(payload); i++) {	/* every byte, one bit */
		payload[i] ^= 0x04;
		assert_false(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload), tag));
		payload[i] ^= 0x04;
	}
	for (int bit = 0; bit < 64; bit++) {		/* every tag bit */
		tag[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		assert_false(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload), tag));
		tag[bit / 8] ^= (uint8_t)(1 << (bit % 8));
	}
	assert_false(rbudp_auth_dgram_verify(a, 78, 1, payload, sizeof(payload), tag));
	assert_false(rbudp_auth_dgram_verify(a, 77, 2, payload, sizeof(payload), tag));
	assert_false(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload) - 1, tag));
	/* Another session (one nonce differs): a replayed datagram fails. */
	assert_false(rbudp_auth_dgram_verify(b, 77, 1, payload, sizeof(payload), tag));
	free(a);
	free(b);
}

/*
 * Without a pre-shared key: the token is the session's, the same for every
 * datagram of the session whatever it carries (the payload is the digest's
 * business), and any other value - one bit off, another session's - fails.
 */
static void test_dgram_token(void **state)
{
	struct rbudp_keys *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint8_t payload[64], tok[8], other[8], other_nonce[32] = { 9 };

	(void)state;
	rbudp_auth_keys_derive(a, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), nonce_s, nonce_r, true);
	rbudp_auth_keys_derive(b, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), nonce_s, other_nonce, false);
	memset(payload, 0x33, sizeof(payload));
	rbudp_auth_dgram_tag(a, 77, 1, payload, sizeof(payload), tok);
	assert_memory_equal(tok, a->sid, 8);
	assert_true(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload), tok));
	assert_true(rbudp_auth_dgram_verify(a, 3, 9, payload, 1, tok));
	for (int bit = 0; bit < 64; bit++) {		/* every token bit */
		tok[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		assert_false(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload), tok));
		tok[bit / 8] ^= (uint8_t)(1 << (bit % 8));
	}
	/* A datagram of another session (one nonce differs) carries its token. */
	rbudp_auth_dgram_tag(b, 77, 1, payload, sizeof(payload), other);
	assert_memory_not_equal(other, tok, 8);
	assert_false(rbudp_auth_dgram_verify(a, 77, 1, payload, sizeof(payload), other));
	assert_false(rbudp_auth_dgram_verify(b, 77, 1, payload, sizeof(payload), tok));
	/* Nor does a session's token pass where the tag is required. */
	rbudp_auth_keys_derive(b, RBUDP_AUTH_PSK, ikm, sizeof(ikm), nonce_s, nonce_r, false);
	assert_false(rbudp_auth_dgram_verify(b, 77, 1, payload, sizeof(payload), tok));
	free(a);
	free(b);
}

static void test_ctl_tags(void **state)
{
	struct rbudp_keys *snd = malloc(sizeof(*snd)), *rcv = malloc(sizeof(*rcv));
	uint8_t f[RBUDP_FRAME_HDR + RBUDP_BLAST_DONE_LEN + RBUDP_CTL_TAG_LEN];
	uint8_t copy[sizeof(f)], want[32], ctr[8] = { 0 };
	struct rbudp_blast_done d = { .round = 1, .pkts_sent = 10 };
	size_t n;

	(void)state;
	rbudp_auth_keys_derive(snd, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), nonce_s, nonce_r, true);
	rbudp_auth_keys_derive(rcv, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), nonce_s, nonce_r, false);
	n = rbudp_auth_ctl_seal(snd, f, rbudp_blast_done_encode(f, &d));
	assert_int_equal(n, sizeof(f));
	assert_int_equal(rbudp_get_u32(f + 4), RBUDP_BLAST_DONE_LEN + RBUDP_CTL_TAG_LEN);
	/* Tag = HMAC-SHA256(ctl_s2r, counter 0 | header | body), first 16 bytes. */
	{
		struct hmac_sha256_ctx h;

		hmac_sha256_set_key(&h, 32, snd->ctl_tx);
		hmac_sha256_update(&h, 8, ctr);
		hmac_sha256_update(&h, RBUDP_FRAME_HDR + RBUDP_BLAST_DONE_LEN, f);
		hmac_sha256_digest(&h, 32, want);
	}
	assert_memory_equal(f + RBUDP_FRAME_HDR + RBUDP_BLAST_DONE_LEN, want, RBUDP_CTL_TAG_LEN);
	memcpy(copy, f, sizeof(f));
	/* Reflected back to its sender: the direction's key differs. */
	assert_false(rbudp_auth_ctl_open(snd, f, f + RBUDP_FRAME_HDR, n - RBUDP_FRAME_HDR));
	/* Tampered. */
	f[RBUDP_FRAME_HDR + 3] ^= 1;
	assert_false(rbudp_auth_ctl_open(rcv, f, f + RBUDP_FRAME_HDR, n - RBUDP_FRAME_HDR));
	f[RBUDP_FRAME_HDR + 3] ^= 1;
	assert_true(rbudp_auth_ctl_open(rcv, f, f + RBUDP_FRAME_HDR, n - RBUDP_FRAME_HDR));
	/* Replayed: the counter moved on. */
	assert_false(rbudp_auth_ctl_open(rcv, copy, copy + RBUDP_FRAME_HDR, n - RBUDP_FRAME_HDR));
	/* Too short to hold a tag. */
	assert_false(rbudp_auth_ctl_open(rcv, f, f + RBUDP_FRAME_HDR, RBUDP_CTL_TAG_LEN - 1));
	free(snd);
	free(rcv);
}

static void test_proof_needs_the_same_key(void **state)
{
	struct rbudp_keys *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint8_t pa[32], pb[32], other[32] = { 0x43 };
	const uint8_t hello[48] = { 1 }, chal[72] = { 2 };

	(void)state;
	rbudp_auth_keys_derive(a, RBUDP_AUTH_PSK, ikm, sizeof(ikm), nonce_s, nonce_r, true);
	rbudp_auth_keys_derive(b, RBUDP_AUTH_PSK, ikm, sizeof(ikm), nonce_s, nonce_r, false);
	rbudp_auth_proof(a, hello, sizeof(hello), chal, sizeof(chal), pa);
	rbudp_auth_proof(b, hello, sizeof(hello), chal, sizeof(chal), pb);
	assert_true(rbudp_auth_equal(pa, pb, 32));
	rbudp_auth_keys_derive(b, RBUDP_AUTH_PSK, other, sizeof(other), nonce_s, nonce_r, false);
	rbudp_auth_proof(b, hello, sizeof(hello), chal, sizeof(chal), pb);
	assert_false(rbudp_auth_equal(pa, pb, 32));
	free(a);
	free(b);
}

static void write_key(const char *path, const char *data, size_t len, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_psk_files(void **state)
{
	char path[] = "/tmp/rbudp-psk-XXXXXX", err[300];
	uint8_t key[RBUDP_PSK_MAX];
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_key(path, "0123456789abcdef0123\n", 21, 0600);
	assert_int_equal(rbudp_auth_psk_load(path, key, err, sizeof(err)), 20);	/* newline dropped */
	assert_memory_equal(key, "0123456789abcdef0123", 20);
	write_key(path, "0123456789abcdef0123\n", 21, 0644);
	assert_int_equal(rbudp_auth_psk_load(path, key, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "chmod 600"));
	write_key(path, "short", 5, 0600);
	assert_int_equal(rbudp_auth_psk_load(path, key, err, sizeof(err)), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rbudp_auth_psk_load(path, key, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_umac64_rfc4418),
	cmocka_unit_test(test_hkdf_hmac_rfc_vectors),
	cmocka_unit_test(test_key_schedule_second_computation),
	cmocka_unit_test(test_dgram_rejects_every_change),
	cmocka_unit_test(test_dgram_token),
	cmocka_unit_test(test_ctl_tags),
	cmocka_unit_test(test_proof_needs_the_same_key),
	cmocka_unit_test(test_psk_files),
)
