/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "predictions" of a flow in the status document (docs/CONTROL.md): its
 * record of predictions against reported outcomes (daemon/model/outcome.h),
 * the running error and every transfer kept, oldest first.
 */
#ifndef RXB_DAEMON_STATUS_OUTCOME_H
#define RXB_DAEMON_STATUS_OUTCOME_H

#include <stdint.h>

#include "common/json.h"
#include "daemon/model/outcome.h"

/* "predictions": {...}; ages against @now (CLOCK_MONOTONIC). */
void status_outcome_json(struct json_writer *w, const struct outcome *o, uint64_t now);

#endif
