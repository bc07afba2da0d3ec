// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test for sendsrv_update_limits(), what rxbneckd's reload uses: every
 * limit takes effect, each the way sendsrv.h promises for the senders
 * already connected (none is dropped for it) and for those that come
 * after. Raw TCP on loopback, the server pumped by the test's own epoll
 * loop, on a clock the test can move forward.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tests/unit/sendsrv_test.h"
#include "proto/codec.h"

#define FLOW 9000

/* epfd first: tests/unit/sendsrv_test.h */
struct h {
	int epfd;
	struct sendsrv *s;
	uint16_t port;
	uint64_t skew_ns;	/* added to CLOCK_MONOTONIC: time travel */
	int goodbyes, last_why;
};

static uint64_t h_now(void *ctx)
{
	return rxb_mono_ns() + ((struct h *)ctx)->skew_ns;
}

static void h_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	struct h *h = ctx;

	(void)p;
	h->goodbyes++;
	h->last_why = why;
}

static void pump(struct h *h, int ms)
{
	uint64_t end = rxb_mono_ns() + (uint64_t)ms * RXB_NSEC_PER_MSEC;

	do {
		struct epoll_event ev[16];
		int n = epoll_wait(h->epfd, ev, 16, 2);

		for (int i = 0; i < n; i++)
			sendsrv_handle(h->s, ev[i].data.fd, ev[i].events);
		sendsrv_tick(h->s, h_now(h));
	} while (rxb_mono_ns() < end);
}

static void start(struct h *h, const struct sendsrv_limits *lim)
{
	struct sendsrv_ops ops = { .ctx = h, .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod, .fd_del = sendsrv_test_fd_del,
				   .now_ns = h_now, .on_goodbye = h_goodbye };

	memset(h, 0, sizeof(*h));
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(h->epfd >= 0);
	assert_int_equal(sendsrv_init(&h->s, lim, &ops), 0);
	assert_int_equal(sendsrv_listen(h->s, "127.0.0.1", 0, &h->port), 0);
}

static void finish(struct h *h)
{
	sendsrv_finish(h->s);
	close(h->epfd);
}

static int dial(struct h *h, int rcvbuf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(h->port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	if (rcvbuf)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
					    sizeof(rcvbuf)), 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void hello(int fd, uint32_t seq)
{
	struct rxbp_msg m = { .type = RXBNECK_T_HELLO };

	m.u.hello.flow_port = FLOW;
	m.u.hello.flow_proto = 17;
	m.u.hello.subscribe = RXBNECK_SUB_RATE;
	m.u.hello.payload_bytes = 1468;
	sendsrv_test_send(fd, &m, seq);
}

/* The next frame from @fd (pumping the server meanwhile); its type, -1 at EOF. */
static int next_frame(struct h *h, int fd, struct rxbp_msg *m)
{
	uint8_t buf[4096];
	size_t have = 0;

	for (int i = 0; i < 500; i++) {
		int len = rxbp_frame_check(buf, have, sizeof(buf), NULL);
		ssize_t r;

		if (len > 0) {
			assert_int_equal((size_t)len, have);	/* one frame at a time here */
			assert_int_equal(rxbp_decode(buf, (size_t)len, m), 0);
			return m->type;
		}
		assert_int_equal(len, 0);
		pump(h, 2);
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
	return -2;
}

/* A connected sender past HELLO; the HELLO_ACK it got in *ack. */
static int active(struct h *h, struct rxbp_msg *ack)
{
	int fd = dial(h, 0);

	hello(fd, 1);
	assert_int_equal(next_frame(h, fd, ack), RXBNECK_T_HELLO_ACK);
	return fd;
}

static void expect_error(struct h *h, int fd, int code)
{
	struct rxbp_msg m;

	assert_int_equal(next_frame(h, fd, &m), RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, code);
}

/* A PING is answered: the connection is alive and served. */
static void expect_alive(struct h *h, int fd, uint32_t seq)
{
	struct rxbp_msg m = { .type = RXBNECK_T_PING };

	m.u.ping.token = seq;
	sendsrv_test_send(fd, &m, seq);
	assert_int_equal(next_frame(h, fd, &m), RXBNECK_T_PONG);
	assert_true(m.u.ping.token == seq);
}

static void reload(struct h *h, const struct sendsrv_limits *lim)
{
	struct sendsrv_limits now;

	assert_int_equal(sendsrv_update_limits(h->s, lim), 0);
	sendsrv_current_limits(h->s, &now);
	assert_memory_equal(&now, lim, sizeof(now));
}

/* The RATE push rule, the epoch length and the allow-list. */
static void test_rate_epoch_allow(void **state)
{
	struct sendsrv_limits lim;
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 1000000000, .epoch = 1 };
	struct rxbp_msg m;
	struct h h;
	int a, b;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.rate_change_frac = 0.5;
	lim.rate_refresh_epochs = 0;
	start(&h, &lim);
	a = active(&h, &m);
	assert_int_equal(m.u.hello_ack.epoch_ms, 1000);
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);
	assert_int_equal(next_frame(&h, a, &m), RXBNECK_T_RATE);
	/* A 10 % move is below the configured 50 %: not sent. */
	r.rate_bps = 1100000000;
	r.epoch = 2;
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 0);

	/* Reload: 5 % fraction, 250 ms epochs, allow-list without loopback. */
	lim.rate_change_frac = 0.05;
	lim.epoch_ms = 250;
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/8", &lim.allow[0], NULL), 0);
	lim.n_allow = 1;
	reload(&h, &lim);
	r.rate_bps = 1200000000;
	r.epoch = 3;
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);	/* 20 % >= 5 % */
	assert_int_equal(next_frame(&h, a, &m), RXBNECK_T_RATE);
	assert_int_equal(m.u.rate.rate_bps, 1200000000);
	/* A new connection from loopback is now refused; the old one stays. */
	b = dial(&h, 0);
	expect_error(&h, b, RXBNECK_ERR_NOT_ALLOWED);
	close(b);
	expect_alive(&h, a, 2);
	/* Loopback again, and a new sender sees the new epoch length. */
	assert_int_equal(sendsrv_cidr_parse("127.0.0.0/8", &lim.allow[0], NULL), 0);
	reload(&h, &lim);
	b = active(&h, &m);
	assert_int_equal(m.u.hello_ack.epoch_ms, 250);
	/* Bad limits are refused whole. */
	lim.rate_change_frac = 2;
	lim.epoch_ms = 100;
	assert_int_equal(sendsrv_update_limits(h.s, &lim), -EINVAL);
	lim.rate_change_frac = 0.05;
	lim.epoch_ms = 250;
	{
		struct sendsrv_limits now;

		sendsrv_current_limits(h.s, &now);
		assert_memory_equal(&now, &lim, sizeof(now));
	}
	close(a);
	close(b);
	pump(&h, 10);
	finish(&h);
}

/* A lowered max_conns refuses new senders until under it; nobody is dropped. */
static void test_max_conns(void **state)
{
	struct sendsrv_limits lim;
	struct sendsrv_stats st;
	struct rxbp_msg m;
	struct h h;
	int a, b, c, d;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.max_conns = 3;
	start(&h, &lim);
	a = active(&h, &m);
	b = active(&h, &m);
	lim.max_conns = 1;
	reload(&h, &lim);
	c = dial(&h, 0);
	expect_error(&h, c, RXBNECK_ERR_TOO_MANY);
	close(c);
	expect_alive(&h, a, 2);
	expect_alive(&h, b, 2);
	/* Still one too many after b leaves; a place after a leaves too. */
	close(b);
	pump(&h, 20);
	c = dial(&h, 0);
	expect_error(&h, c, RXBNECK_ERR_TOO_MANY);
	close(c);
	close(a);
	pump(&h, 20);
	c = active(&h, &m);
	/* Raised beyond the first limit: more slots are made. */
	lim.max_conns = 5;
	reload(&h, &lim);
	a = active(&h, &m);
	b = active(&h, &m);
	d = active(&h, &m);
	sendsrv_stats(h.s, &st);
	assert_int_equal(st.conns_active, 4);
	assert_int_equal(st.rejected_full, 2);
	assert_true(st.mem_bytes <= st.mem_bound_bytes);
	close(a);
	close(b);
	close(c);
	close(d);
	pump(&h, 20);
	finish(&h);
}

/*
 * max_frame_bytes and the idle timeout are announced in HELLO_ACK: an open
 * connection keeps what it was told, a new one gets the new values. A frame
 * header saying 1000 bytes tells which cap applies: within 4096 it is read
 * whole and refused for its unknown type, above 512 it is TOO_LARGE at once.
 */
static void test_announced_limits(void **state)
{
	static const uint8_t big[16] = { 'R', 'X', 'B', 'N', 1, 0x7e, 0, 0,
					 0, 0, 0x03, 0xe8, 0, 0, 0, 9 };
	uint8_t body[1000 - sizeof(big)];
	struct sendsrv_limits lim;
	struct rxbp_msg m;
	struct h h;
	int a, b, c;

	(void)state;
	memset(body, 0, sizeof(body));
	sendsrv_limits_default(&lim);
	start(&h, &lim);
	a = active(&h, &m);
	assert_int_equal(m.u.hello_ack.max_frame_bytes, 4096);
	assert_int_equal(m.u.hello_ack.idle_timeout_ms, 60000);
	c = active(&h, &m);

	lim.max_frame_bytes = 512;
	lim.idle_timeout_ns = 2 * RXB_NSEC_PER_SEC;
	lim.hello_timeout_ns = RXB_NSEC_PER_SEC;
	reload(&h, &lim);
	b = active(&h, &m);
	assert_int_equal(m.u.hello_ack.max_frame_bytes, 512);
	assert_int_equal(m.u.hello_ack.idle_timeout_ms, 2000);

	/* 1000 bytes: too large for b, allowed to a (then UNKNOWN_TYPE). */
	assert_int_equal(send(b, big, sizeof(big), MSG_NOSIGNAL), (ssize_t)sizeof(big));
	expect_error(&h, b, RXBNECK_ERR_TOO_LARGE);
	close(b);
	assert_int_equal(send(a, big, sizeof(big), MSG_NOSIGNAL), (ssize_t)sizeof(big));
	assert_int_equal(send(a, body, sizeof(body), MSG_NOSIGNAL), (ssize_t)sizeof(body));
	expect_error(&h, a, RXBNECK_ERR_UNKNOWN_TYPE);
	close(a);

	/* 3 s of silence: past a new sender's 2 s, within c's 60 s. */
	b = active(&h, &m);
	h.skew_ns += 3 * RXB_NSEC_PER_SEC;
	expect_error(&h, b, RXBNECK_ERR_IDLE_TIMEOUT);
	close(b);
	assert_int_equal(h.last_why, RXBNECK_ERR_IDLE_TIMEOUT);
	expect_alive(&h, c, 2);
	/* ... and c times out 60 s after its last frame, as it was told. */
	h.skew_ns += 59 * RXB_NSEC_PER_SEC;
	pump(&h, 5);
	expect_alive(&h, c, 3);
	h.skew_ns += 61 * RXB_NSEC_PER_SEC;
	expect_error(&h, c, RXBNECK_ERR_IDLE_TIMEOUT);
	close(c);
	pump(&h, 10);
	finish(&h);
}

/* hello_timeout_ns counts from the accept, for connections already waiting. */
static void test_hello_timeout(void **state)
{
	struct sendsrv_limits lim;
	struct rxbp_msg m;
	struct h h;
	int a;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.hello_timeout_ns = 60 * RXB_NSEC_PER_SEC;
	lim.idle_timeout_ns = 0;
	start(&h, &lim);
	a = dial(&h, 0);
	pump(&h, 10);
	h.skew_ns += 10 * RXB_NSEC_PER_SEC;
	pump(&h, 5);
	lim.hello_timeout_ns = 5 * RXB_NSEC_PER_SEC;	/* already 10 s since the accept */
	reload(&h, &lim);
	assert_int_equal(next_frame(&h, a, &m), RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, RXBNECK_ERR_HELLO_TIMEOUT);
	assert_non_null(strstr(m.u.error.message, "5000 ms"));
	close(a);
	pump(&h, 10);
	finish(&h);
}

static void most_queued(void *arg, const struct sendsrv_peer *p)
{
	uint32_t *q = arg;

	if (p->out_queued_bytes > *q)
		*q = p->out_queued_bytes;
}

/* A lowered output cap applies at once: a sender with more queued is dropped. */
static void test_output_cap(void **state)
{
	struct sendsrv_limits lim;
	struct sendsrv_stats st;
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 1000000000 };
	uint8_t sink[4096];
	struct rxbp_msg m;
	uint32_t queued = 0;
	struct h h;
	int a, fd;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.max_out_bytes = 1 << 20;
	lim.rate_change_frac = 0;	/* push every new value */
	start(&h, &lim);
	fd = dial(&h, 4096);		/* a small receive buffer, never read */
	hello(fd, 1);
	a = active(&h, &m);		/* one that reads */
	/* Publish until 2 KiB wait in sendsrv for the one that does not read. */
	for (r.epoch = 1; r.epoch < 100000 && queued <= 2048; r.epoch++) {
		r.rate_bps ^= 1000;
		assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 2);
		while (recv(a, sink, sizeof(sink), MSG_DONTWAIT) > 0)
			;
		sendsrv_foreach_sender(h.s, most_queued, &queued);
	}
	assert_true(queued > 2048);
	lim.max_out_bytes = 1024;
	reload(&h, &lim);
	r.rate_bps ^= 1000;
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);	/* only a */
	sendsrv_stats(h.s, &st);
	assert_int_equal(st.errors_sent[RXBNECK_ERR_OUTPUT_OVERFLOW], 1);
	assert_int_equal(h.last_why, RXBNECK_ERR_OUTPUT_OVERFLOW);
	assert_int_equal(st.conns_active, 1);
	close(fd);
	close(a);
	pump(&h, 10);
	finish(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_epoch_allow),
		cmocka_unit_test(test_max_conns),
		cmocka_unit_test(test_announced_limits),
		cmocka_unit_test(test_hello_timeout),
		cmocka_unit_test(test_output_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
