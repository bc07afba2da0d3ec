/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model-sized receive buffers (docs/buffer.md): the smallest socket queue
 * that is big enough *before* it overflows, from the same model that gives
 * the bottleneck rate, where RRDA (rrda.h) grows a buffer after the
 * receiver has fallen behind.
 *
 * The socket stage (stage B) at arrival rate lambda is an M/M[N]/1/K
 * queue served at mu whose server may also take vacations (D off in every
 * P); its loss is the larger of the bulk queue's blocking probability and
 * the vacation loss (D - K/lambda)+ / P, as bneck_compute() takes it
 * (docs/model.md §2). Both fall as K grows. The vacation term is linear
 * in K until it is 0. With partial batches the blocking probability cannot
 * rise with the capacity: driven by the same arrivals and service epochs,
 * a queue one place larger never holds fewer packets, so it serves at
 * least as many and turns away no more. With strict batches that coupling
 * fails (the larger queue may fire a batch the smaller cannot), and
 * monotonicity is checked numerically: the tests compare the search with
 * a scan of every K.
 *
 * Two criteria:
 *   bufsize_for_loss()  the smallest K whose stage loss is at most a
 *                       target, by doubling and bisection on K (O(log K)
 *                       loss evaluations, each a few hundred steps);
 *   bufsize_for_time()  the smallest K whose transfer time T(K), given by
 *                       the caller (bneck_eval_at() with stage B's K
 *                       changed), is within a slack of T at the largest K
 *                       allowed, which stands for an unbounded buffer:
 *                       where no buffer meets a loss target (arrivals above
 *                       what the receiver drains), a larger one still
 *                       shortens a transfer by absorbing more of each
 *                       round, up to where it stops mattering.
 *
 * K packets take K x truesize bytes of sk_rcvbuf (bufsize_bytes()): the
 * daemon reads K as sk_rcvbuf / truesize, and the kernel admits a datagram
 * while the memory charged is at most sk_rcvbuf, so that many always fit.
 *
 * Pure: no I/O, no globals.
 */
#ifndef RXB_SOLVER_BUFSIZE_H
#define RXB_SOLVER_BUFSIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "rxb/measure.h"

struct bufsize_stage {
	double arrival_per_s;	/* lambda, packets per second, >= 0 */
	double service_per_s;	/* mu the queue is served at, batches/s, > 0 */
	uint32_t batch_pkts;	/* N >= 1 */
	enum rxb_batch_rule rule;
	double vacation_s;	/* D, 0 = none */
	double vacation_period_s;	/* P > D when D > 0 */
};

struct bufsize_result {
	uint32_t queue_pkts;	/* the answer (max_pkts when not met) */
	bool met;		/* the criterion holds there */
	double loss;		/* stage loss there (bufsize_for_loss()) */
	double loss_at_max;	/* ... at max_pkts */
	double time_s;		/* T there (bufsize_for_time()) */
	double time_ref_s;	/* T at max_pkts */
	uint32_t evaluations;
};

/* The stage's loss with a queue of @k packets. 0, -EINVAL, or what
 * bulkq_loss() returned. */
int bufsize_stage_loss(const struct bufsize_stage *s, uint32_t k, double *loss);

/*
 * The smallest K in [@min_pkts, @max_pkts] (strict batches: at least N)
 * with loss <= @target (0 <= target < 1). Not met: queue_pkts = max_pkts,
 * met = false. 0, -EINVAL, or what bulkq_loss() returned.
 */
int bufsize_for_loss(const struct bufsize_stage *s, double target,
		     uint32_t min_pkts, uint32_t max_pkts, struct bufsize_result *r);

/* T with a stage-B queue of @k packets, into *@t_s; 0 or -errno. */
typedef int (*bufsize_time_fn)(void *ctx, uint32_t k, double *t_s);

/*
 * The smallest K in [@min_pkts, @max_pkts] with T(K) <= (1 + @slack)
 * T(max_pkts): on a grid of ratio 2^(1/4) from min_pkts up, then by
 * bisection between the last grid point that failed and the first that
 * held (exact when T does not increase with K). 0 or the callback's error;
 * -EINVAL for bad bounds or slack.
 */
int bufsize_for_time(bufsize_time_fn fn, void *ctx, double slack,
		     uint32_t min_pkts, uint32_t max_pkts, struct bufsize_result *r);

/* sk_rcvbuf bytes for @k packets of @truesize bytes, even (rrda.h). */
uint64_t bufsize_bytes(uint32_t k, double truesize_bytes);

/* The packets sk_rcvbuf @bytes hold at @truesize each, as the daemon reads
 * K (at least 1). */
uint32_t bufsize_pkts(uint64_t bytes, double truesize_bytes);

#endif
