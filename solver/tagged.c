// SPDX-License-Identifier: GPL-2.0-or-later
/* Tagged-customer response time on the end-system nets. See tagged.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/ctmc_dist.h"
#include "solver/tagged.h"

static bool rates_ok(const struct tagged_rates *r)
{
	return r->mu_pio_per_s > 0.0 && isfinite(r->mu_pio_per_s) &&
	       r->mu_disk_per_s > 0.0 && isfinite(r->mu_disk_per_s) &&
	       r->mu_net_per_s > 0.0 && isfinite(r->mu_net_per_s);
}

/* The completion empties every background place: one absorbing marking. */
static int32_t all_tokens(const int32_t *m, const void *ctx, uint32_t place)
{
	(void)ctx;
	return m[place];
}

static int add_simple(struct srn_net *net, const char *name, srn_rate_fn fn,
		      int arg, int from, int to)
{
	int t = srn_add_transition(net, name, fn, 0.0, arg);
	int err = t < 0 ? t : 0;

	if (!err && from >= 0)
		err = srn_add_arc(net, t, SRN_ARC_IN, from, 1, NULL);
	if (!err && to >= 0)
		err = srn_add_arc(net, t, SRN_ARC_OUT, to, 1, NULL);
	return err ? err : t;
}

/* tag -> done, flushing every other place. */
static int add_completion(struct srn_net *net, srn_rate_fn fn,
			  uint32_t tag, uint32_t done)
{
	int t = add_simple(net, "net_done", fn, 0, tag, done);
	int err = t < 0 ? t : 0;

	for (uint32_t p = 0; !err && p < net->nplaces; p++)
		if (p != tag && p != done)
			err = srn_add_arc(net, t, SRN_ARC_IN, p, 0, all_tokens);
	return err;
}

/* ------------------------------------------------------------ seed net -- */

enum { S_CB, S_IOCPU, S_IODISK, S_TAG, S_DONE, S_NPLACES };

static double seed_io_to_disk(const int32_t *m, const void *ctx, int arg)
{
	const struct tagged_rates *r = ctx;
	double i = m[S_IOCPU];

	(void)arg;
	/* Banerjee et al.'s eq. (1); the tagged customer takes a share. */
	return i * r->mu_pio_per_s / (i + m[S_CB] + m[S_TAG]);
}

static double seed_disk_done(const int32_t *m, const void *ctx, int arg)
{
	const struct tagged_rates *r = ctx;

	(void)m;
	(void)arg;
	return r->mu_disk_per_s;	/* FCFS: one request in service */
}

static double seed_net_done(const int32_t *m, const void *ctx, int arg)
{
	const struct tagged_rates *r = ctx;

	(void)arg;
	return r->mu_net_per_s / (m[S_IOCPU] + m[S_CB] + 1.0);
}

static int model_alloc(struct tagged_model *m, size_t ctx_size)
{
	memset(m, 0, sizeof(*m));
	srn_init(&m->net);
	m->ctx = calloc(1, ctx_size);
	return m->ctx ? 0 : -ENOMEM;
}

/*
 * The last step of a build: the tagged customer's places, and the
 * background's initial marking (the marking the net was built with).
 */
static int model_places(struct tagged_model *m, uint32_t tag_place,
			uint32_t done_place)
{
	m->tag_place = tag_place;
	m->done_place = done_place;
	m->bg_initial = malloc(m->net.nplaces * sizeof(*m->bg_initial));
	if (!m->bg_initial)
		return -ENOMEM;
	srn_initial_marking(&m->net, m->bg_initial);
	return 0;
}

int tagged_seed_init(struct tagged_model *m, uint32_t cpu_bound,
		     uint32_t io_bound, const struct tagged_rates *r)
{
	static const char *const names[S_NPLACES] = {
		"cpu_bound", "io_cpu", "io_disk", "tag", "done",
	};
	const int32_t init[S_NPLACES] = { (int32_t)cpu_bound, (int32_t)io_bound };
	int err;

	if (!rates_ok(r))
		return -EINVAL;
	if (cpu_bound > TAGGED_MAX_TASKS || io_bound > TAGGED_MAX_TASKS)
		return -E2BIG;
	err = model_alloc(m, sizeof(*r));
	if (err)
		goto fail;
	memcpy(m->ctx, r, sizeof(*r));
	for (int p = 0; p < S_NPLACES; p++) {
		err = srn_add_place(&m->net, names[p], init[p]);
		if (err < 0)
			goto fail;
	}
	err = add_simple(&m->net, "io_to_disk", seed_io_to_disk, 0,
			 S_IOCPU, S_IODISK);
	if (err >= 0)
		err = add_simple(&m->net, "disk_done", seed_disk_done, 0,
				 S_IODISK, S_IOCPU);
	if (err >= 0)
		err = add_completion(&m->net, seed_net_done, S_TAG, S_DONE);
	if (err >= 0)
		err = model_places(m, S_TAG, S_DONE);
	if (err >= 0)
		return 0;
fail:
	tagged_model_finish(m);
	return err;
}

/* ------------------------------------------------------------- SMP net -- */

struct smp_ctx {
	struct tagged_rates r;
	uint32_t ncpus;
	double migrate_per_s;
};

/* Places: cb_p = p, io_p = P + p, disk = 2P, tag = 2P + 1, done = 2P + 2. */
static double smp_load(const int32_t *m, uint32_t P, uint32_t p)
{
	return (double)m[p] + m[P + p] + (p == 0 ? m[2 * P + 1] : 0);
}

static double smp_io_to_disk(const int32_t *m, const void *ctx, int arg)
{
	const struct smp_ctx *c = ctx;
	uint32_t p = (uint32_t)arg;

	return m[c->ncpus + p] * c->r.mu_pio_per_s / smp_load(m, c->ncpus, p);
}

static double smp_wake(const int32_t *m, const void *ctx, int arg)
{
	const struct smp_ctx *c = ctx;

	(void)m;
	(void)arg;
	return c->r.mu_disk_per_s / c->ncpus;	/* random wake-up placement */
}

static bool smp_imbalanced(const int32_t *m, const void *ctx, int arg)
{
	const struct smp_ctx *c = ctx;
	uint32_t p = (uint32_t)arg >> 16, q = (uint32_t)arg & 0xffff;

	return smp_load(m, c->ncpus, p) >= smp_load(m, c->ncpus, q) + 2.0;
}

static double smp_migrate(const int32_t *m, const void *ctx, int arg)
{
	const struct smp_ctx *c = ctx;

	(void)m;
	(void)arg;
	return c->migrate_per_s;
}

static double smp_net_done(const int32_t *m, const void *ctx, int arg)
{
	const struct smp_ctx *c = ctx;

	(void)arg;
	return c->r.mu_net_per_s / smp_load(m, c->ncpus, 0);
}

int tagged_smp_init(struct tagged_model *m, const struct tagged_smp_params *sp)
{
	uint32_t P = sp->ncpus;
	struct smp_ctx *c;
	char name[SRN_NAME_LEN];
	int err;

	if (!rates_ok(&sp->rates) || P < 1 || P > 64 ||
	    !(sp->migrate_per_s >= 0.0) || !isfinite(sp->migrate_per_s))
		return -EINVAL;
	if (sp->cpu_bound > TAGGED_MAX_TASKS || sp->io_bound > TAGGED_MAX_TASKS)
		return -E2BIG;
	err = model_alloc(m, sizeof(*c));
	if (err)
		goto fail;
	c = m->ctx;
	c->r = sp->rates;
	c->ncpus = P;
	c->migrate_per_s = sp->migrate_per_s;
	for (uint32_t p = 0; p < P && err >= 0; p++) {
		snprintf(name, sizeof(name), "cb%u", p);
		err = srn_add_place(&m->net, name,
				    sp->cpu_bound / P + (p < sp->cpu_bound % P));
	}
	for (uint32_t p = 0; p < P && err >= 0; p++) {
		snprintf(name, sizeof(name), "io%u", p);
		err = srn_add_place(&m->net, name,
				    sp->io_bound / P + (p < sp->io_bound % P));
	}
	if (err >= 0)
		err = srn_add_place(&m->net, "disk", 0);
	if (err >= 0)
		err = srn_add_place(&m->net, "tag", 0);
	if (err >= 0)
		err = srn_add_place(&m->net, "done", 0);
	for (uint32_t p = 0; p < P && err >= 0; p++) {
		snprintf(name, sizeof(name), "io_to_disk%u", p);
		err = add_simple(&m->net, name, smp_io_to_disk, (int)p,
				 (int)(P + p), (int)(2 * P));
		if (err < 0)
			break;
		snprintf(name, sizeof(name), "wake%u", p);
		err = add_simple(&m->net, name, smp_wake, (int)p,
				 (int)(2 * P), (int)(P + p));
	}
	for (uint32_t p = 0; p < P && err >= 0 && sp->migrate_per_s > 0; p++) {
		for (uint32_t q = 0; q < P && err >= 0; q++) {
			if (p == q)
				continue;
			snprintf(name, sizeof(name), "migrate%u_%u", p, q);
			err = add_simple(&m->net, name, smp_migrate,
					 (int)(p << 16 | q), (int)p, (int)q);
			if (err >= 0)
				err = srn_set_guard(&m->net, (uint32_t)err,
						    smp_imbalanced);
		}
	}
	if (err >= 0)
		err = add_completion(&m->net, smp_net_done, 2 * P + 1,
				     2 * P + 2);
	if (err >= 0)
		err = model_places(m, 2 * P + 1, 2 * P + 2);
	if (err >= 0)
		return 0;
fail:
	tagged_model_finish(m);
	return err;
}

void tagged_model_finish(struct tagged_model *m)
{
	srn_finish(&m->net);
	free(m->bg_initial);
	free(m->ctx);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ analysis -- */

void tagged_chain_finish(struct tagged_chain *ch)
{
	srn_space_finish(&ch->bg);
	srn_space_finish(&ch->tag);
	free(ch->bg_pi);
	free(ch->alpha);
	memset(ch, 0, sizeof(*ch));
}

size_t tagged_chain_bytes(const struct tagged_chain *ch)
{
	return srn_space_bytes(&ch->bg) + srn_space_bytes(&ch->tag) +
	       ((size_t)ch->bg.nstates + ch->tag.nstates) * sizeof(double);
}

/* Every background marking with the tagged customer just arrived. */
static int arrival_markings(const struct tagged_model *m,
			    const struct srn_space *bg, int32_t **out)
{
	uint32_t np = bg->nplaces;
	int32_t *init = malloc((size_t)bg->nstates * np * sizeof(*init));

	if (!init)
		return -ENOMEM;
	memcpy(init, bg->markings, (size_t)bg->nstates * np * sizeof(*init));
	for (uint32_t s = 0; s < bg->nstates; s++)
		init[(size_t)s * np + m->tag_place] = 1;
	*out = init;
	return 0;
}

int tagged_analyze(const struct tagged_model *m, const struct ctmc_opts *o,
		   struct tagged_chain *ch, struct tagged_result *res)
{
	uint32_t np = m->net.nplaces;
	int32_t *init = NULL, *done = NULL;
	int64_t absorbed;
	int err;

	memset(ch, 0, sizeof(*ch));
	memset(res, 0, sizeof(*res));
	if (m->bg_initial[m->tag_place] || m->bg_initial[m->done_place])
		return -EINVAL;
	err = srn_explore(&m->net, m->ctx, m->bg_initial, 1, NULL, &ch->bg);
	if (err)
		return err;
	ch->bg_pi = malloc((size_t)ch->bg.nstates * sizeof(*ch->bg_pi));
	if (!ch->bg_pi) {
		err = -ENOMEM;
		goto fail;
	}
	err = ctmc_steady_state(&ch->bg.chain, o, ch->bg_pi, &res->steady);
	if (err)
		goto fail;

	err = arrival_markings(m, &ch->bg, &init);
	if (err)
		goto fail;
	err = srn_explore(&m->net, m->ctx, init, ch->bg.nstates, NULL,
			  &ch->tag);
	free(init);
	if (err)
		goto fail;
	ch->alpha = calloc(ch->tag.nstates, sizeof(*ch->alpha));
	done = calloc(np, sizeof(*done));
	if (!ch->alpha || !done) {
		err = -ENOMEM;
		goto fail;
	}
	/* Arrival markings are distinct, so they are states 0..nbg-1. */
	memcpy(ch->alpha, ch->bg_pi, (size_t)ch->bg.nstates * sizeof(double));
	done[m->done_place] = 1;
	absorbed = srn_find(&ch->tag, done);
	if (absorbed < 0) {
		err = -EINVAL;	/* the completion must flush the net */
		goto fail;
	}
	ch->absorbed = (uint32_t)absorbed;
	err = ctmc_absorb_mean(&ch->tag.chain, ch->alpha, o,
			       &res->mean_response_s, NULL, &res->absorb);
	if (err)
		goto fail;
	if (!(res->mean_response_s > 0.0)) {
		err = -EDOM;
		goto fail;
	}
	res->service_rate_per_s = 1.0 / res->mean_response_s;
	res->rel_err = res->steady.err_bound + res->absorb.err_bound;
	res->bg_states = ch->bg.nstates;
	res->tag_states = ch->tag.nstates;
	res->tag_transitions = ch->tag.chain.nnz;
	free(done);
	return 0;
fail:
	free(done);
	tagged_chain_finish(ch);
	return err;
}

int tagged_cdf(const struct tagged_chain *ch, const double *t_s, uint32_t nt,
	       double eps, double *cdf, struct ctmc_stat *st)
{
	return ctmc_absorb_cdf(&ch->tag.chain, ch->alpha, t_s, nt, eps, 0,
			       cdf, NULL, st);
}

#define QUANTILE_REL_WIDTH	1e-6
/* The bracket grows by this factor: the pass goes at most this far past. */
#define QUANTILE_GROW		1.25
#define QUANTILE_MAX_GROW	200

int tagged_quantile_search(tagged_cdf_fn cdf, void *ctx, double p,
			   double mean_s, double *t_s)
{
	double lo = 0.0, hi = mean_s, f;
	int err;

	if (!(p > 0.0 && p < 1.0) || !(mean_s > 0.0) || !isfinite(mean_s))
		return -EINVAL;
	for (int i = 0;; i++) {
		err = cdf(ctx, hi, &f);
		if (err)
			return err;
		if (f >= p)
			break;
		if (i == QUANTILE_MAX_GROW)
			return -EDOM;
		lo = hi;
		hi *= QUANTILE_GROW;
	}
	while (hi - lo > QUANTILE_REL_WIDTH * hi) {
		double mid = 0.5 * (lo + hi);

		err = cdf(ctx, mid, &f);
		if (err)
			return err;
		if (f >= p)
			hi = mid;
		else
			lo = mid;
	}
	*t_s = 0.5 * (lo + hi);
	return 0;
}

static int dist_cdf(void *ctx, double t_s, double *f)
{
	double s, bound;
	int err = ctmc_dist_survival(ctx, t_s, &s, &bound);

	if (!err)
		*f = 1.0 - s;
	return err;
}

int tagged_quantiles(const struct tagged_chain *ch, const double *p,
		     uint32_t np, double mean_s, double *t_s)
{
	struct ctmc_dist d;
	int err;

	if (!(mean_s > 0.0) || !isfinite(mean_s))
		return -EINVAL;
	for (uint32_t j = 0; j < np; j++)
		if (!(p[j] > 0.0 && p[j] < 1.0))
			return -EINVAL;
	err = ctmc_dist_init(&d, &ch->tag.chain, ch->alpha, TAGGED_QUANTILE_EPS,
			     0);
	for (uint32_t j = 0; !err && j < np; j++)
		err = tagged_quantile_search(dist_cdf, &d, p[j], mean_s, &t_s[j]);
	ctmc_dist_finish(&d);
	return err;
}

int tagged_quantile(const struct tagged_chain *ch, double p, double mean_s,
		    double *t_s)
{
	return tagged_quantiles(ch, &p, 1, mean_s, t_s);
}

/* ------------------------------------------------- fractional counts -- */

static void worse_stat(struct ctmc_stat *acc, const struct ctmc_stat *s)
{
	if (!(acc->residual >= s->residual))
		acc->residual = s->residual;
	if (!(acc->err_bound >= s->err_bound))
		acc->err_bound = s->err_bound;
	if (s->iterations > acc->iterations)
		acc->iterations = s->iterations;
	acc->method = s->method;
}

static int seed_corner(uint32_t c, uint32_t i, const struct tagged_rates *r,
		       const struct ctmc_opts *o, struct tagged_result *res)
{
	struct tagged_model m;
	struct tagged_chain ch;
	int err = tagged_seed_init(&m, c, i, r);

	if (err)
		return err;
	err = tagged_analyze(&m, o, &ch, res);
	if (!err)
		tagged_chain_finish(&ch);
	tagged_model_finish(&m);
	return err;
}

int tagged_seed_mean(double cpu_bound, double io_bound,
		     const struct tagged_rates *r, const struct ctmc_opts *o,
		     struct tagged_result *res)
{
	double c0, i0, fc, fi, mean = 0.0, rel = 0.0;
	bool first = true;

	memset(res, 0, sizeof(*res));
	if (!(cpu_bound >= 0.0) || !(io_bound >= 0.0) ||
	    !isfinite(cpu_bound) || !isfinite(io_bound))
		return -EINVAL;
	if (cpu_bound > TAGGED_MAX_TASKS || io_bound > TAGGED_MAX_TASKS)
		return -E2BIG;
	c0 = floor(cpu_bound);
	i0 = floor(io_bound);
	fc = cpu_bound - c0;
	fi = io_bound - i0;
	for (int dc = 0; dc < 2; dc++) {
		for (int di = 0; di < 2; di++) {
			double w = (dc ? fc : 1.0 - fc) * (di ? fi : 1.0 - fi);
			struct tagged_result cr;
			int err;

			if (w == 0.0)
				continue;
			err = seed_corner((uint32_t)c0 + dc, (uint32_t)i0 + di,
					  r, o, &cr);
			if (err)
				return err;
			mean += w * cr.mean_response_s;
			if (cr.rel_err > rel)
				rel = cr.rel_err;
			if (first) {
				res->steady = cr.steady;
				res->absorb = cr.absorb;
				first = false;
			}
			worse_stat(&res->steady, &cr.steady);
			worse_stat(&res->absorb, &cr.absorb);
			if (cr.bg_states > res->bg_states)
				res->bg_states = cr.bg_states;
			if (cr.tag_states > res->tag_states)
				res->tag_states = cr.tag_states;
			if (cr.tag_transitions > res->tag_transitions)
				res->tag_transitions = cr.tag_transitions;
		}
	}
	res->mean_response_s = mean;
	res->service_rate_per_s = 1.0 / mean;
	res->rel_err = rel;
	return 0;
}
