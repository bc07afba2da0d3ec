/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RBUDP wire formats (protocol version 3): the data datagram and the TCP
 * control frames. docs/rbudp.md has the byte layouts; this is their only
 * implementation (auth.h computes the tags).
 *
 * All integers are big-endian. A datagram is a 16-byte header (u32 seq,
 * u32 round, 8-byte authenticator: the session's token, or a tag with a
 * pre-shared key) followed by that packet's file bytes, so the
 * default 1456-byte payload makes a 1472-byte UDP payload, the most an
 * IPv4 datagram carries in a 1500-byte MTU unfragmented.
 *
 * A control frame is an 8-byte header (u16 type, u16 flags = 0,
 * u32 body length) and a body whose length the type bounds. Every frame
 * after HELLO and CHALLENGE except ERROR ends in a RBUDP_CTL_TAG_LEN tag,
 * counted in the header's body length. Encoders write the frame without
 * its tag (rbudp_auth_ctl_seal() appends it); decoders take the body without
 * the tag, check every field, and on failure return -EBADMSG with a
 * static string saying what was wrong.
 *
 * Type 1 is the first frame of every protocol version, with the magic and
 * the version at the same offsets, so peers of different versions can
 * tell each other so (ERROR code RBUDP_ERR_VERSION).
 */
#ifndef RBUDP_WIRE_H
#define RBUDP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RBUDP_MAGIC		0x52425544u	/* "RBUD" */
#define RBUDP_VERSION		3
#define RBUDP_DGRAM_HDR		16	/* seq, round, authenticator */
#define RBUDP_DGRAM_AUTH_OFF	8
#define RBUDP_PAYLOAD_DEFAULT	1456
#define RBUDP_PAYLOAD_MIN	16
#define RBUDP_PAYLOAD_MAX	(65507 - RBUDP_DGRAM_HDR)	/* IPv4 UDP maximum */
#define RBUDP_MAX_PKTS		UINT32_MAX
#define RBUDP_DELAY_MAX_NS	(10ULL * 1000000000ULL)		/* 10 s one way */
#define RBUDP_DIGEST_LEN	32	/* SHA-256 of the file */
#define RBUDP_TAG_LEN		16	/* = RBUDP_CTL_TAG_LEN of auth.h */
#define RBUDP_NONCE_BYTES	32

enum rbudp_auth_mode {
	RBUDP_AUTH_CLEAR = 0,		/* session secret sent in CHALLENGE;
					 * datagrams carry the session's token */
	RBUDP_AUTH_PSK = 1,		/* keys from a pre-shared key;
					 * datagrams carry a UMAC-64 tag */
};

#define RBUDP_FRAME_HDR		8
#define RBUDP_HELLO_LEN		48
#define RBUDP_CHALLENGE_LEN	104
#define RBUDP_SETUP_LEN		60
#define RBUDP_SETUP_OK_LEN	16
#define RBUDP_BLAST_DONE_LEN	8
#define RBUDP_MISSING_HDR_LEN	20
#define RBUDP_COMPLETE_LEN	8
#define RBUDP_VERIFIED_LEN	40
#define RBUDP_ERROR_TEXT_MAX	256
/* Largest frame either side ever accepts: a tagged MISSING frame with 1 MiB of data. */
#define RBUDP_FRAME_MAX		(RBUDP_FRAME_HDR + RBUDP_MISSING_HDR_LEN + (1u << 20) + \
				 RBUDP_TAG_LEN)

enum rbudp_msg_type {
	RBUDP_MSG_HELLO = 1,		/* sender -> receiver, first frame */
	RBUDP_MSG_SETUP_OK = 2,		/* receiver -> sender */
	RBUDP_MSG_BLAST_DONE = 3,	/* sender -> receiver */
	RBUDP_MSG_MISSING = 4,		/* receiver -> sender, one per segment */
	RBUDP_MSG_COMPLETE = 5,		/* receiver -> sender */
	RBUDP_MSG_VERIFIED = 6,		/* receiver -> sender */
	RBUDP_MSG_ERROR = 7,		/* either way, then close; never tagged */
	RBUDP_MSG_CHALLENGE = 8,	/* receiver -> sender, answers HELLO */
	RBUDP_MSG_SETUP = 9,		/* sender -> receiver, after CHALLENGE */
};

enum rbudp_err_code {
	RBUDP_ERR_PROTOCOL = 1,		/* malformed or unexpected frame */
	RBUDP_ERR_BUSY = 2,		/* receiver is serving another transfer */
	RBUDP_ERR_RESOURCES = 3,	/* out of memory, output not writable */
	RBUDP_ERR_VERSION = 4,		/* unsupported protocol version */
	RBUDP_ERR_TIMEOUT = 5,		/* peer silent too long */
	RBUDP_ERR_ABORTED = 6,		/* interrupted by a signal or give-up rule */
	RBUDP_ERR_AUTH = 7,		/* authentication failed (keys differ, forged frame) */
};

enum rbudp_verify_status {
	RBUDP_VERIFY_OK = 0,
	RBUDP_VERIFY_DIGEST = 1,	/* digest differs from the sender's */
	RBUDP_VERIFY_WRITE = 2,		/* data correct, but storing it failed */
	RBUDP_VERIFY_NOT_KEPT = 3,	/* nothing kept to hash (receiver --discard):
					 * only the per-datagram checks applied */
};

struct rbudp_hello {
	uint16_t auth;			/* enum rbudp_auth_mode */
	uint8_t nonce[RBUDP_NONCE_BYTES];
};

struct rbudp_challenge {
	uint16_t auth;
	uint8_t nonce[RBUDP_NONCE_BYTES];
	uint8_t secret[32];		/* RBUDP_AUTH_CLEAR: the session secret; else 0 */
	uint8_t proof[32];		/* RBUDP_AUTH_PSK: the receiver's proof; else 0 */
};

struct rbudp_setup {
	uint32_t payload_bytes;
	uint32_t total_pkts;
	uint64_t file_bytes;
	uint64_t one_way_delay_ns;	/* the sender's emulated delay */
	uint16_t udp_port;		/* sender's UDP source port */
	uint8_t digest[RBUDP_DIGEST_LEN];
};

struct rbudp_setup_ok {
	uint64_t rcvbuf_bytes;		/* effective SO_RCVBUF */
	uint64_t feedback_delay_ns;	/* delay the receiver puts on feedback */
};

struct rbudp_blast_done {
	uint32_t round;
	uint32_t pkts_sent;
};

struct rbudp_missing {
	uint32_t round;
	uint32_t seg;			/* segment index, see bitmap.h */
	uint32_t n_missing;		/* packets missing in this segment */
	uint32_t round_missing;		/* packets missing in the whole round */
	uint8_t enc;			/* enum rbudp_miss_enc */
	const uint8_t *data;		/* points into the decoded body */
	size_t data_len;
};

struct rbudp_complete {
	uint32_t round;
	uint32_t total_pkts;
};

struct rbudp_verified {
	uint32_t status;		/* enum rbudp_verify_status */
	uint8_t digest[RBUDP_DIGEST_LEN];	/* what the receiver computed; 0: none */
};

struct rbudp_error {
	uint32_t code;			/* enum rbudp_err_code */
	char text[RBUDP_ERROR_TEXT_MAX + 1];	/* printable ASCII, NUL-terminated */
};

/* ---------------------------------------------------- byte order -- */

static inline void rbudp_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void rbudp_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void rbudp_put_u64(uint8_t *p, uint64_t v)
{
	rbudp_put_u32(p, (uint32_t)(v >> 32));
	rbudp_put_u32(p + 4, (uint32_t)v);
}

static inline uint16_t rbudp_get_u16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t rbudp_get_u32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t rbudp_get_u64(const uint8_t *p)
{
	return ((uint64_t)rbudp_get_u32(p) << 32) | rbudp_get_u32(p + 4);
}

/* ------------------------------------------------------- packets -- */

/* Packets needed for @file_bytes at @payload_bytes each; 0 if > RBUDP_MAX_PKTS. */
uint64_t rbudp_pkts_for(uint64_t file_bytes, uint32_t payload_bytes);

/* File bytes carried by packet @seq (the last one may be short). */
static inline uint32_t rbudp_pkt_len(uint64_t file_bytes, uint32_t payload_bytes,
				     uint32_t seq)
{
	uint64_t off = (uint64_t)seq * payload_bytes;
	uint64_t left = file_bytes - off;

	return left < payload_bytes ? (uint32_t)left : payload_bytes;
}

/* ------------------------------------------------ control frames -- */

const char *rbudp_msg_name(uint16_t type);
/* True for the frame types that carry a tag. */
bool rbudp_msg_tagged(uint16_t type);

/*
 * Check a frame header. On success *type and *body_len are set and the body
 * length (tag included) is within the bounds of the type.
 */
int rbudp_frame_hdr_decode(const uint8_t hdr[RBUDP_FRAME_HDR], uint16_t *type,
			   uint32_t *body_len, const char **why);

/* Encoders write header + body into @buf and return the frame length. */
size_t rbudp_hello_encode(uint8_t *buf, const struct rbudp_hello *m);
size_t rbudp_challenge_encode(uint8_t *buf, const struct rbudp_challenge *m);
size_t rbudp_setup_encode(uint8_t *buf, const struct rbudp_setup *m);
size_t rbudp_setup_ok_encode(uint8_t *buf, const struct rbudp_setup_ok *m);
size_t rbudp_blast_done_encode(uint8_t *buf, const struct rbudp_blast_done *m);
/* Header only: the caller puts m->data_len data bytes right after it. */
size_t rbudp_missing_hdr_encode(uint8_t *buf, const struct rbudp_missing *m);
size_t rbudp_complete_encode(uint8_t *buf, const struct rbudp_complete *m);
size_t rbudp_verified_encode(uint8_t *buf, const struct rbudp_verified *m);
/* @text is cut to RBUDP_ERROR_TEXT_MAX; non-printable bytes become '?'. */
size_t rbudp_error_encode(uint8_t *buf, uint32_t code, const char *text);

/*
 * Decoders take the body (after the header, without the tag) of a frame of
 * that type. rbudp_hello_decode() returns -EPROTONOSUPPORT with *version
 * set for a well-formed first frame of another protocol version.
 */
int rbudp_hello_decode(const uint8_t *body, size_t len, struct rbudp_hello *m,
		       uint16_t *version, const char **why);
int rbudp_challenge_decode(const uint8_t *body, size_t len, struct rbudp_challenge *m,
			   const char **why);
int rbudp_setup_decode(const uint8_t *body, size_t len, struct rbudp_setup *m,
		       const char **why);
int rbudp_setup_ok_decode(const uint8_t *body, size_t len, struct rbudp_setup_ok *m,
			  const char **why);
int rbudp_blast_done_decode(const uint8_t *body, size_t len, struct rbudp_blast_done *m,
			    const char **why);
int rbudp_missing_decode(const uint8_t *body, size_t len, struct rbudp_missing *m,
			 const char **why);
int rbudp_complete_decode(const uint8_t *body, size_t len, struct rbudp_complete *m,
			  const char **why);
int rbudp_verified_decode(const uint8_t *body, size_t len, struct rbudp_verified *m,
			  const char **why);
int rbudp_error_decode(const uint8_t *body, size_t len, struct rbudp_error *m,
		       const char **why);

#endif
