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

/* ----------------------------------------------------------- SETUP -- */

size_t rbudp_setup_encode(uint8_t *buf, const struct rbudp_setup *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_SETUP, RBUDP_SETUP_LEN);

	rbudp_put_u32(b, RBUDP_MAGIC);
	rbudp_put_u16(b + 4, RBUDP_VERSION);
	rbudp_put_u16(b + 6, m->udp_port);
	rbudp_put_u32(b + 8, m->payload_bytes);
	rbudp_put_u32(b + 12, m->total_pkts);
	rbudp_put_u64(b + 16, m->file_bytes);
	rbudp_put_u64(b + 24, m->digest);
	rbudp_put_u64(b + 32, m->one_way_delay_ns);
	rbudp_put_u64(b + 40, 0);
	return RBUDP_FRAME_HDR + RBUDP_SETUP_LEN;
}

int rbudp_setup_decode(const uint8_t *b, size_t len, struct rbudp_setup *m,
		       const char **why)
{
	struct rbudp_setup s;

	if (len != RBUDP_SETUP_LEN)
		return bad(why, "SETUP has the wrong length");
	if (rbudp_get_u32(b) != RBUDP_MAGIC)
		return bad(why, "SETUP magic is not \"RBUD\" (not an RBUDP sender?)");
	if (rbudp_get_u16(b + 4) != RBUDP_VERSION)
		return bad(why, "unsupported protocol version");
	s.udp_port = rbudp_get_u16(b + 6);
	s.payload_bytes = rbudp_get_u32(b + 8);
	s.total_pkts = rbudp_get_u32(b + 12);
	s.file_bytes = rbudp_get_u64(b + 16);
	s.digest = rbudp_get_u64(b + 24);
	s.one_way_delay_ns = rbudp_get_u64(b + 32);
	if (rbudp_get_u64(b + 40) != 0)
		return bad(why, "SETUP reserved field is not zero");
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
		return bad(why, "SETUP one-way delay above 60 s");
	*m = s;
	return 0;
}

/* -------------------------------------------------------- SETUP_OK -- */

size_t rbudp_setup_ok_encode(uint8_t *buf, const struct rbudp_setup_ok *m)
{
	uint8_t *b = buf + put_hdr(buf, RBUDP_MSG_SETUP_OK, RBUDP_SETUP_OK_LEN);

	rbudp_put_u32(b, RBUDP_MAGIC);
	rbudp_put_u16(b + 4, RBUDP_VERSION);
	rbudp_put_u16(b + 6, 0);
	rbudp_put_u64(b + 8, m->rcvbuf_bytes);
	rbudp_put_u64(b + 16, m->feedback_delay_ns);
	return RBUDP_FRAME_HDR + RBUDP_SETUP_OK_LEN;
}

int rbudp_setup_ok_decode(const uint8_t *b, size_t len, struct rbudp_setup_ok *m,
			  const char **why)
{
	if (len != RBUDP_SETUP_OK_LEN)
		return bad(why, "SETUP_OK has the wrong length");
	if (rbudp_get_u32(b) != RBUDP_MAGIC)
		return bad(why, "SETUP_OK magic is not \"RBUD\" (not an RBUDP receiver?)");
	if (rbudp_get_u16(b + 4) != RBUDP_VERSION)
		return bad(why, "receiver speaks another protocol version");
	if (rbudp_get_u16(b + 6) != 0)
		return bad(why, "SETUP_OK reserved field is not zero");
	m->rcvbuf_bytes = rbudp_get_u64(b + 8);
	m->feedback_delay_ns = rbudp_get_u64(b + 16);
	if (m->feedback_delay_ns > RBUDP_DELAY_MAX_NS)
		return bad(why, "SETUP_OK feedback delay above 60 s");
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
	rbudp_put_u64(b + 8, m->digest);
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
	if (m->status > RBUDP_VERIFY_WRITE)
		return bad(why, "VERIFIED status unknown");
	m->digest = rbudp_get_u64(b + 8);
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
