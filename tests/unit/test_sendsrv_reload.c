// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test for sendsrv_update_limits(), what rxbneckd's reload uses: every
 * limit takes effect, each the way sendsrv.h promises for the senders
 * already connected (only those a narrowed allow-list refuses are
 * dropped) and for those that come after. Raw TCP on loopback, the server
 * pumped by the test's own epoll loop (struct pump, sendsrv_test.h), on a
 * clock the test can move forward.
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
#include "tests/unit/unit_main.h"

#define FLOW 9000

static void reload(struct pump *h, const struct sendsrv_limits *lim)
{
	struct sendsrv_limits now;

	assert_int_equal(sendsrv_update_limits(h->s, lim), 0);
	sendsrv_current_limits(h->s, &now);
	assert_memory_equal(&now, lim, sizeof(now));
}

/* Stops the server once it has seen the test's connections close. */
static void stop(struct pump *h)
{
	pump_run(h, 20);
	pump_finish(h);
}

/* The RATE push rule, the epoch length and the allow-list. */
static void test_rate_epoch_allow(void **state)
{
	struct sendsrv_limits lim;
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 1000000000, .epoch = 1 };
	struct rxbp_msg m;
	struct pump h;
	int a, b;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.rate_change_frac = 0.5;
	lim.rate_refresh_epochs = 0;
	pump_start(&h, &lim);
	a = pump_active(&h, &m);
	assert_int_equal(m.u.hello_ack.epoch_ms, 1000);
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);
	assert_int_equal(pump_next_frame(&h, a, &m), RXBNECK_T_RATE);
	/* A 10 % move is below the configured 50 %: not sent. */
	r.rate_bps = 1100000000;
	r.epoch = 2;
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 0);

	/* Reload: 5 % fraction, 250 ms epochs, one more network allowed. */
	lim.rate_change_frac = 0.05;
	lim.epoch_ms = 250;
	assert_int_equal(sendsrv_cidr_parse("10.0.0.0/8", &lim.allow[2], NULL), 0);
	lim.n_allow = 3;
	reload(&h, &lim);
	r.rate_bps = 1200000000;
	r.epoch = 3;
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);	/* 20 % >= 5 % */
	assert_int_equal(pump_next_frame(&h, a, &m), RXBNECK_T_RATE);
	assert_int_equal(m.u.rate.rate_bps, 1200000000);
	/*
	 * An allow-list without loopback: the open connection is told why
	 * and closed, and a new one from loopback is refused.
	 */
	lim.allow[0] = lim.allow[2];
	lim.n_allow = 1;
	reload(&h, &lim);
	pump_expect_error(&h, a, RXBNECK_ERR_NOT_ALLOWED);
	close(a);
	{
		struct sendsrv_stats st;

		sendsrv_stats(h.s, &st);
		assert_int_equal(st.closed_not_allowed, 1);
		assert_int_equal(st.conns_active, 0);
	}
	b = pump_dial(&h, 0);
	pump_expect_error(&h, b, RXBNECK_ERR_NOT_ALLOWED);
	close(b);
	/* Loopback again, and a new sender sees the new epoch length. */
	assert_int_equal(sendsrv_cidr_parse("127.0.0.0/8", &lim.allow[0], NULL), 0);
	reload(&h, &lim);
	a = pump_active(&h, &m);
	assert_int_equal(m.u.hello_ack.epoch_ms, 250);
	b = pump_active(&h, &m);
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
	stop(&h);
}

/* A lowered max_conns refuses new senders until under it; nobody is dropped. */
static void test_max_conns(void **state)
{
	struct sendsrv_limits lim;
	struct sendsrv_stats st;
	struct rxbp_msg m;
	struct pump h;
	int a, b, c, d;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.max_conns = 3;
	pump_start(&h, &lim);
	a = pump_active(&h, &m);
	b = pump_active(&h, &m);
	lim.max_conns = 1;
	reload(&h, &lim);
	c = pump_dial(&h, 0);
	pump_expect_error(&h, c, RXBNECK_ERR_TOO_MANY);
	close(c);
	pump_expect_alive(&h, a, 2);
	pump_expect_alive(&h, b, 2);
	/* Still one too many after b leaves; a place after a leaves too. */
	close(b);
	pump_run(&h, 20);
	c = pump_dial(&h, 0);
	pump_expect_error(&h, c, RXBNECK_ERR_TOO_MANY);
	close(c);
	close(a);
	pump_run(&h, 20);
	c = pump_active(&h, &m);
	/* Raised beyond the first limit: more slots are made. */
	lim.max_conns = 5;
	reload(&h, &lim);
	a = pump_active(&h, &m);
	b = pump_active(&h, &m);
	d = pump_active(&h, &m);
	sendsrv_stats(h.s, &st);
	assert_int_equal(st.conns_active, 4);
	assert_int_equal(st.rejected_full, 2);
	assert_true(st.mem_bytes <= st.mem_bound_bytes);
	close(a);
	close(b);
	close(c);
	close(d);
	stop(&h);
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
	struct pump h;
	int a, b, c;

	(void)state;
	memset(body, 0, sizeof(body));
	sendsrv_limits_default(&lim);
	pump_start(&h, &lim);
	a = pump_active(&h, &m);
	assert_int_equal(m.u.hello_ack.max_frame_bytes, 4096);
	assert_int_equal(m.u.hello_ack.idle_timeout_ms, 60000);
	c = pump_active(&h, &m);

	lim.max_frame_bytes = 512;
	lim.idle_timeout_ns = 2 * RXB_NSEC_PER_SEC;
	lim.hello_timeout_ns = RXB_NSEC_PER_SEC;
	reload(&h, &lim);
	b = pump_active(&h, &m);
	assert_int_equal(m.u.hello_ack.max_frame_bytes, 512);
	assert_int_equal(m.u.hello_ack.idle_timeout_ms, 2000);

	/* 1000 bytes: too large for b, allowed to a (then UNKNOWN_TYPE). */
	assert_int_equal(send(b, big, sizeof(big), MSG_NOSIGNAL), (ssize_t)sizeof(big));
	pump_expect_error(&h, b, RXBNECK_ERR_TOO_LARGE);
	close(b);
	assert_int_equal(send(a, big, sizeof(big), MSG_NOSIGNAL), (ssize_t)sizeof(big));
	assert_int_equal(send(a, body, sizeof(body), MSG_NOSIGNAL), (ssize_t)sizeof(body));
	pump_expect_error(&h, a, RXBNECK_ERR_UNKNOWN_TYPE);
	close(a);

	/* 3 s of silence: past a new sender's 2 s, within c's 60 s. */
	b = pump_active(&h, &m);
	h.skew_ns += 3 * RXB_NSEC_PER_SEC;
	pump_expect_error(&h, b, RXBNECK_ERR_IDLE_TIMEOUT);
	close(b);
	assert_int_equal(h.seen.last_why, RXBNECK_ERR_IDLE_TIMEOUT);
	pump_expect_alive(&h, c, 2);
	/* ... and c times out 60 s after its last frame, as it was told. */
	h.skew_ns += 59 * RXB_NSEC_PER_SEC;
	pump_run(&h, 5);
	pump_expect_alive(&h, c, 3);
	h.skew_ns += 61 * RXB_NSEC_PER_SEC;
	pump_expect_error(&h, c, RXBNECK_ERR_IDLE_TIMEOUT);
	close(c);
	stop(&h);
}

/* hello_timeout_ns counts from the accept, for connections already waiting. */
static void test_hello_timeout(void **state)
{
	struct sendsrv_limits lim;
	struct rxbp_msg m;
	struct pump h;
	int a;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.hello_timeout_ns = 60 * RXB_NSEC_PER_SEC;
	lim.idle_timeout_ns = 0;
	pump_start(&h, &lim);
	a = pump_dial(&h, 0);
	pump_run(&h, 10);
	h.skew_ns += 10 * RXB_NSEC_PER_SEC;
	pump_run(&h, 5);
	lim.hello_timeout_ns = 5 * RXB_NSEC_PER_SEC;	/* already 10 s since the accept */
	reload(&h, &lim);
	assert_int_equal(pump_next_frame(&h, a, &m), RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, RXBNECK_ERR_HELLO_TIMEOUT);
	assert_non_null(strstr(m.u.error.message, "5000 ms"));
	close(a);
	stop(&h);
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
	struct pump h;
	int a, fd;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.max_out_bytes = 1 << 20;
	lim.rate_change_frac = 0;	/* push every new value */
	pump_start(&h, &lim);
	fd = pump_dial(&h, 4096);		/* a small receive buffer, never read */
	pump_hello(fd, 1);
	a = pump_active(&h, &m);		/* one that reads */
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
	assert_int_equal(h.seen.last_why, RXBNECK_ERR_OUTPUT_OVERFLOW);
	assert_int_equal(st.conns_active, 1);
	close(fd);
	close(a);
	stop(&h);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_rate_epoch_allow),
	cmocka_unit_test(test_max_conns),
	cmocka_unit_test(test_announced_limits),
	cmocka_unit_test(test_hello_timeout),
	cmocka_unit_test(test_output_cap),
)
