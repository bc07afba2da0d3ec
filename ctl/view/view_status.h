/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `rxbneckctl status`: the daemon's status document (docs/CONTROL.md §6)
 * as text. See view.h for the conventions.
 */
#ifndef RXB_CTL_VIEW_STATUS_H
#define RXB_CTL_VIEW_STATUS_H

#include <stdio.h>

struct json_object;

/* The whole document; @flags: VIEW_VERBOSE. */
void view_status(FILE *f, const struct json_object *doc, unsigned flags);

#endif
