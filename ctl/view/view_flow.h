/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One flow of the status document (docs/CONTROL.md §6.2) as text: the RATE
 * and who holds it, the prediction, the transfer, the traffic, every model
 * input with its source, the pause windows. See view.h.
 */
#ifndef RXB_CTL_VIEW_FLOW_H
#define RXB_CTL_VIEW_FLOW_H

#include <stdio.h>

struct json_object;

/* @flags: VIEW_VERBOSE adds the cost estimates, the solved stages and the
 * solver's counters. */
void view_flow(FILE *f, const struct json_object *flow, unsigned flags);
/*
 * One line at @indent: a flow's "predictions" (@fl holds it) against the
 * reported outcomes, the running error; nothing before its first REPORT.
 */
void view_flow_predictions(FILE *f, int indent, const struct json_object *fl);

#endif
