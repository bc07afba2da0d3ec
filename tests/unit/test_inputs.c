// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/inputs.c and learn.c: synthetic epoch records in, stage
 * inputs out, each number checked against its formula (inputs.h)
 * recomputed here: the workload, the queue, the batch, stage A, the
 * history, the loss episodes, sampled and unsampled epochs.
 */
#include "tests/unit/inputs_fixture.h"
#include "tests/unit/unit_main.h"

/* One measured epoch: every stage-B input by its formula. */
static void test_stage_b_formulas(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = f->e;
	struct rxb_sock_meas *s = add_sock(e, 1000, 2000, 250);

	/* 75 % of the receiver's time on CPU 1 (2 hogs), 25 % on CPU 0 (none). */
	split_placement(s);
	e->cpus[1].cpu_bound = 2.0;
	e->cpus[0].cpu_bound = 0.0;
	ifix_feed(f, 1.0);

	assert_int_equal(f->r.nstages, 1);
	assert_true(f->r.b.present);
	assert_false(f->r.a.present);
	assert_false(f->r.no_traffic);
	check_rel_strict(f->r.b.cpu_bound.v, 0.75 * 2.0 + 0.25 * 0.0, 1e-15);
	assert_int_equal(f->r.b.cpu_bound.src, VALUE_MEASURED);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 2000, 1e-15);
	check_rel_strict(f->r.b.pkts_per_wakeup.v, 4, 1e-15);
	check_rel_strict(f->r.b.queue_pkts.v, floor(212992.0 / 2304.0), 0);
	check_rel_strict(f->r.stages[0].mu_net_per_s, 1e9 / (2000.0 * 4), 1e-15);
	assert_int_equal(f->r.stages[0].batch_pkts, 4);
	assert_int_equal(f->r.stages[0].queue_pkts, 92);
	assert_false(f->r.stages[0].load_independent);
	check_rel_strict(f->r.stages[0].cpu_bound, 1.5, 1e-15);
	assert_true(f->r.stages[0].io_bound == 0);
	/* No NAPI poll seen: stage A is left out, which costs 10 %. */
	assert_int_equal(f->r.confidence, 900);
	assert_int_equal(f->r.a.mu_per_s.src, VALUE_MISSING);
}

/*
 * Interrupt time on the receiver's CPUs (the receive softirq steered there,
 * docs/model.md): irq_ns_per_pkt is their NET_RX softirq time, weighted by
 * the receiver's time on each, per packet that reached the socket; and on
 * a kernel that charges interrupt time to the task it interrupts, the
 * receiver's cost is its time with each CPU's interrupt share taken off.
 */
static void test_irq_on_receiver_cpu(void **state)
{
	const double want_irq = (0.75 * 0.2 + 0.25 * 0.4) * 1e9 / 1500.0;
	const double own = 1.5e6 * (1 - 0.2 - 0.05) + 0.5e6 * (1 - 0.4);
	struct ifix *f = *state;

	for (int charged = 0; charged < 2; charged++) {
		struct rxb_epoch *e = new_epoch(1, 1.0);
		struct inputs_env env = env_for(e);
		struct rxb_sock_meas *s = add_sock(e, 1000, 2000, 250);

		/* 1500 arrivals, 1000 queued and read; 75 % of 2 ms on CPU 1. */
		s->pkts_in = 1500;
		split_placement(s);
		e->cpus[1].softirq_frac = 0.2;
		e->cpus[1].hardirq_frac = 0.05;
		e->cpus[0].softirq_frac = 0.4;
		env.irq_in_task_time = charged;
		learn_init(&f->l);
		learn_disk_init(&f->d);
		inputs_update(&f->l, &f->d, PORT, e, 1.0, &env, &f->r);
		assert_int_equal(f->r.nstages, 1);
		check_rel_strict(f->r.b.irq_ns_per_pkt.v, want_irq, 1e-12);
		assert_int_equal(f->r.b.irq_ns_per_pkt.src, VALUE_MEASURED);
		check_rel_strict(f->r.stages[0].irq_ns_per_pkt, want_irq, 1e-12);
		check_rel_strict(f->r.b.cpu_ns_per_pkt.v, charged ? own / 1000 : 2000, 1e-6);
		free(e);
	}

	/* Hardly any softirq there (veth's default: it runs on the sender's CPU). */
	{
		struct rxb_epoch *e = new_epoch(1, 1.0);
		struct inputs_env env = env_for(e);

		add_sock(e, 100000, 2000, 250);
		e->cpus[1].softirq_frac = 1e-4;	/* 1 ns per packet */
		env.irq_in_task_time = true;
		learn_init(&f->l);
		inputs_update(&f->l, &f->d, PORT, e, 1.0, &env, &f->r);
		assert_true(f->r.b.irq_ns_per_pkt.v == 0);
		assert_int_equal(f->r.b.irq_ns_per_pkt.src, VALUE_MEASURED);
		assert_true(f->r.stages[0].irq_ns_per_pkt == 0);
		check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 2000 * (1 - 1e-4), 1e-6);
		free(e);
	}

	/* Not measured (no NET_RX probe): none assumed, the cost as measured. */
	{
		struct rxb_epoch *e = new_epoch(1, 1.0);
		struct inputs_env env = env_for(e);

		add_sock(e, 1000, 2000, 250);
		e->cpus[1].softirq_frac = NAN;
		env.irq_in_task_time = true;
		learn_init(&f->l);
		inputs_update(&f->l, &f->d, PORT, e, 1.0, &env, &f->r);
		assert_int_equal(f->r.b.irq_ns_per_pkt.src, VALUE_MISSING);
		assert_true(f->r.stages[0].irq_ns_per_pkt == 0);
		check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 2000, 1e-12);
		free(e);
	}
}

/* Feed @f one epoch of @pkts packets at 2 hogs on CPU 1; @split: 75/25 on
 * CPUs 1 and 0 (none there), else all on CPU 1. */
static void feed_placed(struct ifix *f, uint64_t seq, uint64_t pkts, bool split)
{
	struct rxb_epoch *e = new_epoch(seq, 1.0);
	struct rxb_sock_meas *s = add_sock(e, pkts, pkts > 1 ? 2000 : 1e6, pkts > 1 ? 250 : 1);

	if (split)
		split_placement(s);
	e->cpus[1].cpu_bound = 2.0;
	ifix_take(f, e, 1.0);
}

/*
 * A new receiver's first epoch holds its start-up, which ran before it
 * pinned itself: part of it on the other CPU (no hogs there). With one
 * packet that epoch does not move the placement (#C stays 2, not 1.5); an
 * epoch of real traffic split the same way does.
 */
static void test_placement_needs_packets(void **state)
{
	struct ifix *f = *state;

	feed_placed(f, 1, 20000, false);
	check_rel_strict(f->r.b.cpu_bound.v, 2.0, 0);
	/* The start-up epoch: 1 packet, a quarter of it on CPU 0. */
	feed_placed(f, 2, 1, true);
	check_rel_strict(f->r.b.cpu_bound.v, 2.0, 0);
	assert_int_equal(f->l.ncpus, 1);
	/* Traffic split 75/25: that is where it runs now. */
	feed_placed(f, 3, 1000, true);
	check_rel_strict(f->r.b.cpu_bound.v, 0.75 * 2.0, 1e-15);
	/* A flow with no placement yet takes what there is. */
	learn_init(&f->l);
	feed_placed(f, 4, 1, true);
	assert_int_equal(f->l.ncpus, 2);
	check_rel_strict(f->r.b.cpu_bound.v, 0.75 * 2.0, 1e-15);
}

/* The costs are decaying packet-weighted averages (learn.h). */
static void test_smoothing(void **state)
{
	struct rxb_epoch *e1 = new_epoch(1, 1.0), *e2 = new_epoch(2, 0.5);
	struct ifix *f = *state;
	struct inputs_env env;
	double k = exp(-0.5 / LEARN_TAU_S);

	add_sock(e1, 1000, 2000, 250);
	env = env_for(e1);
	inputs_update(&f->l, &f->d, PORT, e1, 1.0, &env, &f->r);
	add_sock(e2, 3000, 1000, 3000);
	env = env_for(e2);
	inputs_update(&f->l, &f->d, PORT, e2, 0.5, &env, &f->r);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v,
		  (2000.0 * 1000 * k + 1000.0 * 3000) / (1000 * k + 3000), 1e-14);
	check_rel_strict(f->r.b.pkts_per_wakeup.v, (1000 * k + 3000) / (250 * k + 3000), 1e-14);
	/* The workload is not smoothed: this epoch's counts only. */
	e2->cpus[1].cpu_bound = 3;
	e2->seq = 3;
	e2->socks[0].pkts_out = 0;	/* idle epoch */
	env = env_for(e2);
	inputs_update(&f->l, &f->d, PORT, e2, 0.5, &env, &f->r);
	check_rel_strict(f->r.b.cpu_bound.v, 3, 0);
	/* Idle: costs carried over, flagged learned, and trusted less. */
	assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_LEARNED);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v,
		  (2000.0 * 1000 * k + 1000.0 * 3000) / (1000 * k + 3000), 1e-14);
	assert_int_equal(f->r.confidence, 630);	/* 1000 x 0.7 learned x 0.9 no stage A */
	free(e1);
	free(e2);
}

/* The fixture's epoch with only the receiver's socket (add_sock()), fed. */
static void feed_one_sock(struct ifix *f, uint64_t pkts, double ns, uint64_t wakeups)
{
	add_sock(f->e, pkts, ns, wakeups);
	ifix_feed(f, 1.0);
}

/* Too few packets do not make a measurement; nothing is invented. */
static void test_too_few_packets(void **state)
{
	struct ifix *f = *state;

	feed_one_sock(f, 10, 2000, 5);
	assert_int_equal(f->r.nstages, 0);
	assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_MISSING);
	assert_string_equal(f->r.b.cpu_ns_per_pkt.why, "too few packets measured");
	assert_non_null(strstr(f->r.why, "stage B not modelled"));
	assert_int_equal(f->r.confidence, 0);
}

/*
 * An epoch of fewer than LEARN_MIN_PKTS packets read prices nothing: a new
 * receiver's first epoch holds its start-up (here 3 packets and 20 ms of
 * its time, its file buffer filled), which as a cost would be 6.7 ms a
 * packet. Its weight decays as an idle epoch's; 64 packets count.
 */
static void test_startup_epoch_not_priced(void **state)
{
	struct ifix *f = *state;
	double k = exp(-1.0 / LEARN_TAU_S);

	feed_one_sock(f, 20000, 1000, 2000);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 1000, 1e-15);
	ifix_epoch(f, 2, 1.0);
	feed_one_sock(f, 3, 6.7e6, 3);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 1000, 1e-14);
	ifix_epoch(f, 3, 1.0);
	feed_one_sock(f, 64, 3000, 64);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v,
			 (1000.0 * 20000 * k * k + 3000.0 * 64) / (20000 * k * k + 64), 1e-14);
}

/* No traffic at all: every cost missing, with the reason. */
static void test_no_traffic(void **state)
{
	struct ifix *f = *state;

	ifix_feed(f, 1.0);
	assert_int_equal(f->r.nstages, 0);
	assert_true(f->r.no_traffic);
	assert_false(f->r.traffic.sock_seen);
	assert_string_equal(f->r.b.cpu_ns_per_pkt.why, "no traffic seen on the port yet");
	assert_string_equal(f->r.b.cpu_bound.why, "receiver thread not seen yet");
	assert_true(isnan(f->r.b.cpu_ns_per_pkt.v));
}

/* A receiver that never blocked drains the queue: N = K. */
static void test_never_blocked(void **state)
{
	struct ifix *f = *state;

	feed_one_sock(f, 5000, 800, 0);
	assert_int_equal(f->r.nstages, 1);
	assert_int_equal(f->r.stages[0].batch_pkts, 92);
	assert_int_equal(f->r.stages[0].queue_pkts, 92);
	check_rel_strict(f->r.stages[0].mu_net_per_s, 1e9 / (800.0 * 92), 1e-15);
}

/* Without the scheduler probe the receiver's costs are missing. */
static void test_no_sched_probe(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = f->e;
	struct rxb_sock_meas *s;

	s = add_sock(e, 5000, 800, 0);
	s->receiver_oncpu_ns = 0;
	s->cpu_ns_per_pkt = NAN;
	s->ncpus_ran = 0;
	e->probes &= ~RXB_PROBE_SCHED;
	ifix_feed(f, 1.0);
	assert_int_equal(f->r.nstages, 0);
	assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_MISSING);
	assert_string_equal(f->r.b.cpu_ns_per_pkt.why,
			    "receiver CPU time not measured: the scheduler probe is not loaded");
	assert_int_equal(f->r.b.pkts_per_wakeup.src, VALUE_MISSING);
	/* Without the socket probe nothing about the socket is known. */
	e->probes &= ~RXB_PROBE_SOCKQ;
	s->counts_valid = false;
	ifix_feed(f, 1.0);
	assert_string_equal(f->r.b.cpu_ns_per_pkt.why,
			    "socket not measured: the socket probe is not loaded");
}

/* #I > 0: disk rates when measured, else #I is left out and said so. */
static void test_io_bound(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = f->e;

	add_sock(e, 1000, 2000, 250);
	e->cpus[1].io_bound = 1.5;
	learn_disk_update(&f->d, e, 1.0);
	ifix_feed(f, 1.0);
	assert_true(f->r.b.io_ignored);
	assert_true(f->r.stages[0].io_bound == 0);
	check_rel_strict(f->r.b.io_bound.v, 1.5, 0);
	assert_non_null(strstr(f->r.why, "not modelled"));
	assert_int_equal(f->r.confidence, 450);	/* x 0.9 no stage A x 0.5 */

	e->seq = 2;
	e->disk.valid = true;
	e->disk.completions = 100;
	e->disk.mean_service_ns = 990099;	/* mu_D 1.01/ms */
	e->disk.mean_cpu_burst_ns = 217391;	/* mu_P-I/O 4.6/ms */
	learn_disk_update(&f->d, e, 1.0);
	f->env = env_for(e);
	ifix_feed(f, 1.0);
	assert_false(f->r.b.io_ignored);
	check_rel_strict(f->r.stages[0].io_bound, 1.5, 0);
	check_rel_strict(f->r.stages[0].mu_disk_per_s, 1e9 / 990099, 1e-14);
	check_rel_strict(f->r.stages[0].mu_pio_per_s, 1e9 / 217391, 1e-14);
}

/* Unmeasured task classes (NaN) make stage B impossible: say which. */
static void test_workload_missing(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = f->e;

	add_sock(e, 1000, 2000, 250);
	e->cpus[1].cpu_bound = NAN;
	ifix_feed(f, 1.0);
	assert_int_equal(f->r.nstages, 0);
	assert_string_equal(f->r.b.cpu_bound.why, "task classes not measured");
	assert_non_null(strstr(f->r.why, "task classes not measured"));
}

/* A NAPI instance's counts in an epoch. */
static void set_napi(struct rxb_napi_meas *n, const char *dev, uint64_t polls,
		     uint64_t pkts, double service_ns_per_poll)
{
	rxb_strlcpy(n->dev, dev, sizeof(n->dev));
	n->polls = polls;
	n->pkts = pkts;
	n->service_ns_per_poll = service_ns_per_poll;
}

/* Stage A: the busiest NAPI instance, K from the backlog or the ring. */
static void test_stage_a(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = f->e;

	add_sock(e, 2000, 2000, 500);
	e->nnapi = 2;
	set_napi(&e->napi[0], "eth9", 10, 10, 100);
	set_napi(&e->napi[1], "(backlog)", 1000, 2000, 2500);
	ifix_feed(f, 1.0);
	assert_int_equal(f->r.nstages, 2);
	assert_true(f->r.a.present);
	assert_string_equal(f->r.a.dev, "(backlog)");
	assert_true(f->r.stages[0].load_independent);
	check_rel_strict(f->r.stages[0].mu_net_per_s, 1e9 / 2500, 1e-15);
	assert_int_equal(f->r.stages[0].batch_pkts, 2);
	assert_int_equal(f->r.stages[0].queue_pkts, 1000);
	assert_int_equal(f->r.a.queue_pkts.src, VALUE_SYSCTL);
	assert_false(f->r.stages[1].load_independent);	/* B after A */
	assert_int_equal(f->r.confidence, 1000);

	/* A real device: its ring, as reported. */
	learn_init(&f->l);
	rxb_strlcpy(e->napi[1].dev, "eth0", sizeof(e->napi[1].dev));
	e->nnics = 1;
	rxb_strlcpy(e->nics[0].name, "eth0", sizeof(e->nics[0].name));
	e->nics[0].rx_ring = 512;
	e->nics[0].ring_source = RXB_SRC_DEVICE;
	ifix_feed(f, 1.0);
	assert_int_equal(f->r.stages[0].queue_pkts, 512);
	assert_int_equal(f->r.a.queue_pkts.src, VALUE_DEVICE);
}

/*
 * UDP GSO over veth: the backlog's polls count skbs of 16 datagrams each,
 * the socket counts datagrams. N_A and K_A are in datagrams, so both are
 * 16 times the skb counts; a device carrying more skbs than the flow's
 * datagrams (other traffic) keeps 1 datagram per skb.
 */
static void test_stage_a_gso(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = f->e;

	add_sock(e, 32000, 1000, 500);
	e->nnapi = 1;
	set_napi(&e->napi[0], "(backlog)", 1000, 2000 /* skbs */, 2500);
	ifix_feed(f, 1.0);
	assert_true(f->r.a.present);
	check_rel_strict(f->r.a.dgrams_per_skb.v, 16, 1e-12);
	assert_int_equal(f->r.a.dgrams_per_skb.src, VALUE_MEASURED);
	check_rel_strict(f->r.a.pkts_per_poll.v, 32, 1e-12);
	assert_int_equal(f->r.stages[0].batch_pkts, 32);
	assert_int_equal(f->r.stages[0].queue_pkts, 16000);
	check_rel_strict(f->r.stages[0].mu_net_per_s, 1e9 / 2500, 1e-15);	/* polls/s */

	/* Other traffic on the device: fewer datagrams than skbs. */
	learn_init(&f->l);
	e->socks[0].pkts_in = 1500;
	ifix_feed(f, 1.0);
	check_rel_strict(f->r.a.dgrams_per_skb.v, 1, 1e-12);
	assert_int_equal(f->r.stages[0].batch_pkts, 2);
	assert_int_equal(f->r.stages[0].queue_pkts, 1000);

	/*
	 * The last epoch counted 2000 of 2000 skbs; this one 32000 of 2000.
	 * Polls without work then leave the ratio as it was (no division by
	 * 0 skbs).
	 */
	double k = exp(-1.0 / LEARN_TAU_S), want = (2000 * k + 32000) / (2000 * k + 2000);

	e->socks[0].pkts_in = 32000;
	ifix_feed(f, 1.0);
	check_rel_strict(f->r.a.dgrams_per_skb.v, want, 1e-12);
	e->napi[0].pkts = 0;
	ifix_feed(f, 1.0);
	check_rel_strict(f->r.a.dgrams_per_skb.v, want, 1e-12);
}

/* Costs from the state directory: flagged, trusted less, no traffic. */
static void test_history(void **state)
{
	struct ifix *f = *state;
	struct rxb_epoch *e = ifix_epoch(f, 7, 1.0);

	recv_fixture_history(&f->l, 1500.0, 8);
	e->cpus[1].cpu_bound = 1;
	ifix_feed(f, 1.0);
	assert_int_equal(f->r.nstages, 1);
	assert_true(f->r.no_traffic);
	assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_HISTORY);
	check_rel_strict(f->r.stages[0].mu_net_per_s, 1e9 / (1500.0 * 8), 1e-15);
	check_rel_strict(f->r.stages[0].cpu_bound, 1, 0);
	assert_int_equal(f->r.confidence, 360);	/* 0.4 history x 0.9 no stage A */
}

/*
 * One epoch of test_rcvbuf_tcp_on_port: a socket whose last event was
 * @ipproto and whose buffer (@rcvbuf_bytes) was read from a socket of
 * @rcvbuf_ipproto; returns K_B in packets.
 */
static double rcvbuf_epoch(struct ifix *f, uint64_t seq, int ipproto,
			   int rcvbuf_ipproto, uint32_t rcvbuf_bytes)
{
	struct rxb_epoch *e = new_epoch(seq, 1.0);
	struct rxb_sock_meas *s = add_sock(e, 1000, 2000, 250);

	s->ipproto = ipproto;
	if (rcvbuf_ipproto)
		s->rcvbuf_ipproto = rcvbuf_ipproto;
	s->rcvbuf_bytes = rcvbuf_bytes;
	ifix_take(f, e, 1.0);
	return f->r.b.queue_pkts.v;
}

/*
 * The port's record names the protocol of the socket its last event
 * touched. A TCP control connection on the same port (rxbneck-recv) must
 * not replace the UDP socket's receive buffer in K_B (measured: K flipped
 * 3641 <-> 56); before any UDP socket was seen, its value is all there is.
 */
static void test_rcvbuf_tcp_on_port(void **state)
{
	const double udp_pkts = floor(8388608.0 / 2304.0);
	struct ifix *f = *state;

	/* Only the TCP socket so far: its buffer is used. */
	check_rel_strict(rcvbuf_epoch(f, 1, IPPROTO_TCP, 0, 131072),
		  floor(131072.0 / 2304.0), 0);
	/* The UDP socket: its buffer replaces it. */
	check_rel_strict(rcvbuf_epoch(f, 2, IPPROTO_UDP, 0, 8388608),
		  udp_pkts, 0);
	assert_int_equal(f->r.stages[0].queue_pkts, 3640);
	/* The TCP socket again (the end of a transfer): K stays the UDP one. */
	check_rel_strict(rcvbuf_epoch(f, 3, IPPROTO_TCP, 0, 131072),
		  udp_pkts, 0);
	/*
	 * The record says UDP (its last dequeue) but the buffer size was read
	 * from the TCP socket (a control frame queued after the last UDP
	 * read): K stays the UDP one.
	 */
	check_rel_strict(rcvbuf_epoch(f, 4, IPPROTO_UDP, IPPROTO_TCP, 131072),
		  udp_pkts, 0);
	/* A new UDP buffer (the application resized it) is taken. */
	check_rel_strict(rcvbuf_epoch(f, 5, IPPROTO_UDP, 0, 4194304),
		  floor(4194304.0 / 2304.0), 0);
}

/*
 * A port whose sockets are all TCP is not modelled: its "packets" are
 * coalesced segments (an iperf3 port: a few hundred per 250 ms epoch at
 * about 100 us each, which as datagrams would be a rate tens of times too
 * low).
 * Once a UDP socket dequeues on it, it is a datagram port, and stays one
 * when the receiver's TCP control connection has the last dequeue of an
 * epoch (rxbneck-recv shares its port number).
 */
static void test_tcp_port_not_modelled(void **state)
{
	struct ifix *f = *state;
	uint64_t seq = 0;
	int i;

	for (i = 0; i < 8; i++) {
		struct rxb_epoch *e = g_epoch(++seq, 2);
		struct rxb_sock_meas *s = g_sock(e, 300, 300 * 97000.0, 40, 0);

		s->ipproto = IPPROTO_TCP;
		s->rcvbuf_ipproto = IPPROTO_TCP;
		ifix_take(f, e, G_EPOCH_S);
		assert_int_equal(f->r.nstages, 0);
		assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_MISSING);
		assert_non_null(strstr(f->r.b.cpu_ns_per_pkt.why, "no datagrams"));
		assert_non_null(strstr(f->r.b.cpu_ns_per_pkt.why, "TCP"));
		assert_non_null(strstr(f->r.why, "stage B not modelled"));
	}
	/* UDP from now on: modelled, and a TCP last dequeue does not undo it. */
	for (i = 0; i < 8; i++) {
		struct rxb_epoch *e = g_epoch(++seq, 2);
		struct rxb_sock_meas *s = g_sock(e, 20000, 20000 * 3000.0, 20000, 0);

		s->ipproto = i == 5 ? IPPROTO_TCP : IPPROTO_UDP;
		s->rcvbuf_ipproto = IPPROTO_UDP;
		ifix_take(f, e, G_EPOCH_S);
		assert_true(f->r.b.cpu_ns_per_pkt.src != VALUE_MISSING);
	}
	assert_true(f->r.nstages > 0);
}

/*
 * A TCP port's drain rate (inputs.h, struct inputs_tcp) against its closed
 * form: bytes per packet dequeued x 8 / (on-CPU ns per packet x (#C + 1)),
 * with the configured payload until bytes were counted; with 2 hogs on
 * the receiver's CPU and then none.
 */
static void test_tcp_drain(void **state)
{
	struct ifix *f = *state;
	const double ns = 97000, bytes = 65000, payload = 1468;
	uint64_t seq = 0;

	for (int i = 0; i < 12; i++) {
		double hogs = i < 6 ? 2 : 0;
		struct rxb_epoch *e = g_epoch(++seq, hogs);
		struct rxb_sock_meas *s = g_sock(e, 300, 300 * ns, 40, 0);
		double want;

		s->ipproto = IPPROTO_TCP;
		s->rcvbuf_ipproto = IPPROTO_TCP;
		s->bytes_out = i == 0 ? 0 : (uint64_t)(300 * bytes);
		ifix_take(f, e, G_EPOCH_S);
		assert_int_equal(f->r.nstages, 0);
		assert_true(f->r.tcp.present);
		check_rel_strict(f->r.tcp.cpu_ns_per_pkt.v, ns, 1e-12);
		check_rel_strict(f->r.tcp.share, hogs + 1, 1e-12);
		want = (i == 0 ? payload : bytes) * 8 * 1e9 / (ns * (hogs + 1));
		check_rel_strict(inputs_tcp_advise(&f->r.tcp, payload), want, 1e-12);
		check_rel_strict(f->r.tcp.drain_bps, want, 1e-12);
		assert_int_equal(f->r.tcp.bytes_per_pkt.src,
				 i == 0 ? VALUE_CONFIG : VALUE_MEASURED);
		assert_int_equal(f->r.confidence, i == 0 ? 500 : 1000);
	}
	/* 2 hogs: 65000 B x 8 / (97 us x 3) = 1.787 Gb/s; none: 5.361 Gb/s. */
	check_rel_strict(f->r.tcp.drain_bps, 5.360824742e9, 1e-9);
}

/* An epoch whose socket saw loss episodes end: @n bins of (bucket, count). */
static struct rxb_epoch *episode_epoch(uint64_t seq, bool sampled, int n,
				       const struct rxb_episode_bin *bins)
{
	struct rxb_epoch *e = new_epoch(seq, 1.0);
	struct rxb_sock_meas *s;

	e->net_probe_every = 4;
	e->net_sampled = sampled;
	s = add_sock(e, 1000, 2000, 250);
	s->counts_valid = sampled;
	s->reasons_valid = true;
	s->drops_valid = true;
	s->nepisode_bins = n;
	for (int i = 0; i < n; i++) {
		s->episodes_ended[i] = bins[i];
		s->drop_episodes += bins[i].count;
		s->drops_rcvbuf += bins[i].count * (uint64_t)rxb_episode_bucket_lo(bins[i].bucket);
	}
	return e;
}

/*
 * Per-packet probes sampled one epoch in 4: the epochs in between have no
 * socket counts. They must not count as idle (no decay towards "learned",
 * no change of the costs), while #C is taken from every epoch.
 */
static void test_unsampled_epochs(void **state)
{
	struct ifix *f = *state;
	struct inputs_env env;
	struct rxb_epoch *e;
	struct rxb_sock_meas *s;

	/* Epoch 1, sampled: 1000 packets at 2000 ns, 4 per wake-up, #C 0. */
	e = new_epoch(1, 1.0);
	e->net_probe_every = 4;
	e->net_sampled = true;
	e->net_sampled_seq = 1;
	add_sock(e, 1000, 2000, 250);
	env = env_for(e);
	inputs_update(&f->l, &f->d, PORT, e, 1.0, &env, &f->r);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 2000, 1e-15);
	check_rel_strict(f->r.stages[0].mu_net_per_s, 1e9 / (2000.0 * 4), 1e-15);
	free(e);
	/*
	 * Epochs 2-4, not sampled: no counts (counts_valid false), two hogs
	 * appear on CPU 1; the receiver's scheduling is still seen there.
	 */
	for (uint64_t seq = 2; seq <= 4; seq++) {
		e = new_epoch(seq, 1.0);
		e->net_probe_every = 4;
		e->net_sampled = false;
		e->net_sampled_seq = 1;
		s = &e->socks[e->nsocks++];
		s->port = PORT;
		s->counts_valid = false;
		s->ncpus_ran = 1;
		s->ran_on[0].cpu = 1;
		s->ran_on[0].oncpu_ns = 1000000;
		e->cpus[1].cpu_bound = 2.0;
		env = env_for(e);
		inputs_update(&f->l, &f->d, PORT, e, 1.0, &env, &f->r);
		assert_int_equal(f->r.nstages, 1);
		assert_false(f->r.no_traffic);
		/* The costs exactly as sampled, still counted as measured. */
		check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 2000, 0);
		check_rel_strict(f->r.b.pkts_per_wakeup.v, 4, 0);
		assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_MEASURED);
		/* The load is this epoch's. */
		check_rel_strict(f->r.b.cpu_bound.v, 2.0, 1e-15);
		check_rel_strict(f->r.stages[0].cpu_bound, 2.0, 1e-15);
		free(e);
	}
	/* Epoch 5, sampled, no packets: now the flow is idle - learned values. */
	e = new_epoch(5, 1.0);
	e->net_probe_every = 4;
	e->net_sampled = true;
	e->net_sampled_seq = 5;
	env = env_for(e);
	inputs_update(&f->l, &f->d, PORT, e, 1.0, &env, &f->r);
	check_rel_strict(f->r.b.cpu_ns_per_pkt.v, 2000, 1e-12);
	assert_int_equal(f->r.b.cpu_ns_per_pkt.src, VALUE_LEARNED);
	free(e);
}

/* Feed @f one episode_epoch() of @dt_s. */
static void episode_feed(struct ifix *f, uint64_t seq, bool sampled, int n,
			 const struct rxb_episode_bin *bins, double dt_s)
{
	ifix_take(f, episode_epoch(seq, sampled, n, bins), dt_s);
}

/*
 * The episode size is the median of the ended episodes, by bucket; counted
 * in unsampled epochs too; decayed with the costs' time constant.
 * Buckets (four per octave): 100 packets in 26 = [96, 112), 700 in
 * 37 = [640, 768), 5000 in 48 = [4096, 5120), 20000 in 56 = [16384, 20480).
 */
static void test_loss_episodes(void **state)
{
	const struct rxb_episode_bin b1[] = { { 26, 1 }, { 48, 1 } };
	const struct rxb_episode_bin b2[] = { { 37, 1 } };
	const struct rxb_episode_bin b4[] = { { 56, 4 } };
	struct ifix *f = *state;

	assert_true(rxb_episode_bucket_lo(26) == 96 && rxb_episode_bucket_lo(27) == 112);
	assert_true(rxb_episode_bucket_lo(37) == 640 && rxb_episode_bucket_lo(38) == 768);
	assert_true(rxb_episode_bucket_lo(56) == 16384 && rxb_episode_bucket_lo(57) == 20480);
	/* Nothing ended yet. */
	episode_feed(f, 1, true, 0, NULL, 1.0);
	assert_int_equal(f->r.b.loss_episode_pkts.src, VALUE_MISSING);
	assert_non_null(strstr(f->r.b.loss_episode_pkts.why, "no loss episode has ended"));
	/* Two ended: fewer than LEARN_MIN_EPISODES. */
	episode_feed(f, 2, true, 2, b1, 1.0);
	assert_int_equal(f->r.b.loss_episode_pkts.src, VALUE_MISSING);
	assert_non_null(strstr(f->r.b.loss_episode_pkts.why, "2 episodes ended"));
	/* A third, in an unsampled epoch: the median is the middle one. */
	episode_feed(f, 3, false, 1, b2, 0.001);
	assert_int_equal(f->r.b.loss_episode_pkts.src, VALUE_MEASURED);
	check_rel_strict(f->r.b.loss_episode_pkts.v, sqrt(640.0 * 768.0), 1e-15);
	check_rel_strict(learn_episode_pkts(&f->l), sqrt(640.0 * 768.0), 1e-15);
	/* Ten seconds of nothing: the weights decay alike, the median stays. */
	episode_feed(f, 4, true, 0, NULL, 10.0);
	assert_int_equal(f->r.b.loss_episode_pkts.src, VALUE_LEARNED);
	check_rel_strict(f->r.b.loss_episode_pkts.v, sqrt(640.0 * 768.0), 1e-15);
	check_rel_strict(f->l.episodes_w,
			 (2 * exp(-0.001 / LEARN_TAU_S) + 1) * exp(-10.0 / LEARN_TAU_S), 1e-12);
	/* Four large ones outweigh the three decayed ones. */
	episode_feed(f, 5, true, 1, b4, 1.0);
	check_rel_strict(f->r.b.loss_episode_pkts.v, sqrt(16384.0 * 20480.0), 1e-15);
	assert_int_equal(f->l.episodes_ended, 7);
}

/*
 * A quota's phases on the receiver's CPU (struct rxb_cpu_meas.quota_*)
 * reach stage B's inputs as measured: with [model] quota_phases, where
 * the receiver ran (almost) only on that CPU, and where the solver would
 * take them; status shows them (inputs.stage_b) either way.
 */
static void set_phases(struct rxb_epoch *e, double per, double slow, double s_slow,
		       double s_fast)
{
	e->cpus[1].cpu_bound = 2.0;
	e->cpus[1].quota_period_s = per;
	e->cpus[1].quota_slow_s = slow;
	e->cpus[1].quota_slow_share = s_slow;
	e->cpus[1].quota_fast_share = s_fast;
}

static void test_quota_phases(void **state)
{
	struct ifix *f = *state;
	const struct rxb_stage_inputs *st = &f->r.stages[0];

	add_sock(f->e, 1000, 2000, 250);
	set_phases(f->e, 0.1, 0.0375, 1.0 / 3, 1.0);
	f->env.quota_phases = true;
	ifix_feed(f, 1.0);
	assert_true(f->r.b.present && f->r.nstages == 1);
	assert_true(st->quota_period_s == 0.1 && st->quota_slow_s == 0.0375);
	assert_true(st->quota_slow_share == 1.0 / 3 && st->quota_fast_share == 1.0);
	/* [model] quota_phases = no: shown, not solved with. */
	add_sock(ifix_epoch(f, 2, 1.0), 1000, 2000, 250);
	set_phases(f->e, 0.1, 0.0375, 1.0 / 3, 1.0);
	ifix_feed(f, 1.0);
	assert_true(f->r.b.quota_period_s == 0.1);
	assert_true(st->quota_period_s == 0.0);
	/* A slow phase longer than the period: the solver's refusal, so none. */
	add_sock(ifix_epoch(f, 3, 1.0), 1000, 2000, 250);
	set_phases(f->e, 0.1, 0.2, 1.0 / 3, 1.0);
	f->env.quota_phases = true;
	ifix_feed(f, 1.0);
	assert_true(st->quota_period_s == 0.0);
	/* A quarter of its time on the other CPU: the phases do not add up. */
	split_placement(add_sock(ifix_epoch(f, 4, 1.0), 1000, 2000, 250));
	set_phases(f->e, 0.1, 0.0375, 1.0 / 3, 1.0);
	f->env.quota_phases = true;
	ifix_feed(f, 1.0);
	assert_true(f->r.b.quota_period_s == 0.0 && st->quota_period_s == 0.0);
}

UNIT_TEST_MAIN(
	IFIX_TEST(test_stage_b_formulas),
	IFIX_TEST(test_quota_phases),
	IFIX_TEST(test_irq_on_receiver_cpu),
	IFIX_TEST(test_placement_needs_packets),
	IFIX_TEST(test_smoothing),
	IFIX_TEST(test_too_few_packets),
	IFIX_TEST(test_startup_epoch_not_priced),
	IFIX_TEST(test_no_traffic),
	IFIX_TEST(test_never_blocked),
	IFIX_TEST(test_no_sched_probe),
	IFIX_TEST(test_io_bound),
	IFIX_TEST(test_workload_missing),
	IFIX_TEST(test_stage_a),
	IFIX_TEST(test_stage_a_gso),
	IFIX_TEST(test_history),
	IFIX_TEST(test_rcvbuf_tcp_on_port),
	IFIX_TEST(test_tcp_port_not_modelled),
	IFIX_TEST(test_tcp_drain),
	IFIX_TEST(test_unsampled_epochs),
	IFIX_TEST(test_loss_episodes),
)
