// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librxbneck: what the daemon sends - reading with arrival times, framing,
 * and dispatch to the latest values and the caller's callbacks.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "client_int.h"

static uint64_t lead_us(const struct rxbneck_client *c)
{
	return c->cfg.pause_lead_us < 0 ? c->rtt_us : (uint64_t)c->cfg.pause_lead_us;
}

/* ----------------------------------------------------------- input -- */

static void store_pause(struct rxbneck_client *c, const struct rxbneck_pause *p,
			uint64_t now_ns, struct rxbneck_pause_window *w)
{
	uint64_t start_ns = now_ns + p->start_in_us * NS_PER_US;
	uint64_t lead_ns = lead_us(c) * NS_PER_US;

	w->pause = *p;
	w->received_ns = now_ns;
	w->lead_us = lead_us(c);
	w->first_stop_ns = start_ns > lead_ns ? start_ns - lead_ns : 0;
	pthread_mutex_lock(&c->lock);
	c->have_pause = !(p->flags & RXBNECK_PAUSE_CANCEL);
	c->pause = *w;
	pthread_mutex_unlock(&c->lock);
}

static int on_hello_ack(struct rxbneck_client *c, const struct rxbp_msg *m)
{
	if (c->acked)
		return -RXBNECK_ERR_UNEXPECTED;
	c->ack = m->u.hello_ack;
	c->acked = true;
	return 0;
}

/* HELLO_ACK first (ERROR may come instead), and only once. */
static bool out_of_turn(const struct rxbneck_client *c, unsigned int type)
{
	if (c->acked)
		return type == RXBNECK_T_HELLO_ACK;
	return type != RXBNECK_T_HELLO_ACK && type != RXBNECK_T_ERROR;
}

/*
 * Act on one decoded frame. Returns 0, or -RXBNECK_ERR_* when the daemon
 * broke the protocol. *rc receives a RXBNECK_E* code when the connection
 * ends for another reason (ERROR, BYE, a failed reply).
 */
static int dispatch(struct rxbneck_client *c, const struct rxbp_msg *m,
		    uint64_t now_ns, int *rc)
{
	const struct rxbneck_callbacks *cb = &c->cfg.cb;
	struct rxbneck_pause_window w;
	struct rxbp_msg reply;

	if (m->type == RXBNECK_T_ERROR) {
		c->remote_error = m->u.error.code;
		*rc = client_fail(c, RXBNECK_EREMOTE, "daemon error %s: %s",
			   rxbneck_error_name(m->u.error.code), m->u.error.message);
		return 0;
	}
	if (!c->acked)		/* out_of_turn() let nothing else through */
		return on_hello_ack(c, m);
	switch (m->type) {
	case RXBNECK_T_HELLO_ACK:
		return -RXBNECK_ERR_UNEXPECTED;
	case RXBNECK_T_RATE:
		client_latest_set(c, &c->have_rate, &c->rate, &m->u.rate, sizeof(c->rate));
		if (cb->on_rate)
			cb->on_rate(c->cfg.user, &m->u.rate);
		break;
	case RXBNECK_T_PAUSE:
		store_pause(c, &m->u.pause, now_ns, &w);
		if (cb->on_pause)
			cb->on_pause(c->cfg.user, &w);
		break;
	case RXBNECK_T_BUFFER:
		client_latest_set(c, &c->have_buffer, &c->buffer, &m->u.buffer, sizeof(c->buffer));
		if (cb->on_buffer)
			cb->on_buffer(c->cfg.user, &m->u.buffer);
		break;
	case RXBNECK_T_STREAMS:
		client_latest_set(c, &c->have_streams, &c->streams, &m->u.streams, sizeof(c->streams));
		if (cb->on_streams)
			cb->on_streams(c->cfg.user, &m->u.streams);
		break;
	case RXBNECK_T_PING:
		memset(&reply, 0, sizeof(reply));
		reply.type = RXBNECK_T_PONG;
		reply.u.ping.token = m->u.ping.token;
		*rc = client_send_msg(c, &reply);
		break;
	case RXBNECK_T_PONG:
		break;		/* any frame ends the keepalive wait, below */
	case RXBNECK_T_BYE:
		*rc = client_fail(c, RXBNECK_ECLOSED, "daemon said BYE (%s)%s%s",
			   m->u.bye.reason == RXBNECK_BYE_SHUTDOWN ? "shutdown" :
			   "done", m->u.bye.message[0] ? ": " : "",
			   m->u.bye.message);
		break;
	}
	return 0;
}

/*
 * Decode and dispatch every whole frame in the input buffer. Returns the
 * number handled or a negative RXBNECK_E* code.
 */
int client_parse_input(struct rxbneck_client *c)
{
	uint64_t now_ns = c->in_arrival_ns;
	size_t off = 0;
	int handled = 0, rc = 0;

	while (rc == 0) {
		struct rxbp_msg m;
		struct rxbp_hdr h = { 0 };
		int n, err;

		n = rxbp_frame_check(c->in + off, c->in_len - off, CL_IN_BYTES, &h);
		if (n == 0)
			break;
		if (n < 0) {
			client_send_error(c, -n, h.seq, "bad frame from daemon");
			return client_fail(c, RXBNECK_EPROTO, "bad frame from daemon: %s",
				    rxbneck_error_name((unsigned int)-n));
		}
		/* PROTOCOL.md §3: who sends it and when, before its payload. */
		err = rxbp_type_check(h.type, RXBP_FROM_DAEMON);
		if (err == 0 && out_of_turn(c, h.type))
			err = -RXBNECK_ERR_UNEXPECTED;
		m.type = h.type;
		m.seq = h.seq;
		if (err == 0)
			err = rxbp_decode(c->in + off, (size_t)n, &m);
		off += (size_t)n;
		c->ping_sent_ns = 0;	/* the daemon is alive */
		/* Newer daemons may send types we do not know: skip them. */
		if (err == -RXBNECK_ERR_UNKNOWN_TYPE)
			continue;
		if (err == 0)
			err = dispatch(c, &m, now_ns, &rc);
		if (err < 0) {
			client_send_error(c, -err, m.seq, "unexpected frame");
			return client_fail(c, RXBNECK_EPROTO, "bad %s frame from daemon: %s",
				    rxbneck_type_name(m.type),
				    rxbneck_error_name((unsigned int)-err));
		}
		handled++;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	return rc < 0 ? rc : handled;
}

/*
 * The CLOCK_MONOTONIC time of a CLOCK_REALTIME receive timestamp @rx:
 * mono - (real - rx), with mono and real read as one pair. The pair is read
 * between two monotonic readings and taken again when they are far apart:
 * a thread preempted between the two clock reads would otherwise date the
 * arrival earlier by the whole time it was off the CPU. Never later than
 * now, and now itself when the timestamp is absent or implausible (a clock
 * step).
 */
static uint64_t arrival_mono_ns(const struct timespec *rx)
{
	uint64_t before_ns, after_ns = rxbneck_now_ns();
	struct timespec real;
	int64_t rx_ns, real_ns, age_ns;
	uint64_t mono_ns;

	if (!rx)
		return after_ns;
	for (int i = 0; i < CL_CLOCK_PAIR_TRIES; i++) {
		before_ns = rxbneck_now_ns();
		if (clock_gettime(CLOCK_REALTIME, &real) < 0)
			return rxbneck_now_ns();
		after_ns = rxbneck_now_ns();
		if (after_ns - before_ns <= CL_CLOCK_PAIR_MAX_NS)
			break;
	}
	mono_ns = before_ns + (after_ns - before_ns) / 2;
	rx_ns = (int64_t)rx->tv_sec * 1000000000LL + rx->tv_nsec;
	real_ns = (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec;
	age_ns = real_ns - rx_ns;
	if (age_ns < 0 || (uint64_t)age_ns > CL_MAX_ARRIVAL_AGE_NS || (uint64_t)age_ns > mono_ns)
		return after_ns;
	return mono_ns - (uint64_t)age_ns;
}

/*
 * One recvmsg(); returns bytes read (0 = would block) or a negative code.
 * Sets c->in_arrival_ns from the receive timestamp (SO_TIMESTAMPNS: that
 * of the last segment read, which completes the frames in the buffer).
 */
int client_read_some(struct rxbneck_client *c)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {
		.iov_base = c->in + c->in_len,
		.iov_len = sizeof(c->in) - c->in_len,
	};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	const struct timespec *rx = NULL;
	struct cmsghdr *cm;
	ssize_t n;

	do {
		n = recvmsg(c->fd, &mh, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return client_fail_errno(c, errno, "recv");
	}
	if (n == 0)
		return client_fail(c, RXBNECK_ECLOSED, "daemon closed the connection");
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(*rx)))
			rx = (const struct timespec *)(void *)CMSG_DATA(cm);
	c->in_arrival_ns = arrival_mono_ns(rx);
	c->in_len += (size_t)n;
	return (int)n;
}
