/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One measurement record (the keys of `rxbneckd --measure-only --json`,
 * docs/measurement.md) as text: the epoch, per CPU the task classes, the
 * disk, each watched socket, NAPI, NICs, drops, probe cost, and the
 * classified tasks when the record has them. What `rxbneckd --measure-only`
 * prints without --json, and `rxbneckctl status -v` under the status. See
 * view.h.
 */
#ifndef RXB_CTL_VIEW_MEASURE_H
#define RXB_CTL_VIEW_MEASURE_H

#include <stddef.h>
#include <stdio.h>

struct json_object;

void view_measure(FILE *f, const struct json_object *rec);

/*
 * The record given as JSON text of @len bytes: parsed (ctl/view/answer.h)
 * and printed. 0, or -EINVAL after printing why on stderr.
 */
int view_measure_text(FILE *f, const char *json, size_t len);

#endif
