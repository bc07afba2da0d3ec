// SPDX-License-Identifier: GPL-2.0-or-later
/* Measurements -> model inputs per flow. See model_inputs.h. */
#include "daemon/model/model_inputs.h"

#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "solver/ewma.h"
#include "solver/lsq.h"

#define BACKLOG_DEV	"(backlog)"	/* bpf/netrx: the per-CPU backlog NAPI */

/*
 * Placeholders for mu_P-I/O and mu_D when #I = 0: bneck_compute() wants
 * positive rates, but the seed net with no I/O-bound task never fires the
 * transitions that use them, so their value cannot change the result.
 */
#define UNUSED_RATE_PER_S	1.0

static const char *const src_names[] = {
	[VALUE_MISSING] = "missing",
	[VALUE_MEASURED] = "measured",
	[VALUE_LEARNED] = "learned",
	[VALUE_HISTORY] = "history",
	[VALUE_CONFIG] = "config",
	[VALUE_DEVICE] = "device",
	[VALUE_SYSCTL] = "sysctl",
};

const char *value_src_name(enum value_src s)
{
	if ((unsigned)s >= RXB_ARRAY_SIZE(src_names))
		return "?";
	return src_names[s];
}

static const char *const basis_names[] = {
	[COST_NONE] = "none",
	[COST_SATURATED] = "saturated",
	[COST_FIT] = "fit",
	[COST_LAST_FIT] = "last-fit",
	[COST_RATIO] = "ratio",
	[COST_KEPT_UP] = "kept-up",
	[COST_BUSY] = "busy",
};

const char *cost_basis_name(enum cost_basis b)
{
	if ((unsigned)b >= RXB_ARRAY_SIZE(basis_names))
		return "?";
	return basis_names[b];
}

void learn_init(struct learn *l)
{
	memset(l, 0, sizeof(*l));
	l->origin = VALUE_MISSING;
	l->cost.spin_e_ns = NAN;
}

void learn_disk_init(struct learn_disk *d)
{
	memset(d, 0, sizeof(*d));
}

static void value_missing(struct value *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void value_missing(struct value *v, const char *fmt, ...)
{
	va_list ap;

	v->v = NAN;
	v->src = VALUE_MISSING;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

static void value_set(struct value *v, double val, enum value_src src)
{
	v->v = val;
	v->src = src;
	v->why[0] = '\0';
}

void learn_disk_update(struct learn_disk *d, const struct rxb_epoch *e, double dt_s)
{
	const struct rxb_disk_meas *m = &e->disk;
	double k = ewma_decay(dt_s, LEARN_TAU_S);
	double n = (double)m->completions;

	/* Decay even without completions: old disk speeds fade with time. */
	if (m->valid && m->completions && m->mean_service_ns > 0)
		ewma_ratio_add(&d->service_ns, k, m->mean_service_ns * n, n, LEARN_MIN_IOS);
	else
		ewma_ratio_add(&d->service_ns, k, 0, 0, LEARN_MIN_IOS);
	if (m->valid && m->completions && m->mean_cpu_burst_ns > 0)
		ewma_ratio_add(&d->burst_ns, k, m->mean_cpu_burst_ns * n, n, LEARN_MIN_IOS);
	else
		ewma_ratio_add(&d->burst_ns, k, 0, 0, LEARN_MIN_IOS);
}


/* The NAPI instance that handled the most packets this epoch. */
static const struct rxb_napi_meas *busiest_napi(const struct rxb_epoch *e)
{
	const struct rxb_napi_meas *best = NULL;

	if (!e)
		return NULL;
	for (int i = 0; i < e->nnapi && i < RXB_MAX_NAPI; i++)
		if (e->napi[i].polls && (!best || e->napi[i].pkts > best->pkts))
			best = &e->napi[i];
	return best;
}

static bool sock_has_traffic(const struct rxb_sock_meas *s)
{
	return s && s->counts_valid && s->pkts_out > 0;
}

/* Remember where the receiver threads ran, by on-CPU time. */
/* The CPUs the receiver ran on that the record holds (ran_on is bounded). */
static int ran_on_count(const struct rxb_sock_meas *s)
{
	return s->ncpus_ran < (int)RXB_ARRAY_SIZE(s->ran_on) ? s->ncpus_ran :
	       (int)RXB_ARRAY_SIZE(s->ran_on);
}

/* The receiver's on-CPU time over them, ns. */
static double ran_on_total_ns(const struct rxb_sock_meas *s)
{
	double total = 0;

	for (int i = 0; i < ran_on_count(s); i++)
		total += (double)s->ran_on[i].oncpu_ns;
	return total;
}

static void learn_placement(struct learn *l, const struct rxb_sock_meas *s)
{
	double total = ran_on_total_ns(s);
	int n = 0;

	if (!(total > 0))
		return;
	for (int i = 0; i < ran_on_count(s) && n < LEARN_MAX_CPUS; i++) {
		if (!s->ran_on[i].oncpu_ns)
			continue;
		l->cpu[n] = s->ran_on[i].cpu;
		l->cpu_share[n] = (double)s->ran_on[i].oncpu_ns / total;
		n++;
	}
	l->ncpus = n;
}

/*
 * K_B's receive buffer. The collector keeps one record per port. A port
 * can have a TCP socket too: rxbneck-recv (like RBUDP tools generally)
 * runs its control connection on the same port number, and its last
 * events of a transfer are TCP ones. A TCP socket's rcvbuf is a window,
 * not the datagram queue the model is about; taking it made K_B flip
 * between 3641 and 56 packets from one epoch to the next (8 MiB UDP vs
 * 128 KiB TCP buffer) and the bottleneck rate with it (docs/e2e.md). So
 * once a UDP socket's rcvbuf was seen only another UDP socket's replaces
 * it; before that, any protocol's is taken. The protocol is the one the
 * collector read the rcvbuf with (rcvbuf_ipproto): the record's ipproto is
 * the last dequeue's, and a TCP frame queued after the last UDP read
 * paired "UDP" with the TCP buffer (K = 56 at 3 of 60 --follow starts).
 */
static void learn_rcvbuf(struct learn *l, const struct rxb_sock_meas *s)
{
	bool udp = (s->rcvbuf_ipproto ? s->rcvbuf_ipproto : s->ipproto) == IPPROTO_UDP;

	if (!s->rcvbuf_bytes || (l->rcvbuf_udp && !udp))
		return;
	l->rcvbuf_bytes = s->rcvbuf_bytes;
	l->rcvbuf_udp = udp;
}

/*
 * Which protocol dequeued on the port. A watched port whose sockets are all
 * TCP (an iperf3 or a GridFTP data port) has packets that are coalesced
 * segments of up to 64 KiB, not datagrams: the cost per packet is per
 * segment and the rate in payload bytes of datagrams would be off by the
 * segment size (an e2e TCP port's 97 us "per packet" gave 0.1 Gb/s for a
 * receiver taking 3 Gb/s). A port an RBUDP receiver shares with its TCP
 * control connection is a datagram port once any UDP dequeue is seen.
 */
static void learn_proto(struct learn *l, const struct rxb_sock_meas *s)
{
	if (s->ipproto == IPPROTO_UDP || s->rcvbuf_ipproto == IPPROTO_UDP)
		l->udp_seen = true;
	else if (s->ipproto)
		l->other_ipproto = s->ipproto;
}

static bool learn_stream_only(const struct learn *l)
{
	return !l->udp_seen && l->other_ipproto;
}

/*
 * Fold an epoch (w wake-ups, p packets, z empty reads, t on-CPU ns) into the
 * fit after decaying it by @d. An epoch without packets, or with a count
 * that is not a count, adds nothing; empty reads not measured count as 0.
 */
static void fit_add(struct lsq *f, double d, double w, double p, double z, double t)
{
	lsq_decay(f, d);
	if (!isfinite(w) || !isfinite(p) || !isfinite(t) || w < 0 || !(p > 0) || t < 0)
		return;
	if (!isfinite(z) || z < 0)
		z = 0;
	lsq_add(f, (const double[LSQ_TERMS]){ w, p, z }, t, COST_FIT_MIN_EPOCHS);
}

/* b's standard error at most COST_FIT_MAX_REL_SE of @v (lsq_se()). */
static bool fit_coef_precise(const struct lsq *f, int k, double explained,
			     double var_v, double v)
{
	return lsq_se(f, k, explained, var_v) <= COST_FIT_MAX_REL_SE * v;
}

/* The fit's terms: struct lsq's x_0, x_1, x_2. */
enum { FIT_W, FIT_P, FIT_Z };

int cost_solve2(const struct lsq *f, double *a, double *b)
{
	static const int wp[2] = { FIT_W, FIT_P };
	double c[2], var[2], explained, var_b;
	int k = 2;

	*a = *b = NAN;
	if (!f->ok || lsq_solve2(f, FIT_W, FIT_P, COST_FIT_MIN_SPREAD, c, var))
		return -1;
	explained = lsq_explained(f, wp, 2, c);
	var_b = var[1];
	if (c[0] < 0) {
		c[0] = 0;
		lsq_solve1(f, FIT_P, &c[1], &var_b);
		explained = lsq_explained(f, &wp[1], 1, &c[1]);
		k = 1;
	}
	if (!(c[1] > 0) || !isfinite(c[0]) || !isfinite(c[1]))
		return -1;
	if (!fit_coef_precise(f, k, explained, var_b, c[1]))
		return -1;
	*a = c[0];
	*b = c[1];
	return 0;
}

int cost_solve3(const struct lsq *f, double *a, double *b, double *e,
		  char *why, size_t len)
{
	static const char *const term[] = { "wake-ups", "packets", "empty reads" };
	static const int all[3] = { FIT_W, FIT_P, FIT_Z }, pz[2] = { FIT_P, FIT_Z };
	double x[3], var[3], explained, var_b, var_e;
	int bad, k;

	*a = *b = *e = NAN;
	if (why && len)
		why[0] = '\0';
	if (!f->ok || !(f->xx[FIT_P][FIT_P] > 0)) {
		if (why)
			snprintf(why, len, "too few epochs");
		return -1;
	}
	if (!(f->xx[FIT_Z][FIT_Z] > 0)) {
		if (why)
			snprintf(why, len, "no empty reads");
		return -1;
	}
	if (f->xx[FIT_W][FIT_W] > 0) {
		if (lsq_solve(f, all, 3, COST_FIT_MIN_SPREAD, x, var, &bad)) {
			if (!(f->x[FIT_W] <= COST_FIT_RARE_WAKEUPS * f->x[FIT_Z])) {
				if (why)
					snprintf(why, len, "%s not separable from the other terms",
						 term[all[bad]]);
				return -1;
			}
			/* A polling receiver's few wake-ups: without them. */
		} else if (x[0] >= 0) {
			*a = x[0];
			explained = lsq_explained(f, all, 3, x);
			var_b = var[1];
			var_e = var[2];
			k = 3;
			x[0] = x[1];
			x[1] = x[2];
			goto check;
		} else {
			/* Negative a: not physical, the fit without it (a = 0). */
			*a = 0;
		}
	}
	if (lsq_solve(f, pz, 2, COST_FIT_MIN_SPREAD, x, var, &bad)) {
		if (why)
			snprintf(why, len, "%s not separable from %s", term[pz[bad]],
				 term[pz[1 - bad]]);
		*a = NAN;
		return -1;
	}
	explained = lsq_explained(f, pz, 2, x);
	var_b = var[0];
	var_e = var[1];
	k = 2;
check:
	if (!(x[0] > 0) || x[1] < 0) {
		if (why)
			snprintf(why, len, "%s", !(x[0] > 0) ? "packet cost not positive" :
				 "negative cost per empty read");
		*a = NAN;
		return -1;
	}
	if (!fit_coef_precise(f, k, explained, var_b, x[0])) {
		if (why)
			snprintf(why, len, "packet cost uncertain: standard error above "
				 "%.0f %% of %.0f ns", 100 * COST_FIT_MAX_REL_SE, x[0]);
		*a = NAN;
		/*
		 * A receiver that spins most of its time leaves its packets
		 * a small part of the on-CPU time to explain, so b can stay
		 * uncertain for long (a busy-polling receiver at k = 2 on the
		 * test VM: all of a 90-s phase) while e, the cost of what
		 * fills the rest, is well known. e alone takes the spin out
		 * of the saturated epochs (busy_add()).
		 */
		if (x[1] > 0 && fit_coef_precise(f, k, explained, var_e, x[1])) {
			*e = x[1];
			return -2;
		}
		return -1;
	}
	*b = x[0];
	*e = x[1];
	return 0;
}

double busy_sums_value(const struct busy_sums *s, double *load)
{
	if (load)
		*load = NAN;
	if (!s->ok || !(s->pkts > 0) || !isfinite(s->ns) || !(s->ns > 0))
		return NAN;
	if (load)
		*load = s->load_pkts / s->pkts;
	return s->ns / s->pkts;
}

static void sat_decay(struct busy_sums *s, double d)
{
	s->ns *= d;
	s->pkts *= d;
	s->load_pkts *= d;
	s->n *= d;
}

/* The sums of the busy epochs: saturated, kept up, and kept up all in. */
static void busy_decay(struct learn *l, double d)
{
	sat_decay(&l->busy.sat, d);
	sat_decay(&l->busy.kept, d);
	sat_decay(&l->busy.all_in, d);
}

static void sat_fold(struct busy_sums *sat, double oncpu, double pkts, double load)
{
	sat->ns += oncpu;
	sat->pkts += pkts;
	sat->load_pkts += load * pkts;
	sat->n += 1;
	sat->taken++;
	if (sat->pkts >= BUSY_MIN_PKTS)
		sat->ok = true;
}

/*
 * The load beside the receiver in @e: #C + #I of the CPUs it ran on,
 * weighted by its on-CPU time on each (@load), and its fair share of a
 * CPU there, (1 - IRQ time) / (#C + #I + 1) weighted alike (@fair).
 * False when its CPUs or their task counts are not known.
 */
static bool receiver_load(const struct rxb_sock_meas *s, const struct rxb_epoch *e,
			  double *load, double *fair)
{
	double total = ran_on_total_ns(s);

	*load = 0;
	*fair = 0;
	if (!(total > 0))
		return false;
	for (int i = 0; i < ran_on_count(s); i++) {
		const struct rxb_cpu_meas *c;
		double w = (double)s->ran_on[i].oncpu_ns / total, irq = 0, n;
		int cpu = s->ran_on[i].cpu;

		if (!s->ran_on[i].oncpu_ns)
			continue;
		if (cpu < 0 || cpu >= e->ncpus || cpu >= RXB_MAX_CPUS)
			return false;
		c = &e->cpus[cpu];
		n = c->cpu_bound + c->io_bound;
		if (!isfinite(n) || n < 0)
			return false;
		/* Not measured (an unsampled epoch's softirq): none assumed. */
		if (isfinite(c->softirq_frac) && c->softirq_frac > 0)
			irq += c->softirq_frac;
		if (isfinite(c->hardirq_frac) && c->hardirq_frac > 0)
			irq += c->hardirq_frac;
		*fair += w * fmax(0, 1 - irq) / (n + 1);
		*load += w * n;
	}
	return true;
}

/*
 * Is this a busy epoch: did the receiver do nothing but dequeue? On
 * success the receiver's load (#C + #I over its CPUs, weighted by its
 * on-CPU time there) goes to @load, and whether its socket overflowed
 * (rcvbuf drops; any drops of the socket when the reasons were not
 * measured) to @overflowed: a saturated epoch if it did, a kept-up one if
 * not. @ratio_ns is the all-epochs on-CPU time per packet before this
 * epoch. Unless the drops were measured it is neither. The tests, each
 * for a kind of epoch that does not measure the cost of a busy receiver:
 *
 *  - it hardly slept: at least BUSY_MIN_PPW packets per wake-up. At the
 *    measured 6.5-10 us per wake-up that is at most 25 ns per packet,
 *    < 2.5 % of the ~1.1-1.7 us a packet costs; a stricter bound refuses
 *    full-share epochs with 500-800 packets per wake-up (a few wake-ups
 *    at the blast's edges), about a third of the evidence in the e2e
 *    runs. Overflowing epochs with 20-70 packets per wake-up exist (the
 *    receiver slept, then a burst came).
 *  - it ran for at least BUSY_MIN_SHARE of its fair share of the epoch,
 *    (1 - IRQ time) / (#C + #I + 1) of it: a receiver with a full queue
 *    is always runnable and the scheduler shares the CPU equally (measured
 *    in overflowing epochs: 0.306 of CPU 1 at k = 2, 0.241 at k = 3, i.e.
 *    0.92 and 0.96 of the fair share). An epoch that a blast covers only
 *    partly (0.02-0.7 of the fair share in the e2e runs) mixes in sleeps
 *    and the receiver's first epoch misses the time before its thread was
 *    identified (down to 174 ns/pkt measured).
 *  - its on-CPU time per packet is at most BUSY_MAX_OVER_RATIO times the
 *    all-epochs ratio. A saturated receiver pays no wake-ups, so it costs
 *    less per packet than the average that includes them; far more means
 *    it spent the epoch on other work while the sender's data overflowed
 *    (between transfers: 1088 packets dequeued at 110 us each with 0.84 of
 *    the fair share, 53-104 us in four more epochs; the ratio was 2-4 us).
 *  - it did not spin, or its spin is known: a polling receiver drains the
 *    queue in its on-CPU windows and then turns on the empty socket until
 *    the CPU is taken from it, so its overflowing epochs are mostly spin
 *    (about 80 % of on-CPU time at k = 3 in the e2e runs). With the cost
 *    of an empty read @spin_ns known (e of the three-term fit) the spin,
 *    e x empty reads, is taken off the on-CPU time (@oncpu gets what is
 *    left: the packets' time; nothing left refuses the epoch). Without it,
 *    more than one empty read per BUSY_MIN_PPW packets refuses the
 *    epoch: a blocking receiver's recvmmsg() ends each wake-up with one,
 *    the same bound as for wake-ups, and at ~1-2 us per read that is
 *    < 5 ns per packet. The fair-share test uses the whole on-CPU time:
 *    it asks whether the receiver was runnable, spinning or not.
 *
 * With BUSY_ALL_IN the first and the last test are skipped and @oncpu is
 * the whole on-CPU time: the cost per packet with the wake-ups and any spin
 * in it, which bounds the cost of the packets alone from above
 * (struct learn.busy.all_in). With BUSY_ANY_SHARE the fair-share test is
 * skipped, for the cost per packet alone (struct learn.busy.spread): a blast
 * that covers part of the epoch costs the same per packet. In its place
 * the cost must be at least the all-epochs ratio over
 * BUSY_MAX_OVER_RATIO, which refuses a receiver's first epoch.
 */
enum busy_test {
	BUSY_STRICT,
	BUSY_ALL_IN,
	BUSY_ANY_SHARE,
};

static bool epoch_busy(const struct rxb_sock_meas *s, const struct rxb_epoch *e,
		       double ratio_ns, double spin_ns, enum busy_test test,
		       double *load, double *oncpu, bool *overflowed)
{
	double p = (double)s->pkts_out, t = (double)s->receiver_oncpu_ns, tp = t;
	double z = s->counts_valid ? (double)s->empty_reads : 0;
	uint64_t drops = s->reasons_valid ? s->drops_rcvbuf : s->drops_valid ? s->drops : 0;
	double len, fair, ld;

	*load = NAN;
	*oncpu = NAN;
	*overflowed = drops > 0;
	if (!s->reasons_valid && !s->drops_valid)
		return false;
	if (!(p > 0) || !(t > 0))
		return false;
	if (test == BUSY_ALL_IN)
		z = 0;
	else if ((double)s->recv_wakeups * BUSY_MIN_PPW > p)
		return false;
	if (z > 0) {
		if (spin_ns > 0 && isfinite(spin_ns))
			tp = t - spin_ns * z;
		else if (z * BUSY_MIN_PPW > p)
			return false;
		if (!(tp > 0))
			return false;
	}
	if (e->end_ns <= e->start_ns)
		return false;
	len = (double)(e->end_ns - e->start_ns);
	if (!receiver_load(s, e, &ld, &fair))
		return false;
	if (test != BUSY_ANY_SHARE && !(t >= BUSY_MIN_SHARE * fair * len))
		return false;
	if (!(ratio_ns > 0) || !(tp <= BUSY_MAX_OVER_RATIO * ratio_ns * p))
		return false;
	if (test == BUSY_ANY_SHARE && !(tp * BUSY_MAX_OVER_RATIO >= ratio_ns * p))
		return false;
	*load = ld;
	*oncpu = tp;
	return true;
}

/* Keep a busy epoch's cost per packet in the ring of struct learn.busy.spread. */
static void spread_push(struct learn *l, double oncpu, double pkts, double load)
{
	struct busy_epoch *b = &l->busy.spread[l->busy.spread_next];

	b->ns_per_pkt = oncpu / pkts;
	b->pkts = pkts;
	b->load = load;
	l->busy.spread_next = (l->busy.spread_next + 1) % BUSY_SPREAD_EPOCHS;
	if (l->busy.spread_n < BUSY_SPREAD_EPOCHS)
		l->busy.spread_n++;
}

/*
 * Fold a busy epoch into the saturated or the kept-up estimate (as its
 * socket overflowed or not), and one without overflow, judged all in,
 * into the busy one; decay them in any other. Every epoch in which the
 * receiver hardly slept, busy or not, goes into the spread's ring. The
 * sums decay with LEARN_TAU_S like every cost here, and a value once
 * measured stays (decay scales the sums alike) until new saturated epochs
 * outweigh it. Saturated epochs are rare - about one per transfer that
 * overflows, inside its first blast - so a value that expired with its
 * weight would be gone before the next transfer starts, which is when it
 * is needed. Staleness is a matter of load, not of age: the cost per
 * packet depends on the co-runners (1398 ns saturated at k = 1, 1136 at
 * k = 2, docs/e2e.md), so a value measured at another #C + #I is not used
 * (cost_choose(), BUSY_MAX_DLOAD), and one saturated epoch at the new
 * load outweighs the old sums at once: they hold the old epochs' 40-60 k
 * packets x exp(-gap / 5 s), the new epoch as many undecayed.
 */
static void busy_add(struct learn *l, const struct rxb_sock_meas *s,
		       const struct rxb_epoch *e, double ratio_ns, double k)
{
	double load, oncpu, p = (double)s->pkts_out;
	bool over;

	busy_decay(l, k);
	if (epoch_busy(s, e, ratio_ns, NAN, BUSY_ALL_IN, &load, &oncpu, &over) && !over)
		sat_fold(&l->busy.all_in, oncpu, p, load);
	if (epoch_busy(s, e, ratio_ns, l->cost.spin_e_ns, BUSY_ANY_SHARE, &load, &oncpu, &over))
		spread_push(l, oncpu, p, load);
	if (!epoch_busy(s, e, ratio_ns, l->cost.spin_e_ns, BUSY_STRICT,
			&load, &oncpu, &over)) {
		if (over)
			l->busy.sat.refused++;
		return;
	}
	sat_fold(over ? &l->busy.sat : &l->busy.kept, oncpu, p, load);
}

static void learn_stage_b(struct learn *l, const struct rxb_sock_meas *s,
			  const struct rxb_epoch *e, double k)
{
	double out = (double)s->pkts_out;
	/* The receiver's scheduling is known with the scheduler probe only. */
	bool sched = s->receiver_oncpu_ns > 0 && isfinite(s->cpu_ns_per_pkt);

	if (sched) {
		/* Before the ratio takes this epoch in: it compares against it. */
		busy_add(l, s, e, ewma_ratio_value(&l->cpu_ns_per_pkt), k);
		ewma_ratio_add(&l->cpu_ns_per_pkt, k, (double)s->receiver_oncpu_ns, out,
			  LEARN_MIN_PKTS);
		double fa, fb, fe;

		fit_add(&l->cost.sums, k, (double)s->recv_wakeups, out,
			(double)s->empty_reads, (double)s->receiver_oncpu_ns);
		if (!cost_solve2(&l->cost.sums, &fa, &fb)) {
			l->cost.a_ns = fa;
			l->cost.b_ns = fb;
			l->cost.known = true;
		}
		switch (cost_solve3(&l->cost.sums, &fa, &fb, &fe, NULL, 0)) {
		case 0:
			l->cost.a3_ns = fa;
			l->cost.b3_ns = fb;
			l->cost.e3_ns = fe;
			l->cost.known3 = true;
			l->cost.spin_e_ns = fe;
			break;
		case -2:
			l->cost.spin_e_ns = fe;
			break;
		}
	} else {
		busy_decay(l, k);
		ewma_ratio_add(&l->cpu_ns_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
		lsq_decay(&l->cost.sums, k);
	}
	/*
	 * Zero wake-ups with packets dequeued: the receiver never slept,
	 * which the ratio keeps as num > 0 with den = 0 (a batch of K).
	 */
	if (sched)
		ewma_ratio_add(&l->pkts_per_wakeup, k, out, (double)s->recv_wakeups, 1.0);
	else
		ewma_ratio_add(&l->pkts_per_wakeup, k, 0, 0, 1.0);
	if (s->pkts_enqueued && s->truesize_per_pkt_bytes > 0)
		ewma_ratio_add(&l->truesize_per_pkt, k,
			  s->truesize_per_pkt_bytes * (double)s->pkts_enqueued,
			  (double)s->pkts_enqueued, LEARN_MIN_PKTS);
	else
		ewma_ratio_add(&l->truesize_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
	learn_rcvbuf(l, s);
	learn_proto(l, s);
	/*
	 * Where it runs while it receives. An epoch of a few packets says
	 * little: a new receiver's first one holds its start-up, which ran
	 * before it pinned itself (rxbneck-recv --cpu: 47 % of that epoch on
	 * the other CPU, so #C 1.12 instead of 2 and a rate of 4.07 instead of
	 * 2.67 Gb/s for the next 250 ms; 11 of the 25 --follow starts that
	 * had it lost packets in their first round, 4 of the 23 without).
	 */
	if (out >= LEARN_MIN_PKTS || !l->ncpus)
		learn_placement(l, s);
}

/*
 * The NET_RX softirq time spent on the CPUs the receiver ran on (weighted
 * by its time on each), per packet that reached the socket: interrupt work
 * that preempts the receiver and grows with the arrival rate (stage A on
 * the receiver's CPU: RPS, or the NIC's IRQ there). All of it is put on
 * the watched flow's packets; other traffic through that CPU makes it an
 * overestimate, which errs toward a lower rate.
 */
static void learn_irq(struct learn *l, const struct rxb_sock_meas *s,
		      const struct rxb_epoch *e, double k)
{
	double total = ran_on_total_ns(s), ns = 0;

	if (!(total > 0) || !s->pkts_in || e->end_ns <= e->start_ns) {
		ewma_ratio_add(&l->irq_ns_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
		return;
	}
	for (int i = 0; i < ran_on_count(s); i++) {
		int cpu = s->ran_on[i].cpu;
		double f;

		if (cpu < 0 || cpu >= e->ncpus || cpu >= RXB_MAX_CPUS)
			continue;
		f = e->cpus[cpu].softirq_frac;
		if (!isfinite(f)) {
			ewma_ratio_add(&l->irq_ns_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
			return;
		}
		ns += (double)s->ran_on[i].oncpu_ns / total * fmin(fmax(f, 0), 1);
	}
	ns *= (double)(e->end_ns - e->start_ns);
	ewma_ratio_add(&l->irq_ns_per_pkt, k, ns, (double)s->pkts_in, LEARN_MIN_PKTS);
}

/*
 * A kernel without CONFIG_IRQ_TIME_ACCOUNTING charges interrupt time to
 * the task it interrupts, so the receiver's measured CPU time holds its
 * part of the softirq and hard IRQ work on its CPUs: a fraction f of the
 * CPU's time goes to interrupts, and it falls on every task in proportion
 * to its run time. Copy @s into @out with (1 - f) of the receiver's time on
 * each CPU: its own work, which the cost per packet is about (the model
 * takes the interrupts' share off separately, irq_ns_per_pkt). False when
 * an interrupt share is not known (then @s is used as it is).
 */
static bool irq_off_task(const struct rxb_sock_meas *s, const struct rxb_epoch *e,
			 struct rxb_sock_meas *out)
{
	double before = ran_on_total_ns(s), after = 0;

	*out = *s;
	if (!(before > 0))
		return false;
	for (int i = 0; i < ran_on_count(s); i++) {
		int cpu = s->ran_on[i].cpu;
		double f, on = (double)s->ran_on[i].oncpu_ns;

		if (cpu < 0 || cpu >= e->ncpus || cpu >= RXB_MAX_CPUS)
			return false;
		f = e->cpus[cpu].softirq_frac;
		if (!isfinite(f))
			return false;
		if (isfinite(e->cpus[cpu].hardirq_frac))
			f += e->cpus[cpu].hardirq_frac;
		f = fmin(fmax(f, 0), 1);
		after += on * (1 - f);
		out->ran_on[i].oncpu_ns = (uint64_t)(on * (1 - f));
	}
	out->receiver_oncpu_ns = (uint64_t)((double)s->receiver_oncpu_ns * (after / before));
	out->cpu_ns_per_pkt = s->cpu_ns_per_pkt * (after / before);
	return true;
}

/*
 * @s is the flow's socket in the same epoch. Its datagrams give the
 * datagrams per skb the device's polls carried: a poll's "work" counts
 * skbs, and a UDP GSO packet (a local sender with UDP_SEGMENT over veth
 * or lo, tx-udp-segmentation on) is one skb through the backlog that the
 * UDP layer cuts into up to 64 datagrams inside the same softirq. Counted
 * per skb, stage A's capacity came out several times too low on the e2e
 * testbed with --gso 16 (2-4 Gb/s where 10 Gb/s went through without
 * loss; 1.7-5.1 datagrams per skb, docs/e2e.md §5.14). The device may
 * carry other traffic as well, so only a surplus of the flow's datagrams
 * over the device's skbs counts: at least one datagram per skb, exact
 * when the flow is the device's only traffic. A NIC's "work" counts
 * frames before GRO, so it stays at 1.
 */
static void learn_stage_a(struct learn *l, const struct rxb_napi_meas *n,
			  const struct rxb_sock_meas *s, double k)
{
	double skbs = (double)n->pkts;

	if (strncmp(l->napi_dev, n->dev, sizeof(l->napi_dev))) {
		/* Another path now: its costs are not comparable. */
		ewma_ratio_reset(&l->napi_ns_per_poll);
		ewma_ratio_reset(&l->napi_pkts_per_poll);
		ewma_ratio_reset(&l->napi_dgrams_per_skb);
		rxb_strlcpy(l->napi_dev, n->dev, sizeof(l->napi_dev));
		k = 1.0;
	}
	/* Polls that did no work say nothing of the datagrams per skb. */
	ewma_ratio_add(&l->napi_dgrams_per_skb, k, skbs > 0 ? fmax(skbs, (double)s->pkts_in) : 0,
		  skbs, LEARN_MIN_PKTS);
	if (n->service_ns_per_poll > 0 && isfinite(n->service_ns_per_poll))
		ewma_ratio_add(&l->napi_ns_per_poll, k,
			  n->service_ns_per_poll * (double)n->polls, (double)n->polls,
			  LEARN_MIN_POLLS);
	else
		ewma_ratio_add(&l->napi_ns_per_poll, k, 0, 0, LEARN_MIN_POLLS);
	ewma_ratio_add(&l->napi_pkts_per_poll, k, (double)n->pkts, (double)n->polls,
		  LEARN_MIN_POLLS);
}

/*
 * Loss episodes that ended in this epoch. Drops are counted in every
 * epoch, sampled or not (kfree_skb stays attached), so this runs in all of
 * them; the decay of equal weights leaves the median as it was.
 */
static void learn_episodes(struct learn *l, const struct rxb_sock_meas *s,
			   double k, uint64_t seq)
{
	double w = 0;

	for (int i = 0; i < RXB_EPISODE_BUCKETS; i++) {
		l->episode_hist[i] *= k;
		w += l->episode_hist[i];
	}
	if (!s || !s->reasons_valid)
		goto out;
	for (int i = 0; i < s->nepisode_bins && i < RXB_EPISODE_BINS; i++) {
		const struct rxb_episode_bin *b = &s->episodes_ended[i];

		if (b->bucket >= RXB_EPISODE_BUCKETS || !b->count)
			continue;
		l->episode_hist[b->bucket] += b->count;
		l->episodes_ended += b->count;
		l->episodes_seq = seq;
		w += b->count;
	}
out:
	l->episodes_w = w;
	if ((double)l->episodes_ended >= LEARN_MIN_EPISODES)
		l->episodes_ok = true;
}

double learn_episode_pkts(const struct learn *l)
{
	double half = l->episodes_w / 2, sum = 0;

	if (!l->episodes_ok || !(l->episodes_w > 0))
		return NAN;
	for (unsigned int i = 0; i < RXB_EPISODE_BUCKETS; i++) {
		sum += l->episode_hist[i];
		if (sum >= half && l->episode_hist[i] > 0)
			return sqrt(rxb_episode_bucket_lo(i) * rxb_episode_bucket_lo(i + 1));
	}
	return NAN;
}

/* Decay every estimate of an idle flow so that stale costs lose weight. */
static void learn_decay(struct learn *l, double k)
{
	struct ewma_ratio *r[] = {
		&l->cpu_ns_per_pkt, &l->pkts_per_wakeup, &l->truesize_per_pkt,
		&l->napi_ns_per_poll, &l->napi_pkts_per_poll, &l->napi_dgrams_per_skb,
		&l->irq_ns_per_pkt,
	};

	for (size_t i = 0; i < RXB_ARRAY_SIZE(r); i++)
		ewma_ratio_add(r[i], k, 0, 0, INFINITY);
	lsq_decay(&l->cost.sums, k);
	busy_decay(l, k);
}


/*
 * An epoch in which the per-packet probes were detached ([measure]
 * net_probe_every > 1): its socket and NAPI counts were not measured,
 * which says nothing about whether the flow was busy.
 */
static bool net_unsampled(const struct rxb_epoch *e)
{
	return e->net_probe_every > 1 && !e->net_sampled;
}

void inputs_update(struct learn *l, const struct learn_disk *disk, uint16_t port,
	       const struct rxb_epoch *e, double dt_s, const struct inputs_env *env,
	       struct inputs *out)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, port);
	double k = ewma_decay(dt_s, LEARN_TAU_S);

	learn_episodes(l, s, k, e->seq);
	if (net_unsampled(e)) {
		/*
		 * Learn no cost, decay nothing: the receive-path costs stay as
		 * the last sampled epoch left them and the flow keeps its
		 * traffic state. The task classes are this epoch's, and so is
		 * the receiver's placement when the scheduler saw it run (the
		 * scheduler probe is always attached), so the rate still
		 * follows the load on the receiver's CPU.
		 */
		if (s && s->ncpus_ran > 0)
			learn_placement(l, s);
	} else if (sock_has_traffic(s)) {
		const struct rxb_napi_meas *n = busiest_napi(e);
		struct rxb_sock_meas own;

		if (env->irq_in_task_time && irq_off_task(s, e, &own))
			learn_stage_b(l, &own, e, k);
		else
			learn_stage_b(l, s, e, k);
		learn_irq(l, s, e, k);
		if (n && s->pkts_in) {
			learn_stage_a(l, n, s, k);
		} else {
			ewma_ratio_add(&l->napi_ns_per_poll, k, 0, 0, INFINITY);
			ewma_ratio_add(&l->napi_pkts_per_poll, k, 0, 0, INFINITY);
			ewma_ratio_add(&l->napi_dgrams_per_skb, k, 0, 0, INFINITY);
		}
		l->origin = VALUE_MEASURED;
		l->last_traffic_ns = env->now_ns;
		l->last_traffic_seq = e->seq;
	} else {
		learn_decay(l, k);
	}
	inputs_compute(l, disk, port, e, env, out);
}

/* ------------------------------------------------------------ compute -- */

static enum value_src cost_src(const struct learn *l, bool fresh)
{
	if (fresh)
		return VALUE_MEASURED;
	return l->origin == VALUE_HISTORY ? VALUE_HISTORY : VALUE_LEARNED;
}

/* Why the receiver's cost is not known: the most specific reason first. */
static const char *no_cost_why(const struct learn *l, const struct rxb_epoch *e,
			       uint16_t port)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, port);

	if (e && !(e->probes & RXB_PROBE_SOCKQ))
		return "socket not measured: the socket probe is not loaded";
	if (e && !(e->probes & RXB_PROBE_SCHED))
		return "receiver CPU time not measured: the scheduler probe is not loaded";
	if (s && !s->counts_valid)
		return "socket counters not measured this epoch";
	if (l->origin == VALUE_MISSING)
		return "no traffic seen on the port yet";
	return "too few packets measured";
}

/* #C and #I over the receiver's CPUs, weighted by its on-CPU time there. */
static void workload(const struct learn *l, const struct rxb_epoch *e,
		     struct inputs_stage_b *b)
{
	double c = 0, i = 0;

	b->ncpus = l->ncpus;
	memcpy(b->cpu, l->cpu, sizeof(b->cpu));
	memcpy(b->cpu_share, l->cpu_share, sizeof(b->cpu_share));
	if (!e) {
		value_missing(&b->cpu_bound, "no epoch measured yet");
		value_missing(&b->io_bound, "no epoch measured yet");
		return;
	}
	if (!l->ncpus) {
		value_missing(&b->cpu_bound, "receiver thread not seen yet");
		value_missing(&b->io_bound, "receiver thread not seen yet");
		return;
	}
	for (int k = 0; k < l->ncpus; k++) {
		int cpu = l->cpu[k];

		if (cpu < 0 || cpu >= e->ncpus || cpu >= RXB_MAX_CPUS) {
			value_missing(&b->cpu_bound, "CPU %d not in the record", cpu);
			value_missing(&b->io_bound, "CPU %d not in the record", cpu);
			return;
		}
		c += l->cpu_share[k] * e->cpus[cpu].cpu_bound;
		i += l->cpu_share[k] * e->cpus[cpu].io_bound;
	}
	if (isfinite(c) && c >= 0)
		value_set(&b->cpu_bound, c, VALUE_MEASURED);
	else
		value_missing(&b->cpu_bound, "task classes not measured");
	if (isfinite(i) && i >= 0)
		value_set(&b->io_bound, i, VALUE_MEASURED);
	else
		value_missing(&b->io_bound, "task classes not measured");
}

static void disk_rates(const struct learn_disk *d, struct inputs_stage_b *b)
{
	double svc = ewma_ratio_value(&d->service_ns);
	double burst = ewma_ratio_value(&d->burst_ns);

	if (svc > 0)
		value_set(&b->mu_disk_per_s, 1e9 / svc, VALUE_MEASURED);
	else
		value_missing(&b->mu_disk_per_s, "too few disk completions measured");
	if (burst > 0)
		value_set(&b->mu_pio_per_s, 1e9 / burst, VALUE_MEASURED);
	else
		value_missing(&b->mu_pio_per_s, "I/O-bound CPU bursts not measured");
}

static uint32_t clamp_u32(double v, uint32_t lo, uint32_t hi)
{
	if (!(v >= lo))
		return lo;
	if (v >= hi)
		return hi;
	return (uint32_t)llround(v);
}

/* The receiver's load now: #C + #I of its CPUs, NaN when not measured. */
static double inputs_receiver_load(const struct inputs_stage_b *b)
{
	if (b->cpu_bound.src == VALUE_MISSING || b->io_bound.src == VALUE_MISSING)
		return NAN;
	return b->cpu_bound.v + b->io_bound.v;
}

/* The fit's other terms for a why: " + A ns/wake-up[ + E ns/empty read]". */
static void fit_terms(char *buf, size_t size, double a, double e)
{
	int n = 0;

	buf[0] = '\0';
	if (isfinite(a))
		n = snprintf(buf, size, " + %.0f ns/wake-up", a);
	if (isfinite(e) && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " + %.0f ns/empty read", e);
}

/*
 * With @depth ([model] queue_depth_cost): the kept-up cost (in @b already)
 * when it and the saturated one were both measured at about the present
 * load and it is the lower, the saturated one going to
 * cpu_ns_per_pkt_full for the rates that overflow the queue. 0 if so.
 */
static int choose_kept_up(bool depth, double now, double sat, double sat_load,
			  const char *terms, double ratio, enum value_src src,
			  struct inputs_stage_b *b)
{
	double kept = b->cpu_ns_per_pkt_kept_up, kept_load = b->kept_up_load;

	if (!depth || !(kept > 0) || !(kept < sat) || !isfinite(now) ||
	    !(fabs(now - kept_load) <= BUSY_MAX_DLOAD))
		return -1;
	value_set(&b->cpu_ns_per_pkt, kept, src);
	b->cpu_ns_per_pkt_basis = COST_KEPT_UP;
	b->cpu_ns_per_pkt_full = sat;
	if (isfinite(b->cpu_ns_per_pkt_fit))
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "kept up at #C+#I %.1f; saturated %.0f once overflowed, at %.1f "
			 "(fit %.0f ns/pkt%s, ratio %.0f)", kept_load, sat, sat_load,
			 b->cpu_ns_per_pkt_fit, terms, ratio);
	else
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "kept up at #C+#I %.1f; saturated %.0f once overflowed, at %.1f "
			 "(no fit yet, ratio %.0f)", kept_load, sat, sat_load, ratio);
	return 0;
}

/*
 * Is the receiver's on-CPU time too much spin to be charged to its
 * packets: COST_RATIO_MAX_EMPTY_READS empty reads per packet or more over
 * the fit's epochs (a busy-polling one), or a spin known from e to be
 * COST_FIT_MAX_SPIN of that time (@spin_share, NaN when e is not known)?
 */
static bool spins(const struct learn *l, double spin_share)
{
	return (l->cost.sums.x[FIT_P] > 0 &&
		l->cost.sums.x[FIT_Z] >= COST_RATIO_MAX_EMPTY_READS * l->cost.sums.x[FIT_P]) ||
	       spin_share >= COST_FIT_MAX_SPIN;
}

/*
 * cpu_ns_per_pkt: the saturated cost when it was measured at about the
 * present load (or the kept-up one below it, choose_kept_up()), else b of
 * the fit (or of the last separable fit), else the ratio; cost_cap() may
 * lower it after. The why keeps
 * "ratio N" and "+ A ns/wake-up" in every form that has them
 * (tests/e2e/analyze.py reads them).
 */
static void cost_choose(const struct learn *l, const struct rxb_epoch *e,
			uint16_t port, enum value_src src, bool depth, struct inputs_stage_b *b)
{
	double ns = ewma_ratio_value(&l->cpu_ns_per_pkt);
	double sat_load, sat = busy_sums_value(&l->busy.sat, &sat_load);
	double kept_load, kept = busy_sums_value(&l->busy.kept, &kept_load);
	double fa = NAN, fb = NAN, fe = NAN, now = inputs_receiver_load(b);
	char other[64] = "", terms[64] = "";
	size_t len;
	bool spin;

	b->cpu_ns_per_pkt_ratio = ns > 0 ? ns : NAN;
	b->cpu_ns_per_wakeup = NAN;
	b->cpu_ns_per_pkt_fit = NAN;
	b->cpu_ns_per_pkt_saturated = sat > 0 ? sat : NAN;
	b->saturated_load = sat > 0 ? sat_load : NAN;
	b->cpu_ns_per_pkt_kept_up = kept > 0 ? kept : NAN;
	b->kept_up_load = kept > 0 ? kept_load : NAN;
	b->cpu_ns_per_pkt_full = NAN;
	b->cpu_ns_per_pkt_basis = COST_NONE;
	b->cpu_ns_per_empty_read = NAN;
	b->cost_fit_terms = 0;
	b->spin_share = NAN;
	b->cost_fit_note[0] = '\0';
	if (learn_stream_only(l)) {
		value_missing(&b->cpu_ns_per_pkt,
			    "no datagrams: the port's sockets are %s (protocol %u), whose "
			    "packets are coalesced segments; the model is of a UDP receiver",
			    l->other_ipproto == IPPROTO_TCP ? "TCP" : "not UDP",
			    l->other_ipproto);
		return;
	}
	if (!(ns > 0)) {
		value_missing(&b->cpu_ns_per_pkt, "%s", no_cost_why(l, e, port));
		return;
	}
	if (isfinite(l->cost.spin_e_ns) && l->cost.sums.y > 0)
		b->spin_share = l->cost.spin_e_ns * l->cost.sums.x[FIT_Z] / l->cost.sums.y;
	/*
	 * A spinning receiver's two-term fits (the present one and the
	 * last) put the spin on its packets and its few wake-ups: measured,
	 * a busy-polling receiver at k = 2 got b = 4.6-6.0 us + 22 ms per
	 * wake-up (its three-term fit, refused as imprecise, had b = 0.9-1.5
	 * us), and a rate of 0.8-1.0 Gb/s where 2.9 went through. Like the
	 * ratio (below), they are then no cost.
	 */
	spin = spins(l, b->spin_share);
	if (!cost_solve3(&l->cost.sums, &fa, &fb, &fe, b->cost_fit_note,
			   sizeof(b->cost_fit_note))) {
		/* Three terms: the spin on the empty socket is not the packets'. */
		b->cpu_ns_per_pkt_basis = COST_FIT;
		b->cost_fit_terms = 3;
		b->spin_share = fe * l->cost.sums.x[FIT_Z] / l->cost.sums.y;
	} else if (l->cost.known3 && b->spin_share >= COST_FIT_MAX_SPIN) {
		/*
		 * The receiver spins (e x empty reads a large share of its
		 * on-CPU time) but the recent epochs cannot separate the three
		 * terms: a busy-polling receiver at a steady rate turns its
		 * loop about as often per packet in every epoch. The two-term
		 * fit would charge the spin to the packets; keep the last
		 * three-term fit, as the last separable fit is kept below.
		 */
		fa = l->cost.a3_ns;
		fb = l->cost.b3_ns;
		fe = l->cost.e3_ns;
		b->cpu_ns_per_pkt_basis = COST_LAST_FIT;
		b->cost_fit_terms = 3;
	} else if (!spin && !cost_solve2(&l->cost.sums, &fa, &fb)) {
		b->cpu_ns_per_pkt_basis = COST_FIT;
		b->cost_fit_terms = 2;
	} else if (!spin && l->cost.known) {
		/*
		 * The recent epochs all had about the same packets per
		 * wake-up (a steady low rate: measured 4 per wake-up for
		 * 20 s), which decays the fit's spread below separability.
		 * The per-packet cost is the receiver's code on this CPU, not
		 * the rate; the ratio would charge each packet a / 4 again
		 * (3949 ns against b = 1470 ns, and the rate with it at 1.49
		 * instead of 3.8 Gb/s). Keep the last separable fit.
		 */
		fa = l->cost.a_ns;
		fb = l->cost.b_ns;
		b->cpu_ns_per_pkt_basis = COST_LAST_FIT;
		b->cost_fit_terms = 2;
	} else if (l->cost.known3) {
		fa = l->cost.a3_ns;
		fb = l->cost.b3_ns;
		fe = l->cost.e3_ns;
		b->cpu_ns_per_pkt_basis = COST_LAST_FIT;
		b->cost_fit_terms = 3;
	} else {
		b->cpu_ns_per_pkt_basis = COST_RATIO;
	}
	if (b->cpu_ns_per_pkt_basis != COST_RATIO) {
		b->cpu_ns_per_pkt_fit = fb;
		b->cpu_ns_per_wakeup = fa;
		if (b->cost_fit_terms == 3) {
			b->cpu_ns_per_empty_read = fe;
			fit_terms(terms, sizeof(terms), fa, fe);
		} else {
			fit_terms(terms, sizeof(terms), fa, NAN);
		}
	}
	/*
	 * A saturated receiver pays no wake-ups: its cost per packet is what
	 * sets the capacity. Measured at another load it is not used: the
	 * cost depends on the co-runners (BUSY_MAX_DLOAD, busy_add()).
	 */
	if (sat > 0 && isfinite(now) && fabs(now - sat_load) <= BUSY_MAX_DLOAD) {
		if (!choose_kept_up(depth, now, sat, sat_load, terms, ns, src, b))
			return;
		value_set(&b->cpu_ns_per_pkt, sat, src);
		b->cpu_ns_per_pkt_basis = COST_SATURATED;
		if (isfinite(fb))
			snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
				 "saturated at #C+#I %.1f (fit %.0f ns/pkt%s, ratio %.0f)",
				 sat_load, fb, terms, ns);
		else
			snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
				 "saturated at #C+#I %.1f (no fit yet, ratio %.0f)", sat_load, ns);
		return;
	}
	if (sat > 0)
		snprintf(other, sizeof(other), "; saturated %.0f at #C+#I %.1f not used",
			 sat, sat_load);
	switch (b->cpu_ns_per_pkt_basis) {
	case COST_FIT:
		value_set(&b->cpu_ns_per_pkt, fb, src);
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "marginal: %.0f ns/pkt%s (ratio %.0f)", fb, terms, ns);
		break;
	case COST_LAST_FIT:
		value_set(&b->cpu_ns_per_pkt, fb, src);
		snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
			 "marginal: %.0f ns/pkt%s, last separable fit (ratio %.0f)",
			 fb, terms, ns);
		break;
	default:
		if (spin) {
			b->cpu_ns_per_pkt_basis = COST_NONE;
			value_missing(&b->cpu_ns_per_pkt,
				    "spin, not packets: %.1f empty reads per packet (ratio %.0f); "
				    "needs a fit that separates them or a saturated epoch%s",
				    l->cost.sums.x[FIT_Z] / l->cost.sums.x[FIT_P], ns, other);
			return;
		}
		value_set(&b->cpu_ns_per_pkt, ns, src);
		rxb_strlcpy(b->cpu_ns_per_pkt.why,
			    "ratio: wake-up and packet costs not separable yet",
			    sizeof(b->cpu_ns_per_pkt.why));
		break;
	}
	len = strlen(b->cpu_ns_per_pkt.why);
	if (other[0] && len < sizeof(b->cpu_ns_per_pkt.why))
		rxb_strlcpy(b->cpu_ns_per_pkt.why + len, other,
			    sizeof(b->cpu_ns_per_pkt.why) - len);
}

/* Below this, interrupt time on the receiver's CPU is noise (timers, a stray packet). */
#define IRQ_MIN_NS 5.0

static void irq_cost(const struct learn *l, enum value_src src, struct inputs_stage_b *b)
{
	double v = ewma_ratio_value(&l->irq_ns_per_pkt);

	if (!isfinite(v))
		value_missing(&b->irq_ns_per_pkt, "not measured: none assumed");
	else if (v < IRQ_MIN_NS) {
		value_set(&b->irq_ns_per_pkt, 0, src);
		snprintf(b->irq_ns_per_pkt.why, sizeof(b->irq_ns_per_pkt.why),
			 "%.2g ns measured: the receive softirq runs on other CPUs", v);
	} else {
		value_set(&b->irq_ns_per_pkt, v, src);
	}
}

/*
 * Hold the cost to what the receiver has been seen to pay while it kept
 * up (struct learn.busy.all_in): a cost above that is one it has beaten, at
 * this load, with its wake-ups paid on top. Needed because the estimate
 * it caps can rest on one epoch and then never be corrected: at k = 1 on
 * the test VM one saturated epoch put the cost at 1394 ns (the fit said
 * 1026 ns; a repeat's saturated epoch 1145 ns), a capacity of 4.22
 * Gb/s, while ten busy epochs without loss at the same load cost
 * 1040-1450 ns all in (1290 on average; a capacity of 4.56 Gb/s) and
 * dequeued up to 4.79 Gb/s; the rate then stayed
 * 19 % under the best (docs/e2e.md 5.10), and no transfer at that
 * rate overflowed to correct it.
 */
static void cost_cap(const struct learn *l, struct inputs_stage_b *b)
{
	double load, v = busy_sums_value(&l->busy.all_in, &load), now = inputs_receiver_load(b);
	char was[VALUE_WHY_LEN];
	int n;

	b->cpu_ns_per_pkt_busy = v > 0 ? v : NAN;
	b->busy_load = v > 0 ? load : NAN;
	b->cpu_ns_per_pkt_capped = NAN;
	if (!(v > 0) || l->busy.all_in.taken < COST_CAP_MIN_EPOCHS || !isfinite(now) ||
	    !(fabs(now - load) <= BUSY_MAX_DLOAD) ||
	    b->cpu_ns_per_pkt.src == VALUE_MISSING || !(b->cpu_ns_per_pkt.v > v))
		return;
	b->cpu_ns_per_pkt_capped = b->cpu_ns_per_pkt.v;
	rxb_strlcpy(was, b->cpu_ns_per_pkt.why, sizeof(was));
	b->cpu_ns_per_pkt.v = v;
	b->cpu_ns_per_pkt_basis = COST_BUSY;
	/* The old why goes last: it holds "ratio N" (tests/e2e/analyze.py). */
	n = snprintf(b->cpu_ns_per_pkt.why, sizeof(b->cpu_ns_per_pkt.why),
		     "busy, kept up at #C+#I %.1f: %.0f ns/pkt all in, below %.0f, ",
		     load, v, b->cpu_ns_per_pkt_capped);
	if (n > 0 && (size_t)n < sizeof(b->cpu_ns_per_pkt.why))
		rxb_strlcpy(b->cpu_ns_per_pkt.why + n, was,
			    sizeof(b->cpu_ns_per_pkt.why) - (size_t)n);
}

/*
 * rate_rel_sd: the packet-weighted relative standard deviation of the cost
 * per packet over the epochs in the ring measured at about the present
 * load (BUSY_MAX_DLOAD, as for the costs: the cost depends on the
 * co-runners), with Bessel's correction for their number. Epochs with and
 * without overflow both count: whether a blast finds the receiver keeping
 * up or behind (docs/e2e.md §6.5) is part of what its drain will be. The
 * rate is 1 / cost, whose relative spread this is to first order.
 */
static void rate_spread(const struct learn *l, enum value_src src, struct inputs_stage_b *b)
{
	double now = inputs_receiver_load(b), w = 0, m = 0, m2 = 0, var, sd;
	uint32_t n = 0;

	if (!isfinite(now)) {
		value_missing(&b->rate_rel_sd, "needs #C + #I");
		return;
	}
	for (uint32_t i = 0; i < l->busy.spread_n; i++) {
		const struct busy_epoch *x = &l->busy.spread[i];

		if (!(fabs(x->load - now) <= BUSY_MAX_DLOAD))
			continue;
		w += x->pkts;
		m += x->pkts * x->ns_per_pkt;
		m2 += x->pkts * x->ns_per_pkt * x->ns_per_pkt;
		n++;
	}
	if (n < BUSY_SPREAD_MIN_EPOCHS || !(w > 0) || !(m > 0)) {
		value_missing(&b->rate_rel_sd, "%u busy epochs at #C+#I %.1f, %d needed",
			    n, now, BUSY_SPREAD_MIN_EPOCHS);
		return;
	}
	m /= w;
	var = fmax(m2 / w - m * m, 0) * n / (n - 1);
	sd = sqrt(var);
	value_set(&b->rate_rel_sd, fmin(sd / m, 1.0), src);
	snprintf(b->rate_rel_sd.why, sizeof(b->rate_rel_sd.why),
		 "%u busy epochs at #C+#I %.1f: %.0f +- %.0f ns/pkt", n, now, m, sd);
}

static void episode_size(const struct learn *l, const struct rxb_epoch *e,
			 struct inputs_stage_b *b)
{
	double m = learn_episode_pkts(l);

	if (!l->episodes_ended) {
		value_missing(&b->loss_episode_pkts,
			    "no loss episode has ended yet (one ends when the next begins)");
		return;
	}
	if (!isfinite(m)) {
		value_missing(&b->loss_episode_pkts, "%llu episodes ended, %.0f needed",
			    (unsigned long long)l->episodes_ended, LEARN_MIN_EPISODES);
		return;
	}
	value_set(&b->loss_episode_pkts, m,
		  e && l->episodes_seq == e->seq ? VALUE_MEASURED : VALUE_LEARNED);
	snprintf(b->loss_episode_pkts.why, sizeof(b->loss_episode_pkts.why),
		 "median of %llu ended episodes (decayed weight %.1f)",
		 (unsigned long long)l->episodes_ended, l->episodes_w);
}

static void compute_b(const struct learn *l, const struct learn_disk *disk,
		      uint16_t port, const struct rxb_epoch *e, bool fresh,
		      const struct inputs_env *env, struct inputs *out)
{
	struct inputs_stage_b *b = &out->b;
	enum value_src src = cost_src(l, fresh);
	double wake = ewma_ratio_value(&l->pkts_per_wakeup);
	double ts = ewma_ratio_value(&l->truesize_per_pkt);
	struct rxb_stage_inputs *in;
	uint32_t k, n;

	workload(l, e, b);
	disk_rates(disk, b);
	cost_choose(l, e, port, src, env->depth_cost, b);
	irq_cost(l, src, b);
	cost_cap(l, b);
	rate_spread(l, src, b);
	episode_size(l, e, b);
	if (l->rcvbuf_bytes && ts > 0) {
		double cap = floor(l->rcvbuf_bytes / ts);

		value_set(&b->queue_pkts, cap < 1 ? 1 : cap, src);
	} else {
		value_missing(&b->queue_pkts, "receive buffer or truesize not measured");
	}
	if (b->queue_pkts.src == VALUE_MISSING) {
		value_missing(&b->pkts_per_wakeup, "needs the queue capacity");
	} else if (l->pkts_per_wakeup.num > 0 && !(l->pkts_per_wakeup.den > 0)) {
		/* Never slept while dequeuing: drains what is queued. */
		value_set(&b->pkts_per_wakeup, b->queue_pkts.v, src);
		rxb_strlcpy(b->pkts_per_wakeup.why, "receiver never blocked: N = K",
			    sizeof(b->pkts_per_wakeup.why));
	} else if (wake > 0) {
		value_set(&b->pkts_per_wakeup, fmin(wake, b->queue_pkts.v), src);
	} else {
		value_missing(&b->pkts_per_wakeup, "receiver wake-ups not measured");
	}

	if (b->cpu_ns_per_pkt.src == VALUE_MISSING ||
	    b->pkts_per_wakeup.src == VALUE_MISSING ||
	    b->queue_pkts.src == VALUE_MISSING) {
		value_missing(&b->mu_net_per_s, "needs cpu_ns_per_pkt, N and K");
		return;
	}
	if (b->cpu_bound.src == VALUE_MISSING || b->io_bound.src == VALUE_MISSING)
		return;

	k = clamp_u32(b->queue_pkts.v, 1, UINT32_MAX);
	n = clamp_u32(b->pkts_per_wakeup.v, 1, k);
	value_set(&b->mu_net_per_s, 1e9 / (b->cpu_ns_per_pkt.v * n), src);

	in = &out->stages[out->nstages];
	memset(in, 0, sizeof(*in));
	in->cpu_bound = b->cpu_bound.v;
	in->io_bound = b->io_bound.v;
	in->mu_net_per_s = b->mu_net_per_s.v;
	if (isfinite(b->cpu_ns_per_pkt_full))
		in->mu_net_full_per_s = 1e9 / (b->cpu_ns_per_pkt_full * n);
	in->queue_pkts = k;
	in->batch_pkts = n;
	in->rule = env->rule;
	in->load_independent = false;
	in->irq_ns_per_pkt = b->irq_ns_per_pkt.v > 0 ? b->irq_ns_per_pkt.v : 0;
	if (env->rate_uncertainty && b->rate_rel_sd.src != VALUE_MISSING)
		in->mu_rel_sd = b->rate_rel_sd.v;
	in->mu_pio_per_s = UNUSED_RATE_PER_S;
	in->mu_disk_per_s = UNUSED_RATE_PER_S;
	if (b->io_bound.v > 0) {
		if (b->mu_pio_per_s.src != VALUE_MISSING &&
		    b->mu_disk_per_s.src != VALUE_MISSING) {
			in->mu_pio_per_s = b->mu_pio_per_s.v;
			in->mu_disk_per_s = b->mu_disk_per_s.v;
		} else {
			/* Cannot model them; say so rather than guess rates. */
			in->io_bound = 0;
			b->io_ignored = true;
		}
	}
	b->present = true;
	out->nstages++;
}

/* K_A: the device's ring, or the backlog's limit. */
static void queue_a(const struct rxb_epoch *e, const struct inputs_env *env,
		    struct inputs_stage_a *a)
{
	if (!strcmp(a->dev, BACKLOG_DEV)) {
		if (env->netdev_max_backlog)
			value_set(&a->queue_pkts, env->netdev_max_backlog, VALUE_SYSCTL);
		else
			value_missing(&a->queue_pkts, "net.core.netdev_max_backlog unreadable");
		return;
	}
	for (int i = 0; e && i < e->nnics && i < RXB_MAX_NICS; i++) {
		const struct rxb_nic_meas *m = &e->nics[i];

		if (strcmp(m->name, a->dev) || !m->rx_ring)
			continue;
		value_set(&a->queue_pkts, m->rx_ring,
			  m->ring_source == RXB_SRC_DEVICE ? VALUE_DEVICE : VALUE_CONFIG);
		return;
	}
	if (env->fallback_rx_ring) {
		value_set(&a->queue_pkts, env->fallback_rx_ring, VALUE_CONFIG);
		snprintf(a->queue_pkts.why, sizeof(a->queue_pkts.why),
			 "%s not sampled: [measure] fallback_rx_ring", a->dev);
	} else {
		value_missing(&a->queue_pkts, "RX ring of %s unknown", a->dev);
	}
}

static void compute_a(const struct learn *l, const struct rxb_epoch *e,
		      bool fresh, const struct inputs_env *env, struct inputs *out)
{
	struct inputs_stage_a *a = &out->a;
	enum value_src src = cost_src(l, fresh);
	double ns = ewma_ratio_value(&l->napi_ns_per_poll);
	double ppp = ewma_ratio_value(&l->napi_pkts_per_poll);
	double dps = ewma_ratio_value(&l->napi_dgrams_per_skb);
	struct rxb_stage_inputs *in;
	uint32_t k;

	rxb_strlcpy(a->dev, l->napi_dev, sizeof(a->dev));
	if (!l->napi_dev[0]) {
		value_missing(&a->mu_per_s, "no NAPI poll seen with the flow's traffic");
		value_missing(&a->pkts_per_poll, "no NAPI poll seen");
		value_missing(&a->queue_pkts, "no NAPI poll seen");
		value_missing(&a->dgrams_per_skb, "no NAPI poll seen");
		return;
	}
	if (ns > 0)
		value_set(&a->mu_per_s, 1e9 / ns, src);
	else
		value_missing(&a->mu_per_s, "NET_RX service time not measured");
	/* Polls and queues count skbs; the model counts the flow's datagrams. */
	if (dps >= 1) {
		value_set(&a->dgrams_per_skb, dps, src);
	} else {
		value_set(&a->dgrams_per_skb, 1, src);
		snprintf(a->dgrams_per_skb.why, sizeof(a->dgrams_per_skb.why),
			 "too few skbs counted: 1 taken");
		dps = 1;
	}
	if (ppp > 0)
		value_set(&a->pkts_per_poll, ppp * dps, src);
	else
		value_missing(&a->pkts_per_poll, "too few NAPI polls measured");
	queue_a(e, env, a);
	if (a->queue_pkts.src != VALUE_MISSING)
		a->queue_pkts.v *= dps;
	if (a->mu_per_s.src == VALUE_MISSING || a->pkts_per_poll.src == VALUE_MISSING ||
	    a->queue_pkts.src == VALUE_MISSING)
		return;

	/* Stage A comes first on the path: shift stage B up if it is set. */
	if (out->nstages)
		out->stages[1] = out->stages[0];
	in = &out->stages[0];
	memset(in, 0, sizeof(*in));
	k = clamp_u32(a->queue_pkts.v, 1, UINT32_MAX);
	in->queue_pkts = k;
	in->batch_pkts = clamp_u32(a->pkts_per_poll.v, 1, k);
	in->mu_net_per_s = a->mu_per_s.v;
	in->rule = env->rule;
	in->load_independent = true;
	a->present = true;
	out->nstages++;
}

static void fill_traffic(const struct rxb_sock_meas *s, struct inputs_traffic *t)
{
	memset(t, 0, sizeof(*t));
	if (!s)
		return;
	t->sock_seen = true;
	t->counts_valid = s->counts_valid;
	t->pkts_in = s->pkts_in;
	t->pkts_out = s->pkts_out;
	t->drops = s->drops;
	t->rcvbuf_drops = s->drops_rcvbuf;
}

/*
 * Confidence in the inputs, per mille: 1000 for costs measured in this
 * epoch with the workload measured; less for costs carried over while the
 * flow is idle, and less again for costs from an earlier run.
 */
static uint16_t input_confidence(const struct inputs *r, const struct rxb_epoch *e)
{
	double c = 1000;

	switch (r->b.cpu_ns_per_pkt.src) {
	case VALUE_MEASURED:
		break;
	case VALUE_LEARNED:
		c *= 0.7;
		break;
	case VALUE_HISTORY:
		c *= 0.4;
		break;
	default:
		return 0;
	}
	if (!r->a.present)
		c *= 0.9;	/* stage A left out */
	if (r->b.io_ignored)
		c *= 0.5;
	if (e && (e->degraded & RXB_DEGRADED_NO_BPF))
		c *= 0.5;
	return (uint16_t)lround(c);
}

void inputs_compute(const struct learn *l, const struct learn_disk *disk, uint16_t port,
		const struct rxb_epoch *e, const struct inputs_env *env,
		struct inputs *out)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, port);
	/* Measured this epoch, or in the last sampled one when this was not. */
	bool fresh = e && l->origin == VALUE_MEASURED &&
		     (net_unsampled(e) ? l->last_traffic_seq == e->net_sampled_seq :
		      sock_has_traffic(s) && l->last_traffic_seq == e->seq);

	memset(out, 0, sizeof(*out));
	fill_traffic(s, &out->traffic);
	compute_b(l, disk, port, e, fresh, env, out);
	if (out->b.present) {
		compute_a(l, e, fresh, env, out);
	} else {
		rxb_strlcpy(out->a.dev, l->napi_dev, sizeof(out->a.dev));
		value_missing(&out->a.mu_per_s, "stage B is not modelled");
		value_missing(&out->a.pkts_per_poll, "stage B is not modelled");
		value_missing(&out->a.queue_pkts, "stage B is not modelled");
		value_missing(&out->a.dgrams_per_skb, "stage B is not modelled");
	}
	out->no_traffic = l->origin != VALUE_MEASURED;
	if (!out->b.present) {
		const struct inputs_stage_b *b = &out->b;
		const struct value *miss =
			b->cpu_ns_per_pkt.src == VALUE_MISSING ? &b->cpu_ns_per_pkt :
			b->queue_pkts.src == VALUE_MISSING ? &b->queue_pkts :
			b->pkts_per_wakeup.src == VALUE_MISSING ? &b->pkts_per_wakeup :
			b->cpu_bound.src == VALUE_MISSING ? &b->cpu_bound : &b->io_bound;

		out->nstages = 0;
		snprintf(out->why, sizeof(out->why), "stage B not modelled: %s", miss->why);
		return;
	}
	if (out->b.io_ignored)
		snprintf(out->why, sizeof(out->why),
			 "#I %.2f not modelled: disk rates not measured", out->b.io_bound.v);
	else if (!out->a.present)
		snprintf(out->why, sizeof(out->why), "stage A not modelled: %s",
			 out->a.mu_per_s.src == VALUE_MISSING ? out->a.mu_per_s.why :
			 out->a.pkts_per_poll.src == VALUE_MISSING ?
			 out->a.pkts_per_poll.why : out->a.queue_pkts.why);
	out->confidence = input_confidence(out, e);
}
