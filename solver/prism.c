// SPDX-License-Identifier: GPL-2.0-or-later
/* PRISM explicit-format export (.tra/.sta/.lab/.srew). See prism.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/prism.h"

#define LINE_MAX_LEN	256

static int emit(prism_write_fn w, void *wctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int emit(prism_write_fn w, void *wctx, const char *fmt, ...)
{
	char buf[LINE_MAX_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EOVERFLOW;
	return w(wctx, buf, (size_t)n);
}

static int cmp_marking(const void *a, const void *b, void *arg)
{
	const struct srn_space *sp = arg;
	const int32_t *ma = srn_marking(sp, *(const uint32_t *)a);
	const int32_t *mb = srn_marking(sp, *(const uint32_t *)b);

	for (uint32_t p = 0; p < sp->nplaces; p++)
		if (ma[p] != mb[p])
			return ma[p] < mb[p] ? -1 : 1;
	return 0;
}

void prism_finish(struct prism_order *ord)
{
	free(ord->old_of);
	free(ord->new_of);
	memset(ord, 0, sizeof(*ord));
}

int prism_prepare(const struct prism_export *e, struct prism_order *ord)
{
	const struct srn_space *sp = e->sp;
	uint32_t off = e->alpha ? 1 : 0;
	uint32_t *sorted;

	memset(ord, 0, sizeof(*ord));
	if (!sp->nstates || e->net->nplaces != sp->nplaces ||
	    sp->nstates == UINT32_MAX)
		return -EINVAL;
	if (e->alpha) {
		if (!(e->start_rate_per_s > 0.0) ||
		    !isfinite(e->start_rate_per_s))
			return -EINVAL;
		for (uint32_t i = 0; i < sp->nstates; i++)
			if (!(e->alpha[i] >= 0.0) || !isfinite(e->alpha[i]))
				return -EINVAL;
	}
	ord->n = sp->nstates + off;
	ord->old_of = malloc((size_t)ord->n * sizeof(*ord->old_of));
	ord->new_of = malloc((size_t)sp->nstates * sizeof(*ord->new_of));
	if (!ord->old_of || !ord->new_of) {
		prism_finish(ord);
		return -ENOMEM;
	}
	/* Lexicographic order of (start, marking): the start state first. */
	sorted = ord->old_of + off;
	for (uint32_t i = 0; i < sp->nstates; i++)
		sorted[i] = i;
	qsort_r(sorted, sp->nstates, sizeof(*sorted), cmp_marking, (void *)sp);
	ord->start = UINT32_MAX;
	if (e->alpha) {
		ord->old_of[0] = UINT32_MAX;
		ord->start = 0;
	}
	for (uint32_t k = off; k < ord->n; k++)
		ord->new_of[ord->old_of[k]] = k;
	ord->ntrans = sp->chain.nnz;
	for (uint32_t i = 0; e->alpha && i < sp->nstates; i++)
		ord->ntrans += e->alpha[i] > 0.0;
	return 0;
}

struct pair {
	uint32_t col;
	double rate;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *pa = a, *pb = b;

	return pa->col < pb->col ? -1 : pa->col > pb->col;
}

static int write_tra(const struct prism_export *e, const struct prism_order *ord,
		     prism_write_fn w, void *wctx)
{
	const struct ctmc *q = &e->sp->chain;
	uint32_t maxrow = 0;
	struct pair *row;
	int err;

	for (uint32_t i = 0; i < q->n; i++)
		if (q->row_ptr[i + 1] - q->row_ptr[i] > maxrow)
			maxrow = q->row_ptr[i + 1] - q->row_ptr[i];
	row = malloc(((size_t)maxrow + 1) * sizeof(*row));
	if (!row)
		return -ENOMEM;
	err = emit(w, wctx, "%u %llu\n", ord->n, (unsigned long long)ord->ntrans);
	for (uint32_t k = 0; !err && k < ord->n; k++) {
		uint32_t old = ord->old_of[k], len = 0;

		if (old == UINT32_MAX) {
			/* The start state, in target order already. */
			for (uint32_t j = 0; !err && j < ord->n; j++) {
				uint32_t to = ord->old_of[j];

				if (to != UINT32_MAX && e->alpha[to] > 0.0)
					err = emit(w, wctx, "%u %u %.17g\n", k, j,
						   e->start_rate_per_s *
						   e->alpha[to]);
			}
			continue;
		}
		for (uint32_t x = q->row_ptr[old]; x < q->row_ptr[old + 1]; x++) {
			row[len].col = ord->new_of[q->col[x]];
			row[len].rate = q->rate[x];
			len++;
		}
		qsort(row, len, sizeof(*row), cmp_pair);
		for (uint32_t x = 0; !err && x < len; x++)
			err = emit(w, wctx, "%u %u %.17g\n", k, row[x].col,
				   row[x].rate);
	}
	free(row);
	return err;
}

static int write_sta(const struct prism_export *e, const struct prism_order *ord,
		     prism_write_fn w, void *wctx)
{
	uint32_t np = e->sp->nplaces;
	int err = emit(w, wctx, "(start");

	for (uint32_t p = 0; !err && p < np; p++)
		err = emit(w, wctx, ",%s", e->net->places[p].name);
	if (!err)
		err = emit(w, wctx, ")\n");
	for (uint32_t k = 0; !err && k < ord->n; k++) {
		uint32_t old = ord->old_of[k];
		const int32_t *m = old == UINT32_MAX ? NULL
						     : srn_marking(e->sp, old);

		err = emit(w, wctx, "%u:(%d", k, m ? 1 : 0);
		for (uint32_t p = 0; !err && p < np; p++)
			err = emit(w, wctx, ",%d", m ? m[p] : 0);
		if (!err)
			err = emit(w, wctx, ")\n");
	}
	return err;
}

static int write_lab(const struct prism_export *e, const struct prism_order *ord,
		     prism_write_fn w, void *wctx)
{
	uint32_t init = e->alpha ? ord->start : ord->new_of[0];
	int err = emit(w, wctx, "0=\"init\" 1=\"deadlock\" 2=\"absorbed\"\n");

	for (uint32_t k = 0; !err && k < ord->n; k++) {
		uint32_t old = ord->old_of[k];
		bool absorbed = old != UINT32_MAX &&
				e->sp->chain.exit_rate[old] == 0.0;

		if (k == init && absorbed)
			err = emit(w, wctx, "%u: 0 1 2\n", k);
		else if (k == init)
			err = emit(w, wctx, "%u: 0\n", k);
		else if (absorbed)
			err = emit(w, wctx, "%u: 1 2\n", k);
	}
	return err;
}

static int write_srew(const struct prism_export *e, const struct prism_order *ord,
		      prism_write_fn w, void *wctx)
{
	const struct ctmc *q = &e->sp->chain;
	uint32_t m = 0;
	int err;

	for (uint32_t i = 0; i < q->n; i++)
		m += q->exit_rate[i] > 0.0;
	err = emit(w, wctx, "%u %u\n", ord->n, m);
	for (uint32_t k = 0; !err && k < ord->n; k++) {
		uint32_t old = ord->old_of[k];

		if (old != UINT32_MAX && q->exit_rate[old] > 0.0)
			err = emit(w, wctx, "%u 1\n", k);
	}
	return err;
}

static const struct {
	const char *ext;
	int (*write)(const struct prism_export *e, const struct prism_order *ord,
		     prism_write_fn w, void *wctx);
} files[PRISM_FILES] = {
	[PRISM_TRA] = { "tra", write_tra },
	[PRISM_STA] = { "sta", write_sta },
	[PRISM_LAB] = { "lab", write_lab },
	[PRISM_SREW] = { "srew", write_srew },
};

const char *prism_file_ext(enum prism_file f)
{
	return (unsigned)f < PRISM_FILES ? files[f].ext : "?";
}

int prism_write(const struct prism_export *e, const struct prism_order *ord,
		enum prism_file f, prism_write_fn w, void *wctx)
{
	if ((unsigned)f >= PRISM_FILES)
		return -EINVAL;
	return files[f].write(e, ord, w, wctx);
}
