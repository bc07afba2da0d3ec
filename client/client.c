// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librxbneck: connection to rxbneckd, frame output and the public API
 * (client_input.c reads and dispatches what the daemon sends).
 *
 * One non-blocking TCP socket per handle. Input is buffered until a whole
 * frame is there (at most RXBNECK_FRAME_MAX_DEFAULT bytes, the limit this
 * side enforces); output is written at once and only what the kernel does
 * not take is queued, in a fixed buffer. No allocation after _new().
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rxbneck/client.h"
#include "proto/codec.h"

#include "client_int.h"

/* ------------------------------------------------------------ misc -- */

const char *rxbneck_version(void)
{
	return RXB_VERSION;
}

uint64_t rxbneck_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

const char *rxbneck_strerror(int rc)
{
	switch (rc) {
	case RXBNECK_OK: return "success";
	case RXBNECK_ESYS: return "system call failed";
	case RXBNECK_EINVAL: return "invalid argument";
	case RXBNECK_ENOMEM: return "out of memory";
	case RXBNECK_ERESOLVE: return "host name did not resolve";
	case RXBNECK_ETIMEDOUT: return "timed out";
	case RXBNECK_ECLOSED: return "connection closed by the daemon";
	case RXBNECK_EPROTO: return "protocol error";
	case RXBNECK_EREMOTE: return "daemon reported an error";
	case RXBNECK_ENOTCONN: return "not connected";
	case RXBNECK_ENODATA: return "no value received yet";
	case RXBNECK_EUNSUPPORTED: return "not supported by the daemon";
	case RXBNECK_ENOBUFS: return "output queue full";
	}
	return "unknown error";
}

int client_fail(struct rxbneck_client *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	return rc;
}

int client_fail_errno(struct rxbneck_client *c, int err, const char *what)
{
	char buf[128];

	if (err == EPIPE || err == ECONNRESET)
		return client_fail(c, RXBNECK_ECLOSED, "%s: %s", what,
			    strerror_r(err, buf, sizeof(buf)));
	return client_fail(c, RXBNECK_ESYS, "%s: %s", what, strerror_r(err, buf, sizeof(buf)));
}

void rxbneck_client_config_init(struct rxbneck_client_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "localhost";
	cfg->port = RXBNECK_DEFAULT_PORT;
	cfg->timeout_ms = 5000;
	cfg->hello.flow_proto = 17;
	cfg->hello.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE;
	cfg->pause_lead_us = -1;
}

struct rxbneck_client *rxbneck_client_new(const struct rxbneck_client_config *cfg)
{
	struct rxbneck_client *c;

	if (!cfg)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cfg = *cfg;
	c->host = strdup(cfg->host ? cfg->host : "localhost");
	if (!c->host || pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c->host);
		free(c);
		return NULL;
	}
	c->cfg.host = c->host;
	c->fd = -1;
	c->rtt_us = cfg->hello.rtt_us;
	return c;
}

/* Forget the connection; keep the latest values (they may still be useful). */
static void drop(struct rxbneck_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->acked = false;
	c->in_len = 0;
	c->seq_out = 0;
	c->out_off = 0;
	c->out_len = 0;
	c->ping_sent_ns = 0;
}

/* ---------------------------------------------------------- output -- */

static int flush(struct rxbneck_client *c)
{
	while (c->out_len > 0) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return client_fail_errno(c, errno, "send");
		}
		c->out_off += (size_t)n;
		c->out_len -= (size_t)n;
	}
	c->out_off = 0;
	return 0;
}

/* Encode @m with the next sequence number and send or queue it. */
int client_send_msg(struct rxbneck_client *c, struct rxbp_msg *m)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n;

	if (c->fd < 0)
		return client_fail(c, RXBNECK_ENOTCONN, "not connected");
	m->seq = c->seq_out + 1;
	n = rxbp_encode(buf, sizeof(buf), m);
	if (n == 0)
		return client_fail(c, RXBNECK_EINVAL, "invalid %s frame",
			    rxbneck_type_name(m->type));
	if (c->out_off + c->out_len + n > sizeof(c->out)) {
		memmove(c->out, c->out + c->out_off, c->out_len);
		c->out_off = 0;
	}
	if (c->out_len + n > sizeof(c->out))
		return client_fail(c, RXBNECK_ENOBUFS, "output queue full (%zu bytes)",
			    c->out_len);
	memcpy(c->out + c->out_off + c->out_len, buf, n);
	c->out_len += n;
	c->seq_out++;
	c->last_tx_ns = rxbneck_now_ns();
	return flush(c);
}

/* Best effort on the way out: tell the daemon why we close. */
void client_send_error(struct rxbneck_client *c, int code, uint32_t ref_seq,
		       const char *msg)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_ERROR;
	m.u.error.code = (uint16_t)code;
	m.u.error.version_min = RXBNECK_VERSION;
	m.u.error.version_max = RXBNECK_VERSION;
	m.u.error.ref_seq = ref_seq;
	snprintf(m.u.error.message, sizeof(m.u.error.message), "%s", msg);
	client_send_msg(c, &m);
}

static void send_bye(struct rxbneck_client *c)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_BYE;
	m.u.bye.reason = RXBNECK_BYE_DONE;
	client_send_msg(c, &m);
}

/* ----------------------------------------------------------- connect -- */

/* poll() @fd for @events until @deadline_ns; 0 ready, negative otherwise. */
static int wait_fd(struct rxbneck_client *c, short events, uint64_t deadline_ns,
		   const char *what)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = events };
		uint64_t now = rxbneck_now_ns();
		int r;

		if (now >= deadline_ns)
			return client_fail(c, RXBNECK_ETIMEDOUT, "%s: timed out after %u ms",
				    what, c->cfg.timeout_ms);
		r = poll(&pfd, 1, (int)((deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return client_fail_errno(c, errno, "poll");
	}
}

static int try_address(struct rxbneck_client *c, const struct addrinfo *ai,
		       uint64_t deadline_ns)
{
	int one = 1, err = 0, rc;
	socklen_t len = sizeof(err);

	c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       ai->ai_protocol);
	if (c->fd < 0)
		return client_fail_errno(c, errno, "socket");
	/* Small frames, and PAUSE is time-critical: no Nagle delay. */
	if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return client_fail_errno(c, errno, "setsockopt(TCP_NODELAY)");
	/* Arrival times for the reads (client_read_some()); PAUSE is dated by them. */
	if (setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0)
		return client_fail_errno(c, errno, "setsockopt(SO_TIMESTAMPNS)");
	if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return client_fail_errno(c, errno, "connect");
	rc = wait_fd(c, POLLOUT, deadline_ns, "connect");
	if (rc < 0)
		return rc;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return client_fail_errno(c, errno, "getsockopt(SO_ERROR)");
	if (err != 0)
		return client_fail_errno(c, err, "connect");
	return 0;
}

static int open_socket(struct rxbneck_client *c, uint64_t deadline_ns)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char port[8];
	int rc = RXBNECK_ERESOLVE, gai;

	snprintf(port, sizeof(port), "%u", c->cfg.port ? c->cfg.port :
		 RXBNECK_DEFAULT_PORT);
	gai = getaddrinfo(c->host, port, &hints, &res);
	if (gai != 0)
		return client_fail(c, RXBNECK_ERESOLVE, "%s: %s", c->host, gai_strerror(gai));
	for (ai = res; ai; ai = ai->ai_next) {
		rc = try_address(c, ai, deadline_ns);
		if (rc == 0)
			break;
		drop(c);
		if (rc == RXBNECK_ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (rc < 0) {
		char msg[sizeof(c->errmsg)];

		snprintf(msg, sizeof(msg), "%s", c->errmsg);
		return client_fail(c, rc, "%s port %s: %s", c->host, port, msg);
	}
	return 0;
}

static void make_hello(const struct rxbneck_client *c, struct rxbp_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = RXBNECK_T_HELLO;
	m->u.hello = c->cfg.hello;
	m->u.hello.minor = RXBNECK_MINOR;
	m->u.hello.rtt_us = c->rtt_us;
}

static int handshake(struct rxbneck_client *c, uint64_t deadline_ns)
{
	struct rxbp_msg m;
	int rc;

	make_hello(c, &m);
	rc = client_send_msg(c, &m);

	while (rc >= 0 && !c->acked) {
		short ev = POLLIN | (c->out_len ? POLLOUT : 0);

		rc = wait_fd(c, ev, deadline_ns, "waiting for HELLO_ACK");
		if (rc < 0)
			break;
		rc = flush(c);
		if (rc < 0)
			break;
		rc = client_read_some(c);
		if (rc > 0)
			rc = client_parse_input(c);
	}
	return rc < 0 ? rc : 0;
}

int rxbneck_client_connect(struct rxbneck_client *c)
{
	uint64_t deadline_ns;
	struct rxbp_msg m;
	int rc;

	if (!c)
		return RXBNECK_EINVAL;
	rxbneck_client_disconnect(c);
	c->errmsg[0] = '\0';
	c->remote_error = 0;
	make_hello(c, &m);
	if (rxbp_validate(&m) != 0)
		return client_fail(c, RXBNECK_EINVAL, "invalid hello: flow_port %u, proto %u, "
			    "payload %u bytes, rtt %u us, name \"%.*s\"",
			    m.u.hello.flow_port, m.u.hello.flow_proto,
			    m.u.hello.payload_bytes, m.u.hello.rtt_us,
			    RXBNECK_NAME_MAX, m.u.hello.name);
	deadline_ns = rxbneck_now_ns() + (uint64_t)c->cfg.timeout_ms * NS_PER_MS;
	rc = open_socket(c, deadline_ns);
	if (rc == 0)
		rc = handshake(c, deadline_ns);
	if (rc < 0) {
		drop(c);
		return rc;
	}
	return 0;
}

void rxbneck_client_disconnect(struct rxbneck_client *c)
{
	if (!c || c->fd < 0)
		return;
	if (c->acked)
		send_bye(c);
	drop(c);
}

void rxbneck_client_close(struct rxbneck_client *c)
{
	if (!c)
		return;
	rxbneck_client_disconnect(c);
	pthread_mutex_destroy(&c->lock);
	free(c->host);
	free(c);
}

/* ------------------------------------------------------------- loop -- */

int rxbneck_client_fd(const struct rxbneck_client *c)
{
	return c && c->acked ? c->fd : -1;
}

short rxbneck_client_poll_events(const struct rxbneck_client *c)
{
	if (!c || !c->acked)
		return 0;
	return (short)(POLLIN | (c->out_len ? POLLOUT : 0));
}

static uint64_t idle_ns(const struct rxbneck_client *c)
{
	return (uint64_t)c->ack.idle_timeout_ms * NS_PER_MS;
}

int rxbneck_client_timeout_ms(const struct rxbneck_client *c)
{
	uint64_t now, due;

	if (!c || !c->acked || c->ack.idle_timeout_ms == 0)
		return -1;
	now = rxbneck_now_ns();
	/* Keepalive at a third of the idle timeout; give up at a whole one. */
	due = c->ping_sent_ns ? c->ping_sent_ns + idle_ns(c) :
			       c->last_tx_ns + idle_ns(c) / 3;
	if (due <= now)
		return 0;
	due = (due - now + NS_PER_MS - 1) / NS_PER_MS;
	return due > 3600000 ? 3600000 : (int)due;
}

static int keepalive(struct rxbneck_client *c)
{
	uint64_t now = rxbneck_now_ns();
	struct rxbp_msg m;
	int rc;

	if (c->ack.idle_timeout_ms == 0)
		return 0;
	if (c->ping_sent_ns) {
		if (now - c->ping_sent_ns >= idle_ns(c))
			return client_fail(c, RXBNECK_ETIMEDOUT,
				    "daemon did not answer a keepalive in %u ms",
				    c->ack.idle_timeout_ms);
		return 0;
	}
	if (now - c->last_tx_ns < idle_ns(c) / 3)
		return 0;
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_PING;
	m.u.ping.token = ++c->ping_token;
	rc = client_send_msg(c, &m);
	if (rc == 0)
		c->ping_sent_ns = now;
	return rc;
}

static int failed(struct rxbneck_client *c, int rc)
{
	drop(c);
	if (c->cfg.cb.on_error)
		c->cfg.cb.on_error(c->cfg.user, rc, c->errmsg);
	return rc;
}

int rxbneck_client_process(struct rxbneck_client *c)
{
	int handled = 0, rc = 0;

	if (!c)
		return RXBNECK_EINVAL;
	if (!c->acked)
		return client_fail(c, RXBNECK_ENOTCONN, "not connected");
	for (int i = 0; i < CL_READS_PER_PROCESS; i++) {
		rc = client_read_some(c);
		if (rc <= 0)
			break;
		rc = client_parse_input(c);
		if (rc < 0)
			break;
		handled += rc;
	}
	if (rc >= 0)
		rc = flush(c);
	if (rc >= 0)
		rc = keepalive(c);
	if (rc < 0)
		return failed(c, rc);
	return handled;
}

int rxbneck_client_wait(struct rxbneck_client *c, int timeout_ms)
{
	uint64_t deadline = 0, now;

	if (!c)
		return RXBNECK_EINVAL;
	if (timeout_ms >= 0)
		deadline = rxbneck_now_ns() + (uint64_t)timeout_ms * NS_PER_MS;
	for (;;) {
		struct pollfd pfd;
		int t, rc;

		if (!c->acked)
			return client_fail(c, RXBNECK_ENOTCONN, "not connected");
		t = rxbneck_client_timeout_ms(c);
		now = rxbneck_now_ns();
		if (timeout_ms >= 0) {
			int left = now >= deadline ? 0 :
				   (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS);

			if (t < 0 || left < t)
				t = left;
		}
		pfd.fd = c->fd;
		pfd.events = rxbneck_client_poll_events(c);
		pfd.revents = 0;
		if (poll(&pfd, 1, t) < 0 && errno != EINTR)
			return failed(c, client_fail_errno(c, errno, "poll"));
		rc = rxbneck_client_process(c);
		if (rc != 0)
			return rc;
		if (timeout_ms >= 0 && rxbneck_now_ns() >= deadline)
			return 0;
	}
}

/* ---------------------------------------------------------- values -- */

void client_latest_set(struct rxbneck_client *c, bool *have, void *dst, const void *src,
		       size_t size)
{
	pthread_mutex_lock(&c->lock);
	memcpy(dst, src, size);
	*have = true;
	pthread_mutex_unlock(&c->lock);
}

int client_latest_get(struct rxbneck_client *c, const bool *have, const void *src, void *out,
		      size_t size)
{
	int rc = RXBNECK_ENODATA;

	pthread_mutex_lock(&c->lock);
	if (*have) {
		memcpy(out, src, size);
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int rxbneck_client_latest_rate(struct rxbneck_client *c, struct rxbneck_rate *out)
{
	if (!c || !out)
		return RXBNECK_EINVAL;
	return client_latest_get(c, &c->have_rate, &c->rate, out, sizeof(c->rate));
}

int rxbneck_client_latest_streams(struct rxbneck_client *c, struct rxbneck_streams *out)
{
	if (!c || !out)
		return RXBNECK_EINVAL;
	return client_latest_get(c, &c->have_streams, &c->streams, out, sizeof(c->streams));
}

int rxbneck_client_latest_pause(struct rxbneck_client *c,
				struct rxbneck_pause_window *out)
{
	if (!c || !out)
		return RXBNECK_EINVAL;
	return client_latest_get(c, &c->have_pause, &c->pause, out, sizeof(c->pause));
}

int rxbneck_client_latest_buffer(struct rxbneck_client *c, struct rxbneck_buffer *out)
{
	if (!c || !out)
		return RXBNECK_EINVAL;
	return client_latest_get(c, &c->have_buffer, &c->buffer, out, sizeof(c->buffer));
}

int rxbneck_buffer_apply(int fd, const struct rxbneck_buffer *b, uint64_t *now_bytes)
{
	/* SO_RCVBUFFORCE: asm-generic/socket.h, every Linux architecture */
	const int force_opt = 33;
	uint64_t half;
	int val, got = 0;
	socklen_t len = sizeof(got);

	if (fd < 0 || !b || !b->rcvbuf_bytes || b->rcvbuf_bytes > RXBNECK_RCVBUF_MAX)
		return RXBNECK_EINVAL;
	half = (b->rcvbuf_bytes + 1) / 2;
	val = half > INT_MAX / 2 ? INT_MAX / 2 : (int)half;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &val, sizeof(val)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
		return RXBNECK_ESYS;
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len))
		return RXBNECK_ESYS;
	if (now_bytes)
		*now_bytes = got > 0 ? (uint64_t)got : 0;
	return 0;
}

int rxbneck_client_pause_state(struct rxbneck_client *c, uint64_t now_ns,
			       uint64_t *until_ns)
{
	struct rxbneck_pause_window w;

	if (rxbneck_client_latest_pause(c, &w) != 0) {
		if (until_ns)
			*until_ns = UINT64_MAX;
		return 0;
	}
	return rxbneck_pause_window_state(&w, now_ns, until_ns);
}

/* ----------------------------------------------------------- sends -- */

int rxbneck_client_subscribe(struct rxbneck_client *c, uint16_t subscribe,
			     uint32_t rtt_us)
{
	struct rxbp_msg m;
	int rc;

	if (!c)
		return RXBNECK_EINVAL;
	if (!c->acked)
		return client_fail(c, RXBNECK_ENOTCONN, "not connected");
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_SUBSCRIBE;
	m.u.subscribe.subscribe = subscribe;
	m.u.subscribe.rtt_us = rtt_us;
	rc = client_send_msg(c, &m);
	if (rc == RXBNECK_EINVAL || rc == RXBNECK_ENOBUFS)
		return rc;		/* nothing sent, connection intact */
	if (rc < 0)
		return failed(c, rc);
	c->cfg.hello.subscribe = subscribe;
	if (rtt_us)
		c->rtt_us = rtt_us;
	return 0;
}

static int send_optional(struct rxbneck_client *c, struct rxbp_msg *m,
			 uint16_t accept_bit)
{
	int rc;

	if (!c->acked)
		return client_fail(c, RXBNECK_ENOTCONN, "not connected");
	if (!(c->ack.accepts & accept_bit))
		return client_fail(c, RXBNECK_EUNSUPPORTED, "daemon does not accept %s",
			    rxbneck_type_name(m->type));
	rc = client_send_msg(c, m);
	if (rc == RXBNECK_EINVAL || rc == RXBNECK_ENOBUFS)
		return rc;
	return rc < 0 ? failed(c, rc) : 0;
}

int rxbneck_client_report(struct rxbneck_client *c, const struct rxbneck_report *r)
{
	struct rxbp_msg m;

	if (!c || !r)
		return RXBNECK_EINVAL;
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_REPORT;
	m.u.report = *r;
	return send_optional(c, &m, RXBNECK_ACCEPT_REPORT);
}

int rxbneck_client_streams_sample(struct rxbneck_client *c,
				  const struct rxbneck_streams_sample *s)
{
	struct rxbp_msg m;

	if (!c || !s)
		return RXBNECK_EINVAL;
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_STREAMS_SAMPLE;
	m.u.sample = *s;
	if (!m.u.sample.port)
		m.u.sample.port = c->cfg.hello.flow_port;
	return send_optional(c, &m, RXBNECK_ACCEPT_STREAMS_SAMPLE);
}

/* ------------------------------------------------------------ info -- */

const struct rxbneck_hello_ack *rxbneck_client_daemon(const struct rxbneck_client *c)
{
	return c && c->acked ? &c->ack : NULL;
}

const char *rxbneck_client_errmsg(const struct rxbneck_client *c)
{
	return c ? c->errmsg : "no client";
}

int rxbneck_client_remote_error(const struct rxbneck_client *c)
{
	return c ? c->remote_error : 0;
}
