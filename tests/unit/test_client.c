// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for librxbneck against a scripted fake daemon on loopback.
 *
 * A helper thread accepts the connection, reads the HELLO and writes a
 * scripted answer (the client's connect() blocks meanwhile); the test then
 * plays the daemon's part on the accepted socket from the main thread.
 * The real daemon side is exercised in test_sendsrv.c.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/codec.h"
#include "rxbneck/client.h"
#include "tests/unit/client_seen.h"
#include "tests/unit/frame_recv.h"
#include "tests/unit/unit_main.h"

#define MS 1000000ULL

/* ---------------------------------------------------- fake daemon -- */

struct fake {
	int lfd;
	uint16_t port;
	pthread_t th;
	uint8_t script[2048];		/* written after the HELLO arrived */
	size_t script_len;
	int fd;				/* accepted connection */
	struct rxbp_msg hello;		/* what the client sent first */
	int hello_rc;
	uint32_t seq;
};

static void srv_write(int fd, const void *b, size_t n)
{
	assert_int_equal(write(fd, b, n), (ssize_t)n);
}

static size_t encode_into(struct fake *f, uint8_t *buf, size_t cap,
			  struct rxbp_msg *m)
{
	size_t n;

	m->seq = ++f->seq;
	n = rxbp_encode(buf, cap, m);
	assert_true(n > 0);
	return n;
}

static void srv_send(struct fake *f, struct rxbp_msg *m)
{
	uint8_t buf[RXBP_ENCODE_MAX];

	srv_write(f->fd, buf, encode_into(f, buf, sizeof(buf), m));
}

static void script_add(struct fake *f, struct rxbp_msg *m)
{
	f->script_len += encode_into(f, f->script + f->script_len,
				     sizeof(f->script) - f->script_len, m);
}

static struct rxbp_msg msg(uint8_t type)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	return m;
}

static void script_ack(struct fake *f, uint32_t idle_ms, uint16_t accepts)
{
	struct rxbp_msg m = msg(RXBNECK_T_HELLO_ACK);

	m.u.hello_ack.granted = RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE;
	m.u.hello_ack.accepts = accepts;
	m.u.hello_ack.max_frame_bytes = 4096;
	m.u.hello_ack.idle_timeout_ms = idle_ms;
	m.u.hello_ack.epoch_ms = 1000;
	m.u.hello_ack.instance_id = 99;
	strcpy(m.u.hello_ack.name, "fake 1");
	script_add(f, &m);
}

static struct rxbp_msg rate_msg(uint64_t bps, uint64_t epoch)
{
	struct rxbp_msg m = msg(RXBNECK_T_RATE);

	m.u.rate.port = 9000;
	m.u.rate.rate_bps = bps;
	m.u.rate.loss = 0.01;
	m.u.rate.epoch = epoch;
	return m;
}

/* A PAUSE for port 9000: @repeat windows of @dur_us every @period_us
 * (0: one-shot), the first @start_us after the daemon sent it. */
static struct rxbp_msg pause_msg(uint64_t start_us, uint64_t dur_us, uint64_t period_us,
				 uint32_t repeat)
{
	struct rxbp_msg m = msg(RXBNECK_T_PAUSE);

	m.u.pause.port = 9000;
	m.u.pause.repeat_count = repeat;
	m.u.pause.start_in_us = start_us;
	m.u.pause.duration_us = dur_us;
	m.u.pause.period_us = period_us;
	return m;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	f->fd = accept(f->lfd, NULL, NULL);
	if (f->fd < 0)
		return NULL;
	f->hello_rc = frame_recv(f->fd, &f->hello, 5000);
	if (f->hello_rc == 0 && f->script_len)
		srv_write(f->fd, f->script, f->script_len);
	return NULL;
}

static void fake_listen(struct fake *f)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->hello_rc = 1;
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &len), 0);
	f->port = ntohs(a.sin_port);
}

static void fake_start(struct fake *f)
{
	assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
}

static void fake_join(struct fake *f)
{
	assert_int_equal(pthread_join(f->th, NULL), 0);
}

static void fake_stop(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	close(f->lfd);
}

/* --------------------------------------------------------- client -- */

/*
 * The ERROR the client sent the fake daemon before closing: @code, about
 * the daemon's frame @ref_seq (negative: not checked).
 */
static void expect_client_error(const struct fake *f, int code, int64_t ref_seq)
{
	struct rxbp_msg m;

	assert_int_equal(frame_recv(f->fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, code);
	if (ref_seq >= 0)
		assert_int_equal(m.u.error.ref_seq, ref_seq);
}

static struct rxbneck_client *client_for(const struct fake *f, struct client_seen *s,
					 uint32_t timeout_ms)
{
	struct rxbneck_client_config cfg;
	struct rxbneck_client *c;

	client_seen_config(&cfg, s, f->port, timeout_ms);
	cfg.hello.flow_port = 9000;
	cfg.hello.rtt_us = 2000;
	cfg.hello.file_bytes = 123456789;
	strcpy(cfg.hello.name, "test-client");
	c = rxbneck_client_new(&cfg);
	assert_non_null(c);
	return c;
}

/* Connected client + fake with an ACK (and @extra frames) sent. */
static struct rxbneck_client *connected(struct fake *f, struct client_seen *s,
					uint32_t idle_ms, uint16_t accepts)
{
	struct rxbneck_client *c;

	fake_listen(f);
	script_ack(f, idle_ms, accepts);
	fake_start(f);
	c = client_for(f, s, 3000);
	assert_int_equal(rxbneck_client_connect(c), 0);
	fake_join(f);
	assert_int_equal(f->hello_rc, 0);
	return c;
}

/* process() until it handled something or failed, within 2 s. */
static int pump(struct rxbneck_client *c)
{
	return rxbneck_client_wait(c, 2000);
}

/* ----------------------------------------------------------- tests -- */

static void test_config_and_validation(void **state)
{
	struct rxbneck_client_config cfg;
	struct rxbneck_client *c;

	(void)state;
	rxbneck_client_config_init(&cfg);
	assert_string_equal(cfg.host, "localhost");
	assert_int_equal(cfg.port, RXBNECK_DEFAULT_PORT);
	assert_int_equal(cfg.hello.flow_proto, 17);
	assert_int_equal(cfg.hello.subscribe, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	assert_true(cfg.pause_lead_us < 0);
	assert_null(rxbneck_client_new(NULL));

	/* flow_port missing: refused before any network activity. */
	cfg.hello.payload_bytes = 1000;
	c = rxbneck_client_new(&cfg);
	assert_non_null(c);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_EINVAL);
	assert_non_null(strstr(rxbneck_client_errmsg(c), "flow_port 0"));
	assert_int_equal(rxbneck_client_fd(c), -1);
	assert_int_equal(rxbneck_client_process(c), RXBNECK_ENOTCONN);
	assert_int_equal(rxbneck_client_report(c, &(struct rxbneck_report){ .port = 1 }),
			 RXBNECK_ENOTCONN);
	assert_null(rxbneck_client_daemon(c));
	rxbneck_client_close(c);
	rxbneck_client_close(NULL);

	assert_string_equal(rxbneck_strerror(RXBNECK_EREMOTE), "daemon reported an error");
	assert_string_equal(rxbneck_strerror(12345), "unknown error");
	assert_string_equal(rxbneck_version(), RXB_VERSION);
}

static void test_connect_refused(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c;

	(void)state;
	fake_listen(&f);
	close(f.lfd);		/* nobody listens on that port any more */
	c = client_for(&f, &s, 1000);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_ESYS);
	assert_non_null(strstr(rxbneck_client_errmsg(c), "refused"));
	rxbneck_client_close(c);
}

static void test_resolve_failure(void **state)
{
	struct rxbneck_client_config cfg;
	struct rxbneck_client *c;

	(void)state;
	rxbneck_client_config_init(&cfg);
	cfg.host = "no such host.invalid";
	cfg.hello.flow_port = 1;
	cfg.hello.payload_bytes = 1;
	c = rxbneck_client_new(&cfg);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_ERESOLVE);
	rxbneck_client_close(c);
}

static void test_handshake_hello_contents_and_early_rate(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c;
	struct rxbneck_rate r;
	struct rxbp_msg m = rate_msg(1500000000, 7);

	(void)state;
	fake_listen(&f);
	script_ack(&f, 60000, RXBNECK_ACCEPT_REPORT);
	script_add(&f, &m);	/* arrives in the same segment as the ACK */
	fake_start(&f);
	c = client_for(&f, &s, 3000);
	assert_int_equal(rxbneck_client_latest_rate(c, &r), RXBNECK_ENODATA);
	assert_int_equal(rxbneck_client_connect(c), 0);
	fake_join(&f);

	assert_int_equal(f.hello_rc, 0);
	assert_int_equal(f.hello.type, RXBNECK_T_HELLO);
	assert_int_equal(f.hello.seq, 1);
	assert_int_equal(f.hello.u.hello.minor, RXBNECK_MINOR);
	assert_int_equal(f.hello.u.hello.flow_port, 9000);
	assert_int_equal(f.hello.u.hello.flow_proto, 17);
	assert_int_equal(f.hello.u.hello.payload_bytes, 8192);
	assert_int_equal(f.hello.u.hello.rtt_us, 2000);
	assert_int_equal(f.hello.u.hello.file_bytes, 123456789);
	assert_int_equal(f.hello.u.hello.subscribe, RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE);
	assert_string_equal(f.hello.u.hello.name, "test-client");

	/* The RATE behind the ACK was dispatched inside connect(). */
	assert_int_equal(s.rates, 1);
	assert_int_equal(s.rate.rate_bps, 1500000000);
	assert_int_equal(rxbneck_client_latest_rate(c, &r), 0);
	assert_int_equal(r.epoch, 7);
	assert_string_equal(rxbneck_client_daemon(c)->name, "fake 1");
	assert_int_equal(rxbneck_client_daemon(c)->instance_id, 99);
	assert_true(rxbneck_client_fd(c) >= 0);
	assert_int_equal(rxbneck_client_poll_events(c), POLLIN);

	rxbneck_client_close(c);
	/* The client said BYE on close. */
	assert_int_equal(frame_recv(f.fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_BYE);
	assert_int_equal(m.u.bye.reason, RXBNECK_BYE_DONE);
	fake_stop(&f);
}

static void test_pushes_ping_unknown_and_sends(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, RXBNECK_ACCEPT_REPORT);
	struct rxbp_msg m;
	struct rxbneck_pause_window w;
	uint64_t until, t0;
	uint8_t odd[RXBNECK_HDR_BYTES + 3] = {
		0x52, 0x58, 0x42, 0x4e, 1, 0x99, 0, 0, 0, 0, 0, 19, 0, 0, 0, 50,
		1, 2, 3,
	};

	(void)state;
	/* A frame of a type from the future is skipped; the RATE after it is not. */
	srv_write(f.fd, odd, sizeof(odd));
	m = rate_msg(900000000, 8);
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(s.rates, 1);
	assert_int_equal(s.rate.rate_bps, 900000000);

	/* One-shot pause: lead = RTT (2 ms). */
	m = pause_msg(50000, 30000, 0, 1);
	m.u.pause.epoch = 8;
	t0 = rxbneck_now_ns();
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(s.pauses, 1);
	assert_int_equal(s.pause.lead_us, 2000);
	assert_int_equal(s.pause.first_stop_ns, s.pause.received_ns + 48 * MS);
	assert_true(s.pause.received_ns >= t0);
	assert_int_equal(rxbneck_client_latest_pause(c, &w), 0);
	assert_memory_equal(&w, &s.pause, sizeof(w));
	assert_int_equal(rxbneck_client_pause_state(c, w.received_ns, &until), 0);
	assert_int_equal(until, w.first_stop_ns);
	assert_int_equal(rxbneck_client_pause_state(c, w.first_stop_ns, &until), 1);
	assert_int_equal(until, w.first_stop_ns + 30 * MS);

	/* BUFFER advice: kept, and applied to a socket of ours as a receiver
	 * would (the kernel doubles the setsockopt value). */
	{
		struct rxbneck_buffer b;
		uint64_t now = 0;
		int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), v = 0;
		socklen_t vl = sizeof(v);

		assert_int_equal(rxbneck_client_latest_buffer(c, &b), RXBNECK_ENODATA);
		m = msg(RXBNECK_T_BUFFER);
		m.u.buffer = (struct rxbneck_buffer){ .port = 9000, .pkt_bytes = 2304,
			.flags = RXBNECK_BUFFER_MODEL, .rcvbuf_bytes = 300000,
			.current_bytes = 212992, .epoch = 8 };
		srv_send(&f, &m);
		assert_int_equal(pump(c), 1);
		assert_int_equal(s.buffers, 1);
		assert_int_equal(s.buffer.rcvbuf_bytes, 300000);
		assert_int_equal(rxbneck_client_latest_buffer(c, &b), 0);
		assert_memory_equal(&b, &s.buffer, sizeof(b));
		assert_true(u >= 0);
		assert_int_equal(rxbneck_buffer_apply(u, &b, &now), 0);
		assert_int_equal(now, 300000);
		assert_int_equal(getsockopt(u, SOL_SOCKET, SO_RCVBUF, &v, &vl), 0);
		assert_int_equal(v, 300000);
		b.rcvbuf_bytes = 0;
		assert_int_equal(rxbneck_buffer_apply(u, &b, &now), RXBNECK_EINVAL);
		close(u);
	}

	/* PING from the daemon is answered with the same token. */
	m = msg(RXBNECK_T_PING);
	m.u.ping.token = 0xabcdef;
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(frame_recv(f.fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_PONG);
	assert_int_equal(m.u.ping.token, 0xabcdef);
	assert_int_equal(m.seq, 2);	/* HELLO was 1 */

	/* REPORT is accepted by this daemon, STREAMS_SAMPLE is not. */
	assert_int_equal(rxbneck_client_report(c, &(struct rxbneck_report){
		.port = 9000, .rounds = 2, .file_bytes = 5, .elapsed_us = 6 }), 0);
	assert_int_equal(frame_recv(f.fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_REPORT);
	assert_int_equal(m.u.report.rounds, 2);
	assert_int_equal(rxbneck_client_streams_sample(c, &(struct rxbneck_streams_sample){
		.port = 9000, .streams = 2 }), RXBNECK_EUNSUPPORTED);
	assert_int_equal(rxbneck_client_report(c, &(struct rxbneck_report){ .port = 0 }),
			 RXBNECK_EINVAL);

	/* New RTT: SUBSCRIBE goes out and the next PAUSE uses it as lead. */
	assert_int_equal(rxbneck_client_subscribe(c, RXBNECK_SUB_PAUSE, 10000), 0);
	assert_int_equal(frame_recv(f.fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_SUBSCRIBE);
	assert_int_equal(m.u.subscribe.subscribe, RXBNECK_SUB_PAUSE);
	assert_int_equal(m.u.subscribe.rtt_us, 10000);
	m = pause_msg(50000, 30000, 0, 1);
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(s.pause.lead_us, 10000);

	/* CANCEL clears the schedule. */
	m = msg(RXBNECK_T_PAUSE);
	m.u.pause.port = 9000;
	m.u.pause.flags = RXBNECK_PAUSE_CANCEL;
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(s.pauses, 3);
	assert_int_equal(rxbneck_client_latest_pause(c, &w), RXBNECK_ENODATA);
	assert_int_equal(rxbneck_client_pause_state(c, rxbneck_now_ns(), &until), 0);
	assert_int_equal(until, UINT64_MAX);

	assert_int_equal(s.errors, 0);
	rxbneck_client_close(c);
	fake_stop(&f);
}

/* STREAMS: kept as the newest advice; STREAMS_SAMPLE sent, port from the HELLO. */
static void test_streams(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, RXBNECK_ACCEPT_STREAMS_SAMPLE);
	struct rxbneck_streams got;
	struct rxbp_msg m;

	(void)state;
	assert_int_equal(f.hello.u.hello.minor, RXBNECK_MINOR);
	assert_int_equal(rxbneck_client_latest_streams(c, &got), RXBNECK_ENODATA);
	m = msg(RXBNECK_T_STREAMS);
	m.u.streams = (struct rxbneck_streams){ .port = 9000, .streams = 8,
		.predicted_bps = 2000000000, .epoch = 7, .flags = RXBNECK_STREAMS_CAPPED,
		.confidence = 500, .model = RXBNECK_MODEL_FULL2, .points = 4, .rel_err = 30 };
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(rxbneck_client_latest_streams(c, &got), 0);
	assert_memory_equal(&got, &m.u.streams, sizeof(got));
	assert_int_equal(rxbneck_client_streams_sample(c, &(struct rxbneck_streams_sample){
		.streams = 8, .throughput_bps = 1900000000, .duration_us = 3000000 }), 0);
	assert_int_equal(frame_recv(f.fd, &m, 2000), 0);
	assert_int_equal(m.type, RXBNECK_T_STREAMS_SAMPLE);
	assert_int_equal(m.u.sample.port, 9000);
	assert_int_equal(m.u.sample.streams, 8);
	assert_int_equal(m.u.sample.throughput_bps, 1900000000);
	assert_int_equal(m.u.sample.duration_us, 3000000);
	/* Out of the frame's bounds: refused, nothing sent, still connected. */
	assert_int_equal(rxbneck_client_streams_sample(c, &(struct rxbneck_streams_sample){
		.streams = 8, .throughput_bps = 1, .duration_us = 10 }), RXBNECK_EINVAL);
	assert_int_equal(s.errors, 0);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_hello_answered_with_error(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c;
	struct rxbp_msg m = msg(RXBNECK_T_ERROR);

	(void)state;
	fake_listen(&f);
	m.u.error.code = RXBNECK_ERR_REFUSED;
	m.u.error.version_min = m.u.error.version_max = 1;
	m.u.error.ref_seq = 1;
	strcpy(m.u.error.message, "port 9000 is not watchable");
	script_add(&f, &m);
	fake_start(&f);
	c = client_for(&f, &s, 3000);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_EREMOTE);
	fake_join(&f);
	assert_int_equal(rxbneck_client_remote_error(c), RXBNECK_ERR_REFUSED);
	assert_non_null(strstr(rxbneck_client_errmsg(c), "REFUSED"));
	assert_non_null(strstr(rxbneck_client_errmsg(c), "not watchable"));
	assert_int_equal(rxbneck_client_fd(c), -1);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_hello_timeout(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c;
	uint64_t t0;

	(void)state;
	fake_listen(&f);	/* no script: the HELLO is never answered */
	fake_start(&f);
	c = client_for(&f, &s, 200);
	t0 = rxbneck_now_ns();
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_ETIMEDOUT);
	assert_true(rxbneck_now_ns() - t0 >= 190 * MS);
	assert_true(rxbneck_now_ns() - t0 < 2000 * MS);
	fake_join(&f);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_first_frame_not_ack(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c;
	struct rxbp_msg m = rate_msg(1, 1);

	(void)state;
	fake_listen(&f);
	script_add(&f, &m);
	fake_start(&f);
	c = client_for(&f, &s, 2000);
	assert_int_equal(rxbneck_client_connect(c), RXBNECK_EPROTO);
	fake_join(&f);
	/* The client told the daemon why before closing. */
	expect_client_error(&f, RXBNECK_ERR_UNEXPECTED, 1);
	assert_int_equal(s.rates, 0);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_garbage_from_daemon(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, 0);
	struct rxbp_msg m;

	(void)state;
	srv_write(f.fd, "HTTP/1.1 400\r\n", 14);
	assert_int_equal(pump(c), RXBNECK_EPROTO);
	assert_int_equal(s.errors, 1);
	assert_int_equal(s.error_rc, RXBNECK_EPROTO);
	assert_non_null(strstr(rxbneck_client_errmsg(c), "BAD_MAGIC"));
	expect_client_error(&f, RXBNECK_ERR_BAD_MAGIC, -1);
	assert_int_equal(frame_recv(f.fd, &m, 2000), -1);	/* then EOF */
	assert_int_equal(rxbneck_client_fd(c), -1);
	rxbneck_client_close(c);
	fake_stop(&f);
}

/*
 * PROTOCOL.md §3 step 6: a frame only senders send is UNEXPECTED before
 * its payload is read (a HELLO whose flow_proto would be BAD_VALUE), and
 * a daemon's frame is then judged by its payload (a RATE with a NaN loss).
 */
static void test_direction_before_payload(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, 0);
	struct rxbp_msg m = msg(RXBNECK_T_HELLO);
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n;

	(void)state;
	m.u.hello.flow_port = 9000;
	m.u.hello.flow_proto = 17;
	m.u.hello.payload_bytes = 1468;
	m.seq = 9;
	n = rxbp_encode(buf, sizeof(buf), &m);
	assert_true(n > 0);
	buf[RXBNECK_HDR_BYTES + 4] = 99;
	srv_write(f.fd, buf, n);
	assert_int_equal(pump(c), RXBNECK_EPROTO);
	expect_client_error(&f, RXBNECK_ERR_UNEXPECTED, 9);
	rxbneck_client_close(c);
	fake_stop(&f);

	c = connected(&f, &s, 60000, 0);
	m = rate_msg(1000000, 1);
	m.seq = 11;
	n = rxbp_encode(buf, sizeof(buf), &m);
	assert_true(n > 0);
	memset(buf + RXBNECK_HDR_BYTES + 16, 0xff, 8);	/* loss: a NaN */
	srv_write(f.fd, buf, n);
	assert_int_equal(pump(c), RXBNECK_EPROTO);
	expect_client_error(&f, RXBNECK_ERR_BAD_VALUE, 11);
	assert_int_equal(s.rates, 0);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_bye_eof_and_reconnect(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, 0);
	struct rxbp_msg m = msg(RXBNECK_T_BYE);

	(void)state;
	m.u.bye.reason = RXBNECK_BYE_SHUTDOWN;
	strcpy(m.u.bye.message, "stopping");
	srv_send(&f, &m);
	assert_int_equal(pump(c), RXBNECK_ECLOSED);
	assert_non_null(strstr(rxbneck_client_errmsg(c), "shutdown"));
	assert_non_null(strstr(rxbneck_client_errmsg(c), "stopping"));
	assert_int_equal(rxbneck_client_fd(c), -1);
	close(f.fd);

	/* The same handle connects again (same listener); seq starts over. */
	f.script_len = 0;
	f.seq = 0;
	script_ack(&f, 60000, 0);
	fake_start(&f);
	assert_int_equal(rxbneck_client_connect(c), 0);
	fake_join(&f);
	assert_int_equal(f.hello.seq, 1);

	/* Plain EOF from the daemon. */
	shutdown(f.fd, SHUT_WR);
	assert_int_equal(pump(c), RXBNECK_ECLOSED);
	assert_int_equal(s.errors, 2);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_keepalive(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 300, 0);
	struct rxbp_msg m;
	int t;

	(void)state;
	/* Ping due a third of the idle timeout after the HELLO. */
	t = rxbneck_client_timeout_ms(c);
	assert_true(t >= 0 && t <= 100);
	assert_int_equal(rxbneck_client_wait(c, 250), 0);
	assert_int_equal(frame_recv(f.fd, &m, 0), 0);
	assert_int_equal(m.type, RXBNECK_T_PING);
	/* Answered: the client keeps going and pings again later. */
	m.type = RXBNECK_T_PONG;
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(rxbneck_client_wait(c, 150), 0);
	assert_int_equal(frame_recv(f.fd, &m, 0), 0);
	assert_int_equal(m.type, RXBNECK_T_PING);
	/* Not answered: after the idle timeout the client gives up. */
	assert_int_equal(rxbneck_client_wait(c, 1000), RXBNECK_ETIMEDOUT);
	assert_int_equal(s.error_rc, RXBNECK_ETIMEDOUT);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static struct rxbneck_pause_window window(uint64_t stop, uint64_t dur_us,
					  uint64_t period_us, uint32_t count)
{
	struct rxbneck_pause_window w;

	memset(&w, 0, sizeof(w));
	w.first_stop_ns = stop;
	w.pause.port = 1;
	w.pause.duration_us = dur_us;
	w.pause.period_us = period_us;
	w.pause.repeat_count = count;
	return w;
}

static void test_pause_window_math(void **state)
{
	const uint64_t T = 1000 * MS;	/* first stop */
	struct rxbneck_pause_window w;
	uint64_t u;

	(void)state;
	/* One-shot: [T, T + 3 ms). */
	w = window(T, 3000, 0, 1);
	assert_int_equal(rxbneck_pause_window_state(&w, T - 1, &u), 0);
	assert_int_equal(u, T);
	assert_int_equal(rxbneck_pause_window_state(&w, T, &u), 1);
	assert_int_equal(u, T + 3 * MS);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 3 * MS - 1, &u), 1);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 3 * MS, &u), 0);
	assert_int_equal(u, UINT64_MAX);
	assert_int_equal(rxbneck_pause_window_state(&w, T, NULL), 1);

	/* Periodic, 2 windows of 3 ms every 10 ms. */
	w = window(T, 3000, 10000, 2);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 1 * MS, &u), 1);
	assert_int_equal(u, T + 3 * MS);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 5 * MS, &u), 0);
	assert_int_equal(u, T + 10 * MS);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 12 * MS, &u), 1);
	assert_int_equal(u, T + 13 * MS);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 14 * MS, &u), 0);
	assert_int_equal(u, UINT64_MAX);	/* that was the last one */
	assert_int_equal(rxbneck_pause_window_state(&w, T + 21 * MS, &u), 0);
	assert_int_equal(u, UINT64_MAX);

	/* Unbounded: window 1000 still there. */
	w = window(T, 3000, 10000, 0);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 10000 * MS + 2 * MS, &u), 1);
	assert_int_equal(u, T + 10003 * MS);
	assert_int_equal(rxbneck_pause_window_state(&w, T + 10000 * MS + 4 * MS, &u), 0);
	assert_int_equal(u, T + 10010 * MS);

	/* Cancelled. */
	w.pause.flags = RXBNECK_PAUSE_CANCEL;
	assert_int_equal(rxbneck_pause_window_state(&w, T + 1 * MS, &u), 0);
	assert_int_equal(u, UINT64_MAX);
}

/*
 * Wait, up to about a second, until the kernel stamps packets as they
 * arrive. It does so only while some socket asks for receive timestamps,
 * and turns that on from a work item after the first one asks: until it
 * runs, a packet is stamped when it is read. A daemon's PAUSE comes long
 * after the client connected; here it follows the connect within
 * milliseconds. Probed on a datagram to itself read 2 ms after it was
 * sent (the client's socket keeps the stamping on meanwhile).
 */
static void wait_stamped_at_arrival(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timespec nap = { 0, 2 * (long)MS };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	for (int i = 0; i < 500; i++) {
		union {
			char buf[CMSG_SPACE(sizeof(struct timespec))];
			struct cmsghdr align;
		} ctl;
		char byte;
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf) };
		struct timespec sent, stamp;
		struct cmsghdr *h;

		assert_int_equal(clock_gettime(CLOCK_REALTIME, &sent), 0);
		assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)), 1);
		while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
			;
		nap.tv_nsec = 2 * (long)MS;
		assert_int_equal(recvmsg(fd, &m, 0), 1);
		h = CMSG_FIRSTHDR(&m);
		assert_non_null(h);
		memcpy(&stamp, CMSG_DATA(h), sizeof(stamp));
		if ((stamp.tv_sec - sent.tv_sec) * 1000000000LL + (stamp.tv_nsec - sent.tv_nsec) <
		    (long long)MS) {
			close(fd);
			return;
		}
	}
	fail_msg("packets still stamped when read, not on arrival, after 500 tries");
}

/*
 * A PAUSE that waits in the socket while the sender is busy keeps its
 * phase: it is dated by its arrival (the kernel's receive timestamp), not
 * by the read 80 ms later. Dated by the read, every window would move 80 ms
 * late - the receiver's off-CPU windows repeat every ~12 ms, so that is a
 * random phase.
 */
static void test_pause_dated_by_arrival(void **state)
{
	const uint64_t late_ns = 80 * MS, conv_ns = 1 * MS;
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, 0);
	struct timespec nap = { 0, (long)late_ns };
	struct pollfd pfd = { .fd = rxbneck_client_fd(c), .events = POLLIN };
	struct rxbp_msg m;
	uint64_t sent_ns, ready_ns, read_ns;

	(void)state;
	wait_stamped_at_arrival();
	m = pause_msg(3000, 8000, 12000, 10);
	sent_ns = rxbneck_now_ns();
	srv_send(&f, &m);
	/*
	 * Wait until the frame is there (loopback delivers it within the send,
	 * or a softirq thread does soon after on a loaded host), then read it
	 * late_ns later: its date must be its arrival, not the read.
	 */
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	ready_ns = rxbneck_now_ns();
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
	read_ns = rxbneck_now_ns();
	assert_int_equal(pump(c), 1);
	assert_int_equal(s.pauses, 1);
	/*
	 * The arrival is the socket's CLOCK_REALTIME stamp moved to the
	 * monotonic clock through one (real, mono) pair read between two
	 * monotonic reads: off by up to half that pair's width (10 us when it
	 * is read within 20 us, more on a host too busy for that in four
	 * tries). conv_ns bounds it here, small beside the late_ns the check
	 * tells apart.
	 */
	assert_true(s.pause.received_ns + conv_ns >= sent_ns);
	assert_true(s.pause.received_ns <= ready_ns + conv_ns);
	assert_true(s.pause.received_ns + late_ns <= read_ns + conv_ns);
	assert_int_equal(s.pause.first_stop_ns,
			 s.pause.received_ns + 3 * MS - s.pause.lead_us * 1000);
	rxbneck_client_close(c);
	fake_stop(&f);
}

static void test_lead_larger_than_start(void **state)
{
	struct fake f;
	struct client_seen s = { 0 };
	struct rxbneck_client *c = connected(&f, &s, 60000, 0);
	/* RTT 2 ms, window starts in 1 ms for 50 ms: pause at once. */
	struct rxbp_msg m = pause_msg(1000, 50000, 0, 1);
	uint64_t u;

	(void)state;
	srv_send(&f, &m);
	assert_int_equal(pump(c), 1);
	assert_int_equal(s.pause.first_stop_ns, s.pause.received_ns - 1 * MS);
	assert_int_equal(rxbneck_client_pause_state(c, s.pause.received_ns, &u), 1);
	assert_int_equal(u, s.pause.received_ns + 49 * MS);
	rxbneck_client_close(c);
	fake_stop(&f);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_config_and_validation),
	cmocka_unit_test(test_connect_refused),
	cmocka_unit_test(test_resolve_failure),
	cmocka_unit_test(test_handshake_hello_contents_and_early_rate),
	cmocka_unit_test(test_pushes_ping_unknown_and_sends),
	cmocka_unit_test(test_streams),
	cmocka_unit_test(test_hello_answered_with_error),
	cmocka_unit_test(test_hello_timeout),
	cmocka_unit_test(test_first_frame_not_ack),
	cmocka_unit_test(test_garbage_from_daemon),
	cmocka_unit_test(test_direction_before_payload),
	cmocka_unit_test(test_bye_eof_and_reconnect),
	cmocka_unit_test(test_keepalive),
	cmocka_unit_test(test_pause_window_math),
	cmocka_unit_test(test_pause_dated_by_arrival),
	cmocka_unit_test(test_lead_larger_than_start),
)
