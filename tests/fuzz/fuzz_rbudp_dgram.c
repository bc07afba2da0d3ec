// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for what rxbneck-recv does with untrusted datagrams and
 * with the authenticated frames of protocol version 3: the datagram
 * classifier (tools/rbudp/dgram.h) over a transfer geometry the input
 * picks, the handshake decoders, and control-frame tags (auth.h).
 *
 * Properties checked besides "no crash, no sanitizer report":
 *  - a datagram classified OK names a packet inside the file, and its
 *    payload fits the packet's place in the file exactly;
 *  - a datagram the harness sealed is OK, and fails once one byte is
 *    flipped in what its authenticator covers: with a pre-shared key
 *    (UMAC-64) any byte (seq and round are in its nonce); without one
 *    (the token) the token's;
 *  - a frame sealed by one side opens on the other once, not twice, and
 *    not with a byte flipped.
 *
 * Input layout: byte 0 selects the part (mod 4). Datagrams (0: without a
 * key, 3: with a pre-shared key): u32 file bytes,
 * u16 payload bytes, u8 receiver round, then records [u8 flags][u16 len]
 * [len bytes]; flag 1: seal the record with the key first, flag 2: then
 * flip one byte (position from the next input byte). Handshake (1): a
 * frame body for each decoder. Tags (2): [u16 type][body].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/rbudp/auth.h"
#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/dgram.h"
#include "tools/rbudp/wire.h"

static struct rbudp_keys snd, rcv;		/* without a key: the token */
static struct rbudp_keys snd_psk, rcv_psk;	/* pre-shared key: UMAC-64 */
static uint8_t frame_buf[RBUDP_FRAME_MAX + RBUDP_CTL_TAG_LEN];

static void keys_init(void)
{
	static const uint8_t ikm[32] = { 1, 2, 3 }, ns[32] = { 4 }, nr[32] = { 5 };

	rbudp_auth_keys_derive(&snd, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), ns, nr, true);
	rbudp_auth_keys_derive(&rcv, RBUDP_AUTH_CLEAR, ikm, sizeof(ikm), ns, nr, false);
	rbudp_auth_keys_derive(&snd_psk, RBUDP_AUTH_PSK, ikm, sizeof(ikm), ns, nr, true);
	rbudp_auth_keys_derive(&rcv_psk, RBUDP_AUTH_PSK, ikm, sizeof(ikm), ns, nr, false);
}

static void fuzz_dgrams(const uint8_t *p, size_t n, bool psk)
{
	struct rbudp_keys *tx = psk ? &snd_psk : &snd, *rx = psk ? &rcv_psk : &rcv;
	struct rbudp_setup su = { 0 };
	struct rbudp_bitmap have;
	uint8_t d[2048 + RBUDP_DGRAM_HDR];
	uint32_t round;

	if (n < 7)
		return;
	su.file_bytes = rbudp_get_u32(p) % 2000000;
	if (!su.file_bytes)
		su.file_bytes = 1;
	su.payload_bytes = rbudp_get_u16(p + 4) % 2000;
	if (su.payload_bytes < RBUDP_PAYLOAD_MIN)
		su.payload_bytes = RBUDP_PAYLOAD_MIN;
	su.total_pkts = (uint32_t)rbudp_pkts_for(su.file_bytes, su.payload_bytes);
	round = p[6];
	p += 7;
	n -= 7;
	if (rbudp_bitmap_init(&have, su.total_pkts, false))
		return;
	while (n >= 3) {
		uint8_t flags = p[0];
		size_t len = rbudp_get_u16(p + 1) % sizeof(d);
		uint32_t seq = 0, plen = 0;
		enum rbudp_dgram_verdict v;

		p += 3;
		n -= 3;
		if (len > n)
			len = n;
		memcpy(d, p, len);
		p += len;
		n -= len;
		if ((flags & 1) && len >= RBUDP_DGRAM_HDR)
			rbudp_dgram_seal(tx, d, rbudp_get_u32(d), rbudp_get_u32(d + 4),
					 d + RBUDP_DGRAM_HDR, (uint32_t)(len - RBUDP_DGRAM_HDR));
		v = rbudp_dgram_check(rx, &su, round, d, (uint32_t)len, flags & 4, &seq, &plen);
		if (v == RBUDP_DGRAM_OK) {
			if (seq >= su.total_pkts || plen != len - RBUDP_DGRAM_HDR ||
			    (uint64_t)seq * su.payload_bytes + plen > su.file_bytes)
				abort();
			(void)rbudp_bitmap_test_and_set(&have, seq);
		}
		if ((flags & 3) == 3 && len > 0 && n > 0) {
			size_t at = p[0] % len;
			bool covered;

			d[at] ^= (uint8_t)(1u << (p[0] & 7));
			/* The tag covers every byte; the token only itself (the
			 * payload is the file digest's business). */
			covered = psk || (at >= RBUDP_DGRAM_AUTH_OFF && at < RBUDP_DGRAM_HDR);
			if (covered && rbudp_dgram_check(rx, &su, round, d, (uint32_t)len, flags & 4,
							 &seq, &plen) == RBUDP_DGRAM_OK)
				abort();	/* a changed datagram passed */
		}
	}
	rbudp_bitmap_finish(&have);
}

static void fuzz_handshake(const uint8_t *p, size_t n)
{
	struct rbudp_hello h;
	struct rbudp_challenge c;
	struct rbudp_setup su;
	struct rbudp_setup_ok ok;
	const char *why;
	uint16_t version;

	if (rbudp_hello_decode(p, n, &h, &version, &why) == 0) {
		rbudp_hello_encode(frame_buf, &h);
		if (memcmp(frame_buf + RBUDP_FRAME_HDR, p, RBUDP_HELLO_LEN) != 0)
			abort();
	}
	if (rbudp_challenge_decode(p, n, &c, &why) == 0) {
		rbudp_challenge_encode(frame_buf, &c);
		if (memcmp(frame_buf + RBUDP_FRAME_HDR, p, RBUDP_CHALLENGE_LEN) != 0)
			abort();
	}
	if (rbudp_setup_decode(p, n, &su, &why) == 0) {
		rbudp_setup_encode(frame_buf, &su);
		if (memcmp(frame_buf + RBUDP_FRAME_HDR, p, RBUDP_SETUP_LEN) != 0)
			abort();
	}
	(void)rbudp_setup_ok_decode(p, n, &ok, &why);
}

static void fuzz_tags(const uint8_t *p, size_t n)
{
	size_t len, sealed;
	uint16_t type;

	if (n < 2)
		return;
	type = rbudp_get_u16(p);
	p += 2;
	n -= 2;
	/* Whatever a peer sends, opening it with the receiver's keys is safe. */
	rbudp_put_u16(frame_buf, type);
	rbudp_put_u16(frame_buf + 2, 0);
	len = n < RBUDP_FRAME_MAX - RBUDP_FRAME_HDR ? n : RBUDP_FRAME_MAX - RBUDP_FRAME_HDR;
	rbudp_put_u32(frame_buf + 4, (uint32_t)len);
	memcpy(frame_buf + RBUDP_FRAME_HDR, p, len);
	(void)rbudp_auth_ctl_open(&rcv, frame_buf, frame_buf + RBUDP_FRAME_HDR, len);
	/* What our sender seals opens once on the other side. */
	sealed = rbudp_auth_ctl_seal(&snd, frame_buf, RBUDP_FRAME_HDR + len);
	if (!rbudp_auth_ctl_open(&rcv, frame_buf, frame_buf + RBUDP_FRAME_HDR, sealed - RBUDP_FRAME_HDR))
		abort();
	if (rbudp_auth_ctl_open(&rcv, frame_buf, frame_buf + RBUDP_FRAME_HDR, sealed - RBUDP_FRAME_HDR))
		abort();	/* replay */
	/* Keep both counters in step for the next input. */
	snd.ctl_tx_n = rcv.ctl_rx_n;
	if (len) {
		rbudp_auth_ctl_seal(&snd, frame_buf, RBUDP_FRAME_HDR + len);
		frame_buf[RBUDP_FRAME_HDR + p[0] % len] ^= 0x01;
		if (rbudp_auth_ctl_open(&rcv, frame_buf, frame_buf + RBUDP_FRAME_HDR,
					sealed - RBUDP_FRAME_HDR))
			abort();
		snd.ctl_tx_n = rcv.ctl_rx_n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		keys_init();
		ready = 1;
	}
	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0: fuzz_dgrams(data + 1, size - 1, false); break;
	case 1: fuzz_handshake(data + 1, size - 1); break;
	case 2: fuzz_tags(data + 1, size - 1); break;
	default: fuzz_dgrams(data + 1, size - 1, true); break;
	}
	return 0;
}
