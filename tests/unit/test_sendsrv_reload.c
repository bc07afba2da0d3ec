// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test for sendsrv_update_limits(), what rxbneckd's reload uses: the
 * allow-list and the RATE push rule change for connections made after it,
 * connected senders stay, sizes and timeouts are not touched. Raw TCP on
 * loopback, the server pumped by the test's own epoll loop.
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
#include "proto/codec.h"

struct h {
	int epfd;
	struct sendsrv *s;
	uint16_t port;
};

static int h_add(void *ctx, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(((struct h *)ctx)->epfd, EPOLL_CTL_ADD, fd, &e) ? -errno : 0;
}

static int h_mod(void *ctx, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(((struct h *)ctx)->epfd, EPOLL_CTL_MOD, fd, &e) ? -errno : 0;
}

static void h_del(void *ctx, int fd)
{
	epoll_ctl(((struct h *)ctx)->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void pump(struct h *h, int ms)
{
	uint64_t end = rxb_mono_ns() + (uint64_t)ms * RXB_NSEC_PER_MSEC;

	do {
		struct epoll_event ev[16];
		int n = epoll_wait(h->epfd, ev, 16, 2);

		for (int i = 0; i < n; i++)
			sendsrv_handle(h->s, ev[i].data.fd, ev[i].events);
		sendsrv_tick(h->s, rxb_mono_ns());
	} while (rxb_mono_ns() < end);
}

static int dial(struct h *h)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(h->port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void hello(int fd, uint32_t seq)
{
	struct rxbp_msg m = { .type = RXBNECK_T_HELLO, .seq = seq };
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n;

	m.u.hello.flow_port = 9000;
	m.u.hello.flow_proto = 17;
	m.u.hello.subscribe = RXBNECK_SUB_RATE;
	m.u.hello.payload_bytes = 1468;
	n = rxbp_encode(buf, sizeof(buf), &m);
	assert_true(n > 0);
	assert_int_equal(send(fd, buf, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* The next frame from @fd (pumping the server meanwhile); its type. */
static int next_frame(struct h *h, int fd, struct rxbp_msg *m)
{
	static uint8_t buf[4096];
	static size_t have;
	static int buf_fd = -1;

	if (buf_fd != fd) {
		buf_fd = fd;
		have = 0;
	}
	for (int i = 0; i < 500; i++) {
		int len = rxbp_frame_check(buf, have, sizeof(buf), NULL);
		ssize_t r;

		if (len > 0) {
			assert_int_equal(rxbp_decode(buf, (size_t)len, m), 0);
			memmove(buf, buf + len, have - (size_t)len);
			have -= (size_t)len;
			return m->type;
		}
		assert_int_equal(len, 0);
		pump(h, 2);
		r = recv(fd, buf + have, sizeof(buf) - have, MSG_DONTWAIT);
		if (r == 0)
			return -1;
		if (r > 0)
			have += (size_t)r;
	}
	return -2;
}

static void test_update_limits(void **state)
{
	struct sendsrv_limits lim;
	struct sendsrv_ops ops = { .fd_add = h_add, .fd_mod = h_mod, .fd_del = h_del };
	struct rxbneck_rate r = { .port = 9000, .rate_bps = 1000000000, .epoch = 1 };
	struct rxbp_msg m;
	struct h h;
	int a, b;

	(void)state;
	h.epfd = epoll_create1(EPOLL_CLOEXEC);
	ops.ctx = &h;
	sendsrv_limits_default(&lim);
	lim.rate_change_frac = 0.5;
	lim.rate_refresh_epochs = 0;
	assert_int_equal(sendsrv_init(&h.s, &lim, &ops), 0);
	assert_int_equal(sendsrv_listen(h.s, "127.0.0.1", 0, &h.port), 0);

	a = dial(&h);
	hello(a, 1);
	assert_int_equal(next_frame(&h, a, &m), RXBNECK_T_HELLO_ACK);
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
	lim.max_conns = 1;		/* ignored: sizes need a new server */
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/8", &lim.allow[0], NULL), 0);
	lim.n_allow = 1;
	assert_int_equal(sendsrv_update_limits(h.s, &lim), 0);
	r.rate_bps = 1200000000;
	r.epoch = 3;
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);	/* 20 % >= 5 % */
	assert_int_equal(next_frame(&h, a, &m), RXBNECK_T_RATE);
	assert_int_equal(m.u.rate.rate_bps, 1200000000);
	/* A new connection from loopback is now refused. */
	b = dial(&h);
	assert_int_equal(next_frame(&h, b, &m), RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, RXBNECK_ERR_NOT_ALLOWED);
	close(b);
	/* Loopback again, and a new sender sees the new epoch length. */
	assert_int_equal(sendsrv_cidr_parse("127.0.0.0/8", &lim.allow[0], NULL), 0);
	assert_int_equal(sendsrv_update_limits(h.s, &lim), 0);
	b = dial(&h);
	hello(b, 1);
	assert_int_equal(next_frame(&h, b, &m), RXBNECK_T_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.epoch_ms, 250);
	/* Bad limits are refused whole. */
	lim.rate_change_frac = 2;
	assert_int_equal(sendsrv_update_limits(h.s, &lim), -EINVAL);
	close(a);
	close(b);
	pump(&h, 10);
	sendsrv_finish(h.s);
	close(h.epfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_update_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
