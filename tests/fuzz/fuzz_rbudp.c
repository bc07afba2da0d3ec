// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the RBUDP tools' wire decoders: what a hostile peer
 * can put on the TCP control connection (tools/rbudp/wire.h) and in the
 * receiver's missing-packet report (tools/rbudp/bitmap.h).
 *
 * Besides "no crash, no sanitizer report", two properties are checked:
 *  - a control frame that decodes re-encodes to a frame that decodes to the
 *    same bytes again (encode . decode is idempotent);
 *  - a missing set that decodes, re-encoded from the complementary "have"
 *    bitmap and decoded again, lists exactly the same packets.
 *
 * Input layout: byte 0 selects the target (even: control frame, odd:
 * missing set); the rest is the frame, or for a missing set
 * [u24 total packets][u8 enc][u32 n_missing][data...].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/wire.h"

#define MAX_TOTAL_PKTS (1u << 20)	/* bounded work per input */

static uint8_t enc_buf[RBUDP_FRAME_MAX];
static uint8_t enc_buf2[RBUDP_FRAME_MAX];

/*
 * A case of reencode() for a type whose decoder and encoder take just its
 * struct rbudp_<name>.
 */
#define REENCODE(type, name)							\
	case type: {								\
		struct rbudp_##name m;						\
										\
		return rbudp_##name##_decode(body, len, &m, &why) ? 0 :		\
		       rbudp_##name##_encode(out, &m);				\
	}

/* Decode one body of @type and re-encode it into @out; 0 if it did not decode. */
static size_t reencode(uint16_t type, const uint8_t *body, size_t len, uint8_t *out)
{
	const char *why;

	switch (type) {
	case RBUDP_MSG_HELLO: {
		struct rbudp_hello m;
		uint16_t version;

		return rbudp_hello_decode(body, len, &m, &version, &why) ? 0 :
		       rbudp_hello_encode(out, &m);
	}
	REENCODE(RBUDP_MSG_CHALLENGE, challenge)
	REENCODE(RBUDP_MSG_SETUP, setup)
	REENCODE(RBUDP_MSG_SETUP_OK, setup_ok)
	REENCODE(RBUDP_MSG_BLAST_DONE, blast_done)
	case RBUDP_MSG_MISSING: {
		struct rbudp_missing m;
		size_t n;

		if (rbudp_missing_decode(body, len, &m, &why))
			return 0;
		n = rbudp_missing_hdr_encode(out, &m);
		memcpy(out + n, m.data, m.data_len);
		return n + m.data_len;
	}
	REENCODE(RBUDP_MSG_COMPLETE, complete)
	REENCODE(RBUDP_MSG_VERIFIED, verified)
	case RBUDP_MSG_ERROR: {
		struct rbudp_error m;

		return rbudp_error_decode(body, len, &m, &why) ? 0 :
		       rbudp_error_encode(out, m.code, m.text);
	}
	}
	return 0;
}

/*
 * Header + body of a whole frame in @buf of @size; body length without the
 * tag (tagged types) in *len.
 */
static const uint8_t *frame_body(const uint8_t *buf, size_t size, uint16_t *type, size_t *len)
{
	uint32_t body_len;
	const char *why;

	if (size < RBUDP_FRAME_HDR)
		return NULL;
	if (rbudp_frame_hdr_decode(buf, type, &body_len, &why))
		return NULL;
	if (body_len > size - RBUDP_FRAME_HDR)
		return NULL;
	*len = body_len - (rbudp_msg_tagged(*type) ? RBUDP_TAG_LEN : 0);
	return buf + RBUDP_FRAME_HDR;
}

/* An encoded frame of a tagged type gets room for a (zero) tag, as sealed. */
static size_t tag_room(uint16_t type, uint8_t *frame, size_t n)
{
	if (!n || !rbudp_msg_tagged(type))
		return n;
	rbudp_put_u32(frame + 4, rbudp_get_u32(frame + 4) + RBUDP_TAG_LEN);
	memset(frame + n, 0, RBUDP_TAG_LEN);
	return n + RBUDP_TAG_LEN;
}

static void fuzz_frame(const uint8_t *data, size_t size)
{
	const uint8_t *body, *body2;
	size_t len, len2, n1, n2;
	uint16_t type, type2;

	body = frame_body(data, size, &type, &len);
	if (!body)
		return;
	n1 = tag_room(type, enc_buf, reencode(type, body, len, enc_buf));
	if (!n1)
		return;
	body2 = frame_body(enc_buf, n1, &type2, &len2);
	if (!body2 || type2 != type)
		abort();	/* our own encoding must decode */
	n2 = tag_room(type2, enc_buf2, reencode(type2, body2, len2, enc_buf2));
	if (n2 != n1 || memcmp(enc_buf, enc_buf2, n1) != 0)
		abort();
}

static void fuzz_missing(const uint8_t *data, size_t size)
{
	struct rbudp_bitmap missing, have, again;
	uint32_t total, n_missing, n_missing2;
	uint8_t enc, enc2;
	uint8_t *out;
	size_t n;
	const char *why;

	if (size < 8)
		return;
	total = ((uint32_t)data[0] << 16 | (uint32_t)data[1] << 8 | data[2]) % MAX_TOTAL_PKTS + 1;
	enc = data[3];
	n_missing = (uint32_t)data[4] << 24 | (uint32_t)data[5] << 16 |
		    (uint32_t)data[6] << 8 | data[7];
	if (rbudp_bitmap_init(&missing, total, false))
		return;
	if (rbudp_bitmap_miss_decode(&missing, 0, enc, data + 8, size - 8, n_missing, &why)) {
		rbudp_bitmap_finish(&missing);
		return;
	}
	if (rbudp_bitmap_count(&missing) != n_missing)
		abort();

	/* Round trip through the encoder from the complementary view. */
	out = malloc(RBUDP_SEG_MAX_DATA);
	if (!out || rbudp_bitmap_init(&have, total, true) || rbudp_bitmap_init(&again, total, false))
		abort();
	for (uint32_t i = 0; i < total; i++)
		if (rbudp_bitmap_test(&missing, i))
			have.words[i >> 6] &= ~(1ULL << (i & 63));
	n = rbudp_bitmap_miss_encode(&have, 0, out, &enc2, &n_missing2);
	if (n_missing2 != n_missing ||
	    rbudp_bitmap_miss_decode(&again, 0, enc2, out, n, n_missing2, &why) ||
	    memcmp(again.words, missing.words, missing.nwords * sizeof(uint64_t)) != 0)
		abort();
	rbudp_bitmap_finish(&again);
	rbudp_bitmap_finish(&have);
	rbudp_bitmap_finish(&missing);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		fuzz_missing(data + 1, size - 1);
	else
		fuzz_frame(data + 1, size - 1);
	return 0;
}
