/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the tests that pump a sendsrv themselves share: the fd_add/fd_mod/
 * fd_del callbacks of sendsrv_ops on the test's epoll set (@ctx points to a
 * struct whose first member is the epoll fd, an int; each event carries its
 * fd), sending one frame as a raw sender, one round of a server loop,
 * (struct sendsrv_thread) a server on a thread of its own, and
 * (struct pump) a server pumped
 * by the test's own thread on a clock it can move forward, with raw
 * senders from any loopback address. Include after <cmocka.h>.
 */
#ifndef RXB_TESTS_SENDSRV_TEST_H
#define RXB_TESTS_SENDSRV_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "proto/codec.h"

static inline int sendsrv_test_ctl(void *ctx, int op, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(*(int *)ctx, op, fd, &e) < 0 ? -errno : 0;
}

static inline int sendsrv_test_fd_add(void *ctx, int fd, uint32_t ev)
{
	return sendsrv_test_ctl(ctx, EPOLL_CTL_ADD, fd, ev);
}

static inline int sendsrv_test_fd_mod(void *ctx, int fd, uint32_t ev)
{
	return sendsrv_test_ctl(ctx, EPOLL_CTL_MOD, fd, ev);
}

static inline void sendsrv_test_fd_del(void *ctx, int fd)
{
	epoll_ctl(*(int *)ctx, EPOLL_CTL_DEL, fd, NULL);
}

/* Encode @m with sequence number @seq and send it whole on @fd. */
static inline void sendsrv_test_send(int fd, struct rxbp_msg *m, uint32_t seq)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n;

	m->seq = seq;
	n = rxbp_encode(buf, sizeof(buf), m);
	assert_true(n > 0);
	assert_int_equal(send(fd, buf, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* ----------------------------------------------- a pumped server -- */

/* What a test server's callbacks saw: each kind counted, the last kept. */
struct sendsrv_test_seen {
	int hellos, goodbyes, reports;
	int last_why;			/* the last goodbye's */
	struct rxbneck_report last_report;
};

static inline void sendsrv_test_saw_report(struct sendsrv_test_seen *s,
					   const struct rxbneck_report *r)
{
	s->reports++;
	s->last_report = *r;
}

static inline void sendsrv_test_saw_goodbye(struct sendsrv_test_seen *s, int why)
{
	s->goodbyes++;
	s->last_why = why;
}

/* epfd first: the fd callbacks above. */
struct pump {
	int epfd;
	struct sendsrv *s;
	uint16_t port;
	uint64_t skew_ns;	/* added to CLOCK_MONOTONIC: time travel */
	struct sendsrv_test_seen seen;
};

static inline uint64_t pump_now(void *ctx)
{
	return rxb_mono_ns() + ((struct pump *)ctx)->skew_ns;
}

static inline int pump_on_hello(void *ctx, const struct sendsrv_peer *p)
{
	(void)p;
	((struct pump *)ctx)->seen.hellos++;
	return 0;
}

static inline void pump_on_report(void *ctx, const struct sendsrv_peer *p,
				  const struct rxbneck_report *r)
{
	(void)p;
	sendsrv_test_saw_report(&((struct pump *)ctx)->seen, r);
}

static inline void pump_on_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	(void)p;
	sendsrv_test_saw_goodbye(&((struct pump *)ctx)->seen, why);
}

/*
 * One round of a server loop: wait up to @wait_ms for @s's events on @epfd,
 * handle them and tick @s at @now_ns (NULL: the monotonic clock), holding
 * @mu (NULL: none) while @s runs, so a test thread can read what the
 * callbacks saw.
 */
static inline void sendsrv_test_round(int epfd, struct sendsrv *s, int wait_ms,
				      pthread_mutex_t *mu,
				      uint64_t (*now_ns)(void *ctx), void *ctx)
{
	struct epoll_event ev[64];
	int n = epoll_wait(epfd, ev, 64, wait_ms);

	if (mu)
		pthread_mutex_lock(mu);
	for (int i = 0; i < n; i++)
		sendsrv_handle(s, ev[i].data.fd, ev[i].events);
	sendsrv_tick(s, now_ns ? now_ns(ctx) : rxb_mono_ns());
	if (mu)
		pthread_mutex_unlock(mu);
}

/*
 * A sendsrv served by a thread of its own, listening on 127.0.0.1: the first
 * member of a test's harness (so the harness starts with the epoll fd, as
 * the fd callbacks want). The thread runs the server under @mu; the test
 * takes @mu to read what the callbacks saw.
 */
struct sendsrv_thread {
	int epfd;
	struct sendsrv *s;
	uint16_t port;
	pthread_t th;
	pthread_mutex_t mu;
	atomic_bool stop;
	bool running;
};

static inline void *sendsrv_thread_main(void *arg)
{
	struct sendsrv_thread *t = arg;

	while (!atomic_load(&t->stop))
		sendsrv_test_round(t->epfd, t->s, 5, &t->mu, NULL, NULL);
	return NULL;
}

/* A server with @lim and @ops (ctx: the harness @t is the first member of). */
static inline void sendsrv_thread_start(struct sendsrv_thread *t,
					const struct sendsrv_limits *lim,
					const struct sendsrv_ops *ops)
{
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(t->epfd >= 0);
	assert_int_equal(pthread_mutex_init(&t->mu, NULL), 0);
	atomic_store(&t->stop, false);
	assert_int_equal(sendsrv_init(&t->s, lim, ops), 0);
	assert_int_equal(sendsrv_listen(t->s, "127.0.0.1", 0, &t->port), 0);
	assert_true(t->port != 0);
	assert_int_equal(pthread_create(&t->th, NULL, sendsrv_thread_main, t), 0);
	t->running = true;
}

/* Stop the thread (the server stays, for the test to drive itself). */
static inline void sendsrv_thread_stop(struct sendsrv_thread *t)
{
	if (!t->running)
		return;
	atomic_store(&t->stop, true);
	assert_int_equal(pthread_join(t->th, NULL), 0);
	t->running = false;
}

static inline void sendsrv_thread_finish(struct sendsrv_thread *t)
{
	sendsrv_thread_stop(t);
	sendsrv_finish(t->s);
	close(t->epfd);
	pthread_mutex_destroy(&t->mu);
}

/* Serve @s's events on @epfd for @ms, ticking it at @now_ns (NULL: the
 * monotonic clock). */
static inline void sendsrv_test_serve(int epfd, struct sendsrv *s, int ms,
				      uint64_t (*now_ns)(void *ctx), void *ctx)
{
	uint64_t end = rxb_mono_ns() + (uint64_t)ms * RXB_NSEC_PER_MSEC;

	do
		sendsrv_test_round(epfd, s, 2, NULL, now_ns, ctx);
	while (rxb_mono_ns() < end);
}

static inline void pump_run(struct pump *h, int ms)
{
	sendsrv_test_serve(h->epfd, h->s, ms, pump_now, h);
}

/* A server on 127.0.0.1 with @lim; @ops (may be NULL) adds callbacks. */
static inline void pump_start_ops(struct pump *h, const struct sendsrv_limits *lim,
				  const struct sendsrv_ops *more)
{
	struct sendsrv_ops ops = { .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod,
				   .fd_del = sendsrv_test_fd_del, .now_ns = pump_now,
				   .on_goodbye = pump_on_goodbye };

	if (more)
		ops = *more;
	ops.ctx = h;
	ops.fd_add = sendsrv_test_fd_add;
	ops.fd_mod = sendsrv_test_fd_mod;
	ops.fd_del = sendsrv_test_fd_del;
	ops.now_ns = pump_now;
	memset(h, 0, sizeof(*h));
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(h->epfd >= 0);
	assert_int_equal(sendsrv_init(&h->s, lim, &ops), 0);
	assert_int_equal(sendsrv_listen(h->s, "127.0.0.1", 0, &h->port), 0);
}

static inline void pump_start(struct pump *h, const struct sendsrv_limits *lim)
{
	pump_start_ops(h, lim, NULL);
}

static inline void pump_finish(struct pump *h)
{
	sendsrv_finish(h->s);
	close(h->epfd);
}

/* A TCP connection to the server from loopback address @from ("127.0.0.N"). */
static inline int pump_dial_from(struct pump *h, const char *from, int rcvbuf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(h->port) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	if (rcvbuf)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
					    sizeof(rcvbuf)), 0);
	assert_int_equal(inet_pton(AF_INET, from, &me.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static inline int pump_dial(struct pump *h, int rcvbuf)
{
	return pump_dial_from(h, "127.0.0.1", rcvbuf);
}

static inline struct rxbp_msg pump_hello_msg(uint16_t flow)
{
	struct rxbp_msg m = { .type = RXBNECK_T_HELLO };

	m.u.hello.flow_port = flow;
	m.u.hello.flow_proto = 17;
	m.u.hello.subscribe = RXBNECK_SUB_RATE;
	m.u.hello.payload_bytes = 1468;
	return m;
}

static inline void pump_hello(int fd, uint32_t seq)
{
	struct rxbp_msg m = pump_hello_msg(9000);

	sendsrv_test_send(fd, &m, seq);
}

/* A sender from 127.0.0.1 that has sent @hello (sequence number 1). */
static inline int pump_send_hello(struct pump *h, struct rxbp_msg *hello)
{
	int fd = pump_dial(h, 0);

	sendsrv_test_send(fd, hello, 1);
	return fd;
}

/*
 * The next frame from @fd while serving @s on @epfd (@tries rounds of 2 ms,
 * ticked at @now_ns as in sendsrv_test_serve): its type, 0 if none came,
 * -1 at EOF.
 */
static inline int sendsrv_test_next_frame(int epfd, struct sendsrv *s, int fd,
					  struct rxbp_msg *m, int tries,
					  uint64_t (*now_ns)(void *ctx), void *ctx)
{
	uint8_t buf[4096];
	size_t have = 0;

	for (int i = 0; i < tries; i++) {
		int len = rxbp_frame_check(buf, have, sizeof(buf), NULL);
		ssize_t r;

		if (len > 0) {
			assert_int_equal((size_t)len, have);	/* one frame at a time here */
			assert_int_equal(rxbp_decode(buf, (size_t)len, m), 0);
			return m->type;
		}
		assert_int_equal(len, 0);
		sendsrv_test_serve(epfd, s, 2, now_ns, ctx);
		/* Byte by byte: never read past the frame. */
		r = recv(fd, buf + have, 1, MSG_DONTWAIT);
		if (r == 0)
			return -1;
		if (r > 0)
			have++;
		while (r > 0 && (len = rxbp_frame_check(buf, have, sizeof(buf), NULL)) == 0 &&
		       (r = recv(fd, buf + have, 1, MSG_DONTWAIT)) > 0)
			have++;
	}
	return 0;
}

/* The next frame from @fd within ~1 s; its type, 0 if none, -1 at EOF. */
static inline int pump_next_frame(struct pump *h, int fd, struct rxbp_msg *m)
{
	return sendsrv_test_next_frame(h->epfd, h->s, fd, m, 500, pump_now, h);
}

/* A connected sender past HELLO; the HELLO_ACK it got in *ack. */
static inline int pump_active(struct pump *h, struct rxbp_msg *ack)
{
	int fd = pump_dial(h, 0);

	pump_hello(fd, 1);
	assert_int_equal(pump_next_frame(h, fd, ack), RXBNECK_T_HELLO_ACK);
	return fd;
}

static inline void pump_expect_error(struct pump *h, int fd, int code)
{
	struct rxbp_msg m;

	assert_int_equal(pump_next_frame(h, fd, &m), RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, code);
}

/* A PING is answered: the connection is alive and served. */
static inline void pump_expect_alive(struct pump *h, int fd, uint32_t seq)
{
	struct rxbp_msg m = { .type = RXBNECK_T_PING };

	m.u.ping.token = seq;
	sendsrv_test_send(fd, &m, seq);
	assert_int_equal(pump_next_frame(h, fd, &m), RXBNECK_T_PONG);
	assert_true(m.u.ping.token == seq);
}

#endif
