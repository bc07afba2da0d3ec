// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/serve/sendsrv's PAUSE schedules over real
 * loopback TCP (the harness of sendsrv_harness.h): who gets a schedule
 * (not a sender whose RTT makes it useless), and the rate between pauses,
 * sent only to senders that take PAUSE, speak minor >= 1 and have a
 * schedule in force.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
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
#include "tests/unit/sendsrv_harness.h"

/*
 * @p goes out to @nsent senders, and @c (recording into @s) gets it as its
 * PAUSE number @count, with its own RTT, @lead_us, as the lead.
 */
static const struct rxbneck_pause *pause_reaches(struct harness *h,
						 const struct rxbneck_pause *p, int nsent,
						 struct rxbneck_client *c, struct client_seen *s,
						 int count, uint64_t lead_us)
{
	int n;

	LOCKED(h, n = sendsrv_publish_pause(h->t.s, p));
	assert_int_equal(n, nsent);
	assert_true(rxbneck_client_wait(c, 2000) == 1);
	assert_int_equal(s->pauses, count);
	assert_int_equal(s->pause.lead_us, lead_us);
	return &s->pause.pause;
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
	assert_int_equal(pause_reaches(&h, &p, 1, cn, &near, 1, 1000)->start_in_us, 3000);
	assert_true(rxbneck_client_wait(cf, 100) == 0);
	assert_int_equal(far.pauses, 0);

	/* A periodic schedule goes to both. */
	p.repeat_count = 0;
	p.period_us = 7000;
	assert_int_equal(pause_reaches(&h, &p, 2, cf, &far, 1, 100000)->period_us, 7000);

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
 * A schedule of @repeat windows (0: until replaced) in epoch @epoch goes
 * out to @nsent senders: @obeys gets its PAUSE and then the rate between
 * pauses, @old (minor 0) the PAUSE alone.
 */
static void schedule_out(struct harness *h, uint32_t repeat, uint64_t epoch, int nsent,
			 int obeys, int old)
{
	assert_int_equal(publish_pause(h, repeat, epoch, false), nsent);
	expect_pause(obeys, false);
	expect_rate(obeys, 2500000000, true);
	expect_pause(old, false);
}

/*
 * A harness at 100 ms epochs, and what flows publishes for FLOW in epoch
 * 4: the plain rate @r (1 Gb/s, loss 0.3) and @b, 2.5 Gb/s between pauses.
 */
static void start_between(struct harness *h, struct rxbneck_rate *r, struct rxbneck_rate *b)
{
	struct sendsrv_limits l = limits();

	*r = (struct rxbneck_rate){ .port = FLOW, .rate_bps = 1000000000, .loss = 0.3,
				    .epoch = 4, .confidence = 900 };
	*b = *r;
	b->rate_bps = 2500000000;
	b->flags = RXBNECK_RATE_BETWEEN_PAUSES;
	l.epoch_ms = 100;
	start(h, &l);
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
	struct rxbneck_rate r, b;
	struct rxbp_msg m;
	int obeys, rate_only, old, n;

	(void)state;
	start_between(&h, &r, &b);
	b.loss = 0.01;
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
	schedule_out(&h, 0, 4, 2, obeys, old);
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
	schedule_out(&h, 0, 6, 3, obeys, old);
	expect_pause(rate_only, false);
	expect_rate(rate_only, 2500000000, true);

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
	struct rxbneck_rate r, b;
	int obeys, old, n;

	(void)state;
	start_between(&h, &r, &b);
	obeys = raw_active_as(&h, RXBNECK_MINOR_BETWEEN_PAUSES,
			      RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	old = raw_active_as(&h, 0, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	LOCKED(&h, n = sendsrv_publish_rate(h.t.s, &r, &b));
	assert_int_equal(n, 2);
	expect_rate(obeys, 1000000000, false);
	expect_rate(old, 1000000000, false);
	schedule_out(&h, 5, 7, 2, obeys, old);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pause_delivery_and_rtt_filter),
		cmocka_unit_test(test_rate_between_pauses),
		cmocka_unit_test(test_between_pauses_expire),
	};

	rxb_log_set_level(RXB_LOG_WARNING);
	return cmocka_run_group_tests_name("sendsrv_pause", tests, NULL, NULL);
}
