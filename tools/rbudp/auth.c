// SPDX-License-Identifier: GPL-2.0-or-later
/* RBUDP session keys, datagram and control-frame tags. See auth.h. */
#include "tools/rbudp/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "common/util.h"
#include "tools/rbudp/wire.h"

static const char kdf_info[] = "rxbneck rbudp 3 session keys";

int rbudp_auth_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void rbudp_auth_keys_derive(struct rbudp_keys *k, enum rbudp_auth_mode mode, const uint8_t *ikm,
			    size_t ikm_len, const uint8_t nonce_s[RBUDP_NONCE_LEN],
			    const uint8_t nonce_r[RBUDP_NONCE_LEN], bool sender)
{
	uint8_t salt[2 * RBUDP_NONCE_LEN], prk[SHA256_DIGEST_SIZE];
	uint8_t okm[UMAC_KEY_SIZE + RBUDP_SID_LEN + 32 + 32 + 32];
	struct hmac_sha256_ctx h;
	const uint8_t *p = okm;

	memset(k, 0, sizeof(*k));
	k->dgram_mac = mode == RBUDP_AUTH_PSK;
	memcpy(salt, nonce_s, RBUDP_NONCE_LEN);
	memcpy(salt + RBUDP_NONCE_LEN, nonce_r, RBUDP_NONCE_LEN);
	hmac_sha256_set_key(&h, sizeof(salt), salt);
	hkdf_extract(&h, (nettle_hash_update_func *)hmac_sha256_update,
		     (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE,
		     ikm_len, ikm, prk);
	hmac_sha256_set_key(&h, sizeof(prk), prk);
	hkdf_expand(&h, (nettle_hash_update_func *)hmac_sha256_update,
		    (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE,
		    sizeof(kdf_info) - 1, (const uint8_t *)kdf_info, sizeof(okm), okm);
	umac64_set_key(&k->dgram, p);
	p += UMAC_KEY_SIZE;
	memcpy(k->sid, p, RBUDP_SID_LEN);
	p += RBUDP_SID_LEN;
	memcpy(sender ? k->ctl_tx : k->ctl_rx, p, 32);
	p += 32;
	memcpy(sender ? k->ctl_rx : k->ctl_tx, p, 32);
	p += 32;
	memcpy(k->proof_key, p, 32);
	explicit_bzero(okm, sizeof(okm));
	explicit_bzero(prk, sizeof(prk));
	explicit_bzero(&h, sizeof(h));
}

void rbudp_auth_keys_derive_session(struct rbudp_keys *k, const uint8_t *psk, size_t psk_len,
				    const struct rbudp_hello *h, const struct rbudp_challenge *c,
				    bool sender)
{
	if (psk)
		rbudp_auth_keys_derive(k, RBUDP_AUTH_PSK, psk, psk_len, h->nonce, c->nonce, sender);
	else
		rbudp_auth_keys_derive(k, RBUDP_AUTH_CLEAR, c->secret, sizeof(c->secret), h->nonce,
				       c->nonce, sender);
}

void rbudp_auth_keys_clear(struct rbudp_keys *k)
{
	explicit_bzero(k, sizeof(*k));
}

void rbudp_auth_proof(const struct rbudp_keys *k, const uint8_t *hello, size_t hello_len,
		      const uint8_t *challenge, size_t challenge_len,
		      uint8_t out[RBUDP_PROOF_LEN])
{
	struct hmac_sha256_ctx h;

	hmac_sha256_set_key(&h, sizeof(k->proof_key), k->proof_key);
	hmac_sha256_update(&h, hello_len, hello);
	hmac_sha256_update(&h, challenge_len, challenge);
	hmac_sha256_digest(&h, RBUDP_PROOF_LEN, out);
}

bool rbudp_auth_equal(const void *a, const void *b, size_t n)
{
	return memeql_sec(a, b, n) != 0;
}

/* --------------------------------------------------------- datagrams -- */

static void dgram_mac(struct rbudp_keys *k, uint32_t seq, uint32_t round,
		      const uint8_t *payload, size_t len, uint8_t tag[RBUDP_DGRAM_AUTH_LEN])
{
	uint8_t nonce[UMAC_MAX_NONCE_SIZE];

	memcpy(nonce, k->sid, RBUDP_SID_LEN);
	rbudp_put_u32(nonce + 8, round);
	rbudp_put_u32(nonce + 12, seq);
	umac64_set_nonce(&k->dgram, sizeof(nonce), nonce);
	umac64_update(&k->dgram, len, payload);
	umac64_digest(&k->dgram, RBUDP_DGRAM_AUTH_LEN, tag);
}

void rbudp_auth_dgram_tag(struct rbudp_keys *k, uint32_t seq, uint32_t round,
			  const uint8_t *payload, size_t len, uint8_t auth[RBUDP_DGRAM_AUTH_LEN])
{
	if (k->dgram_mac)
		dgram_mac(k, seq, round, payload, len, auth);
	else
		memcpy(auth, k->sid, RBUDP_DGRAM_AUTH_LEN);
}

bool rbudp_auth_dgram_verify(struct rbudp_keys *k, uint32_t seq, uint32_t round,
			     const uint8_t *payload, size_t len,
			     const uint8_t auth[RBUDP_DGRAM_AUTH_LEN])
{
	uint64_t want, got;

	if (k->dgram_mac) {
		uint8_t tag[RBUDP_DGRAM_AUTH_LEN];

		dgram_mac(k, seq, round, payload, len, tag);
		return memeql_sec(tag, auth, sizeof(tag)) != 0;
	}
	/* The token: one 64-bit XOR, whose time does not depend on which
	 * bytes differ. */
	memcpy(&want, k->sid, sizeof(want));
	memcpy(&got, auth, sizeof(got));
	return (want ^ got) == 0;
}

/* ---------------------------------------------------- control frames -- */

static void ctl_mac(const uint8_t key[32], uint64_t counter, const uint8_t *hdr,
		    const uint8_t *body, size_t body_len, uint8_t tag[RBUDP_CTL_TAG_LEN])
{
	struct hmac_sha256_ctx h;
	uint8_t ctr[8];

	rbudp_put_u64(ctr, counter);
	hmac_sha256_set_key(&h, 32, key);
	hmac_sha256_update(&h, sizeof(ctr), ctr);
	hmac_sha256_update(&h, RBUDP_FRAME_HDR, hdr);
	hmac_sha256_update(&h, body_len, body);
	hmac_sha256_digest(&h, RBUDP_CTL_TAG_LEN, tag);
}

size_t rbudp_auth_ctl_seal(struct rbudp_keys *k, uint8_t *frame, size_t len)
{
	rbudp_put_u32(frame + 4, (uint32_t)(len - RBUDP_FRAME_HDR + RBUDP_CTL_TAG_LEN));
	ctl_mac(k->ctl_tx, k->ctl_tx_n++, frame, frame + RBUDP_FRAME_HDR, len - RBUDP_FRAME_HDR,
		frame + len);
	return len + RBUDP_CTL_TAG_LEN;
}

bool rbudp_auth_ctl_open(struct rbudp_keys *k, const uint8_t *hdr, const uint8_t *body,
			 size_t body_len)
{
	uint8_t want[RBUDP_CTL_TAG_LEN];

	if (body_len < RBUDP_CTL_TAG_LEN)
		return false;
	ctl_mac(k->ctl_rx, k->ctl_rx_n, hdr, body, body_len - RBUDP_CTL_TAG_LEN, want);
	if (!memeql_sec(want, body + body_len - RBUDP_CTL_TAG_LEN, RBUDP_CTL_TAG_LEN))
		return false;
	k->ctl_rx_n++;
	return true;
}

/* ------------------------------------------------------- key files -- */

int rbudp_auth_psk_load(const char *path, uint8_t key[RBUDP_PSK_MAX], char *err, size_t err_size)
{
	uint8_t buf[RBUDP_PSK_MAX + 2];
	struct stat st;
	size_t len = 0;
	int fd;

	fd = rxb_open_regular(AT_FDCWD, path, 0, &st);
	if (fd == -EINVAL) {
		snprintf(err, err_size, "--key-file %s: not a regular file", path);
		return -1;
	}
	if (fd < 0) {
		snprintf(err, err_size, "--key-file %s: %s", path, strerror(-fd));
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(err, err_size, "--key-file %s: readable by group or others (mode %04o); "
			 "chmod 600 it", path, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, err_size, "--key-file %s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0 || (len += (size_t)n) == sizeof(buf))
			break;
	}
	close(fd);
	if (len && buf[len - 1] == '\n')
		len--;
	if (len < RBUDP_PSK_MIN || len > RBUDP_PSK_MAX) {
		snprintf(err, err_size, "--key-file %s: %zu bytes; a key has %d to %d (e.g. "
			 "head -c 32 /dev/urandom > FILE)", path, len, RBUDP_PSK_MIN, RBUDP_PSK_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	memcpy(key, buf, len);
	explicit_bzero(buf, sizeof(buf));
	return (int)len;
fail:
	close(fd);
	return -1;
}
