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

/* Moves the calling thread to @cpu, its affinity before into @old. */
static int pin(int cpu, cpu_set_t *old)
{
	cpu_set_t one;

	if (sched_getaffinity(0, sizeof(*old), old))
		return -errno;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -errno;
	return 0;
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

/*
 * One round: queue up to @batch datagrams, then time reading them back.
 * The ns per datagram read, 0 when too few arrived (the buffer was
 * smaller than asked), -errno on a failed call.
 */
static double round_ns(int rx, int tx, char *buf, unsigned bytes, int batch)
{
	double t0, t1;
	int got = 0;
	ssize_t n;

	for (int i = 0; i < batch; i++) {
		if (send(tx, buf, bytes, 0) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS)
				break;
			return -errno;
		}
	}
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

int recvcost_measure(int cpu, unsigned payload_bytes, double *ns_per_dgram)
{
	/* Truesize of a queued datagram: at most twice its linear size. */
	unsigned per_dgram = 2 * (payload_bytes + 512) + 512;
	int batch = (int)(QUEUE_BUDGET_BYTES / per_dgram);
	double best = INFINITY;
	int rx, tx, nr = 0, err = 0;
	bool moved = false;
	cpu_set_t old;
	char *buf;

	if (batch > RECVCOST_BATCH)
		batch = RECVCOST_BATCH;
	if (batch < MIN_BATCH)
		batch = MIN_BATCH;
	buf = calloc(1, payload_bytes);
	if (!buf) {
		rxb_warn("receive-cost calibration: %u bytes: %s", payload_bytes, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = open_pair(&rx, &tx, batch * (int)per_dgram);
	if (!err && cpu >= 0) {
		int e = pin(cpu, &old);

		moved = !e;
		if (e)	/* e.g. a cpuset without that CPU: a less apt measurement */
			rxb_warn("receive-cost calibration: cannot move to cpu%d (%s): measured on "
				 "cpu%d", cpu, strerror(-e), sched_getcpu());
	}
	for (int r = 0; !err && r < RECVCOST_ROUNDS; r++) {
		double v = round_ns(rx, tx, buf, payload_bytes, batch);

		if (v < 0) {
			err = (int)v;
		} else if (v > 0) {
			best = fmin(best, v);
			nr++;
		}
	}
	if (moved && sched_setaffinity(0, sizeof(old), &old))
		rxb_warn("receive-cost calibration: restoring the daemon's CPU affinity: %s",
			 strerror(errno));
	if (rx >= 0) {
		close(rx);
		close(tx);
	}
	free(buf);
	if (err) {
		rxb_warn("receive-cost calibration: %u-byte datagrams over loopback: %s",
			 payload_bytes, strerror(-err));
		return err;
	}
	if (nr < (RECVCOST_ROUNDS + 1) / 2) {
		rxb_warn("receive-cost calibration: %u-byte datagrams: only %d of %d rounds "
			 "queued %d datagrams", payload_bytes, nr, RECVCOST_ROUNDS, MIN_BATCH);
		return -ENOBUFS;
	}
	*ns_per_dgram = best;
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
	if (recvcost_measure(cpu, bytes, &ns) == 0)
		rxb_info("receive-cost calibration: %u-byte datagrams cost a reader on cpu%d "
			 "%.0f ns each (the least of %d rounds; the kernel's path only)",
			 bytes, cpu < 0 ? sched_getcpu() : cpu, ns, RECVCOST_ROUNDS);
	i = rc->n < RECVCOST_SIZES ? rc->n++ : rc->next;
	rc->next = (i + 1) % RECVCOST_SIZES;
	rc->v[i].cpu = cpu;
	rc->v[i].payload_bytes = bytes;
	rc->v[i].ns_per_dgram = ns;
	return ns;
}
