/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flows of the status document (docs/CONTROL.md §6.2): each watched
 * flow - its transfer, traffic, model inputs with their sources, the
 * solved model, the RATE and who holds it, reports, pause windows - and
 * the learned flows that have no sender now.
 */
#ifndef RXB_DAEMON_STATUS_FLOW_H
#define RXB_DAEMON_STATUS_FLOW_H

#include <stdint.h>

#include "common/json.h"
#include "rxbneck/proto.h"

struct daemon;
struct flow;

/* One element of "flows". */
void status_flow_json(struct json_writer *w, const struct flow *fl, const struct daemon *d,
		      uint64_t now);
/* "learned_flows": ports learned about that have no flow now. */
void status_flow_learned_json(struct json_writer *w, const struct daemon *d, uint64_t now);
/* The RATE flags the documents name, bit by bit (RXBNECK_RATE_*). */
#define STATUS_FLOW_RATE_FLAGS	7
/* "degraded", "stale", ...; NULL for @bit >= STATUS_FLOW_RATE_FLAGS. */
const char *status_flow_rate_flag_name(unsigned int bit);
/* A RATE as the documents give it (flows[].rate, senders[].last_rate); null without @r. */
void status_flow_rate_json(struct json_writer *w, const char *key, const struct rxbneck_rate *r);

#endif
