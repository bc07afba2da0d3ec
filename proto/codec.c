// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Frame codec: explicit big-endian field I/O over bounded cursors.
 *
 * Decoding never reads past the frame and never trusts a length it has not
 * compared with what is left; encoding never writes past @cap. The fixed part
 * of each payload is read field by field in the order of PROTOCOL.md §5, then
 * the TLV area that fills the rest of the frame.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "proto/codec.h"

_Static_assert(sizeof(double) == 8, "binary64 doubles are assumed");

/* ------------------------------------------------------- cursors -- */

struct rd {
	const uint8_t *p;
	size_t left;
};

struct wr {
	uint8_t *p;
	size_t left;
	bool overflow;
};

static uint8_t rd_u8(struct rd *r)
{
	uint8_t v = r->p[0];

	r->p += 1;
	r->left -= 1;
	return v;
}

static uint16_t rd_u16(struct rd *r)
{
	uint16_t v = (uint16_t)(r->p[0] << 8 | r->p[1]);

	r->p += 2;
	r->left -= 2;
	return v;
}

static uint32_t rd_u32(struct rd *r)
{
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 |
		     (uint32_t)r->p[2] << 8 | (uint32_t)r->p[3];

	r->p += 4;
	r->left -= 4;
	return v;
}

static uint64_t rd_u64(struct rd *r)
{
	uint64_t hi = rd_u32(r);

	return hi << 32 | rd_u32(r);
}

/* Callers check r->left against the fixed size before reading fields. */
static void rd_skip(struct rd *r, size_t n)
{
	r->p += n;
	r->left -= n;
}

static void wr_bytes(struct wr *w, const void *src, size_t n)
{
	if (w->overflow || w->left < n) {
		w->overflow = true;
		return;
	}
	memcpy(w->p, src, n);
	w->p += n;
	w->left -= n;
}

static void wr_u8(struct wr *w, uint8_t v)
{
	wr_bytes(w, &v, 1);
}

static void wr_u16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	wr_bytes(w, b, sizeof(b));
}

static void wr_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };

	wr_bytes(w, b, sizeof(b));
}

static void wr_u64(struct wr *w, uint64_t v)
{
	wr_u32(w, (uint32_t)(v >> 32));
	wr_u32(w, (uint32_t)v);
}

/* ------------------------------------------------------ type table -- */

/*
 * One field of a payload's fixed part: a member of struct rxbp_msg, sent
 * big-endian in as many bytes as the member has (a double as its binary64
 * bits), or padding, sent as zeros and skipped on reading. Both directions
 * walk the same list, so encoder and decoder cannot disagree on a layout.
 */
struct field {
	uint16_t off;		/* offsetof(struct rxbp_msg, ...) */
	uint8_t bytes;		/* 1, 2, 4 or 8 */
	bool pad;
};

#define FLD(member)	{ (uint16_t)offsetof(struct rxbp_msg, u.member), \
			  (uint8_t)sizeof(((struct rxbp_msg *)0)->u.member), false }
#define PAD(n)		{ 0, (n), true }

/* The fixed parts, in the order of PROTOCOL.md §5. */
static const struct field hello_fields[] = {
	FLD(hello.minor), FLD(hello.flow_port), FLD(hello.flow_proto), PAD(1),
	FLD(hello.subscribe), FLD(hello.payload_bytes), FLD(hello.rtt_us),
	FLD(hello.file_bytes), FLD(hello.max_rate_bps),
};
static const struct field hello_ack_fields[] = {
	FLD(hello_ack.minor), FLD(hello_ack.granted), FLD(hello_ack.accepts), PAD(2),
	FLD(hello_ack.max_frame_bytes), FLD(hello_ack.idle_timeout_ms),
	FLD(hello_ack.epoch_ms), PAD(4), FLD(hello_ack.instance_id),
};
static const struct field subscribe_fields[] = {
	FLD(subscribe.subscribe), PAD(2), FLD(subscribe.rtt_us),
};
static const struct field ping_fields[] = {
	FLD(ping.token),
};
static const struct field bye_fields[] = {
	FLD(bye.reason), PAD(2),
};
static const struct field error_fields[] = {
	FLD(error.code), FLD(error.version_min), FLD(error.version_max), FLD(error.ref_seq),
};
static const struct field rate_fields[] = {
	FLD(rate.port), FLD(rate.flags), FLD(rate.confidence), PAD(2), FLD(rate.rate_bps),
	FLD(rate.loss), FLD(rate.epoch), FLD(rate.xfer_time_us),
};
static const struct field pause_fields[] = {
	FLD(pause.port), FLD(pause.flags), FLD(pause.repeat_count), FLD(pause.start_in_us),
	FLD(pause.duration_us), FLD(pause.period_us), FLD(pause.epoch),
	FLD(pause.confidence), PAD(2), PAD(4),
};
static const struct field buffer_fields[] = {
	FLD(buffer.port), FLD(buffer.flags), FLD(buffer.pkt_bytes), FLD(buffer.rcvbuf_bytes),
	FLD(buffer.current_bytes), FLD(buffer.epoch),
};
static const struct field streams_fields[] = {
	FLD(streams.port), FLD(streams.flags), FLD(streams.streams),
	FLD(streams.predicted_bps), FLD(streams.epoch), FLD(streams.confidence),
	FLD(streams.model), FLD(streams.points), FLD(streams.rel_err), PAD(2),
};
static const struct field report_fields[] = {
	FLD(report.port), FLD(report.flags), FLD(report.rounds), FLD(report.file_bytes),
	FLD(report.elapsed_us), FLD(report.rate_bps), FLD(report.pkts_sent),
	FLD(report.pkts_resent), FLD(report.pkts_lost_first),
};
static const struct field sample_fields[] = {
	FLD(sample.port), PAD(2), FLD(sample.streams), FLD(sample.throughput_bps),
	FLD(sample.duration_us),
};

struct type_info {
	uint8_t type;
	uint8_t from;		/* RXBP_FROM_* */
	uint16_t fixed_bytes;	/* the sum of the fields' bytes (test_proto checks it) */
	const char *name;
	const struct field *fields;
	uint8_t nfields;
};

#define FIELDS(a)	(a), (uint8_t)(sizeof(a) / sizeof((a)[0]))
#define BOTH		(RXBP_FROM_SENDER | RXBP_FROM_DAEMON)

static const struct type_info types[] = {
	{ RXBNECK_T_HELLO, RXBP_FROM_SENDER, RXBNECK_HELLO_BYTES, "HELLO",
	  FIELDS(hello_fields) },
	{ RXBNECK_T_HELLO_ACK, RXBP_FROM_DAEMON, RXBNECK_HELLO_ACK_BYTES, "HELLO_ACK",
	  FIELDS(hello_ack_fields) },
	{ RXBNECK_T_SUBSCRIBE, RXBP_FROM_SENDER, RXBNECK_SUBSCRIBE_BYTES, "SUBSCRIBE",
	  FIELDS(subscribe_fields) },
	{ RXBNECK_T_PING, BOTH, RXBNECK_PING_BYTES, "PING", FIELDS(ping_fields) },
	{ RXBNECK_T_PONG, BOTH, RXBNECK_PING_BYTES, "PONG", FIELDS(ping_fields) },
	{ RXBNECK_T_BYE, BOTH, RXBNECK_BYE_BYTES, "BYE", FIELDS(bye_fields) },
	{ RXBNECK_T_ERROR, BOTH, RXBNECK_ERROR_BYTES, "ERROR", FIELDS(error_fields) },
	{ RXBNECK_T_RATE, RXBP_FROM_DAEMON, RXBNECK_RATE_BYTES, "RATE", FIELDS(rate_fields) },
	{ RXBNECK_T_PAUSE, RXBP_FROM_DAEMON, RXBNECK_PAUSE_BYTES, "PAUSE",
	  FIELDS(pause_fields) },
	{ RXBNECK_T_BUFFER, RXBP_FROM_DAEMON, RXBNECK_BUFFER_BYTES, "BUFFER",
	  FIELDS(buffer_fields) },
	{ RXBNECK_T_STREAMS, RXBP_FROM_DAEMON, RXBNECK_STREAMS_BYTES, "STREAMS",
	  FIELDS(streams_fields) },
	{ RXBNECK_T_REPORT, RXBP_FROM_SENDER, RXBNECK_REPORT_BYTES, "REPORT",
	  FIELDS(report_fields) },
	{ RXBNECK_T_STREAMS_SAMPLE, RXBP_FROM_SENDER, RXBNECK_STREAMS_SAMPLE_BYTES,
	  "STREAMS_SAMPLE", FIELDS(sample_fields) },
};

static const struct type_info *type_lookup(unsigned int type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return &types[i];
	return NULL;
}

/* A frame type's one text TLV, where its text lives in struct rxbp_msg. */
struct text_tlv {
	uint8_t type;
	uint16_t tag;
	size_t off;
	size_t max;		/* bytes, without the terminator */
};

#define TEXT(type, tag, member, max) \
	{ (type), (tag), offsetof(struct rxbp_msg, u.member), (max) }

static const struct text_tlv text_tlvs[] = {
	TEXT(RXBNECK_T_HELLO, RXBNECK_TLV_NAME, hello.name, RXBNECK_NAME_MAX),
	TEXT(RXBNECK_T_HELLO_ACK, RXBNECK_TLV_NAME, hello_ack.name, RXBNECK_NAME_MAX),
	TEXT(RXBNECK_T_ERROR, RXBNECK_TLV_MESSAGE, error.message, RXBNECK_MESSAGE_MAX),
	TEXT(RXBNECK_T_BYE, RXBNECK_TLV_MESSAGE, bye.message, RXBNECK_MESSAGE_MAX),
};

/* The text TLV frames of @type carry, NULL for types without one: what
 * the encoder writes and the only known TLV the decoder takes. */
static const struct text_tlv *text_tlv_of(unsigned int type)
{
	for (size_t i = 0; i < sizeof(text_tlvs) / sizeof(text_tlvs[0]); i++)
		if (text_tlvs[i].type == type)
			return &text_tlvs[i];
	return NULL;
}

unsigned int rxbp_type_direction(unsigned int type)
{
	const struct type_info *ti = type_lookup(type);

	return ti ? ti->from : 0;
}

int rxbp_type_check(unsigned int type, unsigned int from)
{
	unsigned int dir = rxbp_type_direction(type);

	if (!dir)
		return -RXBNECK_ERR_UNKNOWN_TYPE;
	return dir & from ? 0 : -RXBNECK_ERR_UNEXPECTED;
}

const char *rxbneck_type_name(unsigned int type)
{
	const struct type_info *ti = type_lookup(type);

	return ti ? ti->name : "?";
}

const char *rxbneck_error_name(unsigned int code)
{
	static const char *const names[] = {
		[RXBNECK_ERR_NONE] = "NONE",
		[RXBNECK_ERR_BAD_MAGIC] = "BAD_MAGIC",
		[RXBNECK_ERR_BAD_VERSION] = "BAD_VERSION",
		[RXBNECK_ERR_TOO_LARGE] = "TOO_LARGE",
		[RXBNECK_ERR_MALFORMED] = "MALFORMED",
		[RXBNECK_ERR_BAD_VALUE] = "BAD_VALUE",
		[RXBNECK_ERR_UNKNOWN_TYPE] = "UNKNOWN_TYPE",
		[RXBNECK_ERR_UNEXPECTED] = "UNEXPECTED",
		[RXBNECK_ERR_UNSUPPORTED] = "UNSUPPORTED",
		[RXBNECK_ERR_NOT_ALLOWED] = "NOT_ALLOWED",
		[RXBNECK_ERR_TOO_MANY] = "TOO_MANY",
		[RXBNECK_ERR_HELLO_TIMEOUT] = "HELLO_TIMEOUT",
		[RXBNECK_ERR_IDLE_TIMEOUT] = "IDLE_TIMEOUT",
		[RXBNECK_ERR_OUTPUT_OVERFLOW] = "OUTPUT_OVERFLOW",
		[RXBNECK_ERR_REFUSED] = "REFUSED",
		[RXBNECK_ERR_INTERNAL] = "INTERNAL",
	};

	if (code >= sizeof(names) / sizeof(names[0]) || !names[code])
		return "?";
	return names[code];
}

/* ------------------------------------------------------------ header -- */

static const uint8_t magic_bytes[4] = {
	(uint8_t)(RXBNECK_MAGIC >> 24), (uint8_t)(RXBNECK_MAGIC >> 16),
	(uint8_t)(RXBNECK_MAGIC >> 8), (uint8_t)RXBNECK_MAGIC,
};

int rxbp_frame_check(const void *buf, size_t n, uint32_t max_frame_bytes,
		     struct rxbp_hdr *h)
{
	const uint8_t *b = buf;
	struct rd r = { b, n };
	struct rxbp_hdr hdr;

	/* Reject garbage (an HTTP probe, a TLS hello) on its first bytes. */
	for (size_t i = 0; i < n && i < sizeof(magic_bytes); i++)
		if (b[i] != magic_bytes[i])
			return -RXBNECK_ERR_BAD_MAGIC;
	if (n < RXBNECK_HDR_BYTES)
		return 0;

	rd_skip(&r, 4);
	hdr.version = rd_u8(&r);
	hdr.type = rd_u8(&r);
	hdr.flags = rd_u16(&r);
	hdr.len = rd_u32(&r);
	hdr.seq = rd_u32(&r);

	if (hdr.version != RXBNECK_VERSION)
		return -RXBNECK_ERR_BAD_VERSION;
	if (hdr.len > max_frame_bytes || hdr.len > RXBNECK_FRAME_MAX_LIMIT)
		return -RXBNECK_ERR_TOO_LARGE;
	if (hdr.len < RXBNECK_HDR_BYTES)
		return -RXBNECK_ERR_MALFORMED;
	if (h)
		*h = hdr;
	if (n < hdr.len)
		return 0;
	return (int)hdr.len;
}

/* --------------------------------------------------------- strings -- */

/* Text in TLVs: any byte but C0 controls and DEL (keeps logs safe). */
static bool text_ok(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int rd_text(const uint8_t *v, size_t n, char *dst, size_t max)
{
	if (n > max)
		return -RXBNECK_ERR_BAD_VALUE;
	if (!text_ok(v, n))
		return -RXBNECK_ERR_BAD_VALUE;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

/* Length of a NUL-terminated string field, or -1 if it is not valid text. */
static long str_field_len(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n > max || !text_ok((const uint8_t *)s, n))
		return -1;
	return (long)n;
}

/* ------------------------------------------------------- validation -- */

static bool pause_ok(const struct rxbneck_pause *p)
{
	if (p->flags & RXBNECK_PAUSE_CANCEL)
		return true;
	if (p->duration_us == 0 || p->duration_us > RXBNECK_TIME_MAX_US)
		return false;
	if (p->start_in_us > RXBNECK_TIME_MAX_US)
		return false;
	if (p->period_us == 0)
		return p->repeat_count == 1;
	return p->period_us > p->duration_us && p->period_us <= RXBNECK_TIME_MAX_US;
}

int rxbp_validate(const struct rxbp_msg *m)
{
	bool ok;

	switch (m->type) {
	case RXBNECK_T_HELLO: {
		const struct rxbneck_hello *h = &m->u.hello;

		ok = h->flow_port != 0 &&
		     (h->flow_proto == 6 || h->flow_proto == 17) &&
		     h->payload_bytes >= 1 && h->payload_bytes <= 65535 &&
		     h->rtt_us <= RXBNECK_TIME_MAX_US &&
		     str_field_len(h->name, RXBNECK_NAME_MAX) >= 0;
		break;
	}
	case RXBNECK_T_HELLO_ACK: {
		const struct rxbneck_hello_ack *a = &m->u.hello_ack;

		ok = a->max_frame_bytes >= RXBNECK_FRAME_MAX_MIN &&
		     a->max_frame_bytes <= RXBNECK_FRAME_MAX_LIMIT &&
		     str_field_len(a->name, RXBNECK_NAME_MAX) >= 0;
		break;
	}
	case RXBNECK_T_SUBSCRIBE:
		ok = m->u.subscribe.rtt_us <= RXBNECK_TIME_MAX_US;
		break;
	case RXBNECK_T_PING:
	case RXBNECK_T_PONG:
		ok = true;
		break;
	case RXBNECK_T_BYE:
		ok = str_field_len(m->u.bye.message, RXBNECK_MESSAGE_MAX) >= 0;
		break;
	case RXBNECK_T_ERROR:
		ok = m->u.error.version_min <= m->u.error.version_max &&
		     str_field_len(m->u.error.message, RXBNECK_MESSAGE_MAX) >= 0;
		break;
	case RXBNECK_T_RATE: {
		const struct rxbneck_rate *r = &m->u.rate;

		/* isfinite() first: NaN fails every comparison anyway. */
		ok = r->port != 0 && isfinite(r->loss) && r->loss >= 0.0 &&
		     r->loss <= 1.0 && r->confidence <= RXBNECK_CONFIDENCE_MAX;
		break;
	}
	case RXBNECK_T_PAUSE:
		ok = m->u.pause.port != 0 &&
		     m->u.pause.confidence <= RXBNECK_CONFIDENCE_MAX &&
		     pause_ok(&m->u.pause);
		break;
	case RXBNECK_T_BUFFER:
		ok = m->u.buffer.port != 0 &&
		     m->u.buffer.rcvbuf_bytes <= RXBNECK_RCVBUF_MAX &&
		     m->u.buffer.current_bytes <= RXBNECK_RCVBUF_MAX;
		break;
	case RXBNECK_T_STREAMS:
		/* Unknown models are taken: later minors may add some. */
		ok = m->u.streams.port != 0 && m->u.streams.streams >= 1 &&
		     m->u.streams.streams <= RXBNECK_STREAMS_MAX &&
		     m->u.streams.confidence <= RXBNECK_CONFIDENCE_MAX;
		break;
	case RXBNECK_T_REPORT:
		ok = m->u.report.port != 0;
		break;
	case RXBNECK_T_STREAMS_SAMPLE: {
		const struct rxbneck_streams_sample *x = &m->u.sample;

		ok = x->port != 0 && x->streams >= 1 && x->streams <= RXBNECK_STREAMS_MAX &&
		     x->throughput_bps >= 1 && x->duration_us >= RXBNECK_SAMPLE_MIN_US &&
		     x->duration_us <= RXBNECK_SAMPLE_MAX_US;
		break;
	}
	default:
		return -RXBNECK_ERR_UNKNOWN_TYPE;
	}
	return ok ? 0 : -RXBNECK_ERR_BAD_VALUE;
}

/* ------------------------------------------------------------ decode -- */

/* The fixed part, field by field as the type's list has them. */
static void decode_fixed(struct rd *r, struct rxbp_msg *m, const struct type_info *ti)
{
	for (const struct field *f = ti->fields; f < ti->fields + ti->nfields; f++) {
		uint8_t *dst = (uint8_t *)m + f->off;
		uint16_t v16;
		uint32_t v32;
		uint64_t v64;

		if (f->pad) {
			rd_skip(r, f->bytes);
			continue;
		}
		switch (f->bytes) {
		case 1:
			*dst = rd_u8(r);
			break;
		case 2:
			v16 = rd_u16(r);
			memcpy(dst, &v16, sizeof(v16));
			break;
		case 4:
			v32 = rd_u32(r);
			memcpy(dst, &v32, sizeof(v32));
			break;
		default:
			v64 = rd_u64(r);
			memcpy(dst, &v64, sizeof(v64));
			break;
		}
	}
}

static int decode_tlvs(struct rd *r, struct rxbp_msg *m)
{
	const struct text_tlv *tt = text_tlv_of(m->type);
	uint32_t seen = 0;	/* bit per known tag, to refuse duplicates */

	while (r->left > 0) {
		uint16_t tag, len;
		const uint8_t *val;
		int err;

		if (r->left < RXBNECK_TLV_HDR_BYTES)
			return -RXBNECK_ERR_MALFORMED;
		tag = rd_u16(r);
		len = rd_u16(r);
		if (len > r->left)
			return -RXBNECK_ERR_MALFORMED;
		val = r->p;
		rd_skip(r, len);

		if (!tt || tt->tag != (tag & ~RXBNECK_TLV_CRITICAL)) {
			if (tag & RXBNECK_TLV_CRITICAL)
				return -RXBNECK_ERR_UNSUPPORTED;
			continue;
		}
		/* Known tags are < 32: they index the duplicate mask. */
		if (seen & (1u << (tag & 31)))
			return -RXBNECK_ERR_MALFORMED;
		seen |= 1u << (tag & 31);
		err = rd_text(val, len, (char *)m + tt->off, tt->max);
		if (err)
			return err;
	}
	return 0;
}

int rxbp_decode(const void *frame, size_t len, struct rxbp_msg *m)
{
	const struct type_info *ti;
	struct rxbp_hdr h;
	struct rd r;
	int n, err;

	memset(m, 0, sizeof(*m));
	n = rxbp_frame_check(frame, len, RXBNECK_FRAME_MAX_LIMIT, &h);
	if (n < 0)
		return n;
	if (n == 0 || (size_t)n != len)
		return -RXBNECK_ERR_MALFORMED;
	m->type = h.type;
	m->seq = h.seq;

	ti = type_lookup(h.type);
	if (!ti)
		return -RXBNECK_ERR_UNKNOWN_TYPE;
	r.p = (const uint8_t *)frame + RXBNECK_HDR_BYTES;
	r.left = len - RXBNECK_HDR_BYTES;
	if (r.left < ti->fixed_bytes)
		return -RXBNECK_ERR_MALFORMED;
	decode_fixed(&r, m, ti);
	err = decode_tlvs(&r, m);
	if (err)
		return err;
	return rxbp_validate(m);
}

/* ------------------------------------------------------------ encode -- */

/* The fixed part, field by field as the type's list has them. */
static void encode_fixed(struct wr *w, const struct rxbp_msg *m, const struct type_info *ti)
{
	for (const struct field *f = ti->fields; f < ti->fields + ti->nfields; f++) {
		const uint8_t *src = (const uint8_t *)m + f->off;
		uint16_t v16 = 0;
		uint32_t v32 = 0;
		uint64_t v64 = 0;

		switch (f->bytes) {
		case 1:
			wr_u8(w, f->pad ? 0 : *src);
			break;
		case 2:
			if (!f->pad)
				memcpy(&v16, src, sizeof(v16));
			wr_u16(w, v16);
			break;
		case 4:
			if (!f->pad)
				memcpy(&v32, src, sizeof(v32));
			wr_u32(w, v32);
			break;
		default:
			if (!f->pad)
				memcpy(&v64, src, sizeof(v64));
			wr_u64(w, v64);
			break;
		}
	}
}

/* Empty strings are not sent: an absent TLV reads back as "". */
static void encode_text_tlv(struct wr *w, uint16_t tag, const char *s)
{
	size_t n = strlen(s);	/* validated: terminated, short enough */

	if (n == 0)
		return;
	wr_u16(w, tag);
	wr_u16(w, (uint16_t)n);
	wr_bytes(w, s, n);
}

static void encode_tlvs(struct wr *w, const struct rxbp_msg *m)
{
	const struct text_tlv *tt = text_tlv_of(m->type);

	if (tt)
		encode_text_tlv(w, tt->tag, (const char *)m + tt->off);
}

size_t rxbp_encode(void *buf, size_t cap, const struct rxbp_msg *m)
{
	struct wr w = { buf, cap, false };
	size_t len;

	if (rxbp_validate(m) != 0)
		return 0;
	wr_bytes(&w, magic_bytes, sizeof(magic_bytes));
	wr_u8(&w, RXBNECK_VERSION);
	wr_u8(&w, m->type);
	wr_u16(&w, 0);		/* header flags: none defined in v1 */
	wr_u32(&w, 0);		/* length, patched below */
	wr_u32(&w, m->seq);
	encode_fixed(&w, m, type_lookup(m->type));
	encode_tlvs(&w, m);
	if (w.overflow)
		return 0;

	len = cap - w.left;
	w.p = (uint8_t *)buf + 8;
	w.left = 4;
	wr_u32(&w, (uint32_t)len);
	return len;
}
