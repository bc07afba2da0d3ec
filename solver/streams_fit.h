/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fitting the parallel-stream models (solver/streams.h) to samples and
 * choosing the number of streams, after Yildirim, Yin and Kosar,
 * "Prediction of Optimal Parallelism Level in Wide Area Data Transfers".
 *
 * Best-Fitted Coefficients (their §4): for one model, every combination
 * of as many samples as the model has coefficients gives coefficients
 * (streams_coef()); a combination whose coefficients break the §5
 * propositions is rejected before its error is computed (streams_check());
 * of the others, the one whose curve is closest to all the samples by the
 * root-mean-square distance of eq. 35,
 *	Err = sqrt(sum_i (Th_i - Th(n_i))^2 / m),
 * wins. The first of equal errors in the paper's loop order (i < j < k)
 * is kept. The packet-loss model's exponent 1/x is searched with the
 * combinations, over x in STREAMS_FIT_LOSS_X (the paper ranges x from 2
 * up).
 *
 * Across models (streams_fit_best()) the smallest Err wins, as the paper
 * compares them (§6.2, figures 3 and 4); errors equal to within
 * STREAMS_FIT_TIE of the mean throughput go to the model earlier in the
 * paper's ranking of them (STREAMS_FIT_PREFERENCE: full second order and
 * Newton's iteration predicted best, the break function next), which
 * decides when the samples are as many as the coefficients and every
 * model through them fits exactly.
 *
 * The advice: the predicted curve at n = 1 .. n_max; its peak (the
 * paper's optimum); and the number advised, the fewest streams whose
 * predicted throughput is within @tolerance of the best predicted - for
 * a curve that rises for ever the best is at n_max, and more streams for
 * a few per cent cost the network and the hosts more than they give. The
 * choice is among the n up to the peak: past it more streams only lose.
 * A receiver cap (the rate the receiving host can drain) removes from the
 * choice every n predicted above it; the advice is then the fewest
 * streams within @tolerance of the best n that stays below the cap, and
 * `capped` says the cap moved it.
 *
 * The exponential sampling strategy (§6.3): sample n = 1, 2, 4, 8, ...
 * until the throughput stops rising (grows by less than a fraction over
 * the previous level) or n would pass n_max; streams_fit_expo_next() says
 * which n to sample next.
 *
 * Pure: no I/O, no allocation, no globals; the work is bounded by the
 * number of combinations, C(m, 3) per three-sample model for m samples
 * (m <= STREAMS_FIT_MAX_POINTS).
 */
#ifndef RXB_SOLVER_STREAMS_FIT_H
#define RXB_SOLVER_STREAMS_FIT_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/streams.h"

#define STREAMS_FIT_MAX_POINTS	64
#define STREAMS_FIT_TIE		1e-9
/* The exponents tried for the packet-loss model: Th_n^2 = a' n^(1/x) + b'. */
#define STREAMS_FIT_LOSS_X	{ 2.0, 3.0, 4.0, 6.0, 8.0 }
#define STREAMS_FIT_NLOSS_X	5

/* Every model, bit (1 << model). */
#define STREAMS_FIT_ALL		(((1u << STREAMS_NMODELS) - 1) & ~1u)

/* The best combination of one model (the BFC algorithm's output). */
struct streams_bfc {
	bool found;
	struct streams_coef coef;
	int idx[3];		/* the samples used (points streams_model_points()) */
	double err;		/* eq. 35 over every sample, NaN if none found */
	uint32_t tried;		/* combinations (times exponents for loss) */
	uint32_t undetermined;	/* whose samples gave no coefficients */
	uint32_t rejected;	/* that broke a proposition (§5) */
};

struct streams_fit_opts {
	uint32_t n_max;		/* the curve from 1 to n_max (<= STREAMS_N_LIMIT) */
	double tolerance;	/* advise the fewest streams within this of the best, [0, 1) */
	double cap;		/* the receiver's drain capacity, th's unit; 0 = none */
	uint32_t models;	/* bit (1 << model) per model tried; 0 = all */
};

struct streams_fit_result {
	enum streams_model model;	/* the chosen one; NONE: no model fitted */
	struct streams_bfc best;	/* its combination */
	struct streams_bfc per_model[STREAMS_NMODELS];	/* every model tried */
	uint32_t n_max;			/* the curve's range (n_max, or the largest
					 * sample when that is larger) */
	uint32_t n_peak;		/* argmax of the curve over 1 .. n_max */
	double th_peak;
	uint32_t n_opt;			/* the advice */
	double th_opt;			/* predicted there (measured with NONE) */
	bool capped;			/* the cap moved the advice */
	bool rising;			/* the curve still rises at n_max */
	double rel_err;			/* best.err / the samples' mean throughput */
	double confidence;		/* in [0, 1], see streams_fit_confidence() */
};

/*
 * Whether @p (@m points) can be fitted: n increasing, n >= 1, th > 0,
 * all finite, 1 <= @m <= STREAMS_FIT_MAX_POINTS.
 */
bool streams_fit_points_ok(const struct streams_point *p, int m);

/* Eq. 35: the RMS distance of @k's curve from the @m samples (NaN if undefined at one). */
double streams_fit_err(const struct streams_coef *k, const struct streams_point *p, int m);

/*
 * The Best-Fitted Coefficients of model @model for the @m samples @p
 * (streams_fit_points_ok()), its curve checked on [1, @n_max]. 0 with
 * @out filled (out->found false when every combination was rejected), or
 * -1 for bad input.
 */
int streams_fit_bfc(enum streams_model model, const struct streams_point *p, int m,
		    double n_max, struct streams_bfc *out);

/*
 * Every model of @o->models that has enough samples, the best of them and
 * the advice (above). 0, or -1 for bad input (@p or @o). With no model
 * found, model is NONE and the advice the best measured sample (within
 * the cap when one is below it).
 */
int streams_fit_best(const struct streams_point *p, int m, const struct streams_fit_opts *o,
		     struct streams_fit_result *res);

/*
 * How much the advice can be trusted, in [0, 1]: (1 - rel_err) times
 * 1 - 2^-(m - k), k the samples the coefficients took: a curve through
 * every sample it has (m = k) was never checked against one it did not
 * use, and each held-out sample halves the remaining doubt.
 */
double streams_fit_confidence(double rel_err, int m, int k);

/*
 * The exponential sampling strategy: the next power of two to sample
 * given the samples so far (@p, increasing n), or 0 when it is done - the
 * last power of two sampled gave less than (1 + @rise) times the one
 * before, or the next is above @n_max.
 */
uint32_t streams_fit_expo_next(const struct streams_point *p, int m, double rise,
			       uint32_t n_max);

#endif
