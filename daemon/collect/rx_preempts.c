// SPDX-License-Identifier: GPL-2.0-or-later
/* The receivers' preemptions of an epoch. See rx_preempts.h. */
#include "daemon/collect/rx_preempts.h"

#include <errno.h>
#include <stdlib.h>

#include "bpf/sched.h"

int rx_preempts_init(struct rx_preempts *r)
{
	r->v = calloc(RX_PREEMPTS_MAX, sizeof(*r->v));
	r->n = 0;
	r->dropped = 0;
	r->handed = false;
	return r->v ? 0 : -ENOMEM;
}

void rx_preempts_finish(struct rx_preempts *r)
{
	free(r->v);
	r->v = NULL;
}

static void add(void *arg, const struct sched_rx_event *ev)
{
	struct rx_preempts *r = arg;
	struct rxb_rx_preempt *p;

	if (r->n == RX_PREEMPTS_MAX) {
		r->dropped++;
		return;
	}
	p = &r->v[r->n++];
	p->tid = ev->tid;
	p->cpu = ev->cpu;
	p->flags = (ev->flags & SCHED_RX_EV_EEVDF) ? RXB_RX_PREEMPT_EEVDF : 0;
	p->blocks = ev->blocks;
	p->port = ev->port;
	p->run_start_ns = ev->run_start_ns;
	p->out_ns = ev->out_ns;
	p->in_ns = ev->in_ns;
	p->slice_ns = ev->slice_ns;
	p->next_slice_ns = ev->next_slice_ns;
}

/*
 * Move the preemptions queued in the ring into r->v, after those already
 * taken this epoch (rx_preempts_early()); the ring's lost count.
 */
static uint64_t drain(struct rx_preempts *r, struct sched_probe *sp)
{
	uint64_t lost = 0;

	if (r->handed) {
		r->n = 0;
		r->handed = false;
	}
	sched_probe_drain_rx(sp, add, r, &lost);
	return lost;
}

void rx_preempts_epoch(struct rx_preempts *r, struct sched_probe *sp, struct rxb_epoch *out)
{
	uint64_t lost;

	if (!sp || !r->v)
		return;
	lost = drain(r, sp);
	out->rx_preempts = r->v;
	out->nrx_preempts = r->n;
	out->rx_preempts_lost = lost + r->dropped;
	r->handed = true;
}

size_t rx_preempts_early(struct rx_preempts *r, struct sched_probe *sp,
			 const struct rxb_rx_preempt **out)
{
	size_t before;

	*out = NULL;
	if (!sp || !r->v)
		return 0;
	before = r->handed ? 0 : r->n;
	/* The ring's lost count is read again, whole, at the epoch. */
	drain(r, sp);
	*out = r->v + before;
	return r->n - before;
}
