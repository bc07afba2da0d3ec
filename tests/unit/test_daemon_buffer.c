// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon_buffer_flow_of(): a flow's solved model as the model policy
 * takes it. The socket stage's windows for a receiver that sleeps
 * (k CPU-bound tasks' tick-bounded turns), the predictor's windows kept
 * when it has some, the arrival rate in the model's payload, the
 * published rate only with senders.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/daemon_buffer.h"
#include "tests/unit/unit_main.h"

static struct flow *solved_flow(void)
{
	struct flow *fl = calloc(1, sizeof(*fl));

	assert_non_null(fl);
	fl->port = 9000;
	fl->nmodels = 1;
	fl->m[0].have_good = true;
	fl->m[0].good.at_ns = 77;
	fl->m[0].good.nstages = 2;
	fl->m[0].good.inputs[1] = (struct rxb_stage_inputs){ .cpu_bound = 2, .queue_pkts = 63,
							 .batch_pkts = 2, .mu_net_per_s = 4e4 };
	fl->m[0].good.xfer.payload_bytes = 8192;
	fl->m[0].good.xfer.file_bytes = 1e9;
	fl->m[0].good.xfer.line_rate_bps = 1e10;
	fl->m[0].good.xfer.min_rate_bps = 1e7;
	fl->inputs.b.ncpus = 2;
	fl->inputs.b.cpu[0] = 0;
	fl->inputs.b.cpu_share[0] = 0.1;
	fl->inputs.b.cpu[1] = 1;
	fl->inputs.b.cpu_share[1] = 0.9;
	fl->m[0].has_rate = true;
	fl->m[0].rate.rate_bps = 2000000000;
	return fl;
}

static struct rxb_epoch *epoch(void)
{
	struct rxb_epoch *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->start_ns = 1000000000;
	e->end_ns = 1250000000;
	e->ncpus = 2;
	e->cpus[0] = (struct rxb_cpu_meas){ .cpu = 0, .cpu_bound_slice_ns = NAN,
					    .cpu_bound_run_ns = NAN };
	/* 1.4 ms slices, cut short to 0.3 ms on average by the receiver */
	e->cpus[1] = (struct rxb_cpu_meas){ .cpu = 1, .cpu_bound = 2,
					    .cpu_bound_slice_ns = 1.4e6,
					    .cpu_bound_run_ns = 0.3e6 };
	return e;
}

static void test_sleeper_windows(void **state)
{
	struct flow *fl = solved_flow();
	struct rxb_epoch *e = epoch();
	struct buffer_flow bf;

	(void)state;
	/* HZ 250: a 1.4 ms slice lasts up to 5.4 ms; two of them */
	daemon_buffer_flow_of(fl, e, 4e6, &bf);
	assert_true(bf.have_model);
	assert_int_equal(bf.solved_ns, 77);
	assert_int_equal(bf.nstages, 2);
	assert_true(fabs(bf.stages[1].vacation_s - 10.8e-3) < 1e-12);
	assert_true(fabs(bf.stages[1].vacation_period_s - 16.2e-3) < 1e-12);
	assert_int_equal(bf.xfer.points, 2);
	/* the flow's own model is not touched */
	assert_true(fl->m[0].good.inputs[1].vacation_s == 0);
	/* tick unknown: the slice itself, or the run if it is longer */
	daemon_buffer_flow_of(fl, e, 0, &bf);
	assert_true(fabs(bf.stages[1].vacation_s - 2.8e-3) < 1e-12);
	e->cpus[1].cpu_bound_run_ns = 3.9e6;
	daemon_buffer_flow_of(fl, e, 0, &bf);
	assert_true(fabs(bf.stages[1].vacation_s - 7.8e-3) < 1e-12);
	/* no CPU-bound task: no windows */
	fl->m[0].good.inputs[1].cpu_bound = 0.2;
	daemon_buffer_flow_of(fl, e, 4e6, &bf);
	assert_true(bf.stages[1].vacation_s == 0);
	/* the predictor's windows stay as they are */
	fl->m[0].good.inputs[1].cpu_bound = 2;
	fl->m[0].good.inputs[1].vacation_s = 5e-3;
	fl->m[0].good.inputs[1].vacation_period_s = 7e-3;
	daemon_buffer_flow_of(fl, e, 4e6, &bf);
	assert_true(bf.stages[1].vacation_s == 5e-3 && bf.stages[1].vacation_period_s == 7e-3);
	free(fl);
	free(e);
}

static void test_rates(void **state)
{
	struct flow *fl = solved_flow();
	struct rxb_epoch *e = epoch();
	struct buffer_flow bf;

	(void)state;
	/* 1000 packets in the 250 ms epoch: 4000/s x 8192 B x 8 */
	fl->inputs.traffic.counts_valid = true;
	fl->inputs.traffic.pkts_in = 1000;
	daemon_buffer_flow_of(fl, e, 4e6, &bf);
	assert_true(fabs(bf.arrival_bps - 4000.0 * 8192 * 8) < 1e-3);
	/* RATE counts only while senders will follow it */
	assert_true(bf.published_bps == 0);
	fl->nsenders = 1;
	daemon_buffer_flow_of(fl, e, 4e6, &bf);
	assert_true(bf.published_bps == 2e9);
	/* no solve yet: no model */
	fl->m[0].have_good = false;
	daemon_buffer_flow_of(fl, e, 4e6, &bf);
	assert_false(bf.have_model);
	assert_int_equal(bf.port, 9000);
	free(fl);
	free(e);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_sleeper_windows),
	cmocka_unit_test(test_rates),
)
