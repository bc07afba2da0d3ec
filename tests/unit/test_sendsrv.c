// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/serve/sendsrv over real loopback TCP.
 *
 * A loop thread runs epoll + sendsrv_handle + sendsrv_tick, holding a mutex
 * while it is inside sendsrv; the test thread takes the same mutex to
 * publish or look at stats, and talks to the server as senders do: through
 * librxbneck, or through raw sockets when it has to misbehave.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tests/unit/sendsrv_test.h"
#include "proto/codec.h"
#include "rxbneck/client.h"
#include "tests/unit/client_seen.h"
#include "tests/unit/frame_recv.h"

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

static int h_hello(void *ctx, const struct sendsrv_peer *p)
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

static void h_report(void *ctx, const struct sendsrv_peer *p,
		     const struct rxbneck_report *r)
{
	struct harness *h = ctx;

	(void)p;
	sendsrv_test_saw_report(&h->seen, r);
}

static void h_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	struct harness *h = ctx;

	(void)p;
	sendsrv_test_saw_goodbye(&h->seen, why);
}

static void start(struct harness *h, const struct sendsrv_limits *lim)
{
	struct sendsrv_ops ops = {
		.ctx = h, .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod, .fd_del = sendsrv_test_fd_del,
		.on_hello = h_hello, .on_report = h_report, .on_goodbye = h_goodbye,
	};

	memset(h, 0, sizeof(*h));
	sendsrv_thread_start(&h->t, lim, &ops);
}

static void finish(struct harness *h)
{
	sendsrv_thread_finish(&h->t);
}

static struct sendsrv_limits limits(void)
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

static struct sendsrv_stats stats(struct harness *h)
{
	struct sendsrv_stats st;

	LOCKED(h, sendsrv_stats(h->t.s, &st));
	return st;
}

static void copy_peer(void *arg, const struct sendsrv_peer *p)
{
	*(struct sendsrv_peer *)arg = *p;
}

/* The (last) connected sender as rxbneckctl would see it; count returned. */
static size_t snapshot(struct harness *h, struct sendsrv_peer *p)
{
	size_t n;

	memset(p, 0, sizeof(*p));
	LOCKED(h, n = sendsrv_foreach_sender(h->t.s, copy_peer, p));
	return n;
}

static int publish_rate(struct harness *h, uint64_t bps, uint64_t epoch, uint16_t flags)
{
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = bps, .loss = 1e-6,
				  .epoch = epoch, .flags = flags, .confidence = 500 };
	int n;

	LOCKED(h, n = sendsrv_publish_rate(h->t.s, &r, NULL));
	return n;
}

/* ------------------------------------------------------ raw senders -- */

static int raw_connect(struct harness *h, int rcvbuf)
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

static void raw_write(int fd, const void *b, size_t n)
{
	assert_int_equal(send(fd, b, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* After an ERROR the server closes its side: expect EOF soon. */
static void expect_eof(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char b[64];

	assert_int_equal(poll(&p, 1, 3000), 1);
	assert_int_equal(read(fd, b, sizeof(b)), 0);
}

static void expect_error(int fd, int code, uint32_t ref_seq)
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

static struct rxbp_msg hello_msg(uint16_t flow, uint32_t rtt_us)
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
static int raw_active(struct harness *h, uint32_t rtt_us, int rcvbuf)
{
	int fd = raw_connect(h, rcvbuf);
	struct rxbp_msg m = hello_msg(FLOW, rtt_us);

	sendsrv_test_send(fd, &m, 1);
	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_HELLO_ACK);
	return fd;
}

/* ----------------------------------------------------- lib senders -- */

static struct rxbneck_client *lib_client(struct harness *h, struct client_seen *s,
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

static struct rxbneck_client *lib_connected(struct harness *h, struct client_seen *s,
					    uint32_t rtt_us)
{
	struct rxbneck_client *c = lib_client(h, s, FLOW, rtt_us);
	int rc = rxbneck_client_connect(c);

	if (rc != 0)
		fail_msg("connect: %s", rxbneck_client_errmsg(c));
	return c;
}

/* Run the client until it has seen @total RATEs in all, or 2 s. */
static void lib_expect_total(struct rxbneck_client *c, struct client_seen *s, int total)
{
	uint64_t end = rxb_mono_ns() + 2000 * MS;

	while (s->rates < total && rxb_mono_ns() < end)
		assert_true(rxbneck_client_wait(c, 50) >= 0);
	assert_int_equal(s->rates, total);
}

/* Run the client until @n more RATE callbacks or 2 s. */
static void lib_expect_rates(struct rxbneck_client *c, struct client_seen *s, int n)
{
	lib_expect_total(c, s, s->rates + n);
}

/* No RATE arrives within @ms. */
static void lib_expect_quiet(struct rxbneck_client *c, struct client_seen *s, int ms)
{
	int had = s->rates;

	assert_true(rxbneck_client_wait(c, ms) >= 0);
	assert_int_equal(s->rates, had);
}

/* ------------------------------------------------------------ tests -- */

static void test_cidr(void **state)
{
	struct sendsrv_cidr c;
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	const char *why = NULL;

	(void)state;
	assert_int_equal(sendsrv_cidr_parse("10.1.0.0/16", &c, NULL), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix_len, 16);
	inet_pton(AF_INET, "10.1.255.3", &v4.sin_addr);
	assert_true(sendsrv_cidr_match(&c, (struct sockaddr *)&v4));
	inet_pton(AF_INET, "10.2.0.1", &v4.sin_addr);
	assert_false(sendsrv_cidr_match(&c, (struct sockaddr *)&v4));

	/* A v4-mapped peer (IPv4 on a dual-stack socket) matches IPv4 CIDRs. */
	inet_pton(AF_INET6, "::ffff:10.1.2.3", &v6.sin6_addr);
	assert_true(sendsrv_cidr_match(&c, (struct sockaddr *)&v6));
	inet_pton(AF_INET6, "::ffff:10.3.2.3", &v6.sin6_addr);
	assert_false(sendsrv_cidr_match(&c, (struct sockaddr *)&v6));

	/* A v4-mapped CIDR is stored as IPv4. */
	assert_int_equal(sendsrv_cidr_parse("::ffff:192.168.0.0/112", &c, NULL), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix_len, 16);
	inet_pton(AF_INET, "192.168.7.7", &v4.sin_addr);
	assert_true(sendsrv_cidr_match(&c, (struct sockaddr *)&v4));

	/* IPv6 prefixes, odd lengths, host entries, /0. */
	assert_int_equal(sendsrv_cidr_parse("2001:db8::/33", &c, NULL), 0);
	inet_pton(AF_INET6, "2001:db8:7fff::1", &v6.sin6_addr);
	assert_true(sendsrv_cidr_match(&c, (struct sockaddr *)&v6));
	inet_pton(AF_INET6, "2001:db8:8000::1", &v6.sin6_addr);
	assert_false(sendsrv_cidr_match(&c, (struct sockaddr *)&v6));
	assert_false(sendsrv_cidr_match(&c, (struct sockaddr *)&v4));
	assert_int_equal(sendsrv_cidr_parse("::1", &c, NULL), 0);
	assert_int_equal(c.prefix_len, 128);
	assert_int_equal(sendsrv_cidr_parse("0.0.0.0/0", &c, NULL), 0);
	assert_true(sendsrv_cidr_match(&c, (struct sockaddr *)&v4));
	assert_false(sendsrv_cidr_match(&c, (struct sockaddr *)&v6));

	/* Errors say why. */
	assert_int_equal(sendsrv_cidr_parse("10.0.0.1/8", &c, &why), -EINVAL);
	assert_string_equal(why, "host bits set after the prefix");
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/33", &c, &why), -EINVAL);
	assert_string_equal(why, "bad prefix length");
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/", &c, &why), -EINVAL);
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/ 8", &c, &why), -EINVAL);
	assert_int_equal(sendsrv_cidr_parse("::/129", &c, &why), -EINVAL);
	assert_int_equal(sendsrv_cidr_parse("example.org/8", &c, &why), -EINVAL);
	assert_string_equal(why, "not an IPv4 or IPv6 address");
	assert_int_equal(sendsrv_cidr_parse("", &c, &why), -EINVAL);
}

static void test_init_validation(void **state)
{
	struct sendsrv_ops ops = { .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod, .fd_del = sendsrv_test_fd_del };
	struct sendsrv_limits l = limits();
	struct sendsrv *s;

	(void)state;
	l.max_frame_bytes = 511;
	assert_int_equal(sendsrv_init(&s, &l, &ops), -EINVAL);
	assert_null(s);
	l = limits();
	l.rate_change_frac = NAN;
	assert_int_equal(sendsrv_init(&s, &l, &ops), -EINVAL);
	l = limits();
	l.max_conns = 0;
	assert_int_equal(sendsrv_init(&s, &l, &ops), -EINVAL);
	l = limits();
	ops.fd_mod = NULL;
	assert_int_equal(sendsrv_init(&s, &l, &ops), -EINVAL);
	ops.fd_mod = sendsrv_test_fd_mod;
	assert_int_equal(sendsrv_init(&s, &l, &ops), 0);
	assert_int_equal(sendsrv_listen(s, "localhost", 0, NULL), -EINVAL);
	sendsrv_finish(s);
}

static void test_listen_ipv6_and_dual_stack(void **state)
{
	struct harness h;
	struct sendsrv_ops ops = { .ctx = &h, .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod,
				   .fd_del = sendsrv_test_fd_del };
	struct sendsrv_limits l = limits();
	uint16_t p6 = 0, pany = 0;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.t.epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_int_equal(sendsrv_init(&h.t.s, &l, &ops), 0);
	assert_int_equal(sendsrv_listen(h.t.s, "::1", 0, &p6), 0);
	assert_int_equal(sendsrv_listen(h.t.s, "::", 0, &pany), 0);
	assert_true(p6 != 0 && pany != 0);
	sendsrv_finish(h.t.s);
	close(h.t.epfd);
}

static void test_hello_ack_rate_and_snapshot(void **state)
{
	struct harness h;
	struct client_seen s = { 0 };
	struct rxbneck_client *c;
	const struct rxbneck_hello_ack *ack;
	struct rxbneck_rate r;
	struct sendsrv_limits l = limits();
	struct sendsrv_peer snap;
	size_t n;

	(void)state;
	l.epoch_ms = 250;
	start(&h, &l);
	c = lib_connected(&h, &s, 1500);
	ack = rxbneck_client_daemon(c);
	assert_int_equal(ack->granted, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	assert_int_equal(ack->accepts, RXBNECK_ACCEPT_REPORT);
	assert_int_equal(ack->max_frame_bytes, 4096);
	assert_int_equal(ack->idle_timeout_ms, 60000);
	assert_int_equal(ack->epoch_ms, 250);
	assert_string_equal(ack->name, "rxbneckd " RXB_VERSION);
	assert_int_equal(rxbneck_client_latest_rate(c, &r), RXBNECK_ENODATA);

	/* on_hello saw the HELLO. */
	assert_int_equal(HGET(&h, seen.hellos), 1);
	snap = HGET(&h, last_hello);
	assert_int_equal(snap.hello.flow_port, FLOW);
	assert_int_equal(snap.hello.payload_bytes, 8192);
	assert_int_equal(snap.hello.rtt_us, 1500);
	assert_string_equal(snap.hello.name, "unit sender");
	assert_non_null(strstr(snap.addr_str, "127.0.0.1:"));

	/* Published rate reaches callback and polling API. */
	assert_int_equal(publish_rate(&h, 1200000000, 5, 0), 1);
	lib_expect_rates(c, &s, 1);
	assert_int_equal(s.rate.rate_bps, 1200000000);
	assert_int_equal(s.rate.epoch, 5);
	assert_true(s.rate.loss == 1e-6);
	assert_int_equal(rxbneck_client_latest_rate(c, &r), 0);
	assert_int_equal(r.rate_bps, 1200000000);

	/* A rate for another flow does not reach it. */
	{
		struct rxbneck_rate other = { .port = FLOW + 1, .rate_bps = 5, .epoch = 6 };

		int k;

		LOCKED(&h, k = sendsrv_publish_rate(h.t.s, &other, NULL));
		assert_int_equal(k, 0);
		lib_expect_quiet(c, &s, 100);
	}

	/* The snapshot for `rxbneckctl senders`. */
	n = snapshot(&h, &snap);
	assert_int_equal(n, 1);
	assert_int_equal(snap.hello.flow_port, FLOW);
	assert_int_equal(snap.hello.file_bytes, 1000000);
	assert_true(snap.has_rate);
	assert_int_equal(snap.last_rate.rate_bps, 1200000000);
	assert_int_equal(snap.frames_in, 1);
	assert_int_equal(snap.frames_out, 2);	/* HELLO_ACK + RATE */
	assert_true(snap.connected_ns > 0);

	/* REPORT reaches on_report. */
	assert_int_equal(rxbneck_client_report(c, &(struct rxbneck_report){
		.port = FLOW, .rounds = 4, .elapsed_us = 999, .rate_bps = 1200000000,
		.file_bytes = 1000000, .pkts_sent = 200, .pkts_resent = 77,
		.pkts_lost_first = 60 }), 0);
	WAIT_FOR(HGET(&h, seen.reports) == 1);
	assert_int_equal(HGET(&h, seen.last_report).rounds, 4);
	assert_int_equal(HGET(&h, seen.last_report).elapsed_us, 999);

	/* BYE: on_goodbye once, connection gone. */
	rxbneck_client_close(c);
	WAIT_FOR(HGET(&h, seen.goodbyes) == 1);
	assert_int_equal(HGET(&h, seen.last_why), SENDSRV_GONE_BYE);
	WAIT_FOR(snapshot(&h, &snap) == 0);
	finish(&h);
}

static void test_change_fraction_and_refresh(void **state)
{
	struct harness h;
	struct client_seen s = { 0 };
	struct sendsrv_limits l = limits();
	struct rxbneck_client *c;
	struct sendsrv_peer snap;

	(void)state;
	l.rate_change_frac = 0.05;
	l.rate_refresh_epochs = 10;
	start(&h, &l);
	c = lib_connected(&h, &s, 0);

	assert_int_equal(publish_rate(&h, 1000000000, 1, 0), 1);	/* first */
	lib_expect_rates(c, &s, 1);
	assert_int_equal(publish_rate(&h, 1049999999, 2, 0), 0);	/* < 5 % */
	assert_int_equal(publish_rate(&h, 950000001, 3, 0), 0);	/* < 5 % down */
	lib_expect_quiet(c, &s, 100);
	assert_int_equal(publish_rate(&h, 1050000000, 4, 0), 1);	/* = 5 % */
	lib_expect_rates(c, &s, 1);
	assert_int_equal(s.rate.rate_bps, 1050000000);
	/* Measured from the last value *sent*: 1.0e9 is 4.76 % below 1.05e9. */
	assert_int_equal(publish_rate(&h, 1000000000, 5, 0), 0);
	assert_int_equal(publish_rate(&h, 997500000, 6, 0), 1);	/* 5 % below */
	lib_expect_rates(c, &s, 1);
	/* Same value, 9 epochs later: nothing; 10 epochs later: refresh. */
	assert_int_equal(publish_rate(&h, 997500000, 15, 0), 0);
	assert_int_equal(publish_rate(&h, 997500000, 16, 0), 1);
	lib_expect_rates(c, &s, 1);
	assert_int_equal(s.rate.epoch, 16);
	/* A flag change is pushed whatever the rate. */
	assert_int_equal(publish_rate(&h, 997500000, 17, RXBNECK_RATE_STALE), 1);
	lib_expect_rates(c, &s, 1);
	assert_int_equal(s.rate.flags, RXBNECK_RATE_STALE);
	/* Invalid values are refused, not sent. */
	{
		struct rxbneck_rate bad = { .port = FLOW, .rate_bps = 1, .loss = 2.0 };

		int k;

		LOCKED(&h, k = sendsrv_publish_rate(h.t.s, &bad, NULL));
		assert_int_equal(k, -EINVAL);
	}

	/* Unsubscribe RATE: nothing; subscribe again: the stored rate at once. */
	assert_int_equal(rxbneck_client_subscribe(c, RXBNECK_SUB_PAUSE, 0), 0);
	WAIT_FOR(snapshot(&h, &snap) == 1 && snap.granted == RXBNECK_SUB_PAUSE);
	assert_int_equal(publish_rate(&h, 5000000000, 18, 0), 0);
	assert_int_equal(rxbneck_client_subscribe(c, RXBNECK_SUB_RATE, 0), 0);
	lib_expect_rates(c, &s, 1);
	assert_int_equal(s.rate.rate_bps, 5000000000);
	rxbneck_client_close(c);
	finish(&h);
}

static void test_late_subscriber_and_hello_publish(void **state)
{
	struct harness h;
	struct client_seen s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
	struct sendsrv_limits l = limits();
	struct rxbneck_client *c1, *c2, *c3;

	(void)state;
	start(&h, &l);
	c1 = lib_connected(&h, &s1, 0);
	assert_int_equal(publish_rate(&h, 2000000000, 3, 0), 1);
	lib_expect_rates(c1, &s1, 1);
	/* A second sender of the flow gets the stored rate right after the ACK. */
	c2 = lib_connected(&h, &s2, 0);
	lib_expect_total(c2, &s2, 1);	/* maybe already inside connect() */
	assert_int_equal(s2.rate.rate_bps, 2000000000);
	rxbneck_client_close(c1);
	rxbneck_client_close(c2);
	WAIT_FOR(HGET(&h, seen.goodbyes) == 2);

	/* Rate published from on_hello: sent after HELLO_ACK (connect works). */
	LOCKED(&h, h.publish_in_hello = true);
	c3 = lib_connected(&h, &s3, 0);
	lib_expect_total(c3, &s3, 1);
	assert_int_equal(s3.rate.rate_bps, 777000000);
	rxbneck_client_close(c3);
	finish(&h);
}

static void test_pause_delivery_and_rtt_filter(void **state)
{
	struct harness h;
	struct client_seen near = { 0 }, far = { 0 };
	struct sendsrv_limits l = limits();
	struct rxbneck_client *cn, *cf;
	struct rxbneck_pause p = { .port = FLOW, .repeat_count = 1,
				   .start_in_us = 3000, .duration_us = 4000, .epoch = 2 };
	int n;

	(void)state;
	start(&h, &l);
	cn = lib_connected(&h, &near, 1000);
	cf = lib_connected(&h, &far, 100000);	/* 100 ms RTT */

	/* One-shot 3 ms ahead, 4 ms long: useless at 100 ms RTT. */
	LOCKED(&h, n = sendsrv_publish_pause(h.t.s, &p));
	assert_int_equal(n, 1);
	assert_true(rxbneck_client_wait(cn, 2000) == 1);
	assert_int_equal(near.pauses, 1);
	assert_int_equal(near.pause.pause.start_in_us, 3000);
	assert_int_equal(near.pause.lead_us, 1000);
	assert_true(rxbneck_client_wait(cf, 100) == 0);
	assert_int_equal(far.pauses, 0);

	/* A periodic schedule goes to both. */
	p.repeat_count = 0;
	p.period_us = 7000;
	LOCKED(&h, n = sendsrv_publish_pause(h.t.s, &p));
	assert_int_equal(n, 2);
	assert_true(rxbneck_client_wait(cf, 2000) == 1);
	assert_int_equal(far.pauses, 1);
	assert_int_equal(far.pause.pause.period_us, 7000);
	assert_int_equal(far.pause.lead_us, 100000);

	/* CANCEL too; invalid schedules are refused. */
	memset(&p, 0, sizeof(p));
	p.port = FLOW;
	p.flags = RXBNECK_PAUSE_CANCEL;
	LOCKED(&h, n = sendsrv_publish_pause(h.t.s, &p));
	assert_int_equal(n, 2);
	p.flags = 0;
	p.duration_us = 10;
	p.period_us = 10;
	LOCKED(&h, n = sendsrv_publish_pause(h.t.s, &p));
	assert_int_equal(n, -EINVAL);
	rxbneck_client_close(cn);
	rxbneck_client_close(cf);
	finish(&h);
}

/* A raw sender of @minor subscribing to @subs, past HELLO_ACK. */
static int raw_active_as(struct harness *h, uint16_t minor, uint16_t subs)
{
	int fd = raw_connect(h, 0);
	struct rxbp_msg m = hello_msg(FLOW, 1000);

	m.u.hello.minor = minor;
	m.u.hello.subscribe = subs;
	sendsrv_test_send(fd, &m, 1);
	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_HELLO_ACK);
	return fd;
}

/* The next frame on @fd is a RATE of @bps carrying (or not) BETWEEN_PAUSES. */
static void expect_rate(int fd, uint64_t bps, bool between)
{
	struct rxbp_msg m;

	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_RATE);
	assert_int_equal(m.u.rate.rate_bps, bps);
	assert_int_equal(!!(m.u.rate.flags & RXBNECK_RATE_BETWEEN_PAUSES), between);
}

static void expect_nothing(int fd)
{
	struct rxbp_msg m;

	assert_int_equal(frame_recv(fd, &m, 100), -1);
}

/* The next frame on @fd is a PAUSE (CANCEL or not). */
static void expect_pause(int fd, bool cancel)
{
	struct rxbp_msg m;

	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_PAUSE);
	assert_int_equal(!!(m.u.pause.flags & RXBNECK_PAUSE_CANCEL), cancel);
}

static int publish_pause(struct harness *h, uint32_t repeat, uint64_t epoch, bool cancel)
{
	struct rxbneck_pause p = { .port = FLOW, .start_in_us = 2000, .duration_us = 3000,
				   .period_us = repeat == 1 ? 0 : 10000,
				   .repeat_count = repeat, .epoch = epoch,
				   .flags = cancel ? RXBNECK_PAUSE_CANCEL : 0 };
	int n;

	LOCKED(h, n = sendsrv_publish_pause(h->t.s, &p));
	return n;
}

/*
 * PROTOCOL.md §6.3: the rate between pauses goes only to senders that take
 * PAUSE, speak minor >= 1 and have a schedule in force: after a PAUSE
 * frame, until a CANCEL (or the schedule's end plus one epoch, below). A
 * sender that takes PAUSE later gets it after its first PAUSE.
 */
static void test_rate_between_pauses(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 1000000000, .loss = 0.3,
				  .epoch = 4, .confidence = 900 };
	struct rxbneck_rate b = r;
	struct rxbp_msg m;
	int obeys, rate_only, old, n;

	(void)state;
	b.rate_bps = 2500000000;
	b.loss = 0.01;
	b.flags = RXBNECK_RATE_BETWEEN_PAUSES;
	l.epoch_ms = 100;
	start(&h, &l);
	obeys = raw_active_as(&h, RXBNECK_MINOR_BETWEEN_PAUSES,
			      RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	rate_only = raw_active_as(&h, RXBNECK_MINOR_BETWEEN_PAUSES, RXBNECK_SUB_RATE);
	old = raw_active_as(&h, 0, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);

	/* No schedule yet: the plain rate for everyone. */
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, 3);
	expect_rate(obeys, 1000000000, false);
	expect_rate(rate_only, 1000000000, false);
	expect_rate(old, 1000000000, false);

	/* A schedule (until replaced): the rate between pauses follows it. */
	assert_int_equal(publish_pause(&h, 0, 4, false), 2);
	expect_pause(obeys, false);
	expect_rate(obeys, 2500000000, true);
	expect_pause(old, false);
	expect_nothing(old);		/* minor 0: the plain rate it has */
	expect_nothing(rate_only);

	/* CANCEL: the plain rate right after it. */
	assert_int_equal(publish_pause(&h, 0, 5, true), 2);
	expect_pause(obeys, true);
	expect_rate(obeys, 1000000000, false);
	expect_pause(old, true);
	expect_nothing(old);

	/* The RATE-only sender takes PAUSE: plain until its first schedule. */
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_SUBSCRIBE;
	m.u.subscribe.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE;
	sendsrv_test_send(rate_only, &m, 2);
	expect_nothing(rate_only);
	assert_int_equal(publish_pause(&h, 0, 6, false), 3);
	expect_pause(rate_only, false);
	expect_rate(rate_only, 2500000000, true);
	expect_pause(obeys, false);
	expect_rate(obeys, 2500000000, true);
	expect_pause(old, false);

	/* Refused: a between rate without its flag, or for another port. */
	b.flags = 0;
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, -EINVAL);
	b.flags = RXBNECK_RATE_BETWEEN_PAUSES;
	b.port = FLOW + 1;
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, -EINVAL);
	close(obeys);
	close(rate_only);
	close(old);
	finish(&h);
}

/*
 * A schedule that runs out: 5 windows, the last over 42 ms after it was
 * sent, in force one epoch (100 ms) longer. Refreshed rates keep the flag
 * until then, and lose it at the first publish after.
 */
static void test_between_pauses_expire(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 1000000000, .loss = 0.3,
				  .epoch = 4, .confidence = 900 };
	struct rxbneck_rate b = r;
	int obeys, old, n;

	(void)state;
	b.rate_bps = 2500000000;
	b.flags = RXBNECK_RATE_BETWEEN_PAUSES;
	l.epoch_ms = 100;
	start(&h, &l);
	obeys = raw_active_as(&h, RXBNECK_MINOR_BETWEEN_PAUSES,
			      RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	old = raw_active_as(&h, 0, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, 2);
	expect_rate(obeys, 1000000000, false);
	expect_rate(old, 1000000000, false);
	assert_int_equal(publish_pause(&h, 5, 7, false), 2);
	expect_pause(obeys, false);
	expect_rate(obeys, 2500000000, true);
	expect_pause(old, false);
	r.epoch = b.epoch = 20;
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, 2);		/* the refresh (10 epochs) */
	expect_rate(obeys, 2500000000, true);
	expect_rate(old, 1000000000, false);
	usleep(160000);
	r.epoch = b.epoch = 21;
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, 1);
	expect_rate(obeys, 1000000000, false);
	expect_nothing(old);
	close(obeys);
	close(old);
	finish(&h);
}

static void test_allow_list_rejects(void **state)
{
	struct harness h;
	struct client_seen s = { 0 };
	struct sendsrv_limits l = limits();
	struct rxbneck_client *c;

	(void)state;
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/8", &l.allow[0], NULL), 0);
	l.n_allow = 1;
	start(&h, &l);
	c = lib_client(&h, &s, FLOW, 0);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_EREMOTE);
	assert_int_equal(rxbneck_client_remote_error(c), RXBNECK_ERR_NOT_ALLOWED);
	/* The same seen by a raw socket: ERROR first, then a clean EOF. */
	{
		int fd = raw_connect(&h, 0);

		expect_error(fd, RXBNECK_ERR_NOT_ALLOWED, 0);
		close(fd);
	}
	assert_int_equal(stats(&h).rejected_allow, 2);
	assert_int_equal(stats(&h).errors_sent[RXBNECK_ERR_NOT_ALLOWED], 2);
	assert_int_equal(HGET(&h, seen.hellos), 0);
	rxbneck_client_close(c);
	finish(&h);
}

static void test_refused_hello(void **state)
{
	struct harness h;
	struct client_seen s = { 0 };
	struct sendsrv_limits l = limits();
	struct rxbneck_client *c;

	(void)state;
	start(&h, &l);
	LOCKED(&h, h.refuse_port = 4444);
	c = lib_client(&h, &s, 4444, 0);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_EREMOTE);
	assert_int_equal(rxbneck_client_remote_error(c), RXBNECK_ERR_REFUSED);
	assert_non_null(strstr(rxbneck_client_errmsg(c), "4444"));
	/* Refused: no goodbye owed, nothing left behind. */
	WAIT_FOR(stats(&h).conns_closing == 0);
	assert_int_equal(HGET(&h, seen.goodbyes), 0);
	assert_int_equal(stats(&h).conns_active, 0);
	rxbneck_client_close(c);
	finish(&h);
}

static void test_hello_and_idle_timeouts(void **state)
{
	struct harness h;
	struct client_seen s = { 0 };
	struct sendsrv_limits l = limits();
	struct rxbneck_client *c;
	uint32_t idle_timeouts = 1;
	uint64_t t0, last_ping_ns;
	int fd;

	(void)state;
	l.hello_timeout_ns = 200 * MS;
	l.idle_timeout_ns = 300 * MS;
	start(&h, &l);

	/* Silent after connecting: HELLO_TIMEOUT. */
	t0 = rxb_mono_ns();
	fd = raw_connect(&h, 0);
	expect_error(fd, RXBNECK_ERR_HELLO_TIMEOUT, 0);
	assert_true(rxb_mono_ns() - t0 >= 190 * MS);
	close(fd);

	/* Silent after HELLO: IDLE_TIMEOUT, and on_goodbye says so. */
	fd = raw_active(&h, 0, 0);
	t0 = rxb_mono_ns();
	expect_error(fd, RXBNECK_ERR_IDLE_TIMEOUT, 0);
	assert_true(rxb_mono_ns() - t0 >= 250 * MS);
	close(fd);
	WAIT_FOR(HGET(&h, seen.goodbyes) == 1);
	assert_int_equal(HGET(&h, seen.last_why), RXBNECK_ERR_IDLE_TIMEOUT);

	/*
	 * A PING keeps the connection: a raw sender pinging every 100 ms. A
	 * host that stops this process for longer than the idle timeout
	 * between two pings (a virtual machine whose CPU is stolen) makes it
	 * an idle sender: then the IDLE_TIMEOUT is right and the rest is not
	 * checked.
	 */
	fd = raw_active(&h, 0, 0);
	last_ping_ns = rxb_mono_ns();
	for (int i = 0; i < 8; i++) {
		struct rxbp_msg m = { .type = RXBNECK_T_PING };
		uint64_t gap_ns;

		usleep(100000);
		gap_ns = rxb_mono_ns() - last_ping_ns;
		m.u.ping.token = (uint64_t)i;
		sendsrv_test_send(fd, &m, (uint32_t)i + 2);
		last_ping_ns = rxb_mono_ns();
		assert_int_equal(frame_recv(fd, &m, 1000), 0);
		if (m.type == RXBNECK_T_ERROR && gap_ns >= l.idle_timeout_ns) {
			print_message("  ping %d came %.0f ms after the last: stalled host, "
				      "idle timeout not checked further\n", i, gap_ns / 1e6);
			idle_timeouts++;
			break;
		}
		assert_int_equal(m.type, RXBNECK_T_PONG);
		assert_int_equal(m.u.ping.token, (uint64_t)i);
	}
	close(fd);

	/* librxbneck's own keepalive does the same. */
	c = lib_connected(&h, &s, 0);
	t0 = rxb_mono_ns();
	while (rxb_mono_ns() - t0 < 1000 * MS)
		assert_true(rxbneck_client_wait(c, 100) >= 0);	/* PONGs count */
	assert_true(rxbneck_client_fd(c) >= 0);
	rxbneck_client_close(c);
	assert_int_equal(stats(&h).errors_sent[RXBNECK_ERR_IDLE_TIMEOUT], idle_timeouts);
	finish(&h);
}

static void test_connection_cap(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	int fds[3], extra, again;

	(void)state;
	l.max_conns = 3;
	start(&h, &l);
	fds[0] = raw_active(&h, 0, 0);
	fds[1] = raw_active(&h, 0, 0);
	fds[2] = raw_connect(&h, 0);	/* waiting for HELLO counts too */
	WAIT_FOR(stats(&h).conns_hello == 1);
	extra = raw_connect(&h, 0);
	expect_error(extra, RXBNECK_ERR_TOO_MANY, 0);
	close(extra);
	assert_int_equal(stats(&h).rejected_full, 1);

	close(fds[0]);
	WAIT_FOR(stats(&h).conns_active == 1);
	again = raw_connect(&h, 0);
	{
		struct rxbp_msg m = hello_msg(FLOW, 0);

		sendsrv_test_send(again, &m, 1);
		assert_int_equal(frame_recv(again, &m, 3000), 0);
		assert_int_equal(m.type, RXBNECK_T_HELLO_ACK);
	}
	close(again);
	close(fds[1]);
	close(fds[2]);
	WAIT_FOR(stats(&h).conns_active + stats(&h).conns_hello == 0);
	finish(&h);
}

static void test_slow_reader_dropped(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	struct sendsrv_stats st;
	int fd, pushed = 0;

	(void)state;
	l.max_out_bytes = 4096;
	l.rate_change_frac = 0;		/* push every new value */
	start(&h, &l);
	fd = raw_active(&h, 0, 4096);	/* small receive buffer, never read */
	for (uint64_t e = 1; e < 200000; e++) {
		int n = publish_rate(&h, 1000000000 + (e % 2) * 1000, e, 0);

		if (n <= 0)
			break;
		pushed++;
	}
	st = stats(&h);
	assert_int_equal(st.errors_sent[RXBNECK_ERR_OUTPUT_OVERFLOW], 1);
	assert_int_equal(st.conns_active, 0);
	assert_true(pushed > 4096 / 56);
	assert_int_equal(HGET(&h, seen.goodbyes), 1);
	assert_int_equal(HGET(&h, seen.last_why), RXBNECK_ERR_OUTPUT_OVERFLOW);
	assert_true(st.mem_bytes <= st.mem_bound_bytes);
	close(fd);
	WAIT_FOR(stats(&h).conns_closing == 0);
	finish(&h);
}

/* Send @bytes on a fresh connection (after HELLO if @hello); expect @code. */
static void bad_input(struct harness *h, bool hello, const void *bytes, size_t n,
		      int code, uint32_t ref_seq)
{
	int fd = hello ? raw_active(h, 0, 0) : raw_connect(h, 0);

	raw_write(fd, bytes, n);
	expect_error(fd, code, ref_seq);
	close(fd);
}

static void test_bad_frames(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	uint8_t buf[RXBP_ENCODE_MAX];
	struct rxbp_msg m;
	size_t n;

	(void)state;
	start(&h, &l);
	bad_input(&h, false, "GET / HTTP/1.0\r\n\r\n", 18, RXBNECK_ERR_BAD_MAGIC, 0);
	bad_input(&h, true, "\x16\x03\x01", 3, RXBNECK_ERR_BAD_MAGIC, 0);

	/* Header-level: version, too large (no payload needed), too short. */
	m = hello_msg(FLOW, 0);
	m.seq = 7;
	n = rxbp_encode(buf, sizeof(buf), &m);
	buf[4] = 9;
	bad_input(&h, false, buf, n, RXBNECK_ERR_BAD_VERSION, 7);
	buf[4] = 1;
	buf[8] = 0;
	buf[9] = 1;		/* length 65536 + 61 > 4096 */
	bad_input(&h, false, buf, RXBNECK_HDR_BYTES, RXBNECK_ERR_TOO_LARGE, 7);
	buf[8] = buf[9] = buf[10] = 0;
	buf[11] = 15;
	bad_input(&h, false, buf, RXBNECK_HDR_BYTES, RXBNECK_ERR_MALFORMED, 7);

	/* Payload-level. */
	n = rxbp_encode(buf, sizeof(buf), &m);
	buf[RXBNECK_HDR_BYTES + 4] = 99;	/* flow_proto */
	bad_input(&h, false, buf, n, RXBNECK_ERR_BAD_VALUE, 7);
	n = rxbp_encode(buf, sizeof(buf), &m);
	buf[11] = RXBNECK_HDR_BYTES + 20;	/* fixed part cut short */
	bad_input(&h, false, buf, RXBNECK_HDR_BYTES + 20, RXBNECK_ERR_MALFORMED, 7);
	n = rxbp_encode(buf, sizeof(buf), &m);
	buf[5] = 0x42;
	bad_input(&h, false, buf, n, RXBNECK_ERR_UNKNOWN_TYPE, 7);

	/* State and direction. */
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_PING;
	m.seq = 3;
	n = rxbp_encode(buf, sizeof(buf), &m);
	bad_input(&h, false, buf, n, RXBNECK_ERR_UNEXPECTED, 3);	/* before HELLO */
	m = hello_msg(FLOW, 0);
	m.seq = 2;
	n = rxbp_encode(buf, sizeof(buf), &m);
	bad_input(&h, true, buf, n, RXBNECK_ERR_UNEXPECTED, 2);	/* HELLO twice */
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_RATE;
	m.seq = 2;
	m.u.rate.port = 1;
	n = rxbp_encode(buf, sizeof(buf), &m);
	bad_input(&h, true, buf, n, RXBNECK_ERR_UNEXPECTED, 2);	/* D->S type */
	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_STREAMS_SAMPLE;
	m.seq = 2;
	m.u.sample.port = 1;
	m.u.sample.streams = 1;
	m.u.sample.throughput_bps = 1000000;
	m.u.sample.duration_us = 1000000;
	n = rxbp_encode(buf, sizeof(buf), &m);
	bad_input(&h, true, buf, n, RXBNECK_ERR_UNSUPPORTED, 2);	/* not accepted */

	/* After an ERROR the server still reads and discards: no reset. */
	{
		int fd = raw_connect(&h, 0);
		char junk[8192];

		memset(junk, 'x', sizeof(junk));
		raw_write(fd, junk, sizeof(junk));
		expect_error(fd, RXBNECK_ERR_BAD_MAGIC, 0);
		raw_write(fd, junk, sizeof(junk));
		close(fd);
	}
	WAIT_FOR(stats(&h).conns_closing == 0);
	assert_int_equal(stats(&h).conns_active + stats(&h).conns_hello, 0);
	assert_int_equal(HGET(&h, seen.goodbyes), 4);	/* the hello'd ones */
	finish(&h);
}

static void test_frames_split_and_batched(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	uint8_t buf[4 * RXBP_ENCODE_MAX];
	size_t n = 0;
	struct rxbp_msg m = hello_msg(FLOW, 0);
	int fd;

	(void)state;
	start(&h, &l);
	fd = raw_connect(&h, 0);
	/* HELLO + 2 PINGs in one write, then dribbled byte by byte. */
	m.seq = 1;
	n += rxbp_encode(buf + n, sizeof(buf) - n, &m);
	for (uint32_t i = 0; i < 2; i++) {
		memset(&m, 0, sizeof(m));
		m.type = RXBNECK_T_PING;
		m.seq = 2 + i;
		m.u.ping.token = 100 + i;
		n += rxbp_encode(buf + n, sizeof(buf) - n, &m);
	}
	for (size_t i = 0; i < n; i++) {
		raw_write(fd, buf + i, 1);
		if (i % 7 == 0)
			usleep(200);
	}
	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.type, RXBNECK_T_HELLO_ACK);
	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.u.ping.token, 100);
	assert_int_equal(frame_recv(fd, &m, 3000), 0);
	assert_int_equal(m.u.ping.token, 101);
	assert_int_equal(m.seq, 3);
	close(fd);
	finish(&h);
}

static void test_finish_says_bye(void **state)
{
	struct harness h;
	struct sendsrv_limits l = limits();
	struct rxbp_msg m;
	int fd;

	(void)state;
	start(&h, &l);
	fd = raw_active(&h, 0, 0);
	WAIT_FOR(stats(&h).conns_active == 1);
	sendsrv_thread_stop(&h.t);
	sendsrv_finish(h.t.s);
	assert_int_equal(h.seen.goodbyes, 1);
	assert_int_equal(h.seen.last_why, SENDSRV_GONE_SHUTDOWN);
	assert_int_equal(frame_recv(fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_BYE);
	assert_int_equal(m.u.bye.reason, RXBNECK_BYE_SHUTDOWN);
	expect_eof(fd);
	close(fd);
	close(h.t.epfd);
	pthread_mutex_destroy(&h.t.mu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cidr),
		cmocka_unit_test(test_init_validation),
		cmocka_unit_test(test_listen_ipv6_and_dual_stack),
		cmocka_unit_test(test_hello_ack_rate_and_snapshot),
		cmocka_unit_test(test_change_fraction_and_refresh),
		cmocka_unit_test(test_late_subscriber_and_hello_publish),
		cmocka_unit_test(test_pause_delivery_and_rtt_filter),
		cmocka_unit_test(test_rate_between_pauses),
		cmocka_unit_test(test_between_pauses_expire),
		cmocka_unit_test(test_allow_list_rejects),
		cmocka_unit_test(test_refused_hello),
		cmocka_unit_test(test_hello_and_idle_timeouts),
		cmocka_unit_test(test_connection_cap),
		cmocka_unit_test(test_slow_reader_dropped),
		cmocka_unit_test(test_bad_frames),
		cmocka_unit_test(test_frames_split_and_batched),
		cmocka_unit_test(test_finish_says_bye),
	};

	rxb_log_set_level(RXB_LOG_WARNING);
	return cmocka_run_group_tests_name("sendsrv", tests, NULL, NULL);
}
