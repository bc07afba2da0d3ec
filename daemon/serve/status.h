/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The answers to rxbneckctl's commands (docs/CONTROL.md): status,
 * senders, reload, version, each one JSON document. The daemon fills the
 * documents; rxbneckctl's views (ctl/view/) write the text people read.
 */
#ifndef RXB_DAEMON_STATUS_H
#define RXB_DAEMON_STATUS_H

#include <stdint.h>

#include "common/json.h"
#include "daemon/serve/ctlsrv.h"

struct daemon;

/* Answer one request (ctlsrv_ops.request). */
void status_dispatch(struct daemon *d, const struct ctl_request *req,
		     struct ctl_reply *rep);

/* The status document as JSON (also used by tests). */
void status_json(struct json_writer *w, const struct daemon *d);

/* Why the daemon is degraded (the status document's degraded_reasons). */
enum status_health {
	STATUS_HEALTH_NO_EPOCH,
	STATUS_HEALTH_NO_BPF,
	STATUS_HEALTH_PARTIAL_PROBES,
	STATUS_HEALTH_NO_NETLINK,
	STATUS_HEALTH_STATE_DIR,
	STATUS_HEALTH_STATE_SAVE,
	STATUS_HEALTH_RELOAD_FAILED,
	STATUS_HEALTH_FLOW_STALE,
	STATUS_HEALTH_N
};

/* The reasons that hold now, bit i = enum status_health i; 0: healthy. */
uint32_t status_health(const struct daemon *d);
/* Reason @i as a label value: "no_bpf", ... */
const char *status_health_name(unsigned int i);

/* Every refusal of a sender, by reason: status's senders.refused. */
#define STATUS_REFUSALS		8
struct status_refusal {
	const char *name;	/* "not_allowed", ... (docs/CONTROL.md) */
	uint64_t n;		/* since the daemon started */
};
void status_refusals(const struct daemon *d, struct status_refusal v[STATUS_REFUSALS]);

/* Seconds from @then_ns to @now_ns (CLOCK_MONOTONIC); NaN when @then_ns is 0. */
double status_age_s(uint64_t then_ns, uint64_t now_ns);

#endif
