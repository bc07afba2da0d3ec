/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RBUDP session keys and authentication (protocol version 3).
 *
 * Every session starts with two fresh 32-byte nonces, the sender's (HELLO)
 * and the receiver's (CHALLENGE), both from getrandom(2). The input key is
 * either a pre-shared key (--key-file on both ends) or, without one, a
 * 32-byte random secret the receiver sends in CHALLENGE in the clear. From
 * it HKDF-SHA256 (RFC 5869) derives everything the session uses:
 *
 *	PRK = HKDF-Extract(salt = nonce_s || nonce_r, IKM = PSK or secret)
 *	OKM = HKDF-Expand(PRK, "rxbneck rbudp 3 session keys", 120 bytes)
 *	    = dgram_key[16] || session_id[8] || ctl_s2r[32] || ctl_r2s[32] || proof_key[32]
 *
 * Every datagram carries an 8-byte authenticator, chosen by the mode:
 *
 *  - Without a pre-shared key it is the session id itself, a token. The
 *    secret it derives from crossed the control connection in the clear,
 *    so whoever sees that connection could compute any tag anyway; what a
 *    per-datagram check can still do is keep out those who do not see it,
 *    and a random 64-bit token compared in constant time does that as
 *    well as a MAC would, at a nanosecond instead of 0.2 us per datagram.
 *    A blind guess passes with probability 2^-64; another session's
 *    datagrams carry another token. The payload is not covered: the file's
 *    SHA-256 (digest.h) catches changes on the way at the end.
 *  - With a pre-shared key it is a UMAC-64 tag (RFC 4418, Krovetz et al.;
 *    nettle's implementation) keyed with dgram_key, over the payload, with
 *    the 16-byte nonce session_id || round || seq. The nonce selects the
 *    pad that masks the hash, so a tag is valid for one session, round and
 *    seq only. The sender sends each seq at most once per round, so a nonce
 *    is never used twice under one key; a forgery succeeds with probability
 *    about 2^-60 per datagram tried, even for someone who sees the traffic.
 *    UMAC-64 is the cheapest MAC at that strength in a Debian library on
 *    the project's machine (bench/bench_rbudp_auth.c).
 *
 * Control frames after CHALLENGE (all but HELLO, CHALLENGE and ERROR) end
 * in a 16-byte tag: HMAC-SHA256 with the key of their direction over
 * counter || frame header || body, truncated. The counter counts the tagged
 * frames sent in that direction, so frames cannot be replayed, reordered
 * or reflected within a session; keys differ per session, so not across.
 *
 * With a pre-shared key the receiver proves it knows the key in CHALLENGE
 * (proof = HMAC-SHA256(proof_key, HELLO body || CHALLENGE body before the
 * proof)), and the sender proves it with the tag of SETUP, before the
 * receiver commits anything to the session.
 */
#ifndef RBUDP_AUTH_H
#define RBUDP_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nettle/umac.h>

#include "tools/rbudp/wire.h"

#define RBUDP_NONCE_LEN		32
#define RBUDP_SECRET_LEN	32
#define RBUDP_PROOF_LEN		32
#define RBUDP_SID_LEN		8
#define RBUDP_DGRAM_AUTH_LEN	8	/* session id, or UMAC-64 tag */
#define RBUDP_CTL_TAG_LEN	16	/* HMAC-SHA256, truncated */
#define RBUDP_PSK_MIN		16
#define RBUDP_PSK_MAX		1024

struct rbudp_keys {
	bool dgram_mac;			/* datagrams carry a UMAC-64 tag (pre-shared
					 * key), else the session id */
	struct umac64_ctx dgram;	/* keyed datagram MAC */
	uint8_t sid[RBUDP_SID_LEN];	/* the token, or the MAC nonce's first part */
	uint8_t ctl_tx[32], ctl_rx[32];	/* HMAC keys: frames we send, we receive */
	uint8_t proof_key[32];
	uint64_t ctl_tx_n, ctl_rx_n;	/* tagged frames sent / received */
};

/* Fill @buf from getrandom(2). 0 or a negative errno. */
int rbudp_auth_random(void *buf, size_t len);

/*
 * Derive the session keys from @ikm (the PSK with @mode RBUDP_AUTH_PSK,
 * else the clear secret) and both nonces. @sender picks which control key
 * is for sending.
 */
void rbudp_auth_keys_derive(struct rbudp_keys *k, enum rbudp_auth_mode mode, const uint8_t *ikm,
			    size_t ikm_len, const uint8_t nonce_s[RBUDP_NONCE_LEN],
			    const uint8_t nonce_r[RBUDP_NONCE_LEN], bool sender);
/*
 * The session keys as both ends derive them once the CHALLENGE is known:
 * from the pre-shared key @psk (@psk_len bytes) when there is one, else
 * from @c's clear secret; the nonces are @h's and @c's.
 */
void rbudp_auth_keys_derive_session(struct rbudp_keys *k, const uint8_t *psk, size_t psk_len,
				    const struct rbudp_hello *h, const struct rbudp_challenge *c,
				    bool sender);
/* Wipe the keys. */
void rbudp_auth_keys_clear(struct rbudp_keys *k);

/* The receiver's proof over the handshake transcript (pre-shared key mode). */
void rbudp_auth_proof(const struct rbudp_keys *k, const uint8_t *hello, size_t hello_len,
		      const uint8_t *challenge, size_t challenge_len,
		      uint8_t out[RBUDP_PROOF_LEN]);
/* Constant-time comparison of @n bytes. */
bool rbudp_auth_equal(const void *a, const void *b, size_t n);

/* Authenticator of datagram (@seq, @round) carrying @payload: the token or the tag. */
void rbudp_auth_dgram_tag(struct rbudp_keys *k, uint32_t seq, uint32_t round,
			  const uint8_t *payload, size_t len, uint8_t auth[RBUDP_DGRAM_AUTH_LEN]);
/* True when the datagram's authenticator is right (constant time in its bytes). */
bool rbudp_auth_dgram_verify(struct rbudp_keys *k, uint32_t seq, uint32_t round,
			     const uint8_t *payload, size_t len,
			     const uint8_t auth[RBUDP_DGRAM_AUTH_LEN]);

/*
 * Append the tag to the control frame in @frame (header + body of @len
 * bytes, with RBUDP_CTL_TAG_LEN bytes of room after it): the header's body
 * length grows by the tag. Returns the new frame length.
 */
size_t rbudp_auth_ctl_seal(struct rbudp_keys *k, uint8_t *frame, size_t len);
/*
 * Check the tag at the end of a received frame (@hdr: its 8-byte header,
 * @body/@body_len: the body including the tag). True when it verifies;
 * then the body without the tag is @body_len - RBUDP_CTL_TAG_LEN bytes.
 */
bool rbudp_auth_ctl_open(struct rbudp_keys *k, const uint8_t *hdr, const uint8_t *body,
			 size_t body_len);

/*
 * Read a pre-shared key file: at least RBUDP_PSK_MIN bytes (one trailing
 * newline dropped), at most RBUDP_PSK_MAX, not readable by group or others.
 * Returns the key length or -1 with @err set.
 */
int rbudp_auth_psk_load(const char *path, uint8_t key[RBUDP_PSK_MAX], char *err, size_t err_size);

#endif
