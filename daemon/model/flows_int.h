/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the flows' files share (nothing else includes this but their
 * tests):
 *   flows.c        the flows: ports, senders, epochs, pause windows
 *   flows_model.c  a flow's models, one per distinct transfer of its
 *                  senders: keys, solves, the rates they publish
 *   flows_due.c    when a model is solved again; whether the pause
 *                  schedule out covers its rate between pauses
 */
#ifndef RXB_DAEMON_FLOWS_INT_H
#define RXB_DAEMON_FLOWS_INT_H

#include "daemon/model/flows.h"

/* The epochs' clock now: the latest epoch's end (0 before the first). */
static inline uint64_t flows_now_ns(const struct flows *f)
{
	return f->last ? f->last->end_ns : 0;
}

/* flows_model.c */
/* The [model] defaults' transfer. */
void flows_xfer_defaults(const struct flows *f, struct flow_xfer *x);
/* A model of the [model] defaults' transfer, made now. */
void flows_model_defaults(const struct flows *f, struct flow_model *m);
/* The search range of @x under the [model] bounds (after a reload too). */
void flows_xfer_range(const struct flows *f, struct flow_xfer *x);
/* @p's transfer's model in @fl, NULL when it has none. */
struct flow_model *flows_model_find(struct flow *fl, const struct sendsrv_peer *p);
/*
 * A model for @p's transfer, made in a free place (or in that of the one
 * left from senders gone): NULL when FLOW_MAX_XFERS hold senders. *made
 * says whether it is new.
 */
struct flow_model *flows_model_add(struct flows *f, struct flow *fl,
				   const struct sendsrv_peer *p, bool *made);
/* A model's last sender left: drop it unless it is the flow's last one. */
void flows_model_unused(struct flow *fl, struct flow_model *m);
/* The episode size the solve uses ([model] loss_episodes): 0 = none. */
double flows_episode_pkts(const struct flows *f, const struct flow *fl);
/* Whether the solve takes each rate's episode from the windows. */
bool flows_episodes_from_windows(const struct flows *f);
/* Whether the solve takes the windows by rate (struct inputs.band_b). */
bool flows_bands_used(const struct flows *f, const struct flow *fl);

/* flows_due.c */
/* Due for a solve with the flow's current inputs (docs/daemon.md). */
bool flows_due(const struct flows *f, const struct flow *fl,
	       const struct flow_model *m, const struct rxb_epoch *e);
/*
 * Its rate for epoch @e from the flow's inputs: solved again when due and
 * @may_solve (taking one of f->solves_left), else the last solve kept.
 */
void flows_model_run(struct flows *f, struct flow *fl, struct flow_model *m,
		     const struct rxb_epoch *e, bool may_solve);

#endif
