// SPDX-License-Identifier: GPL-2.0-or-later
/* One sender connection: frames in, frames out, closing. See sendsrv_int.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/serve/sendsrv_int.h"
#include "common/log.h"
#include "common/util.h"

/* ------------------------------------------------------ connections -- */

void sendsrv_conn_set_state(struct sendsrv *s, struct conn *c, enum conn_state st)
{
	uint32_t *counts[] = {
		[C_HELLO] = &s->st.conns_hello,
		[C_ACTIVE] = &s->st.conns_active,
		[C_CLOSING] = &s->st.conns_closing,
	};

	if (c->state != C_FREE)
		(*counts[c->state])--;
	c->state = st;
	if (st != C_FREE)
		(*counts[st])++;
	/* Only live connections count against their source. */
	if (st != C_HELLO && st != C_ACTIVE && c->src) {
		sendsrv_source_put(s, c->src);
		c->src = NULL;
	}
}

static void set_events(struct sendsrv *s, struct conn *c, uint32_t ev)
{
	int err;

	if (ev == c->events)
		return;
	err = s->ops.fd_mod(s->ops.ctx, c->fd, ev);
	if (err < 0) {
		/* Rare (no memory in the loop); the deadlines still close it. */
		rxb_log_errno(RXB_LOG_ERR, -err, "sendsrv: %s: changing fd interest",
			      c->peer.addr_str);
		return;
	}
	c->events = ev;
}

void sendsrv_conn_goodbye(struct sendsrv *s, struct conn *c, int why)
{
	if (!c->owes_goodbye)
		return;
	c->owes_goodbye = false;
	if (s->ops.on_goodbye)
		s->ops.on_goodbye(s->ops.ctx, &c->peer, why);
}

/* Close and forget @c at once. The slot stays valid memory (C_FREE). */
void sendsrv_conn_release(struct sendsrv *s, struct conn *c)
{
	if (c->state == C_FREE)
		return;
	sendsrv_publish_leave(s, c);
	link_del(&c->tnode);
	s->ops.fd_del(s->ops.ctx, c->fd);
	if (close(c->fd) < 0)
		rxb_log_errno(RXB_LOG_DEBUG, errno, "sendsrv: close fd %d", c->fd);
	s->fdmap[c->fd] = FD_NONE;
	sendsrv_mem_free(s, c->in, c->in_cap);
	sendsrv_mem_free(s, c->out, c->out_cap);
	c->in = NULL;
	c->out = NULL;
	c->idle = NULL;
	c->in_len = c->out_len = c->out_off = c->out_cap = 0;
	c->fd = -1;
	sendsrv_conn_set_state(s, c, C_FREE);
	s->free_slots[s->n_free++] = c->slot;
}

/* The sender went away (BYE, EOF, reset): no ERROR to send. */
static void conn_gone(struct sendsrv *s, struct conn *c, int why)
{
	sendsrv_conn_goodbye(s, c, why);
	sendsrv_conn_release(s, c);
}

static int out_reserve(struct sendsrv *s, struct conn *c, uint32_t n)
{
	/* Normal frames stop at max_out_bytes; one final ERROR may pass it. */
	uint32_t limit = s->lim.max_out_bytes + RXBP_ENCODE_MAX;
	uint32_t cap;
	uint8_t *p;

	if (c->out_off + c->out_len + n <= c->out_cap)
		return 0;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len);
		c->out_off = 0;
	}
	if (c->out_len + n <= c->out_cap)
		return 0;
	cap = c->out_cap ? c->out_cap * 2 : 1024;
	if (cap < c->out_len + n)
		cap = c->out_len + n;
	if (cap > limit)
		cap = limit;
	if (c->out_len + n > cap)
		return -ENOBUFS;
	p = realloc(c->out, cap);
	if (!p)
		return -ENOMEM;
	s->st.mem_bytes += cap - c->out_cap;
	c->out = p;
	c->out_cap = cap;
	return 0;
}

/* send() what the kernel takes; 0, or -errno when the socket is broken. */
int sendsrv_conn_push_bytes(int fd, const uint8_t *p, uint32_t n, uint32_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t k = send(fd, p + *done, n - *done, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		*done += (uint32_t)k;
	}
	return 0;
}

static void closing_progress(struct sendsrv *s, struct conn *c);

/* Write queued output; on completion adjust interest. */
void sendsrv_conn_flush(struct sendsrv *s, struct conn *c)
{
	uint32_t done;
	int err = sendsrv_conn_push_bytes(c->fd, c->out + c->out_off, c->out_len, &done);

	c->out_off += done;
	c->out_len -= done;
	c->peer.out_queued_bytes = c->out_len;
	if (err < 0) {
		conn_gone(s, c, SENDSRV_GONE_EOF);
		return;
	}
	if (c->out_len == 0)
		c->out_off = 0;
	if (c->state == C_CLOSING)
		closing_progress(s, c);
	else
		set_events(s, c, SENDSRV_IN | (c->out_len ? SENDSRV_OUT : 0));
}

/*
 * Queue an encoded frame behind what is queued (or send it at once when
 * nothing is). @final allows the one ERROR frame past the output cap.
 * Returns 0, or < 0 when the connection was dropped.
 */
static int conn_write(struct sendsrv *s, struct conn *c, unsigned int type,
		      const uint8_t *buf, uint32_t n)
{
	uint32_t done = 0;
	int err = 0;

	if (c->out_len == 0)
		err = sendsrv_conn_push_bytes(c->fd, buf, n, &done);
	if (err == 0 && done < n) {
		err = out_reserve(s, c, n - done);
		if (err == 0) {
			memcpy(c->out + c->out_off + c->out_len, buf + done, n - done);
			c->out_len += n - done;
		}
	}
	c->peer.out_queued_bytes = c->out_len;
	c->peer.frames_out++;
	c->peer.bytes_out += n;
	s->st.frames_out++;
	if (type < SENDSRV_FRAME_TYPES)
		s->st.frames_out_by_type[type]++;
	s->st.bytes_out += n;
	if (err < 0) {
		if (err != -ENOMEM && sendsrv_log_ok(s))
			rxb_log_errno(RXB_LOG_INFO, -err, "sendsrv: %s: send",
				      c->peer.addr_str);
		else if (err == -ENOMEM)
			rxb_err("sendsrv: %s: out of memory for output",
				c->peer.addr_str);
		conn_gone(s, c, SENDSRV_GONE_EOF);
		return err;
	}
	if (c->state != C_CLOSING)
		set_events(s, c, SENDSRV_IN | (c->out_len ? SENDSRV_OUT : 0));
	return 0;
}

static size_t encode(struct conn *c, struct rxbp_msg *m, uint8_t *buf, size_t cap)
{
	size_t n;

	m->seq = c->seq_out + 1;
	n = rxbp_encode(buf, cap, m);
	if (n)
		c->seq_out++;
	return n;
}

/*
 * Send a frame to a live connection. Returns 0, or < 0 when the connection
 * is gone or closing afterwards (output cap reached, socket broken).
 */
int sendsrv_conn_send(struct sendsrv *s, struct conn *c, struct rxbp_msg *m)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n = encode(c, m, buf, sizeof(buf));

	if (n == 0) {
		rxb_err("sendsrv: refusing to send an invalid %s frame",
			rxbneck_type_name(m->type));
		return -EINVAL;
	}
	if (c->out_len + n > s->lim.max_out_bytes) {
		sendsrv_conn_fail(s, c, RXBNECK_ERR_OUTPUT_OVERFLOW, 0,
			  "more than %u bytes queued: the sender does not read",
			  s->lim.max_out_bytes);
		return -ENOBUFS;
	}
	return conn_write(s, c, m->type, buf, (uint32_t)n);
}

/* Closing: flush, then half-close, then drain input until EOF/deadline. */
static void closing_progress(struct sendsrv *s, struct conn *c)
{
	if (c->out_len) {
		set_events(s, c, SENDSRV_OUT);
		return;
	}
	if (shutdown(c->fd, SHUT_WR) < 0) {
		sendsrv_conn_release(s, c);
		return;
	}
	set_events(s, c, SENDSRV_IN);
}

void sendsrv_conn_error_msg(struct rxbp_msg *m, int code, uint32_t ref_seq)
{
	memset(m, 0, sizeof(*m));
	m->type = RXBNECK_T_ERROR;
	m->u.error.code = (uint16_t)code;
	m->u.error.version_min = RXBNECK_VERSION;
	m->u.error.version_max = RXBNECK_VERSION;
	m->u.error.ref_seq = ref_seq;
}

/*
 * A protocol violation, a limit or a timeout: send ERROR @code and close
 * gracefully (PROTOCOL.md §8.1).
 */
void sendsrv_conn_fail(struct sendsrv *s, struct conn *c, int code, uint32_t ref_seq,
		      const char *fmt, ...)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	struct rxbp_msg m;
	va_list ap;
	size_t n;

	if (c->state != C_HELLO && c->state != C_ACTIVE)
		return;
	sendsrv_conn_error_msg(&m, code, ref_seq);
	va_start(ap, fmt);
	vsnprintf(m.u.error.message, sizeof(m.u.error.message), fmt, ap);
	va_end(ap);
	if (sendsrv_log_ok(s))
		rxb_info("sendsrv: %s (#%llu): %s: %s", c->peer.addr_str,
			 (unsigned long long)c->peer.id, rxbneck_error_name((unsigned)code),
			 m.u.error.message);
	if (code >= 0 && code <= RXBNECK_ERR_MAX_)
		s->st.errors_sent[code]++;

	sendsrv_conn_goodbye(s, c, code);
	sendsrv_publish_leave(s, c);
	link_del(&c->tnode);
	sendsrv_conn_set_state(s, c, C_CLOSING);
	list_add_tail(&s->closing_list, &c->tnode);
	c->deadline_ns = sendsrv_now_ns(s) + SENDSRV_LINGER_NS;
	sendsrv_mem_free(s, c->in, c->in_cap);
	c->in = NULL;
	c->in_len = 0;
	c->idle = NULL;

	n = encode(c, &m, buf, sizeof(buf));
	if (n == 0 || conn_write(s, c, m.type, buf, (uint32_t)n) < 0)
		return;
	closing_progress(s, c);
}

/* Read and discard while closing: one read per event. */
void sendsrv_conn_drain(struct sendsrv *s, struct conn *c)
{
	uint8_t scratch[4096];
	ssize_t n = recv(c->fd, scratch, sizeof(scratch), MSG_DONTWAIT);

	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	sendsrv_conn_release(s, c);
}

/* ---------------------------------------------------------- frames -- */

static void touch_active(struct conn *c)
{
	c->deadline_ns = c->idle->timeout_ns ? c->peer.last_rx_ns + c->idle->timeout_ns :
					       UINT64_MAX;
	link_del(&c->tnode);
	list_add_tail(&c->idle->conns, &c->tnode);
}

static int send_hello_ack(struct sendsrv *s, struct conn *c)
{
	struct rxbneck_hello_ack *a;
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_HELLO_ACK;
	a = &m.u.hello_ack;
	a->minor = RXBNECK_MINOR;
	a->granted = c->peer.granted;
	a->accepts = (s->ops.on_report ? RXBNECK_ACCEPT_REPORT : 0) |
		     (s->ops.on_streams_sample ? RXBNECK_ACCEPT_STREAMS_SAMPLE : 0);
	/* What this connection keeps while it lasts, whatever a reload does. */
	a->max_frame_bytes = c->in_cap;
	a->idle_timeout_ms = (uint32_t)(c->idle->timeout_ns / RXB_NSEC_PER_MSEC);
	a->epoch_ms = s->lim.epoch_ms;
	a->instance_id = s->instance_id;
	snprintf(a->name, sizeof(a->name), "rxbneckd %s", RXB_VERSION);
	return sendsrv_conn_send(s, c, &m);
}

/* What of @want the daemon serves to @c (PROTOCOL.md §5.2). */
static uint16_t served(const struct sendsrv *s, const struct conn *c, uint16_t want)
{
	uint16_t g = want & sendsrv_streams_served(s, c);

	if (s->lim.buffer_advice && c->peer.hello.minor >= RXBNECK_MINOR_BUFFER)
		g |= want & SERVED_SUBS_BUFFER;
	return g;
}

static void on_hello(struct sendsrv *s, struct conn *c, const struct rxbp_msg *m)
{
	const struct rxbneck_hello *h = &m->u.hello;
	struct port_state *ps = sendsrv_publish_port(s, h->flow_port, true);
	int code = 0;

	if (!ps) {
		sendsrv_conn_fail(s, c, RXBNECK_ERR_INTERNAL, m->seq, "out of memory");
		return;
	}
	c->peer.hello = *h;
	c->peer.hello_rtt_us = h->rtt_us;
	c->peer.granted = served(s, c, h->subscribe);
	ps->pins++;
	if (s->ops.on_hello)
		code = s->ops.on_hello(s->ops.ctx, &c->peer);
	ps->pins--;
	if (code != 0) {
		sendsrv_publish_port_put(s, ps);
		if (code < 0 || code > RXBNECK_ERR_MAX_)
			code = RXBNECK_ERR_REFUSED;
		sendsrv_conn_fail(s, c, code, m->seq, "flow port %u refused", h->flow_port);
		return;
	}
	c->owes_goodbye = true;
	sendsrv_conn_set_state(s, c, C_ACTIVE);
	c->idle = s->idle_now;
	touch_active(c);
	c->ps = ps;
	ps->n_subs++;
	list_add_tail(&ps->subs, &c->pnode);
	if (sendsrv_log_ok(s))
		rxb_info("sendsrv: %s (#%llu): hello: flow %s port %u, payload %u bytes, "
			 "file %llu bytes, rtt %u us, subscribe 0x%x, \"%s\"",
			 c->peer.addr_str, (unsigned long long)c->peer.id,
			 h->flow_proto == 6 ? "tcp" : "udp", h->flow_port,
			 h->payload_bytes, (unsigned long long)h->file_bytes, h->rtt_us,
			 h->subscribe, h->name);
	if (send_hello_ack(s, c) < 0)
		return;
	sendsrv_publish_rate_if_due(s, c, true);
	if (c->state != C_ACTIVE)
		return;		/* the send failed */
	if ((c->peer.granted & RXBNECK_SUB_BUFFER) && ps->has_buffer &&
	    sendsrv_publish_push_buffer(s, c, &ps->buffer))
		return;
	sendsrv_streams_offer(s, c);
}

static void on_subscribe(struct sendsrv *s, struct conn *c, const struct rxbp_msg *m)
{
	uint16_t was = c->peer.granted;

	c->peer.hello.subscribe = m->u.subscribe.subscribe;
	c->peer.granted = served(s, c, m->u.subscribe.subscribe);
	if (m->u.subscribe.rtt_us)
		c->peer.hello.rtt_us = m->u.subscribe.rtt_us;
	/* Not told of changes or CANCEL any more: no schedule in force. */
	if (!(c->peer.granted & RXBNECK_SUB_PAUSE))
		c->peer.pause_until_ns = 0;
	/* New to RATE, or PAUSE taken or dropped: which rate is due changed. */
	sendsrv_publish_rate_if_due(s, c, !(was & RXBNECK_SUB_RATE));
	if (c->state != C_ACTIVE)
		return;		/* the send failed */
	/* New to BUFFER: the advice at once. */
	if ((c->peer.granted & RXBNECK_SUB_BUFFER) && !(was & RXBNECK_SUB_BUFFER) &&
	    c->ps && c->ps->has_buffer &&
	    sendsrv_publish_push_buffer(s, c, &c->ps->buffer))
		return;
	if (!(was & RXBNECK_SUB_STREAMS))
		c->peer.has_streams = false;	/* new to STREAMS: the advice at once */
	sendsrv_streams_offer(s, c);
}

/*
 * PROTOCOL.md §5.11: a REPORT is about the sender's own flow and adds up.
 * NULL when it does, else what does not.
 */
static const char *report_wrong(const struct rxbneck_hello *h, const struct rxbneck_report *r)
{
	bool aborted = r->flags & RXBNECK_REPORT_ABORTED;
	uint64_t first = r->pkts_sent - r->pkts_resent;	/* when resent <= sent */

	if (r->port != h->flow_port)
		return "port is not the flow of this connection";
	if (r->pkts_resent > r->pkts_sent)
		return "more datagrams resent than sent";
	if (r->pkts_lost_first > first)
		return "more datagrams lost in the first round than it sent";
	if (h->file_bytes && r->file_bytes > h->file_bytes)
		return "more bytes than the HELLO announced";
	if (aborted)
		return NULL;
	if (h->file_bytes && r->file_bytes != h->file_bytes)
		return "a finished transfer of another size than the HELLO announced";
	if (r->rounds < 1)
		return "a finished transfer without a round";
	if (r->elapsed_us == 0)
		return "a finished transfer that took no time";
	if ((uint64_t)r->rounds - 1 > r->pkts_resent)
		return "more resend rounds than datagrams resent";
	/* Each datagram carries at most payload_bytes of the file. */
	if (first < r->file_bytes / h->payload_bytes + (r->file_bytes % h->payload_bytes != 0))
		return "fewer first-round datagrams than the file needs";
	return NULL;
}

static void on_report(struct sendsrv *s, struct conn *c, const struct rxbp_msg *m)
{
	const char *why;

	if (!s->ops.on_report) {
		sendsrv_conn_fail(s, c, RXBNECK_ERR_UNSUPPORTED, m->seq, "REPORT not accepted");
		return;
	}
	why = report_wrong(&c->peer.hello, &m->u.report);
	if (why) {
		s->st.reports_rejected++;
		sendsrv_conn_fail(s, c, RXBNECK_ERR_BAD_VALUE, m->seq, "REPORT: %s", why);
		return;
	}
	c->peer.reports++;
	s->st.reports++;
	s->ops.on_report(s->ops.ctx, &c->peer, &m->u.report);
}

static void on_active_frame(struct sendsrv *s, struct conn *c, const struct rxbp_msg *m)
{
	struct rxbp_msg reply;

	switch (m->type) {
	case RXBNECK_T_SUBSCRIBE:
		on_subscribe(s, c, m);
		break;
	case RXBNECK_T_PING:
		memset(&reply, 0, sizeof(reply));
		reply.type = RXBNECK_T_PONG;
		reply.u.ping.token = m->u.ping.token;
		sendsrv_conn_send(s, c, &reply);
		break;
	case RXBNECK_T_PONG:
		break;
	case RXBNECK_T_BYE:
		conn_gone(s, c, SENDSRV_GONE_BYE);
		break;
	case RXBNECK_T_ERROR:
		if (sendsrv_log_ok(s))
			rxb_info("sendsrv: %s (#%llu): sender reports error %s: %s",
				 c->peer.addr_str, (unsigned long long)c->peer.id,
				 rxbneck_error_name(m->u.error.code), m->u.error.message);
		conn_gone(s, c, SENDSRV_GONE_PEER_ERROR);
		break;
	case RXBNECK_T_REPORT:
		on_report(s, c, m);
		break;
	case RXBNECK_T_STREAMS_SAMPLE:
		if (!s->ops.on_streams_sample) {
			sendsrv_conn_fail(s, c, RXBNECK_ERR_UNSUPPORTED, m->seq,
				  "STREAMS_SAMPLE not accepted");
			break;
		}
		c->peer.streams_samples++;
		s->st.streams_samples++;
		s->ops.on_streams_sample(s->ops.ctx, &c->peer, &m->u.sample);
		break;
	default:	/* HELLO again */
		sendsrv_conn_fail(s, c, RXBNECK_ERR_UNEXPECTED, m->seq, "%s after HELLO",
			  rxbneck_type_name(m->type));
		break;
	}
}

static void on_frame(struct sendsrv *s, struct conn *c, const uint8_t *frame, int n)
{
	struct rxbp_msg m;
	int err = rxbp_decode(frame, (size_t)n, &m);

	c->peer.frames_in++;
	s->st.frames_in++;
	c->peer.last_rx_ns = sendsrv_now_ns(s);
	if (err < 0) {
		sendsrv_conn_fail(s, c, -err, m.seq, "bad %s frame (type 0x%02x)",
			  rxbneck_type_name(m.type), m.type);
		return;
	}
	if (!(rxbp_type_direction(m.type) & RXBP_FROM_SENDER)) {
		sendsrv_conn_fail(s, c, RXBNECK_ERR_UNEXPECTED, m.seq, "%s is sent by the daemon",
			  rxbneck_type_name(m.type));
		return;
	}
	if (c->state == C_ACTIVE) {
		touch_active(c);
		on_active_frame(s, c, &m);
		return;
	}
	if (m.type == RXBNECK_T_HELLO)
		on_hello(s, c, &m);
	else if (m.type == RXBNECK_T_BYE || m.type == RXBNECK_T_ERROR)
		sendsrv_conn_release(s, c);
	else
		sendsrv_conn_fail(s, c, RXBNECK_ERR_UNEXPECTED, m.seq, "HELLO expected, got %s",
			  rxbneck_type_name(m.type));
}

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The header of the frame at @p (@n bytes there) shows error @code. */
static void header_error(struct sendsrv *s, struct conn *c, int code,
			 const uint8_t *p, uint32_t n)
{
	uint32_t seq = n >= RXBNECK_HDR_BYTES ? be32_at(p + 12) : 0;

	switch (code) {
	case RXBNECK_ERR_BAD_MAGIC:
		sendsrv_conn_fail(s, c, code, 0, "bad magic: not an rxbneck frame");
		break;
	case RXBNECK_ERR_BAD_VERSION:
		sendsrv_conn_fail(s, c, code, seq, "version %u not supported, this daemon speaks %u",
			  p[4], RXBNECK_VERSION);
		break;
	case RXBNECK_ERR_TOO_LARGE:
		sendsrv_conn_fail(s, c, code, seq, "frame of %u bytes exceeds the limit of %u",
			  be32_at(p + 8), c->in_cap);
		break;
	default:
		sendsrv_conn_fail(s, c, code, seq, "frame length %u below the header size",
			  be32_at(p + 8));
		break;
	}
}

void sendsrv_conn_read(struct sendsrv *s, struct conn *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len,
			 MSG_DONTWAIT);
	uint32_t off = 0;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		if (n < 0 && sendsrv_log_ok(s))
			rxb_log_errno(RXB_LOG_INFO, errno, "sendsrv: %s: recv",
				      c->peer.addr_str);
		conn_gone(s, c, SENDSRV_GONE_EOF);
		return;
	}
	c->in_len += (uint32_t)n;
	c->peer.bytes_in += (uint64_t)n;
	s->st.bytes_in += (uint64_t)n;

	while (c->state == C_HELLO || c->state == C_ACTIVE) {
		int len = rxbp_frame_check(c->in + off, c->in_len - off,
					   c->in_cap, NULL);

		if (len == 0)
			break;
		if (len < 0) {
			header_error(s, c, -len, c->in + off, c->in_len - off);
			return;
		}
		on_frame(s, c, c->in + off, len);
		off += (uint32_t)len;
	}
	if (c->state == C_HELLO || c->state == C_ACTIVE) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
}
