// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/rbudp/wire: control frames round-trip, and every
 * decoder rejects what the protocol forbids and survives random bytes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/wire.h"
#include "tests/unit/unit_main.h"

static const struct rbudp_setup good_setup = {
	.payload_bytes = 1456,
	.total_pkts = 137363,		/* ceil(200e6 / 1456) */
	.file_bytes = 200000000,
	.one_way_delay_ns = 100000000,
	.udp_port = 40000,
	.digest = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, [31] = 0x5a },
};

/* Decode the header of the frame in @buf and check its type and length. */
static const uint8_t *body_of(uint8_t *buf, size_t frame_len, uint16_t want)
{
	const char *why = NULL;
	uint32_t len;
	uint16_t type;

	/* Encoders leave the tag to rbudp_auth_ctl_seal(): give the header room for it. */
	if (rbudp_msg_tagged(want))
		rbudp_put_u32(buf + 4, rbudp_get_u32(buf + 4) + RBUDP_TAG_LEN);
	assert_int_equal(rbudp_frame_hdr_decode(buf, &type, &len, &why), 0);
	assert_int_equal(type, want);
	assert_int_equal(len + RBUDP_FRAME_HDR,
			 frame_len + (rbudp_msg_tagged(want) ? RBUDP_TAG_LEN : 0));
	return buf + RBUDP_FRAME_HDR;
}

static void test_frames_round_trip(void **state)
{
	uint8_t buf[RBUDP_FRAME_HDR + RBUDP_ERROR_TEXT_MAX + 64];
	const char *why = NULL;
	size_t n;

	(void)state;
	{
		struct rbudp_hello in = { .auth = RBUDP_AUTH_PSK, .nonce = { 1, 2, [31] = 3 } }, m;
		uint16_t version = 0;

		n = rbudp_hello_encode(buf, &in);
		assert_int_equal(n, RBUDP_FRAME_HDR + RBUDP_HELLO_LEN);
		assert_int_equal(rbudp_hello_decode(body_of(buf, n, RBUDP_MSG_HELLO),
						    RBUDP_HELLO_LEN, &m, &version, &why), 0);
		assert_int_equal(version, RBUDP_VERSION);
		assert_int_equal(m.auth, RBUDP_AUTH_PSK);
		/* The magic is "RBUD" on the wire, as in every version's first frame. */
		assert_memory_equal(buf + RBUDP_FRAME_HDR, "RBUD", 4);
		assert_memory_equal(m.nonce, in.nonce, sizeof(in.nonce));
	}
	{
		struct rbudp_challenge in = { .auth = RBUDP_AUTH_CLEAR, .nonce = { 9 },
					      .secret = { 7, [31] = 8 } }, m;

		n = rbudp_challenge_encode(buf, &in);
		assert_int_equal(rbudp_challenge_decode(body_of(buf, n, RBUDP_MSG_CHALLENGE),
							RBUDP_CHALLENGE_LEN, &m, &why), 0);
		assert_memory_equal(m.nonce, in.nonce, sizeof(in.nonce));
		assert_memory_equal(m.secret, in.secret, sizeof(in.secret));
		/* A clear-mode CHALLENGE with a proof, or PSK mode with a secret, is wrong. */
		in.proof[5] = 1;
		n = rbudp_challenge_encode(buf, &in);
		assert_int_equal(rbudp_challenge_decode(buf + RBUDP_FRAME_HDR, RBUDP_CHALLENGE_LEN,
							&m, &why), -EBADMSG);
		in.auth = RBUDP_AUTH_PSK;
		n = rbudp_challenge_encode(buf, &in);
		assert_int_equal(rbudp_challenge_decode(buf + RBUDP_FRAME_HDR, RBUDP_CHALLENGE_LEN,
							&m, &why), -EBADMSG);
	}
	{
		struct rbudp_setup m;

		n = rbudp_setup_encode(buf, &good_setup);
		assert_int_equal(n, RBUDP_FRAME_HDR + RBUDP_SETUP_LEN);
		assert_int_equal(rbudp_setup_decode(body_of(buf, n, RBUDP_MSG_SETUP),
						    RBUDP_SETUP_LEN, &m, &why), 0);
		/* Field by field: the struct has padding. */
		assert_int_equal(m.payload_bytes, good_setup.payload_bytes);
		assert_int_equal(m.total_pkts, good_setup.total_pkts);
		assert_true(m.file_bytes == good_setup.file_bytes);
		assert_memory_equal(m.digest, good_setup.digest, RBUDP_DIGEST_LEN);
		assert_true(m.one_way_delay_ns == good_setup.one_way_delay_ns);
		assert_int_equal(m.udp_port, good_setup.udp_port);
		/* Big-endian on the wire: the UDP port leads. */
		assert_int_equal(buf[RBUDP_FRAME_HDR] << 8 | buf[RBUDP_FRAME_HDR + 1], 40000);
	}
	{
		struct rbudp_setup_ok in = { .rcvbuf_bytes = 8388608, .feedback_delay_ns = 5 }, m;

		n = rbudp_setup_ok_encode(buf, &in);
		assert_int_equal(rbudp_setup_ok_decode(body_of(buf, n, RBUDP_MSG_SETUP_OK),
						       RBUDP_SETUP_OK_LEN, &m, &why), 0);
		assert_true(m.rcvbuf_bytes == 8388608 && m.feedback_delay_ns == 5);
	}
	{
		struct rbudp_blast_done in = { .round = 3, .pkts_sent = 77 }, m;

		n = rbudp_blast_done_encode(buf, &in);
		assert_int_equal(rbudp_blast_done_decode(body_of(buf, n, RBUDP_MSG_BLAST_DONE),
							 RBUDP_BLAST_DONE_LEN, &m, &why), 0);
		assert_true(m.round == 3 && m.pkts_sent == 77);
	}
	{
		struct rbudp_missing in = { .round = 2, .seg = 1, .n_missing = 5,
					    .round_missing = 9, .enc = RBUDP_MISS_RANGES,
					    .data_len = 8 }, m;

		n = rbudp_missing_hdr_encode(buf, &in);
		memset(buf + n, 0xab, 8);
		body_of(buf, n + 8, RBUDP_MSG_MISSING);
		assert_int_equal(rbudp_missing_decode(buf + RBUDP_FRAME_HDR,
						      RBUDP_MISSING_HDR_LEN + 8, &m, &why), 0);
		assert_true(m.round == 2 && m.seg == 1 && m.n_missing == 5 &&
			    m.round_missing == 9 && m.enc == RBUDP_MISS_RANGES &&
			    m.data_len == 8 && m.data[0] == 0xab);
	}
	{
		struct rbudp_complete in = { .round = 4, .total_pkts = 10 }, m;

		n = rbudp_complete_encode(buf, &in);
		assert_int_equal(rbudp_complete_decode(body_of(buf, n, RBUDP_MSG_COMPLETE),
						       RBUDP_COMPLETE_LEN, &m, &why), 0);
		assert_true(m.round == 4 && m.total_pkts == 10);
	}
	{
		struct rbudp_verified in = { .status = RBUDP_VERIFY_DIGEST, .digest = { 42 } }, m;

		n = rbudp_verified_encode(buf, &in);
		assert_int_equal(rbudp_verified_decode(body_of(buf, n, RBUDP_MSG_VERIFIED),
						       RBUDP_VERIFIED_LEN, &m, &why), 0);
		assert_true(m.status == RBUDP_VERIFY_DIGEST && m.digest[0] == 42);
	}
	{
		struct rbudp_error m;
		char long_text[400];

		n = rbudp_error_encode(buf, RBUDP_ERR_BUSY, "busy\n\x01now");
		assert_int_equal(rbudp_error_decode(body_of(buf, n, RBUDP_MSG_ERROR),
						    n - RBUDP_FRAME_HDR, &m, &why), 0);
		assert_int_equal(m.code, RBUDP_ERR_BUSY);
		assert_string_equal(m.text, "busy??now");
		memset(long_text, 'x', sizeof(long_text) - 1);
		long_text[sizeof(long_text) - 1] = '\0';
		n = rbudp_error_encode(buf, 1, long_text);
		assert_int_equal(n, RBUDP_FRAME_HDR + 4 + RBUDP_ERROR_TEXT_MAX);
		assert_int_equal(rbudp_error_decode(buf + RBUDP_FRAME_HDR, n - RBUDP_FRAME_HDR,
						    &m, &why), 0);
		assert_int_equal(strlen(m.text), RBUDP_ERROR_TEXT_MAX);
	}
}

static void test_frame_header_rejects(void **state)
{
	uint8_t h[RBUDP_FRAME_HDR];
	const char *why = NULL;
	uint32_t len;
	uint16_t type;

	(void)state;
	rbudp_put_u16(h, RBUDP_MSG_SETUP);
	rbudp_put_u16(h + 2, 0);
	rbudp_put_u32(h + 4, RBUDP_SETUP_LEN + RBUDP_TAG_LEN);
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), 0);
	rbudp_put_u32(h + 4, RBUDP_SETUP_LEN);			/* no room for the tag */
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u16(h, RBUDP_MSG_HELLO);			/* untagged */
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u32(h + 4, RBUDP_HELLO_LEN);
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), 0);
	rbudp_put_u16(h + 2, 1);				/* flags */
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u16(h + 2, 0);
	rbudp_put_u16(h, 0);					/* type 0 */
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u16(h, 10);					/* unknown type */
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u16(h, RBUDP_MSG_MISSING);
	rbudp_put_u32(h + 4, RBUDP_MISSING_HDR_LEN + RBUDP_SEG_MAX_DATA + RBUDP_TAG_LEN);
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), 0);
	rbudp_put_u32(h + 4, RBUDP_MISSING_HDR_LEN + RBUDP_SEG_MAX_DATA + RBUDP_TAG_LEN + 1);
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u32(h + 4, 0xffffffffu);
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	rbudp_put_u16(h, RBUDP_MSG_ERROR);
	rbudp_put_u32(h + 4, 3);
	assert_int_equal(rbudp_frame_hdr_decode(h, &type, &len, &why), -EBADMSG);
	/* Every legal frame fits the reader's buffer. */
	assert_true(RBUDP_FRAME_MAX >= RBUDP_FRAME_HDR + RBUDP_MISSING_HDR_LEN + RBUDP_SEG_MAX_DATA +
				       RBUDP_TAG_LEN);
}

/* Encode good_setup with one field changed at @off, expect rejection. */
static void setup_reject(size_t off, size_t width, uint64_t val)
{
	uint8_t buf[RBUDP_FRAME_HDR + RBUDP_SETUP_LEN + RBUDP_TAG_LEN];
	uint8_t *b = buf + RBUDP_FRAME_HDR;
	struct rbudp_setup m;
	const char *why = NULL;

	rbudp_setup_encode(buf, &good_setup);
	if (width == 2)
		rbudp_put_u16(b + off, (uint16_t)val);
	else if (width == 4)
		rbudp_put_u32(b + off, (uint32_t)val);
	else
		rbudp_put_u64(b + off, val);
	assert_int_equal(rbudp_setup_decode(b, RBUDP_SETUP_LEN, &m, &why), -EBADMSG);
	assert_non_null(why);
}

static void test_setup_rejects(void **state)
{
	(void)state;
	setup_reject(0, 2, 0);					/* UDP port 0 */
	setup_reject(2, 2, 1);					/* reserved */
	setup_reject(4, 4, RBUDP_PAYLOAD_MIN - 1);		/* payload */
	setup_reject(4, 4, RBUDP_PAYLOAD_MAX + 1);
	setup_reject(8, 4, 137364);				/* packet count */
	setup_reject(12, 8, 0);					/* empty file */
	setup_reject(12, 8, UINT64_MAX);			/* > 2^32-1 packets */
	setup_reject(20, 8, RBUDP_DELAY_MAX_NS + 1);		/* delay */
}

/* The first frame of another version is told apart from garbage. */
static void test_hello_versions(void **state)
{
	uint8_t buf[RBUDP_FRAME_HDR + RBUDP_HELLO_LEN];
	uint8_t *b = buf + RBUDP_FRAME_HDR;
	struct rbudp_hello in = { .auth = RBUDP_AUTH_CLEAR }, m;
	const char *why = NULL;
	uint16_t version = 0;

	(void)state;
	rbudp_hello_encode(buf, &in);
	rbudp_put_u16(b + 4, 1);		/* a version 1 SETUP has the same prefix */
	assert_int_equal(rbudp_hello_decode(b, RBUDP_HELLO_LEN, &m, &version, &why),
			 -EPROTONOSUPPORT);
	assert_int_equal(version, 1);
	rbudp_put_u16(b + 4, RBUDP_VERSION);
	rbudp_put_u32(b, 0x48545450);		/* "HTTP" */
	assert_int_equal(rbudp_hello_decode(b, RBUDP_HELLO_LEN, &m, &version, &why), -EBADMSG);
	rbudp_put_u32(b, RBUDP_MAGIC);
	rbudp_put_u16(b + 6, 2);		/* unknown auth mode */
	assert_int_equal(rbudp_hello_decode(b, RBUDP_HELLO_LEN, &m, &version, &why), -EBADMSG);
	rbudp_put_u16(b + 6, RBUDP_AUTH_CLEAR);
	b[47] = 1;				/* reserved */
	assert_int_equal(rbudp_hello_decode(b, RBUDP_HELLO_LEN, &m, &version, &why), -EBADMSG);
	assert_int_equal(rbudp_hello_decode(b, RBUDP_HELLO_LEN - 1, &m, &version, &why),
			 -EBADMSG);
}

static void test_other_rejects(void **state)
{
	uint8_t b[64] = { 0 };
	const char *why = NULL;
	struct rbudp_blast_done d;
	struct rbudp_missing m;
	struct rbudp_verified v;
	struct rbudp_error e;

	(void)state;
	assert_int_equal(rbudp_blast_done_decode(b, RBUDP_BLAST_DONE_LEN, &d, &why), -EBADMSG);
	rbudp_put_u32(b + 8, 5);				/* n_missing > round total */
	assert_int_equal(rbudp_missing_decode(b, RBUDP_MISSING_HDR_LEN, &m, &why), -EBADMSG);
	rbudp_put_u32(b + 12, 5);
	b[18] = 1;						/* reserved */
	assert_int_equal(rbudp_missing_decode(b, RBUDP_MISSING_HDR_LEN, &m, &why), -EBADMSG);
	b[18] = 0;
	assert_int_equal(rbudp_missing_decode(b, RBUDP_MISSING_HDR_LEN, &m, &why), 0);
	assert_int_equal(rbudp_missing_decode(b, RBUDP_MISSING_HDR_LEN - 1, &m, &why), -EBADMSG);
	memset(b, 0, sizeof(b));
	rbudp_put_u32(b, 4);					/* unknown status */
	assert_int_equal(rbudp_verified_decode(b, RBUDP_VERIFIED_LEN, &v, &why), -EBADMSG);
	assert_int_equal(rbudp_error_decode(b, 3, &e, &why), -EBADMSG);
	assert_int_equal(rbudp_error_decode(b, 5 + RBUDP_ERROR_TEXT_MAX, &e, &why), -EBADMSG);
	/* Wrong lengths. */
	assert_int_equal(rbudp_complete_decode(b, 7, &(struct rbudp_complete){ 0 }, &why),
			 -EBADMSG);
	assert_int_equal(rbudp_blast_done_decode(b, 9, &d, &why), -EBADMSG);
}

static void test_packet_geometry(void **state)
{
	(void)state;
	assert_int_equal(rbudp_pkts_for(200000000, 1456), 137363);
	assert_int_equal(rbudp_pkts_for(1468, 1468), 1);
	assert_int_equal(rbudp_pkts_for(1469, 1468), 2);
	assert_int_equal(rbudp_pkts_for(200000000, 1468), 136240);
	assert_int_equal(rbudp_pkts_for(1468ULL * UINT32_MAX, 1468), UINT32_MAX);
	assert_int_equal(rbudp_pkts_for(1468ULL * UINT32_MAX + 1, 1468), 0);
	assert_int_equal(rbudp_pkt_len(1469, 1468, 0), 1468);
	assert_int_equal(rbudp_pkt_len(1469, 1468, 1), 1);
	assert_int_equal(rbudp_pkt_len(2936, 1468, 1), 1468);
}

/* Random bytes into every decoder: only clean accept/reject (run under SAN). */
static void test_decoders_survive_garbage(void **state)
{
	uint8_t b[RBUDP_MISSING_HDR_LEN + 300];
	const char *why;

	(void)state;
	srand(11);
	for (int it = 0; it < 20000; it++) {
		size_t len = (size_t)rand() % sizeof(b);
		union {
			struct rbudp_hello h;
			struct rbudp_challenge ch;
			struct rbudp_setup s;
			struct rbudp_setup_ok ok;
			struct rbudp_blast_done d;
			struct rbudp_missing m;
			struct rbudp_complete c;
			struct rbudp_verified v;
			struct rbudp_error e;
		} u;
		uint32_t blen;
		uint16_t type, version;

		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)rand();
		if (it % 4 == 0)	/* often a plausible header, to reach the bodies */
			rbudp_put_u16(b, (uint16_t)(1 + rand() % 9));
		why = NULL;
		if (len >= RBUDP_FRAME_HDR && rbudp_frame_hdr_decode(b, &type, &blen, &why) < 0)
			assert_non_null(why);
		(void)rbudp_hello_decode(b, len, &u.h, &version, &why);
		(void)rbudp_challenge_decode(b, len, &u.ch, &why);
		(void)rbudp_setup_decode(b, len, &u.s, &why);
		(void)rbudp_setup_ok_decode(b, len, &u.ok, &why);
		(void)rbudp_blast_done_decode(b, len, &u.d, &why);
		if (rbudp_missing_decode(b, len, &u.m, &why) == 0)
			assert_true(u.m.data + u.m.data_len == b + len);
		(void)rbudp_complete_decode(b, len, &u.c, &why);
		(void)rbudp_verified_decode(b, len, &u.v, &why);
		if (rbudp_error_decode(b, len, &u.e, &why) == 0)
			assert_true(strlen(u.e.text) == len - 4);
	}
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_frames_round_trip),
	cmocka_unit_test(test_frame_header_rejects),
	cmocka_unit_test(test_setup_rejects),
	cmocka_unit_test(test_hello_versions),
	cmocka_unit_test(test_other_rejects),
	cmocka_unit_test(test_packet_geometry),
	cmocka_unit_test(test_decoders_survive_garbage),
)
