// SPDX-License-Identifier: GPL-2.0-or-later
/* The kernel's receive cost per datagram on this host. See recvcost.h. */
#include "daemon/collect/recvcost.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

#define UDP_MAX_PAYLOAD_BYTES	65507
#define QUEUE_BUDGET_BYTES	(4u << 20)	/* kernel memory one round may hold */
#define MIN_BATCH		8

void recvcost_init(struct recvcost *rc)
{
	memset(rc, 0, sizeof(*rc));
}

static double thread_cpu_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
		return NAN;
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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

int recvcost_measure(unsigned payload_bytes, double *ns_per_dgram)
{
	/* Truesize of a queued datagram: at most twice its linear size. */
	unsigned per_dgram = 2 * (payload_bytes + 512) + 512;
	int batch = (int)(QUEUE_BUDGET_BYTES / per_dgram);
	double ns[RECVCOST_ROUNDS];
	int rx, tx, nr = 0, err = 0;
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
	for (int r = 0; !err && r < RECVCOST_ROUNDS; r++) {
		double v = round_ns(rx, tx, buf, payload_bytes, batch);

		if (v < 0)
			err = (int)v;
		else if (v > 0)
			ns[nr++] = v;
	}
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
	qsort(ns, nr, sizeof(ns[0]), cmp_double);
	*ns_per_dgram = ns[nr / 2];
	return 0;
}

double recvcost_ns(struct recvcost *rc, double payload_bytes)
{
	unsigned bytes;
	double ns = NAN;
	int i;

	if (!(payload_bytes >= 1))
		payload_bytes = 1;
	bytes = payload_bytes > UDP_MAX_PAYLOAD_BYTES ? UDP_MAX_PAYLOAD_BYTES :
		(unsigned)lround(payload_bytes);
	for (i = 0; i < rc->n; i++)
		if (rc->v[i].payload_bytes == bytes)
			return rc->v[i].ns_per_dgram;
	if (recvcost_measure(bytes, &ns) == 0)
		rxb_info("receive-cost calibration: %u-byte datagrams cost a reader %.0f ns each "
			 "(median of %d rounds, kernel path only)", bytes, ns, RECVCOST_ROUNDS);
	i = rc->n < RECVCOST_SIZES ? rc->n++ : rc->next;
	rc->next = (i + 1) % RECVCOST_SIZES;
	rc->v[i].payload_bytes = bytes;
	rc->v[i].ns_per_dgram = ns;
	return ns;
}
