// SPDX-License-Identifier: GPL-2.0-or-later
/* Counters accumulated from the epochs' deltas. See metrics_totals.h. */
#include "daemon/serve/metrics_totals.h"

#include <string.h>

#include "common/util.h"

/* 100 us .. 10 s: a solve takes about a millisecond to tens of them. */
const double metrics_totals_solve_bounds[] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10,
};
const int metrics_totals_nsolve_bounds = (int)RXB_ARRAY_SIZE(metrics_totals_solve_bounds);

void metrics_totals_init(struct metrics_totals *t)
{
	memset(t, 0, sizeof(*t));
	/* The bounds ascend: this cannot fail. */
	promtext_hist_init(&t->solve_s, metrics_totals_solve_bounds,
			   metrics_totals_nsolve_bounds);
}

void metrics_totals_solved(struct metrics_totals *t, double solve_s)
{
	promtext_hist_observe(&t->solve_s, solve_s);
}

const struct metrics_port *metrics_totals_port(const struct metrics_totals *t, uint16_t port)
{
	for (int i = 0; i < METRICS_TOTALS_PORTS; i++)
		if (t->ports[i].used && t->ports[i].port == port)
			return &t->ports[i];
	return NULL;
}

static bool has_flow(const struct flows *f, uint16_t port)
{
	for (int i = 0; i < f->n; i++)
		if (f->v[i].port == port)
			return true;
	return false;
}

/*
 * @port's entry, made when needed: in a free one, else in the one that
 * has had no flow for longest (there is one: more entries than flows).
 */
static struct metrics_port *port_entry(struct metrics_totals *t, const struct flows *f,
				       uint16_t port)
{
	struct metrics_port *free_e = NULL, *old = NULL;

	for (int i = 0; i < METRICS_TOTALS_PORTS; i++) {
		struct metrics_port *p = &t->ports[i];

		if (p->used && p->port == port)
			return p;
		if (!p->used && !free_e)
			free_e = p;
		else if (p->used && !has_flow(f, p->port) &&
			 (!old || p->last_epoch < old->last_epoch))
			old = p;
	}
	if (!free_e)
		free_e = old;
	if (!free_e)
		return NULL;
	memset(free_e, 0, sizeof(*free_e));
	free_e->used = true;
	free_e->port = port;
	return free_e;
}

static void add_drops(struct metrics_port *p, const char *reason, uint64_t n)
{
	int i;

	if (!n)
		return;
	for (i = 0; i < p->nreasons; i++)
		if (strcmp(p->drops[i].reason, reason) == 0)
			break;
	if (i == p->nreasons) {
		if (p->nreasons == METRICS_TOTALS_REASONS) {
			if (strcmp(reason, METRICS_REASON_OTHER) == 0)
				return;	/* cannot happen: OTHER is kept below */
			add_drops(p, METRICS_REASON_OTHER, n);
			return;
		}
		/* The last entry is kept for OTHER. */
		if (p->nreasons == METRICS_TOTALS_REASONS - 1 &&
		    strcmp(reason, METRICS_REASON_OTHER) != 0) {
			add_drops(p, METRICS_REASON_OTHER, n);
			return;
		}
		rxb_strlcpy(p->drops[i].reason, reason, sizeof(p->drops[i].reason));
		p->nreasons++;
	}
	p->drops[i].pkts += n;
}

/*
 * The socket's drops by reason: the largest reasons of the epoch as
 * measured, the rest of its drops under OTHER; all under "unknown" when
 * only their number was measured.
 */
static void fold_drops(struct metrics_port *p, const struct rxb_sock_meas *s)
{
	uint64_t named = 0;

	if (!s->drops_valid)
		return;
	if (!s->reasons_valid) {
		add_drops(p, METRICS_REASON_UNKNOWN, s->drops);
		return;
	}
	for (int i = 0; i < s->nreasons && i < (int)RXB_ARRAY_SIZE(s->drop_reasons); i++) {
		add_drops(p, s->drop_reasons[i].reason, s->drop_reasons[i].count);
		named += s->drop_reasons[i].count;
	}
	add_drops(p, METRICS_REASON_OTHER, rxb_sub0(s->drops, named));
}

static void fold_flow(struct metrics_totals *t, const struct flows *f, const struct flow *fl,
		      const struct rxb_epoch *e)
{
	struct metrics_port *p = port_entry(t, f, fl->port);
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, fl->port);

	if (!p)
		return;
	p->last_epoch = e->seq;
	/* Reports count in the flow; a flow made anew counts from 0. */
	if (fl->created_ns != p->flow_created_ns) {
		p->flow_created_ns = fl->created_ns;
		p->flow_reports = 0;
	}
	p->reports += rxb_sub0(fl->reports, p->flow_reports);
	p->flow_reports = fl->reports;
	if (!s)
		return;
	if (s->counts_valid) {
		p->pkts_in += s->pkts_in;
		p->pkts_out += s->pkts_out;
		p->counted_s += (double)rxb_sub0(e->end_ns, e->start_ns) / 1e9;
	}
	fold_drops(p, s);
}

static void fold_probes(struct metrics_totals *t, const struct rxb_epoch *e)
{
	for (int i = 0; i < e->nprogs && i < RXB_MAX_PROGS; i++) {
		const struct rxb_probe_cost *c = &e->probe_cost[i];
		int j;

		for (j = 0; j < t->nprogs; j++)
			if (strcmp(t->progs[j].prog, c->prog) == 0)
				break;
		if (j == t->nprogs) {
			if (t->nprogs == METRICS_TOTALS_PROGS)
				continue;
			rxb_strlcpy(t->progs[j].prog, c->prog, sizeof(t->progs[j].prog));
			t->nprogs++;
		}
		t->progs[j].runs += c->run_cnt;
		t->progs[j].run_ns += c->run_time_ns;
	}
}

void metrics_totals_epoch(struct metrics_totals *t, const struct flows *f,
			  const struct rxb_epoch *e)
{
	for (int i = 0; i < f->n; i++)
		fold_flow(t, f, &f->v[i], e);
	fold_probes(t, e);
}
