/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What this host's kernel charges a receiving thread per UDP datagram,
 * measured by the daemon itself: the per-datagram cost the model uses
 * before a flow's first packet when nothing was learned on this host
 * (daemon/model/prior.h, docs/daemon.md "Before traffic, and after it
 * stops").
 *
 * How: a pair of loopback UDP sockets of the daemon's own; rounds of
 * RECVCOST_BATCH datagrams of the flow's payload size are written on one
 * CPU and then read back on the receiver's CPU with one recv() each, the
 * reading timed in the daemon thread's own CPU time
 * (CLOCK_THREAD_CPUTIME_ID: other work on the CPU does not count). The
 * daemon's thread moves between the two for each round and back to where
 * it was after; where it may not move to the receiver's CPU, it reads
 * where it runs (logged). Reading on the receiver's CPU, because what a
 * datagram costs depends on the CPU - its caches, its clock, the other
 * hardware thread of its core; writing on another (the first other CPU
 * the daemon may use), because a receiver's data was written elsewhere,
 * by a NIC's softirq or a local sender's copy, and fetching it from
 * another CPU's cache costs as much as the rest of the path (1.7-2.7
 * times the cost of data written on the reading CPU, on a 2-vCPU VM).
 * The median of RECVCOST_ROUNDS rounds: a round after other work ran on
 * the CPU pays for refilling the caches, as the receiver does when it
 * shares its CPU, while an interrupt in a round only adds to it.
 *
 * What it is: the kernel's receive path as a receiver sees it - the
 * system call, fetching and copying the data to user space, freeing the
 * buffer. What it is not: the receiving application's own work per
 * datagram (none here), a receiver's wake-ups. So it is a floor for a
 * receiver that reads one datagram per call; one using recvmmsg() pays
 * less for the calls and more for its own work. On a host with one
 * usable CPU, the data is written on the reading CPU and the value is
 * lower. Takes a few milliseconds on an idle CPU, up to about a
 * scheduler slice per round on a busy one.
 */
#ifndef RXB_DAEMON_RECVCOST_H
#define RXB_DAEMON_RECVCOST_H

#include <stdint.h>

#define RECVCOST_BATCH		256	/* datagrams queued per round, at most */
#define RECVCOST_ROUNDS		15
#define RECVCOST_SIZES		8	/* (CPU, payload size) pairs remembered */
#define RECVCOST_GAP_NS		1000000000ull	/* between two measurements */

/* Measurements by CPU and payload size, so that each is taken once per run. */
struct recvcost {
	struct {
		int cpu;
		unsigned payload_bytes;
		double ns_per_dgram;	/* NAN: could not be measured */
	} v[RECVCOST_SIZES];
	int n, next;
	uint64_t last_ns;	/* CLOCK_MONOTONIC of the latest measurement */
	uint64_t gap_ns;	/* at least this between two: RECVCOST_GAP_NS */
};

void recvcost_init(struct recvcost *rc);

/*
 * The receive path's CPU ns per datagram of @payload_bytes (clamped to
 * 1..65507) on @cpu (-1: wherever the daemon runs), measured at the first
 * call for that pair and remembered, the RECVCOST_SIZES latest; NAN when
 * it could not be measured (logged once). Senders choose the payload
 * size: within gap_ns of the last measurement the answer is the one
 * remembered for this CPU at the nearest size (NAN: none), so that HELLOs
 * with ever new sizes cannot keep the daemon measuring.
 */
double recvcost_ns(struct recvcost *rc, int cpu, double payload_bytes);

/* One measurement, not remembered: 0 and *@ns_per_dgram, or -errno (logged). */
int recvcost_measure(int cpu, unsigned payload_bytes, double *ns_per_dgram);

#endif
