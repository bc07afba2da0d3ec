// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/serve/sendsrv over real loopback TCP.
 *
 * A loop thread runs epoll + sendsrv_handle + sendsrv_tick, holding a mutex
 * while it is inside sendsrv; the test thread takes the same mutex to
 * publish or look at stats, and talks to the server as senders do: through
 * librxbneck, or through raw sockets when it has to misbehave (the
 * harness of sendsrv_harness.h). PAUSE schedules: test_sendsrv_pause.c.
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
#include "tests/unit/sendsrv_harness.h"

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
