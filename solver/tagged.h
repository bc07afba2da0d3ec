/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tagged-customer analysis of the end system (Banerjee, Mukherjee and
 * Ghosal, "Modeling and Analysis to Estimate the End-System Performance
 * Bottleneck Rate for High-Speed Data Transfer", §II-A): the response time
 * R of one network batch (the interrupt in the paper, the receiver
 * thread's batch in stage B) that joins a processor-sharing CPU shared
 * with #C CPU-bound and #I I/O-bound tasks.
 *
 * A tagged model is a stochastic reward net with two extra places: "tag"
 * (1 while the tagged customer is in service) and "done" (1 once it has
 * completed). The analysis
 *   1. explores the net from its background marking (tag = 0: the tagged
 *      transitions are disabled) and solves the steady state pi;
 *   2. explores again from every background marking with tag = 1: this
 *      chain is transient, the completion empties the net into the single
 *      absorbing marking {done = 1} (input arcs whose marking-dependent
 *      multiplicity is "all tokens"), and its initial distribution is pi
 *      (the arrival sees the steady state);
 *   3. E[R] is the mean time to absorption, F(t) = P(R <= t) its
 *      distribution, and mu = 1 / E[R] the effective service rate.
 *
 * Two nets are provided:
 *   seed: one CPU; places cpu_bound (#C tokens, never move), io_cpu, io_disk,
 *         tag, done. io_cpu -> io_disk at i mu_P-I/O / (i + #C + tag)
 *         (the paper's eq. 1 with the tagged customer's share),
 *         io_disk -> io_cpu at mu_D (FCFS disk), tag -> done at
 *         mu_P-Net / (i + #C + 1).
 *   smp:  P CPUs; CPU-bound tasks spread over them and moved by a load
 *         balancer, I/O tasks woken onto a uniformly random CPU, the tagged
 *         customer pinned to CPU 0 (see tagged_smp_init()).
 */
#ifndef RXB_SOLVER_TAGGED_H
#define RXB_SOLVER_TAGGED_H

#include <stddef.h>
#include <stdint.h>

#include "solver/ctmc.h"
#include "solver/srn.h"

/* Integer task counts beyond this are refused (-E2BIG). */
#define TAGGED_MAX_TASKS	4096

struct tagged_rates {
	double mu_pio_per_s;	/* CPU burst rate of an I/O-bound task alone */
	double mu_disk_per_s;	/* disk service rate */
	double mu_net_per_s;	/* tagged customer's rate alone on the CPU */
};

struct tagged_model {
	struct srn_net net;
	uint32_t tag_place;
	uint32_t done_place;
	int32_t *bg_initial;	/* nplaces entries, tag = done = 0 */
	void *ctx;		/* owned; the rate functions' context */
};

int tagged_seed_init(struct tagged_model *m, uint32_t cpu_bound,
		     uint32_t io_bound, const struct tagged_rates *r);

struct tagged_smp_params {
	uint32_t ncpus;		/* P >= 1 */
	uint32_t cpu_bound;	/* spread round-robin from CPU 0 */
	uint32_t io_bound;	/* start on the CPUs, round-robin */
	struct tagged_rates rates;
	/*
	 * A CPU-bound task moves from CPU p to CPU q at this rate while p has
	 * at least two tasks more than q (tasks: CPU-bound + I/O-bound + the
	 * tagged customer). 0 disables balancing.
	 */
	double migrate_per_s;
};

int tagged_smp_init(struct tagged_model *m, const struct tagged_smp_params *p);
void tagged_model_finish(struct tagged_model *m);

/* The chains of one analysis, kept for F(t) and for export. */
struct tagged_chain {
	struct srn_space bg;	/* background chain */
	double *bg_pi;		/* its steady state */
	struct srn_space tag;	/* tagged chain; states 0..bg.nstates-1 are
				   the arrival markings, in bg order */
	double *alpha;		/* initial distribution on tag */
	uint32_t absorbed;	/* index of the absorbing marking in tag */
};

struct tagged_result {
	double mean_response_s;	/* E[R] */
	double service_rate_per_s;	/* 1 / E[R] */
	double rel_err;		/* bound on the relative error of E[R] */
	uint32_t bg_states;
	uint32_t tag_states;
	uint32_t tag_transitions;
	struct ctmc_stat steady;
	struct ctmc_stat absorb;
};

int tagged_analyze(const struct tagged_model *m, const struct ctmc_opts *o,
		   struct tagged_chain *ch, struct tagged_result *res);
void tagged_chain_finish(struct tagged_chain *ch);
size_t tagged_chain_bytes(const struct tagged_chain *ch);

/* F(t) = P(R <= t) by uniformization, each within @eps. */
int tagged_cdf(const struct tagged_chain *ch, const double *t_s, uint32_t nt,
	       double eps, double *cdf, struct ctmc_stat *st);

/*
 * The @np quantiles @p (each 0 < p < 1) of R into @t_s, by bisection on F
 * to a relative width of 1e-6 (each F within 1e-12); @mean_s seeds the
 * brackets, which grow by 1.25. All of them come from one uniformization
 * pass (solver/ctmc_dist.h), as far as the largest bracket reaches.
 */
int tagged_quantiles(const struct tagged_chain *ch, const double *p,
		     uint32_t np, double mean_s, double *t_s);
/* Every F(t) the quantile search of tagged_quantiles() is within this. */
#define TAGGED_QUANTILE_EPS	1e-12

/*
 * The search itself, on any distribution function: F(t) from @cdf(@ctx),
 * the bracket [0, @mean_s] grown by 1.25 until F >= @p, then bisection to
 * a relative width of 1e-6.
 */
typedef int (*tagged_cdf_fn)(void *ctx, double t_s, double *f);
int tagged_quantile_search(tagged_cdf_fn cdf, void *ctx, double p,
			   double mean_s, double *t_s);

/* One quantile: tagged_quantiles() with np = 1. */
int tagged_quantile(const struct tagged_chain *ch, double p, double mean_s,
		    double *t_s);

/*
 * E[R] of the uniprocessor net for fractional (time-weighted) #C and #I: bilinear
 * interpolation of E[R] between the nets at floor/ceil of each count (the
 * integer nets themselves are solved exactly). E[R] rather than mu is
 * interpolated because with #I = 0 it is exactly linear in #C:
 * E[R] = (#C + 1) / mu_P-Net. The stats are the worst over the corners,
 * the state counts the largest.
 */
int tagged_seed_mean(double cpu_bound, double io_bound,
		     const struct tagged_rates *r, const struct ctmc_opts *o,
		     struct tagged_result *res);

#endif
