// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the protocol's order of checks and its quiet cases in
 * daemon/serve/sendsrv (PROTOCOL.md §3, §5.3, §5.5, §7.1, §10): who may
 * send a frame, and when, is checked before its payload; BYE or ERROR
 * before HELLO closes without an answer; SUBSCRIBE has no reply of its
 * own, only the pushes it newly takes; senders of every older minor are
 * served. Raw TCP on loopback, the server pumped by the test (struct pump,
 * sendsrv_test.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tests/unit/sendsrv_test.h"
#include "proto/codec.h"
#include "tests/unit/unit_main.h"

#define FLOW 9000

/* @m encoded with seq @seq, then @patch applied to its bytes; its length. */
static size_t encode_patched(uint8_t *buf, size_t cap, struct rxbp_msg m, uint32_t seq,
			     void (*patch)(uint8_t *frame, size_t *len))
{
	size_t n;

	m.seq = seq;
	n = rxbp_encode(buf, cap, &m);
	assert_true(n > 0);
	if (patch)
		patch(buf, &n);
	return n;
}

/* The fixed part cut short: MALFORMED were the payload read. */
static void cut_short(uint8_t *f, size_t *len)
{
	*len = RXBNECK_HDR_BYTES + 2;
	f[8] = f[9] = f[10] = 0;
	f[11] = (uint8_t)*len;
}

/* HELLO.flow_proto 99 / RATE.loss a NaN: BAD_VALUE were the payload read. */
static void bad_proto(uint8_t *f, size_t *len)
{
	(void)len;
	f[RXBNECK_HDR_BYTES + 4] = 99;
}

static void nan_loss(uint8_t *f, size_t *len)
{
	(void)len;
	memset(f + RXBNECK_HDR_BYTES + 16, 0xff, 8);
}

/* Send the frame on @fd; the ERROR that comes back has @code and @seq. */
static void expect_refused(struct pump *h, int fd, const uint8_t *f, size_t n, int code,
			   uint32_t seq)
{
	struct rxbp_msg m;

	assert_int_equal(send(fd, f, n, MSG_NOSIGNAL), (ssize_t)n);
	assert_int_equal(pump_next_frame(h, fd, &m), RXBNECK_T_ERROR);
	if (m.u.error.code != code)
		fail_msg("expected %s, got %s (%s)", rxbneck_error_name((unsigned)code),
			 rxbneck_error_name(m.u.error.code), m.u.error.message);
	assert_int_equal(m.u.error.ref_seq, seq);
	assert_int_equal(pump_next_frame(h, fd, &m), -1);
	close(fd);
}

/*
 * §3 step 6 before step 7: a broken frame that may not come now, or not
 * from a sender, is UNEXPECTED; an unknown type stays UNKNOWN_TYPE (step
 * 5), and a broken frame that may come is judged by its payload.
 */
static void test_check_order(void **state)
{
	struct rxbp_msg ping = { .type = RXBNECK_T_PING }, rate = { .type = RXBNECK_T_RATE };
	struct rxbp_msg hello = pump_hello_msg(FLOW), ack;
	struct sendsrv_limits lim;
	uint8_t f[RXBP_ENCODE_MAX];
	struct pump h;
	size_t n;

	(void)state;
	rate.u.rate.port = FLOW;
	sendsrv_limits_default(&lim);
	pump_start(&h, &lim);
	n = encode_patched(f, sizeof(f), ping, 5, cut_short);
	expect_refused(&h, pump_dial(&h, 0), f, n, RXBNECK_ERR_UNEXPECTED, 5);
	n = encode_patched(f, sizeof(f), rate, 6, nan_loss);
	expect_refused(&h, pump_dial(&h, 0), f, n, RXBNECK_ERR_UNEXPECTED, 6);
	n = encode_patched(f, sizeof(f), hello, 7, bad_proto);
	expect_refused(&h, pump_dial(&h, 0), f, n, RXBNECK_ERR_BAD_VALUE, 7);
	n = encode_patched(f, sizeof(f), ping, 8, NULL);
	f[5] = 0x42;
	expect_refused(&h, pump_dial(&h, 0), f, n, RXBNECK_ERR_UNKNOWN_TYPE, 8);
	/* After HELLO: a broken HELLO again, a broken RATE. */
	n = encode_patched(f, sizeof(f), hello, 2, bad_proto);
	expect_refused(&h, pump_active(&h, &ack), f, n, RXBNECK_ERR_UNEXPECTED, 2);
	n = encode_patched(f, sizeof(f), rate, 2, nan_loss);
	expect_refused(&h, pump_active(&h, &ack), f, n, RXBNECK_ERR_UNEXPECTED, 2);
	n = encode_patched(f, sizeof(f), ping, 2, cut_short);
	expect_refused(&h, pump_active(&h, &ack), f, n, RXBNECK_ERR_MALFORMED, 2);
	pump_finish(&h);
}

/* §7.1: BYE or ERROR instead of HELLO: closed, no answer, no goodbye. */
static void test_bye_error_before_hello(void **state)
{
	struct rxbp_msg bye = { .type = RXBNECK_T_BYE }, err = { .type = RXBNECK_T_ERROR };
	struct sendsrv_limits lim;
	struct sendsrv_stats st;
	uint8_t f[RXBP_ENCODE_MAX];
	struct rxbp_msg m;
	struct pump h;
	size_t n;
	int fd;

	(void)state;
	err.u.error.code = RXBNECK_ERR_INTERNAL;
	err.u.error.version_min = err.u.error.version_max = 1;
	sendsrv_limits_default(&lim);
	pump_start(&h, &lim);
	fd = pump_dial(&h, 0);
	sendsrv_test_send(fd, &bye, 1);
	assert_int_equal(pump_next_frame(&h, fd, &m), -1);
	close(fd);
	fd = pump_dial(&h, 0);
	sendsrv_test_send(fd, &err, 1);
	assert_int_equal(pump_next_frame(&h, fd, &m), -1);
	close(fd);
	/* A broken BYE is still a broken frame. */
	n = encode_patched(f, sizeof(f), bye, 3, cut_short);
	expect_refused(&h, pump_dial(&h, 0), f, n, RXBNECK_ERR_MALFORMED, 3);
	sendsrv_stats(h.s, &st);
	assert_int_equal(h.seen.goodbyes, 0);
	assert_int_equal(st.frames_out_by_type[RXBNECK_T_ERROR], 1);
	assert_int_equal(st.conns_hello + st.conns_active, 0);
	pump_finish(&h);
}

/*
 * §5.3: SUBSCRIBE has no reply. What it newly takes comes at once when
 * there is one (RATE here); a SUBSCRIBE that changes nothing sends nothing.
 */
static void test_subscribe_reply(void **state)
{
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 2000000000, .confidence = 500,
				  .epoch = 4 };
	struct rxbp_msg sub = { .type = RXBNECK_T_SUBSCRIBE }, m;
	struct sendsrv_limits lim;
	struct pump h;
	int fd;

	(void)state;
	sendsrv_limits_default(&lim);
	pump_start(&h, &lim);
	fd = pump_active(&h, &m);
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);
	assert_int_equal(pump_next_frame(&h, fd, &m), RXBNECK_T_RATE);
	sub.u.subscribe.subscribe = RXBNECK_SUB_RATE;
	sendsrv_test_send(fd, &sub, 2);
	pump_expect_alive(&h, fd, 3);		/* PONG next: nothing for the SUBSCRIBE */
	sub.u.subscribe.subscribe = RXBNECK_SUB_PAUSE;
	sendsrv_test_send(fd, &sub, 4);
	pump_expect_alive(&h, fd, 5);
	sub.u.subscribe.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE;
	sendsrv_test_send(fd, &sub, 6);
	assert_int_equal(pump_next_frame(&h, fd, &m), RXBNECK_T_RATE);
	assert_true(m.u.rate.rate_bps == r.rate_bps);
	pump_expect_alive(&h, fd, 7);
	close(fd);
	pump_finish(&h);
}

/*
 * §10: senders of minors 0 to RXBNECK_MINOR - 1 are served: HELLO_ACK says
 * the daemon's minor, RATE and PAUSE granted as asked, the same RATE.
 */
static void test_older_minors(void **state)
{
	struct rxbneck_rate r = { .port = FLOW, .rate_bps = 3000000000, .confidence = 700,
				  .epoch = 9, .xfer_time_us = 123456 };
	struct sendsrv_limits lim;
	struct rxbp_msg ack;
	struct pump h;
	int anchor;

	(void)state;
	sendsrv_limits_default(&lim);
	pump_start(&h, &lim);
	anchor = pump_active(&h, &ack);		/* keeps the port's rate */
	assert_int_equal(sendsrv_publish_rate(h.s, &r, NULL), 1);
	for (uint16_t minor = 0; minor <= RXBNECK_MINOR; minor++) {
		struct rxbp_msg m = pump_hello_msg(FLOW);
		int fd = pump_dial(&h, 0);

		m.u.hello.minor = minor;
		m.u.hello.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE;
		sendsrv_test_send(fd, &m, 1);
		assert_int_equal(pump_next_frame(&h, fd, &m), RXBNECK_T_HELLO_ACK);
		assert_int_equal(m.u.hello_ack.minor, RXBNECK_MINOR);
		assert_int_equal(m.u.hello_ack.granted, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
		assert_int_equal(pump_next_frame(&h, fd, &m), RXBNECK_T_RATE);
		assert_true(m.u.rate.rate_bps == r.rate_bps && m.u.rate.epoch == r.epoch &&
			    m.u.rate.xfer_time_us == r.xfer_time_us);
		assert_int_equal(m.u.rate.confidence, r.confidence);
		assert_int_equal(m.u.rate.flags, 0);
		pump_expect_alive(&h, fd, 2);
		close(fd);
	}
	close(anchor);
	pump_finish(&h);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_check_order),
	cmocka_unit_test(test_bye_error_before_hello),
	cmocka_unit_test(test_subscribe_reply),
	cmocka_unit_test(test_older_minors),
)
