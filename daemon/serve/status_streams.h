/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `streams` document (docs/CONTROL.md §10): the stream-count advisor's
 * state and, per peer, its samples, the fit and the advice
 * (daemon/model/streams_doc.h), for `rxbneckctl streams [PEER]`.
 */
#ifndef RXB_DAEMON_STATUS_STREAMS_H
#define RXB_DAEMON_STATUS_STREAMS_H

#include "common/json.h"
#include "daemon/serve/ctlsrv.h"

struct daemon;

/*
 * Answer "streams [PEER] [json]": PEER is ADDRESS, ADDRESS:PORT or
 * [IPv6]:PORT (the local port). A PEER that does not parse is
 * BAD_ARGUMENT; one the advisor does not know gives an empty list.
 */
void status_streams_cmd(struct daemon *d, const struct ctl_request *req, struct json_writer *w,
			struct ctl_reply *rep);

/* The advisor's counters, for the status document's "streams" member. */
void status_streams_summary(struct json_writer *w, const char *key, const struct daemon *d);

#endif
