// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * BUFFER frames from sendsrv (PROTOCOL.md §5.9, §6.4): granted only to
 * senders of minor >= 2 that subscribe while the daemon adapts buffers;
 * pushed at HELLO when known, at SUBSCRIBE when newly taken, and then by
 * the rule (first, flags changed, size moved by the change fraction).
 * Raw TCP on loopback, the server pumped by the test's own epoll loop.
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
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tests/unit/sendsrv_test.h"
#include "proto/codec.h"
#include "tests/unit/unit_main.h"

#define FLOW 9000

static void start(struct pump *h, bool advice)
{
	struct sendsrv_limits lim;

	sendsrv_limits_default(&lim);
	lim.buffer_advice = advice;
	pump_start(h, &lim);
}

/* Every whole frame that arrives on @fd within @ms, into @m (at most 8). */
static int frames(struct pump *h, int fd, struct rxbp_msg *m, int ms)
{
	static uint8_t buf[1 << 14];
	size_t have = 0;
	int n = 0;

	pump_run(h, ms);
	for (;;) {
		ssize_t r = recv(fd, buf + have, sizeof(buf) - have, MSG_DONTWAIT);

		if (r <= 0)
			break;
		have += (size_t)r;
	}
	for (size_t off = 0; off < have && n < 8;) {
		int len = rxbp_frame_check(buf + off, have - off, sizeof(buf), NULL);

		assert_true(len > 0);
		assert_int_equal(rxbp_decode(buf + off, (size_t)len, &m[n]), 0);
		n++;
		off += (size_t)len;
	}
	return n;
}

/* A sender of @minor for FLOW subscribing to @subs; HELLO_ACK's grant. */
static int sender(struct pump *h, uint16_t minor, uint16_t subs, uint16_t *granted,
		  struct rxbp_msg *after, int *nafter)
{
	struct rxbp_msg m = pump_hello_msg(FLOW), got[8];
	int fd, n;

	m.u.hello.minor = minor;
	m.u.hello.subscribe = subs;
	m.u.hello.payload_bytes = 8192;
	fd = pump_send_hello(h, &m);
	n = frames(h, fd, got, 50);
	assert_true(n >= 1);
	assert_int_equal(got[0].type, RXBNECK_T_HELLO_ACK);
	assert_int_equal(got[0].u.hello_ack.minor, RXBNECK_MINOR);
	*granted = got[0].u.hello_ack.granted;
	*nafter = n - 1;
	for (int i = 1; i < n; i++)
		after[i - 1] = got[i];
	return fd;
}

static struct rxbneck_buffer advice(uint64_t bytes, uint16_t flags)
{
	struct rxbneck_buffer b = { .port = FLOW, .flags = flags, .pkt_bytes = 16640,
				    .rcvbuf_bytes = bytes, .current_bytes = 1048576,
				    .epoch = 7 };

	return b;
}

static void test_grant_by_minor(void **state)
{
	struct pump h;
	struct rxbp_msg after[8];
	uint16_t g;
	int na, new_fd, old_fd, rate_fd, n;
	struct rxbneck_buffer b = advice(4 << 20, RXBNECK_BUFFER_APPLIED);
	struct rxbp_msg got[8];

	(void)state;
	start(&h, true);
	new_fd = sender(&h, RXBNECK_MINOR_BUFFER, RXBNECK_SUB_RATE | RXBNECK_SUB_BUFFER,
			&g, after, &na);
	assert_int_equal(g, RXBNECK_SUB_RATE | RXBNECK_SUB_BUFFER);
	/* told BUFFER was reserved: not granted */
	old_fd = sender(&h, RXBNECK_MINOR_BETWEEN_PAUSES, RXBNECK_SUB_BUFFER, &g, after, &na);
	assert_int_equal(g, 0);
	rate_fd = sender(&h, RXBNECK_MINOR_BUFFER, RXBNECK_SUB_RATE, &g, after, &na);
	assert_int_equal(g, RXBNECK_SUB_RATE);

	assert_int_equal(sendsrv_publish_buffer(h.s, &b), 1);
	n = frames(&h, new_fd, got, 50);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].type, RXBNECK_T_BUFFER);
	assert_memory_equal(&got[0].u.buffer, &b, sizeof(b));
	assert_int_equal(frames(&h, old_fd, got, 10), 0);
	assert_int_equal(frames(&h, rate_fd, got, 10), 0);

	/* The rule: 3 % more is not due (5 % fraction), 6 % is; flags always. */
	b = advice((4 << 20) + (4 << 20) / 100 * 3, RXBNECK_BUFFER_APPLIED);
	assert_int_equal(sendsrv_publish_buffer(h.s, &b), 0);
	b = advice((4 << 20) + (4 << 20) / 100 * 6, RXBNECK_BUFFER_APPLIED);
	assert_int_equal(sendsrv_publish_buffer(h.s, &b), 1);
	b.flags |= RXBNECK_BUFFER_LIMITED;
	assert_int_equal(sendsrv_publish_buffer(h.s, &b), 1);
	assert_int_equal(frames(&h, new_fd, got, 50), 2);
	assert_true(got[1].u.buffer.flags & RXBNECK_BUFFER_LIMITED);

	/* A new subscriber gets the kept advice with its HELLO_ACK... */
	close(sender(&h, RXBNECK_MINOR_BUFFER, RXBNECK_SUB_BUFFER, &g, after, &na));
	assert_int_equal(na, 1);
	assert_int_equal(after[0].type, RXBNECK_T_BUFFER);
	assert_int_equal(after[0].u.buffer.rcvbuf_bytes, b.rcvbuf_bytes);
	/* ... and one taking BUFFER by SUBSCRIBE at once. */
	{
		struct rxbp_msg m = { .type = RXBNECK_T_SUBSCRIBE };

		m.u.subscribe.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_BUFFER;
		sendsrv_test_send(rate_fd, &m, 2);
		n = frames(&h, rate_fd, got, 50);
		assert_int_equal(n, 1);
		assert_int_equal(got[0].type, RXBNECK_T_BUFFER);
	}
	/* Invalid advice is refused. */
	b.port = 0;
	assert_int_equal(sendsrv_publish_buffer(h.s, &b), -EINVAL);
	b = advice(RXBNECK_RCVBUF_MAX + 2, 0);
	assert_int_equal(sendsrv_publish_buffer(h.s, &b), -EINVAL);
	{
		struct sendsrv_stats st;

		sendsrv_stats(h.s, &st);
		assert_int_equal(st.buffer_pushes, 5);
	}
	close(new_fd);
	close(old_fd);
	close(rate_fd);
	pump_finish(&h);
}

/* [buffer] off: nobody is granted BUFFER, whatever minor. */
static void test_off(void **state)
{
	struct pump h;
	struct rxbp_msg after[8];
	uint16_t g;
	int na, fd;

	(void)state;
	start(&h, false);
	fd = sender(&h, RXBNECK_MINOR_BUFFER, RXBNECK_SUB_RATE | RXBNECK_SUB_BUFFER, &g,
		    after, &na);
	assert_int_equal(g, RXBNECK_SUB_RATE);
	close(fd);
	pump_finish(&h);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_grant_by_minor),
	cmocka_unit_test(test_off),
)
