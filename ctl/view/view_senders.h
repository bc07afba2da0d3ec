/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The smaller documents as text (docs/CONTROL.md §7-8): the connected
 * senders, the outcome of a reload, the daemon's version. See view.h.
 */
#ifndef RXB_CTL_VIEW_SENDERS_H
#define RXB_CTL_VIEW_SENDERS_H

#include <stdio.h>

struct json_object;

/*
 * {"senders": [...]}: one line per sender under a header. These two have
 * no verbose form; they take @flags (VIEW_*, unused) to be the
 * ctl_client_view_fn of their commands.
 */
void view_senders(FILE *f, const struct json_object *doc, unsigned flags);
/* {"ok", "config_file", "changed", "restart_needed"} */
void view_reload(FILE *f, const struct json_object *doc, unsigned flags);
/* {"version", "ctl_protocol"} */
void view_version(FILE *f, const struct json_object *doc);

#endif
