// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/model_inputs: synthetic epoch records in, stage
 * inputs out, each number checked against the formula of DESIGN §3 /
 * model_inputs.h recomputed here.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/model_inputs.h"

#define PORT 9000

static struct rxb_epoch *new_epoch(uint64_t seq, double dt_s)
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
static struct rxb_sock_meas *add_sock(struct rxb_epoch *e, uint64_t pkts, double ns,
				      uint64_t wakeups)
{
	struct rxb_sock_meas *s = &e->socks[e->nsocks++];

	s->port = PORT;
	s->counts_valid = true;
	s->pkts_in = pkts;
	s->pkts_enqueued = pkts;
	s->pkts_out = pkts;
	s->receiver_oncpu_ns = (uint64_t)(ns * (double)pkts);
	s->cpu_ns_per_pkt = ns;
	s->recv_wakeups = wakeups;
	s->pkts_per_wakeup = wakeups ? (double)pkts / (double)wakeups : NAN;
	s->rcvbuf_bytes = 212992;
	s->truesize_per_pkt_bytes = 2304;
	s->ncpus_ran = 1;
	s->ran_on[0].cpu = 1;
	s->ran_on[0].oncpu_ns = s->receiver_oncpu_ns;
	return s;
}

static struct mi_env env_for(const struct rxb_epoch *e)
{
	struct mi_env env = {
		.rule = RXB_BATCH_PARTIAL,
		.netdev_max_backlog = 1000,
		.fallback_rx_ring = 256,
		.now_ns = e->end_ns,
	};

	return env;
}

static void check_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fabs(want))) {
		print_error("got %.17g, want %.17g (rel. tol %g)\n", got, want, tol);
		fail();
	}
}

/* One measured epoch: every stage-B input by its formula. */
static void test_stage_b_formulas(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct rxb_sock_meas *s;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	s = add_sock(e, 1000, 2000, 250);
	/* 75 % of the receiver's time on CPU 1 (2 hogs), 25 % on CPU 0 (none). */
	s->ncpus_ran = 2;
	s->ran_on[0].oncpu_ns = 1500000;
	s->ran_on[1].cpu = 0;
	s->ran_on[1].oncpu_ns = 500000;
	e->cpus[1].cpu_bound = 2.0;
	e->cpus[0].cpu_bound = 0.0;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);

	assert_int_equal(r.nstages, 1);
	assert_true(r.b.present);
	assert_false(r.a.present);
	assert_false(r.no_traffic);
	check_rel(r.b.cpu_bound.v, 0.75 * 2.0 + 0.25 * 0.0, 1e-15);
	assert_int_equal(r.b.cpu_bound.src, MI_SRC_MEASURED);
	check_rel(r.b.cpu_ns_per_pkt.v, 2000, 1e-15);
	check_rel(r.b.pkts_per_wakeup.v, 4, 1e-15);
	check_rel(r.b.queue_pkts.v, floor(212992.0 / 2304.0), 0);
	check_rel(r.stages[0].mu_net_per_s, 1e9 / (2000.0 * 4), 1e-15);
	assert_int_equal(r.stages[0].batch_pkts, 4);
	assert_int_equal(r.stages[0].queue_pkts, 92);
	assert_false(r.stages[0].load_independent);
	check_rel(r.stages[0].cpu_bound, 1.5, 1e-15);
	assert_true(r.stages[0].io_bound == 0);
	/* No NAPI poll seen: stage A is left out, which costs 10 %. */
	assert_int_equal(r.confidence, 900);
	assert_int_equal(r.a.mu_per_s.src, MI_SRC_MISSING);
	free(e);
}

/* The costs are decaying packet-weighted averages (model_inputs.h). */
static void test_smoothing(void **state)
{
	struct rxb_epoch *e1 = new_epoch(1, 1.0), *e2 = new_epoch(2, 0.5);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env;
	double k = exp(-0.5 / MI_TAU_S);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	add_sock(e1, 1000, 2000, 250);
	env = env_for(e1);
	mi_update(&l, &d, PORT, e1, 1.0, &env, &r);
	add_sock(e2, 3000, 1000, 3000);
	env = env_for(e2);
	mi_update(&l, &d, PORT, e2, 0.5, &env, &r);
	check_rel(r.b.cpu_ns_per_pkt.v,
		  (2000.0 * 1000 * k + 1000.0 * 3000) / (1000 * k + 3000), 1e-14);
	check_rel(r.b.pkts_per_wakeup.v, (1000 * k + 3000) / (250 * k + 3000), 1e-14);
	/* The workload is not smoothed: this epoch's counts only. */
	e2->cpus[1].cpu_bound = 3;
	e2->seq = 3;
	e2->socks[0].pkts_out = 0;	/* idle epoch */
	env = env_for(e2);
	mi_update(&l, &d, PORT, e2, 0.5, &env, &r);
	check_rel(r.b.cpu_bound.v, 3, 0);
	/* Idle: costs carried over, flagged learned, and trusted less. */
	assert_int_equal(r.b.cpu_ns_per_pkt.src, MI_SRC_LEARNED);
	check_rel(r.b.cpu_ns_per_pkt.v,
		  (2000.0 * 1000 * k + 1000.0 * 3000) / (1000 * k + 3000), 1e-14);
	assert_int_equal(r.confidence, 630);	/* 1000 x 0.7 learned x 0.9 no stage A */
	free(e1);
	free(e2);
}

/* Too few packets do not make a measurement; nothing is invented. */
static void test_too_few_packets(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	add_sock(e, 10, 2000, 5);
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 0);
	assert_int_equal(r.b.cpu_ns_per_pkt.src, MI_SRC_MISSING);
	assert_string_equal(r.b.cpu_ns_per_pkt.why, "too few packets measured");
	assert_non_null(strstr(r.why, "stage B not modelled"));
	assert_int_equal(r.confidence, 0);
	free(e);
}

/* No traffic at all: every cost missing, with the reason. */
static void test_no_traffic(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 0);
	assert_true(r.no_traffic);
	assert_false(r.traffic.sock_seen);
	assert_string_equal(r.b.cpu_ns_per_pkt.why, "no traffic seen on the port yet");
	assert_string_equal(r.b.cpu_bound.why, "receiver thread not seen yet");
	assert_true(isnan(r.b.cpu_ns_per_pkt.v));
	free(e);
}

/* A receiver that never blocked drains the queue: N = K. */
static void test_never_blocked(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	add_sock(e, 5000, 800, 0);
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 1);
	assert_int_equal(r.stages[0].batch_pkts, 92);
	assert_int_equal(r.stages[0].queue_pkts, 92);
	check_rel(r.stages[0].mu_net_per_s, 1e9 / (800.0 * 92), 1e-15);
	free(e);
}

/* Without the scheduler probe the receiver's costs are missing. */
static void test_no_sched_probe(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);
	struct rxb_sock_meas *s;

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	s = add_sock(e, 5000, 800, 0);
	s->receiver_oncpu_ns = 0;
	s->cpu_ns_per_pkt = NAN;
	s->ncpus_ran = 0;
	e->probes &= ~RXB_PROBE_SCHED;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 0);
	assert_int_equal(r.b.cpu_ns_per_pkt.src, MI_SRC_MISSING);
	assert_string_equal(r.b.cpu_ns_per_pkt.why,
			    "receiver CPU time not measured: the scheduler probe is not loaded");
	assert_int_equal(r.b.pkts_per_wakeup.src, MI_SRC_MISSING);
	/* Without the socket probe nothing about the socket is known. */
	e->probes &= ~RXB_PROBE_SOCKQ;
	s->counts_valid = false;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_string_equal(r.b.cpu_ns_per_pkt.why,
			    "socket not measured: the socket probe is not loaded");
	free(e);
}

/* #I > 0: disk rates when measured, else #I is left out and said so. */
static void test_io_bound(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	add_sock(e, 1000, 2000, 250);
	e->cpus[1].io_bound = 1.5;
	mi_disk_update(&d, e, 1.0);
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_true(r.b.io_ignored);
	assert_true(r.stages[0].io_bound == 0);
	check_rel(r.b.io_bound.v, 1.5, 0);
	assert_non_null(strstr(r.why, "not modelled"));
	assert_int_equal(r.confidence, 450);	/* x 0.9 no stage A x 0.5 */

	e->seq = 2;
	e->disk.valid = true;
	e->disk.completions = 100;
	e->disk.mean_service_ns = 990099;	/* mu_D 1.01/ms */
	e->disk.mean_cpu_burst_ns = 217391;	/* mu_P-I/O 4.6/ms */
	mi_disk_update(&d, e, 1.0);
	env = env_for(e);
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_false(r.b.io_ignored);
	check_rel(r.stages[0].io_bound, 1.5, 0);
	check_rel(r.stages[0].mu_disk_per_s, 1e9 / 990099, 1e-14);
	check_rel(r.stages[0].mu_pio_per_s, 1e9 / 217391, 1e-14);
	free(e);
}

/* Stage A: the busiest NAPI instance, K from the backlog or the ring. */
static void test_stage_a(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);
	struct rxb_napi_meas *n;

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	add_sock(e, 2000, 2000, 500);
	e->nnapi = 2;
	n = &e->napi[0];
	rxb_strlcpy(n->dev, "eth9", sizeof(n->dev));
	n->polls = 10;
	n->pkts = 10;
	n->service_ns_per_poll = 100;
	n = &e->napi[1];
	rxb_strlcpy(n->dev, "(backlog)", sizeof(n->dev));
	n->polls = 1000;
	n->pkts = 2000;
	n->service_ns_per_poll = 2500;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 2);
	assert_true(r.a.present);
	assert_string_equal(r.a.dev, "(backlog)");
	assert_true(r.stages[0].load_independent);
	check_rel(r.stages[0].mu_net_per_s, 1e9 / 2500, 1e-15);
	assert_int_equal(r.stages[0].batch_pkts, 2);
	assert_int_equal(r.stages[0].queue_pkts, 1000);
	assert_int_equal(r.a.queue_pkts.src, MI_SRC_SYSCTL);
	assert_false(r.stages[1].load_independent);	/* B after A */
	assert_int_equal(r.confidence, 1000);

	/* A real device: its ring, as reported. */
	mi_learn_init(&l);
	rxb_strlcpy(e->napi[1].dev, "eth0", sizeof(e->napi[1].dev));
	e->nnics = 1;
	rxb_strlcpy(e->nics[0].name, "eth0", sizeof(e->nics[0].name));
	e->nics[0].rx_ring = 512;
	e->nics[0].ring_source = RXB_SRC_DEVICE;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.stages[0].queue_pkts, 512);
	assert_int_equal(r.a.queue_pkts.src, MI_SRC_DEVICE);
	free(e);
}

/* Costs from the state directory: flagged, trusted less, no traffic. */
static void test_history(void **state)
{
	struct rxb_epoch *e = new_epoch(7, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	l.origin = MI_SRC_HISTORY;
	l.cpu_ns_per_pkt = (struct mi_ratio){ 64 * 1500.0, 64, true };
	l.pkts_per_wakeup = (struct mi_ratio){ 8, 1, true };
	l.truesize_per_pkt = (struct mi_ratio){ 64 * 2304.0, 64, true };
	l.rcvbuf_bytes = 212992;
	l.ncpus = 1;
	l.cpu[0] = 1;
	l.cpu_share[0] = 1;
	e->cpus[1].cpu_bound = 1;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 1);
	assert_true(r.no_traffic);
	assert_int_equal(r.b.cpu_ns_per_pkt.src, MI_SRC_HISTORY);
	check_rel(r.stages[0].mu_net_per_s, 1e9 / (1500.0 * 8), 1e-15);
	check_rel(r.stages[0].cpu_bound, 1, 0);
	assert_int_equal(r.confidence, 360);	/* 0.4 history x 0.9 no stage A */
	free(e);
}

/* Unmeasured task classes (NaN) make stage B impossible: say which. */
static void test_workload_missing(void **state)
{
	struct rxb_epoch *e = new_epoch(1, 1.0);
	struct mi_learn l;
	struct mi_disk d;
	struct mi_result r;
	struct mi_env env = env_for(e);

	(void)state;
	mi_learn_init(&l);
	mi_disk_init(&d);
	add_sock(e, 1000, 2000, 250);
	e->cpus[1].cpu_bound = NAN;
	mi_update(&l, &d, PORT, e, 1.0, &env, &r);
	assert_int_equal(r.nstages, 0);
	assert_string_equal(r.b.cpu_bound.why, "task classes not measured");
	assert_non_null(strstr(r.why, "task classes not measured"));
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_b_formulas),
		cmocka_unit_test(test_smoothing),
		cmocka_unit_test(test_too_few_packets),
		cmocka_unit_test(test_no_traffic),
		cmocka_unit_test(test_never_blocked),
		cmocka_unit_test(test_no_sched_probe),
		cmocka_unit_test(test_io_bound),
		cmocka_unit_test(test_stage_a),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_workload_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
