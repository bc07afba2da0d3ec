/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One measurement record as JSON (the keys of `rxbneckd --measure-only
 * --json`, documented in docs/measurement.md) or as readable text. Values
 * that were not measured are null in JSON and "-" in text.
 */
#ifndef RXB_DAEMON_COLLECT_JSON_H
#define RXB_DAEMON_COLLECT_JSON_H

#include <stdio.h>

#include "common/json.h"
#include "rxb/measure.h"

/* Write @e as one JSON object (member @key, or a top-level value if NULL). */
void collect_epoch_json(struct jw *w, const char *key, const struct rxb_epoch *e);

/* Write @e as readable text to @f. */
void collect_epoch_text(FILE *f, const struct rxb_epoch *e);

/* Names of the set bits of enum rxb_degraded, e.g. "no_bpf". */
const char *collect_degraded_name(unsigned bit);

#endif
