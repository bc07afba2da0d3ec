/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by daemon/model/flows' tests (test_flows.c, test_flows_due.c,
 * test_flows_pause.c): the [model] parameters they run with, an epoch of one flow whose
 * receiver takes NS_PER_PKT per packet, one packet per wake-up, on CPU 1
 * of two, a sender's HELLO, and (setup()) a flows of port PORT whose
 * publish and history hooks record into a struct pub.
 */
#ifndef RXB_TESTS_UNIT_FLOWS_FIXTURE_H
#define RXB_TESTS_UNIT_FLOWS_FIXTURE_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/model/flows.h"
#include "tests/unit/recv_fixture.h"

#define PORT		9000
#define PAYLOAD		1468.0
#define NS_PER_PKT	10000.0		/* mu_P-Net = 100 000 /s */
#define K_PKTS		92		/* 212992 / 2304 */

static inline void params(struct flows_params *p)
{
	memset(p, 0, sizeof(*p));
	p->payload_bytes = PAYLOAD;
	p->file_bytes = 1e9;
	p->one_way_delay_s = 1e-3;
	p->line_rate_bps = 10e9;
	p->min_rate_bps = 10e6;
	p->sweep_points = 400;
	p->rule = RXB_BATCH_PARTIAL;
	/* model_t() below is eq. (2)-(3): Banerjee et al.'s rounds. */
	p->rounds = BNECK_ROUNDS_SEED;
	p->fallback_rx_ring = 256;
	p->linger_ns = 30 * RXB_NSEC_PER_SEC;
}

static inline struct rxb_epoch *epoch(uint64_t seq, double cpu_bound, uint64_t pkts)
{
	struct rxb_epoch *e = calloc(1, sizeof(*e));
	struct rxb_sock_meas *s;

	assert_non_null(e);
	e->seq = seq;
	e->start_ns = seq * 1000000000ULL;
	e->end_ns = e->start_ns + 1000000000ULL;
	e->ncpus = 2;
	e->cpus[0].cpu = 0;
	e->cpus[1].cpu = 1;
	e->cpus[1].cpu_bound = cpu_bound;
	e->disk.mean_service_ns = NAN;
	e->disk.mean_cpu_burst_ns = NAN;
	if (!pkts)
		return e;
	s = recv_fixture_sock(e, PORT, pkts, NS_PER_PKT, pkts);	/* one per wake-up: N = 1 */
	assert_true(s->pkts_per_wakeup == 1);
	return e;
}

static inline struct sendsrv_peer peer(uint64_t id, uint16_t port)
{
	struct sendsrv_peer p;

	memset(&p, 0, sizeof(p));
	p.id = id;
	rxb_strlcpy(p.addr_str, "127.0.0.1:40000", sizeof(p.addr_str));
	p.hello.flow_port = port;
	p.hello.flow_proto = 17;
	p.hello.subscribe = RXBNECK_SUB_RATE;
	p.hello.payload_bytes = 8192;
	p.hello.rtt_us = 4000;
	p.hello.file_bytes = 500000000;
	p.hello.max_rate_bps = 2000000000;
	return p;
}


struct pub {
	struct flows *f;
	int n;
	struct rxbneck_rate last;
	bool has_between;
	struct rxbneck_rate between;
	int history_puts;
	uint16_t history_port;
	bool have_history;
	struct learn history;
};

/* ops.publish_rates: the flow's (first) model's rates, as a sender of
 * the [model] defaults' transfer would get them. */
static inline int publish(void *ctx, uint16_t port)
{
	struct pub *p = ctx;
	const struct flow *fl = flows_find(p->f, port);

	if (!fl || !fl->m[0].has_rate)
		return 0;
	p->n++;
	p->last = fl->m[0].rate;
	p->has_between = fl->m[0].has_rate_between;
	p->between = fl->m[0].rate_between;
	return 1;
}

static inline bool hist_get(void *ctx, uint16_t port, struct learn *out)
{
	struct pub *p = ctx;

	if (!p->have_history || port != p->history_port)
		return false;
	*out = p->history;
	return true;
}

static inline void hist_put(void *ctx, uint16_t port, const struct learn *l)
{
	struct pub *p = ctx;

	(void)l;
	p->history_puts++;
	p->history_port = port;
}

static inline void setup(struct flows *f, struct pub *pub)
{
	struct flows_params p;
	struct flows_ops ops = {
		.ctx = pub,
		.publish_rates = publish,
		.history_get = hist_get,
		.history_put = hist_put,
	};
	uint16_t port = PORT;

	params(&p);
	pub->f = f;
	assert_int_equal(flows_init(f, &p, &ops), 0);
	assert_int_equal(flows_set_config_ports(f, &port, 1), 0);
}

#endif
