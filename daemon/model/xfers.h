/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parallel TCP transfers to this host, seen from their connections' byte
 * counters (daemon/collect/tcpconn.h), as (n, throughput) samples for the
 * stream-count advisor - without the sender's help.
 *
 * A transfer is the connections from one peer address to one local port
 * that are active together. Each interval (between two dumps, one epoch)
 * a connection's goodput is the growth of its tcpi_bytes_received; it is
 * one of the transfer's streams in that interval when it received at
 * least min_stream_bps and at least min_share of the busiest connection
 * of the transfer (a GridFTP or iperf3 control connection carries a few
 * hundred bytes beside streams of megabytes). n is the number of streams,
 * the throughput their summed goodput over the interval.
 *
 * An interval gives a sample only when it is clean: every stream was there
 * at both dumps (a connection opened or closed within it has bytes
 * outside it), no stream of the previous interval is gone, and the same
 * streams were active in the last settle + 1 intervals: the interval in
 * which connections open holds part of them only, the first whole one
 * after it their slow start, so with settle 1 the first sample is the
 * second whole interval.
 *
 * Bounded: at most max_conns connections and max_groups transfers are
 * tracked; a connection beyond them is not, and its transfer (if tracked)
 * gives no sample that interval. Two hash tables of each, rebuilt every
 * interval from what the dump showed (linear probing, no deletions), so a
 * connection or transfer that is gone costs nothing after.
 *
 * Pure: no I/O; memory is allocated by xfers_init() only.
 */
#ifndef RXB_DAEMON_MODEL_XFERS_H
#define RXB_DAEMON_MODEL_XFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/collect/tcpconn.h"

struct xfers_params {
	uint32_t max_conns;	/* connections tracked, >= 1 */
	uint32_t max_groups;	/* transfers tracked, >= 1 */
	double min_stream_bps;	/* a stream receives at least this */
	double min_share;	/* ... and this share of its transfer's busiest, [0, 1] */
	uint32_t settle;	/* a sample needs the same streams settle + 1 intervals, >= 1 */
	uint32_t max_n;		/* no sample with more streams */
};

/* One sample: @n streams from @addr to local @port carried @bps over @dt_s. */
struct xfers_sample {
	uint8_t addr[16];	/* v4-mapped for IPv4 */
	uint16_t port;
	uint32_t n;
	double bps;
	double dt_s;
};

typedef void (*xfers_fn)(void *arg, const struct xfers_sample *s);

struct xfers_stats {
	uint64_t intervals;
	uint64_t conns_seen;		/* in the last interval */
	uint64_t conns_dropped;		/* beyond the bounds, last interval */
	uint64_t groups;		/* transfers with a stream, last interval */
	uint64_t samples;		/* since init */
	uint64_t unsettled;		/* intervals of a transfer not clean (since init) */
};

struct xfers_conn;
struct xfers_group;

struct xfers {
	struct xfers_params p;
	uint32_t conn_cap, group_cap;		/* slots per table: powers of two */
	struct xfers_conn *conns[2];		/* [cur]: this interval, [!cur]: the last */
	struct xfers_group *groups[2];
	uint32_t nconns[2], ngroups[2];
	int cur;
	uint64_t prev_ns, now_ns;		/* the last two dumps */
	struct xfers_stats st;
};

/* Tables for @p's bounds. 0, -EINVAL for bad parameters, -ENOMEM. */
int xfers_init(struct xfers *x, const struct xfers_params *p);
void xfers_finish(struct xfers *x);

/*
 * New bounds and thresholds. Tables are kept when the bounds fit in them,
 * else made anew (what was tracked is forgotten). 0 or -errno (then
 * nothing changed).
 */
int xfers_set_params(struct xfers *x, const struct xfers_params *p);

/* A dump begins, at @now_ns (CLOCK_MONOTONIC). */
void xfers_begin(struct xfers *x, uint64_t now_ns);
/* One connection of the dump (the caller has chosen the local ports). */
void xfers_conn(struct xfers *x, const struct tcpconn *c);
/*
 * The dump ended: each clean transfer's sample to @fn. Returns how many.
 * A dump that failed half-way must not be ended (call xfers_abort()).
 */
int xfers_end(struct xfers *x, xfers_fn fn, void *arg);
/* Forget this dump: the next interval starts from the last complete one. */
void xfers_abort(struct xfers *x);

#endif
