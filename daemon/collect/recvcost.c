// SPDX-License-Identifier: GPL-2.0-or-later
/* The kernel's receive cost per datagram on this host. See recvcost.h. */
#include "daemon/collect/recvcost.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

#define UDP_MAX_PAYLOAD_BYTES	65507
#define QUEUE_BUDGET_BYTES	(4u << 20)	/* kernel memory one round may hold */
#define MIN_BATCH		8

void recvcost_init(struct recvcost *rc)
{
	memset(rc, 0, sizeof(*rc));
	rc->gap_ns = RECVCOST_GAP_NS;
}

/* The value remembered for @cpu at the size nearest @bytes, NAN: none. */
static double nearest(const struct recvcost *rc, int cpu, unsigned bytes)
{
	double ns = NAN, best = INFINITY;

	for (int i = 0; i < rc->n; i++) {
		double d = fabs((double)rc->v[i].payload_bytes - bytes);

		if (rc->v[i].cpu == cpu && d < best) {
			best = d;
			ns = rc->v[i].ns_per_dgram;
		}
	}
	return ns;
}

static double thread_cpu_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
		return NAN;
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Moves the calling thread to @cpu: 0 or -errno. */
static int pin(int cpu)
{
	cpu_set_t one;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
}

/*
 * The CPU that writes the datagrams read on @read_cpu: the first other
 * one in @allowed, since a receiver reads data that another CPU wrote
 * (a NIC's softirq, a local sender's copy) and pays for fetching it;
 * @read_cpu itself when it is the only one allowed.
 */
static int writer_cpu(const cpu_set_t *allowed, int read_cpu)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != read_cpu && CPU_ISSET(c, allowed))
			return c;
	return read_cpu;
}

/* A bound socket @rx and @tx connected to it, on the loopback address. */
static int open_pair(int *rx, int *tx, int rcvbuf_bytes)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	const char *what = "socket";

	*rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	*tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*rx < 0 || *tx < 0)
		goto fail;
	/* Room for a whole round; without CAP_NET_ADMIN up to rmem_max. */
	what = "SO_RCVBUF";
	if (setsockopt(*rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf_bytes, sizeof(rcvbuf_bytes)) &&
	    setsockopt(*rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf_bytes, sizeof(rcvbuf_bytes)))
		goto fail;
	what = "bind 127.0.0.1";
	if (bind(*rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(*rx, (struct sockaddr *)&a, &len))
		goto fail;
	what = "connect";
	if (connect(*tx, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	return 0;
fail:
	{
		int err = errno;

		rxb_warn("receive-cost calibration: %s: %s", what, strerror(err));
		if (*rx >= 0)
			close(*rx);
		if (*tx >= 0)
			close(*tx);
		*rx = *tx = -1;
		return -err;
	}
}

/* Where one measurement's datagrams are written and read. */
struct recvcost_cpus {
	int write_cpu, read_cpu;
};

/*
 * One round: queue up to @batch datagrams on the writing CPU, then time
 * reading them back on the reading one. The ns per datagram read, 0 when
 * too few arrived (the buffer was smaller than asked), -errno on a failed
 * call.
 */
static double round_ns(int rx, int tx, char *buf, unsigned bytes, int batch,
		       const struct recvcost_cpus *at)
{
	double t0, t1;
	int got = 0, err;
	ssize_t n;

	if (at->write_cpu != at->read_cpu && (err = pin(at->write_cpu)))
		return err;
	for (int i = 0; i < batch; i++) {
		if (send(tx, buf, bytes, 0) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS)
				break;
			return -errno;
		}
	}
	if (at->write_cpu != at->read_cpu && (err = pin(at->read_cpu)))
		return err;
	t0 = thread_cpu_ns();
	while ((n = recv(rx, buf, bytes, 0)) >= 0)
		got++;
	t1 = thread_cpu_ns();
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return -errno;
	if (!isfinite(t0) || !isfinite(t1))
		return -EINVAL;
	return got >= MIN_BATCH ? (t1 - t0) / got : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Chooses the CPUs of a measurement for a reader on @cpu (-1: where the
 * daemon runs) and moves there: 0, or -errno when the daemon may not move
 * at all (logged). A reading CPU the daemon may not use (a cpuset without
 * it) is replaced by the first one it may, logged.
 */
static int place(int cpu, const cpu_set_t *allowed, struct recvcost_cpus *at)
{
	int first = writer_cpu(allowed, -1), err;

	at->read_cpu = cpu >= 0 ? cpu : sched_getcpu();
	if (at->read_cpu < 0)	/* no CPU number: the first one allowed */
		at->read_cpu = first;
	err = pin(at->read_cpu);
	if (err && cpu >= 0) {
		rxb_warn("receive-cost calibration: cannot move to cpu%d (%s): measured on "
			 "cpu%d", cpu, strerror(-err), first);
		at->read_cpu = first;
		err = pin(first);
	}
	if (err) {
		rxb_warn("receive-cost calibration: cannot set the daemon's CPU affinity: %s",
			 strerror(-err));
		return err;
	}
	at->write_cpu = writer_cpu(allowed, at->read_cpu);
	return 0;
}

/* The rounds of one measurement: their median into *@ns, 0 or -errno. */
static int rounds(int rx, int tx, char *buf, unsigned bytes, int batch,
		  const struct recvcost_cpus *at, double *ns)
{
	double v[RECVCOST_ROUNDS];
	int nr = 0;

	for (int r = 0; r < RECVCOST_ROUNDS; r++) {
		double x = round_ns(rx, tx, buf, bytes, batch, at);

		if (x < 0)
			return (int)x;
		if (x > 0)
			v[nr++] = x;
	}
	if (nr < (RECVCOST_ROUNDS + 1) / 2) {
		rxb_warn("receive-cost calibration: %u-byte datagrams: only %d of %d rounds "
			 "queued %d datagrams", bytes, nr, RECVCOST_ROUNDS, MIN_BATCH);
		return -ENOBUFS;
	}
	qsort(v, (size_t)nr, sizeof(v[0]), cmp_double);
	*ns = nr % 2 ? v[nr / 2] : 0.5 * (v[nr / 2 - 1] + v[nr / 2]);
	return 0;
}

int recvcost_measure(int cpu, unsigned payload_bytes, double *ns_per_dgram)
{
	/* Truesize of a queued datagram: at most twice its linear size. */
	unsigned per_dgram = 2 * (payload_bytes + 512) + 512;
	int batch = (int)(QUEUE_BUDGET_BYTES / per_dgram);
	struct recvcost_cpus at = { -1, -1 };
	int rx, tx, err;
	cpu_set_t old;
	char *buf;

	if (batch > RECVCOST_BATCH)
		batch = RECVCOST_BATCH;
	if (batch < MIN_BATCH)
		batch = MIN_BATCH;
	if (sched_getaffinity(0, sizeof(old), &old)) {
		err = errno;
		rxb_warn("receive-cost calibration: the daemon's CPU affinity: %s", strerror(err));
		return -err;
	}
	buf = calloc(1, payload_bytes);
	if (!buf) {
		rxb_warn("receive-cost calibration: %u bytes: %s", payload_bytes, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = open_pair(&rx, &tx, batch * (int)per_dgram);
	if (!err) {
		err = place(cpu, &old, &at);
		if (!err)
			err = rounds(rx, tx, buf, payload_bytes, batch, &at, ns_per_dgram);
		if (sched_setaffinity(0, sizeof(old), &old))
			rxb_warn("receive-cost calibration: restoring the daemon's CPU affinity: %s",
				 strerror(errno));
		close(rx);
		close(tx);
	}
	free(buf);
	if (err) {
		if (err != -ENOBUFS)	/* rounds() said why */
			rxb_warn("receive-cost calibration: %u-byte datagrams over loopback: %s",
				 payload_bytes, strerror(-err));
		return err;
	}
	rxb_info("receive-cost calibration: %u-byte datagrams written on cpu%d cost a reader "
		 "on cpu%d %.0f ns each (the median of %d rounds; the kernel's path only)",
		 payload_bytes, at.write_cpu, at.read_cpu, *ns_per_dgram, RECVCOST_ROUNDS);
	return 0;
}

double recvcost_ns(struct recvcost *rc, int cpu, double payload_bytes)
{
	unsigned bytes;
	double ns = NAN;
	uint64_t now;
	int i;

	if (!(payload_bytes >= 1))
		payload_bytes = 1;
	bytes = payload_bytes > UDP_MAX_PAYLOAD_BYTES ? UDP_MAX_PAYLOAD_BYTES :
		(unsigned)lround(payload_bytes);
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		cpu = -1;
	for (i = 0; i < rc->n; i++)
		if (rc->v[i].payload_bytes == bytes && rc->v[i].cpu == cpu)
			return rc->v[i].ns_per_dgram;
	now = rxb_mono_ns();
	if (rc->last_ns && now - rc->last_ns < rc->gap_ns)
		return nearest(rc, cpu, bytes);
	rc->last_ns = now;
	if (recvcost_measure(cpu, bytes, &ns))
		ns = NAN;
	i = rc->n < RECVCOST_SIZES ? rc->n++ : rc->next;
	rc->next = (i + 1) % RECVCOST_SIZES;
	rc->v[i].cpu = cpu;
	rc->v[i].payload_bytes = bytes;
	rc->v[i].ns_per_dgram = ns;
	return ns;
}
