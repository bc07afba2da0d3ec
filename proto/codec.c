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

static double rd_f64(struct rd *r)
{
	uint64_t bits = rd_u64(r);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
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

static void wr_f64(struct wr *w, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	wr_u64(w, bits);
}

/* ------------------------------------------------------ type table -- */

struct type_info {
	uint8_t type;
	uint8_t from;		/* RXBP_FROM_* */
	uint16_t fixed_bytes;
	const char *name;
};

static const struct type_info types[] = {
	{ RXBNECK_T_HELLO, RXBP_FROM_SENDER, RXBNECK_HELLO_BYTES, "HELLO" },
	{ RXBNECK_T_HELLO_ACK, RXBP_FROM_DAEMON, RXBNECK_HELLO_ACK_BYTES, "HELLO_ACK" },
	{ RXBNECK_T_SUBSCRIBE, RXBP_FROM_SENDER, RXBNECK_SUBSCRIBE_BYTES, "SUBSCRIBE" },
	{ RXBNECK_T_PING, RXBP_FROM_SENDER | RXBP_FROM_DAEMON, RXBNECK_PING_BYTES, "PING" },
	{ RXBNECK_T_PONG, RXBP_FROM_SENDER | RXBP_FROM_DAEMON, RXBNECK_PING_BYTES, "PONG" },
	{ RXBNECK_T_BYE, RXBP_FROM_SENDER | RXBP_FROM_DAEMON, RXBNECK_BYE_BYTES, "BYE" },
	{ RXBNECK_T_ERROR, RXBP_FROM_SENDER | RXBP_FROM_DAEMON, RXBNECK_ERROR_BYTES, "ERROR" },
	{ RXBNECK_T_RATE, RXBP_FROM_DAEMON, RXBNECK_RATE_BYTES, "RATE" },
	{ RXBNECK_T_PAUSE, RXBP_FROM_DAEMON, RXBNECK_PAUSE_BYTES, "PAUSE" },
	{ RXBNECK_T_BUFFER, RXBP_FROM_DAEMON, RXBNECK_BUFFER_BYTES, "BUFFER" },
	{ RXBNECK_T_STREAMS, RXBP_FROM_DAEMON, RXBNECK_STREAMS_BYTES, "STREAMS" },
	{ RXBNECK_T_REPORT, RXBP_FROM_SENDER, RXBNECK_REPORT_BYTES, "REPORT" },
	{ RXBNECK_T_STREAMS_SAMPLE, RXBP_FROM_SENDER, RXBNECK_STREAMS_SAMPLE_BYTES,
	  "STREAMS_SAMPLE" },
};

static const struct type_info *type_lookup(unsigned int type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return &types[i];
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

static void decode_fixed(struct rd *r, struct rxbp_msg *m)
{
	switch (m->type) {
	case RXBNECK_T_HELLO: {
		struct rxbneck_hello *h = &m->u.hello;

		h->minor = rd_u16(r);
		h->flow_port = rd_u16(r);
		h->flow_proto = rd_u8(r);
		rd_skip(r, 1);
		h->subscribe = rd_u16(r);
		h->payload_bytes = rd_u32(r);
		h->rtt_us = rd_u32(r);
		h->file_bytes = rd_u64(r);
		h->max_rate_bps = rd_u64(r);
		break;
	}
	case RXBNECK_T_HELLO_ACK: {
		struct rxbneck_hello_ack *a = &m->u.hello_ack;

		a->minor = rd_u16(r);
		a->granted = rd_u16(r);
		a->accepts = rd_u16(r);
		rd_skip(r, 2);
		a->max_frame_bytes = rd_u32(r);
		a->idle_timeout_ms = rd_u32(r);
		a->epoch_ms = rd_u32(r);
		rd_skip(r, 4);
		a->instance_id = rd_u64(r);
		break;
	}
	case RXBNECK_T_SUBSCRIBE:
		m->u.subscribe.subscribe = rd_u16(r);
		rd_skip(r, 2);
		m->u.subscribe.rtt_us = rd_u32(r);
		break;
	case RXBNECK_T_PING:
	case RXBNECK_T_PONG:
		m->u.ping.token = rd_u64(r);
		break;
	case RXBNECK_T_BYE:
		m->u.bye.reason = rd_u16(r);
		rd_skip(r, 2);
		break;
	case RXBNECK_T_ERROR:
		m->u.error.code = rd_u16(r);
		m->u.error.version_min = rd_u8(r);
		m->u.error.version_max = rd_u8(r);
		m->u.error.ref_seq = rd_u32(r);
		break;
	case RXBNECK_T_RATE: {
		struct rxbneck_rate *x = &m->u.rate;

		x->port = rd_u16(r);
		x->flags = rd_u16(r);
		x->confidence = rd_u16(r);
		rd_skip(r, 2);
		x->rate_bps = rd_u64(r);
		x->loss = rd_f64(r);
		x->epoch = rd_u64(r);
		x->xfer_time_us = rd_u64(r);
		break;
	}
	case RXBNECK_T_PAUSE: {
		struct rxbneck_pause *p = &m->u.pause;

		p->port = rd_u16(r);
		p->flags = rd_u16(r);
		p->repeat_count = rd_u32(r);
		p->start_in_us = rd_u64(r);
		p->duration_us = rd_u64(r);
		p->period_us = rd_u64(r);
		p->epoch = rd_u64(r);
		p->confidence = rd_u16(r);
		rd_skip(r, 6);
		break;
	}
	case RXBNECK_T_BUFFER: {
		struct rxbneck_buffer *b = &m->u.buffer;

		b->port = rd_u16(r);
		b->flags = rd_u16(r);
		b->pkt_bytes = rd_u32(r);
		b->rcvbuf_bytes = rd_u64(r);
		b->current_bytes = rd_u64(r);
		b->epoch = rd_u64(r);
		break;
	}
	case RXBNECK_T_STREAMS: {
		struct rxbneck_streams *x = &m->u.streams;

		x->port = rd_u16(r);
		x->flags = rd_u16(r);
		x->streams = rd_u32(r);
		x->predicted_bps = rd_u64(r);
		x->epoch = rd_u64(r);
		x->confidence = rd_u16(r);
		x->model = rd_u8(r);
		x->points = rd_u8(r);
		x->rel_err = rd_u16(r);
		rd_skip(r, 2);
		break;
	}
	case RXBNECK_T_REPORT: {
		struct rxbneck_report *x = &m->u.report;

		x->port = rd_u16(r);
		x->flags = rd_u16(r);
		x->rounds = rd_u32(r);
		x->file_bytes = rd_u64(r);
		x->elapsed_us = rd_u64(r);
		x->rate_bps = rd_u64(r);
		x->pkts_sent = rd_u64(r);
		x->pkts_resent = rd_u64(r);
		x->pkts_lost_first = rd_u64(r);
		break;
	}
	case RXBNECK_T_STREAMS_SAMPLE:
		m->u.sample.port = rd_u16(r);
		rd_skip(r, 2);
		m->u.sample.streams = rd_u32(r);
		m->u.sample.throughput_bps = rd_u64(r);
		m->u.sample.duration_us = rd_u64(r);
		break;
	}
}

/* Where a known TLV's text goes for this frame type, or NULL if unknown. */
static char *tlv_target(struct rxbp_msg *m, uint16_t tag, size_t *max)
{
	switch (tag & ~RXBNECK_TLV_CRITICAL) {
	case RXBNECK_TLV_NAME:
		*max = RXBNECK_NAME_MAX;
		if (m->type == RXBNECK_T_HELLO)
			return m->u.hello.name;
		if (m->type == RXBNECK_T_HELLO_ACK)
			return m->u.hello_ack.name;
		return NULL;
	case RXBNECK_TLV_MESSAGE:
		*max = RXBNECK_MESSAGE_MAX;
		if (m->type == RXBNECK_T_ERROR)
			return m->u.error.message;
		if (m->type == RXBNECK_T_BYE)
			return m->u.bye.message;
		return NULL;
	}
	return NULL;
}

static int decode_tlvs(struct rd *r, struct rxbp_msg *m)
{
	uint32_t seen = 0;	/* bit per known tag, to refuse duplicates */

	while (r->left > 0) {
		uint16_t tag, len;
		const uint8_t *val;
		char *dst;
		size_t max = 0;
		int err;

		if (r->left < RXBNECK_TLV_HDR_BYTES)
			return -RXBNECK_ERR_MALFORMED;
		tag = rd_u16(r);
		len = rd_u16(r);
		if (len > r->left)
			return -RXBNECK_ERR_MALFORMED;
		val = r->p;
		rd_skip(r, len);

		dst = tlv_target(m, tag, &max);
		if (!dst) {
			if (tag & RXBNECK_TLV_CRITICAL)
				return -RXBNECK_ERR_UNSUPPORTED;
			continue;
		}
		/* Known tags are < 32: they index the duplicate mask. */
		if (seen & (1u << (tag & 31)))
			return -RXBNECK_ERR_MALFORMED;
		seen |= 1u << (tag & 31);
		err = rd_text(val, len, dst, max);
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
	decode_fixed(&r, m);
	err = decode_tlvs(&r, m);
	if (err)
		return err;
	return rxbp_validate(m);
}

/* ------------------------------------------------------------ encode -- */

static void encode_fixed(struct wr *w, const struct rxbp_msg *m)
{
	switch (m->type) {
	case RXBNECK_T_HELLO: {
		const struct rxbneck_hello *h = &m->u.hello;

		wr_u16(w, h->minor);
		wr_u16(w, h->flow_port);
		wr_u8(w, h->flow_proto);
		wr_u8(w, 0);
		wr_u16(w, h->subscribe);
		wr_u32(w, h->payload_bytes);
		wr_u32(w, h->rtt_us);
		wr_u64(w, h->file_bytes);
		wr_u64(w, h->max_rate_bps);
		break;
	}
	case RXBNECK_T_HELLO_ACK: {
		const struct rxbneck_hello_ack *a = &m->u.hello_ack;

		wr_u16(w, a->minor);
		wr_u16(w, a->granted);
		wr_u16(w, a->accepts);
		wr_u16(w, 0);
		wr_u32(w, a->max_frame_bytes);
		wr_u32(w, a->idle_timeout_ms);
		wr_u32(w, a->epoch_ms);
		wr_u32(w, 0);
		wr_u64(w, a->instance_id);
		break;
	}
	case RXBNECK_T_SUBSCRIBE:
		wr_u16(w, m->u.subscribe.subscribe);
		wr_u16(w, 0);
		wr_u32(w, m->u.subscribe.rtt_us);
		break;
	case RXBNECK_T_PING:
	case RXBNECK_T_PONG:
		wr_u64(w, m->u.ping.token);
		break;
	case RXBNECK_T_BYE:
		wr_u16(w, m->u.bye.reason);
		wr_u16(w, 0);
		break;
	case RXBNECK_T_ERROR:
		wr_u16(w, m->u.error.code);
		wr_u8(w, m->u.error.version_min);
		wr_u8(w, m->u.error.version_max);
		wr_u32(w, m->u.error.ref_seq);
		break;
	case RXBNECK_T_RATE: {
		const struct rxbneck_rate *x = &m->u.rate;

		wr_u16(w, x->port);
		wr_u16(w, x->flags);
		wr_u16(w, x->confidence);
		wr_u16(w, 0);
		wr_u64(w, x->rate_bps);
		wr_f64(w, x->loss);
		wr_u64(w, x->epoch);
		wr_u64(w, x->xfer_time_us);
		break;
	}
	case RXBNECK_T_PAUSE: {
		const struct rxbneck_pause *p = &m->u.pause;

		wr_u16(w, p->port);
		wr_u16(w, p->flags);
		wr_u32(w, p->repeat_count);
		wr_u64(w, p->start_in_us);
		wr_u64(w, p->duration_us);
		wr_u64(w, p->period_us);
		wr_u64(w, p->epoch);
		wr_u16(w, p->confidence);
		wr_u16(w, 0);
		wr_u32(w, 0);
		break;
	}
	case RXBNECK_T_BUFFER: {
		const struct rxbneck_buffer *b = &m->u.buffer;

		wr_u16(w, b->port);
		wr_u16(w, b->flags);
		wr_u32(w, b->pkt_bytes);
		wr_u64(w, b->rcvbuf_bytes);
		wr_u64(w, b->current_bytes);
		wr_u64(w, b->epoch);
		break;
	}
	case RXBNECK_T_STREAMS: {
		const struct rxbneck_streams *x = &m->u.streams;

		wr_u16(w, x->port);
		wr_u16(w, x->flags);
		wr_u32(w, x->streams);
		wr_u64(w, x->predicted_bps);
		wr_u64(w, x->epoch);
		wr_u16(w, x->confidence);
		wr_u8(w, x->model);
		wr_u8(w, x->points);
		wr_u16(w, x->rel_err);
		wr_u16(w, 0);
		break;
	}
	case RXBNECK_T_REPORT: {
		const struct rxbneck_report *x = &m->u.report;

		wr_u16(w, x->port);
		wr_u16(w, x->flags);
		wr_u32(w, x->rounds);
		wr_u64(w, x->file_bytes);
		wr_u64(w, x->elapsed_us);
		wr_u64(w, x->rate_bps);
		wr_u64(w, x->pkts_sent);
		wr_u64(w, x->pkts_resent);
		wr_u64(w, x->pkts_lost_first);
		break;
	}
	case RXBNECK_T_STREAMS_SAMPLE:
		wr_u16(w, m->u.sample.port);
		wr_u16(w, 0);
		wr_u32(w, m->u.sample.streams);
		wr_u64(w, m->u.sample.throughput_bps);
		wr_u64(w, m->u.sample.duration_us);
		break;
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
	switch (m->type) {
	case RXBNECK_T_HELLO:
		encode_text_tlv(w, RXBNECK_TLV_NAME, m->u.hello.name);
		break;
	case RXBNECK_T_HELLO_ACK:
		encode_text_tlv(w, RXBNECK_TLV_NAME, m->u.hello_ack.name);
		break;
	case RXBNECK_T_ERROR:
		encode_text_tlv(w, RXBNECK_TLV_MESSAGE, m->u.error.message);
		break;
	case RXBNECK_T_BYE:
		encode_text_tlv(w, RXBNECK_TLV_MESSAGE, m->u.bye.message);
		break;
	}
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
	encode_fixed(&w, m);
	encode_tlvs(&w, m);
	if (w.overflow)
		return 0;

	len = cap - w.left;
	w.p = (uint8_t *)buf + 8;
	w.left = 4;
	wr_u32(&w, (uint32_t)len);
	return len;
}
