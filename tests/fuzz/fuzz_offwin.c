// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for offwin_parse() (rxbneckctl model --offcpu-windows)
 * and the window loss on what it accepts. The input is the option's text.
 * Besides "no crash, no sanitizer report": a rejected text leaves the rate
 * and the histogram zero; an accepted one gives a finite rate and counts
 * >= 0; the loss at any of a few rates lies in [0, 1], and the lower-edge
 * and upper-edge placements bracket the log-uniform one; as waits after a
 * wake-up, cutting the slots at a longest wait keeps the loss in [0, 1]
 * and, without the slots' moments, never adds loss (with them a cut just
 * above a slot's mean turns its law to one falling from the cut, whose
 * longer lower tail may add loss at rates where x lies below the mean).
 * Both with the slots' moments the text gives and without them.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solver/offwin.h"

#define SLOTS 32
/*
 * How far the placements may cross by rounding and quadrature: the room a
 * window finds is averaged over the previous window's law with 8-point
 * Gauss-Legendre between its e-folding breaks (solver/offwin.c); the point
 * placements have no quadrature. (Before that average was divided by the
 * rule's own mass, a steep falling law - the seed steep-fall, 126
 * e-foldings over its slot - came out 2e-11 below the lower edge's.)
 */
#define BRACKET_REL 1e-9

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_loss(double per_s, const double *count, const double *mean_s,
		       const double *sd_s)
{
	static const double lambdas[] = { 1e3, 1e5, 4.5e5, 1e7 };
	struct offwin_in in = { .per_s = per_s, .count = count, .mean_s = mean_s,
				.sd_s = sd_s, .nslots = SLOTS,
				.queue_pkts = 3641, .on_pkts_per_s = 8e5 };

	for (size_t i = 0; i < sizeof(lambdas) / sizeof(lambdas[0]); i++) {
		double lo = offwin_loss(&in, lambdas[i], OFFWIN_LOW);
		double mid = offwin_loss(&in, lambdas[i], OFFWIN_LOGUNIFORM);
		double hi = offwin_loss(&in, lambdas[i], OFFWIN_HIGH);

		if (!(mid >= 0 && mid <= 1) || !(lo <= mid * (1 + BRACKET_REL) + 1e-300) ||
		    !(mid <= hi * (1 + BRACKET_REL) + 1e-300))
			abort();
	}
}

/*
 * The same histogram as waits after a wake-up, cut at a few longest
 * waits: the loss stays in [0, 1], and without moments a cut never adds
 * loss.
 */
static void check_cut(double per_s, const double *count, const double *mean_s,
		      const double *sd_s)
{
	bool monotone = !mean_s;
	static const double caps_s[] = { 1e-6, 3e-3, 0.1, 1e4 };
	struct offwin_in in = { .wake_per_s = per_s, .wake_count = count,
				.wake_mean_s = mean_s, .wake_sd_s = sd_s, .nslots = SLOTS,
				.queue_pkts = 3641, .on_pkts_per_s = 8e5 };
	double whole = offwin_loss(&in, 4.5e5, OFFWIN_LOGUNIFORM);

	for (size_t i = 0; i < sizeof(caps_s) / sizeof(caps_s[0]); i++) {
		double cut;

		in.wake_max_s = caps_s[i];
		cut = offwin_loss(&in, 4.5e5, OFFWIN_LOGUNIFORM);
		if (!(cut >= 0 && cut <= 1) ||
		    (monotone && !(cut <= whole * (1 + 1e-12) + 1e-300)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double count[SLOTS], mean_s[SLOTS], sd_s[SLOTS], per_s;
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (offwin_parse(s, &per_s, count, mean_s, sd_s, SLOTS)) {
		if (per_s != 0)
			abort();
		for (size_t r = 0; r < SLOTS; r++)
			if (count[r] != 0 || mean_s[r] != 0 || sd_s[r] != 0)
				abort();
	} else {
		if (!isfinite(per_s) || per_s < 0)
			abort();
		for (size_t r = 0; r < SLOTS; r++)
			if (!isfinite(count[r]) || count[r] < 0 || !isfinite(mean_s[r]) ||
			    mean_s[r] < 0 || !isfinite(sd_s[r]) || sd_s[r] < 0)
				abort();
		check_loss(per_s, count, NULL, NULL);
		check_cut(per_s, count, NULL, NULL);
		check_loss(per_s, count, mean_s, sd_s);
		check_cut(per_s, count, mean_s, sd_s);
	}
	free(s);
	return 0;
}
