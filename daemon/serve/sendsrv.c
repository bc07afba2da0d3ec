// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sendsrv: sender control connections (docs/PROTOCOL.md, daemon side):
 * listeners, accept, limits, timeouts, and the API of sendsrv.h.
 *
 * Connections live in slots made as they come and kept for reuse: up to
 * max_conns live ones (waiting for HELLO or active) plus SENDSRV_SPARE_SLOTS
 * for connections being closed after an error, so a flood of rejected
 * connections cannot starve accepted ones (a closing connection is evicted
 * when an accepted one needs its slot). An fd index maps fds to slots.
 *
 * Connections wait on lists ordered by deadline, so sendsrv_tick() only
 * looks at list heads: the hello and closing timeouts are the same for all,
 * so accept/close order is deadline order; active connections sit on the
 * list of the idle timeout their HELLO_ACK announced and move to its tail
 * whenever a frame arrives (LRU), so each list's head is its next to time
 * out.
 *
 * Active connections are also on their flow port's subscriber list
 * (sendsrv_publish.c), so a publish touches only that port's senders.
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
#include "daemon/serve/listen.h"
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
	uint64_t dropped;
	bool ok = ratelimit_ok(&s->log_limit, sendsrv_now_ns(s), &dropped);

	if (dropped)
		rxb_notice("sendsrv: %llu connection messages suppressed",
			   (unsigned long long)dropped);
	return ok;
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

/* ----------------------------------------------------------- limits -- */

void sendsrv_limits_default(struct sendsrv_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_frame_bytes = RXBNECK_FRAME_MAX_DEFAULT;
	l->max_conns = 1024;
	l->max_conns_per_source = 64;
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
	else if (l->max_conns_per_source > 1000000)
		bad = "max_conns_per_source must be within 0..1000000";
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

/* One more slot, and room for its index on the free stack. 0 or -ENOMEM. */
static int grow_slots(struct sendsrv *s)
{
	uint32_t cap = s->slots_cap ? s->slots_cap * 2 : 64;
	struct conn **slots;
	uint32_t *free_slots;
	struct conn *c;

	if (s->n_slots == s->slots_cap) {
		slots = realloc(s->slots, cap * sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		s->slots = slots;
		free_slots = realloc(s->free_slots, cap * sizeof(*free_slots));
		if (!free_slots)
			return -ENOMEM;
		s->free_slots = free_slots;
		s->st.mem_bytes += (cap - s->slots_cap) * (sizeof(*slots) + sizeof(*free_slots));
		s->slots_cap = cap;
	}
	c = sendsrv_mem_alloc(s, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->slot = s->n_slots;
	s->slots[s->n_slots++] = c;
	s->free_slots[s->n_free++] = c->slot;
	return 0;
}

/*
 * A slot for a new connection while fewer than max_conns + SPARE are in
 * use; with @evict, the oldest closing connection makes room when none is
 * left. Slots stay allocated once made (a lowered max_conns keeps them).
 */
static struct conn *take_slot(struct sendsrv *s, bool evict)
{
	uint64_t cap = (uint64_t)s->lim.max_conns + SENDSRV_SPARE_SLOTS;
	struct conn *c;
	uint32_t slot;

	if (s->n_slots - s->n_free >= cap && evict && !list_empty(&s->closing_list))
		sendsrv_conn_release(s, link_entry(s->closing_list.next, struct conn, tnode));
	if (s->n_slots - s->n_free >= cap)
		return NULL;
	if (s->n_free == 0 && grow_slots(s) < 0)
		return NULL;
	slot = s->free_slots[--s->n_free];
	c = s->slots[slot];
	memset(c, 0, sizeof(*c));
	c->slot = slot;
	return c;
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
	sendsrv_conn_error_msg(&m, code, 0);
	m.seq = 1;
	n = rxbp_encode(buf, sizeof(buf), &m);
	if (n)
		sendsrv_conn_push_bytes(fd, buf, (uint32_t)n, &done);
	close(fd);
	s->st.dropped_no_slot++;
	s->st.errors_sent[code]++;
}

/*
 * Whether a new connection from @ss may be served: 0, or the error it gets
 * (counted; *why says which limit); a served one is counted against its
 * source (*src).
 */
static int admit(struct sendsrv *s, const struct sockaddr_storage *ss,
		 struct source_count **src, char *why, size_t wlen)
{
	bool full;

	*src = NULL;
	if (!allowed(s, (const struct sockaddr *)ss)) {
		s->st.rejected_allow++;
		snprintf(why, wlen, "address not in the allow-list");
		return RXBNECK_ERR_NOT_ALLOWED;
	}
	if (s->st.conns_hello + s->st.conns_active >= s->lim.max_conns) {
		s->st.rejected_full++;
		snprintf(why, wlen, "connection limit of %u reached", s->lim.max_conns);
		return RXBNECK_ERR_TOO_MANY;
	}
	*src = sendsrv_source_take(s, ss, &full);
	if (full) {
		s->st.rejected_source++;
		snprintf(why, wlen, "connection limit of %u per address reached",
			 s->lim.max_conns_per_source);
		return RXBNECK_ERR_TOO_MANY;
	}
	snprintf(why, wlen, "out of memory");
	return *src ? 0 : RXBNECK_ERR_INTERNAL;
}

static void accept_one(struct sendsrv *s, int fd, const struct sockaddr_storage *ss)
{
	int one = 1, err;
	struct source_count *src;
	char why[64];
	int code = admit(s, ss, &src, why, sizeof(why));
	struct conn *c;

	if (fdmap_reserve(s, fd) < 0) {
		char addr[SENDSRV_ADDR_STRLEN];

		rxb_sockaddr_str(ss, addr, sizeof(addr));
		rxb_err("sendsrv: %s: fd %d refused: out of memory for the fd index", addr, fd);
		sendsrv_source_put(s, src);
		close(fd);
		return;
	}
	c = take_slot(s, code == 0);
	if (!c) {
		sendsrv_source_put(s, src);
		reject_now(s, fd, code);
		return;
	}
	c->fd = fd;
	link_init(&c->tnode);
	link_init(&c->pnode);
	c->peer.id = ++s->next_id;
	c->peer.addr = *ss;
	c->peer.connected_ns = sendsrv_now_ns(s);
	c->peer.last_rx_ns = c->peer.connected_ns;
	rxb_sockaddr_str(ss, c->peer.addr_str, sizeof(c->peer.addr_str));
	s->fdmap[fd] = (int32_t)c->slot;
	c->src = src;	/* uncounted when it stops being live */
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
		rxb_log_errno(RXB_LOG_DEBUG, errno, "sendsrv: %s: TCP_NODELAY on fd %d",
			      c->peer.addr_str, fd);
	if (code) {
		sendsrv_conn_fail(s, c, code, 0, "%s", why);
		return;
	}
	c->in_cap = s->lim.max_frame_bytes;
	c->in = sendsrv_mem_alloc(s, c->in_cap);
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
			rxb_log_errno(RXB_LOG_ERR, -err, "sendsrv: watching listener fd %d",
				      li->fd);
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
	s->ops = *ops;
	link_init(&s->hello_list);
	link_init(&s->closing_list);
	if (sendsrv_update_limits(s, limits) < 0) {
		sendsrv_finish(s);
		return -ENOMEM;
	}
	if (getrandom(&s->instance_id, sizeof(s->instance_id), GRND_NONBLOCK) !=
	    sizeof(s->instance_id))
		s->instance_id = rxb_mono_ns() ^ ((uint64_t)getpid() << 40);
	ratelimit_init(&s->log_limit, RXB_NSEC_PER_SEC, LOG_BURST, sendsrv_now_ns(s));
	*out = s;
	return 0;
}

/* The idle list of @timeout_ns, made when there is none. NULL: no memory. */
static struct idle_list *idle_list_get(struct sendsrv *s, uint64_t timeout_ns)
{
	struct idle_list *il;

	for (il = s->idle_lists; il; il = il->next)
		if (il->timeout_ns == timeout_ns)
			return il;
	il = sendsrv_mem_alloc(s, sizeof(*il));
	if (!il)
		return NULL;
	il->timeout_ns = timeout_ns;
	link_init(&il->conns);
	il->next = s->idle_lists;
	s->idle_lists = il;
	return il;
}

/* Free the idle lists that no sender uses and no new one will. */
static void idle_lists_trim(struct sendsrv *s)
{
	struct idle_list **pp = &s->idle_lists;

	while (*pp) {
		struct idle_list *il = *pp;

		if (il == s->idle_now || !list_empty(&il->conns)) {
			pp = &il->next;
			continue;
		}
		*pp = il->next;
		sendsrv_mem_free(s, il, sizeof(*il));
	}
}

/* The first live connection on @head whose address is not allowed, or NULL. */
static struct conn *first_disallowed(struct sendsrv *s, struct link *head)
{
	for (struct link *l = head->next; l != head; l = l->next) {
		struct conn *c = link_entry(l, struct conn, tnode);

		if (!allowed(s, (const struct sockaddr *)&c->peer.addr))
			return c;
	}
	return NULL;
}

/*
 * A narrowed allow-list (a reload): the connections it no longer allows
 * are told why and closed. One at a time from the list head: closing one
 * runs on_goodbye, which may change the lists.
 */
static void drop_disallowed(struct sendsrv *s)
{
	uint64_t n = 0;
	struct conn *c;

	for (struct idle_list *il = s->idle_lists; il; il = il->next)
		while ((c = first_disallowed(s, &il->conns))) {
			sendsrv_conn_fail(s, c, RXBNECK_ERR_NOT_ALLOWED, 0, "address no longer in "
					  "the allow-list (configuration reloaded)");
			n++;
		}
	while ((c = first_disallowed(s, &s->hello_list))) {
		sendsrv_conn_fail(s, c, RXBNECK_ERR_NOT_ALLOWED, 0, "address no longer in "
				  "the allow-list (configuration reloaded)");
		n++;
	}
	if (n)
		rxb_notice("sendsrv: closed %llu connections whose addresses the new allow-list "
			   "refuses", (unsigned long long)n);
	s->st.closed_not_allowed += n;
}

int sendsrv_update_limits(struct sendsrv *s, const struct sendsrv_limits *limits)
{
	struct idle_list *idle;
	struct link *l;

	if (check_limits(limits) < 0)
		return -EINVAL;
	idle = idle_list_get(s, limits->idle_timeout_ns);
	if (!idle)
		return -ENOMEM;
	s->lim = *limits;
	s->frac_ppm = (uint64_t)(limits->rate_change_frac * 1e6 + 0.5);
	s->idle_now = idle;
	idle_lists_trim(s);
	/* Nothing was promised before HELLO: the new wait counts from the accept. */
	for (l = s->hello_list.next; l != &s->hello_list; l = l->next) {
		struct conn *c = link_entry(l, struct conn, tnode);

		c->deadline_ns = c->peer.connected_ns + limits->hello_timeout_ns;
	}
	if (limits->max_conns > s->peak_conns)
		s->peak_conns = limits->max_conns;
	if (limits->max_frame_bytes > s->peak_frame_bytes)
		s->peak_frame_bytes = limits->max_frame_bytes;
	if (limits->max_out_bytes > s->peak_out_bytes)
		s->peak_out_bytes = limits->max_out_bytes;
	drop_disallowed(s);
	return 0;
}

void sendsrv_current_limits(const struct sendsrv *s, struct sendsrv_limits *out)
{
	*out = s->lim;
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
	for (struct idle_list *il = s->idle_lists; il; il = il->next)
		release_list(s, &il->conns, true);
	release_list(s, &s->hello_list, false);
	release_list(s, &s->closing_list, false);
	for (uint32_t i = 0; i < s->n_listeners; i++) {
		if (s->listeners[i].watched)
			s->ops.fd_del(s->ops.ctx, s->listeners[i].fd);
		close(s->listeners[i].fd);
	}
	sendsrv_publish_finish(s);
	sendsrv_source_finish(s);
	while (s->idle_lists) {
		struct idle_list *il = s->idle_lists;

		s->idle_lists = il->next;
		free(il);
	}
	for (uint32_t i = 0; i < s->n_slots; i++)
		free(s->slots[i]);
	free(s->fdmap);
	free(s->slots);
	free(s->free_slots);
	free(s);
}

int sendsrv_listen(struct sendsrv *s, const char *addr, uint16_t port,
		   uint16_t *bound_port)
{
	int fd, err;

	if (s->n_listeners == SENDSRV_MAX_LISTEN) {
		rxb_err("sendsrv: more than %d listen addresses", SENDSRV_MAX_LISTEN);
		return -ENOSPC;
	}
	fd = listen_tcp("sendsrv", addr, port, SOMAXCONN, &port);
	if (fd < 0)
		return fd;
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
	c = s->slots[v];
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

/*
 * Pop the expired heads of a deadline-ordered list: @code is the error for
 * a live connection (its wait, @wait_ns, goes into the message), 0 for the
 * closing list.
 */
static void expire(struct sendsrv *s, struct link *head, uint64_t now, int code,
		   uint64_t wait_ns)
{
	while (!list_empty(head)) {
		struct conn *c = link_entry(head->next, struct conn, tnode);

		if (c->deadline_ns > now)
			break;
		if (code)
			sendsrv_conn_fail(s, c, code, 0, "no %s within %llu ms",
					  code == RXBNECK_ERR_HELLO_TIMEOUT ? "HELLO" : "frame",
					  (unsigned long long)(wait_ns / RXB_NSEC_PER_MSEC));
		else
			sendsrv_conn_release(s, c);
	}
}

void sendsrv_tick(struct sendsrv *s, uint64_t now)
{
	expire(s, &s->hello_list, now, RXBNECK_ERR_HELLO_TIMEOUT, s->lim.hello_timeout_ns);
	for (struct idle_list *il = s->idle_lists; il; il = il->next)
		expire(s, &il->conns, now, RXBNECK_ERR_IDLE_TIMEOUT, il->timeout_ns);
	expire(s, &s->closing_list, now, 0, 0);
	idle_lists_trim(s);
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
	uint64_t v = head_deadline(&s->closing_list);

	for (const struct idle_list *il = s->idle_lists; il; il = il->next) {
		uint64_t u = head_deadline(&il->conns);

		if (u < t)
			t = u;
	}
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

	for (const struct idle_list *il = s->idle_lists; il; il = il->next) {
		for (l = il->conns.next; l != &il->conns; l = l->next) {
			cb(arg, &link_entry(l, const struct conn, tnode)->peer);
			n++;
		}
	}
	return n;
}

size_t sendsrv_memory_bound(const struct sendsrv *s)
{
	size_t n = (size_t)s->peak_conns + SENDSRV_SPARE_SLOTS;
	size_t per_slot = sizeof(struct conn) + s->peak_frame_bytes + s->peak_out_bytes +
			  RXBP_ENCODE_MAX + sizeof(struct port_state) + sizeof(struct idle_list) +
			  sizeof(struct source_count);
	/* The slot index arrays grow by doubling: at most twice what is used. */
	size_t index = 2 * n * (sizeof(struct conn *) + sizeof(uint32_t));

	return sizeof(*s) + sizeof(struct idle_list) + n * per_slot + index;
}

void sendsrv_stats(const struct sendsrv *s, struct sendsrv_stats *st)
{
	*st = s->st;
	st->mem_bound_bytes = sendsrv_memory_bound(s);
}
