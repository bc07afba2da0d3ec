/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Records exchanged between netrx.bpf.c (hard IRQ, NET_RX softirq and
 * napi_poll tracepoints: stage A of the receive path, NIC to socket, in the
 * end-system model of docs/daemon.md) and its user-space reader netrx.c.
 * All maps are per-CPU; counters only grow.
 */
#ifndef RXB_BPF_NETRX_H
#define RXB_BPF_NETRX_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define NETRX_MAX_IRQS		256
#define NETRX_MAX_NAPI		256
#define NETRX_NAME_LEN		32
#define NETRX_BACKLOG_KEY	0	/* the per-CPU backlog NAPI: no device */

/*
 * NET_RX softirqs are timed one in NETRX_SAMPLE_EVERY (the rest are only
 * counted): reading the clock costs more than everything else these
 * programs do, and on veth every packet is its own softirq. The reader
 * scales sampled time by netrx_cnt / netrx_timed.
 */
#define NETRX_SAMPLE_EVERY	8

/*
 * The per-packet programs - softirq_entry/exit and napi_poll: on veth every
 * packet is its own softirq and poll - can be detached between sampled
 * epochs (netrx_probe_set_sampled()); the hard IRQ programs (one run per
 * interrupt) stay attached. NULL terminated, for probe_obj_mark_sampled().
 */
#define NETRX_SAMPLED_TPS	{ "softirq_entry", "softirq_exit", "napi_poll", NULL }

/*
 * The NAPI instances of one device, keyed by its struct net_device address
 * (unique across network namespaces, unlike ifindex); 0 is the per-CPU
 * backlog that veth, lo and netif_rx() users feed.
 */
struct netrx_napi {
	__u64 polls;
	__u64 pkts;		/* sum of "work" */
	__u64 full_polls;	/* polls that used their whole budget */
	__u64 timed_polls;	/* polls inside a timed NET_RX softirq */
	__u64 timed_ns;		/* their service time */
	__s32 budget;		/* last budget seen (0: none yet) */
	__s32 ifindex;		/* in the device's own namespace */
	char dev[16];
};

/* Per CPU (one-entry per-CPU array). */
struct netrx_cpu {
	__u64 hardirq_ns;	/* time in hard IRQ handlers */
	__u64 hardirq_cnt;
	__u64 netrx_cnt;	/* NET_RX softirqs */
	__u64 netrx_timed;	/* ... of which timed */
	__u64 netrx_ns;		/* their time, hard IRQs inside removed */
	/* In-flight state of the current handler (not counters). */
	__u64 irq_entry_ns;
	__u64 sirq_entry_ns;	/* 0: not inside NET_RX */
	__u64 sirq_entry_hardirq_ns;
	__u64 mark_ns;		/* NET_RX entry or the last napi_poll in it */
	__u64 mark_hardirq_ns;
	__u32 sirq_gen;		/* attach_gen when sirq_entry_ns was taken */
	/*
	 * napi_poll's counts for the device this CPU polled last (napi_key),
	 * not yet added to its napis[] entry: they are flushed there when
	 * another device is polled here, so a run of polls of one device
	 * costs no hash lookup. The reader adds them to the entry's sums.
	 * Only np's counts are used: napi_key names the device.
	 */
	__u32 napi_valid;	/* napi_key and np are in use */
	__u64 napi_key;
	struct netrx_napi np;
};

struct netrx_irq {
	__u64 count;
	__u64 ns;
	char name[NETRX_NAME_LEN];
};

/*
 * Add the napi_poll counts of @x to @v (@v keeps its device): a CPU's
 * cached counts (struct netrx_cpu's np) to their device's entry - the BPF
 * program when it flushes them, the reader for those not flushed yet - and
 * a device's per-CPU entries into one sum (the reader).
 */
static inline __attribute__((always_inline)) void
netrx_napi_add(struct netrx_napi *v, const struct netrx_napi *x)
{
	v->polls += x->polls;
	v->pkts += x->pkts;
	v->full_polls += x->full_polls;
	v->timed_polls += x->timed_polls;
	v->timed_ns += x->timed_ns;
	if (x->budget)
		v->budget = x->budget;
}

#ifndef __bpf__
/* ------------------------------------------------ user-space reader -- */
#include <stdbool.h>
#include <stdint.h>

#include "bpf/probe.h"

struct netrx_probe;

/* Per-CPU counters summed where the caller wants totals. */
struct netrx_snap_irq {
	int irq;
	struct netrx_irq v;	/* summed over CPUs */
};

struct netrx_snap_napi {
	uint64_t key;		/* device address (0: backlog) */
	struct netrx_napi v;	/* summed over CPUs */
};

struct netrx_snap {
	uint64_t at_ns;
	int ncpus;
	struct netrx_cpu *cpus;		/* [ncpus] */
	int nirqs;
	struct netrx_snap_irq *irqs;	/* [NETRX_MAX_IRQS] */
	int nnapi;
	struct netrx_snap_napi *napi;	/* [NETRX_MAX_NAPI] */
};

int netrx_snap_init(struct netrx_snap *s);	/* 0 or -ENOMEM */
void netrx_snap_free(struct netrx_snap *s);

int netrx_probe_open(struct netrx_probe **out, enum probe_mode mode);
void netrx_probe_close(struct netrx_probe *np);
struct probe_obj *netrx_probe_obj(struct netrx_probe *np);
int netrx_probe_snapshot(struct netrx_probe *np, struct netrx_snap *s);

/*
 * Attach (@on) or detach the per-packet programs (NETRX_SAMPLED_TPS).
 * They are attached when the probe is opened. 0 or -errno (then they are
 * all detached).
 */
int netrx_probe_set_sampled(struct netrx_probe *np, bool on);
/* Are they attached now? */
bool netrx_probe_sampled_on(const struct netrx_probe *np);
#endif /* !__bpf__ */

#endif
