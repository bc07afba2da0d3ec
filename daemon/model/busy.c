// SPDX-License-Identifier: GPL-2.0-or-later
/* The busy epochs of a flow's receiver. See busy.h. */
#include "daemon/model/busy.h"

#include <math.h>

#include "daemon/model/ran_on.h"

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

static void sums_decay(struct busy_sums *s, double d)
{
	s->ns *= d;
	s->pkts *= d;
	s->load_pkts *= d;
	s->n *= d;
}

/* The sums of the busy epochs: saturated, kept up, and kept up all in. */
void busy_decay(struct busy *b, double d)
{
	sums_decay(&b->sat, d);
	sums_decay(&b->kept, d);
	sums_decay(&b->all_in, d);
}

static void sums_fold(struct busy_sums *s, double oncpu, double pkts, double load)
{
	s->ns += oncpu;
	s->pkts += pkts;
	s->load_pkts += load * pkts;
	s->n += 1;
	s->taken++;
	if (s->pkts >= BUSY_MIN_PKTS)
		s->ok = true;
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
 * Did the receiver run for at least BUSY_MIN_SHARE of its fair share of
 * @e (receiver_load())? @oncpu_ns is the on-CPU time to compare; @load
 * gets #C + #I beside it. False when the epoch or the CPUs are not known.
 */
static bool used_share(const struct rxb_sock_meas *s, const struct rxb_epoch *e,
		       double oncpu_ns, double *load)
{
	double fair;

	if (e->end_ns <= e->start_ns || !receiver_load(s, e, load, &fair))
		return false;
	return oncpu_ns >= BUSY_MIN_SHARE * fair * (double)(e->end_ns - e->start_ns);
}

bool busy_used_share(const struct rxb_sock_meas *s, const struct rxb_epoch *e)
{
	double load;

	return s->receiver_oncpu_ns > 0 &&
	       used_share(s, e, (double)s->receiver_oncpu_ns, &load);
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
 *  - it hardly slept: at least BUSY_MIN_PPW packets per wake-up. A
 *    wake-up costs several microseconds and a packet one or two (a and b
 *    of the cost fit), so at that many packets per wake-up the wake-ups
 *    add a few per cent at most to the cost per packet; a stricter bound
 *    would refuse the epochs whose few wake-ups fall at a blast's edges.
 *    An overflowing epoch can have few packets per wake-up: the receiver
 *    slept, then a burst came.
 *  - it ran for at least BUSY_MIN_SHARE of its fair share of the epoch,
 *    (1 - IRQ time) / (#C + #I + 1) of it: a receiver with a full queue
 *    is always runnable, and the scheduler shares the CPU equally among
 *    the runnable tasks. An epoch that a blast covers only partly mixes
 *    in sleeps, and a receiver's first epoch misses the time before its
 *    thread was identified (its cost per packet comes out far too low).
 *  - its on-CPU time per packet is at most BUSY_MAX_OVER_RATIO times the
 *    all-epochs ratio. A saturated receiver pays no wake-ups, so it costs
 *    less per packet than the average that includes them; far more means
 *    it spent the epoch on other work (between transfers, say) while the
 *    sender's data overflowed its socket.
 *  - it did not spin, or its spin is known: a polling receiver drains the
 *    queue in its on-CPU windows and then turns on the empty socket until
 *    the CPU is taken from it, so its overflowing epochs can be mostly
 *    spin. With the cost of an empty read @spin_ns known (e of the
 *    three-term fit) the spin, e x empty reads, is taken off the on-CPU
 *    time (@oncpu gets what is left: the packets' time; nothing left
 *    refuses the epoch). Without it, more than one empty read per
 *    BUSY_MIN_PPW packets refuses the epoch: a blocking receiver's
 *    recvmmsg() ends each wake-up with one, so this is the wake-ups'
 *    bound, and at a microsecond or two per read the reads then add a few
 *    ns per packet. The fair-share test uses the whole on-CPU time: it
 *    asks whether the receiver was runnable, spinning or not.
 *
 * With BUSY_ALL_IN the first and the last test are skipped and @oncpu is
 * the whole on-CPU time: the cost per packet with the wake-ups and any spin
 * in it, which bounds the cost of the packets alone from above
 * (struct busy.all_in). With BUSY_ANY_SHARE the fair-share test is
 * skipped, for the cost per packet alone (struct busy.spread): a blast
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
	double fair, ld;

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
	if (test == BUSY_ANY_SHARE) {
		if (e->end_ns <= e->start_ns || !receiver_load(s, e, &ld, &fair))
			return false;
	} else if (!used_share(s, e, t, &ld)) {
		return false;
	}
	if (!(ratio_ns > 0) || !(tp <= BUSY_MAX_OVER_RATIO * ratio_ns * p))
		return false;
	if (test == BUSY_ANY_SHARE && !(tp * BUSY_MAX_OVER_RATIO >= ratio_ns * p))
		return false;
	*load = ld;
	*oncpu = tp;
	return true;
}

/* Keep a busy epoch's cost per packet in the ring of struct busy.spread. */
static void spread_push(struct busy *b, double oncpu, double pkts, double load)
{
	struct busy_epoch *x = &b->spread[b->spread_next];

	x->ns_per_pkt = oncpu / pkts;
	x->pkts = pkts;
	x->load = load;
	b->spread_next = (b->spread_next + 1) % BUSY_SPREAD_EPOCHS;
	if (b->spread_n < BUSY_SPREAD_EPOCHS)
		b->spread_n++;
}

/*
 * Fold a busy epoch into the saturated or the kept-up sums (as its socket
 * overflowed or not), and one without overflow, judged all in, into the
 * all-in sums; decay them in any other. Every epoch in which the receiver
 * hardly slept, busy or not, goes into the spread's ring. The sums decay
 * like every cost (LEARN_TAU_S), and a value once measured stays (decay
 * scales the sums alike) until new epochs outweigh it. Saturated epochs
 * are rare - about one per transfer that overflows, inside its first
 * blast - so a value that expired with its weight would be gone before
 * the next transfer starts, which is when it is needed. Staleness is a
 * matter of load, not of age: the cost per packet depends on the
 * co-runners, which share the CPU's caches, so a value measured at
 * another #C + #I is not used (cost_choose(), BUSY_MAX_DLOAD), and one
 * saturated epoch at the new load outweighs the old sums at once: they
 * hold the old epochs' tens of thousands of packets times
 * exp(-gap / LEARN_TAU_S), the new epoch as many undecayed.
 */
void busy_add(struct busy *b, const struct rxb_sock_meas *s, const struct rxb_epoch *e,
	      double ratio_ns, double spin_ns, double d)
{
	double load, oncpu, p = (double)s->pkts_out;
	bool over;

	busy_decay(b, d);
	if (epoch_busy(s, e, ratio_ns, NAN, BUSY_ALL_IN, &load, &oncpu, &over) && !over)
		sums_fold(&b->all_in, oncpu, p, load);
	if (epoch_busy(s, e, ratio_ns, spin_ns, BUSY_ANY_SHARE, &load, &oncpu, &over))
		spread_push(b, oncpu, p, load);
	if (!epoch_busy(s, e, ratio_ns, spin_ns, BUSY_STRICT, &load, &oncpu, &over)) {
		if (over)
			b->sat.refused++;
		return;
	}
	sums_fold(over ? &b->sat : &b->kept, oncpu, p, load);
}

bool busy_spread(const struct busy *b, double load, uint32_t *n, double *mean_ns,
		 double *sd_ns)
{
	double w = 0, m = 0, m2 = 0, var;

	*n = 0;
	for (uint32_t i = 0; i < b->spread_n; i++) {
		const struct busy_epoch *x = &b->spread[i];

		if (!(fabs(x->load - load) <= BUSY_MAX_DLOAD))
			continue;
		w += x->pkts;
		m += x->pkts * x->ns_per_pkt;
		m2 += x->pkts * x->ns_per_pkt * x->ns_per_pkt;
		(*n)++;
	}
	if (*n < BUSY_SPREAD_MIN_EPOCHS || !(w > 0) || !(m > 0))
		return false;
	m /= w;
	var = fmax(m2 / w - m * m, 0) * *n / (*n - 1);
	*mean_ns = m;
	*sd_ns = sqrt(var);
	return true;
}
