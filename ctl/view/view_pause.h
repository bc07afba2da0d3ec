/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A flow's pause-window predictor (docs/CONTROL.md §6.2.2, docs/pause.md)
 * as text: one line, or with VIEW_VERBOSE the prediction, the measured
 * preemptions, the checks and the last frame. See view.h.
 */
#ifndef RXB_CTL_VIEW_PAUSE_H
#define RXB_CTL_VIEW_PAUSE_H

#include <stdio.h>

struct json_object;

void view_pause(FILE *f, const struct json_object *pause, unsigned flags);

#endif
