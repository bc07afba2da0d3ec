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
#include "tests/unit/check_rel.h"
#include "tests/unit/flows_fixture.h"
#include "tests/unit/unit_main.h"

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

/* RATE.xfer_time_us against @want_s: whole microseconds. */
static void check_us(uint64_t got_us, double want_s)
{
	if (!(fabs((double)got_us - want_s * 1e6) <= 1 + 1e-6 * want_s * 1e6)) {
		print_error("got %llu us, want %.17g s\n", (unsigned long long)got_us, want_s);
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
	assert_int_equal(f.v[0].m[0].state, FLOW_PROVISIONAL);
	/* Degraded measurement is said too. */
	e->seq = 2;
	e->degraded = RXB_DEGRADED_NO_BPF;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_DEGRADED);
	flows_finish(&f);
	free(e);
}

/*
 * Without BPF the receive path is not modelled, but packets seen arriving
 * in what /proc gives (drops, queued bytes, the namespace's UDP counters)
 * are traffic: the provisional rate is not flagged NO_TRAFFIC then.
 */
static void test_degraded_arrivals(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 0);

	(void)state;
	setup(&f, &pub);
	e->degraded = RXB_DEGRADED_NO_BPF;
	e->nsocks = 1;
	e->socks[0].port = PORT;
	e->socks[0].drops_valid = true;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_DEGRADED);
	e->seq = 2;
	e->socks[0].arrivals_seen = true;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_DEGRADED);
	assert_int_equal(f.v[0].m[0].state, FLOW_PROVISIONAL);
	/* Seen once, it stays seen. */
	e->seq = 3;
	e->socks[0].arrivals_seen = false;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.flags, RXBNECK_RATE_DEGRADED);
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
		assert_int_equal(fl->m[0].state, FLOW_MODEL);
		assert_int_equal(fl->inputs.nstages, 1);
		rate = fl->m[0].good.res.rate_bps;
		assert_int_equal(pub.last.rate_bps, llround(rate));
		assert_int_equal(pub.last.flags, 0);
		assert_int_equal(pub.last.epoch, e->seq);
		assert_int_equal(pub.last.confidence, 900);	/* no stage A */
		check_rel_strict(pub.last.loss, mm1k_loss(rate / (8 * PAYLOAD), mu, K_PKTS), 1e-9);
		t = model_t(rate, mu);
		check_rel_strict((double)pub.last.xfer_time_us, t * 1e6, 1e-6);
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
	/*
	 * The same costs, but 21.6 % of what reached the socket dropped: the
	 * top of the search may still be fastest, yet the host is a
	 * bottleneck - not UNCONSTRAINED (PROTOCOL.md §6.1).
	 */
	e->seq = 2;
	e->start_ns += 1000000000ULL;
	e->end_ns += 1000000000ULL;
	e->socks[0].drops = 4320;
	e->socks[0].pkts_in = 20000;
	e->socks[0].pkts_enqueued = e->socks[0].pkts_out = 20000 - 4320;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.epoch, 2);
	assert_false(pub.last.flags & RXBNECK_RATE_UNCONSTRAINED);
	/* 0.1 % dropped is within the rule. */
	e->seq = 3;
	e->start_ns += 1000000000ULL;
	e->end_ns += 1000000000ULL;
	e->socks[0].drops = 20;
	e->socks[0].pkts_enqueued = e->socks[0].pkts_out = 20000 - 20;
	flows_epoch(&f, e, 1000);
	assert_int_equal(pub.last.epoch, 3);
	assert_int_equal(pub.last.rate_bps, 10000000000ULL);
	assert_true(pub.last.flags & RXBNECK_RATE_UNCONSTRAINED);
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
	assert_int_equal(f.v[0].m[0].state, FLOW_STALE);
	assert_true(f.v[0].m[0].solve_err < 0);
	assert_true(f.v[0].m[0].solve_why[0] != '\0');
	assert_int_equal(pub.last.flags, RXBNECK_RATE_STALE);
	assert_int_equal(pub.last.rate_bps, good.rate_bps);
	assert_int_equal(pub.last.epoch, 1);	/* the epoch it was computed in */
	assert_true(pub.last.loss == good.loss);
	/* It recovers. */
	e->seq = 3;
	e->cpus[1].cpu_bound = 1;
	flows_epoch(&f, e, 1000);
	assert_int_equal(f.v[0].m[0].state, FLOW_MODEL);
	assert_int_equal(f.v[0].m[0].solve_err, 0);
	assert_int_equal(pub.last.flags, 0);
	assert_int_equal(pub.last.epoch, 3);
	flows_finish(&f);
	free(e);
}

/*
 * The transfer time eq. (2)-(3) gives a peer() sender (8192-byte
 * datagrams, 2 ms one way) of @file bytes at @b_bps, losing what an
 * M/M/1/K queue served at @mu loses.
 */
static double peer_t(double b_bps, double mu, double file)
{
	return rbudp_t(b_bps, mm1k_loss(b_bps / (8 * 8192), mu, K_PKTS), file, 8192, 2e-3);
}

/* What @p is told: 0, 1 or 2 rates (flows_rate_for()). */
static int told(const struct flows *f, const struct sendsrv_peer *p, struct rxbneck_rate *r)
{
	struct rxbneck_rate between;

	return flows_rate_for(f, p, r, &between);
}

/*
 * A sender's HELLO makes the model of its own transfer, solved at once;
 * its RATE and transfer time are those of eq. (2)-(3) for its payload and
 * file at the published rate, within its own ceiling.
 */
static void test_sender_hello(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 20000);
	struct sendsrv_peer p = peer(1, PORT);
	const struct flow *fl;
	const struct flow_model *m;
	struct rxbneck_rate r;
	double mu = 1e9 / NS_PER_PKT, loss;

	(void)state;
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	fl = flows_find(&f, PORT);
	assert_non_null(fl);
	assert_int_equal(fl->nsenders, 1);
	assert_int_equal(fl->nmodels, 1);	/* the defaults' made way */
	m = &fl->m[0];
	assert_int_equal(m->nsenders, 1);
	assert_true(m->xfer.from_sender);
	check_rel_strict(m->xfer.payload_bytes, 8192, 0);
	check_rel_strict(m->xfer.file_bytes, 5e8, 0);
	check_rel_strict(m->xfer.one_way_delay_s, 2e-3, 1e-15);
	check_rel_strict(m->xfer.line_rate_bps, 2e9, 0);	/* the sender's ceiling */
	check_rel_strict(m->good.xfer.payload_bytes, 8192, 0);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_true(r.rate_bps <= 2000000000ULL);
	loss = mm1k_loss((double)r.rate_bps / (8 * 8192), mu, K_PKTS);
	check_rel_strict(r.loss, loss, 1e-6);
	check_us(r.xfer_time_us, peer_t((double)r.rate_bps, mu, 5e8));
	/* It leaves and comes back: the same model, not solved again. */
	flows_sender_gone(&f, &p);
	assert_int_equal(fl->nmodels, 1);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(fl->m[0].solves, 1);
	flows_finish(&f);
	free(e);
}

/*
 * Two senders of one port are each told the answer for their own
 * transfer (a 1 MB file and a 100 GB one), and a third whose HELLO says
 * it can send 1 b/s changes neither (RATE = 1 b/s pushed to the others
 * was the attack): only its own search is capped.
 */
static void test_senders_own_answers(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 1, 20000);
	struct sendsrv_peer small = peer(1, PORT), big = peer(2, PORT), slow = peer(3, PORT);
	struct rxbneck_rate rs, rb, rs2, rb2, rslow;
	double mu = 1e9 / NS_PER_PKT / 2;

	(void)state;
	small.hello.file_bytes = 1000000;
	small.hello.max_rate_bps = 0;
	big.hello.file_bytes = 100000000000ULL;
	big.hello.max_rate_bps = 0;
	slow.hello.max_rate_bps = 1;
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &small), 0);
	assert_int_equal(flows_sender_hello(&f, &big), 0);
	assert_int_equal(told(&f, &small, &rs), 1);
	assert_int_equal(told(&f, &big, &rb), 1);
	/* Each T is eq. (2)-(3) for its own file at its own rate. */
	check_us(rs.xfer_time_us, peer_t((double)rs.rate_bps, mu, 1e6));
	check_us(rb.xfer_time_us, peer_t((double)rb.rate_bps, mu, 1e11));
	assert_true(rb.xfer_time_us > 1000 * rs.xfer_time_us);
	/* The slow one: its own ceiling, nobody else's. */
	assert_int_equal(flows_sender_hello(&f, &slow), 0);
	assert_int_equal(told(&f, &slow, &rslow), 1);
	assert_true(rslow.rate_bps <= 1);
	e->seq = 2;
	flows_epoch(&f, e, 1000);
	assert_int_equal(told(&f, &small, &rs2), 1);
	assert_int_equal(told(&f, &big, &rb2), 1);
	assert_int_equal(rs2.rate_bps, rs.rate_bps);
	assert_int_equal(rb2.rate_bps, rb.rate_bps);
	assert_int_equal(flows_find(&f, PORT)->nmodels, 3);
	/* Its model goes with it; the others stay. */
	flows_sender_gone(&f, &slow);
	assert_int_equal(flows_find(&f, PORT)->nmodels, 2);
	assert_int_equal(told(&f, &small, &rs2), 1);
	assert_int_equal(rs2.rate_bps, rs.rate_bps);
	flows_finish(&f);
	free(e);
}

/*
 * Beyond FLOW_MAX_XFERS distinct transfers a sender is answered from the
 * nearest model, without a transfer time, and changes nobody's; once a
 * place frees, it gets its own.
 */
static void test_transfers_over_cap(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 20000);
	struct sendsrv_peer v[FLOW_MAX_XFERS + 1];
	struct rxbneck_rate r, first;
	const struct flow *fl;

	(void)state;
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	for (int i = 0; i <= FLOW_MAX_XFERS; i++) {
		v[i] = peer((uint64_t)i + 1, PORT);
		v[i].hello.file_bytes = 1000000ULL << i;
		assert_int_equal(flows_sender_hello(&f, &v[i]), 0);
	}
	fl = flows_find(&f, PORT);
	assert_int_equal(fl->nmodels, FLOW_MAX_XFERS);
	assert_int_equal(fl->nshared, 1);
	assert_int_equal(fl->shared_total, 1);
	assert_int_equal(told(&f, &v[0], &first), 1);
	/* The ninth (256 MB): the nearest is the eighth's (128 MB), no time. */
	assert_int_equal(told(&f, &v[FLOW_MAX_XFERS], &r), 1);
	assert_int_equal(r.xfer_time_us, 0);
	assert_int_equal(r.rate_bps, fl->m[FLOW_MAX_XFERS - 1].rate.rate_bps);
	assert_int_equal(told(&f, &v[0], &r), 1);
	assert_int_equal(r.xfer_time_us, first.xfer_time_us);
	/* The first leaves: at the next epoch's look the ninth gets a model. */
	flows_sender_gone(&f, &v[0]);
	flows_sender_seen(&f, &v[FLOW_MAX_XFERS]);
	assert_int_equal(fl->nshared, 0);
	e->seq = 2;
	flows_epoch(&f, e, 1000);
	assert_int_equal(told(&f, &v[FLOW_MAX_XFERS], &r), 1);
	assert_true(r.xfer_time_us > 0);
	flows_finish(&f);
	free(e);
}

/* The standard traffic on PORT, PORT + 1 and PORT + 2. */
static struct rxb_epoch *epoch3(uint64_t seq, double cpu_bound)
{
	struct rxb_epoch *e = epoch(seq, cpu_bound, 20000);

	for (int i = 1; i < 3; i++) {
		e->socks[i] = e->socks[0];
		e->socks[i].port = (uint16_t)(PORT + i);
	}
	e->nsocks = 3;
	return e;
}

/* Models of @f with a solve whose stage B had @cpu_bound CPU-bound tasks. */
static int solved_at(const struct flows *f, double cpu_bound)
{
	int n = 0;

	for (int i = 0; i < f->n; i++)
		for (int j = 0; j < f->v[i].nmodels; j++)
			n += f->v[i].m[j].have_good &&
			     f->v[i].m[j].good.inputs[0].cpu_bound == cpu_bound;
	return n;
}

/*
 * At most FLOWS_SOLVES_PER_EPOCH solves per epoch over all flows, HELLOs'
 * included: a model over the cap waits (no RATE before its first solve)
 * and those that have waited longest go first, the never solved before
 * the others; every model is solved within a few epochs.
 */
static void test_solve_budget(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch3(1, 0);
	uint16_t ports[3] = { PORT, PORT + 1, PORT + 2 };
	struct sendsrv_peer p[3 * FLOW_MAX_XFERS];
	struct rxbneck_rate r;
	uint64_t deferred = 0;
	int n = 3 * FLOW_MAX_XFERS, left;

	(void)state;
	setup(&f, &pub);
	assert_int_equal(flows_set_config_ports(&f, ports, 3), 0);
	flows_epoch(&f, e, 1000);
	left = FLOWS_SOLVES_PER_EPOCH - 3;	/* the defaults' models */
	assert_int_equal(f.solves_left, left);
	for (int k = 0; k < n; k++) {
		p[k] = peer((uint64_t)k + 1, ports[k % 3]);
		p[k].hello.file_bytes = 1000000ULL * (uint64_t)(k + 1);
		assert_int_equal(flows_sender_hello(&f, &p[k]), 0);
	}
	assert_int_equal(f.solves_left, 0);
	assert_int_equal(solved_at(&f, 0), left);
	assert_int_equal(told(&f, &p[0], &r), 1);
	assert_int_equal(told(&f, &p[n - 1], &r), 0);	/* not solved yet */
	/* A load change: all are due; the never solved go first. */
	free(e);
	e = epoch3(2, 1);
	flows_epoch(&f, e, 1000);
	assert_int_equal(solved_at(&f, 1), FLOWS_SOLVES_PER_EPOCH);
	assert_int_equal(solved_at(&f, 0), n - FLOWS_SOLVES_PER_EPOCH);
	assert_int_equal(told(&f, &p[n - 1], &r), 1);
	for (int i = 0; i < f.n; i++)
		for (int j = 0; j < f.v[i].nmodels; j++)
			deferred += f.v[i].m[j].solves_deferred;
	/* Waited: at the HELLOs, and in this epoch. */
	assert_int_equal(deferred, (n - left) + (n - FLOWS_SOLVES_PER_EPOCH));
	free(e);
	e = epoch3(3, 1);
	flows_epoch(&f, e, 1000);
	assert_int_equal(solved_at(&f, 1), n);
	flows_finish(&f);
	free(e);
}

/* History for port 9100: @ns per packet, one per wake-up, K = 92, on CPU 1. */
static void set_history(struct pub *pub, double ns)
{
	learn_init(&pub->history);
	recv_fixture_history(&pub->history, ns, 1);
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
	struct rxbneck_rate r;
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
	assert_int_equal(fl->m[0].state, FLOW_MODEL);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_int_equal(r.port, 9100);
	assert_int_equal(r.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL);
	assert_int_equal(r.confidence, 360);
	n = flows_ports(&f, ports);
	assert_int_equal(n, 2);
	/* The sender leaves: the unconfigured flow lingers linger_ns (30 s;
	 * on the epochs' clock), then goes and its costs are kept. */
	flows_sender_gone(&f, &p);
	assert_non_null(flows_find(&f, 9100));
	e->seq = 2;
	e->end_ns += f.p.linger_ns - 1;
	flows_epoch(&f, e, 1000);
	assert_non_null(flows_find(&f, 9100));
	e->seq = 3;
	e->end_ns += 1;
	flows_epoch(&f, e, 1000);
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

/*
 * A full table of flows whose senders left (lingering) never keeps out a
 * new one: the one whose senders left first makes way.
 */
static void test_linger_evict(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct rxb_epoch *e = epoch(1, 0, 0);
	struct sendsrv_peer p;

	(void)state;
	setup(&f, &pub);	/* PORT configured */
	flows_epoch(&f, e, 1000);
	for (int i = 0; i < FLOWS_MAX - 1; i++) {
		p = peer((uint64_t)i + 1, (uint16_t)(20000 + i));
		assert_int_equal(flows_sender_hello(&f, &p), 0);
		e->seq++;
		e->end_ns += 1000;
		flows_epoch(&f, e, 1000);	/* each leaves at its own time */
		flows_sender_gone(&f, &p);
	}
	assert_int_equal(f.n, FLOWS_MAX);
	p = peer(100, 30000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(f.n, FLOWS_MAX);
	assert_int_equal(f.evicted, 1);
	assert_null(flows_find(&f, 20000));	/* the first to leave */
	assert_non_null(flows_find(&f, 20001));
	assert_non_null(flows_find(&f, PORT));	/* configured: never */
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
	struct rxbneck_rate r;
	double ns = PRIOR_NS_PER_PKT + PRIOR_NS_PER_BYTE * 1468;
	uint64_t rate;

	(void)state;
	setup(&f, &pub);
	f.ops.prior = prior_defaults;
	p.hello.payload_bytes = 1468;
	p.hello.max_rate_bps = 0;	/* up to the 10 Gb/s line rate: the host limits */
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(flows_find(&f, 9100)->m[0].state, FLOW_MODEL);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_int_equal(r.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL |
			 RXBNECK_RATE_DEFAULT_COST);
	assert_int_equal(r.confidence, 90);
	assert_true(r.rate_bps > 0 && r.rate_bps < 10000000000ULL);
	rate = r.rate_bps;
	flows_sender_gone(&f, &p);
	flows_finish(&f);

	/* The same costs as this port's history. */
	memset(&pub, 0, sizeof(pub));
	setup(&f, &pub);
	set_history(&pub, ns);
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_int_equal(r.flags, RXBNECK_RATE_NO_TRAFFIC | RXBNECK_RATE_PROVISIONAL);
	assert_int_equal(r.confidence, 360);
	assert_int_equal(r.rate_bps, rate);
	flows_finish(&f);

	/* No placement known (no socket, no history): the line rate, confidence 0. */
	memset(&pub, 0, sizeof(pub));
	setup(&f, &pub);
	flows_epoch(&f, e, 1000);
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(flows_find(&f, 9100)->m[0].state, FLOW_PROVISIONAL);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_int_equal(r.flags, RXBNECK_RATE_NO_TRAFFIC);
	assert_int_equal(r.confidence, 0);
	assert_int_equal(r.rate_bps, 10000000000ULL);
	flows_finish(&f);
	free(e);
}

/*
 * A HELLO before the daemon's first epoch: nothing to model with (no
 * workload measured, even with a prior for the costs), so epoch 0,
 * confidence 0, NO_TRAFFIC, the top of the sender's search, loss 0 and no
 * transfer time (PROTOCOL.md §6.1); the first epoch brings a modelled one.
 */
static void test_epoch_zero(void **state)
{
	struct flows f;
	struct pub pub = { 0 };
	struct sendsrv_peer p = peer(1, 9100);
	struct rxb_epoch *e = epoch(1, 1, 0);
	struct rxbneck_rate r;

	(void)state;
	setup(&f, &pub);
	f.ops.prior = prior_defaults;
	p.hello.max_rate_bps = 4000000000ULL;
	assert_int_equal(flows_sender_hello(&f, &p), 0);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_int_equal(r.epoch, 0);
	assert_int_equal(r.confidence, 0);
	assert_int_equal(r.flags, RXBNECK_RATE_NO_TRAFFIC);
	assert_int_equal(r.rate_bps, 4000000000ULL);
	assert_true(r.loss == 0);
	assert_int_equal(r.xfer_time_us, 0);
	flows_epoch(&f, e, 1000);
	assert_int_equal(told(&f, &p, &r), 1);
	assert_int_equal(r.epoch, 1);
	assert_true(r.confidence > 0);
	assert_true(r.flags & RXBNECK_RATE_PROVISIONAL);
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
	check_rel_strict(f.v[0].m[0].xfer.line_rate_bps, 1e9, 0);	/* below the sender's 2e9 */
	check_rel_strict(f.v[0].m[0].xfer.payload_bytes, 8192, 0);	/* the sender's */
	assert_true(f.ws.cap >= 2000);
	p.min_rate_bps = 0;
	assert_int_equal(flows_set_params(&f, &p), -EINVAL);
	flows_finish(&f);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_provisional),
	cmocka_unit_test(test_degraded_arrivals),
	cmocka_unit_test(test_model_rate),
	cmocka_unit_test(test_unconstrained),
	cmocka_unit_test(test_stale),
	cmocka_unit_test(test_sender_hello),
	cmocka_unit_test(test_senders_own_answers),
	cmocka_unit_test(test_transfers_over_cap),
	cmocka_unit_test(test_solve_budget),
	cmocka_unit_test(test_ports_and_history),
	cmocka_unit_test(test_linger_evict),
	cmocka_unit_test(test_prior_default),
	cmocka_unit_test(test_epoch_zero),
	cmocka_unit_test(test_set_params),
)
