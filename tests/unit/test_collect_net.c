// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the receive-path stages (daemon/collect/collect_net) on
 * snapshots of known content. The disk rate, the record's JSON form and
 * the collector's options are test_collect_json.c's.
 */
#include <errno.h>
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

#include "daemon/collect/collect.h"
#include "daemon/collect/collect_disk.h"
#include "daemon/collect/collect_json.h"
#include "daemon/collect/collect_net.h"
#include "tests/unit/collect_fixture.h"
#include "tests/unit/unit_main.h"

#define MS 1000000ULL

/* ------------------------------------------------------------ stage A -- */

/* Two snapshots of 2 CPUs one second apart, all counters 0, no IRQs or
 * NAPIs. */
static void netrx_pair(struct netrx_snap *p, struct netrx_snap *c,
		       struct netrx_cpu pc[2], struct netrx_cpu cc[2])
{
	memset(p, 0, sizeof(*p));
	memset(pc, 0, 2 * sizeof(pc[0]));
	memset(cc, 0, 2 * sizeof(cc[0]));
	*c = *p;
	p->at_ns = 1000 * MS;
	c->at_ns = 2000 * MS;
	p->ncpus = c->ncpus = 2;
	p->cpus = pc;
	c->cpus = cc;
}

static void test_stage_a(void **state)
{
	struct netrx_snap p, c;
	struct netrx_cpu pc[2], cc[2];
	struct netrx_snap_irq pi[1], ci[2];
	struct netrx_snap_napi pn[1], cn[2];
	struct rxb_epoch *e = collect_fixture_epoch(2);

	(void)state;
	netrx_pair(&p, &c, pc, cc);
	memset(pi, 0, sizeof(pi));
	memset(ci, 0, sizeof(ci));
	memset(pn, 0, sizeof(pn));
	memset(cn, 0, sizeof(cn));
	/* CPU 0: 8000 NET_RX softirqs, 1000 timed for 20 ms: 160 ms in all. */
	cc[0].netrx_cnt = 8000;
	cc[0].netrx_timed = 1000;
	cc[0].netrx_ns = 20 * MS;
	cc[0].hardirq_ns = 5 * MS;
	p.irqs = pi;
	c.irqs = ci;
	p.nirqs = 1;
	c.nirqs = 2;
	pi[0] = (struct netrx_snap_irq){ .irq = 36, .v = { .count = 100, .ns = 200000 } };
	ci[0] = (struct netrx_snap_irq){ .irq = 36, .v = { .count = 1100, .ns = 2200000 } };
	ci[1] = (struct netrx_snap_irq){ .irq = 41, .v = { .count = 0 } };
	strcpy(ci[0].v.name, "virtio1-req.0");
	p.napi = pn;
	c.napi = cn;
	p.nnapi = 1;
	c.nnapi = 2;
	pn[0] = (struct netrx_snap_napi){ .key = 0, .v = { .polls = 10, .pkts = 10 } };
	cn[0] = (struct netrx_snap_napi){ .key = 0, .v = { .polls = 40010, .pkts = 60010,
				 .timed_polls = 5000, .timed_ns = 5000 * 1500, .budget = 64 } };
	strcpy(cn[0].v.dev, "(backlog)");
	cn[1] = (struct netrx_snap_napi){ .key = 0xffff8880deadbeefULL,
				 .v = { .polls = 100, .pkts = 6400, .budget = 64 } };
	strcpy(cn[1].v.dev, "eth0");

	collect_net_stage_a(&p, &c, true, true, NULL, e);
	assert_float_equal(e->cpus[0].softirq_frac, 0.160, 1e-9);
	assert_float_equal(e->cpus[0].hardirq_frac, 0.005, 1e-9);
	assert_float_equal(e->cpus[1].softirq_frac, 0.0, 1e-12);
	assert_int_equal(e->nnapi, 2);
	assert_string_equal(e->napi[0].dev, "(backlog)");	/* most polls first */
	assert_int_equal(e->napi[0].polls, 40000);
	assert_float_equal(e->napi[0].pkts_per_poll, 1.5, 1e-9);
	assert_float_equal(e->napi[0].service_ns_per_poll, 1500, 1e-9);
	assert_float_equal(e->napi[0].service_rate_per_s, 1e9 / 1500, 1e-6);
	assert_float_equal(e->napi[1].pkts_per_poll, 64, 1e-9);
	assert_true(isnan(e->napi[1].service_ns_per_poll));	/* never timed */
	assert_int_equal(e->nirqs, 1);				/* idle IRQs left out */
	assert_int_equal(e->irqs[0].count, 1000);
	assert_float_equal(e->irqs[0].rate_per_s, 1000, 1e-9);
	assert_float_equal(e->irqs[0].mean_ns, 2000, 1e-9);

	/* Not sampled: the polls and softirqs are not measured (not 0);
	 * the IRQ programs stay attached. */
	collect_net_stage_a(&p, &c, false, true, NULL, e);
	assert_int_equal(e->nnapi, 0);
	assert_true(isnan(e->cpus[0].softirq_frac));
	assert_true(isnan(e->cpus[1].softirq_frac));
	assert_float_equal(e->cpus[0].hardirq_frac, 0.005, 1e-9);
	assert_int_equal(e->nirqs, 1);
	assert_int_equal(e->irqs[0].count, 1000);
	free(e);
}

/* netrx_pair()'s, with stage A on CPU 0 at 2.5 us per softirq (1000 of
 * 8000 timed, 2.5 ms); @q empty. */
static void timed_pair(struct netrx_snap *p, struct netrx_snap *c, struct netrx_cpu *pc,
		       struct netrx_cpu *cc, struct collect_net_sirq *q)
{
	netrx_pair(p, c, pc, cc);
	memset(q, 0, sizeof(*q));
	cc[0].netrx_cnt = 8000;
	cc[0].netrx_timed = 1000;
	cc[0].netrx_ns = 2500000;
}

/*
 * A sampled epoch without stage A's programs: no polls, and the softirq
 * share is the kernel's NET_RX count (/proc/softirqs) times the time per
 * softirq of the latest epoch with them on that CPU (on the others where
 * that CPU was never timed).
 */
static void test_stage_a_estimate(void **state)
{
	struct netrx_snap p, c;
	struct netrx_cpu pc[2], cc[2];
	struct collect_net_sirq q;
	struct rxb_epoch *e = collect_fixture_epoch(2);

	(void)state;
	timed_pair(&p, &c, pc, cc, &q);
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 100 7\n");
	assert_int_equal(q.ndelta, 0);		/* one read: no delta */
	collect_net_stage_a(&p, &c, true, true, &q, e);
	assert_float_equal(e->cpus[0].softirq_frac, 0.020, 1e-12);
	assert_float_equal(q.ns_per[0], 2500, 1e-9);
	assert_float_equal(q.ns_per[1], 0, 0);	/* none timed there */

	/* Without: 40 000 softirqs on CPU 0 x 2.5 us in 1 s; none on CPU 1;
	 * the BPF counters stood still (detached). */
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 40100 7\n");
	assert_int_equal(q.ndelta, 2);
	collect_net_stage_a(&c, &c, true, false, &q, e);
	assert_true(isnan(e->cpus[0].softirq_frac));	/* an epoch of 0 ns */
	c.at_ns = 3000 * MS;
	collect_net_stage_a(&p, &c, true, false, &q, e);
	assert_int_equal(e->nnapi, 0);
	assert_float_equal(e->cpus[0].softirq_frac, 40000 * 2500.0 / 2e9, 1e-12);
	assert_float_equal(e->cpus[1].softirq_frac, 0.0, 0);
	/* Softirqs on a CPU never timed: priced at the time measured on the
	 * others (CPU 0's 2.5 us), 2 of them in 2 s. */
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 40100 9\n");
	collect_net_stage_a(&p, &c, true, false, &q, e);
	assert_float_equal(e->cpus[0].softirq_frac, 0.0, 0);
	assert_float_equal(e->cpus[1].softirq_frac, 2 * 2500.0 / 2e9, 1e-15);
	/* /proc/softirqs unreadable: unknown, and the next read has no delta. */
	collect_net_sirq_update(&q, NULL);
	collect_net_stage_a(&p, &c, true, false, &q, e);
	assert_true(isnan(e->cpus[0].softirq_frac));
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 40200 9\n");
	assert_int_equal(q.ndelta, 0);
	/* No CPU timed yet: nothing to price the counts with. */
	memset(q.ns_per, 0, sizeof(q.ns_per));
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 40300 19\n");
	collect_net_stage_a(&p, &c, true, false, &q, e);
	assert_true(isnan(e->cpus[0].softirq_frac));
	assert_true(isnan(e->cpus[1].softirq_frac));
	free(e);
}

/*
 * The price per softirq comes from stage-A epochs that timed at least 32:
 * after CPU 0's 2.5 us from 1000, an epoch that timed 9 (idle, 60 us
 * each) keeps it, and 200 000 softirqs in 1 s are 0.5 of the CPU, not
 * 12. A share above the whole CPU is NaN, estimated or timed.
 */
static void test_stage_a_price(void **state)
{
	struct netrx_snap p, c, idle;
	struct netrx_cpu pc[2], cc[2], ic[2];
	struct collect_net_sirq q;
	struct rxb_epoch *e = collect_fixture_epoch(2);

	(void)state;
	timed_pair(&p, &c, pc, cc, &q);
	collect_net_stage_a(&p, &c, true, true, &q, e);
	assert_float_equal(q.ns_per[0], 2500, 1e-9);
	/* 72 softirqs, 9 timed for 540 us: this epoch's share, not the price. */
	idle = c;
	memcpy(ic, cc, sizeof(ic));
	idle.cpus = ic;
	idle.at_ns = c.at_ns + 1000 * MS;
	ic[0].netrx_cnt += 72;
	ic[0].netrx_timed += 9;
	ic[0].netrx_ns += 540000;
	collect_net_stage_a(&c, &idle, true, true, &q, e);
	assert_float_equal(e->cpus[0].softirq_frac, 72 * 60000.0 / 1e9, 1e-12);
	assert_float_equal(q.ns_per[0], 2500, 1e-9);
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 0 0\n");
	collect_net_sirq_update(&q, "      CPU0  CPU1\n"
			      "    NET_RX: 200000 0\n");
	collect_net_stage_a(&p, &c, true, false, &q, e);
	assert_float_equal(e->cpus[0].softirq_frac, 200000 * 2500.0 / 1e9, 1e-12);
	/* Priced at 60 us they would be 12 CPUs: unknown. */
	q.ns_per[0] = 60000;
	collect_net_stage_a(&p, &c, true, false, &q, e);
	assert_true(isnan(e->cpus[0].softirq_frac));
	/* Timed: 1000 of 8000 took 300 ms, 2.4 s of softirq in 1 s. */
	cc[0].netrx_ns = 300 * MS;
	collect_net_stage_a(&p, &c, true, true, &q, e);
	assert_true(isnan(e->cpus[0].softirq_frac));
	free(e);
}

/* ------------------------------------------------------------ stage B -- */

static struct sockq_snap *sock_snap(void)
{
	struct sockq_snap *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(sockq_snap_init(s), 0);
	return s;
}

static void sock_snap_free(struct sockq_snap *s)
{
	sockq_snap_free(s);
	free(s);
}

/*
 * Three snapshots of the socket probes (a test uses two or three) and the
 * epoch computed from them (the test sets its CPUs), made before each
 * stage B test and freed after it.
 */
struct sockq_fixture {
	struct sockq_snap *snap[3];
	struct rxb_epoch *e;
};

static int sockq_setup(void **state)
{
	struct sockq_fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	for (int i = 0; i < 3; i++)
		f->snap[i] = sock_snap();
	f->e = collect_fixture_epoch(0);
	*state = f;
	return 0;
}

static int sockq_teardown(void **state)
{
	struct sockq_fixture *f = *state;

	for (int i = 0; i < 3; i++)
		sock_snap_free(f->snap[i]);
	free(f->e);
	free(f);
	return 0;
}

static void add_deq(struct sockq_snap *s, uint32_t tid, uint32_t port, uint64_t pkts)
{
	s->deq[s->ndeq].k = (struct sockq_deq_key){ tid, port };
	s->deq[s->ndeq].v = (struct sockq_deq){ .pkts = pkts };
	s->ndeq++;
}

static const char *reason_name(void *arg, uint32_t r)
{
	(void)arg;
	return r == 6 ? "SOCKET_RCVBUFF" : NULL;
}

static void test_stage_b(void **state)
{
	struct sockq_fixture *f = *state;
	struct sockq_snap *p = f->snap[0], *c = f->snap[1];
	struct rxb_epoch *e = f->e;
	struct collect_sched_tid_time tids[3];
	const uint16_t ports[] = { 5001, 5002, 5003 };
	size_t n;

	e->ncpus = 2;
	p->have_rx_sk = c->have_rx_sk = true;
	p->nports = 1;
	p->ports[0] = (struct sockq_snap_port){ .port = 5001, .have_state = true, .qlen = 10,
		.drop_episodes = 1, .episode_hist = { [40] = 2 }, .v = { .enq = 100, .deq = 90, .drops = 5, .drop_reason = { [6] = 5 },
		       .enq_truesize = 128000, .empty_reads = 7000 } };
	c->nports = 2;
	/* 1000 more enqueued, 990 out, 300 dropped (250 rcvbuf): the queue
	 * grows by 1000 - 990 = 10 (pkts_in - out - drops). */
	c->ports[0] = (struct sockq_snap_port){ .port = 5001, .have_state = true, .qlen = 20,
		.drop_episodes = 4, .episode_hist = { [40] = 3, [50] = 2, [127] = 1 }, .v = { .enq = 1100, .deq = 1080, .drops = 305, .drops_rcvbuf = 250,
		       .drop_reason = { [6] = 255, [20] = 50 }, .enq_truesize = 128000 + 1000 * 1280,
		       .enq_bytes = 1000 * 1200, .deq_bytes = 990 * 1200,
		       .rcvbuf_bytes = 32768, .rcvbuf_proto = 6, .proto = 17,
		       .empty_reads = 7000 + 123456 } };
	c->ports[1] = (struct sockq_snap_port){ .port = 5002, .have_state = true, .qlen = 0,
		.v = { .enq = 50, .deq = 50, .enq_truesize = 50 * 2304,
		       .rcvbuf_bytes = 212992, .rcvbuf_proto = 17, .proto = 17 } };
	/* Thread 10 serves 5001 only; thread 11 serves both, 3:1. */
	add_deq(p, 10, 5001, 0);
	add_deq(c, 10, 5001, 890);
	add_deq(c, 11, 5001, 100);
	add_deq(c, 11, 5002, 50);
	n = collect_net_receivers(c, tids, 3);
	assert_int_equal(n, 2);
	assert_int_equal(tids[0].tid, 10);
	assert_int_equal(tids[1].tid, 11);
	tids[0].seen = tids[1].seen = true;
	tids[0].oncpu_ns = 90 * MS;
	tids[0].ncpus_ran = 1;
	tids[0].ran_on[0] = (struct rxb_cpu_time){ 1, 90 * MS };
	tids[1].oncpu_ns = 30 * MS;
	tids[1].ncpus_ran = 1;
	tids[1].ran_on[0] = (struct rxb_cpu_time){ 0, 30 * MS };

	struct sched_snap sp, sc;
	struct collect_net_rx_memory mem = { 0 };

	memset(&sp, 0, sizeof(sp));
	memset(&sc, 0, sizeof(sc));
	collect_net_stage_b(p, c, &sp, &sc, tids, n, ports, 3, reason_name, NULL, true, true, &mem, e);
	assert_int_equal(e->nsocks, 3);
	assert_int_equal(e->socks[0].port, 5001);
	assert_true(e->socks[0].counts_valid);
	assert_true(e->socks[0].drops_valid);
	assert_int_equal(e->socks[0].pkts_enqueued, 1000);
	assert_int_equal(e->socks[0].drops, 300);
	assert_int_equal(e->socks[0].drops_rcvbuf, 250);
	assert_int_equal(e->socks[0].drop_episodes, 3);
	/* Ended in the epoch, smallest first: the histogram's delta. */
	assert_int_equal(e->socks[0].nepisode_bins, 3);
	assert_int_equal(e->socks[0].episodes_ended[0].bucket, 40);
	assert_int_equal(e->socks[0].episodes_ended[0].count, 1);
	assert_int_equal(e->socks[0].episodes_ended[1].bucket, 50);
	assert_int_equal(e->socks[0].episodes_ended[1].count, 2);
	assert_int_equal(e->socks[0].episodes_ended[2].bucket, 127);
	assert_false(e->socks[0].episode_bins_cut);
	assert_int_equal(e->socks[0].nreasons, 2);
	assert_string_equal(e->socks[0].drop_reasons[0].reason, "SOCKET_RCVBUFF");
	assert_int_equal(e->socks[0].drop_reasons[0].count, 250);
	assert_string_equal(e->socks[0].drop_reasons[1].reason, "20");
	assert_int_equal(e->socks[0].drop_reasons[1].count, 50);
	assert_int_equal(e->socks[0].pkts_in, 1300);
	assert_int_equal(e->socks[0].pkts_out, 990);
	assert_int_equal((int64_t)e->socks[0].pkts_in - (int64_t)e->socks[0].pkts_out -
			 (int64_t)e->socks[0].drops, e->socks[0].queue_pkts_delta);
	assert_float_equal(e->socks[0].truesize_per_pkt_bytes, 1280, 1e-9);
	assert_int_equal(e->socks[0].queue_pkts_cap, 25);	/* 32768 / 1280 */
	/* The protocol of the last dequeue, and of the buffer size's socket. */
	assert_int_equal(e->socks[0].ipproto, 17);
	assert_int_equal(e->socks[0].rcvbuf_ipproto, 6);
	assert_int_equal(e->socks[1].rcvbuf_ipproto, 17);
	assert_int_equal(e->socks[0].bytes_out, 990 * 1200);
	/* Empty reads: the delta, per port (none on 5002). */
	assert_int_equal(e->socks[0].empty_reads, 123456);
	assert_int_equal(e->socks[1].empty_reads, 0);
	/* Receivers' CPU time split by packets: all of 10, 2/3 of 11. */
	assert_int_equal(e->socks[0].ntids, 2);
	assert_int_equal(e->socks[0].receiver_oncpu_ns, 90 * MS + 20 * MS);
	assert_float_equal(e->socks[0].cpu_ns_per_pkt, 110.0 * MS / 990, 1e-6);
	assert_int_equal(e->socks[0].ncpus_ran, 2);
	assert_int_equal(e->socks[1].receiver_oncpu_ns, 10 * MS);
	assert_int_equal(e->socks[1].queue_pkts_cap, 92);	/* 212992 / 2304 */
	assert_int_equal(e->socks[1].queue_pkts_delta, 0);	/* new: from 0 */
	/* No blocks seen: packets per wakeup unknown. */
	assert_true(isnan(e->socks[0].pkts_per_wakeup));
	/* A watched port nothing has reached yet: zero counts, no queue. */
	assert_int_equal(e->socks[2].port, 5003);
	assert_int_equal(e->socks[2].pkts_in, 0);
	assert_int_equal(e->socks[2].queue_pkts_cap, 0);
	/* Without the scheduler probe the CPU figures are unknown, not 0. */
	assert_true(e->socks[0].queue_valid);
	assert_true(e->socks[0].reasons_valid);
	assert_true(e->socks[0].receivers_valid);
	collect_net_stage_b(p, c, NULL, NULL, tids, n, ports, 3, NULL, NULL, true, true, &mem, e);
	assert_true(isnan(e->socks[0].cpu_ns_per_pkt));
	assert_false(e->socks[0].receivers_valid);
	assert_int_equal(e->socks[0].ntids, 2);
	assert_int_equal(e->socks[0].pkts_in, 1300);
	/*
	 * Nor when the scheduler probe did not see a thread that read from the
	 * port (11: its record not read): unknown, not 90 ms for 990 packets;
	 * and 5002, which only 11 read.
	 */
	tids[1].seen = false;
	collect_net_stage_b(p, c, &sp, &sc, tids, n, ports, 3, NULL, NULL, true, true, &mem, e);
	assert_false(e->socks[0].receivers_valid);
	assert_true(isnan(e->socks[0].cpu_ns_per_pkt));
	assert_false(e->socks[1].receivers_valid);
}

/*
 * The per-packet programs are attached for sampled epochs only. In an epoch
 * between two samples a socket reports its drops (kfree_skb stays
 * attached), and the scheduling of the threads that received from it in the
 * latest sampled epoch, each weighted by its share then - never zeros for
 * the packet counts or the costs.
 */
static void test_stage_b_not_sampled(void **state)
{
	struct sockq_fixture *f = *state;
	struct sockq_snap *s0 = f->snap[0], *s1 = f->snap[1], *s2 = f->snap[2];
	struct rxb_epoch *e = f->e;
	struct collect_sched_tid_time tids[2];
	const uint16_t ports[] = { 5001, 5002 };
	struct collect_net_rx_memory mem = { 0 };
	struct sched_snap sp, sc;
	const struct rxb_sock_meas *m;
	size_t n;

	e->ncpus = 2;
	memset(&sp, 0, sizeof(sp));
	memset(&sc, 0, sizeof(sc));
	s0->have_rx_sk = s1->have_rx_sk = s2->have_rx_sk = true;
	/* Sampled epoch: thread 10 reads 5001 only, 11 reads both 1:3. */
	s1->nports = 2;
	s1->ports[0] = (struct sockq_snap_port){ .port = 5001, .have_state = true,
		.v = { .enq = 400, .deq = 400 } };
	s1->ports[1] = (struct sockq_snap_port){ .port = 5002, .have_state = true,
		.v = { .enq = 300, .deq = 300 } };
	add_deq(s1, 10, 5001, 300);
	add_deq(s1, 11, 5001, 100);
	add_deq(s1, 11, 5002, 300);
	n = collect_net_receivers(s1, tids, 2);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		tids[i].seen = true;
		tids[i].oncpu_ns = 40 * MS;
		tids[i].ncpus_ran = 1;
		tids[i].ran_on[0] = (struct rxb_cpu_time){ (int)i, 40 * MS };
	}
	collect_net_stage_b(s0, s1, &sp, &sc, tids, n, ports, 2, reason_name, NULL, true, true, &mem, e);
	assert_true(e->socks[0].counts_valid);
	assert_int_equal(e->socks[0].pkts_out, 400);
	assert_int_equal(mem.nports, 2);

	/* Not sampled: the enqueue/dequeue counters stood still (or moved
	 * with stragglers: either way they are not reported); 40 drops. */
	s2->nports = s1->nports;
	memcpy(s2->ports, s1->ports, sizeof(s2->ports));
	s2->ndeq = s1->ndeq;
	memcpy(s2->deq, s1->deq, (size_t)s1->ndeq * sizeof(s2->deq[0]));
	s2->ports[0].v.enq = 450;
	s2->ports[0].v.drops = 40;
	s2->ports[0].v.drops_rcvbuf = 40;
	s2->ports[0].v.drop_reason[6] = 40;
	/*
	 * The receivers ran 50 ms each, 10 blocked 5 times, 11 twice; 10
	 * waited 10 ms for its CPU after 4 wake-ups, 11 8 ms after 4.
	 */
	for (size_t i = 0; i < n; i++) {
		tids[i].oncpu_ns = 50 * MS;
		tids[i].ran_on[0].oncpu_ns = 50 * MS;
	}
	sc.nrx = 2;
	sc.rx = calloc(2, sizeof(*sc.rx));
	assert_non_null(sc.rx);
	sc.rx[0].tid = 10;
	sc.rx[0].v.blocks = 5;
	sc.rx[0].v.wake_wait_ns = 10 * MS;
	sc.rx[0].v.wake_wait_cnt = 4;
	sc.rx[1].tid = 11;
	sc.rx[1].v.blocks = 2;
	sc.rx[1].v.wake_wait_ns = 8 * MS;
	sc.rx[1].v.wake_wait_cnt = 4;
	/* Their longest waits since the previous read (sched.c). */
	sc.rx[0].wake_max_ns = 6 * MS;
	sc.rx[1].wake_max_ns = 9 * MS;
	/*
	 * 10 was off after preemptions 5 ms, asleep 300 ms, 280 of them in
	 * sleeps of SCHED_IDLE_SLEEP_NS or more; 11 off 8 ms, asleep 40 ms,
	 * none idle.
	 */
	sc.rx[0].v.preempt_off_ns = 5 * MS;
	sc.rx[0].v.sleep_off_ns = 300 * MS;
	sc.rx[0].v.idle_sleep_ns = 280 * MS;
	sc.rx[1].v.preempt_off_ns = 8 * MS;
	sc.rx[1].v.sleep_off_ns = 40 * MS;
	collect_net_stage_b(s1, s2, &sp, &sc, tids, n, ports, 2, reason_name, NULL, false, false, &mem, e);
	m = &e->socks[0];
	assert_false(m->counts_valid);
	assert_false(m->queue_valid);
	assert_int_equal(m->pkts_in, 0);		/* not reported (JSON null) */
	assert_int_equal(m->pkts_out, 0);
	assert_true(isnan(m->cpu_ns_per_pkt));
	assert_true(isnan(m->pkts_per_wakeup));
	assert_true(isnan(m->truesize_per_pkt_bytes));
	assert_true(m->drops_valid && m->reasons_valid);
	assert_int_equal(m->drops, 40);
	assert_int_equal(m->drops_rcvbuf, 40);
	assert_int_equal(m->nreasons, 1);
	assert_string_equal(m->drop_reasons[0].reason, "SOCKET_RCVBUFF");
	/* All of 10 and 1/4 of 11 (its share of 5001 when sampled). */
	assert_true(m->receivers_valid);
	assert_int_equal(m->ntids, 2);
	assert_int_equal(m->receiver_oncpu_ns, 50 * MS + 50 * MS / 4);
	assert_int_equal(m->recv_wakeups, 5 + 1);	/* 5 + 2/4, rounded */
	/* (10 + 8/4) ms over 4 + 4/4 waits. */
	assert_int_equal(m->wake_waits, 5);
	assert_float_equal(m->wake_wait_ns, 12.0 * MS / 5, 1e-6);
	/* The longest of any thread's, whatever its share: a wait is one
	 * wait of the port's receivers. */
	assert_float_equal(m->wake_max_ns, 9.0 * MS, 1e-6);
	/* Active: on the CPU 50 + 50/4, preempted 5 + 8/4, asleep briefly
	 * (300 - 280) + 40/4 ms. */
	assert_float_equal(m->active_ns, (62.5 + 7.0 + 30.0) * MS, 1e-3);
	assert_int_equal(m->ncpus_ran, 2);
	m = &e->socks[1];
	assert_int_equal(m->receiver_oncpu_ns, 50 * MS * 3 / 4);
	assert_float_equal(m->wake_max_ns, 9.0 * MS, 1e-6);	/* 11's alone */
	assert_int_equal(m->drops, 0);
	assert_true(m->drops_valid);

	/* A thread that exited since is left out; a port added since the
	 * sample has no receivers yet. */
	n = 1;
	collect_net_stage_b(s1, s2, &sp, &sc, tids, n, (const uint16_t[]){ 5001, 5003 }, 2,
		     reason_name, NULL, false, false, &mem, e);
	assert_int_equal(e->socks[0].ntids, 1);
	assert_int_equal(e->socks[0].receiver_oncpu_ns, 50 * MS);
	assert_false(e->socks[1].receivers_valid);
	assert_int_equal(e->socks[1].ntids, 0);
	/* ... and 5002, no longer watched, is forgotten. */
	assert_int_equal(mem.nports, 1);
	assert_int_equal(mem.ports[0].port, 5001);
	free(sc.rx);
}

/*
 * The first sampled epoch after a detach: the probes were attached before
 * the epoch began, so its enqueues and dequeues are all counted and the
 * change of the queue is enqueued minus dequeued, whatever the queue held
 * at the attach (qlen counts from when the port was watched, and is
 * negative when more was read than was seen queued).
 */
static void test_queue_after_attach(void **state)
{
	struct sockq_fixture *f = *state;
	struct sockq_snap *p = f->snap[0], *c = f->snap[1];
	struct rxb_epoch *e = f->e;
	struct collect_net_rx_memory mem = { 0 };
	const uint16_t port = 5001;

	e->ncpus = 1;
	p->nports = c->nports = 1;
	/* Read 7 that were queued before the port was watched, saw 10 in. */
	p->ports[0] = (struct sockq_snap_port){ .port = port, .have_state = true, .qlen = -7,
		.v = { .enq = 0, .deq = 7 } };
	c->ports[0] = (struct sockq_snap_port){ .port = port, .have_state = true, .qlen = 3,
		.v = { .enq = 100, .deq = 97 } };
	collect_net_stage_b(p, c, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, true, &mem, e);
	assert_true(e->socks[0].counts_valid);
	assert_int_equal(e->socks[0].pkts_in, 100);
	assert_int_equal(e->socks[0].pkts_out, 90);
	assert_true(e->socks[0].queue_valid);
	assert_int_equal(e->socks[0].queue_pkts_delta, 10);
	/* Nothing moved the queue in the epoch: no change. */
	c->ports[0] = p->ports[0];
	collect_net_stage_b(p, c, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, true, &mem, e);
	assert_true(e->socks[0].queue_valid);
	assert_int_equal(e->socks[0].queue_pkts_delta, 0);
	/* Not sampled: the queue is not measured. */
	collect_net_stage_b(p, c, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, false, false, &mem, e);
	assert_false(e->socks[0].queue_valid);
}

/*
 * Arrivals by conservation against a queue followed packet by packet: a
 * datagram queue fed A packets of one size, of which X are dropped and D
 * read, holds Q1 = Q0 + A - X - D at the end, and its memory is Q times
 * the truesize; derived from D, X and the memory at both edges, the
 * arrivals must be A exactly and the bytes A - X times the payload.
 */
static void test_conserve_closed_form(void **state)
{
	const double truesize = 2304, payload = 1400;
	struct collect_net_derived d;

	(void)state;
	for (uint64_t q0 = 0; q0 <= 90; q0 += 15)
		for (uint64_t a = 0; a <= 5000; a += 997)
			for (uint64_t x = 0; x <= a && x <= 300; x += 150) {
				/* The reader takes all but up to 40 of what is there. */
				uint64_t avail = q0 + a - x;
				uint64_t dq = avail > 40 ? avail - 40 + (a % 7) : 0;
				uint64_t q1 = avail - dq;

				assert_true(collect_net_conserve(dq, dq * (uint64_t)payload,
								 q0 * (uint64_t)truesize,
								 q1 * (uint64_t)truesize, truesize,
								 payload, &d));
				assert_int_equal(d.pkts_enqueued + x, a);
				assert_int_equal(d.queue_pkts_delta, (int64_t)q1 - (int64_t)q0);
				assert_int_equal(d.bytes_in, (a - x) * (uint64_t)payload);
			}
	/* A few bytes off (a packet being uncharged) round to the packet. */
	assert_true(collect_net_conserve(100, 0, 10 * 2304 + 7, 20 * 2304 - 9, truesize, 0, &d));
	assert_int_equal(d.pkts_enqueued, 110);
	/* A queue that drained more than was read (reader raced the read):
	 * no negative arrivals. */
	assert_true(collect_net_conserve(5, 0, 50 * 2304, 0, truesize, 0, &d));
	assert_int_equal(d.pkts_enqueued, 0);
	/* No truesize known: derived only from a queue empty at both edges
	 * (it changed by 0 packets whatever their size). */
	assert_true(collect_net_conserve(5, 7000, 0, 0, NAN, 0, &d));
	assert_int_equal(d.pkts_enqueued, 5);
	assert_int_equal(d.queue_pkts_delta, 0);
	assert_int_equal(d.bytes_in, 7000);
	assert_false(collect_net_conserve(5, 0, 0, 2304, NAN, 0, &d));
	assert_false(collect_net_conserve(5, 0, 2304, 0, 0, 0, &d));
}

/*
 * A counted epoch, then one without the enqueue program: the second's
 * arrivals are its dequeues, plus the change of the queue read at its
 * edges in the first's memory per packet, plus its drops.
 */
static void test_derived_epoch(void **state)
{
	struct sockq_fixture *f = *state;
	struct sockq_snap *s0 = f->snap[0], *s1 = f->snap[1], *s2 = f->snap[2];
	struct rxb_epoch *e = f->e;
	struct collect_net_rx_memory mem = { 0 };
	const struct rxb_sock_meas *m = &e->socks[0];
	const uint16_t port = 5001;

	e->ncpus = 1;
	s0->nports = s1->nports = s2->nports = 1;
	s0->have_rx_sk = s1->have_rx_sk = s2->have_rx_sk = true;
	s0->ports[0] = (struct sockq_snap_port){ .port = port };
	/* Counted: 100 in of 1400 bytes and 2304 charged each, 90 read. */
	s1->ports[0] = (struct sockq_snap_port){ .port = port, .have_state = true, .qlen = 10,
		.have_rqueue = true, .rqueue_bytes = 10 * 2304,
		.v = { .enq = 100, .enq_bytes = 100 * 1400, .enq_truesize = 100 * 2304,
		       .deq = 90, .deq_bytes = 90 * 1400, .rcvbuf_bytes = 212992,
		       .rcvbuf_proto = IPPROTO_UDP, .proto = IPPROTO_UDP } };
	collect_net_stage_b(s0, s1, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, true,
			    &mem, e);
	assert_int_equal(m->pkts_in, 100);
	assert_int_equal(m->queue_pkts_cap, 212992 / 2304);
	/* Derived: 500 read, 30 dropped, the queue from 10 to 60; the
	 * enqueue counters stand still and the diagnostics' rcvbuf moved. */
	s2->ports[0] = s1->ports[0];
	s2->ports[0].qlen = 10 - 500;
	s2->ports[0].rqueue_bytes = 60 * 2304;
	s2->ports[0].diag_rcvbuf_bytes = 2 * 212992;
	s2->ports[0].v.deq = 590;
	s2->ports[0].v.deq_bytes = 590 * 1400;
	s2->ports[0].v.drops = 30;
	collect_net_stage_b(s1, s2, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, false,
			    &mem, e);
	assert_true(m->counts_valid);
	assert_true(m->queue_valid);
	assert_int_equal(m->pkts_out, 500);
	assert_int_equal(m->queue_pkts_delta, 50);
	assert_int_equal(m->pkts_enqueued, 550);
	assert_int_equal(m->pkts_in, 580);
	assert_int_equal(m->bytes_in, 550 * 1400);
	assert_true(isnan(m->truesize_per_pkt_bytes));
	assert_int_equal(m->rcvbuf_bytes, 2 * 212992);
	assert_int_equal(m->queue_pkts_cap, 2 * 212992 / 2304);
	/* Again, with the memory of the derived epoch: same sizes. */
	collect_net_stage_b(s1, s2, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, false,
			    &mem, e);
	assert_int_equal(m->pkts_in, 580);
	/* The queue unread at an edge: not derivable, not sampled. */
	s1->ports[0].have_rqueue = false;
	collect_net_stage_b(s1, s2, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, false,
			    &mem, e);
	assert_false(m->counts_valid);
	assert_false(m->queue_valid);
	assert_int_equal(m->drops, 30);
	/* No counted epoch before: not derivable either, and the collector
	 * is told to keep the enqueue program. */
	s1->ports[0].have_rqueue = true;
	memset(&mem, 0, sizeof(mem));
	assert_false(collect_net_sizes_known(&mem, NULL, NULL, false, &port, 1));
	collect_net_stage_b(s1, s2, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, false,
			    &mem, e);
	assert_false(m->counts_valid);
	assert_false(collect_net_sizes_known(&mem, NULL, NULL, false, &port, 1));
	/* ... unless the queue was empty at both edges: 60 read, 2 dropped. */
	s1->ports[0].rqueue_bytes = s2->ports[0].rqueue_bytes = 0;
	s2->ports[0].v.deq = s1->ports[0].v.deq + 60;
	s2->ports[0].v.deq_bytes = s1->ports[0].v.deq_bytes + 60 * 1400;
	s2->ports[0].v.drops = s1->ports[0].v.drops + 2;
	collect_net_stage_b(s1, s2, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, false,
			    &mem, e);
	assert_true(m->counts_valid);
	assert_int_equal(m->pkts_in, 62);
	assert_int_equal(m->queue_pkts_delta, 0);
	assert_int_equal(m->queue_pkts_cap, 0);	/* no size to divide by */
	assert_false(collect_net_sizes_known(&mem, NULL, NULL, false, &port, 1));
	/* A counted epoch with packets names the size, already before it is
	 * taken in (not when its enqueues were not counted); one without
	 * packets leaves it unknown. */
	assert_true(collect_net_sizes_known(&mem, s0, s1, true, &port, 1));
	assert_false(collect_net_sizes_known(&mem, s0, s1, false, &port, 1));
	assert_false(collect_net_sizes_known(&mem, s1, s1, true, &port, 1));
	assert_false(collect_net_sizes_known(&mem, NULL, s1, true, &port, 1));
	collect_net_stage_b(s0, s0, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, true,
			    &mem, e);
	assert_false(collect_net_sizes_known(&mem, NULL, NULL, false, &port, 1));
	collect_net_stage_b(s0, s1, NULL, NULL, NULL, 0, &port, 1, NULL, NULL, true, true,
			    &mem, e);
	assert_true(collect_net_sizes_known(&mem, NULL, NULL, false, &port, 1));
	assert_true(collect_net_sizes_known(&mem, NULL, NULL, false, NULL, 0));
	{
		const uint16_t two[2] = { port, port + 1 };

		assert_false(collect_net_sizes_known(&mem, NULL, NULL, false, two, 2));
	}
}

static void test_drop_reasons(void **state)
{
	struct sockq_fixture *f = *state;
	struct sockq_snap *p = f->snap[0], *c = f->snap[1];
	struct rxb_epoch *e = f->e;

	e->ncpus = 1;
	p->nreasons = 1;
	p->reasons[0] = (struct sockq_snap_reason){ 6, 100 };
	c->nreasons = 3;
	c->reasons[0] = (struct sockq_snap_reason){ 2, 7 };
	c->reasons[1] = (struct sockq_snap_reason){ 6, 350 };
	c->reasons[2] = (struct sockq_snap_reason){ 0x10002, 0 };
	collect_net_drop_reasons(p, c, reason_name, NULL, e);
	assert_int_equal(e->nreasons, 2);
	assert_string_equal(e->drops_by_reason[0].reason, "2");	/* no name */
	assert_int_equal(e->drops_by_reason[0].count, 7);
	assert_string_equal(e->drops_by_reason[1].reason, "SOCKET_RCVBUFF");
	assert_int_equal(e->drops_by_reason[1].count, 250);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_stage_a),
	cmocka_unit_test(test_stage_a_estimate),
	cmocka_unit_test(test_stage_a_price),
	cmocka_unit_test_setup_teardown(test_stage_b, sockq_setup, sockq_teardown),
	cmocka_unit_test_setup_teardown(test_stage_b_not_sampled, sockq_setup, sockq_teardown),
	cmocka_unit_test_setup_teardown(test_queue_after_attach, sockq_setup, sockq_teardown),
	cmocka_unit_test_setup_teardown(test_drop_reasons, sockq_setup, sockq_teardown),
	cmocka_unit_test(test_conserve_closed_form),
	cmocka_unit_test_setup_teardown(test_derived_epoch, sockq_setup, sockq_teardown),
)
