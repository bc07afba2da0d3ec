// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What one step of the receive-buffer adaptation costs ([buffer] dt_ms,
 * 100 ms by default: docs/buffer.md), against a reference measured in the
 * same run on the same sockets: the probe snapshot the collector reads
 * once an epoch (sockq_probe_snapshot(): every watched port's per-CPU
 * counters, the receiver rows, the drop reasons), i.e. what reading the
 * BPF per-socket counters on the buffer's timer instead would cost.
 *
 * The host: 4 watched UDP sockets among 200 bound ones (sock_diag dumps
 * them all; the step keeps those on watched ports), each watched socket
 * holding a few datagrams. A step: /proc/meminfo, sockstat, udp_mem,
 * rmem_max (procmem_read()), one sock_diag memory dump, buffer_step() in
 * advise mode. Medians of 201 steps, pinned to one CPU.
 *
 * Prints the step's time, the snapshot's, their ratio, and the step's
 * share of one CPU at 10 steps a second; exit 1 when that share is above
 * 0.5 %. Root (the BPF snapshot; without it the reference is skipped and
 * said so). Run by `make bench` under /tmp/rxbneck-heavy.lock.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf/sockq.h"
#include "common/util.h"
#include "daemon/collect/procmem.h"
#include "daemon/collect/sockdiag.h"
#include "daemon/model/buffer.h"

#define NSOCKS		200
#define NWATCHED	4
#define REPS		201
#define SHARE_MAX	0.005

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v)
{
	qsort(v, REPS, sizeof(*v), cmp_u64);
	return v[REPS / 2] / 1e3;
}

static int bound_udp(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		perror("bench_buffer: socket");
		exit(1);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

struct keep {
	struct sockdiag_sock v[NSOCKS + 16];
	int n;
};

static void keep(const struct sockdiag_sock *s, void *arg)
{
	struct keep *k = arg;

	if (k->n < NSOCKS + 16)
		k->v[k->n++] = *s;
}

/* @fds: NSOCKS bound sockets, the first NWATCHED holding a few datagrams. */
static void fill_host(int *fds, struct buffer_flow *flows, uint16_t *wp, int tx)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char pkt[1000] = { 0 };
	uint16_t port;

	for (int i = 0; i < NSOCKS; i++) {
		fds[i] = bound_udp(&port);
		if (i >= NWATCHED)
			continue;
		wp[i] = port;
		memset(&flows[i], 0, sizeof(flows[i]));
		flows[i].port = port;
		flows[i].truesize_bytes = 2304;
		to.sin_port = htons(port);
		for (int j = 0; j < 8; j++)
			sendto(tx, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to));
	}
}

/* Median time of one buffer step, in us; < 0 when the dump failed. */
static double time_steps(struct buffer_set *set, struct sockdiag *sd,
			 struct buffer_flow *flows, struct keep *k)
{
	uint64_t step_ns[REPS];
	struct procmem_snap mem;
	struct buffer_action act[8];

	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = rxb_mono_ns();
		struct buffer_step_in in;

		procmem_read(&mem);
		k->n = 0;
		if (sockdiag_udp_mem(sd, keep, k) < 0) {
			fprintf(stderr, "bench_buffer: sock_diag dump failed\n");
			return -1;
		}
		in = (struct buffer_step_in){ .now_ns = t0, .socks = k->v, .nsocks = k->n,
					      .mem = &mem, .flows = flows, .nflows = NWATCHED };
		buffer_step(set, &in, act, 8);
		step_ns[r] = rxb_mono_ns() - t0;
	}
	return median_us(step_ns);
}

/* Median time of the BPF socket snapshot of @wp, in us; 0: not loaded. */
static double time_snapshot(uint16_t *wp)
{
	uint64_t snap_ns[REPS];
	struct sockq_probe *sq = NULL;
	struct sockq_snap ss;
	double us = 0;

	if (sockq_probe_open(&sq, PROBE_MODE_TP_BTF, -1, -1) == 0 &&
	    sockq_probe_set_ports(sq, wp, NWATCHED) == 0 && sockq_snap_init(&ss) == 0) {
		for (int r = 0; r < REPS; r++) {
			uint64_t t0 = rxb_mono_ns();

			sockq_probe_snapshot(sq, &ss);
			snap_ns[r] = rxb_mono_ns() - t0;
		}
		us = median_us(snap_ns);
		sockq_snap_free(&ss);
	}
	sockq_probe_close(sq);
	return us;
}

int main(void)
{
	static struct buffer_set set;
	static struct keep k;
	struct buffer_params p = {
		.mode = BUFFER_ADVISE, .policy = BUFFER_RRDA,
		.rrda = { .dt_s = 0.1, .k = 3, .beta = 16, .omega = 0.5,
			  .ceiling_bytes = 64 << 20, .min_step_bytes = 4096 },
		.loss_target = 1e-4, .time_slack = 0.01, .force = true,
	};
	struct buffer_flow flows[NWATCHED];
	uint16_t wp[NWATCHED];
	int fds[NSOCKS], tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockdiag *sd = NULL;
	cpu_set_t cpus;
	double s_us = -1, r_us = 0;

	if (tx < 0) {
		perror("bench_buffer: socket");
		return 1;
	}
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	fill_host(fds, flows, wp, tx);
	if (sockdiag_open(&sd) || buffer_init(&set, &p))
		fprintf(stderr, "bench_buffer: sock_diag or buffer set-up failed\n");
	else
		s_us = time_steps(&set, sd, flows, &k);
	if (s_us >= 0) {
		if (set.n != NWATCHED)
			fprintf(stderr, "bench_buffer: the step followed %d sockets, not %d\n",
				set.n, NWATCHED);
		r_us = time_snapshot(wp);
		printf("buffer step (procmem + sock_diag dump of %d UDP sockets + buffer_step, "
		       "%d watched): %.1f us\n", k.n, NWATCHED, s_us);
		if (r_us > 0)
			printf("reference, the BPF socket snapshot of the same %d ports: %.1f us; "
			       "ratio %.2f\n", NWATCHED, r_us, s_us / r_us);
		else
			printf("reference not measured: the sockq probe could not be loaded (root?)\n");
		printf("at one step per 100 ms: %.3f %% of one CPU (budget %.1f %%)\n",
		       100.0 * s_us / 1e5, 100.0 * SHARE_MAX);
	}
	buffer_finish(&set);
	sockdiag_close(sd);
	for (int i = 0; i < NSOCKS; i++)
		close(fds[i]);
	close(tx);
	return s_us >= 0 && s_us / 1e5 <= SHARE_MAX ? 0 : 1;
}
