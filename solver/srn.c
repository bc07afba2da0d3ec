// SPDX-License-Identifier: GPL-2.0-or-later
/* Stochastic reward nets: description and reachability -> CTMC. See srn.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/srn.h"

#define SRN_DEFAULT_MAX_STATES	(1u << 24)

static void copy_name(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, SRN_NAME_LEN - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t c = *cap ? *cap : 8;
	void *np;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	np = realloc(*p, (size_t)c * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

void srn_init(struct srn_net *net)
{
	memset(net, 0, sizeof(*net));
}

void srn_finish(struct srn_net *net)
{
	free(net->places);
	free(net->trans);
	free(net->arcs);
	memset(net, 0, sizeof(*net));
}

int srn_add_place(struct srn_net *net, const char *name, int32_t initial)
{
	int err;

	if (initial < 0 || net->nplaces >= INT32_MAX)
		return -EINVAL;
	err = grow((void **)&net->places, &net->places_cap, net->nplaces + 1,
		   sizeof(*net->places));
	if (err)
		return err;
	copy_name(net->places[net->nplaces].name, name);
	net->places[net->nplaces].initial = initial;
	return (int)net->nplaces++;
}

int srn_add_transition(struct srn_net *net, const char *name,
		       srn_rate_fn rate_fn, double rate_const, int arg)
{
	struct srn_transition *t;
	int err;

	if (!rate_fn && !(isfinite(rate_const) && rate_const >= 0.0))
		return -EINVAL;
	if (net->ntrans >= INT32_MAX)
		return -EINVAL;
	err = grow((void **)&net->trans, &net->trans_cap, net->ntrans + 1,
		   sizeof(*net->trans));
	if (err)
		return err;
	t = &net->trans[net->ntrans];
	memset(t, 0, sizeof(*t));
	copy_name(t->name, name);
	t->rate_fn = rate_fn;
	t->rate_const = rate_const;
	t->arg = arg;
	t->first_arc = net->narcs;
	return (int)net->ntrans++;
}

int srn_add_arc(struct srn_net *net, uint32_t t, enum srn_arc_kind kind,
		uint32_t place, int32_t mult, srn_mult_fn mult_fn)
{
	struct srn_arc *a;
	int err;

	/* Arcs stay contiguous per transition: only the last one takes arcs. */
	if (t + 1 != net->ntrans || place >= net->nplaces ||
	    (!mult_fn && mult < 0) || kind > SRN_ARC_INHIBIT)
		return -EINVAL;
	err = grow((void **)&net->arcs, &net->arcs_cap, net->narcs + 1,
		   sizeof(*net->arcs));
	if (err)
		return err;
	a = &net->arcs[net->narcs++];
	a->place = place;
	a->kind = kind;
	a->mult = mult;
	a->mult_fn = mult_fn;
	net->trans[t].narcs++;
	return 0;
}

int srn_set_guard(struct srn_net *net, uint32_t t, srn_guard_fn guard)
{
	if (t >= net->ntrans)
		return -EINVAL;
	net->trans[t].guard = guard;
	return 0;
}

void srn_initial_marking(const struct srn_net *net, int32_t *m)
{
	for (uint32_t p = 0; p < net->nplaces; p++)
		m[p] = net->places[p].initial;
}

int srn_place_index(const struct srn_net *net, const char *name)
{
	for (uint32_t p = 0; p < net->nplaces; p++)
		if (!strcmp(net->places[p].name, name))
			return (int)p;
	return -ENOENT;
}

/* ------------------------------------------------------------ the space -- */

static uint64_t hash_marking(const int32_t *m, uint32_t np)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (uint32_t p = 0; p < np; p++) {
		h ^= (uint32_t)m[p];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	return h;
}

/*
 * A slot holds state + 1 in its low 32 bits (0 = empty) and the upper half
 * of the marking's hash in its high 32 bits, so that probing past other
 * markings rarely touches (cache-cold) marking memory.
 */
static inline uint64_t slot_make(uint32_t state, uint64_t h)
{
	return (h & 0xffffffff00000000ull) | (state + 1u);
}

static bool same_marking(const int32_t *a, const int32_t *b, uint32_t np)
{
	for (uint32_t p = 0; p < np; p++)
		if (a[p] != b[p])
			return false;
	return true;
}

static int64_t lookup(const struct srn_space *sp, const int32_t *m,
		      uint64_t h, uint32_t *slot_out)
{
	uint32_t mask = sp->nslots - 1;
	uint32_t s = (uint32_t)h & mask;

	for (;; s = (s + 1) & mask) {
		uint64_t v = sp->slots[s];
		uint32_t state = (uint32_t)v;

		if (!state) {
			if (slot_out)
				*slot_out = s;
			return -1;
		}
		if ((v >> 32) == (h >> 32) &&
		    same_marking(srn_marking(sp, state - 1), m, sp->nplaces))
			return state - 1;
	}
}

int64_t srn_find(const struct srn_space *sp, const int32_t *m)
{
	if (!sp->nslots)
		return -1;
	return lookup(sp, m, hash_marking(m, sp->nplaces), NULL);
}

static int rehash(struct srn_space *sp, uint32_t nslots)
{
	uint64_t *slots = calloc(nslots, sizeof(*slots));
	uint32_t mask = nslots - 1;

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < sp->nstates; i++) {
		uint64_t h = hash_marking(srn_marking(sp, i), sp->nplaces);
		uint32_t s = (uint32_t)h & mask;

		while (slots[s])
			s = (s + 1) & mask;
		slots[s] = slot_make(i, h);
	}
	free(sp->slots);
	sp->slots = slots;
	sp->nslots = nslots;
	return 0;
}

/* Index of @m (with hash @h), adding it when new. */
static int64_t intern(struct srn_space *sp, const int32_t *m, uint64_t h,
		      uint32_t max_states)
{
	uint32_t slot;
	int64_t idx = lookup(sp, m, h, &slot);
	int err;

	if (idx >= 0)
		return idx;
	if (sp->nstates >= max_states)
		return -E2BIG;
	if (sp->nstates + 1 > sp->markings_cap) {
		size_t cap = sp->markings_cap * 2;
		int32_t *nm = realloc(sp->markings,
				      cap * sp->nplaces * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		sp->markings = nm;
		sp->markings_cap = cap;
	}
	memcpy(sp->markings + (size_t)sp->nstates * sp->nplaces, m,
	       sp->nplaces * sizeof(*m));
	sp->slots[slot] = slot_make(sp->nstates, h);
	idx = sp->nstates++;
	/* Keep the load factor below 1/2. */
	if ((uint64_t)sp->nstates * 2 > sp->nslots) {
		if (sp->nslots > UINT32_MAX / 2)
			return -E2BIG;
		err = rehash(sp, sp->nslots * 2);
		if (err)
			return err;
	}
	return idx;
}

static int arc_mult(const struct srn_arc *a, const int32_t *m,
		    const void *ctx, int32_t *out)
{
	int32_t v = a->mult_fn ? a->mult_fn(m, ctx, a->place) : a->mult;

	if (v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * Fire @t from @cur into @next when enabled: returns 1 if fired (with its
 * rate in *rate), 0 if not enabled, negative errno on a bad net.
 */
static int try_fire(const struct srn_net *net, const struct srn_transition *t,
		    const void *ctx, const int32_t *cur, int32_t *next,
		    double *rate)
{
	const struct srn_arc *arcs = net->arcs + t->first_arc;
	int32_t mult = 0;
	int err;

	for (uint32_t k = 0; k < t->narcs; k++) {
		err = arc_mult(&arcs[k], cur, ctx, &mult);
		if (err)
			return err;
		if (arcs[k].kind == SRN_ARC_IN && cur[arcs[k].place] < mult)
			return 0;
		if (arcs[k].kind == SRN_ARC_INHIBIT &&
		    cur[arcs[k].place] >= mult)
			return 0;
	}
	if (t->guard && !t->guard(cur, ctx, t->arg))
		return 0;
	*rate = t->rate_fn ? t->rate_fn(cur, ctx, t->arg) : t->rate_const;
	if (!isfinite(*rate) || *rate < 0.0)
		return -EDOM;
	if (*rate == 0.0)
		return 0;
	memcpy(next, cur, net->nplaces * sizeof(*next));
	for (uint32_t k = 0; k < t->narcs; k++) {
		int64_t v;

		if (arcs[k].kind == SRN_ARC_INHIBIT)
			continue;
		err = arc_mult(&arcs[k], cur, ctx, &mult);
		if (err)
			return err;
		v = next[arcs[k].place];
		v += arcs[k].kind == SRN_ARC_IN ? -(int64_t)mult : mult;
		if (v > INT32_MAX)
			return -E2BIG;
		next[arcs[k].place] = (int32_t)v;
	}
	return 1;
}

void srn_space_finish(struct srn_space *sp)
{
	free(sp->markings);
	free(sp->slots);
	ctmc_finish(&sp->chain);
	memset(sp, 0, sizeof(*sp));
}

static int space_init(struct srn_space *sp, uint32_t nplaces)
{
	memset(sp, 0, sizeof(*sp));
	sp->nplaces = nplaces;
	sp->markings_cap = 64;
	sp->markings = malloc(sp->markings_cap * nplaces * sizeof(int32_t));
	sp->nslots = 256;
	sp->slots = calloc(sp->nslots, sizeof(*sp->slots));
	if (!sp->markings || !sp->slots || ctmc_init(&sp->chain, 64, 256)) {
		srn_space_finish(sp);
		return -ENOMEM;
	}
	return 0;
}

/* srn_explore()'s scratch: one state's successors, at most ntrans of them. */
struct explore_work {
	int32_t *cur;		/* the state expanded */
	int32_t *succ;		/* its successors' markings */
	uint64_t *hashes;	/* their hashes */
	uint32_t *cols;		/* their state indices */
	double *rates;		/* the rates of the transitions to them */
};

static int work_init(struct explore_work *w, const struct srn_net *net)
{
	size_t n = (size_t)net->ntrans + 1;

	w->cur = malloc(net->nplaces * sizeof(*w->cur));
	w->succ = malloc(n * net->nplaces * sizeof(*w->succ));
	w->hashes = malloc(n * sizeof(*w->hashes));
	w->cols = malloc(n * sizeof(*w->cols));
	w->rates = malloc(n * sizeof(*w->rates));
	return w->cur && w->succ && w->hashes && w->cols && w->rates ? 0 : -ENOMEM;
}

static void work_finish(struct explore_work *w)
{
	free(w->cur);
	free(w->succ);
	free(w->hashes);
	free(w->cols);
	free(w->rates);
}

/* State @s's successors interned (new ones appended) and its row added. */
static int expand_state(const struct srn_net *net, const void *ctx, struct srn_space *sp,
			uint32_t s, uint32_t max_states, struct explore_work *w)
{
	uint32_t np = net->nplaces, k = 0;
	int err;

	memcpy(w->cur, srn_marking(sp, s), np * sizeof(*w->cur));
	for (uint32_t t = 0; t < net->ntrans; t++) {
		err = try_fire(net, &net->trans[t], ctx, w->cur, w->succ + (size_t)k * np,
			       &w->rates[k]);
		if (err < 0)
			return err;
		k += err;
	}
	/*
	 * The lookups are bound by memory latency: hash all successors
	 * and prefetch their slots first, so the misses overlap.
	 */
	for (uint32_t i = 0; i < k; i++) {
		w->hashes[i] = hash_marking(w->succ + (size_t)i * np, np);
		__builtin_prefetch(&sp->slots[(uint32_t)w->hashes[i] & (sp->nslots - 1)]);
	}
	for (uint32_t i = 0; i < k; i++) {
		int64_t idx = intern(sp, w->succ + (size_t)i * np, w->hashes[i], max_states);

		if (idx < 0)
			return (int)idx;
		w->cols[i] = (uint32_t)idx;
	}
	return ctmc_add_row(&sp->chain, w->cols, w->rates, k);
}

int srn_explore(const struct srn_net *net, const void *ctx,
		const int32_t *init, uint32_t ninit,
		const struct srn_explore_opts *opts, struct srn_space *sp)
{
	uint32_t max_states = opts && opts->max_states ? opts->max_states
						       : SRN_DEFAULT_MAX_STATES;
	uint32_t np = net->nplaces;
	struct explore_work w = { 0 };
	int err;

	if (!np || !ninit)
		return -EINVAL;
	for (size_t i = 0; i < (size_t)ninit * np; i++)
		if (init[i] < 0)
			return -EINVAL;
	err = space_init(sp, np);
	if (err)
		return err;
	err = work_init(&w, net);
	if (err)
		goto out;
	for (uint32_t i = 0; i < ninit; i++) {
		const int32_t *m = init + (size_t)i * np;
		int64_t idx = intern(sp, m, hash_marking(m, np), max_states);

		if (idx < 0) {
			err = (int)idx;
			goto out;
		}
	}
	/* Breadth-first: state s is expanded when all before it are. */
	for (uint32_t s = 0; s < sp->nstates; s++) {
		err = expand_state(net, ctx, sp, s, max_states, &w);
		if (err)
			goto out;
	}
	err = ctmc_seal(&sp->chain);
	if (!err) {
		/* Give the growth slack back: large spaces live long. */
		size_t n = sp->nstates ? sp->nstates : 1;
		int32_t *m = realloc(sp->markings, n * np * sizeof(*m));

		if (m) {
			sp->markings = m;
			sp->markings_cap = n;
		}
		ctmc_shrink(&sp->chain);
	}
out:
	work_finish(&w);
	if (err)
		srn_space_finish(sp);
	return err;
}

size_t srn_space_bytes(const struct srn_space *sp)
{
	return sp->markings_cap * sp->nplaces * sizeof(int32_t) +
	       (size_t)sp->nslots * sizeof(*sp->slots) + ctmc_bytes(&sp->chain);
}
