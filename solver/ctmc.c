// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CSR storage of a CTMC, steady state (GTH, Gauss-Seidel/SOR) and mean time
 * to absorption (LAPACK LU, Gauss-Seidel). See ctmc.h.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "solver/ctmc.h"
#include "solver/ctmc_band.h"
#include "solver/ctmc_graph.h"

#define CTMC_DEFAULT_DENSE_MAX	400
#define CTMC_DEFAULT_TOL	1e-13
#define CTMC_DEFAULT_MAX_ITER	200000

const char *ctmc_method_name(enum ctmc_method m)
{
	switch (m) {
	case CTMC_METHOD_AUTO:	return "auto";
	case CTMC_METHOD_GTH:	return "gth";
	case CTMC_METHOD_SOR:	return "gauss-seidel";
	case CTMC_METHOD_LU:	return "lapack-lu";
	case CTMC_METHOD_UNIF:	return "uniformization";
	case CTMC_METHOD_BAND:	return "band-gth";
	}
	return "?";
}

void ctmc_opts_default(struct ctmc_opts *o)
{
	o->method = CTMC_METHOD_AUTO;
	o->dense_max = CTMC_DEFAULT_DENSE_MAX;
	o->tol = CTMC_DEFAULT_TOL;
	o->max_iter = CTMC_DEFAULT_MAX_ITER;
	o->omega = 1.0;
}

static const struct ctmc_opts *opts_or_default(const struct ctmc_opts *o,
					       struct ctmc_opts *buf)
{
	if (o)
		return o;
	ctmc_opts_default(buf);
	return buf;
}

/* A solve's statistics before it starts: nothing known; an empty chain has no answer. */
static int stat_start(const struct ctmc *q, struct ctmc_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->residual = NAN;
	st->err_bound = NAN;
	return q->n ? 0 : -EINVAL;
}

/* ------------------------------------------------------------ storage -- */

/*
 * Resizes the parallel arrays *@u (@cap + @extra entries) and *@d (@cap
 * entries). Whichever realloc fails leaves its block as it was: growing
 * then fails with -ENOMEM (the caller keeps the old capacity), and a
 * failed shrink is harmless (the recorded capacity only understates it).
 */
static int resize_pair(uint32_t **u, double **d, uint32_t cap, size_t extra)
{
	uint32_t *nu = realloc(*u, ((size_t)cap + extra) * sizeof(*nu));
	double *nd;

	if (nu)
		*u = nu;
	nd = realloc(*d, (size_t)cap * sizeof(*nd));
	if (nd)
		*d = nd;
	return nu && nd ? 0 : -ENOMEM;
}

/*
 * Makes room for @need entries in *@u and *@d: the capacity *@cap (or
 * @first) doubled until it holds them, at most @max.
 */
static int grow_pair(uint32_t *cap, uint64_t need, uint32_t first, uint64_t max,
		     size_t extra, uint32_t **u, double **d)
{
	uint64_t c = *cap ? *cap : first;
	int err;

	if (need <= *cap)
		return 0;
	if (need > max)
		return -E2BIG;
	while (c < need)
		c *= 2;
	if (c > max)
		c = max;
	err = resize_pair(u, d, (uint32_t)c, extra);
	if (!err)
		*cap = (uint32_t)c;
	return err;
}

/* row_ptr has one entry more than the rows; at most 2^31 rows. */
static int grow_rows(struct ctmc *q, uint32_t need)
{
	return grow_pair(&q->row_cap, need, 16, (uint64_t)UINT32_MAX / 2 + 1, 1,
			 &q->row_ptr, &q->exit_rate);
}

static int grow_nnz(struct ctmc *q, uint64_t need)
{
	return grow_pair(&q->nnz_cap, need, 64, UINT32_MAX, 0, &q->col, &q->rate);
}

int ctmc_init(struct ctmc *q, uint32_t rows, uint32_t nnz)
{
	int err;

	memset(q, 0, sizeof(*q));
	err = grow_rows(q, rows ? rows : 1);
	if (!err)
		err = grow_nnz(q, nnz ? nnz : 1);
	if (err) {
		ctmc_finish(q);
		return err;
	}
	q->row_ptr[0] = 0;
	return 0;
}

void ctmc_finish(struct ctmc *q)
{
	free(q->row_ptr);
	free(q->col);
	free(q->rate);
	free(q->exit_rate);
	memset(q, 0, sizeof(*q));
}

/* Shell sort of (col, rate) pairs by column: rows are short, usually sorted. */
static void sort_pairs(uint32_t *c, double *r, uint32_t k)
{
	static const uint32_t gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

	for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		uint32_t gap = gaps[g];

		for (uint32_t i = gap; i < k; i++) {
			uint32_t tc = c[i];
			double tr = r[i];
			uint32_t j = i;

			while (j >= gap && c[j - gap] > tc) {
				c[j] = c[j - gap];
				r[j] = r[j - gap];
				j -= gap;
			}
			c[j] = tc;
			r[j] = tr;
		}
	}
}

int ctmc_add_row(struct ctmc *q, const uint32_t *cols, const double *rates,
		 uint32_t k)
{
	uint32_t row = q->n, base = q->nnz, out = base;
	uint32_t *c;
	double *r, sum = 0.0;
	bool sorted = true;
	int err;

	for (uint32_t i = 0; i < k; i++)
		if (!isfinite(rates[i]) || rates[i] < 0.0)
			return -EDOM;
	err = grow_rows(q, row + 1);
	if (!err)
		err = grow_nnz(q, (uint64_t)base + k);
	if (err)
		return err;
	c = q->col + base;
	r = q->rate + base;
	for (uint32_t i = 0; i < k; i++) {
		c[i] = cols[i];
		r[i] = rates[i];
		if (i && c[i] <= c[i - 1])
			sorted = false;
	}
	if (!sorted)
		sort_pairs(c, r, k);
	/* Merge equal columns; drop self-loops and zero rates. */
	for (uint32_t i = 0; i < k; i++) {
		uint32_t dst = c[i];
		double v = r[i];

		while (i + 1 < k && c[i + 1] == dst)
			v += r[++i];
		if (dst == row || v == 0.0)
			continue;
		q->col[out] = dst;
		q->rate[out] = v;
		out++;
		sum += v;
	}
	if (!isfinite(sum))
		return -EDOM;
	q->nnz = out;
	q->exit_rate[row] = sum;
	q->n = row + 1;
	q->row_ptr[q->n] = out;
	return 0;
}

int ctmc_seal(const struct ctmc *q)
{
	for (uint32_t e = 0; e < q->nnz; e++)
		if (q->col[e] >= q->n)
			return -EINVAL;
	return 0;
}

void ctmc_shrink(struct ctmc *q)
{
	uint32_t rows = q->n ? q->n : 1, nnz = q->nnz ? q->nnz : 1;

	if (rows < q->row_cap) {
		(void)resize_pair(&q->row_ptr, &q->exit_rate, rows, 1);
		q->row_cap = rows;
	}
	if (nnz < q->nnz_cap) {
		(void)resize_pair(&q->col, &q->rate, nnz, 0);
		q->nnz_cap = nnz;
	}
}

int ctmc_from_dense(struct ctmc *q, uint32_t n, const double *a)
{
	uint32_t *cols = malloc((size_t)n * sizeof(*cols));
	int err;

	if (!cols)
		return -ENOMEM;
	for (uint32_t j = 0; j < n; j++)
		cols[j] = j;
	err = ctmc_init(q, n, n);
	for (uint32_t i = 0; !err && i < n; i++)
		err = ctmc_add_row(q, cols, a + (size_t)i * n, n);
	free(cols);
	if (err)
		ctmc_finish(q);
	return err;
}

size_t ctmc_bytes(const struct ctmc *q)
{
	return ((size_t)q->row_cap + 1) * sizeof(uint32_t) +
	       (size_t)q->row_cap * sizeof(double) +
	       (size_t)q->nnz_cap * (sizeof(uint32_t) + sizeof(double));
}

double ctmc_max_exit_rate(const struct ctmc *q)
{
	double m = 0.0;

	for (uint32_t i = 0; i < q->n; i++)
		if (q->exit_rate[i] > m)
			m = q->exit_rate[i];
	return m;
}

int ctmc_is_irreducible(const struct ctmc *q, bool *irreducible)
{
	struct ctmc_graph_csc t;
	int err;

	if (q->n == 0)
		return -EINVAL;
	err = ctmc_graph_csc_build(q, &t);
	if (err)
		return err;
	err = ctmc_graph_irreducible(q, &t, irreducible);
	ctmc_graph_csc_finish(&t);
	return err;
}

/* --------------------------------------------------------- steady state -- */

/* ||pi Q||_1 / max_i q_i, from the columns. */
static double steady_residual(const struct ctmc *q, const struct ctmc_graph_csc *t,
			      const double *pi)
{
	double res = 0.0, qmax = ctmc_max_exit_rate(q);

	for (uint32_t j = 0; j < q->n; j++) {
		double in = 0.0;

		for (uint32_t e = t->col_ptr[j]; e < t->col_ptr[j + 1]; e++)
			in += pi[t->row[e]] * t->rate[e];
		res += fabs(in - pi[j] * q->exit_rate[j]);
	}
	return qmax > 0.0 ? res / qmax : res;
}

/*
 * Grassmann-Taksar-Heyman state reduction. States n-1 .. 1 are eliminated
 * one by one; the rate out of the eliminated state k is s = sum_{j<k} a_kj
 * (a sum of positive numbers, never 1 - something), and every update adds
 * positive terms. No subtraction anywhere, so each pi_i keeps a relative
 * accuracy of O(n^2 eps) however small it is (O'Cinneide 1993), which LU
 * with a normalisation row does not.
 */
static int gth_dense(const struct ctmc *q, double *pi)
{
	uint32_t n = q->n;
	double *a = calloc((size_t)n * n, sizeof(*a));
	double *s = malloc((size_t)n * sizeof(*s));
	double sum;

	if (!a || !s) {
		free(a);
		free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++)
			a[(size_t)i * n + q->col[e]] = q->rate[e];

	for (uint32_t k = n - 1; k >= 1; k--) {
		const double *ak = a + (size_t)k * n;
		double sk = 0.0;

		for (uint32_t j = 0; j < k; j++)
			sk += ak[j];
		if (!(sk > 0.0)) {
			free(a);
			free(s);
			return -EINVAL;	/* k cannot leave to lower states */
		}
		s[k] = sk;
		for (uint32_t i = 0; i < k; i++) {
			double *ai = a + (size_t)i * n;
			double f;

			if (ai[k] == 0.0)
				continue;	/* sparse chains: most rows */
			f = ai[k] / sk;
			for (uint32_t j = 0; j < k; j++)
				ai[j] += f * ak[j];
		}
	}
	pi[0] = 1.0;
	sum = 1.0;
	for (uint32_t k = 1; k < n; k++) {
		double v = 0.0;

		for (uint32_t i = 0; i < k; i++)
			v += pi[i] * a[(size_t)i * n + k];
		pi[k] = v / s[k];
		sum += pi[k];
	}
	for (uint32_t k = 0; k < n; k++)
		pi[k] /= sum;
	free(a);
	free(s);
	return 0;
}

/*
 * Gauss-Seidel (omega = 1) or SOR on pi_j q_j = sum_i pi_i q_ij, column by
 * column. With omega = 1 the update is again subtraction-free. Stops when
 * the largest relative change of a component in a sweep is below tol.
 */
static int sor_steady(const struct ctmc *q, const struct ctmc_graph_csc *t,
		      const struct ctmc_opts *o, double *pi,
		      struct ctmc_stat *st)
{
	uint32_t n = q->n;
	double prev_change = INFINITY, change = INFINITY, omega = o->omega;

	if (!(omega > 0.0 && omega < 2.0))
		return -EINVAL;
	for (uint32_t j = 0; j < n; j++)
		pi[j] = 1.0 / n;
	for (st->iterations = 0; st->iterations < o->max_iter;) {
		double sum = 0.0;

		prev_change = change;
		change = 0.0;
		for (uint32_t j = 0; j < n; j++) {
			double in = 0.0, v;

			for (uint32_t e = t->col_ptr[j]; e < t->col_ptr[j + 1]; e++)
				in += pi[t->row[e]] * t->rate[e];
			v = in / q->exit_rate[j];
			if (omega != 1.0)
				v = (1.0 - omega) * pi[j] + omega * v;
			if (v > DBL_MIN) {
				double c = fabs(v - pi[j]) / v;

				if (c > change)
					change = c;
			}
			pi[j] = v;
			sum += v;
		}
		st->iterations++;
		if (!isfinite(sum) || !(sum > 0.0))
			return -EDOM;
		for (uint32_t j = 0; j < n; j++)
			pi[j] /= sum;
		if (change <= o->tol)
			break;
	}
	{
		double rho = prev_change > 0.0 ? change / prev_change : 0.0;

		if (!(rho < 0.999))
			rho = 0.999;
		st->err_bound = change + change * rho / (1.0 - rho);
	}
	return change <= o->tol ? 0 : -ETIMEDOUT;
}

static bool all_finite(const double *x, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

/*
 * Resolve st->method: AUTO is @dense for @small problems, else the band
 * reduction where the band pays (ctmc_band_pick()), else Gauss-Seidel.
 * For BAND, @ord gets the ordering and st the bandwidths.
 */
static int resolve_method(const struct ctmc *q, const struct ctmc_graph_csc *t,
			  bool transient_only, bool small,
			  enum ctmc_method dense, struct ctmc_stat *st,
			  struct ctmc_graph_order *ord)
{
	bool worth;
	int err;

	memset(ord, 0, sizeof(*ord));
	if (st->method == CTMC_METHOD_AUTO && small) {
		st->method = dense;
		return 0;
	}
	if (st->method != CTMC_METHOD_AUTO && st->method != CTMC_METHOD_BAND)
		return 0;
	err = ctmc_band_pick(q, t, transient_only,
			     st->method == CTMC_METHOD_BAND, ord, &worth);
	if (err)
		return err;
	if (st->method == CTMC_METHOD_AUTO)
		st->method = worth ? CTMC_METHOD_BAND : CTMC_METHOD_SOR;
	if (st->method != CTMC_METHOD_BAND) {
		ctmc_graph_order_finish(ord);
		return 0;
	}
	st->band_lower = ord->lower;
	st->band_upper = ord->upper;
	return 0;
}

int ctmc_steady_state(const struct ctmc *q, const struct ctmc_opts *opts,
		      double *pi, struct ctmc_stat *st)
{
	struct ctmc_opts obuf;
	const struct ctmc_opts *o = opts_or_default(opts, &obuf);
	struct ctmc_graph_csc t;
	struct ctmc_graph_order ord = { 0 };
	bool irr;
	int err;

	err = stat_start(q, st);
	if (err)
		return err;
	if (q->n == 1) {
		pi[0] = 1.0;
		st->method = CTMC_METHOD_GTH;
		st->residual = 0.0;
		st->err_bound = 0.0;
		return 0;
	}
	err = ctmc_graph_csc_build(q, &t);
	if (err)
		return err;
	err = ctmc_graph_irreducible(q, &t, &irr);
	if (!err && !irr)
		err = -EINVAL;
	if (err)
		goto out;

	st->method = o->method;
	err = resolve_method(q, &t, false, q->n <= o->dense_max,
			     CTMC_METHOD_GTH, st, &ord);
	if (err)
		goto out;
	if (st->method == CTMC_METHOD_GTH) {
		err = gth_dense(q, pi);
		/* A-priori componentwise relative bound, see gth_dense(). */
		st->err_bound = 3.0 * (double)q->n * q->n * DBL_EPSILON;
	} else if (st->method == CTMC_METHOD_BAND) {
		err = ctmc_band_steady(q, &ord, pi);
		st->err_bound = ctmc_band_err_bound(&ord);
	} else if (st->method == CTMC_METHOD_SOR) {
		err = sor_steady(q, &t, o, pi, st);
	} else {
		err = -EINVAL;
	}
	if (err && err != -ETIMEDOUT)
		goto out;
	if (!all_finite(pi, q->n)) {
		err = -EDOM;
		goto out;
	}
	st->residual = steady_residual(q, &t, pi);
out:
	ctmc_graph_order_finish(&ord);
	ctmc_graph_csc_finish(&t);
	return err;
}

/* ------------------------------------------------------------ absorption -- */

/*
 * Transient states in a dense index; fails with -EINVAL when one of them
 * cannot reach an absorbing state (its mean time would be infinite).
 */
static int transient_index(const struct ctmc *q, const struct ctmc_graph_csc *t,
			   uint32_t *idx, uint32_t *m)
{
	uint8_t *seen = calloc(q->n, 1);
	uint32_t *stack = malloc((size_t)q->n * sizeof(*stack));
	uint32_t *abs = malloc((size_t)q->n * sizeof(*abs));
	uint32_t nabs = 0;
	int err = 0;

	if (!seen || !stack || !abs) {
		err = -ENOMEM;
		goto out_free;
	}
	*m = 0;
	for (uint32_t i = 0; i < q->n; i++) {
		if (q->exit_rate[i] > 0.0)
			idx[i] = (*m)++;
		else
			abs[nabs++] = i, idx[i] = UINT32_MAX;
	}
	if (nabs == 0 ||
	    ctmc_graph_reach(q, t, abs, nabs, seen, stack) != q->n)
		err = -EINVAL;
out_free:
	free(seen);
	free(stack);
	free(abs);
	return err;
}

static int absorb_lu(const struct ctmc *q, const uint32_t *idx, uint32_t m,
		     double *tau_t, struct ctmc_stat *st)
{
	double *a = calloc((size_t)m * m, sizeof(*a));
	double *a0 = calloc((size_t)m * m, sizeof(*a0));
	lapack_int *ipiv = malloc((size_t)m * sizeof(*ipiv));
	double anorm, rcond = 0.0, rnorm = 0.0, tnorm = 0.0;
	lapack_int info;
	int err = 0;

	if (!a || !a0 || !ipiv) {
		err = -ENOMEM;
		goto out;
	}
	/* A = -Q_TT, row-major; A tau = 1. */
	for (uint32_t i = 0; i < q->n; i++) {
		uint32_t ri = idx[i];

		if (ri == UINT32_MAX)
			continue;
		a[(size_t)ri * m + ri] = q->exit_rate[i];
		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++) {
			uint32_t cj = idx[q->col[e]];

			if (cj != UINT32_MAX)
				a[(size_t)ri * m + cj] = -q->rate[e];
		}
	}
	memcpy(a0, a, (size_t)m * m * sizeof(*a));
	anorm = LAPACKE_dlange(LAPACK_ROW_MAJOR, '1', m, m, a, m);
	info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, m, m, a, m, ipiv);
	if (info != 0) {
		err = info < 0 ? -EINVAL : -EDOM;
		goto out;
	}
	for (uint32_t i = 0; i < m; i++)
		tau_t[i] = 1.0;
	info = LAPACKE_dgetrs(LAPACK_ROW_MAJOR, 'N', m, 1, a, m, ipiv, tau_t, 1);
	if (info == 0)
		info = LAPACKE_dgecon(LAPACK_ROW_MAJOR, '1', m, a, m, anorm,
				      &rcond);
	if (info != 0) {
		err = -EINVAL;
		goto out;
	}
	for (uint32_t i = 0; i < m; i++) {
		double r = -1.0;

		for (uint32_t j = 0; j < m; j++)
			r += a0[(size_t)i * m + j] * tau_t[j];
		rnorm += fabs(r);
		tnorm += fabs(tau_t[i]);
	}
	st->residual = rnorm / (anorm * tnorm);
	st->err_bound = (rcond > 0.0 ? 1.0 / rcond : INFINITY) *
			fmax(st->residual, DBL_EPSILON);
out:
	free(a);
	free(a0);
	free(ipiv);
	return err;
}

/* Residual of A tau = 1 in the same norm as the LU path. */
static double absorb_residual(const struct ctmc *q, const double *tau)
{
	double rnorm = 0.0, tnorm = 0.0, anorm = 0.0;

	for (uint32_t i = 0; i < q->n; i++) {
		double r;

		if (q->exit_rate[i] == 0.0)
			continue;
		r = q->exit_rate[i] * tau[i] - 1.0;
		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++)
			r -= q->rate[e] * tau[q->col[e]];
		rnorm += fabs(r);
		tnorm += tau[i];
		/* ||A||_1 <= 2 max_i q_i for a generator block. */
		if (2.0 * q->exit_rate[i] > anorm)
			anorm = 2.0 * q->exit_rate[i];
	}
	return rnorm / (anorm * tnorm);
}

/*
 * tau_i = (1 + sum_{j transient} q_ij tau_j) / q_i, in place, row by row.
 * Starting from 0 the iterates increase monotonically to the solution and
 * every operation is on positive numbers.
 */
static int absorb_gs(const struct ctmc *q, const struct ctmc_opts *o,
		     double *tau, struct ctmc_stat *st)
{
	double change = INFINITY, prev_change = INFINITY, rho;

	memset(tau, 0, (size_t)q->n * sizeof(*tau));
	for (st->iterations = 0; st->iterations < o->max_iter;) {
		prev_change = change;
		change = 0.0;
		for (uint32_t i = 0; i < q->n; i++) {
			double v = 1.0, c;

			if (q->exit_rate[i] == 0.0)
				continue;
			for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++)
				v += q->rate[e] * tau[q->col[e]];
			v /= q->exit_rate[i];
			c = fabs(v - tau[i]) / v;
			if (c > change)
				change = c;
			tau[i] = v;
		}
		st->iterations++;
		if (!(change < INFINITY))
			return -EDOM;
		if (change <= o->tol)
			break;
	}
	rho = prev_change > 0.0 ? change / prev_change : 0.0;
	if (!(rho < 0.999))
		rho = 0.999;
	st->err_bound = change + change * rho / (1.0 - rho);
	st->residual = absorb_residual(q, tau);
	return change <= o->tol ? 0 : -ETIMEDOUT;
}

int ctmc_absorb_mean(const struct ctmc *q, const double *alpha,
		     const struct ctmc_opts *opts, double *mean_s,
		     double *tau_s, struct ctmc_stat *st)
{
	struct ctmc_opts obuf;
	const struct ctmc_opts *o = opts_or_default(opts, &obuf);
	struct ctmc_graph_csc t = { 0 };
	struct ctmc_graph_order ord = { 0 };
	uint32_t *idx = NULL, m = 0;
	double *tau = NULL, *tau_t = NULL, mean = 0.0;
	int err;

	err = stat_start(q, st);
	if (err)
		return err;
	for (uint32_t i = 0; i < q->n; i++)
		if (!isfinite(alpha[i]) || alpha[i] < 0.0)
			return -EINVAL;
	idx = malloc((size_t)q->n * sizeof(*idx));
	tau = calloc(q->n, sizeof(*tau));
	if (!idx || !tau) {
		err = -ENOMEM;
		goto out;
	}
	err = ctmc_graph_csc_build(q, &t);
	if (!err)
		err = transient_index(q, &t, idx, &m);
	if (err)
		goto out;

	st->method = o->method;
	err = resolve_method(q, &t, true, m <= o->dense_max, CTMC_METHOD_LU,
			     st, &ord);
	if (err)
		goto out;
	if (st->method == CTMC_METHOD_BAND) {
		err = ctmc_band_absorb(q, &ord, tau);
		st->err_bound = ctmc_band_err_bound(&ord);
		if (!err)
			st->residual = absorb_residual(q, tau);
	} else if (st->method == CTMC_METHOD_LU) {
		tau_t = malloc(((size_t)m + 1) * sizeof(*tau_t));
		if (!tau_t) {
			err = -ENOMEM;
			goto out;
		}
		err = m ? absorb_lu(q, idx, m, tau_t, st) : 0;
		for (uint32_t i = 0; !err && i < q->n; i++)
			tau[i] = idx[i] == UINT32_MAX ? 0.0 : tau_t[idx[i]];
	} else if (st->method == CTMC_METHOD_SOR) {
		err = absorb_gs(q, o, tau, st);
	} else {
		err = -EINVAL;
	}
	if (err && err != -ETIMEDOUT)
		goto out;
	for (uint32_t i = 0; i < q->n; i++)
		mean += alpha[i] * tau[i];
	if (!isfinite(mean) || !all_finite(tau, q->n)) {
		err = -EDOM;
		goto out;
	}
	*mean_s = mean;
	if (tau_s)
		memcpy(tau_s, tau, (size_t)q->n * sizeof(*tau));
out:
	ctmc_graph_order_finish(&ord);
	ctmc_graph_csc_finish(&t);
	free(idx);
	free(tau);
	free(tau_t);
	return err;
}
