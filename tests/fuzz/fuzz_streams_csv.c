// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the samples file of `rxbneckctl streams --samples`
 * (ctl/streams_csv.c), and the fit of whatever it accepts
 * (solver/streams_fit.c). Besides "no crash, no sanitizer report":
 *  - a rejected file gives one message without a line break;
 *  - an accepted one has 1 .. STREAMS_FIT_MAX_POINTS points, increasing
 *    n in 1 .. STREAMS_N_LIMIT, positive finite means, counts adding up
 *    to the rows read;
 *  - the fit of those points succeeds, and its advice is a stream count
 *    within the curve's range whose prediction is finite and positive.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/streams_csv.h"
#include "solver/streams_fit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct streams_csv c;
	struct streams_fit_opts o = { .n_max = 64, .tolerance = 0.02 };
	struct streams_fit_result r;
	char err[160];
	uint64_t rows = 0;

	err[0] = '\0';
	if (streams_csv_parse((const char *)data, size, &c, err, sizeof(err))) {
		if (!err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	if (c.m < 1 || c.m > STREAMS_FIT_MAX_POINTS)
		abort();
	for (int i = 0; i < c.m; i++) {
		if (!(c.p[i].n >= 1 && c.p[i].n <= STREAMS_N_LIMIT) || !(c.p[i].th > 0) ||
		    !isfinite(c.p[i].th) || (i && !(c.p[i].n > c.p[i - 1].n)) || !c.count[i])
			abort();
		rows += c.count[i];
	}
	if (rows != c.rows)
		abort();
	/* A fit over tens of points is the slow part: at most 12 here. */
	if (streams_fit_best(c.p, c.m < 12 ? c.m : 12, &o, &r))
		abort();
	if (r.n_opt < 1 || r.n_opt > r.n_max || !(r.th_opt > 0) || !isfinite(r.th_opt))
		abort();
	return 0;
}
