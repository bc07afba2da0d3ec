// SPDX-License-Identifier: GPL-2.0-or-later
/* RBUDP datagram and control-frame codec. See wire.h and docs/rbudp.md. */
#include "tools/rbudp/wire.h"

#include <errno.h>
#include <string.h>

#include "tools/rbudp/bitmap.h"

uint64_t rbudp_pkts_for(uint64_t file_bytes, uint32_t payload_bytes)
{
	uint64_t n;

	if (payload_bytes == 0)
		return 0;
	n = file_bytes / payload_bytes + (file_bytes % payload_bytes != 0);
	return n > RBUDP_MAX_PKTS ? 0 : n;
}

const char *rbudp_msg_name(uint16_t type)
{
	switch (type) {
	case RBUDP_MSG_HELLO:		return "HELLO";
	case RBUDP_MSG_CHALLENGE:	return "CHALLENGE";
	case RBUDP_MSG_SETUP:		return "SETUP";
	case RBUDP_MSG_SETUP_OK:	return "SETUP_OK";
	case RBUDP_MSG_BLAST_DONE:	return "BLAST_DONE";
	case RBUDP_MSG_MISSING:		return "MISSING";
	case RBUDP_MSG_COMPLETE:	return "COMPLETE";
	case RBUDP_MSG_VERIFIED:	return "VERIFIED";
	case RBUDP_MSG_ERROR:		return "ERROR";
	default:			return "unknown";
	}
}

bool rbudp_msg_tagged(uint16_t type)
{
	return type != RBUDP_MSG_HELLO && type != RBUDP_MSG_CHALLENGE && type != RBUDP_MSG_ERROR;
}

static int bad(const char **why, const char *what)
{
	*why = what;
	return -EBADMSG;
}

int rbudp_frame_hdr_decode(const uint8_t hdr[RBUDP_FRAME_HDR], uint16_t *type,
			   uint32_t *body_len, const char **why)
{
	uint16_t t = rbudp_get_u16(hdr);
	uint32_t len = rbudp_get_u32(hdr + 4);
	uint32_t min, max;

	if (rbudp_get_u16(hdr + 2) != 0)
		return bad(why, "frame flags must be zero");
	switch (t) {
	case RBUDP_MSG_HELLO:	   min = max = RBUDP_HELLO_LEN; break;
	case RBUDP_MSG_CHALLENGE:  min = max = RBUDP_CHALLENGE_LEN; break;
	case RBUDP_MSG_SETUP:	   min = max = RBUDP_SETUP_LEN; break;
	case RBUDP_MSG_SETUP_OK:   min = max = RBUDP_SETUP_OK_LEN; break;
	case RBUDP_MSG_BLAST_DONE: min = max = RBUDP_BLAST_DONE_LEN; break;
	case RBUDP_MSG_COMPLETE:   min = max = RBUDP_COMPLETE_LEN; break;
	case RBUDP_MSG_VERIFIED:   min = max = RBUDP_VERIFIED_LEN; break;
	case RBUDP_MSG_MISSING:
		min = RBUDP_MISSING_HDR_LEN;
		max = RBUDP_MISSING_HDR_LEN + RBUDP_SEG_MAX_DATA;
		break;
	case RBUDP_MSG_ERROR:
		min = 4;
		max = 4 + RBUDP_ERROR_TEXT_MAX;
		break;
	default:
		return bad(why, "unknown frame type");
	}
	if (rbudp_msg_tagged(t)) {
		min += RBUDP_TAG_LEN;
		max += RBUDP_TAG_LEN;
	}
	if (len < min || len > max)
		return bad(why, "frame body length out of bounds for its type");
	*type = t;
	*body_len = len;
	return 0;
}

static size_t put_hdr(uint8_t *buf, uint16_t type, uint32_t body_len)
{
	rbudp_put_u16(buf, type);
	rbudp_put_u16(buf + 2, 0);
	rbudp_put_u32(buf + 4, body_len);
	return RBUDP_FRAME_HDR;
}

/* ----------------------------------------------------------- HELLO -- */

/* HELLO and CHALLENGE begin alike: magic, version, mode, nonce. */
static uint8_t *put_intro(uint8_t *buf, uint16_t type, uint32_t len, uint16_t auth,
			  const uint8_t nonce[RBUDP_NONCE_BYTES])
{
	uint8_t *b = buf + put_hdr(buf, type, len);

	rbudp_put_u32(b, RBUDP_MAGIC);
	rbudp_put_u16(b + 4, RBUDP_VERSION);
	rbudp_put_u16(b + 6, auth);
	memcpy(b + 8, nonce, RBUDP_NONCE_BYTES);
	return b;
}

size_t rbudp_hello_encode(uint8_t *buf, const struct rbudp_hello *m)
{
	uint8_t *b = put_intro(buf, RBUDP_MSG_HELLO, RBUDP_HELLO_LEN, m->auth, m->nonce);

	memset(b + 40, 0, 8);
	return RBUDP_FRAME_HDR + RBUDP_HELLO_LEN;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

int rbudp_hello_decode(const uint8_t *b, size_t len, struct rbudp_hello *m,
		       uint16_t *version, const char **why)
{
	if (len != RBUDP_HELLO_LEN)
		return bad(why, "first frame has the wrong length");
	if (rbudp_get_u32(b) != RBUDP_MAGIC)
		return bad(why, "first frame magic is not \"RBUD\" (not an RBUDP sender?)");
	*version = rbudp_get_u16(b + 4);
	if (*version != RBUDP_VERSION) {
		*why = "unsupported protocol version";
		return -EPROTONOSUPPORT;
	}
	m->auth = rbudp_get_u16(b + 6);
	if (m->auth != RBUDP_AUTH_CLEAR && m->auth != RBUDP_AUTH_PSK)
		return bad(why, "HELLO names an unknown authentication mode");
	memcpy(m->nonce, b + 8, RBUDP_NONCE_BYTES);
	if (!all_zero(b + 40, 8))
		return bad(why, "HELLO reserved field is not zero");
	return 0;
}

/* ------------------------------------------------------- CHALLENGE -- */

size_t rbudp_challenge_encode(uint8_t *buf, const struct rbudp_challenge *m)
{
	uint8_t *b = put_intro(buf, RBUDP_MSG_CHALLENGE, RBUDP_CHALLENGE_LEN, m->auth, m->nonce);

	memcpy(b + 40, m->secret, 32);
	memcpy(b + 72, m->proof, 32);
	return RBUDP_FRAME_HDR + RBUDP_CHALLENGE_LEN;
}

int rbudp_challenge_decode(const uint8_t *b, size_t len, struct rbudp_challenge *m,
			   const char **why)
{
	if (len != RBUDP_CHALLENGE_LEN)
		return bad(why, "CHALLENGE has the wrong length");
	if (rbudp_get_u32(b) != RBUDP_MAGIC)
		return bad(why, "CHALLENGE magic is not \"RBUD\" (not an RBUDP receiver?)");
	if (rbudp_get_u16(b + 4) != RBUDP_VERSION)
		return bad(why, "receiver speaks another protocol version");
	m->auth = rbudp_get_u16(b + 6);
	if (m->auth != RBUDP_AUTH_CLEAR && m->auth != RBUDP_AUTH_PSK)
		return bad(why, "CHALLENGE names an unknown authentication mode");
	memcpy(m->nonce, b + 8, RBUDP_NONCE_BYTES);
	memcpy(m->secret, b + 40, 32);
	memcpy(m->proof, b + 72, 32);
	if (m->auth == RBUDP_AUTH_PSK ? !all_zero(m->secret, 32) : !all_zero(m->proof, 32))
		return bad(why, "CHALLENGE carries both a secret and a proof");
	return 0;
}

/* ----------------------------------------------------------- SETUP -- */

size_t rbudp_setup_encode(uint8_t *buf, const struct rbudp_setup *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_SETUP, RBUDP_SETUP_LEN);

	rbudp_put_u16(b, m->udp_port);
	rbudp_put_u16(b + 2, 0);
	rbudp_put_u32(b + 4, m->payload_bytes);
	rbudp_put_u32(b + 8, m->total_pkts);
	rbudp_put_u64(b + 12, m->file_bytes);
	rbudp_put_u64(b + 20, m->one_way_delay_ns);
	memcpy(b + 28, m->digest, RBUDP_DIGEST_LEN);
	return RBUDP_FRAME_HDR + RBUDP_SETUP_LEN;
}

int rbudp_setup_decode(const uint8_t *b, size_t len, struct rbudp_setup *m,
		       const char **why)
{
	struct rbudp_setup s;

	if (len != RBUDP_SETUP_LEN)
		return bad(why, "SETUP has the wrong length");
	s.udp_port = rbudp_get_u16(b);
	if (rbudp_get_u16(b + 2) != 0)
		return bad(why, "SETUP reserved field is not zero");
	s.payload_bytes = rbudp_get_u32(b + 4);
	s.total_pkts = rbudp_get_u32(b + 8);
	s.file_bytes = rbudp_get_u64(b + 12);
	s.one_way_delay_ns = rbudp_get_u64(b + 20);
	memcpy(s.digest, b + 28, RBUDP_DIGEST_LEN);
	if (s.udp_port == 0)
		return bad(why, "SETUP names UDP port 0");
	if (s.payload_bytes < RBUDP_PAYLOAD_MIN || s.payload_bytes > RBUDP_PAYLOAD_MAX)
		return bad(why, "SETUP payload size out of range");
	if (s.file_bytes == 0)
		return bad(why, "SETUP announces an empty file");
	if (rbudp_pkts_for(s.file_bytes, s.payload_bytes) == 0)
		return bad(why, "SETUP file needs more than 2^32-1 packets");
	if (s.total_pkts != rbudp_pkts_for(s.file_bytes, s.payload_bytes))
		return bad(why, "SETUP packet count does not match file and payload size");
	if (s.one_way_delay_ns > RBUDP_DELAY_MAX_NS)
		return bad(why, "SETUP one-way delay above 10 s");
	*m = s;
	return 0;
}

/* -------------------------------------------------------- SETUP_OK -- */

size_t rbudp_setup_ok_encode(uint8_t *buf, const struct rbudp_setup_ok *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_SETUP_OK, RBUDP_SETUP_OK_LEN);

	rbudp_put_u64(b, m->rcvbuf_bytes);
	rbudp_put_u64(b + 8, m->feedback_delay_ns);
	return RBUDP_FRAME_HDR + RBUDP_SETUP_OK_LEN;
}

int rbudp_setup_ok_decode(const uint8_t *b, size_t len, struct rbudp_setup_ok *m,
			  const char **why)
{
	if (len != RBUDP_SETUP_OK_LEN)
		return bad(why, "SETUP_OK has the wrong length");
	m->rcvbuf_bytes = rbudp_get_u64(b);
	m->feedback_delay_ns = rbudp_get_u64(b + 8);
	if (m->feedback_delay_ns > RBUDP_DELAY_MAX_NS)
		return bad(why, "SETUP_OK feedback delay above 10 s");
	return 0;
}

/* ------------------------------------------------------ BLAST_DONE -- */

size_t rbudp_blast_done_encode(uint8_t *buf, const struct rbudp_blast_done *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_BLAST_DONE, RBUDP_BLAST_DONE_LEN);

	rbudp_put_u32(b, m->round);
	rbudp_put_u32(b + 4, m->pkts_sent);
	return RBUDP_FRAME_HDR + RBUDP_BLAST_DONE_LEN;
}

int rbudp_blast_done_decode(const uint8_t *b, size_t len, struct rbudp_blast_done *m,
			    const char **why)
{
	if (len != RBUDP_BLAST_DONE_LEN)
		return bad(why, "BLAST_DONE has the wrong length");
	m->round = rbudp_get_u32(b);
	m->pkts_sent = rbudp_get_u32(b + 4);
	if (m->round == 0)
		return bad(why, "BLAST_DONE for round 0");
	return 0;
}

/* --------------------------------------------------------- MISSING -- */

size_t rbudp_missing_hdr_encode(uint8_t *buf, const struct rbudp_missing *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_MISSING,
				   (uint32_t)(RBUDP_MISSING_HDR_LEN + m->data_len));

	rbudp_put_u32(b, m->round);
	rbudp_put_u32(b + 4, m->seg);
	rbudp_put_u32(b + 8, m->n_missing);
	rbudp_put_u32(b + 12, m->round_missing);
	b[16] = m->enc;
	b[17] = b[18] = b[19] = 0;
	return RBUDP_FRAME_HDR + RBUDP_MISSING_HDR_LEN;
}

int rbudp_missing_decode(const uint8_t *b, size_t len, struct rbudp_missing *m,
			 const char **why)
{
	if (len < RBUDP_MISSING_HDR_LEN || len > RBUDP_MISSING_HDR_LEN + RBUDP_SEG_MAX_DATA)
		return bad(why, "MISSING has the wrong length");
	m->round = rbudp_get_u32(b);
	m->seg = rbudp_get_u32(b + 4);
	m->n_missing = rbudp_get_u32(b + 8);
	m->round_missing = rbudp_get_u32(b + 12);
	m->enc = b[16];
	if (b[17] || b[18] || b[19])
		return bad(why, "MISSING reserved bytes are not zero");
	if (m->n_missing > m->round_missing)
		return bad(why, "MISSING segment count above the round's total");
	m->data = b + RBUDP_MISSING_HDR_LEN;
	m->data_len = len - RBUDP_MISSING_HDR_LEN;
	return 0;
}

/* -------------------------------------------------------- COMPLETE -- */

size_t rbudp_complete_encode(uint8_t *buf, const struct rbudp_complete *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_COMPLETE, RBUDP_COMPLETE_LEN);

	rbudp_put_u32(b, m->round);
	rbudp_put_u32(b + 4, m->total_pkts);
	return RBUDP_FRAME_HDR + RBUDP_COMPLETE_LEN;
}

int rbudp_complete_decode(const uint8_t *b, size_t len, struct rbudp_complete *m,
			  const char **why)
{
	if (len != RBUDP_COMPLETE_LEN)
		return bad(why, "COMPLETE has the wrong length");
	m->round = rbudp_get_u32(b);
	m->total_pkts = rbudp_get_u32(b + 4);
	return 0;
}

/* -------------------------------------------------------- VERIFIED -- */

size_t rbudp_verified_encode(uint8_t *buf, const struct rbudp_verified *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_VERIFIED, RBUDP_VERIFIED_LEN);

	rbudp_put_u32(b, m->status);
	rbudp_put_u32(b + 4, 0);
	memcpy(b + 8, m->digest, RBUDP_DIGEST_LEN);
	return RBUDP_FRAME_HDR + RBUDP_VERIFIED_LEN;
}

int rbudp_verified_decode(const uint8_t *b, size_t len, struct rbudp_verified *m,
			  const char **why)
{
	if (len != RBUDP_VERIFIED_LEN)
		return bad(why, "VERIFIED has the wrong length");
	m->status = rbudp_get_u32(b);
	if (rbudp_get_u32(b + 4) != 0)
		return bad(why, "VERIFIED reserved field is not zero");
	if (m->status > RBUDP_VERIFY_NOT_KEPT)
		return bad(why, "VERIFIED status unknown");
	memcpy(m->digest, b + 8, RBUDP_DIGEST_LEN);
	return 0;
}

/* ----------------------------------------------------------- ERROR -- */

size_t rbudp_error_encode(uint8_t *buf, uint32_t code, const char *text)
{
	size_t n = strnlen(text, RBUDP_ERROR_TEXT_MAX);
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_ERROR, (uint32_t)(4 + n));

	rbudp_put_u32(b, code);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		b[4 + i] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	return RBUDP_FRAME_HDR + 4 + n;
}

int rbudp_error_decode(const uint8_t *b, size_t len, struct rbudp_error *m,
		       const char **why)
{
	if (len < 4 || len > 4 + RBUDP_ERROR_TEXT_MAX)
		return bad(why, "ERROR has the wrong length");
	m->code = rbudp_get_u32(b);
	/* The text is shown to a user: keep it printable whatever was sent. */
	for (size_t i = 0; i < len - 4; i++) {
		unsigned char c = b[4 + i];

		m->text[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	m->text[len - 4] = '\0';
	return 0;
}
