/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Continuous-time Markov chains in sparse (CSR) form and their solvers.
 *
 * A chain stores its off-diagonal rates q_ij (per second) row by row and the
 * exit rate q_i = sum_j q_ij of every state; the diagonal of the generator is
 * -q_i and is never stored. A state with q_i == 0 is absorbing.
 *
 * Solvers:
 *   ctmc_steady_state()  pi Q = 0, sum pi = 1 for an irreducible chain:
 *                        GTH state reduction (dense, subtraction-free) for
 *                        small chains, the same reduction inside the band
 *                        (ctmc_band.h) for large chains with a narrow band
 *                        in some order (birth-death, quasi-birth-death),
 *                        sparse Gauss-Seidel/SOR for the others.
 *   ctmc_absorb_mean()   mean time to absorption from an initial distribution:
 *                        LAPACK LU (dgetrf/dgetrs, with a condition estimate)
 *                        for small transient blocks, the subtraction-free
 *                        band reduction for large banded ones, Gauss-Seidel
 *                        for the others.
 *   ctmc_transient(),    uniformization with Fox-Glynn truncation points
 *   ctmc_absorb_cdf()    (ctmc_unif.c): p(t) and F(t) = P(absorbed by t).
 *
 * Every solver fills a struct ctmc_stat with the method used, a residual and
 * an error bound, and returns 0 or a negative errno; it never returns a
 * non-finite number with a success code:
 *   -EINVAL     bad arguments, or the chain does not have the required
 *               structure (reducible for a steady state; some transient
 *               state cannot reach absorption for a mean time)
 *   -ENOMEM     allocation failure
 *   -ETIMEDOUT  an iterative method did not reach its tolerance (the output
 *               holds the last iterate, stat->residual says how good it is)
 *   -EDOM       a non-finite value appeared
 *   -E2BIG      the problem exceeds a configured size limit
 */
#ifndef RXB_SOLVER_CTMC_H
#define RXB_SOLVER_CTMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctmc {
	uint32_t n;		/* states */
	uint32_t nnz;		/* stored off-diagonal transitions */
	uint32_t row_cap;	/* allocated rows (row_ptr has row_cap + 1) */
	uint32_t nnz_cap;	/* allocated entries of col/rate */
	uint32_t *row_ptr;	/* row i is [row_ptr[i], row_ptr[i+1]) */
	uint32_t *col;		/* destination state, strictly increasing per row */
	double *rate;		/* q_ij > 0, per second */
	double *exit_rate;	/* q_i, per second */
};

enum ctmc_method {
	CTMC_METHOD_AUTO = 0,	/* pick by size (opts.dense_max) and band */
	CTMC_METHOD_GTH,	/* dense GTH state reduction (steady state) */
	CTMC_METHOD_SOR,	/* sparse Gauss-Seidel / SOR */
	CTMC_METHOD_LU,		/* dense LAPACK LU (absorbing mean time) */
	CTMC_METHOD_UNIF,	/* uniformization (transient) */
	CTMC_METHOD_BAND,	/* banded GTH reduction (both; ctmc_band.h) */
};

struct ctmc_opts {
	/*
	 * AUTO: the dense method up to dense_max states; above, the band
	 * reduction when its work is at most CTMC_BAND_WORK_SWEEPS
	 * Gauss-Seidel sweeps (ctmc_band.h), else Gauss-Seidel. BAND forces
	 * the band reduction (in the narrower of the chain's own and the
	 * Cuthill-McKee order), whatever the band.
	 */
	enum ctmc_method method;
	uint32_t dense_max;	/* AUTO: dense method up to this many states */
	double tol;		/* iterative: relative change per sweep to stop */
	uint32_t max_iter;	/* iterative: sweep limit */
	double omega;		/* SOR relaxation factor, 1 = Gauss-Seidel */
};

struct ctmc_stat {
	enum ctmc_method method;	/* what was actually used */
	uint32_t iterations;	/* sweeps (iterative), Poisson terms (unif.) */
	/*
	 * Steady state: ||pi Q||_1 / max_i q_i. Absorbing mean: normwise
	 * relative residual ||A tau - 1||_1 / (||A||_1 ||tau||_1) with
	 * A = -Q_TT. Uniformization: 0 (the error is all truncation).
	 */
	double residual;
	/*
	 * Bound on the relative error of the result: for GTH an a-priori
	 * componentwise bound, for LU the forward bound cond_1(A) * residual,
	 * for Gauss-Seidel the contraction estimate rho/(1-rho) * last change,
	 * for uniformization the absolute truncation bound on each probability.
	 * The band reduction has the GTH kind of bound, 3 m w eps for m
	 * states and band width w = band_lower + band_upper + 1.
	 */
	double err_bound;
	uint32_t band_lower;	/* BAND: bandwidths of the order used */
	uint32_t band_upper;
};

const char *ctmc_method_name(enum ctmc_method m);
void ctmc_opts_default(struct ctmc_opts *o);

/* An empty chain with room for @rows states and @nnz transitions (hints). */
int ctmc_init(struct ctmc *q, uint32_t rows, uint32_t nnz);
void ctmc_finish(struct ctmc *q);

/*
 * Append the next row (state q->n) with @k transitions. Columns may repeat
 * (rates are summed), may point to states not yet added, and self-loops and
 * zero rates are dropped. Rates must be finite and >= 0.
 */
int ctmc_add_row(struct ctmc *q, const uint32_t *cols, const double *rates,
		 uint32_t k);
/* Check that every column is < n; call once after the last row. */
int ctmc_seal(const struct ctmc *q);
/* Give back the unused capacity (after the last row). */
void ctmc_shrink(struct ctmc *q);

/* A chain from a dense n x n row-major rate matrix (diagonal ignored). */
int ctmc_from_dense(struct ctmc *q, uint32_t n, const double *a);

/* Bytes held by the chain's arrays. */
size_t ctmc_bytes(const struct ctmc *q);
double ctmc_max_exit_rate(const struct ctmc *q);

/* Every state reaches every other (forward and backward search from 0). */
int ctmc_is_irreducible(const struct ctmc *q, bool *irreducible);

/* pi Q = 0, sum pi = 1; @pi has q->n entries. */
int ctmc_steady_state(const struct ctmc *q, const struct ctmc_opts *o,
		      double *pi, struct ctmc_stat *st);

/*
 * Mean time to absorption, in seconds, from the initial distribution @alpha
 * (q->n entries, sum 1; mass on absorbing states contributes 0). When @tau_s
 * is not NULL it receives the mean time from every state (0 for absorbing).
 */
int ctmc_absorb_mean(const struct ctmc *q, const double *alpha,
		     const struct ctmc_opts *o, double *mean_s, double *tau_s,
		     struct ctmc_stat *st);

/*
 * Transient distribution p(t) = p0 exp(Q t) by uniformization; every
 * component of @pt is within @eps (absolute) of the exact value, rounding
 * aside.
 */
int ctmc_transient(const struct ctmc *q, const double *p0, double t_s,
		   double eps, double *pt, struct ctmc_stat *st);

/*
 * F(t) = P(absorbed by t) from @alpha, for the @nt times @t_s (any order).
 * @cdf and, when not NULL, @survival = 1 - F (computed from the transient
 * mass, so small values keep their relative accuracy) get @nt values within
 * @eps of the exact ones. @max_steps bounds the uniformization steps
 * (0: 10^7); more are needed for t >> 1/q_i: -E2BIG.
 */
int ctmc_absorb_cdf(const struct ctmc *q, const double *alpha,
		    const double *t_s, uint32_t nt, double eps,
		    uint32_t max_steps, double *cdf, double *survival,
		    struct ctmc_stat *st);

/*
 * One step of the uniformized chain: out = v P, P = I + Q / @lambda, with
 * @stay[i] = 1 - q_i / lambda (from ctmc_unif_stay(), allocated).
 */
int ctmc_unif_stay(const struct ctmc *q, double lambda, double **stay);
void ctmc_unif_step(const struct ctmc *q, double lambda, const double *stay,
		    const double *v, double *out);

/*
 * Poisson probabilities by Fox and Glynn's method: weights w[k - left] for
 * k in [left, right], normalised to sum 1, such that the Poisson(@lambda)
 * mass outside [left, right] is at most @eps (reported in trunc_mass).
 */
struct ctmc_fg_weights {
	uint32_t left;
	uint32_t right;
	double *w;
	double trunc_mass;	/* bound on the mass outside [left, right] */
};

int ctmc_fg_compute(double lambda, double eps, struct ctmc_fg_weights *fw);
void ctmc_fg_finish(struct ctmc_fg_weights *fw);

#endif
