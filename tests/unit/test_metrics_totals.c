// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of the metrics' counters from per-epoch deltas
 * (daemon/serve/metrics_totals.c): over random epochs, each counter equals
 * the sum of the deltas it was given, counted here; packets count only in
 * epochs that measured them; drops split by reason add up to the socket's
 * drops (OTHER taking the reasons beyond the largest and beyond the
 * table, "unknown" those without a measured reason); a flow made anew
 * keeps counting its reports on; ports beyond the table evict only ports
 * without a flow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/metrics_totals.h"
#include "tests/unit/unit_main.h"

struct fixture {
	struct flows *f;
	struct rxb_epoch *e;
	struct metrics_totals t;
};

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->f = calloc(1, sizeof(*x->f));
	x->e = calloc(1, sizeof(*x->e));
	assert_non_null(x->f);
	assert_non_null(x->e);
	metrics_totals_init(&x->t);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;

	free(x->f);
	free(x->e);
	free(x);
	return 0;
}

static void add_flow(struct flows *f, uint16_t port, uint64_t created_ns)
{
	memset(&f->v[f->n], 0, sizeof(f->v[0]));
	f->v[f->n].port = port;
	f->v[f->n].created_ns = created_ns;
	f->n++;
}

static uint64_t drops_of(const struct metrics_port *p, const char *reason)
{
	for (int i = 0; i < p->nreasons; i++)
		if (!strcmp(p->drops[i].reason, reason))
			return p->drops[i].pkts;
	return 0;
}

static uint64_t all_drops(const struct metrics_port *p)
{
	uint64_t n = 0;

	for (int i = 0; i < p->nreasons; i++)
		n += p->drops[i].pkts;
	return n;
}

/* One epoch's socket record for @port with random counts; adds to the sums. */
static void random_sock(struct rxb_sock_meas *s, uint16_t port, uint64_t sums[4],
			uint64_t *rcvbuf, double *counted_s, double len_s)
{
	static const char *const names[] = { "SOCKET_RCVBUFF", "UDP_CSUM", "NO_SOCKET" };

	memset(s, 0, sizeof(*s));
	s->port = port;
	s->counts_valid = rand() % 3 != 0;	/* sampled epochs only */
	s->pkts_in = (uint64_t)rand() % 100000;
	s->pkts_out = (uint64_t)rand() % 100000;
	if (s->counts_valid) {
		sums[0] += s->pkts_in;
		sums[1] += s->pkts_out;
		*counted_s += len_s;
	}
	s->drops_valid = rand() % 5 != 0;
	s->reasons_valid = s->drops_valid && rand() % 4 != 0;
	s->nreasons = s->reasons_valid ? rand() % 4 : 0;
	for (int i = 0; i < s->nreasons; i++) {
		rxb_strlcpy(s->drop_reasons[i].reason, names[i], sizeof(s->drop_reasons[i].reason));
		s->drop_reasons[i].count = (uint64_t)rand() % 1000;
		s->drops += s->drop_reasons[i].count;
		if (i == 0)
			*rcvbuf += s->drop_reasons[i].count;
	}
	s->drops += (uint64_t)rand() % 50;	/* beyond the largest reasons */
	if (s->drops_valid)
		sums[2] += s->drops;
	if (s->drops_valid && !s->reasons_valid)
		sums[3] += s->drops;
}

static void test_sums_over_random_epochs(void **state)
{
	struct fixture *x = *state;
	uint64_t sums[2][4] = { { 0 } }, rcvbuf[2] = { 0 }, runs = 0, run_ns = 0;
	double counted[2] = { 0 };

	srand(11);
	add_flow(x->f, 5001, 1);
	add_flow(x->f, 5002, 2);
	for (uint64_t seq = 1; seq <= 500; seq++) {
		double len_s = 0.1 + (rand() % 100) / 100.0;

		x->e->seq = seq;
		x->e->start_ns = seq * RXB_NSEC_PER_SEC * 3;
		x->e->end_ns = x->e->start_ns + (uint64_t)(len_s * 1e9);
		len_s = (double)(x->e->end_ns - x->e->start_ns) / 1e9;
		x->e->nsocks = 2;
		for (int i = 0; i < 2; i++)
			random_sock(&x->e->socks[i], (uint16_t)(5001 + i), sums[i], &rcvbuf[i],
				    &counted[i], len_s);
		x->e->nprogs = 1;
		rxb_strlcpy(x->e->probe_cost[0].prog, "sockq_enqueue", RXB_NAME_LEN);
		x->e->probe_cost[0].run_cnt = (uint64_t)rand() % 10000;
		x->e->probe_cost[0].run_time_ns = (uint64_t)rand() % 1000000;
		runs += x->e->probe_cost[0].run_cnt;
		run_ns += x->e->probe_cost[0].run_time_ns;
		metrics_totals_epoch(&x->t, x->f, x->e);
	}
	for (int i = 0; i < 2; i++) {
		const struct metrics_port *p = metrics_totals_port(&x->t, (uint16_t)(5001 + i));

		assert_non_null(p);
		assert_int_equal(p->pkts_in, sums[i][0]);
		assert_int_equal(p->pkts_out, sums[i][1]);
		assert_true(p->counted_s > counted[i] - 1e-6 && p->counted_s < counted[i] + 1e-6);
		assert_int_equal(all_drops(p), sums[i][2]);
		assert_int_equal(drops_of(p, METRICS_REASON_UNKNOWN), sums[i][3]);
		assert_int_equal(drops_of(p, "SOCKET_RCVBUFF"), rcvbuf[i]);
	}
	assert_int_equal(x->t.nprogs, 1);
	assert_int_equal(x->t.progs[0].runs, runs);
	assert_int_equal(x->t.progs[0].run_ns, run_ns);
	assert_null(metrics_totals_port(&x->t, 5003));
}

/* More reasons than the table holds: the rest under OTHER, nothing lost. */
static void test_reasons_overflow(void **state)
{
	struct fixture *x = *state;
	struct rxb_sock_meas *s = &x->e->socks[0];
	const struct metrics_port *p;
	uint64_t total = 0;

	add_flow(x->f, 6000, 1);
	x->e->nsocks = 1;
	for (int seq = 1; seq <= 10; seq++) {
		memset(s, 0, sizeof(*s));
		s->port = 6000;
		s->drops_valid = s->reasons_valid = true;
		s->nreasons = 8;
		for (int i = 0; i < 8; i++) {
			snprintf(s->drop_reasons[i].reason, RXB_REASON_LEN, "R%d", seq * 8 + i);
			s->drop_reasons[i].count = 10;
			s->drops += 10;
		}
		total += s->drops;
		x->e->seq = (uint64_t)seq;
		metrics_totals_epoch(&x->t, x->f, x->e);
	}
	p = metrics_totals_port(&x->t, 6000);
	assert_non_null(p);
	assert_int_equal(p->nreasons, METRICS_TOTALS_REASONS);
	assert_int_equal(all_drops(p), total);
	assert_int_equal(drops_of(p, METRICS_REASON_OTHER), total - 10 * (METRICS_TOTALS_REASONS - 1));
}

static void test_reports_across_flow_lives(void **state)
{
	struct fixture *x = *state;

	add_flow(x->f, 7000, 100);
	x->f->v[0].reports = 3;
	x->e->seq = 1;
	metrics_totals_epoch(&x->t, x->f, x->e);
	x->f->v[0].reports = 5;
	x->e->seq = 2;
	metrics_totals_epoch(&x->t, x->f, x->e);
	/* The flow went away and came back: its own count starts at 0. */
	x->f->v[0].created_ns = 200;
	x->f->v[0].reports = 1;
	x->e->seq = 3;
	metrics_totals_epoch(&x->t, x->f, x->e);
	assert_int_equal(metrics_totals_port(&x->t, 7000)->reports, 6);
}

static void test_eviction_keeps_live_flows(void **state)
{
	struct fixture *x = *state;

	x->e->nsocks = 0;
	/* 100 ports pass, two at a time; 5001 stays throughout. */
	for (int i = 0; i < 100; i++) {
		x->f->n = 0;
		add_flow(x->f, 5001, 1);
		add_flow(x->f, (uint16_t)(20000 + i), 1);
		x->f->v[0].reports = (uint64_t)i + 1;
		x->e->seq = (uint64_t)i + 1;
		metrics_totals_epoch(&x->t, x->f, x->e);
		assert_non_null(metrics_totals_port(&x->t, (uint16_t)(20000 + i)));
	}
	assert_int_equal(metrics_totals_port(&x->t, 5001)->reports, 100);
	/* The newest gone ports are still there, the oldest were evicted. */
	assert_non_null(metrics_totals_port(&x->t, 20098));
	assert_null(metrics_totals_port(&x->t, 20000));
}

static void test_solve_histogram(void **state)
{
	struct fixture *x = *state;

	metrics_totals_solved(&x->t, 0.003);
	metrics_totals_solved(&x->t, 0.0001);	/* on a bound: in that bucket */
	metrics_totals_solved(&x->t, 100);	/* above every bound */
	assert_int_equal(x->t.solve_s.total, 3);
	assert_int_equal(x->t.solve_s.count[0], 1);
	assert_int_equal(x->t.solve_s.count[5], 1);	/* (0.0025, 0.005] */
	assert_int_equal(x->t.solve_s.count[metrics_totals_nsolve_bounds], 1);
}

UNIT_TEST_MAIN(
	cmocka_unit_test_setup_teardown(test_sums_over_random_epochs, setup, teardown),
	cmocka_unit_test_setup_teardown(test_reasons_overflow, setup, teardown),
	cmocka_unit_test_setup_teardown(test_reports_across_flow_lives, setup, teardown),
	cmocka_unit_test_setup_teardown(test_eviction_keeps_live_flows, setup, teardown),
	cmocka_unit_test_setup_teardown(test_solve_histogram, setup, teardown),
)
