/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frame codec for the sender control protocol (docs/PROTOCOL.md).
 *
 * Shared by the daemon (daemon/serve/sendsrv.c) and the client library. Pure code:
 * no allocation, no I/O, no global state, nothing from common/ (the client
 * library compiles this file into itself and must stay self-contained).
 *
 * Receiving is two steps so a stream reader never buffers more than one
 * frame: rxbp_frame_check() looks at the bytes received so far and says
 * "need more", "a frame of N bytes is complete" or which error the header
 * shows; rxbp_decode() then validates and decodes that one frame.
 *
 * Error results are negative wire error codes (-RXBNECK_ERR_*), so the
 * caller can put them straight into an ERROR frame.
 */
#ifndef RXB_PROTO_CODEC_H
#define RXB_PROTO_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxbneck/proto.h"

/* Largest frame rxbp_encode() can produce for any v1 message. */
#define RXBP_ENCODE_MAX	\
	(RXBNECK_HDR_BYTES + RXBNECK_ERROR_BYTES + RXBNECK_TLV_HDR_BYTES + \
	 RXBNECK_MESSAGE_MAX)

struct rxbp_hdr {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t len;		/* whole frame, header included */
	uint32_t seq;
};

struct rxbp_msg {
	uint8_t type;		/* enum rxbneck_type */
	uint32_t seq;
	union {
		struct rxbneck_hello hello;
		struct rxbneck_hello_ack hello_ack;
		struct rxbneck_subscribe subscribe;
		struct rxbneck_ping ping;	/* PING and PONG */
		struct rxbneck_bye bye;
		struct rxbneck_error_msg error;
		struct rxbneck_rate rate;
		struct rxbneck_pause pause;
		struct rxbneck_buffer buffer;
		struct rxbneck_streams streams;
		struct rxbneck_report report;
		struct rxbneck_streams_sample sample;
	} u;
};

/*
 * Look at the first @n bytes of a stream. Returns the frame length (> 0) when
 * a whole frame is there, 0 when more bytes are needed, or -RXBNECK_ERR_*
 * (BAD_MAGIC is reported from the first differing byte on, the header's other
 * errors once its 16 bytes are in). @h, if not NULL, is filled whenever the
 * header is complete and valid.
 */
int rxbp_frame_check(const void *buf, size_t n, uint32_t max_frame_bytes,
		     struct rxbp_hdr *h);

/*
 * Decode exactly one frame of @len bytes (as sized by rxbp_frame_check()).
 * Returns 0 or -RXBNECK_ERR_* (MALFORMED, BAD_VALUE, UNKNOWN_TYPE,
 * UNSUPPORTED, ...). @m is zeroed first; on error its header fields (type,
 * seq) are still set when the header was readable.
 */
int rxbp_decode(const void *frame, size_t len, struct rxbp_msg *m);

/*
 * Encode @m into @buf. Returns the frame length, or 0 when @cap is too small
 * or @m is not a valid message (unknown type, value out of its range, string
 * too long): the encoder never produces a frame a peer would reject.
 */
size_t rxbp_encode(void *buf, size_t cap, const struct rxbp_msg *m);

/* Value checks shared by encoder and decoder: 0 or -RXBNECK_ERR_BAD_VALUE. */
int rxbp_validate(const struct rxbp_msg *m);

/* Which side may send @type: bit 0 the sender (client), bit 1 the daemon. */
#define RXBP_FROM_SENDER	1
#define RXBP_FROM_DAEMON	2
unsigned int rxbp_type_direction(unsigned int type);
/*
 * PROTOCOL.md §3 step 6, between the type and the payload: may @from
 * (RXBP_FROM_SENDER or RXBP_FROM_DAEMON) send a frame of @type? 0;
 * -RXBNECK_ERR_UNKNOWN_TYPE for a type this codec does not know (step 5:
 * a sender skips it, a daemon refuses it); -RXBNECK_ERR_UNEXPECTED when
 * only the other side sends it. Whether the connection's state allows the
 * type (HELLO first, once) is the endpoint's check, made at the same step.
 */
int rxbp_type_check(unsigned int type, unsigned int from);

#endif
