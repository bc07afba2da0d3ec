// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sendsrv under abuse: up to 1000 concurrent connections doing random,
 * truncated, oversized and valid things, connecting and dropping, while
 * rates and pauses are published, for RXB_STRESS_SECONDS (default 3).
 *
 * Checked: the loop keeps answering (a well-behaved librxbneck sender gets
 * its RATEs and PONGs; the "status" probe gets the lock quickly), heap use
 * stays within sendsrv_memory_bound(), every connection is gone after the
 * storm, and (in the SAN build) nothing leaks. The module-level version of
 * the daemon's 1000-connection robustness check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

#define MS RXB_NSEC_PER_MSEC
#define FLOW 9000
#define MAX_ATTACKERS 1000

struct harness {
	struct sendsrv_thread t;	/* first: the fd callbacks' ctx */
	uint64_t hellos, goodbyes;
};

static int h_hello(void *ctx, const struct sendsrv_peer *p)
{
	(void)p;
	((struct harness *)ctx)->hellos++;
	return 0;
}

static void h_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	(void)p;
	(void)why;
	((struct harness *)ctx)->goodbyes++;
}

static void h_report(void *ctx, const struct sendsrv_peer *p, const struct rxbneck_report *r)
{
	(void)ctx;
	(void)p;
	(void)r;
}

/* ------------------------------------------------------- attackers -- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t frame(uint8_t *buf, uint8_t type, uint32_t seq)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.seq = seq;
	switch (type) {
	case RXBNECK_T_HELLO:
		m.u.hello.flow_port = (uint16_t)(FLOW + rnd() % 4);
		m.u.hello.flow_proto = 17;
		m.u.hello.subscribe = (uint16_t)(rnd() % 4);
		m.u.hello.payload_bytes = 1472;
		m.u.hello.rtt_us = (uint32_t)(rnd() % 20000);
		break;
	case RXBNECK_T_SUBSCRIBE:
		m.u.subscribe.subscribe = (uint16_t)(rnd() % 4);
		break;
	case RXBNECK_T_REPORT:
		m.u.report.port = FLOW;
		break;
	default:
		m.u.ping.token = rnd();
		break;
	}
	return rxbp_encode(buf, RXBP_ENCODE_MAX, &m);
}

static int attacker_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int small = 2048;

	if (fd < 0)
		return -1;
	/* Some never read: small buffers make them overflow sooner. */
	if (rnd() % 4 == 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One random action on attacker @i. */
static void attack(int *fds, uint32_t *seqs, int i, uint16_t port)
{
	uint8_t buf[8192];
	size_t n = 0;
	int fd = fds[i];

	if (fd < 0) {
		fds[i] = attacker_connect(port);
		seqs[i] = 0;
		return;
	}
	switch (rnd() % 24) {
	case 0:			/* valid HELLO (maybe a second one) */
		n = frame(buf, RXBNECK_T_HELLO, ++seqs[i]);
		break;
	case 1:			/* random bytes */
		n = 1 + rnd() % 300;
		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd();
		break;
	case 2:			/* a valid frame cut short, then silence */
		n = frame(buf, RXBNECK_T_HELLO, ++seqs[i]);
		n = rnd() % n;
		break;
	case 3:			/* oversized: header says 1 MB, send 8 KB */
		n = frame(buf, RXBNECK_T_PING, ++seqs[i]);
		buf[9] = 0x10;
		memset(buf + n, 0x55, sizeof(buf) - n);
		n = sizeof(buf);
		break;
	case 4:
	case 5:			/* keepalive-ish traffic */
		n = frame(buf, RXBNECK_T_PING, ++seqs[i]);
		break;
	case 6:
		n = frame(buf, rnd() % 2 ? RXBNECK_T_SUBSCRIBE : RXBNECK_T_REPORT,
			  ++seqs[i]);
		break;
	case 7:			/* a valid frame with a bit flipped */
		n = frame(buf, RXBNECK_T_HELLO, ++seqs[i]);
		buf[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
		break;
	case 8:			/* read (some attackers do) */
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		return;
	case 9:			/* abrupt close, sometimes with a reset */
		if (rnd() % 2) {
			struct linger lg = { 1, 0 };

			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		close(fd);
		fds[i] = -1;
		return;
	default:		/* idle */
		return;
	}
	if (n)
		(void)send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static unsigned int stress_seconds(void)
{
	const char *e = getenv("RXB_STRESS_SECONDS");
	long v = e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v < 100000 ? (unsigned int)v : 3;
}

static int attacker_count(void)
{
	struct rlimit rl;
	int want = MAX_ATTACKERS;

	/* Both ends are in this process: 2 fds per connection plus spares. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * MAX_ATTACKERS + 200 && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < 2 * MAX_ATTACKERS + 200 ? rl.rlim_max :
			      2 * MAX_ATTACKERS + 200;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < 2 * (rlim_t)want + 200)
		want = (int)(rl.rlim_cur - 200) / 2;
	assert_true(want >= 200);
	return want;
}

static void test_storm(void **state)
{
	static int fds[MAX_ATTACKERS];
	static uint32_t seqs[MAX_ATTACKERS];
	struct sendsrv_ops ops = { .fd_add = sendsrv_test_fd_add, .fd_mod = sendsrv_test_fd_mod, .fd_del = sendsrv_test_fd_del,
				   .on_hello = h_hello, .on_goodbye = h_goodbye,
				   .on_report = h_report };
	struct rxbneck_client_config cfg;
	struct rxbneck_client *good;
	struct sendsrv_limits l;
	struct sendsrv_stats st = { 0 };
	struct rxbneck_rate got;
	struct harness h;
	int n = attacker_count();
	uint64_t t_end, t_cap, next_pub = 0, epoch = 0, worst_lock_ns = 0, probes = 0;
	size_t peak_mem = 0, bound;
	int good_frames = 0;

	(void)state;
	memset(&h, 0, sizeof(h));
	ops.ctx = &h;
	sendsrv_limits_default(&l);
	l.max_conns = (uint32_t)n / 2;	/* the cap is hit too */
	l.max_conns_per_source = 0;	/* all from 127.0.0.1: the global cap is under test */
	l.hello_timeout_ns = 500 * MS;
	l.idle_timeout_ns = 1500 * MS;
	l.max_out_bytes = 2048;
	l.rate_change_frac = 0;
	sendsrv_thread_start(&h.t, &l, &ops);

	/* A well-behaved sender, connected before the storm. */
	rxbneck_client_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = h.t.port;
	cfg.hello.flow_port = FLOW;
	cfg.hello.payload_bytes = 1472;
	good = rxbneck_client_new(&cfg);
	assert_non_null(good);
	assert_int_equal(rxbneck_client_connect(good), 0);

	for (int i = 0; i < n; i++)
		fds[i] = -1;
	t_end = rxb_mono_ns() + stress_seconds() * RXB_NSEC_PER_SEC;
	/*
	 * Until the connection cap has been hit too (st is read every 20 ms):
	 * a slow run (sanitizers on a loaded machine) may need longer to fill
	 * it, and the cap's behaviour is what is under test, not the speed.
	 */
	t_cap = t_end + 3 * stress_seconds() * RXB_NSEC_PER_SEC;
	while (rxb_mono_ns() < t_end || (st.rejected_full == 0 && rxb_mono_ns() < t_cap)) {
		uint64_t t0;
		int rc;

		for (int k = 0; k < 100; k++)
			attack(fds, seqs, (int)(rnd() % (uint64_t)n), h.t.port);
		usleep(1000);
		if (rxb_mono_ns() >= next_pub) {
			/* Every 20 ms: a rate and a pause (the "epoch"), and a
			 * status probe timing how long the lock takes. */
			struct rxbneck_rate r = { .port = FLOW, .rate_bps = 1000000000 + epoch,
						  .epoch = ++epoch };
			struct rxbneck_pause p = { .port = FLOW, .duration_us = 2000,
						   .start_in_us = 50000, .repeat_count = 1,
						   .epoch = epoch };

			t0 = rxb_mono_ns();
			pthread_mutex_lock(&h.t.mu);
			if (rxb_mono_ns() - t0 > worst_lock_ns)
				worst_lock_ns = rxb_mono_ns() - t0;
			probes++;
			sendsrv_publish_rate(h.t.s, &r, NULL);
			sendsrv_publish_pause(h.t.s, &p);
			sendsrv_stats(h.t.s, &st);
			pthread_mutex_unlock(&h.t.mu);
			if (st.mem_bytes > peak_mem)
				peak_mem = st.mem_bytes;
			assert_true(st.mem_bytes <= st.mem_bound_bytes);
			assert_true(st.conns_hello + st.conns_active <= l.max_conns);
			next_pub = rxb_mono_ns() + 20 * MS;
		}
		rc = rxbneck_client_process(good);
		if (rc < 0)
			fail_msg("good sender dropped: %s", rxbneck_client_errmsg(good));
		good_frames += rc;
	}

	/* The well-behaved sender kept up throughout. */
	assert_int_equal(rxbneck_client_wait(good, 200) >= 0, 1);
	assert_int_equal(rxbneck_client_latest_rate(good, &got), 0);
	assert_true(got.epoch + 5 >= epoch);
	assert_true(good_frames > (int)epoch);

	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	rxbneck_client_close(good);

	/* Everything drains: closing lingers end within 2 s. */
	for (int i = 0; i < 400; i++) {
		pthread_mutex_lock(&h.t.mu);
		sendsrv_stats(h.t.s, &st);
		pthread_mutex_unlock(&h.t.mu);
		if (st.conns_hello + st.conns_active + st.conns_closing == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(st.conns_hello + st.conns_active + st.conns_closing, 0);
	bound = st.mem_bound_bytes;

	printf("storm: %u s, %d attackers, %llu accepted, %llu hellos, %llu goodbyes, "
	       "%llu frames in, %llu out, %llu rate / %llu pause pushes\n",
	       stress_seconds(), n, (unsigned long long)st.accepted,
	       (unsigned long long)h.hellos, (unsigned long long)h.goodbyes,
	       (unsigned long long)st.frames_in, (unsigned long long)st.frames_out,
	       (unsigned long long)st.rate_pushes, (unsigned long long)st.pause_pushes);
	printf("storm: errors sent:");
	for (unsigned int c = 1; c <= RXBNECK_ERR_MAX_; c++)
		if (st.errors_sent[c])
			printf(" %s=%llu", rxbneck_error_name(c),
			       (unsigned long long)st.errors_sent[c]);
	printf("\nstorm: heap peak %zu bytes, now %zu, bound %zu; worst status wait %.1f ms "
	       "over %llu probes; good sender handled %d frames\n",
	       peak_mem, st.mem_bytes, bound, (double)worst_lock_ns / 1e6,
	       (unsigned long long)probes, good_frames);
	assert_int_equal(h.hellos, h.goodbyes);
	/*
	 * The loop never held the lock for as long as a sender may stay
	 * silent (idle_timeout_ns): a loop stuck on the storm would. Not a
	 * latency target: on a VM whose vCPU the host deschedules, a wait of
	 * 517 ms was seen with a loop doing nothing wrong.
	 */
	assert_true(worst_lock_ns < l.idle_timeout_ns);
	assert_true(st.errors_sent[RXBNECK_ERR_BAD_MAGIC] > 0);
	assert_true(st.errors_sent[RXBNECK_ERR_TOO_LARGE] > 0);
	assert_true(st.rejected_full > 0);

	sendsrv_thread_finish(&h.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storm),
	};

	rxb_log_set_level(RXB_LOG_ERR);
	return cmocka_run_group_tests_name("sendsrv_stress", tests, NULL, NULL);
}
