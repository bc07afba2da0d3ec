// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for what keeps one sender from harming another in
 * daemon/serve/sendsrv: connections counted per source (an IPv4 address,
 * an IPv6 /64), REPORTs checked against the sender's own HELLO
 * (PROTOCOL.md §5.11), and each sender's own rates (ops->rate_for,
 * sendsrv_offer_rates()). Raw TCP on loopback from several loopback
 * addresses, the server pumped by the test (struct pump, sendsrv_test.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tests/unit/sendsrv_test.h"
#include "proto/codec.h"

#define FLOW 9000

static struct sockaddr_storage sa_of(const char *text)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		return ss;
	}
	assert_int_equal(inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	ss.ss_family = AF_INET6;
	return ss;
}

static bool same(const char *a, const char *b)
{
	struct sockaddr_storage x = sa_of(a), y = sa_of(b);

	return sendsrv_same_source(&x, &y);
}

/* Sources: IPv4 addresses (v4-mapped too), IPv6 /64s. */
static void test_sources(void **state)
{
	(void)state;
	assert_true(same("192.0.2.7", "192.0.2.7"));
	assert_false(same("192.0.2.7", "192.0.2.8"));
	assert_true(same("192.0.2.7", "::ffff:192.0.2.7"));
	assert_true(same("2001:db8:1:2::1", "2001:db8:1:2:ffff::9"));
	assert_false(same("2001:db8:1:2::1", "2001:db8:1:3::1"));
	assert_false(same("::ffff:0.0.0.0", "::"));
	assert_false(same("0.0.0.0", "::"));
}

/*
 * One address holding its share of connections (kept alive) refuses its
 * own next one, not another address's; a place frees as one closes.
 */
static void test_per_source_cap(void **state)
{
	struct sendsrv_limits lim;
	struct sendsrv_stats st;
	struct rxbp_msg m;
	struct pump h;
	int a[3], silent[3], x, y;

	(void)state;
	sendsrv_limits_default(&lim);
	lim.max_conns_per_source = 3;
	pump_start(&h, &lim);
	for (int i = 0; i < 3; i++)
		a[i] = pump_active(&h, &m);
	x = pump_dial(&h, 0);
	pump_expect_error(&h, x, RXBNECK_ERR_TOO_MANY);
	close(x);
	/* Another address is served. */
	y = pump_dial_from(&h, "127.0.0.2", 0);
	pump_hello(y, 1);
	assert_int_equal(pump_next_frame(&h, y, &m), RXBNECK_T_HELLO_ACK);
	/* Waiting for HELLO counts too: a third address's silent ones. */
	for (int i = 0; i < 3; i++)
		silent[i] = pump_dial_from(&h, "127.0.0.3", 0);
	x = pump_dial_from(&h, "127.0.0.3", 0);
	pump_expect_error(&h, x, RXBNECK_ERR_TOO_MANY);
	close(x);
	sendsrv_stats(h.s, &st);
	assert_int_equal(st.rejected_source, 2);
	assert_int_equal(st.rejected_full, 0);
	assert_int_equal(st.conns_active, 4);
	for (int i = 0; i < 3; i++)
		pump_expect_alive(&h, a[i], 2);
	/* One of the first address's leaves: it may connect again. */
	close(a[0]);
	pump_run(&h, 20);
	a[0] = pump_active(&h, &m);
	sendsrv_stats(h.s, &st);
	assert_int_equal(st.rejected_source, 2);
	assert_true(st.mem_bytes <= st.mem_bound_bytes);
	for (int i = 0; i < 3; i++) {
		close(a[i]);
		close(silent[i]);
	}
	close(y);
	pump_finish(&h);
}

/* A raw sender past HELLO for @file_bytes in @payload-byte datagrams. */
static int sender(struct pump *h, uint64_t file_bytes, uint32_t payload, uint16_t minor,
		  uint16_t subs)
{
	struct rxbp_msg m = pump_hello_msg(FLOW);
	int fd = pump_dial(h, 0);

	m.u.hello.file_bytes = file_bytes;
	m.u.hello.payload_bytes = payload;
	m.u.hello.minor = minor;
	m.u.hello.subscribe = subs;
	sendsrv_test_send(fd, &m, 1);
	assert_int_equal(pump_next_frame(h, fd, &m), RXBNECK_T_HELLO_ACK);
	return fd;
}

/*
 * PROTOCOL.md §5.11: a REPORT about another flow, or whose counts do not
 * add up, is refused with BAD_VALUE (the connection closes); a sound one
 * reaches on_report, and an aborted one may stop short.
 */
/* 1 MB in 1000-byte datagrams: 1000 of them in the first round. */
static const struct rxbneck_report good_report = {
	.port = FLOW, .rounds = 3, .file_bytes = 1000000, .elapsed_us = 20000,
	.rate_bps = 500000000, .pkts_sent = 1100, .pkts_resent = 100,
	.pkts_lost_first = 90,
};

/* Each one breaks one rule of PROTOCOL.md §5.11. */
static int bad_reports(struct rxbneck_report *bad)
{
	for (int i = 0; i < 10; i++)
		bad[i] = good_report;
	bad[0].port = FLOW + 1;			/* another flow */
	bad[1].pkts_resent = 1101;		/* resent > sent */
	bad[2].pkts_lost_first = 1001;		/* lost > first round */
	bad[3].file_bytes = 1000001;		/* more than announced */
	bad[3].flags = RXBNECK_REPORT_ABORTED;
	bad[4].file_bytes = 999999;		/* another size */
	bad[5].rounds = 0;			/* no round */
	bad[6].elapsed_us = 0;			/* no time */
	bad[7].rounds = 102;			/* rounds without resends */
	bad[8].pkts_sent = 1098;		/* too few datagrams */
	bad[8].pkts_resent = 99;
	bad[8].pkts_lost_first = 10;
	bad[9].pkts_resent = 2000;		/* aborted, resent > sent */
	bad[9].flags = RXBNECK_REPORT_ABORTED;
	return 10;
}

/*
 * The good report, of @file_bytes sent in @pkts_sent datagrams in @rounds
 * rounds with none resent or lost.
 */
static struct rxbp_msg lossless_report(uint64_t file_bytes, uint64_t pkts_sent, uint32_t rounds)
{
	struct rxbp_msg m = { .type = RXBNECK_T_REPORT, .u.report = good_report };

	m.u.report.file_bytes = file_bytes;
	m.u.report.pkts_sent = pkts_sent;
	m.u.report.pkts_resent = 0;
	m.u.report.pkts_lost_first = 0;
	m.u.report.rounds = rounds;
	return m;
}

/*
 * PROTOCOL.md §5.11: a REPORT about another flow, or whose counts do not
 * add up, is refused with BAD_VALUE (the connection closes); a sound one
 * reaches on_report, and an aborted one may stop short.
 */
static void test_report_checks(void **state)
{
	struct sendsrv_ops ops = { .on_hello = pump_on_hello, .on_report = pump_on_report,
				   .on_goodbye = pump_on_goodbye };
	const struct rxbneck_report good = good_report;
	struct rxbneck_report bad[10];
	int nbad = bad_reports(bad);
	struct sendsrv_limits lim;
	struct sendsrv_stats st;
	struct rxbp_msg m;
	struct pump h;
	int fd;

	(void)state;
	sendsrv_limits_default(&lim);
	pump_start_ops(&h, &lim, &ops);
	for (int i = 0; i < nbad; i++) {
		fd = sender(&h, 1000000, 1000, 1, RXBNECK_SUB_RATE);
		m = (struct rxbp_msg){ .type = RXBNECK_T_REPORT, .u.report = bad[i] };
		sendsrv_test_send(fd, &m, 2);
		if (pump_next_frame(&h, fd, &m) != RXBNECK_T_ERROR ||
		    m.u.error.code != RXBNECK_ERR_BAD_VALUE)
			fail_msg("bad report %d: not refused", i);
		assert_non_null(strstr(m.u.error.message, "REPORT: "));
		assert_int_equal(pump_next_frame(&h, fd, &m), -1);
		close(fd);
	}
	assert_int_equal(h.seen.reports, 0);
	/* Sound ones: finished; aborted half-way; a HELLO without a size. */
	fd = sender(&h, 1000000, 1000, 1, RXBNECK_SUB_RATE);
	m = (struct rxbp_msg){ .type = RXBNECK_T_REPORT, .u.report = good };
	sendsrv_test_send(fd, &m, 2);
	m = lossless_report(400000, 300, 0);
	m.u.report.flags = RXBNECK_REPORT_ABORTED;
	m.u.report.elapsed_us = 0;
	sendsrv_test_send(fd, &m, 3);
	pump_expect_alive(&h, fd, 4);
	assert_int_equal(h.seen.reports, 2);
	assert_int_equal(h.seen.last_report.file_bytes, 400000);
	close(fd);
	fd = sender(&h, 0, 1000, 1, RXBNECK_SUB_RATE);
	m = lossless_report(5000, 5, 1);
	sendsrv_test_send(fd, &m, 2);
	pump_expect_alive(&h, fd, 3);
	assert_int_equal(h.seen.reports, 3);
	close(fd);
	sendsrv_stats(h.s, &st);
	assert_int_equal(st.reports_rejected, nbad);
	assert_int_equal(st.reports, 3);
	assert_int_equal(st.errors_sent[RXBNECK_ERR_BAD_VALUE], nbad);
	pump_finish(&h);
}

/* Each sender's rate is a function of its own HELLO here: 1 b/s per byte. */
static uint64_t between_bps = 0;

static int own_rates(void *ctx, const struct sendsrv_peer *p, struct rxbneck_rate *r,
		     struct rxbneck_rate *between)
{
	(void)ctx;
	memset(r, 0, sizeof(*r));
	r->port = p->hello.flow_port;
	r->rate_bps = p->hello.file_bytes;
	r->epoch = 7;
	r->xfer_time_us = p->hello.file_bytes / 1000;
	if (!between_bps)
		return 1;
	*between = *r;
	between->rate_bps = between_bps;
	between->flags = RXBNECK_RATE_BETWEEN_PAUSES;
	return 2;
}

static void expect_rate(struct pump *h, int fd, uint64_t bps, bool between)
{
	struct rxbp_msg m;

	assert_int_equal(pump_next_frame(h, fd, &m), RXBNECK_T_RATE);
	assert_int_equal(m.u.rate.rate_bps, bps);
	assert_int_equal(!!(m.u.rate.flags & RXBNECK_RATE_BETWEEN_PAUSES), between);
}

/*
 * With ops->rate_for every sender of a port is told its own rate, right
 * after HELLO_ACK and when sendsrv_offer_rates() finds it due; the rate
 * between pauses only after a PAUSE reached it.
 */
static void test_own_rates(void **state)
{
	struct sendsrv_ops ops = { .rate_for = own_rates, .on_goodbye = pump_on_goodbye };
	struct rxbneck_pause pause = { .port = FLOW, .start_in_us = 1000, .duration_us = 2000,
				       .period_us = 10000, .epoch = 7 };
	struct sendsrv_limits lim;
	struct rxbp_msg m;
	struct pump h;
	int small, big;

	(void)state;
	between_bps = 0;
	sendsrv_limits_default(&lim);
	pump_start_ops(&h, &lim, &ops);
	small = sender(&h, 1000000, 1000, 1, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	expect_rate(&h, small, 1000000, false);
	big = sender(&h, 100000000000ULL, 1000, 1, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	expect_rate(&h, big, 100000000000ULL, false);
	/* Nothing changed: nothing is due. */
	assert_int_equal(sendsrv_offer_rates(h.s, FLOW), 0);
	/* A rate between pauses: only with a schedule in force. */
	between_bps = 3;
	assert_int_equal(sendsrv_offer_rates(h.s, FLOW), 0);
	assert_int_equal(sendsrv_publish_pause(h.s, &pause), 2);
	assert_int_equal(pump_next_frame(&h, small, &m), RXBNECK_T_PAUSE);
	expect_rate(&h, small, 3, true);
	assert_int_equal(pump_next_frame(&h, big, &m), RXBNECK_T_PAUSE);
	expect_rate(&h, big, 3, true);
	/* Withdrawn by the model: the plain rates at the next offer. */
	between_bps = 0;
	assert_int_equal(sendsrv_offer_rates(h.s, FLOW), 2);
	expect_rate(&h, small, 1000000, false);
	expect_rate(&h, big, 100000000000ULL, false);
	close(small);
	close(big);
	pump_finish(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_per_source_cap),
		cmocka_unit_test(test_report_checks),
		cmocka_unit_test(test_own_rates),
	};

	rxb_log_set_level(RXB_LOG_WARNING);
	return cmocka_run_group_tests_name("sendsrv_trust", tests, NULL, NULL);
}
