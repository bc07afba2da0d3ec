/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stream-count advice as JSON (docs/CONTROL.md, `streams`): written by
 * rxbneckd for `rxbneckctl streams [PEER]` and by rxbneckctl itself for
 * `rxbneckctl streams --samples FILE`, so that one view (ctl/view/
 * view_streams.c) and one plot script show both.
 *
 * A peer object has "samples" (written by the caller, who knows where they
 * came from), then what streams_doc_result() writes:
 *   "fit":    the chosen model, its coefficients (a', b', c', the break
 *             function's second piece a2, b2 from nb, the loss model's x),
 *             eq. 35's error (bits/s) and relative to the mean, the samples
 *             the coefficients came from, the confidence, and per model
 *             tried: its error, combinations tried, undetermined, rejected
 *             by the §5 propositions;
 *   "advice": streams advised, predicted there, the peak (n, bits/s), the
 *             curve still rising at n_max, the receiver cap and whether it
 *             moved the advice, the tolerance and n_max;
 *   "curve":  [n, predicted bits/s] for n = 1 .. n_max (null where the
 *             model is not defined: never, for a model the checks passed).
 */
#ifndef RXB_DAEMON_MODEL_STREAMS_DOC_H
#define RXB_DAEMON_MODEL_STREAMS_DOC_H

#include "common/json.h"
#include "solver/streams_fit.h"

/*
 * The members "fit", "advice" and "curve" of the object being written,
 * for the result @r of streams_fit_best(@p, @m, @o). @r->model NONE: fit
 * has model "measured" and null coefficients, curve is empty.
 */
void streams_doc_result(struct json_writer *w, const struct streams_point *p, int m,
			const struct streams_fit_opts *o, const struct streams_fit_result *r);

#endif
