// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sendsrv: sender control connections (docs/PROTOCOL.md, daemon side).
 *
 * Connections live in a table of slots allocated at init: max_conns for
 * live ones (waiting for HELLO or active) plus SENDSRV_SPARE_SLOTS for
 * connections being closed after an error, so a flood of rejected
 * connections cannot starve accepted ones (a closing connection is evicted
 * when an accepted one needs its slot). An fd index maps fds to slots.
 *
 * Each state keeps its connections on a list ordered by deadline: the hello
 * and closing timeouts are constant, so accept/close order is deadline
 * order; active connections move to the tail whenever a frame arrives
 * (LRU), so the head is always the next to time out. sendsrv_tick() only
 * looks at list heads.
 *
 * Active connections are also on their flow port's subscriber list (a small
 * hash of ports), so a publish touches only that port's senders.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/serve/sendsrv.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "proto/codec.h"

_Static_assert(SENDSRV_IN == EPOLLIN && SENDSRV_OUT == EPOLLOUT &&
	       SENDSRV_ERR == EPOLLERR && SENDSRV_HUP == EPOLLHUP,
	       "SENDSRV_* event bits must equal epoll's");

#define PORT_BUCKETS		64
#define ACCEPT_PAUSE_NS		(100 * RXB_NSEC_PER_MSEC)
#define LOG_BURST		20	/* noisy messages per second */
#define FD_NONE			(-1)
#define FD_LISTENER(i)		(-2 - (int32_t)(i))
#define SERVED_SUBS		(RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE)

/* ------------------------------------------------------------ lists -- */

struct link {
	struct link *prev, *next;
};

static void link_init(struct link *l)
{
	l->prev = l;
	l->next = l;
}

static bool list_empty(const struct link *head)
{
	return head->next == head;
}

static void link_del(struct link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	link_init(l);
}

static void list_add_tail(struct link *head, struct link *l)
{
	l->prev = head->prev;
	l->next = head;
	head->prev->next = l;
	head->prev = l;
}

#define link_entry(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ------------------------------------------------------------ state -- */

enum conn_state { C_FREE, C_HELLO, C_ACTIVE, C_CLOSING };

struct port_state {
	struct port_state *next;	/* hash chain */
	uint16_t port;
	uint32_t n_subs;
	uint32_t pins;			/* held across publish loops */
	struct link subs;
	bool has_rate;
	struct rxbneck_rate rate;
	/* The rate between pause windows, for senders that obey them. */
	bool has_rate_between;
	struct rxbneck_rate rate_between;
};

struct conn {
	enum conn_state state;
	int fd;
	uint32_t events;		/* interest registered with the loop */
	struct link tnode;		/* on hello/active/closing list */
	struct link pnode;		/* on its port's subscriber list */
	struct port_state *ps;
	uint64_t deadline_ns;
	uint8_t *in;			/* max_frame_bytes, live states only */
	uint32_t in_len;
	uint8_t *out;
	uint32_t out_off, out_len, out_cap;
	uint32_t seq_out;
	bool owes_goodbye;		/* on_hello accepted it */
	struct sendsrv_peer peer;
};

struct listener {
	int fd;
	bool watched;
};

struct sendsrv {
	struct sendsrv_limits lim;
	struct sendsrv_ops ops;
	uint64_t frac_ppm;		/* rate_change_frac in parts per million */
	uint64_t instance_id;
	struct conn *slots;
	uint32_t n_slots;
	uint32_t *free_slots;		/* stack of free slot indices */
	uint32_t n_free;
	int32_t *fdmap;			/* fd -> slot, FD_NONE, FD_LISTENER(i) */
	uint32_t fdmap_len;
	struct listener listeners[SENDSRV_MAX_LISTEN];
	uint32_t n_listeners;
	uint64_t accept_resume_ns;	/* != 0: accepting paused until then */
	struct link hello_list, active_list, closing_list;
	struct port_state *ports[PORT_BUCKETS];
	uint64_t next_id;
	struct sendsrv_stats st;
	uint64_t log_window_ns;
	uint32_t log_count;
	uint64_t log_suppressed;
};

static uint64_t now_ns(const struct sendsrv *s)
{
	return s->ops.now_ns ? s->ops.now_ns(s->ops.ctx) : rxb_mono_ns();
}

/* Per-connection messages are rate-limited: a flood must not flood logs. */
static bool log_ok(struct sendsrv *s)
{
	uint64_t t = now_ns(s);

	if (t - s->log_window_ns >= RXB_NSEC_PER_SEC) {
		if (s->log_suppressed)
			rxb_notice("sendsrv: %llu connection messages suppressed",
				   (unsigned long long)s->log_suppressed);
		s->log_window_ns = t;
		s->log_count = 0;
		s->log_suppressed = 0;
	}
	if (s->log_count < LOG_BURST) {
		s->log_count++;
		return true;
	}
	s->log_suppressed++;
	return false;
}

static void *mem_alloc(struct sendsrv *s, size_t n)
{
	void *p = calloc(1, n);

	if (p)
		s->st.mem_bytes += n;
	return p;
}

static void mem_free(struct sendsrv *s, void *p, size_t n)
{
	if (!p)
		return;
	s->st.mem_bytes -= n;
	free(p);
}

/* ------------------------------------------------------- allow-list -- */

static int cidr_fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -EINVAL;
}

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool host_bits_zero(const uint8_t *a, unsigned int len, unsigned int bits)
{
	for (unsigned int i = bits; i < len * 8; i++)
		if (a[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

int sendsrv_cidr_parse(const char *text, struct sendsrv_cidr *out, const char **why)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char buf[INET6_ADDRSTRLEN + 8];
	struct sendsrv_cidr c;
	char *slash;
	uint64_t plen = 0;
	unsigned int max;

	if (rxb_strlcpy(buf, text, sizeof(buf)) >= sizeof(buf))
		return cidr_fail(why, "too long");
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(&c, 0, sizeof(c));
	if (inet_pton(AF_INET, buf, c.addr) == 1) {
		c.family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, c.addr) == 1) {
		c.family = AF_INET6;
		max = 128;
	} else {
		return cidr_fail(why, "not an IPv4 or IPv6 address");
	}
	plen = max;
	if (slash && rxb_parse_u64(slash + 1, 0, max, &plen) != 0)
		return cidr_fail(why, "bad prefix length");
	c.prefix_len = (uint8_t)plen;
	/* ::ffff:a.b.c.d/96+n is the IPv4 prefix a.b.c.d/n. */
	if (c.family == AF_INET6 && c.prefix_len >= 96 &&
	    memcmp(c.addr, v4mapped, sizeof(v4mapped)) == 0) {
		memmove(c.addr, c.addr + 12, 4);
		memset(c.addr + 4, 0, 12);
		c.family = AF_INET;
		c.prefix_len -= 96;
	}
	if (!host_bits_zero(c.addr, c.family == AF_INET ? 4 : 16, c.prefix_len))
		return cidr_fail(why, "host bits set after the prefix");
	*out = c;
	return 0;
}

bool sendsrv_cidr_match(const struct sendsrv_cidr *c, const struct sockaddr *sa)
{
	const uint8_t *a;
	int family;

	if (sa->sa_family == AF_INET) {
		a = (const uint8_t *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		family = AF_INET;
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a6 =
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			a = a6->s6_addr + 12;
			family = AF_INET;
		} else {
			a = a6->s6_addr;
			family = AF_INET6;
		}
	} else {
		return false;
	}
	return family == c->family && prefix_equal(a, c->addr, c->prefix_len);
}

static bool allowed(const struct sendsrv *s, const struct sockaddr *sa)
{
	for (size_t i = 0; i < s->lim.n_allow; i++)
		if (sendsrv_cidr_match(&s->lim.allow[i], sa))
			return true;
	return false;
}

static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(buf, n, "%s:%u", a, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, a, sizeof(a));
		else
			inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(buf, n, IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) ? "%s:%u" :
			 "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, n, "?");
	}
}

/* ----------------------------------------------------------- limits -- */

void sendsrv_limits_default(struct sendsrv_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_frame_bytes = RXBNECK_FRAME_MAX_DEFAULT;
	l->max_conns = 1024;
	l->hello_timeout_ns = 5 * RXB_NSEC_PER_SEC;
	l->idle_timeout_ns = 60 * RXB_NSEC_PER_SEC;
	l->max_out_bytes = 16384;
	l->rate_change_frac = 0.05;
	l->rate_refresh_epochs = 10;
	l->epoch_ms = 1000;
	sendsrv_cidr_parse("127.0.0.0/8", &l->allow[0], NULL);
	sendsrv_cidr_parse("::1/128", &l->allow[1], NULL);
	l->n_allow = 2;
}

static int check_limits(const struct sendsrv_limits *l)
{
	const char *bad = NULL;

	if (l->max_frame_bytes < RXBNECK_FRAME_MAX_MIN ||
	    l->max_frame_bytes > RXBNECK_FRAME_MAX_LIMIT)
		bad = "max_frame_bytes must be within 512..65536";
	else if (l->max_conns < 1 || l->max_conns > 1000000)
		bad = "max_conns must be within 1..1000000";
	else if (l->hello_timeout_ns == 0)
		bad = "hello_timeout must be > 0";
	else if (l->idle_timeout_ns / RXB_NSEC_PER_MSEC > UINT32_MAX)
		bad = "idle_timeout too large";
	else if (l->max_out_bytes < 1024 || l->max_out_bytes > (64u << 20))
		bad = "max_out_bytes must be within 1 KiB..64 MiB";
	else if (!(l->rate_change_frac >= 0.0 && l->rate_change_frac <= 1.0))
		bad = "rate_change_frac must be within 0..1";
	else if (l->n_allow > SENDSRV_MAX_ALLOW)
		bad = "too many allow-list entries";
	if (bad) {
		rxb_err("sendsrv: %s", bad);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ ports -- */

static struct port_state **port_slot(struct sendsrv *s, uint16_t port)
{
	struct port_state **pp = &s->ports[port % PORT_BUCKETS];

	while (*pp && (*pp)->port != port)
		pp = &(*pp)->next;
	return pp;
}

static struct port_state *port_get(struct sendsrv *s, uint16_t port, bool create)
{
	struct port_state **pp = port_slot(s, port);

	if (*pp || !create)
		return *pp;
	*pp = mem_alloc(s, sizeof(**pp));
	if (!*pp)
		return NULL;
	(*pp)->port = port;
	link_init(&(*pp)->subs);
	return *pp;
}

/* Free @ps when nobody subscribes and no loop holds it. */
static void port_put(struct sendsrv *s, struct port_state *ps)
{
	struct port_state **pp;

	if (ps->n_subs || ps->pins)
		return;
	pp = port_slot(s, ps->port);
	*pp = ps->next;
	mem_free(s, ps, sizeof(*ps));
}

/* ------------------------------------------------------ connections -- */

static void set_state(struct sendsrv *s, struct conn *c, enum conn_state st)
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

static void unsubscribe(struct sendsrv *s, struct conn *c)
{
	struct port_state *ps = c->ps;

	if (!ps)
		return;
	link_del(&c->pnode);
	ps->n_subs--;
	c->ps = NULL;
	port_put(s, ps);
}

static void goodbye(struct sendsrv *s, struct conn *c, int why)
{
	if (!c->owes_goodbye)
		return;
	c->owes_goodbye = false;
	if (s->ops.on_goodbye)
		s->ops.on_goodbye(s->ops.ctx, &c->peer, why);
}

/* Close and forget @c at once. The slot stays valid memory (C_FREE). */
static void conn_release(struct sendsrv *s, struct conn *c)
{
	if (c->state == C_FREE)
		return;
	unsubscribe(s, c);
	link_del(&c->tnode);
	s->ops.fd_del(s->ops.ctx, c->fd);
	if (close(c->fd) < 0)
		rxb_log_errno(RXB_LOG_DEBUG, errno, "sendsrv: close fd %d", c->fd);
	s->fdmap[c->fd] = FD_NONE;
	mem_free(s, c->in, s->lim.max_frame_bytes);
	mem_free(s, c->out, c->out_cap);
	c->in = NULL;
	c->out = NULL;
	c->in_len = c->out_len = c->out_off = c->out_cap = 0;
	c->fd = -1;
	set_state(s, c, C_FREE);
	s->free_slots[s->n_free++] = (uint32_t)(c - s->slots);
}

/* The sender went away (BYE, EOF, reset): no ERROR to send. */
static void conn_gone(struct sendsrv *s, struct conn *c, int why)
{
	goodbye(s, c, why);
	conn_release(s, c);
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
static int push_bytes(int fd, const uint8_t *p, uint32_t n, uint32_t *done)
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
static void conn_flush(struct sendsrv *s, struct conn *c)
{
	uint32_t done;
	int err = push_bytes(c->fd, c->out + c->out_off, c->out_len, &done);

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
static int conn_write(struct sendsrv *s, struct conn *c, const uint8_t *buf,
		      uint32_t n)
{
	uint32_t done = 0;
	int err = 0;

	if (c->out_len == 0)
		err = push_bytes(c->fd, buf, n, &done);
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
	s->st.bytes_out += n;
	if (err < 0) {
		if (err != -ENOMEM && log_ok(s))
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

static void conn_fail(struct sendsrv *s, struct conn *c, int code, uint32_t ref_seq,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Send a frame to a live connection. Returns 0, or < 0 when the connection
 * is gone or closing afterwards (output cap reached, socket broken).
 */
static int conn_send(struct sendsrv *s, struct conn *c, struct rxbp_msg *m)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n = encode(c, m, buf, sizeof(buf));

	if (n == 0) {
		rxb_err("sendsrv: refusing to send an invalid %s frame",
			rxbneck_type_name(m->type));
		return -EINVAL;
	}
	if (c->out_len + n > s->lim.max_out_bytes) {
		conn_fail(s, c, RXBNECK_ERR_OUTPUT_OVERFLOW, 0,
			  "more than %u bytes queued: the sender does not read",
			  s->lim.max_out_bytes);
		return -ENOBUFS;
	}
	return conn_write(s, c, buf, (uint32_t)n);
}

/* Closing: flush, then half-close, then drain input until EOF/deadline. */
static void closing_progress(struct sendsrv *s, struct conn *c)
{
	if (c->out_len) {
		set_events(s, c, SENDSRV_OUT);
		return;
	}
	if (shutdown(c->fd, SHUT_WR) < 0) {
		conn_release(s, c);
		return;
	}
	set_events(s, c, SENDSRV_IN);
}

/*
 * A protocol violation, a limit or a timeout: send ERROR @code and close
 * gracefully (PROTOCOL.md §8.1).
 */
static void conn_fail(struct sendsrv *s, struct conn *c, int code, uint32_t ref_seq,
		      const char *fmt, ...)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	struct rxbp_msg m;
	va_list ap;
	size_t n;

	if (c->state != C_HELLO && c->state != C_ACTIVE)
		return;
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_ERROR;
	m.u.error.code = (uint16_t)code;
	m.u.error.version_min = RXBNECK_VERSION;
	m.u.error.version_max = RXBNECK_VERSION;
	m.u.error.ref_seq = ref_seq;
	va_start(ap, fmt);
	vsnprintf(m.u.error.message, sizeof(m.u.error.message), fmt, ap);
	va_end(ap);
	if (log_ok(s))
		rxb_info("sendsrv: %s (#%llu): %s: %s", c->peer.addr_str,
			 (unsigned long long)c->peer.id, rxbneck_error_name((unsigned)code),
			 m.u.error.message);
	if (code >= 0 && code <= RXBNECK_ERR_MAX_)
		s->st.errors_sent[code]++;

	goodbye(s, c, code);
	unsubscribe(s, c);
	link_del(&c->tnode);
	set_state(s, c, C_CLOSING);
	list_add_tail(&s->closing_list, &c->tnode);
	c->deadline_ns = now_ns(s) + SENDSRV_LINGER_NS;
	mem_free(s, c->in, s->lim.max_frame_bytes);
	c->in = NULL;
	c->in_len = 0;

	n = encode(c, &m, buf, sizeof(buf));
	if (n == 0 || conn_write(s, c, buf, (uint32_t)n) < 0)
		return;
	closing_progress(s, c);
}

/* Read and discard while closing: one read per event. */
static void conn_drain(struct sendsrv *s, struct conn *c)
{
	uint8_t scratch[4096];
	ssize_t n = recv(c->fd, scratch, sizeof(scratch), MSG_DONTWAIT);

	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	conn_release(s, c);
}

/* ---------------------------------------------------------- pushes -- */

static int push_rate(struct sendsrv *s, struct conn *c, const struct rxbneck_rate *r)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_RATE;
	m.u.rate = *r;
	if (conn_send(s, c, &m) < 0)
		return -1;
	c->peer.has_rate = true;
	c->peer.last_rate = *r;
	s->st.rate_pushes++;
	return 0;
}

/*
 * PROTOCOL.md §6.3: a sender that takes PAUSE and speaks minor >= 1 sends
 * only between the windows, so it gets the rate for that (when the model
 * has one); every other sender gets the plain rate.
 */
static bool obeys_pauses(const struct conn *c)
{
	return (c->peer.granted & RXBNECK_SUB_PAUSE) &&
	       c->peer.hello.minor >= RXBNECK_MINOR_BETWEEN_PAUSES;
}

static const struct rxbneck_rate *rate_for(const struct port_state *ps,
					   const struct conn *c)
{
	if (ps->has_rate_between && obeys_pauses(c))
		return &ps->rate_between;
	return ps->has_rate ? &ps->rate : NULL;
}

/* PROTOCOL.md §6.1: first value, flags changed, moved by >= frac, refresh. */
static bool rate_due(const struct sendsrv *s, const struct conn *c,
		     const struct rxbneck_rate *r)
{
	const struct rxbneck_rate *last = &c->peer.last_rate;
	uint64_t diff;

	if (!c->peer.has_rate || r->flags != last->flags || r->epoch < last->epoch)
		return true;
	if (s->lim.rate_refresh_epochs &&
	    r->epoch - last->epoch >= s->lim.rate_refresh_epochs)
		return true;
	diff = r->rate_bps > last->rate_bps ? r->rate_bps - last->rate_bps :
					      last->rate_bps - r->rate_bps;
	/* Exact integer comparison, in parts per million. */
	return (unsigned __int128)diff * 1000000u >=
	       (unsigned __int128)s->frac_ppm * last->rate_bps && diff > 0;
}

int sendsrv_publish_rate(struct sendsrv *s, const struct rxbneck_rate *r,
			 const struct rxbneck_rate *between)
{
	struct rxbp_msg m = { .type = RXBNECK_T_RATE };
	struct port_state *ps;
	struct link *l, *next;
	int sent = 0;

	m.u.rate = *r;
	if (rxbp_validate(&m) != 0)
		return -EINVAL;
	if (between) {
		m.u.rate = *between;
		if (between->port != r->port ||
		    !(between->flags & RXBNECK_RATE_BETWEEN_PAUSES) ||
		    rxbp_validate(&m) != 0)
			return -EINVAL;
	}
	if (r->flags & RXBNECK_RATE_BETWEEN_PAUSES)
		return -EINVAL;
	ps = port_get(s, r->port, false);
	if (!ps)
		return 0;
	ps->rate = *r;
	ps->has_rate = true;
	ps->has_rate_between = between != NULL;
	if (between)
		ps->rate_between = *between;
	ps->pins++;
	for (l = ps->subs.next; l != &ps->subs; l = next) {
		struct conn *c = link_entry(l, struct conn, pnode);
		const struct rxbneck_rate *mine = rate_for(ps, c);

		next = l->next;
		if (!(c->peer.granted & RXBNECK_SUB_RATE) || !rate_due(s, c, mine))
			continue;
		if (push_rate(s, c, mine) == 0)
			sent++;
	}
	ps->pins--;
	port_put(s, ps);
	return sent;
}

int sendsrv_publish_pause(struct sendsrv *s, const struct rxbneck_pause *p)
{
	struct rxbp_msg m = { .type = RXBNECK_T_PAUSE };
	bool one_shot = p->period_us == 0 && !(p->flags & RXBNECK_PAUSE_CANCEL);
	struct port_state *ps;
	struct link *l, *next;
	int sent = 0;

	m.u.pause = *p;
	if (rxbp_validate(&m) != 0)
		return -EINVAL;
	ps = port_get(s, p->port, false);
	if (!ps)
		return 0;
	ps->pins++;
	for (l = ps->subs.next; l != &ps->subs; l = next) {
		struct conn *c = link_entry(l, struct conn, pnode);

		next = l->next;
		if (!(c->peer.granted & RXBNECK_SUB_PAUSE))
			continue;
		/* Over by the time its datagrams could arrive: useless to it. */
		if (one_shot && p->start_in_us + p->duration_us <= c->peer.hello.rtt_us)
			continue;
		m.type = RXBNECK_T_PAUSE;
		m.u.pause = *p;
		if (conn_send(s, c, &m) < 0)
			continue;
		c->peer.pauses_sent++;
		s->st.pause_pushes++;
		sent++;
	}
	ps->pins--;
	port_put(s, ps);
	return sent;
}

/* ---------------------------------------------------------- frames -- */

static void touch_active(struct sendsrv *s, struct conn *c)
{
	c->deadline_ns = s->lim.idle_timeout_ns ?
		c->peer.last_rx_ns + s->lim.idle_timeout_ns : UINT64_MAX;
	link_del(&c->tnode);
	list_add_tail(&s->active_list, &c->tnode);
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
	a->max_frame_bytes = s->lim.max_frame_bytes;
	a->idle_timeout_ms = (uint32_t)(s->lim.idle_timeout_ns / RXB_NSEC_PER_MSEC);
	a->epoch_ms = s->lim.epoch_ms;
	a->instance_id = s->instance_id;
	snprintf(a->name, sizeof(a->name), "rxbneckd %s", RXB_VERSION);
	return conn_send(s, c, &m);
}

static void on_hello(struct sendsrv *s, struct conn *c, const struct rxbp_msg *m)
{
	const struct rxbneck_hello *h = &m->u.hello;
	struct port_state *ps = port_get(s, h->flow_port, true);
	int code = 0;

	if (!ps) {
		conn_fail(s, c, RXBNECK_ERR_INTERNAL, m->seq, "out of memory");
		return;
	}
	c->peer.hello = *h;
	c->peer.granted = h->subscribe & SERVED_SUBS;
	ps->pins++;
	if (s->ops.on_hello)
		code = s->ops.on_hello(s->ops.ctx, &c->peer);
	ps->pins--;
	if (code != 0) {
		port_put(s, ps);
		if (code < 0 || code > RXBNECK_ERR_MAX_)
			code = RXBNECK_ERR_REFUSED;
		conn_fail(s, c, code, m->seq, "flow port %u refused", h->flow_port);
		return;
	}
	c->owes_goodbye = true;
	set_state(s, c, C_ACTIVE);
	touch_active(s, c);
	c->ps = ps;
	ps->n_subs++;
	list_add_tail(&ps->subs, &c->pnode);
	if (log_ok(s))
		rxb_info("sendsrv: %s (#%llu): hello: flow %s port %u, payload %u bytes, "
			 "file %llu bytes, rtt %u us, subscribe 0x%x, \"%s\"",
			 c->peer.addr_str, (unsigned long long)c->peer.id,
			 h->flow_proto == 6 ? "tcp" : "udp", h->flow_port,
			 h->payload_bytes, (unsigned long long)h->file_bytes, h->rtt_us,
			 h->subscribe, h->name);
	if (send_hello_ack(s, c) < 0)
		return;
	if ((c->peer.granted & RXBNECK_SUB_RATE) && ps->has_rate)
		push_rate(s, c, rate_for(ps, c));
}

static void on_subscribe(struct sendsrv *s, struct conn *c, const struct rxbp_msg *m)
{
	uint16_t was = c->peer.granted;

	c->peer.hello.subscribe = m->u.subscribe.subscribe;
	c->peer.granted = m->u.subscribe.subscribe & SERVED_SUBS;
	if (m->u.subscribe.rtt_us)
		c->peer.hello.rtt_us = m->u.subscribe.rtt_us;
	/* New to RATE, or PAUSE taken or dropped: which rate is due changed. */
	if ((c->peer.granted & RXBNECK_SUB_RATE) && c->ps && c->ps->has_rate &&
	    (!(was & RXBNECK_SUB_RATE) ||
	     rate_due(s, c, rate_for(c->ps, c))))
		push_rate(s, c, rate_for(c->ps, c));
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
		conn_send(s, c, &reply);
		break;
	case RXBNECK_T_PONG:
		break;
	case RXBNECK_T_BYE:
		conn_gone(s, c, SENDSRV_GONE_BYE);
		break;
	case RXBNECK_T_ERROR:
		if (log_ok(s))
			rxb_info("sendsrv: %s (#%llu): sender reports error %s: %s",
				 c->peer.addr_str, (unsigned long long)c->peer.id,
				 rxbneck_error_name(m->u.error.code), m->u.error.message);
		conn_gone(s, c, SENDSRV_GONE_PEER_ERROR);
		break;
	case RXBNECK_T_REPORT:
		if (!s->ops.on_report) {
			conn_fail(s, c, RXBNECK_ERR_UNSUPPORTED, m->seq, "REPORT not accepted");
			break;
		}
		c->peer.reports++;
		s->st.reports++;
		s->ops.on_report(s->ops.ctx, &c->peer, &m->u.report);
		break;
	case RXBNECK_T_STREAMS_SAMPLE:
		if (!s->ops.on_streams_sample) {
			conn_fail(s, c, RXBNECK_ERR_UNSUPPORTED, m->seq,
				  "STREAMS_SAMPLE not accepted");
			break;
		}
		s->ops.on_streams_sample(s->ops.ctx, &c->peer, &m->u.sample);
		break;
	default:	/* HELLO again */
		conn_fail(s, c, RXBNECK_ERR_UNEXPECTED, m->seq, "%s after HELLO",
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
	c->peer.last_rx_ns = now_ns(s);
	if (err < 0) {
		conn_fail(s, c, -err, m.seq, "bad %s frame (type 0x%02x)",
			  rxbneck_type_name(m.type), m.type);
		return;
	}
	if (!(rxbp_type_direction(m.type) & RXBP_FROM_SENDER)) {
		conn_fail(s, c, RXBNECK_ERR_UNEXPECTED, m.seq, "%s is sent by the daemon",
			  rxbneck_type_name(m.type));
		return;
	}
	if (c->state == C_ACTIVE) {
		touch_active(s, c);
		on_active_frame(s, c, &m);
		return;
	}
	if (m.type == RXBNECK_T_HELLO)
		on_hello(s, c, &m);
	else if (m.type == RXBNECK_T_BYE || m.type == RXBNECK_T_ERROR)
		conn_release(s, c);
	else
		conn_fail(s, c, RXBNECK_ERR_UNEXPECTED, m.seq, "HELLO expected, got %s",
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
		conn_fail(s, c, code, 0, "bad magic: not an rxbneck frame");
		break;
	case RXBNECK_ERR_BAD_VERSION:
		conn_fail(s, c, code, seq, "version %u not supported, this daemon speaks %u",
			  p[4], RXBNECK_VERSION);
		break;
	case RXBNECK_ERR_TOO_LARGE:
		conn_fail(s, c, code, seq, "frame of %u bytes exceeds the limit of %u",
			  be32_at(p + 8), s->lim.max_frame_bytes);
		break;
	default:
		conn_fail(s, c, code, seq, "frame length %u below the header size",
			  be32_at(p + 8));
		break;
	}
}

static void conn_read(struct sendsrv *s, struct conn *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, s->lim.max_frame_bytes - c->in_len,
			 MSG_DONTWAIT);
	uint32_t off = 0;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		if (n < 0 && log_ok(s))
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
					   s->lim.max_frame_bytes, NULL);

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

/* ---------------------------------------------------------- accept -- */

static int fdmap_reserve(struct sendsrv *s, int fd)
{
	uint32_t len = s->fdmap_len ? s->fdmap_len : 64;
	int32_t *p;

	if ((uint32_t)fd < s->fdmap_len)
		return 0;
	while (len <= (uint32_t)fd)
		len *= 2;
	p = realloc(s->fdmap, len * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint32_t i = s->fdmap_len; i < len; i++)
		p[i] = FD_NONE;
	s->fdmap = p;
	s->fdmap_len = len;
	return 0;
}

static struct conn *take_slot(struct sendsrv *s, bool evict)
{
	if (s->n_free == 0 && evict && !list_empty(&s->closing_list))
		conn_release(s, link_entry(s->closing_list.next, struct conn, tnode));
	if (s->n_free == 0)
		return NULL;
	return &s->slots[s->free_slots[--s->n_free]];
}

/* No slot left to close it gracefully: ERROR without waiting, close. */
static void reject_now(struct sendsrv *s, int fd, int code)
{
	struct rxbp_msg m;
	uint8_t buf[RXBP_ENCODE_MAX];
	uint32_t done;
	size_t n;

	if (code == 0)		/* cannot happen: live < max_conns leaves slots */
		code = RXBNECK_ERR_TOO_MANY;
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_ERROR;
	m.seq = 1;
	m.u.error.code = (uint16_t)code;
	m.u.error.version_min = m.u.error.version_max = RXBNECK_VERSION;
	n = rxbp_encode(buf, sizeof(buf), &m);
	if (n)
		push_bytes(fd, buf, (uint32_t)n, &done);
	close(fd);
	s->st.dropped_no_slot++;
	s->st.errors_sent[code]++;
}

static void accept_one(struct sendsrv *s, int fd, const struct sockaddr_storage *ss)
{
	int code = 0, one = 1, err;
	struct conn *c;

	if (!allowed(s, (const struct sockaddr *)ss)) {
		code = RXBNECK_ERR_NOT_ALLOWED;
		s->st.rejected_allow++;
	} else if (s->st.conns_hello + s->st.conns_active >= s->lim.max_conns) {
		code = RXBNECK_ERR_TOO_MANY;
		s->st.rejected_full++;
	}
	if (fdmap_reserve(s, fd) < 0) {
		rxb_err("sendsrv: out of memory for the fd index");
		close(fd);
		return;
	}
	c = take_slot(s, code == 0);
	if (!c) {
		reject_now(s, fd, code);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	link_init(&c->tnode);
	link_init(&c->pnode);
	c->peer.id = ++s->next_id;
	c->peer.addr = *ss;
	c->peer.connected_ns = now_ns(s);
	c->peer.last_rx_ns = c->peer.connected_ns;
	format_addr(ss, c->peer.addr_str, sizeof(c->peer.addr_str));
	s->fdmap[fd] = (int32_t)(c - s->slots);
	set_state(s, c, C_HELLO);
	list_add_tail(&s->hello_list, &c->tnode);
	c->deadline_ns = c->peer.connected_ns + s->lim.hello_timeout_ns;

	err = s->ops.fd_add(s->ops.ctx, fd, SENDSRV_IN);
	if (err < 0) {
		rxb_log_errno(RXB_LOG_ERR, -err, "sendsrv: %s: watching fd %d",
			      c->peer.addr_str, fd);
		c->events = SENDSRV_IN;	/* fd_del on release is harmless */
		conn_release(s, c);
		return;
	}
	c->events = SENDSRV_IN;
	/* Small frames; PAUSE is time-critical. Failure only costs latency. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		rxb_log_errno(RXB_LOG_DEBUG, errno, "sendsrv: TCP_NODELAY");
	if (code) {
		conn_fail(s, c, code, 0, code == RXBNECK_ERR_NOT_ALLOWED ?
			  "address not in the allow-list" :
			  "connection limit of %u reached", s->lim.max_conns);
		return;
	}
	c->in = mem_alloc(s, s->lim.max_frame_bytes);
	if (!c->in) {
		conn_fail(s, c, RXBNECK_ERR_INTERNAL, 0, "out of memory");
		return;
	}
	rxb_debug("sendsrv: %s (#%llu): connected", c->peer.addr_str,
		  (unsigned long long)c->peer.id);
}

static void set_accepting(struct sendsrv *s, bool on)
{
	for (uint32_t i = 0; i < s->n_listeners; i++) {
		struct listener *li = &s->listeners[i];
		int err = 0;

		if (li->watched == on)
			continue;
		if (on)
			err = s->ops.fd_add(s->ops.ctx, li->fd, SENDSRV_IN);
		else
			s->ops.fd_del(s->ops.ctx, li->fd);
		if (err < 0)
			rxb_log_errno(RXB_LOG_ERR, -err, "sendsrv: watching listener");
		else
			li->watched = on;
	}
}

static void handle_listener(struct sendsrv *s, struct listener *li)
{
	for (int i = 0; i < SENDSRV_ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(li->fd, (struct sockaddr *)&ss, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			s->st.accepted++;
			accept_one(s, fd, &ss);
			continue;
		}
		switch (errno) {
		case EAGAIN:
			return;
		case EINTR:
		case ECONNABORTED:
		case EPROTO:
		case EPERM:
			continue;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			/* Level-triggered: stop watching, or the loop spins. */
			rxb_log_errno(RXB_LOG_WARNING, errno,
				      "sendsrv: accept: pausing for 100 ms");
			set_accepting(s, false);
			s->accept_resume_ns = now_ns(s) + ACCEPT_PAUSE_NS;
			return;
		default:
			rxb_log_errno(RXB_LOG_ERR, errno, "sendsrv: accept");
			return;
		}
	}
}

/* ------------------------------------------------------------- API -- */

int sendsrv_init(struct sendsrv **out, const struct sendsrv_limits *limits,
		 const struct sendsrv_ops *ops)
{
	struct sendsrv *s;

	*out = NULL;
	if (!ops->fd_add || !ops->fd_mod || !ops->fd_del) {
		rxb_err("sendsrv: fd_add, fd_mod and fd_del callbacks are required");
		return -EINVAL;
	}
	if (check_limits(limits) < 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->st.mem_bytes = sizeof(*s);
	s->lim = *limits;
	s->ops = *ops;
	s->frac_ppm = (uint64_t)(limits->rate_change_frac * 1e6 + 0.5);
	s->n_slots = limits->max_conns + SENDSRV_SPARE_SLOTS;
	s->slots = mem_alloc(s, s->n_slots * sizeof(*s->slots));
	s->free_slots = mem_alloc(s, s->n_slots * sizeof(*s->free_slots));
	if (!s->slots || !s->free_slots) {
		sendsrv_finish(s);
		return -ENOMEM;
	}
	/* Hand out low slots first (stack: last pushed is taken first). */
	for (uint32_t i = 0; i < s->n_slots; i++)
		s->free_slots[i] = s->n_slots - 1 - i;
	s->n_free = s->n_slots;
	link_init(&s->hello_list);
	link_init(&s->active_list);
	link_init(&s->closing_list);
	if (getrandom(&s->instance_id, sizeof(s->instance_id), GRND_NONBLOCK) !=
	    sizeof(s->instance_id))
		s->instance_id = rxb_mono_ns() ^ ((uint64_t)getpid() << 40);
	s->log_window_ns = now_ns(s);
	*out = s;
	return 0;
}

int sendsrv_update_limits(struct sendsrv *s, const struct sendsrv_limits *limits)
{
	if (check_limits(limits) < 0)
		return -EINVAL;
	memcpy(s->lim.allow, limits->allow, sizeof(s->lim.allow));
	s->lim.n_allow = limits->n_allow;
	s->lim.rate_change_frac = limits->rate_change_frac;
	s->frac_ppm = (uint64_t)(limits->rate_change_frac * 1e6 + 0.5);
	s->lim.rate_refresh_epochs = limits->rate_refresh_epochs;
	s->lim.epoch_ms = limits->epoch_ms;
	return 0;
}

static void release_list(struct sendsrv *s, struct link *head, bool bye)
{
	while (!list_empty(head)) {
		struct conn *c = link_entry(head->next, struct conn, tnode);

		if (bye && c->state == C_ACTIVE) {
			struct rxbp_msg m;

			memset(&m, 0, sizeof(m));
			m.type = RXBNECK_T_BYE;
			m.u.bye.reason = RXBNECK_BYE_SHUTDOWN;
			snprintf(m.u.bye.message, sizeof(m.u.bye.message),
				 "rxbneckd is stopping");
			if (conn_send(s, c, &m) < 0)
				continue;	/* already released or closing */
		}
		goodbye(s, c, SENDSRV_GONE_SHUTDOWN);
		conn_release(s, c);
	}
}

void sendsrv_finish(struct sendsrv *s)
{
	if (!s)
		return;
	if (s->slots && s->free_slots) {
		release_list(s, &s->active_list, true);
		release_list(s, &s->hello_list, false);
		release_list(s, &s->closing_list, false);
	}
	for (uint32_t i = 0; i < s->n_listeners; i++) {
		if (s->listeners[i].watched)
			s->ops.fd_del(s->ops.ctx, s->listeners[i].fd);
		close(s->listeners[i].fd);
	}
	for (unsigned int b = 0; b < PORT_BUCKETS; b++) {
		while (s->ports[b]) {
			struct port_state *ps = s->ports[b];

			s->ports[b] = ps->next;
			free(ps);
		}
	}
	free(s->fdmap);
	free(s->slots);
	free(s->free_slots);
	free(s);
}

int sendsrv_listen(struct sendsrv *s, const char *addr, uint16_t port,
		   uint16_t *bound_port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, err;
	bool any6 = false;

	memset(&ss, 0, sizeof(ss));
	if (s->n_listeners == SENDSRV_MAX_LISTEN) {
		rxb_err("sendsrv: more than %d listen addresses", SENDSRV_MAX_LISTEN);
		return -ENOSPC;
	}
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		any6 = IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr);
		len = sizeof(struct sockaddr_in6);
	} else {
		rxb_err("sendsrv: listen address \"%s\" is not an IPv4 or IPv6 literal", addr);
		return -EINVAL;
	}

	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		rxb_log_errno(RXB_LOG_ERR, err, "sendsrv: socket for %s", addr);
		return -err;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail_errno;
	if (ss.ss_family == AF_INET6) {
		int v6only = any6 ? 0 : 1;	/* "::" serves IPv4 too */

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0)
			goto fail_errno;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, SOMAXCONN) < 0)
		goto fail_errno;
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		goto fail_errno;
	port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
		     ((struct sockaddr_in6 *)&ss)->sin6_port);
	err = fdmap_reserve(s, fd);
	if (err == 0)
		err = s->ops.fd_add(s->ops.ctx, fd, SENDSRV_IN);
	if (err < 0) {
		rxb_log_errno(RXB_LOG_ERR, -err, "sendsrv: watching listener %s", addr);
		close(fd);
		return err;
	}
	s->fdmap[fd] = FD_LISTENER(s->n_listeners);
	s->listeners[s->n_listeners].fd = fd;
	s->listeners[s->n_listeners].watched = true;
	s->n_listeners++;
	s->st.listeners = s->n_listeners;
	if (bound_port)
		*bound_port = port;
	rxb_info("sendsrv: listening on %s port %u", addr, port);
	return 0;

fail_errno:
	err = errno;
	rxb_log_errno(RXB_LOG_ERR, err, "sendsrv: listen on %s port %u", addr, port);
	close(fd);
	return -err;
}

bool sendsrv_owns_fd(const struct sendsrv *s, int fd)
{
	return fd >= 0 && (uint32_t)fd < s->fdmap_len && s->fdmap[fd] != FD_NONE;
}

void sendsrv_handle(struct sendsrv *s, int fd, uint32_t events)
{
	struct conn *c;
	int32_t v;

	if (!sendsrv_owns_fd(s, fd))
		return;
	v = s->fdmap[fd];
	if (v < 0) {
		handle_listener(s, &s->listeners[-2 - v]);
		return;
	}
	c = &s->slots[v];
	if ((events & SENDSRV_OUT) && c->out_len) {
		conn_flush(s, c);
		if (c->state == C_FREE)
			return;
	}
	if (!(events & (SENDSRV_IN | SENDSRV_HUP | SENDSRV_ERR)))
		return;
	if (c->state == C_CLOSING)
		conn_drain(s, c);
	else
		conn_read(s, c);
}

/* Pop the expired heads of a deadline-ordered list. */
static void expire(struct sendsrv *s, struct link *head, uint64_t now, int code)
{
	while (!list_empty(head)) {
		struct conn *c = link_entry(head->next, struct conn, tnode);

		if (c->deadline_ns > now)
			break;
		if (code == RXBNECK_ERR_HELLO_TIMEOUT)
			conn_fail(s, c, code, 0, "no HELLO within %llu ms",
				  (unsigned long long)(s->lim.hello_timeout_ns /
						       RXB_NSEC_PER_MSEC));
		else if (code == RXBNECK_ERR_IDLE_TIMEOUT)
			conn_fail(s, c, code, 0, "no frame within %llu ms",
				  (unsigned long long)(s->lim.idle_timeout_ns /
						       RXB_NSEC_PER_MSEC));
		else
			conn_release(s, c);
	}
}

void sendsrv_tick(struct sendsrv *s, uint64_t now)
{
	expire(s, &s->hello_list, now, RXBNECK_ERR_HELLO_TIMEOUT);
	expire(s, &s->active_list, now, RXBNECK_ERR_IDLE_TIMEOUT);
	expire(s, &s->closing_list, now, 0);
	if (s->accept_resume_ns && now >= s->accept_resume_ns) {
		s->accept_resume_ns = 0;
		set_accepting(s, true);
	}
}

static uint64_t head_deadline(const struct link *head)
{
	if (list_empty(head))
		return UINT64_MAX;
	return link_entry(head->next, struct conn, tnode)->deadline_ns;
}

uint64_t sendsrv_next_deadline_ns(const struct sendsrv *s)
{
	uint64_t t = head_deadline(&s->hello_list);
	uint64_t u = head_deadline(&s->active_list);
	uint64_t v = head_deadline(&s->closing_list);

	if (u < t)
		t = u;
	if (v < t)
		t = v;
	if (s->accept_resume_ns && s->accept_resume_ns < t)
		t = s->accept_resume_ns;
	return t;
}

size_t sendsrv_foreach_sender(const struct sendsrv *s,
			      void (*cb)(void *arg, const struct sendsrv_peer *p),
			      void *arg)
{
	const struct link *l;
	size_t n = 0;

	for (l = s->active_list.next; l != &s->active_list; l = l->next) {
		cb(arg, &link_entry(l, const struct conn, tnode)->peer);
		n++;
	}
	return n;
}

size_t sendsrv_memory_bound(const struct sendsrv *s)
{
	size_t per_slot = sizeof(struct conn) + s->lim.max_frame_bytes +
			  s->lim.max_out_bytes + RXBP_ENCODE_MAX +
			  sizeof(uint32_t) + sizeof(struct port_state);

	return sizeof(*s) + (size_t)s->n_slots * per_slot;
}

void sendsrv_stats(const struct sendsrv *s, struct sendsrv_stats *st)
{
	*st = s->st;
	st->mem_bound_bytes = sendsrv_memory_bound(s);
}
