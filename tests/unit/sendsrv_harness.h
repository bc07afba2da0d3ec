/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The harness of test_sendsrv.c and test_sendsrv_pause.c: a sendsrv on a
 * loop thread (struct sendsrv_thread, sendsrv_test.h) whose callbacks
 * record under its mutex what they saw, and senders that talk to it as
 * senders do: raw sockets when they have to misbehave, else librxbneck.
 * Include after <cmocka.h>, sendsrv_test.h, client_seen.h and
 * frame_recv.h.
 */
#ifndef RXB_TESTS_UNIT_SENDSRV_HARNESS_H
#define RXB_TESTS_UNIT_SENDSRV_HARNESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "proto/codec.h"
#include "rxbneck/client.h"

#define MS RXB_NSEC_PER_MSEC
#define FLOW 9000

/* ---------------------------------------------------------- harness -- */

struct harness {
	struct sendsrv_thread t;	/* first: the fd callbacks' ctx */
	/* What callbacks saw (written under mu by the loop thread). */
	struct sendsrv_test_seen seen;
	struct sendsrv_peer last_hello;
	uint16_t refuse_port;		/* on_hello refuses this flow port */
	bool publish_in_hello;		/* on_hello publishes a rate */
};

static inline int h_hello(void *ctx, const struct sendsrv_peer *p)
{
	struct harness *h = ctx;

	h->seen.hellos++;
	h->last_hello = *p;
	if (p->hello.flow_port == h->refuse_port)
		return RXBNECK_ERR_REFUSED;
	if (h->publish_in_hello) {
		struct rxbneck_rate r = { .port = p->hello.flow_port,
					  .rate_bps = 777000000, .epoch = 1 };

		sendsrv_publish_rate(h->t.s, &r, NULL);
	}
	return 0;
}

static inline void h_report(void *ctx, const struct sendsrv_peer *p,
		     const struct rxbneck_report *r)
{
	struct harness *h = ctx;

	(void)p;
	sendsrv_test_saw_report(&h->seen, r);
}

static inline void h_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	struct harness *h = ctx;

	(void)p;
	sendsrv_test_saw_goodbye(&h->seen, why);
}

static inline void start(struct harness *h, const struct sendsrv_limits *lim)
{
	struct sendsrv_ops ops = {
		.ctx = h, .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod, .fd_del = sendsrv_test_fd_del,
		.on_hello = h_hello, .on_report = h_report, .on_goodbye = h_goodbye,
	};

	memset(h, 0, sizeof(*h));
	sendsrv_thread_start(&h->t, lim, &ops);
}

static inline void finish(struct harness *h)
{
	sendsrv_thread_finish(&h->t);
}

static inline struct sendsrv_limits limits(void)
{
	struct sendsrv_limits l;

	sendsrv_limits_default(&l);
	return l;
}

#define LOCKED(h, stmt) do { \
	pthread_mutex_lock(&(h)->t.mu); stmt; pthread_mutex_unlock(&(h)->t.mu); \
} while (0)

/* A harness field read under the lock. */
#define HGET(h, field) ({ \
	__typeof__((h)->field) v_; \
	pthread_mutex_lock(&(h)->t.mu); v_ = (h)->field; pthread_mutex_unlock(&(h)->t.mu); \
	v_; \
})

/* Wait (up to 5 s) until @expr holds; @expr takes the lock it needs. */
#define WAIT_FOR(expr) do { \
	uint64_t end_ = rxb_mono_ns() + 5000 * MS; \
	bool ok_; \
	for (;;) { \
		ok_ = (expr); \
		if (ok_ || rxb_mono_ns() > end_) break; \
		usleep(2000); \
	} \
	if (!ok_) fail_msg("timed out waiting for %s", #expr); \
} while (0)

static inline struct sendsrv_stats stats(struct harness *h)
{
	struct sendsrv_stats st;

	LOCKED(h, sendsrv_stats(h->t.s, &st));
	return st;
}

static inline void copy_peer(void *arg, const struct sendsrv_peer *p)
{
	*(struct sendsrv_peer *)arg = *p;
}

/* The (last) connected sender as rxbneckctl would see it; count returned. */
static inline size_t snapshot(struct harness *h, struct sendsrv_peer *p)
{
	size_t n;

	memset(p, 0, sizeof(*p));
	LOCKED(h, n = sendsrv_foreach_sender(h->t.s, copy_peer, p));
	return n;
}

static inline int publish_rate(struct harness *h, uint64_t bps, uint64_t epoch, uint16_t flags)
{
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = bps, .loss = 1e-6,
				  .epoch = epoch, .flags = flags, .confidence = 500 };
	int n;

	LOCKED(h, n = sendsrv_publish_rate(h->t.s, &r, NULL));
	return n;
}

/* ------------------------------------------------------ raw senders -- */

static inline int raw_connect(struct harness *h, int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(h->t.port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (rcvbuf)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
					    sizeof(rcvbuf)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static inline void raw_write(int fd, const void *b, size_t n)
{
	assert_int_equal(send(fd, b, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* After an ERROR the server closes its side: expect EOF soon. */
static inline void expect_eof(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char b[64];

	assert_int_equal(poll(&p, 1, 3000), 1);
	assert_int_equal(read(fd, b, sizeof(b)), 0);
}

static inline void expect_error(int fd, int code, uint32_t ref_seq)
{
	struct rxbp_msg m;

	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_ERROR);
	if (m.u.error.code != code)
		fail_msg("expected %s, got %s (%s)", rxbneck_error_name((unsigned)code),
			 rxbneck_error_name(m.u.error.code), m.u.error.message);
	assert_int_equal(m.u.error.ref_seq, ref_seq);
	assert_int_equal(m.u.error.version_min, 1);
	assert_int_equal(m.u.error.version_max, 1);
	expect_eof(fd);
}

static inline struct rxbp_msg hello_msg(uint16_t flow, uint32_t rtt_us)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_HELLO;
	m.u.hello.flow_port = flow;
	m.u.hello.flow_proto = 17;
	m.u.hello.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE;
	m.u.hello.payload_bytes = 1472;
	m.u.hello.rtt_us = rtt_us;
	return m;
}

/* Raw sender past HELLO/HELLO_ACK. */
static inline int raw_active(struct harness *h, uint32_t rtt_us, int rcvbuf)
{
	int fd = raw_connect(h, rcvbuf);
	struct rxbp_msg m = hello_msg(FLOW, rtt_us);

	sendsrv_test_send(fd, &m, 1);
	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_HELLO_ACK);
	return fd;
}

/* ----------------------------------------------------- lib senders -- */

static inline struct rxbneck_client *lib_client(struct harness *h, struct client_seen *s,
					 uint16_t flow, uint32_t rtt_us)
{
	struct rxbneck_client_config cfg;
	struct rxbneck_client *c;

	client_seen_config(&cfg, s, h->t.port, 3000);
	cfg.hello.flow_port = flow;
	cfg.hello.file_bytes = 1000000;
	cfg.hello.rtt_us = rtt_us;
	strcpy(cfg.hello.name, "unit sender");
	c = rxbneck_client_new(&cfg);
	assert_non_null(c);
	return c;
}

static inline struct rxbneck_client *lib_connected(struct harness *h, struct client_seen *s,
					    uint32_t rtt_us)
{
	struct rxbneck_client *c = lib_client(h, s, FLOW, rtt_us);
	int rc = rxbneck_client_connect(c);

	if (rc != 0)
		fail_msg("connect: %s", rxbneck_client_errmsg(c));
	return c;
}

/* Run the client until it has seen @total RATEs in all, or 2 s. */
static inline void lib_expect_total(struct rxbneck_client *c, struct client_seen *s, int total)
{
	uint64_t end = rxb_mono_ns() + 2000 * MS;

	while (s->rates < total && rxb_mono_ns() < end)
		assert_true(rxbneck_client_wait(c, 50) >= 0);
	assert_int_equal(s->rates, total);
}

/* Run the client until @n more RATE callbacks or 2 s. */
static inline void lib_expect_rates(struct rxbneck_client *c, struct client_seen *s, int n)
{
	lib_expect_total(c, s, s->rates + n);
}

/* No RATE arrives within @ms. */
static inline void lib_expect_quiet(struct rxbneck_client *c, struct client_seen *s, int ms)
{
	int had = s->rates;

	assert_true(rxbneck_client_wait(c, ms) >= 0);
	assert_int_equal(s->rates, had);
}

#endif
