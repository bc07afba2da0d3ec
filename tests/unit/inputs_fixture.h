/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Synthetic epoch records for the model-inputs tests (test_inputs.c,
 * test_cost.c, test_busy.c): a receiver on CPU 1 of two, and generators
 * of receivers whose cost has known parts, so that each estimate can be
 * checked against its truth.
 */
#ifndef RXB_TESTS_UNIT_INPUTS_FIXTURE_H
#define RXB_TESTS_UNIT_INPUTS_FIXTURE_H

#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/model/inputs.h"
#include "solver/lsq.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/recv_fixture.h"
#include "tests/unit/test_rng.h"

#define PORT 9000

static inline struct rxb_epoch *new_epoch(uint64_t seq, double dt_s)
{
	struct rxb_epoch *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->seq = seq;
	e->start_ns = seq * 1000000000ULL;
	e->end_ns = e->start_ns + (uint64_t)(dt_s * 1e9);
	e->ncpus = 2;
	e->probes = RXB_PROBE_SCHED | RXB_PROBE_NETRX | RXB_PROBE_SOCKQ | RXB_PROBE_BLKIO;
	for (int i = 0; i < 2; i++) {
		e->cpus[i].cpu = i;
		e->cpus[i].cpu_bound = 0;
		e->cpus[i].io_bound = 0;
	}
	e->disk.mean_service_ns = NAN;
	e->disk.mean_cpu_burst_ns = NAN;
	return e;
}

/* A receiver that dequeued @pkts at @ns each, woke @wakeups times, on CPU 1. */
static inline struct rxb_sock_meas *add_sock(struct rxb_epoch *e, uint64_t pkts, double ns,
				      uint64_t wakeups)
{
	return recv_fixture_sock(e, PORT, pkts, ns, wakeups);
}

/* 1.5 ms of the receiver's 2 ms on CPU 1, 0.5 ms on CPU 0. */
static inline void split_placement(struct rxb_sock_meas *s)
{
	s->ncpus_ran = 2;
	s->ran_on[0].oncpu_ns = 1500000;
	s->ran_on[1].cpu = 0;
	s->ran_on[1].oncpu_ns = 500000;
}

static inline struct inputs_env env_for(const struct rxb_epoch *e)
{
	struct inputs_env env = {
		.rule = RXB_BATCH_PARTIAL,
		.netdev_max_backlog = 1000,
		.fallback_rx_ring = 256,
		.now_ns = e->end_ns,
	};

	return env;
}

/*
 * What every model-inputs test feeds: a flow's learned costs, the disk's,
 * the last inputs, and an epoch with its environment. ifix_setup (a
 * cmocka setup) makes a fresh one with epoch 1 of 1 s; ifix_teardown
 * frees it.
 */
struct ifix {
	struct learn l;
	struct learn_disk d;
	struct inputs r;
	struct rxb_epoch *e;
	struct inputs_env env;
};

/* Replaces the fixture's epoch by a new one, @seq of @dt_s, and its environment. */
static inline struct rxb_epoch *ifix_epoch(struct ifix *f, uint64_t seq, double dt_s)
{
	free(f->e);
	f->e = new_epoch(seq, dt_s);
	f->env = env_for(f->e);
	return f->e;
}

/* The fixture's epoch, of @dt_s, with its environment, into f->r. */
static inline void ifix_feed(struct ifix *f, double dt_s)
{
	inputs_update(&f->l, &f->d, PORT, f->e, dt_s, &f->env, &f->r);
}

/* @e, of @dt_s, with its default environment, into f->r; frees @e. */
static inline void ifix_take(struct ifix *f, struct rxb_epoch *e, double dt_s)
{
	struct inputs_env env = env_for(e);

	inputs_update(&f->l, &f->d, PORT, e, dt_s, &env, &f->r);
	free(e);
}

static inline int ifix_setup(void **state)
{
	struct ifix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	learn_init(&f->l);
	learn_disk_init(&f->d);
	ifix_epoch(f, 1, 1.0);
	*state = f;
	return 0;
}

static inline int ifix_teardown(void **state)
{
	struct ifix *f = *state;

	free(f->e);
	free(f);
	return 0;
}

/* A test that takes a fresh fixture as its state. */
#define IFIX_TEST(t) cmocka_unit_test_setup_teardown(t, ifix_setup, ifix_teardown)

/* Epoch @seq of 1 s: @pkts packets, @w wake-ups, on-CPU @a w + @b pkts ns. */
static inline struct rxb_epoch *cost_epoch(uint64_t seq, uint64_t pkts, uint64_t w, double a, double b)
{
	struct rxb_epoch *e = new_epoch(seq, 1.0);
	struct rxb_sock_meas *s = add_sock(e, pkts, 0, w);

	s->receiver_oncpu_ns = (uint64_t)llround(a * (double)w + b * (double)pkts);
	s->cpu_ns_per_pkt = (double)s->receiver_oncpu_ns / (double)pkts;
	s->ran_on[0].oncpu_ns = s->receiver_oncpu_ns;
	return e;
}

/*
 * A receiver whose cost has more parts than a x wake-ups + b x packets,
 * like rxbneck-recv's: per wake-up A; per recvmmsg call C (a call takes at
 * most 64 datagrams and the one that returns fewer ends the batch, so a
 * batch of x costs floor(x / 64) + 1 calls); per packet B; and the first
 * M0 packets after the receiver got its CPU back cost E more each (cold
 * caches: at tens of packets per wake-up every packet pays it, in a
 * saturated run of RUN packets only M0 of them). The truth for a
 * receiver that never sleeps - runs of RUN packets between preemptions,
 * RUN a multiple of 64 - is SAT_TRUTH per packet.
 */
#define G_A	5000.0
#define G_B	1000.0
#define G_C	8000.0
#define G_E	600.0
#define G_M0	128.0
#define G_RUN	4096.0
#define SAT_TRUTH	(G_B + G_C / 64 + G_E * G_M0 / G_RUN)	/* 1143.75 ns */
#define G_EPOCH_S	0.25

/* One wake-up's batch of @x packets, in ns. */
static inline double g_batch_ns(double x)
{
	return G_A + G_C * (floor(x / 64) + 1) + G_B * x + G_E * fmin(x, G_M0);
}

/* An epoch of G_EPOCH_S with @hogs CPU-bound tasks on CPU 1 (the receiver's). */
static inline struct rxb_epoch *g_epoch(uint64_t seq, double hogs)
{
	struct rxb_epoch *e = new_epoch(seq, G_EPOCH_S);

	e->cpus[1].cpu_bound = hogs;
	e->cpus[0].softirq_frac = 0.3;	/* veth: NET_RX on the sender's CPU */
	e->cpus[1].softirq_frac = 0;
	return e;
}

static inline struct rxb_sock_meas *g_sock(struct rxb_epoch *e, uint64_t pkts, double ns,
				    uint64_t wakeups, uint64_t drops)
{
	struct rxb_sock_meas *s = add_sock(e, pkts, 0, wakeups);

	s->receiver_oncpu_ns = (uint64_t)llround(ns);
	s->cpu_ns_per_pkt = ns / (double)pkts;
	s->ran_on[0].oncpu_ns = s->receiver_oncpu_ns;
	s->pkts_in = pkts + drops;
	s->drops = drops;
	s->drops_rcvbuf = drops;
	s->drops_valid = true;
	s->reasons_valid = true;
	return s;
}

/*
 * An epoch below capacity: a mean of 20-70 packets per wake-up (a
 * receiver fed below its capacity), batches spread +-50 % around it, no
 * drops. @pkts about the packets of the epoch.
 */
static inline struct rxb_epoch *g_light(uint64_t seq, double hogs, double pkts, uint64_t *st)
{
	struct rxb_epoch *e = g_epoch(seq, hogs);
	double mean = 20 + 50 * test_uniform(st), p = 0, ns = 0;
	uint64_t w = 0;

	while (p < pkts) {
		double x = floor(mean * (0.5 + test_uniform(st)));

		if (x < 1)
			x = 1;
		ns += g_batch_ns(x);
		p += x;
		w++;
	}
	g_sock(e, (uint64_t)p, ns, w, 0);
	return e;
}

/*
 * An epoch inside an overflowing blast: the receiver is always runnable
 * and gets @share of the CPU (of its fair 1 / (hogs + 1)), in runs of
 * G_RUN packets; @w stray wake-ups at its edges; its on-CPU time measured
 * with +-@noise relative error. The truth is SAT_TRUTH per packet.
 */
static inline struct rxb_epoch *g_saturated(uint64_t seq, double hogs, double share, uint64_t w,
				     double noise, uint64_t *st)
{
	struct rxb_epoch *e = g_epoch(seq, hogs);
	double run_ns = G_RUN * SAT_TRUTH;
	double runs = floor(share * G_EPOCH_S * 1e9 / (hogs + 1) / run_ns);
	double ns = runs * run_ns + (double)w * G_A;

	ns *= 1 + noise * (2 * test_uniform(st) - 1);
	g_sock(e, (uint64_t)(runs * G_RUN), ns, w, 20000);
	return e;
}

static inline void g_feed(struct learn *l, struct learn_disk *d, struct rxb_epoch *e,
		   struct inputs *r)
{
	struct inputs_env env = env_for(e);

	inputs_update(l, d, PORT, e, G_EPOCH_S, &env, r);
	free(e);
}

/*
 * An epoch in which the receiver, with @hogs on its CPU, had 0.95 of its
 * fair share and paid @ns_pkt per packet, one wake-up, @drops rcvbuf drops.
 */
static inline struct rxb_epoch *busy_epoch(uint64_t seq, double hogs, double ns_pkt,
				    uint64_t drops)
{
	struct rxb_epoch *e = g_epoch(seq, hogs);
	double pkts = floor(0.95 * G_EPOCH_S * 1e9 / (hogs + 1) / ns_pkt);

	g_sock(e, (uint64_t)pkts, pkts * ns_pkt, 1, drops);
	return e;
}

/*
 * A busy-polling receiver (rxbneck-recv --busy-poll): it never sleeps while
 * data may come, so it is on its CPU for its share of the epoch and turns
 * its loop on the empty socket whenever it has drained it, one empty read
 * per turn. The truth: SP_A per wake-up (a few at a blast's edges), SP_B
 * per packet, SP_E per turn on the empty socket. Its on-CPU time is its
 * share, whatever the arrival rate: what the packets do not take, the spin
 * does, so the slower the arrivals the more on-CPU time per packet.
 */
#define SP_A	8000.0
#define SP_B	1200.0
#define SP_E	700.0
/* On-CPU noise under which b stays uncertain and e does not. */
#define SPU_NOISE	0.05

/*
 * An epoch of G_EPOCH_S, @hogs CPU-bound tasks on the receiver's CPU 1,
 * @p packets at a rate the receiver keeps up with, @w wake-ups, on CPU for
 * @share of its fair share; the spin fills the rest (empty reads rounded
 * down). Its on-CPU time is measured with +-@noise relative error.
 */
static inline struct rxb_epoch *sp_epoch(uint64_t seq, double hogs, double p, uint64_t w,
				  double share, uint64_t drops, double noise, uint64_t *st)
{
	struct rxb_epoch *e = g_epoch(seq, hogs);
	double on = share * G_EPOCH_S * 1e9 / (hogs + 1);
	double z = floor((on - SP_A * (double)w - SP_B * p) / SP_E);
	double t;
	struct rxb_sock_meas *s;

	assert_true(z >= 0);
	t = SP_A * (double)w + SP_B * p + SP_E * z;
	t *= 1 + noise * (2 * test_uniform(st) - 1);
	s = g_sock(e, (uint64_t)p, t, w, drops);
	s->empty_reads = (uint64_t)z;
	return e;
}

/* A light epoch of the spinning receiver: 2 000 to 80 % of what its share
 * can take in packets, 0-3 wake-ups, 0.5-1 of its fair share. */
static inline struct rxb_epoch *sp_light(uint64_t seq, double hogs, double noise, uint64_t *st)
{
	double share = 0.5 + 0.5 * test_uniform(st);
	double pmax = 0.8 * share * G_EPOCH_S * 1e9 / (hogs + 1) / SP_B;
	double p = floor(2000 + (pmax - 2000) * test_uniform(st));

	return sp_epoch(seq, hogs, p, (uint64_t)(4 * test_uniform(st)), share, 0, noise, st);
}

/* One epoch (w wake-ups, p packets, z empty reads, t on-CPU ns) into the
 * three-term fit's sums, undecayed; whether the fit is ok is left to the
 * caller (an infinite minimum count never sets it). */
static inline void fit_obs(struct lsq *f, double w, double p, double z, double t)
{
	const double x[LSQ_TERMS] = { w, p, z };

	lsq_add(f, x, t, INFINITY);
}

#endif
