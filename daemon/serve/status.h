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

/* Seconds from @then_ns to @now_ns (CLOCK_MONOTONIC); NaN when @then_ns is 0. */
double status_age_s(uint64_t then_ns, uint64_t now_ns);

#endif
