// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/model/flows, the per-epoch pipeline: what RATE it
 * publishes before traffic, with traffic, after a failed solve, for new
 * senders, and whether the published numbers are right - checked against
 * the M/M/1/K closed form and RBUDP eq. (2)-(3) recomputed here, for a
 * single-stage flow with one packet per wake-up (so the model is M/M/1/K
 * with mu = mu_P-Net / (#C + 1)).
 */
#include <errno.h>
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
#include "daemon/model/prior.h"

#define PORT		9000
#define PAYLOAD		1468.0
#define NS_PER_PKT	10000.0		/* mu_P-Net = 100 000 /s */
#define K_PKTS		92		/* 212992 / 2304 */

struct pub {
	int n;
	struct rxbneck_rate last;
	bool has_between;
	struct rxbneck_rate between;
	int history_puts;
	uint16_t history_port;
	bool have_history;
	struct learn history;
};

static int publish(void *ctx, const struct rxbneck_rate *r,
		   const struct rxbneck_rate *between)
{
	struct pub *p = ctx;

	p->n++;
	p->last = *r;
	p->has_between = between != NULL;
	if (between)
		p->between = *between;
	return 1;
}

static bool hist_get(void *ctx, uint16_t port, struct learn *out)
{
	struct pub *p = ctx;

	if (!p->have_history || port != p->history_port)
		return false;
	*out = p->history;
	return true;
}

static void hist_put(void *ctx, uint16_t port, const struct learn *l)
{
	struct pub *p = ctx;

	(void)l;
	p->history_puts++;
	p->history_port = port;
}

static void params(struct flows_params *p)
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
}

static void setup(struct flows *f, struct pub *pub)
{
	struct flows_params p;
	struct flows_ops ops = {
		.ctx = pub,
		.publish_rate = publish,
		.history_get = hist_get,
		.history_put = hist_put,
	};
	uint16_t port = PORT;

	params(&p);
	assert_int_equal(flows_init(f, &p, &ops), 0);
	assert_int_equal(flows_set_config_ports(f, &port, 1), 0);
}

static struct rxb_epoch *epoch(uint64_t seq, double cpu_bound, uint64_t pkts)
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
	s = &e->socks[e->nsocks++];
	s->port = PORT;
	s->counts_valid = true;
	s->pkts_in = s->pkts_enqueued = s->pkts_out = pkts;
	s->receiver_oncpu_ns = (uint64_t)(NS_PER_PKT * (double)pkts);
	s->cpu_ns_per_pkt = NS_PER_PKT;
	s->recv_wakeups = pkts;		/* one packet per wake-up: N = 1 */
	s->pkts_per_wakeup = 1;
	s->rcvbuf_bytes = 212992;
	s->truesize_per_pkt_bytes = 2304;
	s->ncpus_ran = 1;
	s->ran_on[0].cpu = 1;
	s->ran_on[0].oncpu_ns = s->receiver_oncpu_ns;
	return e;
}

/* M/M/1/K blocking probability, computed in long double. */
static double mm1k_loss(double lambda, double mu, int k)
{
	long double rho = (long double)lambda / mu;

	return (double)((1 - rho) * powl(rho, k) / (1 - powl(rho, k + 1)));
}

/* RBUDP eq. (2)-(3), B in bits/s. */
static double rbudp_t(double b_bps, double loss, double file, double payload, double tprop)
{
	double b = b_bps / 8, n = loss > 0 ? log(payload / file) / log(loss) : 0;
	double t = tprop + file / b, resend = 0;

	for (int i = 1; i <= (int)ceil(n); i++)
		resend += file * pow(loss, i) / b;
	return t + n * tprop + resend + (n + 1) * (file / (8 * payload * b) + tprop);
}

static double model_t(double b_bps, double mu)
{
	return rbudp_t(b_bps, mm1k_loss(b_bps / (8 * PAYLOAD), mu, K_PKTS), 1e9, PAYLOAD, 1e-3);
}

static void check_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fabs(want))) {
		print_error("got %.17g, want %.17g (rel. tol %g)\n", got, want, tol);
		fail();
	}
}

/* Before any traffic: a provisional RATE that says it is one. */
static void test_provisional(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 0);

	(void)state;
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.n, 1);
	assert_int_equal(pub.last.port, PORT);
	assert_int_equal(pub.last.rate_bps, 10000000000ULL);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC);
	assert_int_equal(pub.last.confidence, 0);
	assert_true(pub.last.loss == 0);
	assert_int_equal(pub.last.xfer_time_us, 0);
	assert_int_equal(pub.last.epoch, 1);
	assert_int_equal(f.v[0].state, FLOW_PROVISIONAL);
	/* Degraded measurement is said too. */
	e->seq = 2;
	e->degraded = RXB_DEGRADED_NO_BPF;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_DEGRADED);
	flows_finish(&f);
	free(e);
}

/*
 * With traffic: the published rate minimises T, and its loss and time are
 * the M/M/1/K and eq. (2)-(3) values at that rate, with mu = mu_P-Net /
 * (#C + 1) for #C = 0 and 2.
 */
static void test_model_rate(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	double rate0, rate2;

	(void)state;
	setup(&f, &pub);
	for (int c = 0; c <= 2; c += 2) {
		struct rxb_epoch *e = epoch(1 + (uint64_t)c, c, 20000);
		const struct flow *fl;
		double mu = 1e9 / NS_PER_PKT / (c + 1), rate, t;

		flows_epoch(&f, e, 1000);
		fl = &f.v[0];
		assert_int_equal(fl->state, FLOW_MODEL);
		assert_int_equal(fl->inputs.nstages, 1);
		rate = fl->good.res.rate_bps;
		assert_int_equal(pub.last.rate_bps, llround(rate));
		assert_int_equal(pub.last.flags, 0);
		assert_int_equal(pub.last.epoch, e->seq);
		assert_int_equal(pub.last.confidence, 900);	/* no stage A */
		check_rel(pub.last.loss, mm1k_loss(rate / (8 * PAYLOAD), mu, K_PKTS), 1e-9);
		t = model_t(rate, mu);
		check_rel((double)pub.last.xfer_time_us, t * 1e6, 1e-6);
		/* A minimum: 1 % either side is slower. */
		assert_true(model_t(rate * 1.01, mu) > t);
		assert_true(model_t(rate * 0.99, mu) > t);
		if (c == 0)
			rate0 = rate;
		else
			rate2 = rate;
		free(e);
	}
	/* Two CPU hogs on the receiver's CPU: a third of the service rate. */
	assert_true(rate2 < rate0 * 0.5);
	flows_finish(&f);
}

/* A cheap receiver: the host is not the bottleneck, the line is. */
static void test_unconstrained(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 20000);

	(void)state;
	setup(&f, &pub);
	e->socks[0].receiver_oncpu_ns = 20000 * 10;	/* 10 ns/pkt */
	e->socks[0].ran_on[0].oncpu_ns = 20000 * 10;
	e->socks[0].cpu_ns_per_pkt = 10;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.rate_bps, 10000000000ULL);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_UNCONSTRAINED);
	flows_finish(&f);
	free(e);
}

/* A failed solve keeps the last good estimate, flagged STALE. */
static void test_stale(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 1, 20000);
	struct rxbneck_rate good;

	(void)state;
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	good = pub.last;
	assert_int_equal(good.flags, 0);
	/* More tasks than the tagged-customer net takes: the solve fails. */
	e->seq = 2;
	e->cpus[1].cpu_bound = 5000;
	flows_epoch(&f, e, 1000);
	assert_int_equal(f.v[0].state, FLOW_STALE);
	assert_true(f.v[0].solve_err < 0);
	assert_true(f.v[0].solve_why[0] != '\0');
	assert_int_equal(pub.last.flags, RXBNECK_RATE_STALE);
	assert_int_equal(pub.last.rate_bps, good.rate_bps);
	assert_int_equal(pub.last.epoch, 1);	/* the epoch it was computed in */
	assert_true(pub.last.loss == good.loss);
	/* It recovers. */
	e->seq = 3;
	e->cpus[1].cpu_bound = 1;
	flows_epoch(&f, e, 1000);
	assert_int_equal(f.v[0].state, FLOW_MODEL);
	assert_int_equal(f.v[0].solve_err, 0);
	assert_int_equal(pub.last.flags, 0);
	assert_int_equal(pub.last.epoch, 3);
	flows_finish(&f);
	free(e);
}

static struct sendsrv_peer peer(uint64_t id, uint16_t port)
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

/* A sender's HELLO sets the transfer and gets a rate at once. */
static void test_sender_hello(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 20000);
	struct sendsrv_peer p = peer(1, PORT);
	const struct flow *fl;
	int before;

	(void)state;
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	before = pub.n;
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(pub.n, before + 1);
	fl = flows_find(&f, PORT);
	assert_non_null(fl);
	assert_int_equal(fl->nsenders, 1);
	assert_true(fl->xfer.from_sender);
	check_rel(fl->xfer.payload_bytes, 8192, 0);
	check_rel(fl->xfer.file_bytes, 5e8, 0);
	check_rel(fl->xfer.one_way_delay_s, 2e-3, 1e-15);
	check_rel(fl->xfer.line_rate_bps, 2e9, 0);	/* the sender's ceiling */
	check_rel(fl->good.xfer.payload_bytes, 8192, 0);
	assert_true(pub.last.rate_bps <= 2000000000ULL);
	/* A second sender of the same port: the newest sets the transfer. */
	p = peer(2, PORT);
	p.hello.payload_bytes = 1000;
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	check_rel(fl->xfer.payload_bytes, 1000, 0);
	flows_sender_gone(&f, &p);
	assert_int_equal(fl->nsenders, 1);
	flows_finish(&f);
	free(e);
}

/* History for port 9100: @ns per packet, one per wake-up, K = 92, on CPU 1. */
static void set_history(struct pub *pub, double ns)
{
	learn_init(&pub->history);
	pub->history.origin = VALUE_HISTORY;
	pub->history.cpu_ns_per_pkt = (struct ewma_ratio){ 64 * ns, 64, true };
	pub->history.pkts_per_wakeup = (struct ewma_ratio){ 1, 1, true };
	pub->history.truesize_per_pkt = (struct ewma_ratio){ 64 * 2304.0, 64, true };
	pub->history.rcvbuf_bytes = 212992;
	pub->history.ncpus = 1;
	pub->history.cpu[0] = 1;
	pub->history.cpu_share[0] = 1;
	pub->history_port = 9100;
	pub->have_history = true;
}

/* Flows come and go with senders; at most FLOWS_MAX; history both ways. */
static void test_ports_and_history(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 1, 0);
	struct sendsrv_peer p = peer(1, 9100);
	uint16_t ports[FLOWS_MAX];
	const struct flow *fl;
	int n;

	(void)state;
	setup(&f, &pub);
	/* History for port 9100: the model runs before its first packet. */
	set_history(&pub, NS_PER_PKT);
	p.hello.payload_bytes = 1468;	/* 50 000 pkt/s: the host limits */
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	fl = flows_find(&f, 9100);
	assert_non_null(fl);
	assert_int_equal(fl->state, FLOW_MODEL);
	assert_int_equal(pub.last.port, 9100);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL);
	assert_int_equal(pub.last.confidence, 360);
	n = flows_ports(&f, ports);
	assert_int_equal(n, 2);
	/* The sender leaves: the unconfigured flow goes, its costs are kept. */
	flows_sender_gone(&f, &p);
	assert_null(flows_find(&f, 9100));
	assert_true(f.ports_changed);
	assert_int_equal(flows_ports(&f, ports), 1);
	assert_int_equal(pub.history_puts, 1);
	/* Fill up: configured ports plus senders' ports, FLOWS_MAX at most. */
	for (int i = 0; i < FLOWS_MAX; i++)
		ports[i] = (uint16_t)(10000 + i);
	assert_int_equal(flows_set_config_ports(&f, ports, FLOWS_MAX), 0);
	assert_null(flows_find(&f, PORT));	/* no longer configured */
	p = peer(3, 20000);
	assert_int_equal(flows_sender_hello(&f, &p), -ENOSPC);
	/* Configured ports cannot push out a sender's flow. */
	assert_int_equal(flows_set_config_ports(&f, ports, 1), 0);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(flows_set_config_ports(&f, ports, FLOWS_MAX), -ENOSPC);
	assert_int_equal(f.n, 2);
	flows_finish(&f);
	free(e);
}

/* prior.h's defaults, placed on CPU 1 with a 212992-byte buffer. */
static void prior_defaults(void *ctx, uint16_t port, double payload_bytes, struct learn *l)
{
	(void)ctx;
	(void)port;
	if (l->origin == VALUE_MISSING)
		prior_default(l, payload_bytes);
	prior_place(l, 1, 212992);
}

/*
 * Before any traffic and without history: a modelled rate from the
 * defaults, flagged PROVISIONAL and DEFAULT_COST with confidence 90
 * (0.1, and 0.9 for stage A left out), and the same rate as a flow whose
 * history holds exactly those costs (the second method).
 */
static void test_prior_default(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 1, 0);
	struct sendsrv_peer p = peer(1, 9100);
	double ns = PRIOR_NS_PER_PKT + PRIOR_NS_PER_BYTE * 1468;
	uint64_t rate;

	(void)state;
	setup(&f, &pub);
	f.ops.prior = prior_defaults;
	p.hello.payload_bytes = 1468;
	p.hello.max_rate_bps = 0;	/* up to the 10 Gb/s line rate: the host limits */
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(flows_find(&f, 9100)->state, FLOW_MODEL);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL |
			 RXBNECK_RATE_DEFAULT_COST);
	assert_int_equal(pub.last.confidence, 90);
	assert_true(pub.last.rate_bps > 0 && pub.last.rate_bps < 10000000000ULL);
	rate = pub.last.rate_bps;
	flows_sender_gone(&f, &p);
	flows_finish(&f);

	/* The same costs as this port's history. */
	memset(&pub, 0, sizeof(pub));
	setup(&f, &pub);
	set_history(&pub, ns);
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL);
	assert_int_equal(pub.last.confidence, 360);
	assert_int_equal(pub.last.rate_bps, rate);
	flows_finish(&f);

	/* No placement known (no socket, no history): the line rate, confidence 0. */
	memset(&pub, 0, sizeof(pub));
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(flows_find(&f, 9100)->state, FLOW_PROVISIONAL);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC);
	assert_int_equal(pub.last.confidence, 0);
	assert_int_equal(pub.last.rate_bps, 10000000000ULL);
	flows_finish(&f);
	free(e);
}

/* New [model] parameters apply to the next solve; senders' values stay. */
static void test_set_params(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct flows_params p;
	struct sendsrv_peer s = peer(1, PORT);

	(void)state;
	setup(&f, &pub);
	assert_int_equal(flows_sender_hello(&f, &s), 0);
	params(&p);
	p.line_rate_bps = 1e9;
	p.sweep_points = 2000;	/* a larger workspace */
	assert_int_equal(flows_set_params(&f, &p), 0);
	check_rel(f.v[0].xfer.line_rate_bps, 1e9, 0);	/* below the sender's 2e9 */
	check_rel(f.v[0].xfer.payload_bytes, 8192, 0);	/* the sender's */
	assert_true(f.ws.cap >= 2000);
	p.min_rate_bps = 0;
	assert_int_equal(flows_set_params(&f, &p), -EINVAL);
	flows_finish(&f);
}

/* ------------------------------------------------------------- pause -- */

struct pause_pub {
	int n;
	struct rxbneck_pause last;
};

static int publish_pause(void *ctx, const struct rxbneck_pause *p)
{
	struct pause_pub *pp = ctx;

	pp->n++;
	pp->last = *p;
	return 1;
}

static int publish_rate_quiet(void *ctx, const struct rxbneck_rate *r,
			      const struct rxbneck_rate *between)
{
	(void)ctx;
	(void)r;
	(void)between;
	return 0;
}

/* @n preemptions of @tid on CPU 1, a 4 ms run then @off_ns off each,
 * the last ending @ago_ns before now. */
static void add_preempts(struct rxb_rx_preempt *v, size_t *nv, uint32_t tid, int n,
			 uint64_t off_ns, uint64_t ago_ns)
{
	uint64_t cycle = 4000000 + off_ns, t = rxb_mono_ns() - ago_ns - (uint64_t)n * cycle;

	for (int i = 0; i < n; i++) {
		struct rxb_rx_preempt *ev = &v[(*nv)++];

		memset(ev, 0, sizeof(*ev));
		ev->tid = tid;
		ev->cpu = 1;
		ev->flags = RXB_RX_PREEMPT_EEVDF;
		ev->run_start_ns = t;
		ev->out_ns = t + 4000000;
		ev->in_ns = ev->out_ns + off_ns;
		ev->slice_ns = ev->next_slice_ns = 1400000;
		t = ev->in_ns;
	}
}

/*
 * flow_epoch() feeds the flow's own receiver's preemptions (the socket's
 * tids) to the predictor and publishes its schedule, then a CANCEL.
 */
static void test_pause_published(void **state)
{
	struct flows *f = malloc(sizeof(*f));
	struct pause_pub pp = { 0 };
	struct flows_params p;
	struct flows_ops ops = {
		.ctx = &pp,
		.publish_rate = publish_rate_quiet,
		.publish_pause = publish_pause,
	};
	struct rxb_rx_preempt *v = calloc(64, sizeof(*v));
	struct rxb_epoch *e1 = epoch(1, 2, 1000), *e2 = epoch(2, 2, 1000);
	uint16_t port = PORT;
	struct sendsrv_peer sp;
	size_t nv = 0;
	struct flow *fl;

	(void)state;
	assert_non_null(f);
	assert_non_null(v);
	params(&p);
	p.pause.enabled = true;
	p.pause.min_window_ns = 200000;
	p.pause.max_window_ns = 100000000;
	p.pause.ncpus = 2;
	assert_int_equal(flows_init(f, &p, &ops), 0);
	assert_int_equal(flows_set_config_ports(f, &port, 1), 0);
	e1->socks[0].ntids = 1;
	e1->socks[0].tids[0] = 77;
	e1->cpus[1].cpu_bound_run_ns = 4e6;
	e1->cpus[1].cpu_bound_slice_ns = 1.4e6;
	/* The flow's receiver (2 hogs: 8 ms off) and another thread's. */
	add_preempts(v, &nv, 77, 30, 8000000, 10000000);
	add_preempts(v, &nv, 78, 30, 1000000, 10000000);
	e1->rx_preempts = v;
	e1->nrx_preempts = nv;

	flows_epoch(f, e1, 1000);
	fl = flows_find(f, PORT);
	assert_non_null(fl);
	assert_int_equal(fl->pause.preemptions, 30);
	assert_int_equal(fl->pause.pred.d_ns, 8000000);
	assert_int_equal(pp.n, 1);
	assert_int_equal(pp.last.port, PORT);
	assert_int_equal(pp.last.flags, 0);
	/*
	 * The socket queue (K = 212992 / 2304 = 92 packets) takes the first
	 * 92 x payload / rate of the 8 ms window: only the rest is paused,
	 * starting that much into the window.
	 */
	assert_true(fl->has_rate && fl->rate.rate_bps > 0);
	/*
	 * The windows are stage B's vacations: a sender that pauses through
	 * them gets its own rate (PROTOCOL.md §6.3), at least the plain one,
	 * and the queue absorbs at that rate.
	 */
	assert_true(fl->has_rate_between);
	assert_int_equal(fl->rate_between.flags, RXBNECK_RATE_BETWEEN_PAUSES);
	assert_true(fl->rate_between.rate_bps >= fl->rate.rate_bps * (1 - 1e-6));
	assert_true(fl->good.has_between && fl->good.between.pause_fraction > 0);
	assert_true(fl->rate_between.loss <= fl->rate.loss);
	{
		double absorb_us = 92.0 * PAYLOAD * 8 / (double)fl->rate_between.rate_bps * 1e6;

		assert_true(absorb_us > 0 && absorb_us < 8000);
		assert_true(fabs((double)pp.last.duration_us - (8000 - absorb_us)) <= 1.0);
		assert_true(pp.last.start_in_us < 12000 + absorb_us);
	}
	assert_int_equal(pp.last.period_us, 12000);
	assert_int_equal(fl->pause.published, 1);
	assert_int_equal(fl->pause.last_sent, 1);
	/*
	 * The receivers' preemptions are followed within the epoch only for
	 * a flow with senders: with a schedule out once per its period
	 * (12 ms, + 1 so that each read finds the last turn), else at the
	 * daemon's pace.
	 */
	assert_int_equal(flows_rx_early_ns(f, 10000000), 0);
	sp = peer(1, PORT);
	assert_int_equal(flows_sender_hello(f, &sp), 0);
	assert_int_equal(flows_rx_early_ns(f, 10000000), 13000000);
	assert_int_equal(flows_rx_early_ns(f, 20000000), 20000000);

	/* The windows stop: CANCEL, once. */
	flows_epoch(f, e2, 1000);
	assert_int_equal(pp.n, 2);
	assert_int_equal(pp.last.flags, RXBNECK_PAUSE_CANCEL);
	assert_int_equal(flows_rx_early_ns(f, 10000000), 10000000);
	e2->seq = 3;
	flows_epoch(f, e2, 1000);
	assert_int_equal(pp.n, 2);

	/* Disabled by a reload: the windows are measured, nothing is sent. */
	p.pause.enabled = false;
	assert_int_equal(flows_set_params(f, &p), 0);
	e1->seq = 4;
	flows_epoch(f, e1, 1000);
	assert_int_equal(fl->pause.preemptions, 60);
	assert_int_equal(pp.n, 2);
	assert_int_equal(flows_rx_early_ns(f, 10000000), 0);
	flows_finish(f);
	free(e1);
	free(e2);
	free(v);
	free(f);
}

/* One epoch of the standard traffic at @cpu_bound and @ns_per_pkt. */
static void feed(struct flows *f, uint64_t seq, double cpu_bound, double ns_per_pkt)
{
	struct rxb_epoch *e = epoch(seq, cpu_bound, 20000);

	e->socks[0].receiver_oncpu_ns = (uint64_t)(ns_per_pkt * 20000);
	e->socks[0].ran_on[0].oncpu_ns = e->socks[0].receiver_oncpu_ns;
	e->socks[0].cpu_ns_per_pkt = ns_per_pkt;
	flows_epoch(f, e, 1000);
	free(e);
}

/*
 * solve_due(): unchanged inputs keep the last solve (published as this
 * epoch's value), a load change is solved at once, a moved cost once the
 * solver's CPU share allows, and nothing waits longer than 10 s.
 */
static void test_solve_reuse(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	const struct flow *fl;
	uint64_t rate1, seq;

	(void)state;
	setup(&f, &pub);
	fl = &f.v[0];
	feed(&f, 1, 0, NS_PER_PKT);
	assert_int_equal(fl->solves, 1);
	rate1 = pub.last.rate_bps;
	/* The same traffic: no solve for 10 s of epochs (epoch s ends at
	 * s + 1 s), the same rate published as each epoch's value. */
	for (seq = 2; seq <= 10; seq++) {
		feed(&f, seq, 0, NS_PER_PKT);
		assert_int_equal(fl->solves, 1);
		assert_int_equal(fl->state, FLOW_MODEL);
		assert_int_equal(pub.last.epoch, seq);
		assert_int_equal(pub.last.rate_bps, rate1);
	}
	assert_int_equal(fl->solves_reused, 9);
	/* 10 s after the last solve: refreshed. */
	feed(&f, 11, 0, NS_PER_PKT);
	assert_int_equal(fl->solves, 2);
	/* A CPU hog arrives: solved at once, and the rate falls. */
	feed(&f, 12, 1, NS_PER_PKT);
	assert_int_equal(fl->solves, 3);
	assert_true(pub.last.rate_bps < rate1 * 0.7);
	/* The cost per packet moves: solved when the CPU share allows. The
	 * last solve "took" 100 ms: the next may come 2 s after it. */
	((struct flow *)fl)->good.solve_ms = 100;
	feed(&f, 13, 1, NS_PER_PKT * 1.5);
	assert_int_equal(fl->solves, 3);
	assert_int_equal(fl->solves_reused, 10);
	feed(&f, 14, 1, NS_PER_PKT * 1.5);
	assert_int_equal(fl->solves, 4);
	assert_int_equal(fl->good.epoch, 14);
	flows_finish(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provisional),
		cmocka_unit_test(test_model_rate),
		cmocka_unit_test(test_unconstrained),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_sender_hello),
		cmocka_unit_test(test_ports_and_history),
		cmocka_unit_test(test_prior_default),
		cmocka_unit_test(test_set_params),
		cmocka_unit_test(test_pause_published),
		cmocka_unit_test(test_solve_reuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
