/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckd's Prometheus metrics (docs/metrics.md): the exposition written
 * from the daemon's parts - the flows and their advice, the latest epoch's
 * record, the sender server's and the metrics server's counters, the
 * counters accumulated from the epochs (metrics_totals.h) - the way
 * status.c writes the status document from them.
 *
 * Names follow the Prometheus conventions: the rxbneck_ prefix, base units
 * (_seconds, _bytes, ratios 0..1), _total on counters, _info for metadata
 * (value 1, the facts in labels). Labels are bounded: a flow by its port
 * (at most FLOWS_MAX flows), a CPU by its number, a drop reason, a BPF
 * program, a frame type, an error code - each a short closed or capped
 * set.
 */
#ifndef RXB_DAEMON_METRICS_H
#define RXB_DAEMON_METRICS_H

#include "daemon/serve/promtext.h"

struct daemon;

/* The whole exposition of @d into @w. */
void metrics_render(struct promtext *w, const struct daemon *d);

#endif
