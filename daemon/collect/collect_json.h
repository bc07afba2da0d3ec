/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One measurement record as JSON: the keys of `rxbneckd --measure-only
 * --json` and of the status document's "measurement" (docs/measurement.md).
 * Values that were not measured are null. The text people read is made
 * from this JSON by ctl/view/view_measure.h, for --measure-only and
 * rxbneckctl alike.
 */
#ifndef RXB_DAEMON_COLLECT_JSON_H
#define RXB_DAEMON_COLLECT_JSON_H

#include "common/json.h"
#include "daemon/collect/collect_sched.h"
#include "rxb/measure.h"

/* Write @e as one JSON object (member @key, or a top-level value if NULL);
 * with @tasks (may be NULL) also its "tasks" list. */
void collect_json_epoch(struct json_writer *w, const char *key, const struct rxb_epoch *e,
			const struct collect_sched_report *tasks);

/* The classified tasks of an epoch (collect_task_report()). */
void collect_json_tasks(struct json_writer *w, const char *key, const struct collect_sched_report *r);

/*
 * A CPU's task classes: "cpu", "cpu_bound", "io_bound" and "busy_frac", as
 * members of the object the caller has open (a "cpus" entry here and in
 * the status document).
 */
void collect_json_cpu_classes(struct json_writer *w, const struct rxb_cpu_meas *c);
/*
 * A co-runner's CPU quota phases as @key: {period_s, slow_s, slow_share,
 * fast_share}, or null where @period_s is 0 (none).
 */
void collect_json_quota(struct json_writer *w, const char *key, double period_s, double slow_s,
			double slow_share, double fast_share);

/* The name of a bit of enum rxb_probe_group ("sched"; "unknown" for another value). */
const char *collect_json_probe_group_name(unsigned bit);
/* An array of the names of the enum rxb_degraded bits set in @degraded. */
void collect_json_degraded_flags(struct json_writer *w, const char *key, uint32_t degraded);

#endif
