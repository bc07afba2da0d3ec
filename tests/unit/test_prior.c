// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/model/prior (costs before a flow's first packet)
 * and daemon/collect/sockowner (who holds a port's socket): the truesize
 * formula against the kernel's values seen on the test VM (K = 8388608 /
 * 2304 for 1456-byte datagrams over loopback); another flow's costs taken
 * without its placement; and the owner of a socket this test opens itself,
 * read by a pinned thread blocked on it - its tid, CPU and SO_RCVBUF are
 * known here independently; the defaults with a calibrated cost; and the
 * calibration itself, its copy part against a copy timed here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/collect/recvcost.h"
#include "daemon/collect/sockowner.h"
#include "daemon/model/prior.h"
#include "tests/unit/unit_main.h"

static void test_truesize(void **state)
{
	(void)state;
	/* 1456 + 62 + 64 = 1582 -> 1600 + 320 = 1920 -> 2048 + 256. */
	assert_true(prior_truesize_bytes(1456) == 2304);
	/* 8192 + 126 -> 8320 + 320 -> 16384 + 256. */
	assert_true(prior_truesize_bytes(8192) == 16640);
	assert_true(prior_truesize_bytes(1) == 768);	/* 128 + 320 -> 512 + 256 */
}

static void test_default_and_from(void **state)
{
	struct learn l, other;

	(void)state;
	prior_default(&l, 1456);
	assert_int_equal(l.origin, VALUE_HISTORY);
	assert_int_equal(l.prior, LEARN_PRIOR_DEFAULT);
	assert_true(fabs(ewma_ratio_value(&l.cpu_ns_per_pkt) - (1500 + 0.25 * 1456)) < 1e-9);
	assert_true(ewma_ratio_value(&l.pkts_per_wakeup) == 1);
	assert_int_equal(l.ncpus, 0);
	prior_place(&l, -1, 0);
	assert_int_equal(l.ncpus, 0);
	prior_place(&l, 1, 4194304);
	assert_int_equal(l.ncpus, 1);
	assert_int_equal(l.cpu[0], 1);
	assert_int_equal(l.rcvbuf_bytes, 4194304);

	learn_init(&other);
	ewma_ratio_set(&other.cpu_ns_per_pkt, 1180, 640);
	ewma_ratio_set(&other.pkts_per_wakeup, 250, 10);
	ewma_ratio_set(&other.pkts_per_wakeup_ovf, 40, 5000);
	other.rcvbuf_bytes = 1000;
	other.ncpus = 1;
	other.cpu[0] = 0;
	other.cpu_share[0] = 1;
	other.origin = VALUE_MEASURED;
	prior_from(&l, &other, 9000);
	assert_int_equal(l.prior, LEARN_PRIOR_HOST);
	assert_int_equal(l.prior_port, 9000);
	assert_true(ewma_ratio_value(&l.cpu_ns_per_pkt) == 1180);
	/* The packets per wake-up where it overflowed, which the cost's
	 * wake-up share is taken at, come with the fit. */
	assert_true(ewma_ratio_value(&l.pkts_per_wakeup_ovf) == 40);
	assert_true(l.pkts_per_wakeup_ovf.num == other.pkts_per_wakeup_ovf.num);
	assert_int_equal(l.rcvbuf_bytes, 4194304);	/* this socket's, not the other's */
	assert_int_equal(l.ncpus, 0);			/* placement is not taken */
	/* A new HELLO finds no socket: the other flow's CPU would be a guess. */
	l.ncpus = 1;
	prior_place(&l, -1, 0);
	assert_int_equal(l.ncpus, 0);
}

static void test_default_calibrated(void **state)
{
	const double bad[] = { NAN, 0, -5, INFINITY };
	struct learn l;

	(void)state;
	prior_default_calibrated(&l, 1456, 789);
	assert_int_equal(l.prior, LEARN_PRIOR_DEFAULT);	/* still DEFAULT_COST */
	assert_int_equal(l.origin, VALUE_HISTORY);
	assert_true(ewma_ratio_value(&l.cpu_ns_per_pkt) == 789);
	assert_true(l.cpu_ns_per_pkt.den == LEARN_MIN_PKTS);	/* weighs as little */
	assert_true(ewma_ratio_value(&l.pkts_per_wakeup) == PRIOR_PKTS_PER_WAKEUP);
	assert_true(ewma_ratio_value(&l.truesize_per_pkt) == 2304);
	/* No measurement: the constants, 1500 + 0.25 x payload. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		prior_default_calibrated(&l, 1000, bad[i]);
		assert_true(fabs(ewma_ratio_value(&l.cpu_ns_per_pkt) - 1750) < 1e-9);
	}
}

static double thread_ns(void)
{
	struct timespec t;

	assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t), 0);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The median CPU ns of copying @bytes, the source in cache (a datagram's copy is no cheaper). */
static double copy_ns(size_t bytes)
{
	static char src[60000], dst[60000];
	double v[15], t0;

	for (int r = 0; r < 15; r++) {
		memset(src, r, bytes);
		t0 = thread_ns();
		memcpy(dst, src, bytes);
		__asm__ volatile("" : : "r"(dst) : "memory");
		v[r] = thread_ns() - t0;
	}
	for (int i = 1; i < 15; i++)	/* insertion sort: 15 values */
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[7];
}

static void test_recvcost(void **state)
{
	struct recvcost rc;
	double small, big, again, copy;

	(void)state;
	recvcost_init(&rc);
	assert_true(rc.gap_ns == RECVCOST_GAP_NS);
	small = recvcost_ns(&rc, -1, 64);
	/* Within the gap: no new measurement, the nearest size's (none on cpu0). */
	assert_true(recvcost_ns(&rc, -1, 1000) == small);
	assert_true(isnan(recvcost_ns(&rc, 0, 1000)));
	assert_int_equal(rc.n, 1);
	rc.gap_ns = 0;
	big = recvcost_ns(&rc, 0, 60000);
	copy = copy_ns(60000);
	assert_true(small > 0 && small < 1e6);	/* a system call: under a millisecond */
	/* Reading 60000 bytes more costs at least the copy of them, timed here
	 * by a second method (half of it: the kernel's copy is no faster). */
	assert_true(big - small > 0.5 * copy);
	/* Measured once per CPU and size, the RECVCOST_SIZES latest remembered. */
	again = recvcost_ns(&rc, -1, 64.2);
	assert_true(again == small);
	assert_int_equal(rc.n, 2);
	assert_true(recvcost_ns(&rc, 0, 64) > 0);	/* another CPU: measured again */
	assert_int_equal(rc.n, 3);
	assert_int_equal(rc.v[2].cpu, 0);
	for (int b = 100; rc.n < RECVCOST_SIZES; b += 100)
		assert_true(recvcost_ns(&rc, -1, b) > 0);
	assert_true(recvcost_ns(&rc, -1, 1e9) > 0);	/* clamped to 65507 */
	assert_int_equal(rc.v[0].payload_bytes, 65507);	/* replaced the oldest */
	assert_true(recvcost_ns(&rc, -1, 60000) > 0);
	assert_int_equal(rc.v[1].payload_bytes, 60000);
	assert_int_equal(rc.v[1].cpu, -1);
}

static void test_parsers(void **state)
{
	uint64_t ino = 0, a = 0;
	long nr = -1;

	(void)state;
	assert_int_equal(sockowner_parse_fdlink("socket:[12345]", &ino), 0);
	assert_true(ino == 12345);
	assert_int_equal(sockowner_parse_fdlink("socket:[12345", &ino), -EINVAL);
	assert_int_equal(sockowner_parse_fdlink("socket:[]", &ino), -EINVAL);
	assert_int_equal(sockowner_parse_fdlink("pipe:[7]", &ino), -EINVAL);
	assert_int_equal(sockowner_parse_fdlink("socket:[-1]", &ino), -EINVAL);
	assert_int_equal(sockowner_parse_syscall("299 0x5 0x7ff 0x40 0x0 0x0 0x0 0x7ffe 0x7f\n",
						 &nr, &a), 0);
	assert_int_equal(nr, 299);
	assert_true(a == 5);
	assert_int_equal(sockowner_parse_syscall("running\n", &nr, &a), -EINVAL);
	assert_int_equal(sockowner_parse_syscall("-1 0x7ffe 0x7f\n", &nr, &a), -EINVAL);
	assert_int_equal(sockowner_parse_syscall("0 5", &nr, &a), -EINVAL);
	assert_int_equal(sockowner_parse_syscall("", &nr, &a), -EINVAL);
}

struct reader {
	int fd;
	int cpu;
	volatile pid_t tid;
};

static void *read_one(void *arg)
{
	struct reader *r = arg;
	cpu_set_t set;
	char b;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return NULL;
	r->tid = (pid_t)syscall(SYS_gettid);
	(void)recv(r->fd, &b, 1, 0);
	return NULL;
}

static void test_owner(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct reader r = { .cpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0 };
	struct sockowner o;
	pthread_t th;
	int v = 0, err = -1;
	socklen_t vl = sizeof(v);

	(void)state;
	r.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(r.fd >= 0);
	assert_int_equal(bind(r.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(r.fd, (struct sockaddr *)&a, &len), 0);
	assert_int_equal(getsockopt(r.fd, SOL_SOCKET, SO_RCVBUF, &v, &vl), 0);
	assert_int_equal(pthread_create(&th, NULL, read_one, &r), 0);
	/* Until the thread is in recv(): its syscall file names the fd then. */
	for (int i = 0; i < 200; i++) {
		usleep(5000);
		if (!r.tid)
			continue;
		err = sockowner_find(ntohs(a.sin_port), &o);
		if (!err && o.tid == r.tid)
			break;
	}
	assert_int_equal(err, 0);
	assert_int_equal(o.pid, getpid());
	assert_int_equal(o.tid, r.tid);
	assert_int_equal(o.fd, r.fd);
	assert_string_equal(o.how, "the thread blocked reading the socket");
	assert_int_equal(o.cpu, r.cpu);
	assert_true(o.pinned);
	assert_int_equal(o.rcvbuf_bytes, (uint32_t)v);
	/* Wake the reader, then nobody holds the port. */
	assert_true(sendto(r.fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1);
	pthread_join(th, NULL);
	close(r.fd);
	assert_int_equal(sockowner_find(ntohs(a.sin_port), &o), -ENOENT);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_truesize),
	cmocka_unit_test(test_default_and_from),
	cmocka_unit_test(test_default_calibrated),
	cmocka_unit_test(test_recvcost),
	cmocka_unit_test(test_parsers),
	cmocka_unit_test(test_owner),
)
