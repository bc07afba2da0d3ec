/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rxbneck sender control protocol, version 1: wire constants and the decoded
 * form of every frame.
 *
 * docs/PROTOCOL.md is the specification; this header is its C transcription.
 * Everything on the wire is big-endian and written field by field (no struct
 * is ever copied to or from the wire), so the structs below are the decoded,
 * host-order view, not byte layouts.
 *
 * Stability: the numeric values here are the protocol and never change within
 * major version 1. The structs are part of librxbneck's ABI (soname
 * librxbneck.so.0); they only grow in a new soname.
 */
#ifndef RXBNECK_PROTO_H
#define RXBNECK_PROTO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(RXBNECK_API)
#define RXBNECK_API __attribute__((visibility("default")))
#elif !defined(RXBNECK_API)
#define RXBNECK_API
#endif

/* ----------------------------------------------------------- framing -- */

#define RXBNECK_DEFAULT_PORT		7440	/* TCP */
#define RXBNECK_MAGIC			0x5258424eu	/* "RXBN" */
#define RXBNECK_VERSION			1	/* major: header byte 4 */
#define RXBNECK_MINOR			4	/* minor: in HELLO/HELLO_ACK */
/* Minor versions that introduced an addition (PROTOCOL.md §10). */
#define RXBNECK_MINOR_BETWEEN_PAUSES	1	/* RATE flag 0x0010, §6.3 */
#define RXBNECK_MINOR_BUFFER		2	/* BUFFER granted, §5.9, §6.4 */
#define RXBNECK_MINOR_STREAMS		2	/* STREAMS sent, STREAMS_SAMPLE taken, §6.5 */
#define RXBNECK_MINOR_PROVISIONAL	3	/* RATE flags 0x0020, 0x0040, §6.1 */
#define RXBNECK_MINOR_CHECKS		4	/* §3 step 6, §6.1 rules, §5.11 checks */
#define RXBNECK_HDR_BYTES		16

/*
 * Frame length limits (whole frame, header included). A receiver announces
 * its limit in HELLO_ACK; every v1 frame with maximal strings fits in
 * RXBNECK_FRAME_MAX_MIN, so no limit may be configured below it.
 */
#define RXBNECK_FRAME_MAX_DEFAULT	4096
#define RXBNECK_FRAME_MAX_MIN		512
#define RXBNECK_FRAME_MAX_LIMIT		65536

enum rxbneck_type {
	RXBNECK_T_HELLO		= 0x01,	/* S->D */
	RXBNECK_T_HELLO_ACK	= 0x02,	/* D->S */
	RXBNECK_T_SUBSCRIBE	= 0x03,	/* S->D */
	RXBNECK_T_PING		= 0x04,	/* both */
	RXBNECK_T_PONG		= 0x05,	/* both */
	RXBNECK_T_BYE		= 0x06,	/* both */
	RXBNECK_T_ERROR		= 0x07,	/* both */
	RXBNECK_T_RATE		= 0x10,	/* D->S */
	RXBNECK_T_PAUSE		= 0x11,	/* D->S */
	RXBNECK_T_BUFFER	= 0x12,	/* D->S, to minor >= 2 subscribers */
	RXBNECK_T_STREAMS	= 0x13,	/* D->S, to senders of minor >= 2 */
	RXBNECK_T_REPORT	= 0x20,	/* S->D */
	RXBNECK_T_STREAMS_SAMPLE = 0x21, /* S->D, only if HELLO_ACK accepts it */
};

/* Fixed part of each payload, in bytes (TLVs may follow). */
#define RXBNECK_HELLO_BYTES		32
#define RXBNECK_HELLO_ACK_BYTES		32
#define RXBNECK_SUBSCRIBE_BYTES		8
#define RXBNECK_PING_BYTES		8
#define RXBNECK_BYE_BYTES		4
#define RXBNECK_ERROR_BYTES		8
#define RXBNECK_RATE_BYTES		40
#define RXBNECK_PAUSE_BYTES		48
#define RXBNECK_BUFFER_BYTES		32
#define RXBNECK_STREAMS_BYTES		32
#define RXBNECK_REPORT_BYTES		56
#define RXBNECK_STREAMS_SAMPLE_BYTES	24

/* TLV: u16 tag, u16 length, value. Tags with bit 15 set are critical. */
#define RXBNECK_TLV_HDR_BYTES		4
#define RXBNECK_TLV_CRITICAL		0x8000u
#define RXBNECK_TLV_NAME		0x0001	/* HELLO, HELLO_ACK */
#define RXBNECK_TLV_MESSAGE		0x0002	/* ERROR, BYE */
#define RXBNECK_NAME_MAX		63	/* bytes, without terminator */
#define RXBNECK_MESSAGE_MAX		255

/* Subscription bits (HELLO.subscribe, SUBSCRIBE, HELLO_ACK.granted). */
#define RXBNECK_SUB_RATE		0x0001
#define RXBNECK_SUB_PAUSE		0x0002
#define RXBNECK_SUB_BUFFER		0x0004
#define RXBNECK_SUB_STREAMS		0x0008

/* HELLO_ACK.accepts: optional sender->daemon frames the daemon handles. */
#define RXBNECK_ACCEPT_REPORT		0x0001
#define RXBNECK_ACCEPT_STREAMS_SAMPLE	0x0002

/* RATE.flags */
#define RXBNECK_RATE_DEGRADED		0x0001	/* no eBPF: model runs on /proc + config */
#define RXBNECK_RATE_STALE		0x0002	/* last solve failed; last good value */
#define RXBNECK_RATE_NO_TRAFFIC		0x0004	/* flow not seen yet: prior estimate */
#define RXBNECK_RATE_UNCONSTRAINED	0x0008	/* host is not the bottleneck */
#define RXBNECK_RATE_BETWEEN_PAUSES	0x0010	/* rate to send at between PAUSE windows */
#define RXBNECK_RATE_PROVISIONAL	0x0020	/* modelled before the flow's traffic */
#define RXBNECK_RATE_DEFAULT_COST	0x0040	/* ... with default costs: nothing learned */

/* PAUSE.flags */
#define RXBNECK_PAUSE_CANCEL		0x0001	/* drop any schedule, other fields 0 */

/* STREAMS.flags (minor 2) */
#define RXBNECK_STREAMS_EXPLORE		0x0001	/* streams is the exponential sampling's next
						 * level, not the optimum */
#define RXBNECK_STREAMS_CAPPED		0x0002	/* the receiver's drain capacity bounds it */
#define RXBNECK_STREAMS_RISING		0x0004	/* the curve still rises at the top of its range */
#define RXBNECK_STREAMS_MEASURED	0x0008	/* no model fits: the best measured count */

/* STREAMS.model: the throughput model the advice came from (§5.10). */
enum rxbneck_streams_model {
	RXBNECK_MODEL_MEASURED	= 0,	/* none fits: the best measured count */
	RXBNECK_MODEL_HACKER	= 1,	/* Hacker et al.: n times one stream */
	RXBNECK_MODEL_DINDA	= 2,	/* Lu, Dinda et al.: p' = a'n^2 + b' */
	RXBNECK_MODEL_LOSS	= 3,	/* packet loss: Th^2 = a'n^(1/x) + b' */
	RXBNECK_MODEL_LOG	= 4,	/* logarithmic: p' = a'e^(b'n) */
	RXBNECK_MODEL_NEWTON	= 5,	/* Newton's iteration: p' = a'n^c' + b' */
	RXBNECK_MODEL_FULL2	= 6,	/* full second order: p' = a'n^2 + b'n + c' */
	RXBNECK_MODEL_BREAK	= 7,	/* break function: two dinda pieces */
	RXBNECK_MODEL_AVG_ARITH	= 8,	/* averaging of two dinda fits */
	RXBNECK_MODEL_AVG_GEOM	= 9,
	RXBNECK_MODEL_AVG_QUAD	= 10,
};

/* Limits of STREAMS and STREAMS_SAMPLE. */
#define RXBNECK_STREAMS_MAX		1024		/* streams */
#define RXBNECK_SAMPLE_MIN_US		1000u		/* duration_us: 1 ms .. */
#define RXBNECK_SAMPLE_MAX_US		86400000000ULL	/* .. one day */

/* BUFFER.flags */
#define RXBNECK_BUFFER_APPLIED		0x0001	/* daemon already resized it */
#define RXBNECK_BUFFER_MODEL		0x0002	/* sized by the model (else RRDA) */
#define RXBNECK_BUFFER_LIMITED		0x0004	/* at the daemon's ceiling: it wants more */
/* The largest sk_rcvbuf Linux stores (twice INT_MAX / 2). */
#define RXBNECK_RCVBUF_MAX		2147483646ULL

/* REPORT.flags */
#define RXBNECK_REPORT_ABORTED		0x0001

/* BYE.reason */
#define RXBNECK_BYE_DONE		0
#define RXBNECK_BYE_SHUTDOWN		1

/* Value limits a receiver enforces (BAD_VALUE otherwise). */
#define RXBNECK_TIME_MAX_US		60000000u	/* rtt, pause fields: 60 s */
#define RXBNECK_CONFIDENCE_MAX		1000		/* per mille */

/* Error codes carried by ERROR frames. */
enum rxbneck_error {
	RXBNECK_ERR_NONE		= 0,
	RXBNECK_ERR_BAD_MAGIC		= 1,
	RXBNECK_ERR_BAD_VERSION		= 2,
	RXBNECK_ERR_TOO_LARGE		= 3,
	RXBNECK_ERR_MALFORMED		= 4,
	RXBNECK_ERR_BAD_VALUE		= 5,
	RXBNECK_ERR_UNKNOWN_TYPE	= 6,
	RXBNECK_ERR_UNEXPECTED		= 7,
	RXBNECK_ERR_UNSUPPORTED		= 8,
	RXBNECK_ERR_NOT_ALLOWED		= 9,
	RXBNECK_ERR_TOO_MANY		= 10,
	RXBNECK_ERR_HELLO_TIMEOUT	= 11,
	RXBNECK_ERR_IDLE_TIMEOUT	= 12,
	RXBNECK_ERR_OUTPUT_OVERFLOW	= 13,
	RXBNECK_ERR_REFUSED		= 14,
	RXBNECK_ERR_INTERNAL		= 15,
	RXBNECK_ERR_MAX_			= 15,
};

/* ------------------------------------------------ decoded payloads -- */

struct rxbneck_hello {
	uint16_t minor;
	uint16_t flow_port;		/* receive port of the flow at the receiver */
	uint8_t flow_proto;		/* 17 = UDP, 6 = TCP */
	uint16_t subscribe;		/* RXBNECK_SUB_* */
	uint32_t payload_bytes;		/* datagram payload size, S_pkt */
	uint32_t rtt_us;		/* sender's RTT estimate, 0 = unknown */
	uint64_t file_bytes;		/* S_total, 0 = unknown */
	uint64_t max_rate_bps;		/* sender's own ceiling, 0 = unknown */
	char name[RXBNECK_NAME_MAX + 1];	/* TLV NAME, "" if absent */
};

struct rxbneck_hello_ack {
	uint16_t minor;
	uint16_t granted;		/* RXBNECK_SUB_* actually served */
	uint16_t accepts;		/* RXBNECK_ACCEPT_* */
	uint32_t max_frame_bytes;
	uint32_t idle_timeout_ms;
	uint32_t epoch_ms;
	uint64_t instance_id;		/* random per daemon start */
	char name[RXBNECK_NAME_MAX + 1];	/* daemon software and version */
};

struct rxbneck_subscribe {
	uint16_t subscribe;
	uint32_t rtt_us;		/* 0 = keep the previous estimate */
};

struct rxbneck_ping {
	uint64_t token;			/* echoed by PONG */
};

struct rxbneck_bye {
	uint16_t reason;
	char message[RXBNECK_MESSAGE_MAX + 1];
};

struct rxbneck_error_msg {
	uint16_t code;			/* enum rxbneck_error */
	uint8_t version_min;		/* versions the sender of ERROR speaks */
	uint8_t version_max;
	uint32_t ref_seq;		/* seq of the offending frame, 0 = none */
	char message[RXBNECK_MESSAGE_MAX + 1];
};

struct rxbneck_rate {
	uint16_t port;
	uint16_t flags;			/* RXBNECK_RATE_* */
	uint16_t confidence;		/* per mille */
	uint64_t rate_bps;		/* effective bottleneck rate, UDP payload bit/s */
	double loss;			/* predicted loss fraction at rate_bps, [0, 1] */
	uint64_t epoch;			/* model epoch the value comes from */
	uint64_t xfer_time_us;		/* predicted T(rate) for file_bytes, 0 = n/a */
};

/*
 * Off-windows at the receiver, relative to the moment the daemon sent the
 * frame: the first starts start_in_us later and lasts duration_us; with
 * period_us != 0 it repeats every period_us, repeat_count times (0 = until
 * replaced). See PROTOCOL.md §6 for the sender rule.
 */
struct rxbneck_pause {
	uint16_t port;
	uint16_t flags;			/* RXBNECK_PAUSE_* */
	uint32_t repeat_count;
	uint64_t start_in_us;
	uint64_t duration_us;
	uint64_t period_us;
	uint64_t epoch;
	uint16_t confidence;		/* per mille: measured hit rate */
};

/*
 * Receive-buffer advice (PROTOCOL.md §5.9, §6.4). Sizes are the kernel's
 * sk_rcvbuf, what getsockopt(SO_RCVBUF) returns: setsockopt() takes half.
 */
struct rxbneck_buffer {
	uint16_t port;
	uint16_t flags;			/* RXBNECK_BUFFER_* */
	uint32_t pkt_bytes;		/* memory charged per datagram, 0 = unknown */
	uint64_t rcvbuf_bytes;		/* advised receive buffer */
	uint64_t current_bytes;		/* receive buffer now */
	uint64_t epoch;
};

struct rxbneck_streams {
	uint16_t port;
	uint32_t streams;		/* advised number of parallel streams */
	uint64_t predicted_bps;		/* throughput predicted at that count, 0 = unknown */
	uint64_t epoch;
	/* Minor 2 (appended: the fields above keep their places). */
	uint16_t flags;			/* RXBNECK_STREAMS_* */
	uint16_t confidence;		/* per mille */
	uint8_t model;			/* enum rxbneck_streams_model */
	uint8_t points;			/* stream counts the fit had, at most 255 */
	uint16_t rel_err;		/* fit error per mille of the mean, 0xffff unknown */
};

struct rxbneck_report {
	uint16_t port;
	uint16_t flags;			/* RXBNECK_REPORT_* */
	uint32_t rounds;		/* blast rounds, first one included */
	uint64_t file_bytes;
	uint64_t elapsed_us;		/* transfer time */
	uint64_t rate_bps;		/* the rate the first round was paced at */
	uint64_t pkts_sent;		/* all datagrams, resends included */
	uint64_t pkts_resent;
	uint64_t pkts_lost_first;	/* lost in the first round */
};

/*
 * A transfer (or an interval of one) the sender made with @streams
 * parallel TCP streams to the flow port: their summed goodput over
 * @duration_us (PROTOCOL.md §5.12).
 */
struct rxbneck_streams_sample {
	uint16_t port;
	uint32_t streams;		/* 1 .. RXBNECK_STREAMS_MAX */
	uint64_t throughput_bps;	/* >= 1 */
	uint64_t duration_us;		/* RXBNECK_SAMPLE_MIN_US .. _MAX_US */
};

/* "BAD_MAGIC", ...; "?" for an unknown code. */
RXBNECK_API const char *rxbneck_error_name(unsigned int code);
/* "HELLO", ...; "?" for an unknown type. */
RXBNECK_API const char *rxbneck_type_name(unsigned int type);

#ifdef __cplusplus
}
#endif

#endif
