// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Transpose, reachability, bandwidth and Cuthill-McKee ordering of a
 * CTMC's transition graph. See ctmc_graph.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "solver/ctmc_graph.h"

/* Pseudo-peripheral search: at most this many breadth-first passes. */
#define CM_PERIPHERAL_TRIES	8

void ctmc_graph_csc_finish(struct ctmc_graph_csc *t)
{
	free(t->col_ptr);
	free(t->row);
	free(t->rate);
	memset(t, 0, sizeof(*t));
}

int ctmc_graph_csc_build(const struct ctmc *q, struct ctmc_graph_csc *t)
{
	uint32_t n = q->n;
	uint32_t *fill;

	memset(t, 0, sizeof(*t));
	t->col_ptr = calloc((size_t)n + 1, sizeof(*t->col_ptr));
	t->row = malloc(((size_t)q->nnz + 1) * sizeof(*t->row));
	t->rate = malloc(((size_t)q->nnz + 1) * sizeof(*t->rate));
	fill = malloc(((size_t)n + 1) * sizeof(*fill));
	if (!t->col_ptr || !t->row || !t->rate || !fill) {
		free(fill);
		ctmc_graph_csc_finish(t);
		return -ENOMEM;
	}
	for (uint32_t e = 0; e < q->nnz; e++)
		t->col_ptr[q->col[e] + 1]++;
	for (uint32_t j = 0; j < n; j++)
		t->col_ptr[j + 1] += t->col_ptr[j];
	memcpy(fill, t->col_ptr, (size_t)n * sizeof(*fill));
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++) {
			uint32_t at = fill[q->col[e]]++;

			t->row[at] = i;
			t->rate[at] = q->rate[e];
		}
	}
	free(fill);
	return 0;
}

uint32_t ctmc_graph_reach(const struct ctmc *q, const struct ctmc_graph_csc *t,
			  const uint32_t *seeds, uint32_t nseed, uint8_t *seen,
			  uint32_t *stack)
{
	uint32_t top = 0, count = 0;

	for (uint32_t s = 0; s < nseed; s++) {
		if (seen[seeds[s]])
			continue;
		seen[seeds[s]] = 1;
		stack[top++] = seeds[s];
		count++;
	}
	while (top) {
		uint32_t i = stack[--top];
		uint32_t lo = t ? t->col_ptr[i] : q->row_ptr[i];
		uint32_t hi = t ? t->col_ptr[i + 1] : q->row_ptr[i + 1];

		for (uint32_t e = lo; e < hi; e++) {
			uint32_t j = t ? t->row[e] : q->col[e];

			if (!seen[j]) {
				seen[j] = 1;
				stack[top++] = j;
				count++;
			}
		}
	}
	return count;
}

int ctmc_graph_irreducible(const struct ctmc *q, const struct ctmc_graph_csc *t,
			   bool *irreducible)
{
	uint8_t *seen = calloc(q->n, 1);
	uint32_t *stack = malloc((size_t)q->n * sizeof(*stack));
	uint32_t zero = 0, fwd, bwd;

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return -ENOMEM;
	}
	fwd = ctmc_graph_reach(q, NULL, &zero, 1, seen, stack);
	memset(seen, 0, q->n);
	bwd = ctmc_graph_reach(q, t, &zero, 1, seen, stack);
	*irreducible = fwd == q->n && bwd == q->n;
	free(seen);
	free(stack);
	return 0;
}

/* ------------------------------------------------------------ ordering -- */

void ctmc_graph_order_finish(struct ctmc_graph_order *o)
{
	free(o->old_of);
	free(o->new_of);
	memset(o, 0, sizeof(*o));
}

static bool in_subset(const struct ctmc *q, bool transient_only, uint32_t i)
{
	return !transient_only || q->exit_rate[i] > 0.0;
}

static int order_alloc(const struct ctmc *q, struct ctmc_graph_order *o)
{
	memset(o, 0, sizeof(*o));
	o->old_of = malloc(((size_t)q->n + 1) * sizeof(*o->old_of));
	o->new_of = malloc(((size_t)q->n + 1) * sizeof(*o->new_of));
	if (!o->old_of || !o->new_of) {
		ctmc_graph_order_finish(o);
		return -ENOMEM;
	}
	return 0;
}

/* lower and upper over the rates between states of the subset. */
static void bandwidths(const struct ctmc *q, struct ctmc_graph_order *o)
{
	o->lower = o->upper = 0;
	for (uint32_t k = 0; k < o->m; k++) {
		uint32_t i = o->old_of[k];

		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++) {
			uint32_t c = o->new_of[q->col[e]];

			if (c == UINT32_MAX)
				continue;
			if (c < k && k - c > o->lower)
				o->lower = k - c;
			if (c > k && c - k > o->upper)
				o->upper = c - k;
		}
	}
}

int ctmc_graph_order_natural(const struct ctmc *q, bool transient_only,
			     struct ctmc_graph_order *o)
{
	int err = order_alloc(q, o);

	if (err)
		return err;
	for (uint32_t i = 0; i < q->n; i++) {
		if (in_subset(q, transient_only, i)) {
			o->old_of[o->m] = i;
			o->new_of[i] = o->m++;
		} else {
			o->new_of[i] = UINT32_MAX;
		}
	}
	bandwidths(q, o);
	return 0;
}

/* Scratch of the Cuthill-McKee passes. */
struct cm_ws {
	const struct ctmc *q;
	const struct ctmc_graph_csc *t;
	const uint8_t *in;	/* in the subset and not yet placed */
	uint32_t *deg;		/* symmetrised degree within the subset */
	uint32_t *stamp;	/* visited in pass `pass` */
	uint32_t pass;
	uint32_t *queue;
};

/* Append the unvisited neighbours of @i to the queue at *tail. */
static void cm_expand(struct cm_ws *w, uint32_t i, uint32_t *tail)
{
	const struct ctmc *q = w->q;
	const struct ctmc_graph_csc *t = w->t;

	for (int dir = 0; dir < 2; dir++) {
		uint32_t lo = dir ? t->col_ptr[i] : q->row_ptr[i];
		uint32_t hi = dir ? t->col_ptr[i + 1] : q->row_ptr[i + 1];

		for (uint32_t e = lo; e < hi; e++) {
			uint32_t j = dir ? t->row[e] : q->col[e];

			if (!w->in[j] || w->stamp[j] == w->pass)
				continue;
			w->stamp[j] = w->pass;
			w->queue[(*tail)++] = j;
		}
	}
}

/* Insertion sort of queue[lo, hi) by degree: neighbour lists are short. */
static void cm_sort(struct cm_ws *w, uint32_t lo, uint32_t hi)
{
	for (uint32_t a = lo + 1; a < hi; a++) {
		uint32_t v = w->queue[a], b = a;

		while (b > lo && w->deg[w->queue[b - 1]] > w->deg[v]) {
			w->queue[b] = w->queue[b - 1];
			b--;
		}
		w->queue[b] = v;
	}
}

/*
 * Breadth-first from @root over its component: the visit order into
 * w->queue, the number of states into *count, where the last level starts
 * into *last. Returns the number of levels.
 */
static uint32_t cm_bfs(struct cm_ws *w, uint32_t root, bool sorted,
		       uint32_t *count, uint32_t *last)
{
	uint32_t head = 0, tail = 0, levels = 0;

	w->pass++;
	w->stamp[root] = w->pass;
	w->queue[tail++] = root;
	while (head < tail) {
		uint32_t end = tail;

		*last = head;
		levels++;
		for (; head < end; head++) {
			uint32_t from = tail;

			cm_expand(w, w->queue[head], &tail);
			if (sorted)
				cm_sort(w, from, tail);
		}
	}
	*count = tail;
	return levels;
}

/* George and Liu's pseudo-peripheral state of @start's component. */
static uint32_t cm_peripheral(struct cm_ws *w, uint32_t start)
{
	uint32_t root = start, count, last, levels;

	levels = cm_bfs(w, root, false, &count, &last);
	for (int tries = 0; tries < CM_PERIPHERAL_TRIES; tries++) {
		uint32_t best = w->queue[last], l;

		for (uint32_t k = last; k < count; k++)
			if (w->deg[w->queue[k]] < w->deg[best])
				best = w->queue[k];
		l = cm_bfs(w, best, false, &count, &last);
		if (l <= levels)
			break;
		root = best;
		levels = l;
	}
	return root;
}

static int cm_ws_init(struct cm_ws *w, const struct ctmc *q,
		      const struct ctmc_graph_csc *t, bool transient_only,
		      uint8_t **in_out)
{
	uint8_t *in = malloc((size_t)q->n + 1);

	memset(w, 0, sizeof(*w));
	w->q = q;
	w->t = t;
	w->deg = calloc((size_t)q->n + 1, sizeof(*w->deg));
	w->stamp = calloc((size_t)q->n + 1, sizeof(*w->stamp));
	w->queue = malloc(((size_t)q->n + 1) * sizeof(*w->queue));
	if (!in || !w->deg || !w->stamp || !w->queue) {
		free(in);
		free(w->deg);
		free(w->stamp);
		free(w->queue);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < q->n; i++)
		in[i] = in_subset(q, transient_only, i);
	for (uint32_t i = 0; i < q->n; i++) {
		if (!in[i])
			continue;
		for (uint32_t e = q->row_ptr[i]; e < q->row_ptr[i + 1]; e++) {
			if (in[q->col[e]]) {
				w->deg[i]++;
				w->deg[q->col[e]]++;
			}
		}
	}
	w->in = in;
	*in_out = in;
	return 0;
}

int ctmc_graph_band_bound(const struct ctmc *q, const struct ctmc_graph_csc *t,
			  bool transient_only, uint32_t enough, uint32_t *bound)
{
	uint32_t start = 0, head = 0, tail = 0, level = 0;
	struct cm_ws w;
	uint8_t *in;
	int err;

	*bound = 0;
	while (start < q->n && !in_subset(q, transient_only, start))
		start++;
	if (start == q->n)
		return 0;
	err = cm_ws_init(&w, q, t, transient_only, &in);
	if (err)
		return err;
	/* The ball of radius k holds `tail` states once level k is queued. */
	w.pass = 1;
	w.stamp[start] = 1;
	w.queue[tail++] = start;
	while (head < tail && *bound <= enough) {
		uint32_t end = tail, b;

		for (; head < end; head++)
			cm_expand(&w, w.queue[head], &tail);
		level++;
		b = (tail - 1 + 2 * level - 1) / (2 * level);
		if (b > *bound)
			*bound = b;
	}
	free(in);
	free(w.deg);
	free(w.stamp);
	free(w.queue);
	return 0;
}

int ctmc_graph_order_cm(const struct ctmc *q, const struct ctmc_graph_csc *t,
			bool transient_only, struct ctmc_graph_order *o)
{
	struct cm_ws w;
	uint8_t *in;
	int err = order_alloc(q, o);

	if (err)
		return err;
	err = cm_ws_init(&w, q, t, transient_only, &in);
	if (err) {
		ctmc_graph_order_finish(o);
		return err;
	}
	for (uint32_t i = 0; i < q->n; i++)
		o->new_of[i] = UINT32_MAX;
	for (uint32_t s = 0; s < q->n; s++) {
		uint32_t count, last;

		if (!in[s])
			continue;
		cm_bfs(&w, cm_peripheral(&w, s), true, &count, &last);
		for (uint32_t k = 0; k < count; k++) {
			uint32_t i = w.queue[k];

			in[i] = 0;	/* placed */
			o->new_of[i] = o->m;
			o->old_of[o->m++] = i;
		}
	}
	o->reordered = true;
	bandwidths(q, o);
	free(in);
	free(w.deg);
	free(w.stamp);
	free(w.queue);
	return 0;
}
