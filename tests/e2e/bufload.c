// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-bufload: the load of the receive-buffer experiment
 * (docs/buffer.md, tests/e2e/buffer.sh) and of its integration test.
 *
 *   rxbneck-bufload send --to ADDR --port P --flows N --rate BPS
 *                        [--size BYTES] [--seconds S]
 *	N UDP senders, each its own socket (its own source port) at BPS
 *	payload bits per second, paced from a random phase: what Liu et
 *	al.'s clients are to their server. One thread; prints one JSON line.
 *
 *   rxbneck-bufload recv --port P [--bind ADDR] [--rcvbuf BYTES]
 *                        [--seconds S] [--work-ns NS] [--idle-ms MS]
 *	One UDP socket (SO_RCVBUF BYTES: the kernel stores twice that)
 *	read with recvmmsg(), NS of CPU work per datagram (its handling),
 *	for S seconds after the first datagram or until MS without one.
 *	Samples its own SO_MEMINFO every 100 ms (the buffer's size and the
 *	memory held, whoever changes them) and prints one JSON line:
 *	datagrams and bytes read, the socket's drops (buffer exhaustion),
 *	goodput, mean and peak buffer and memory held.
 *
 * Standalone (libc only). Errors: a message and exit status 1; usage: 2.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FLOWS	256
#define BATCH		64
#define MAX_DGRAM	65507
#define SAMPLE_NS	100000000ULL
/* A sender sends a datagram up to this early instead of spinning for it:
 * short against the receiver's off-CPU windows (milliseconds). */
#define LEAD_NS		100000ULL

struct opts {
	const char *mode, *to, *bind;
	unsigned port, flows, size, idle_ms;
	double rate_bps, seconds;
	long rcvbuf;
	uint64_t work_ns;
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "rxbneck-bufload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(const char *msg)
{
	fprintf(stderr, "rxbneck-bufload: %s\n"
		"usage: rxbneck-bufload send --to ADDR --port P --flows N --rate BPS "
		"[--size BYTES] [--seconds S]\n"
		"       rxbneck-bufload recv --port P [--bind ADDR] [--rcvbuf BYTES] "
		"[--seconds S] [--work-ns NS] [--idle-ms MS]\n", msg);
	exit(2);
}

static double num(const char *s, const char *opt, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "rxbneck-bufload: %s: '%s' is not a number in [%g, %g]\n",
			opt, s, lo, hi);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->size = 1472;
	o->seconds = 10;
	o->idle_ms = 2000;
	o->bind = "0.0.0.0";
	if (argc < 2)
		usage("no mode");
	o->mode = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage("an option without its value");
		i++;
		if (!strcmp(a, "--to"))
			o->to = v;
		else if (!strcmp(a, "--bind"))
			o->bind = v;
		else if (!strcmp(a, "--port"))
			o->port = (unsigned)num(v, a, 1, 65535);
		else if (!strcmp(a, "--flows"))
			o->flows = (unsigned)num(v, a, 1, MAX_FLOWS);
		else if (!strcmp(a, "--rate"))
			o->rate_bps = num(v, a, 1e3, 1e11);
		else if (!strcmp(a, "--size"))
			o->size = (unsigned)num(v, a, 1, MAX_DGRAM);
		else if (!strcmp(a, "--seconds"))
			o->seconds = num(v, a, 0.1, 86400);
		else if (!strcmp(a, "--rcvbuf"))
			o->rcvbuf = (long)num(v, a, 0, INT_MAX / 2);
		else if (!strcmp(a, "--work-ns"))
			o->work_ns = (uint64_t)num(v, a, 0, 1e9);
		else if (!strcmp(a, "--idle-ms"))
			o->idle_ms = (unsigned)num(v, a, 1, 600000);
		else
			usage("unknown option");
	}
	if (!o->port)
		usage("--port is required");
	if (!strcmp(o->mode, "send") && (!o->to || !o->flows || !o->rate_bps))
		usage("send needs --to, --flows and --rate");
	if (strcmp(o->mode, "send") && strcmp(o->mode, "recv"))
		usage("mode is send or recv");
}

static struct sockaddr_in addr_of(const char *ip, unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		usage("not an IPv4 address");
	return a;
}

/* ------------------------------------------------------------ send -- */

static int do_send(const struct opts *o)
{
	struct sockaddr_in to = addr_of(o->to, o->port);
	uint64_t gap = (uint64_t)(o->size * 8.0 / o->rate_bps * 1e9);
	uint64_t next[MAX_FLOWS], sent[MAX_FLOWS] = { 0 }, errs = 0, t0, end, t;
	int fd[MAX_FLOWS];
	char *pkt = calloc(1, o->size);

	if (!pkt)
		die("calloc");
	srand((unsigned)now_ns(CLOCK_REALTIME));
	t0 = now_ns(CLOCK_MONOTONIC) + 10000000ULL;
	for (unsigned f = 0; f < o->flows; f++) {
		fd[f] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[f] < 0)
			die("socket");
		if (connect(fd[f], (struct sockaddr *)&to, sizeof(to)))
			die("connect");
		next[f] = t0 + (uint64_t)((double)rand() / RAND_MAX * (double)gap);
	}
	end = t0 + (uint64_t)(o->seconds * 1e9);
	for (;;) {
		unsigned f = 0;

		for (unsigned i = 1; i < o->flows; i++)
			if (next[i] < next[f])
				f = i;
		if (next[f] >= end)
			break;
		/* Up to LEAD_NS early rather than spin: the CPU is shared. */
		t = now_ns(CLOCK_MONOTONIC);
		if (next[f] > t + LEAD_NS) {
			uint64_t w = next[f] - LEAD_NS;
			struct timespec ts = { .tv_sec = (time_t)(w / 1000000000ULL),
					       .tv_nsec = (long)(w % 1000000000ULL) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			continue;
		}
		memcpy(pkt, &sent[f], sizeof(sent[f]) < o->size ? sizeof(sent[f]) : o->size);
		if (send(fd[f], pkt, o->size, 0) == (ssize_t)o->size)
			sent[f]++;
		else
			errs++;	/* ENOBUFS, ECONNREFUSED: the receiver's business */
		next[f] += gap;
	}
	t = now_ns(CLOCK_MONOTONIC);
	{
		uint64_t total = 0;

		for (unsigned f = 0; f < o->flows; f++) {
			total += sent[f];
			close(fd[f]);
		}
		printf("{\"ok\":true,\"flows\":%u,\"rate_per_flow_bps\":%.0f,\"size\":%u,"
		       "\"sent_pkts\":%" PRIu64 ",\"send_errors\":%" PRIu64 ",\"seconds\":%.3f,"
		       "\"offered_bps\":%.0f}\n", o->flows, o->rate_bps, o->size, total, errs,
		       (t - t0) / 1e9, total * o->size * 8.0 / ((t - t0) / 1e9));
	}
	free(pkt);
	return 0;
}

/* ------------------------------------------------------------ recv -- */

/* Loop iterations per ns of this thread's CPU time, measured over 20 ms. */
static double calibrate(void)
{
	volatile uint64_t x = 0;
	uint64_t n = 0, c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), c;

	do {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
		n += 10000;
		c = now_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (c - c0 < 20000000ULL);
	return (double)n / (double)(c - c0);
}

static void work(uint64_t iters)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < iters; i++)
		x += i;
}

struct memstat {
	uint64_t n;
	double rcvbuf_sum, rmem_sum;
	uint32_t rcvbuf_peak, rmem_peak, rcvbuf_min;
	uint32_t drops;
};

static void sample(int fd, struct memstat *m)
{
	uint32_t mi[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mi);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len))
		die("getsockopt(SO_MEMINFO)");
	m->n++;
	m->rcvbuf_sum += mi[SK_MEMINFO_RCVBUF];
	m->rmem_sum += mi[SK_MEMINFO_RMEM_ALLOC];
	if (mi[SK_MEMINFO_RCVBUF] > m->rcvbuf_peak)
		m->rcvbuf_peak = mi[SK_MEMINFO_RCVBUF];
	if (!m->rcvbuf_min || mi[SK_MEMINFO_RCVBUF] < m->rcvbuf_min)
		m->rcvbuf_min = mi[SK_MEMINFO_RCVBUF];
	if (mi[SK_MEMINFO_RMEM_ALLOC] > m->rmem_peak)
		m->rmem_peak = mi[SK_MEMINFO_RMEM_ALLOC];
	if (len / sizeof(uint32_t) > SK_MEMINFO_DROPS)
		m->drops = mi[SK_MEMINFO_DROPS];
}

static int do_recv(const struct opts *o)
{
	struct sockaddr_in me = addr_of(o->bind, o->port);
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	static char bufs[BATCH][MAX_DGRAM];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct memstat m = { 0 };
	uint64_t pkts = 0, bytes = 0, first = 0, last = 0, next_sample, t, iters = 0;
	uint32_t drops0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), val = (int)o->rcvbuf;
	struct stat st;

	if (fd < 0)
		die("socket");
	if (o->rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
		die("setsockopt(SO_RCVBUF)");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("setsockopt(SO_RCVTIMEO)");
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)))
		die("bind");
	if (fstat(fd, &st))
		die("fstat");
	if (o->work_ns)
		iters = (uint64_t)(calibrate() * (double)o->work_ns);
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = bufs[i], .iov_len = MAX_DGRAM };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	sample(fd, &m);
	drops0 = m.drops;
	m = (struct memstat){ 0 };
	fprintf(stderr, "ready port %u inode %llu pid %d\n", o->port,
		(unsigned long long)st.st_ino, (int)getpid());
	next_sample = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);

		t = now_ns(CLOCK_MONOTONIC);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die("recvmmsg");
		for (int i = 0; i < n; i++) {
			bytes += msgs[i].msg_len;
			work(iters);
		}
		if (n > 0) {
			pkts += (uint64_t)n;
			if (!first)
				first = t;
			last = t;
		}
		if (t >= next_sample) {
			sample(fd, &m);
			next_sample += SAMPLE_NS;
			if (next_sample < t)
				next_sample = t + SAMPLE_NS;
		}
		if (first && (t - first >= (uint64_t)(o->seconds * 1e9) ||
			      t - last >= o->idle_ms * 1000000ULL))
			break;
	}
	sample(fd, &m);
	{
		double dur = last > first ? (last - first) / 1e9 : 0;

		printf("{\"ok\":true,\"pkts\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"drops\":%u,"
		       "\"seconds\":%.3f,\"goodput_bps\":%.0f,\"rcvbuf_mean\":%.0f,"
		       "\"rcvbuf_peak\":%u,\"rcvbuf_min\":%u,\"rmem_mean\":%.0f,\"rmem_peak\":%u,"
		       "\"samples\":%" PRIu64 ",\"work_ns\":%" PRIu64 ",\"inode\":%llu}\n",
		       pkts, bytes, m.drops - drops0, dur, dur > 0 ? bytes * 8.0 / dur : 0.0,
		       m.rcvbuf_sum / (double)m.n, m.rcvbuf_peak, m.rcvbuf_min,
		       m.rmem_sum / (double)m.n, m.rmem_peak, m.n, o->work_ns,
		       (unsigned long long)st.st_ino);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("rxbneck-bufload send|recv ... (see tests/e2e/bufload.c)\n");
		return 0;
	}
	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return !strcmp(o.mode, "send") ? do_send(&o) : do_recv(&o);
}
