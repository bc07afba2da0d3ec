/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receivers' preemptions (struct rxb_rx_preempt), as the scheduler
 * probe queues them: taken from its ring into one array per epoch, which
 * the epoch record points to (rxb_epoch.rx_preempts), and handed out early
 * within the epoch so the daemon can act on a new receiver's scheduler
 * turns before the epoch ends.
 */
#ifndef RXB_DAEMON_COLLECT_RX_PREEMPTS_H
#define RXB_DAEMON_COLLECT_RX_PREEMPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxb/measure.h"

/* Preemptions kept per epoch: a thread is preempted at most once per
 * slice (>= 0.75 ms), so this covers several receivers at 1 s epochs. */
#define RX_PREEMPTS_MAX	8192

struct sched_probe;

struct rx_preempts {
	struct rxb_rx_preempt *v;	/* RX_PREEMPTS_MAX of them */
	size_t n;
	uint64_t dropped;		/* no room in v */
	bool handed;			/* v went out with an epoch: start afresh */
};

/* 0 or -ENOMEM. */
int rx_preempts_init(struct rx_preempts *r);
void rx_preempts_finish(struct rx_preempts *r);

/* Those queued by @sp since the previous epoch into @out (valid until the
 * next call); out->rx_preempts_lost counts the ones not kept. */
void rx_preempts_epoch(struct rx_preempts *r, struct sched_probe *sp, struct rxb_epoch *out);

/* Those queued since the last call or epoch, in *@out; how many. They go
 * out again, with the rest, at the epoch. */
size_t rx_preempts_early(struct rx_preempts *r, struct sched_probe *sp,
			 const struct rxb_rx_preempt **out);

#endif
