/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stream-count advice as text (docs/CONTROL.md `streams`): from
 * rxbneckd (`rxbneckctl streams [PEER]`) or from a samples file
 * (`rxbneckctl streams --samples FILE`), one block per peer: the samples
 * per stream count, the model fitted (error, coefficients), the advice
 * (streams, predicted throughput, peak, the receiver cap), the
 * exponential sampling's state, and the curve; with VIEW_VERBOSE every
 * model tried and the whole curve. See view.h.
 */
#ifndef RXB_CTL_VIEW_STREAMS_H
#define RXB_CTL_VIEW_STREAMS_H

#include <stddef.h>
#include <stdio.h>

struct json_object;

void view_streams(FILE *f, const struct json_object *doc, unsigned flags);

/*
 * The same from the document's text (@len bytes): 0, or -EINVAL with why
 * in @why (ANSWER_WHY_LEN bytes) when it is not a JSON object.
 */
int view_streams_text(FILE *f, const char *json, size_t len, unsigned flags, char *why);

#endif
