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

#include "daemon/serve/sendsrv_int.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "proto/codec.h"

_Static_assert(SENDSRV_IN == EPOLLIN && SENDSRV_OUT == EPOLLOUT &&
	       SENDSRV_ERR == EPOLLERR && SENDSRV_HUP == EPOLLHUP,
	       "SENDSRV_* event bits must equal epoll's");

#define ACCEPT_PAUSE_NS		(100 * RXB_NSEC_PER_MSEC)
#define LOG_BURST		20	/* noisy messages per second */

uint64_t sendsrv_now_ns(const struct sendsrv *s)
{
	return s->ops.now_ns ? s->ops.now_ns(s->ops.ctx) : rxb_mono_ns();
}

bool sendsrv_log_ok(struct sendsrv *s)
{
	uint64_t t = sendsrv_now_ns(s);

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

void *sendsrv_mem_alloc(struct sendsrv *s, size_t n)
{
	void *p = calloc(1, n);

	if (p)
		s->st.mem_bytes += n;
	return p;
}

void sendsrv_mem_free(struct sendsrv *s, void *p, size_t n)
{
	if (!p)
		return;
	s->st.mem_bytes -= n;
	free(p);
}

/* ------------------------------------------------------- allow-list -- */

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
		sendsrv_conn_release(s, link_entry(s->closing_list.next, struct conn, tnode));
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
		sendsrv_conn_push_bytes(fd, buf, (uint32_t)n, &done);
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
	c->peer.connected_ns = sendsrv_now_ns(s);
	c->peer.last_rx_ns = c->peer.connected_ns;
	format_addr(ss, c->peer.addr_str, sizeof(c->peer.addr_str));
	s->fdmap[fd] = (int32_t)(c - s->slots);
	sendsrv_conn_set_state(s, c, C_HELLO);
	list_add_tail(&s->hello_list, &c->tnode);
	c->deadline_ns = c->peer.connected_ns + s->lim.hello_timeout_ns;

	err = s->ops.fd_add(s->ops.ctx, fd, SENDSRV_IN);
	if (err < 0) {
		rxb_log_errno(RXB_LOG_ERR, -err, "sendsrv: %s: watching fd %d",
			      c->peer.addr_str, fd);
		c->events = SENDSRV_IN;	/* fd_del on release is harmless */
		sendsrv_conn_release(s, c);
		return;
	}
	c->events = SENDSRV_IN;
	/* Small frames; PAUSE is time-critical. Failure only costs latency. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		rxb_log_errno(RXB_LOG_DEBUG, errno, "sendsrv: TCP_NODELAY");
	if (code) {
		sendsrv_conn_fail(s, c, code, 0, code == RXBNECK_ERR_NOT_ALLOWED ?
			  "address not in the allow-list" :
			  "connection limit of %u reached", s->lim.max_conns);
		return;
	}
	c->in = sendsrv_mem_alloc(s, s->lim.max_frame_bytes);
	if (!c->in) {
		sendsrv_conn_fail(s, c, RXBNECK_ERR_INTERNAL, 0, "out of memory");
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
			s->accept_resume_ns = sendsrv_now_ns(s) + ACCEPT_PAUSE_NS;
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
	s->slots = sendsrv_mem_alloc(s, s->n_slots * sizeof(*s->slots));
	s->free_slots = sendsrv_mem_alloc(s, s->n_slots * sizeof(*s->free_slots));
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
	s->log_window_ns = sendsrv_now_ns(s);
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
			if (sendsrv_conn_send(s, c, &m) < 0)
				continue;	/* already released or closing */
		}
		sendsrv_conn_goodbye(s, c, SENDSRV_GONE_SHUTDOWN);
		sendsrv_conn_release(s, c);
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
	sendsrv_publish_finish(s);
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
		sendsrv_conn_flush(s, c);
		if (c->state == C_FREE)
			return;
	}
	if (!(events & (SENDSRV_IN | SENDSRV_HUP | SENDSRV_ERR)))
		return;
	if (c->state == C_CLOSING)
		sendsrv_conn_drain(s, c);
	else
		sendsrv_conn_read(s, c);
}

/* Pop the expired heads of a deadline-ordered list. */
static void expire(struct sendsrv *s, struct link *head, uint64_t now, int code)
{
	while (!list_empty(head)) {
		struct conn *c = link_entry(head->next, struct conn, tnode);

		if (c->deadline_ns > now)
			break;
		if (code == RXBNECK_ERR_HELLO_TIMEOUT)
			sendsrv_conn_fail(s, c, code, 0, "no HELLO within %llu ms",
				  (unsigned long long)(s->lim.hello_timeout_ns /
						       RXB_NSEC_PER_MSEC));
		else if (code == RXBNECK_ERR_IDLE_TIMEOUT)
			sendsrv_conn_fail(s, c, code, 0, "no frame within %llu ms",
				  (unsigned long long)(s->lim.idle_timeout_ns /
						       RXB_NSEC_PER_MSEC));
		else
			sendsrv_conn_release(s, c);
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
