// SPDX-License-Identifier: GPL-2.0-or-later
/* What a flow learns from the epochs. See learn.h. */
#include "daemon/model/learn.h"

#include <math.h>
#include <netinet/in.h>
#include <string.h>

#include "common/util.h"
#include "daemon/model/ran_on.h"
#include "solver/ewma.h"
#include "solver/offwin.h"

void learn_init(struct learn *l)
{
	memset(l, 0, sizeof(*l));
	l->origin = VALUE_MISSING;
	l->band_fed = -1;
	l->band_load = NAN;
	l->win_load = NAN;
	cost_fit_init(&l->cost);
	arrive_init(&l->arrive);
}

void learn_disk_init(struct learn_disk *d)
{
	memset(d, 0, sizeof(*d));
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
 * not the datagram queue the model is about (a 128 KiB TCP buffer against
 * an 8 MiB UDP one: K_B, and the bottleneck rate with it, would flip from
 * one epoch to the next). So once a UDP socket's rcvbuf was seen only
 * another UDP socket's replaces it; before that, any protocol's is taken.
 * The protocol is the one the collector read the rcvbuf with
 * (rcvbuf_ipproto), not the record's ipproto: that is the last dequeue's,
 * which can be a TCP frame queued after the last UDP read.
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
 * segment size (tens of times too low). A port an RBUDP receiver shares
 * with its TCP control connection is a datagram port once any UDP dequeue
 * is seen.
 */
static void learn_proto(struct learn *l, const struct rxb_sock_meas *s)
{
	if (s->ipproto == IPPROTO_UDP || s->rcvbuf_ipproto == IPPROTO_UDP)
		l->udp_seen = true;
	else if (s->ipproto)
		l->other_ipproto = s->ipproto;
}

bool learn_stream_only(const struct learn *l)
{
	return !l->udp_seen && l->other_ipproto;
}

/*
 * Stage B's costs from the receiver's epoch @s: the busy epochs, the
 * ratio, the fit, packets per wake-up, truesize, rcvbuf, protocol and
 * placement; @k the decay since the last epoch.
 */
static void learn_stage_b(struct learn *l, const struct rxb_sock_meas *s,
			  const struct rxb_epoch *e, double k)
{
	double out = (double)s->pkts_out;
	/*
	 * The receiver's scheduling is known with the scheduler probe only.
	 * An epoch of fewer than LEARN_MIN_PKTS packets read prices none: its
	 * receiver's time is mostly its start-up (a new receiver maps and
	 * fills its file buffer while its first packets, or only its control
	 * connection's, arrive), which over a few packets would be a cost
	 * several times the real one, and a rate that much too low for the
	 * transfer it starts.
	 */
	bool sched = s->receiver_oncpu_ns > 0 && isfinite(s->cpu_ns_per_pkt) &&
		     out >= LEARN_MIN_PKTS;

	if (sched) {
		/* Before the ratio takes this epoch in: it compares against it. */
		busy_add(&l->busy, s, e, ewma_ratio_value(&l->cpu_ns_per_pkt),
			 l->cost.spin_e_ns, k);
		ewma_ratio_add(&l->cpu_ns_per_pkt, k, (double)s->receiver_oncpu_ns, out,
			       LEARN_MIN_PKTS);
		cost_fit_add(&l->cost, k, (double)s->recv_wakeups, out,
			     (double)s->empty_reads, (double)s->receiver_oncpu_ns);
	} else {
		busy_decay(&l->busy, k);
		ewma_ratio_add(&l->cpu_ns_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
		cost_fit_decay(&l->cost, k);
	}
	/*
	 * Zero wake-ups with packets dequeued: the receiver never slept,
	 * which the ratio keeps as num > 0 with den = 0 (a batch of K).
	 */
	if (sched)
		ewma_ratio_add(&l->pkts_per_wakeup, k, out, (double)s->recv_wakeups, 1.0);
	else
		ewma_ratio_add(&l->pkts_per_wakeup, k, 0, 0, 1.0);
	/*
	 * Decayed over the overflowing epochs only, and kept in between: a
	 * flow whose rate keeps its queue would otherwise forget it and go
	 * back to a cost without its wake-ups, and overflow again. Only
	 * those in which the receiver used its share of the CPU: there its
	 * wake-ups took time it needed. One that overflowed with time to
	 * spare lost to its co-runners' turns, not for want of CPU, and woke
	 * as often as a receiver below capacity does (its packets per
	 * wake-up grow with the rate): its wake-ups priced into the capacity
	 * would set a rate at which no transfer overflows again to correct
	 * them.
	 */
	if (sched && drain_overflowed(s) && busy_used_share(s, e))
		ewma_ratio_add(&l->pkts_per_wakeup_ovf, k, out, (double)s->recv_wakeups, 1.0);
	if (s->pkts_enqueued && s->truesize_per_pkt_bytes > 0)
		ewma_ratio_add(&l->truesize_per_pkt, k,
			       s->truesize_per_pkt_bytes * (double)s->pkts_enqueued,
			       (double)s->pkts_enqueued, LEARN_MIN_PKTS);
	else
		ewma_ratio_add(&l->truesize_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
	if (s->pkts_out && s->bytes_out)
		ewma_ratio_add(&l->bytes_per_pkt, k, (double)s->bytes_out, out, LEARN_MIN_PKTS);
	else
		ewma_ratio_add(&l->bytes_per_pkt, k, 0, 0, LEARN_MIN_PKTS);
	learn_rcvbuf(l, s);
	learn_proto(l, s);
	/*
	 * Where it runs while it receives. An epoch of a few packets says
	 * little: a new receiver's first one holds its start-up, which can
	 * run on another CPU before it pins itself (rxbneck-recv --cpu); that
	 * placement would weigh in the other CPU's load, and a rate from it
	 * would be too high for the CPU the receiver then runs on.
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
 * per skb, stage A's capacity would come out as many times too low as
 * there are datagrams per skb. The device may carry other traffic as
 * well, so only a surplus of the flow's datagrams over the device's skbs
 * counts: at least one datagram per skb, exact when the flow is the
 * device's only traffic. A NIC's "work" counts frames before GRO, so it
 * stays at 1.
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

/*
 * @hist's non-empty finite slots added to @sum (decayed by @k first), and
 * with each its lengths' sums to @sums; returns the windows added.
 */
static double hist_fold(double *sum, struct rxb_win_sums *sums, const double *hist,
			const struct rxb_win_sums *add, double k)
{
	double n = 0;

	for (int r = 0; r < RXB_OFFCPU_SLOTS; r++) {
		sum[r] *= k;
		sums->sum_s[r] *= k;
		sums->sq_s2[r] *= k;
		if (!hist || !(hist[r] > 0) || !isfinite(hist[r]))
			continue;
		sum[r] += hist[r];
		n += hist[r];
		if (add->sum_s[r] >= 0 && isfinite(add->sum_s[r]) &&
		    add->sq_s2[r] >= 0 && isfinite(add->sq_s2[r])) {
			sums->sum_s[r] += add->sum_s[r];
			sums->sq_s2[r] += add->sq_s2[r];
		}
	}
	return n;
}

/*
 * The seconds of @e in which @s's receivers had traffic (struct
 * rxb_sock_meas.active_ns): a blast shorter than an epoch meets its
 * windows in part of it only, and counting the whole epoch would dilute
 * their rate by the idle rest. The whole epoch where that is unknown.
 */
static double active_s(const struct rxb_sock_meas *s, const struct rxb_epoch *e)
{
	double epoch_s = (double)(e->end_ns - e->start_ns) / 1e9;

	if (!(s->active_ns > 0) || !isfinite(s->active_ns))
		return epoch_s;
	return fmin(s->active_ns / 1e9, epoch_s);
}

/*
 * @s's seconds of receiving in @e (active_s()) when the scheduler probe
 * saw its receivers; 0 when it did not (or no epoch).
 */
static double seen_active_s(const struct rxb_sock_meas *s, const struct rxb_epoch *e)
{
	return s && s->receivers_valid && e && e->end_ns > e->start_ns ? active_s(s, e) : 0;
}

/*
 * The packets that arrived at @s's sockets: what the sender sent them,
 * read or dropped. Not those read: a receiver overrun reads at its drain
 * whatever arrives, and its windows then are those of the rate sent.
 */
static uint64_t arrivals(const struct rxb_sock_meas *s)
{
	return s->pkts_in ? s->pkts_in : s->pkts_out;
}

/* What an epoch's windows are folded with: its packets, counted or estimated. */
struct win_epoch {
	const struct rxb_sock_meas *s;	/* its socket, receivers seen; NULL: none */
	double act_s;			/* its seconds of receiving */
	double arrived, read;		/* packets that arrived, and were read */
};

/*
 * Fold an epoch's windows into @w after decaying it by @k: @we->s's, when
 * the scheduler probe saw its receivers; none (@we NULL): decay alone,
 * which keeps the rates as they were.
 */
static void win_fold(struct learn_win *w, const struct win_epoch *we, double k)
{
	const struct rxb_sock_meas *s = we ? we->s : NULL;
	double act_s = we ? we->act_s : 0;
	double n;

	n = hist_fold(w->offcpu_hist, &w->offcpu_sums, s ? s->offcpu_hist : NULL,
		      s ? &s->offcpu_sums : NULL, k);
	hist_fold(w->wake_hist, &w->wake_sums, s ? s->wake_hist : NULL,
		  s ? &s->wake_sums : NULL, k);
	ewma_max_add(&w->wake_max_ns, k, s ? s->wake_max_ns : 0, LEARN_WAKE_MAX_MIN_W);
	w->offcpu_s *= k;
	w->arrived *= k;
	if (s) {
		w->offcpu_s += act_s;
		w->arrived += we->arrived;
	}
	/* Not decayed without windows: kept through idle epochs as they are. */
	if (s)
		ewma_max_add(&w->seen_pps, k, we->read / act_s,
			     LEARN_WAKE_MAX_MIN_W);
	if (s && n > 0 && s->run_before_preempt_ns > 0 && isfinite(s->run_before_preempt_ns))
		ewma_ratio_add(&w->offcpu_gap_ns, k, s->run_before_preempt_ns * n, n, 1.0);
	else
		ewma_ratio_add(&w->offcpu_gap_ns, k, 0, 0, 1.0);
}

/* Was band @b fed within @s seconds before @ref_ns? */
static bool band_fed_within(const struct learn_band *b, double s, uint64_t ref_ns)
{
	return b->last_ns + (uint64_t)(s * 1e9) >= ref_ns;
}

/*
 * Are receiver loads @a and @b both known and LEARN_BAND_LOAD_TASKS apart
 * or more: windows fed at one say nothing of the other?
 */
static bool loads_apart(double a, double b)
{
	return fabs(a - b) >= LEARN_BAND_LOAD_TASKS;
}

/* Was band @b fed at another load than the last band (both known)? */
static bool band_other_load(const struct learn *l, const struct learn_band *b)
{
	return loads_apart(b->load, l->band_load);
}

/* Is band @b spent: stale at @now_ns, or of another load? */
static bool band_spent(const struct learn *l, const struct learn_band *b, uint64_t now_ns)
{
	return !band_fed_within(b, LEARN_BAND_KEEP_S, now_ns) || band_other_load(l, b);
}

/*
 * The band of key @key: its own, a free one, a spent one (the one fed
 * longest ago), else of those not fed for LEARN_BAND_HOLD_S the one with
 * the least receiving behind it (of those, the one fed longest ago); -1:
 * every band was fed lately, and the epoch feeds none.
 */
static int band_for(struct learn *l, int32_t key, uint64_t now_ns)
{
	int spent = -1, weak = -1;

	for (int i = 0; i < LEARN_BANDS; i++)
		if (l->band[i].last_ns && l->band[i].key == key)
			return i;
	for (int i = 0; i < LEARN_BANDS; i++) {
		const struct learn_band *b = &l->band[i], *w = weak < 0 ? NULL : &l->band[weak];

		if (!b->last_ns)
			return i;
		if (band_spent(l, b, now_ns) &&
		    (spent < 0 || b->last_ns < l->band[spent].last_ns))
			spent = i;
		if (!band_fed_within(b, LEARN_BAND_HOLD_S, now_ns) &&
		    (!w || b->fed_s < w->fed_s || (b->fed_s == w->fed_s && b->last_ns < w->last_ns)))
			weak = i;
	}
	return spent >= 0 ? spent : weak;
}

/* The key of the band of arrival rate @pps (struct learn_band.key). */
static int32_t band_key(double pps)
{
	return (int32_t)floor(log(pps) / log(LEARN_BAND_STEP));
}

/*
 * The key of the band an epoch of estimated arrival rate @pps feeds: that
 * of the band whose rate is nearest, within one band step, among those
 * not spent at @now_ns; else its own. An estimate is off by a few per cent
 * from one epoch to the next (the receiver's time per packet varies), so
 * keyed by itself a rate's epochs would fall on both sides of a band's
 * edge, in two bands each fed half as long; joined to the nearest band,
 * they average into it.
 */
static int32_t band_key_near(const struct learn *l, double pps, uint64_t now_ns)
{
	int32_t key = band_key(pps);
	double best = log(LEARN_BAND_STEP);

	for (int i = 0; i < LEARN_BANDS; i++) {
		const struct learn_band *b = &l->band[i];
		double at = learn_win_arrival_pps(&b->w), dist;

		if (!b->last_ns || band_spent(l, b, now_ns) || !(at > 0))
			continue;
		dist = fabs(log(pps / at));
		if (dist < best) {
			best = dist;
			key = b->key;
		}
	}
	return key;
}

/*
 * Feed the epoch's windows to the band of its arrival rate, @we->arrived
 * over its seconds of receiving; @estimated: its packets were estimated
 * (struct arrive), not counted, and it joins the nearest band.
 */
static void band_feed(struct learn *l, const struct win_epoch *we, bool estimated,
		      uint64_t now_ns)
{
	double pps = we->arrived / we->act_s;
	int32_t key = estimated ? band_key_near(l, pps, now_ns) : band_key(pps);
	int i = band_for(l, key, now_ns);
	struct learn_band *b;
	double k = 1.0;

	if (i < 0)
		return;
	b = &l->band[i];
	/* A new rate, or this one's band from another load: start afresh. */
	if (!b->last_ns || b->key != key || band_other_load(l, b)) {
		memset(b, 0, sizeof(*b));
		b->key = key;
		b->load = NAN;
	} else {
		k = ewma_decay(we->act_s, LEARN_BAND_TAU_S);
	}
	win_fold(&b->w, we, k);
	b->fed_s += we->act_s;
	if (estimated)
		b->estimated_s += we->act_s;
	b->last_ns = now_ns ? now_ns : 1;
	l->band_fed = i;
}

/*
 * The off-CPU windows of an epoch with traffic at receiver load @load,
 * when the scheduler probe saw its receivers (@s->receivers_valid), into
 * all of them (afresh at another load than theirs) and its rate's band;
 * decay alone otherwise.
 */
static void learn_windows(struct learn *l, const struct rxb_sock_meas *s,
			  const struct rxb_epoch *e, double k, double load, uint64_t now_ns)
{
	struct win_epoch we = { .act_s = seen_active_s(s, e) };
	bool seen = we.act_s > 0;

	l->band_fed = -1;
	if (seen) {
		we.s = s;
		we.arrived = (double)arrivals(s);
		we.read = (double)s->pkts_out;
		if (learn_win_other_load(l, load)) {
			memset(&l->win, 0, sizeof(l->win));
			l->win_fresh_s = 0;
			l->win_afresh = true;
		}
		if (isfinite(load))
			l->win_load = load;
		l->win_fresh_s += we.act_s;
	}
	win_fold(&l->win, seen ? &we : NULL, k);
	if (seen && we.act_s >= LEARN_BAND_MIN_EPOCH_S && we.arrived > 0)
		band_feed(l, &we, false, now_ns);
}

/*
 * An epoch without the per-packet probes: its windows, with its packets
 * estimated (struct arrive), into the band of its rate when the estimate
 * is trusted. Not into all rates' windows: those are learned in the
 * sampled epochs, decayed by them alone, as the costs are.
 */
static void learn_windows_unsampled(struct learn *l, const struct rxb_sock_meas *s,
				    const struct rxb_epoch *e, uint64_t now_ns)
{
	struct win_epoch we = { .s = s, .act_s = seen_active_s(s, e) };

	if (!(we.act_s > 0) || !arrive_trusted(&l->arrive))
		return;
	we.arrived = arrive_estimate(&l->arrive, s, &we.read);
	if (!(we.arrived > 0) || we.act_s < LEARN_BAND_MIN_EPOCH_S)
		return;
	l->arrive.estimated++;
	band_feed(l, &we, true, now_ns);
}

double learn_offcpu(const struct learn_win *w, double *hist, double *gap_s,
		    double *wake_hist, double *wake_per_s)
{
	double n = 0, c = 0, gap = ewma_ratio_value(&w->offcpu_gap_ns);

	for (int r = 0; r < RXB_OFFCPU_SLOTS; r++) {
		hist[r] = w->offcpu_hist[r];
		wake_hist[r] = w->wake_hist[r];
		n += hist[r];
		c += wake_hist[r];
	}
	*gap_s = n > 0 && gap > 0 ? gap / 1e9 : 0;
	*wake_per_s = w->offcpu_s > 0 ? c / w->offcpu_s : 0;
	return w->offcpu_s > 0 ? n / w->offcpu_s : 0;
}

void learn_offcpu_moments(const struct learn_win *w, double *mean_s, double *sd_s,
			  double *wake_mean_s, double *wake_sd_s)
{
	offwin_slot_moments(w->offcpu_hist, w->offcpu_sums.sum_s, w->offcpu_sums.sq_s2,
			    RXB_OFFCPU_SLOTS, mean_s, sd_s);
	offwin_slot_moments(w->wake_hist, w->wake_sums.sum_s, w->wake_sums.sq_s2,
			    RXB_OFFCPU_SLOTS, wake_mean_s, wake_sd_s);
}

double learn_windows_seen_pps(const struct learn_win *w)
{
	return ewma_max_value(&w->seen_pps);
}

double learn_wake_max_s(const struct learn_win *w)
{
	return ewma_max_value(&w->wake_max_ns) / 1e9;
}

double learn_win_arrival_pps(const struct learn_win *w)
{
	return w->offcpu_s > 0 ? w->arrived / w->offcpu_s : 0;
}

static bool band_live(const struct learn *l, const struct learn_band *b, double load)
{
	return b->last_ns && b->fed_s >= LEARN_BAND_MIN_S &&
	       band_fed_within(b, LEARN_BAND_KEEP_S, l->last_traffic_ns) &&
	       fabs(b->load - load) < LEARN_BAND_LOAD_TASKS &&
	       learn_win_arrival_pps(&b->w) > 0;
}

bool learn_band_live(const struct learn *l, int i, double load)
{
	return i >= 0 && i < LEARN_BANDS && band_live(l, &l->band[i], load);
}

int learn_bands_live(const struct learn *l, double load, int *idx)
{
	int n = 0;

	for (int i = 0; i < LEARN_BANDS; i++) {
		double pps = learn_win_arrival_pps(&l->band[i].w);
		int j = n;

		if (!band_live(l, &l->band[i], load))
			continue;
		/* Insertion by arrival rate: at most LEARN_BANDS of them. */
		while (j > 0 && learn_win_arrival_pps(&l->band[idx[j - 1]].w) > pps) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
		n++;
	}
	return n;
}

void learn_band_load(struct learn *l, double load)
{
	if (l->band_fed >= 0 && l->band_fed < LEARN_BANDS) {
		l->band[l->band_fed].load = load;
		l->band_load = load;
	}
}

bool learn_win_other_load(const struct learn *l, double load)
{
	return loads_apart(l->win_load, load);
}

bool learn_win_stand(const struct learn *l, double load)
{
	return !learn_win_other_load(l, load) &&
	       (!l->win_afresh || l->win_fresh_s >= LEARN_WIN_FRESH_S);
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
		&l->irq_ns_per_pkt, &l->bytes_per_pkt,
	};

	for (size_t i = 0; i < RXB_ARRAY_SIZE(r); i++)
		ewma_ratio_add(r[i], k, 0, 0, INFINITY);
	cost_fit_decay(&l->cost, k);
	busy_decay(&l->busy, k);
	drain_decay(&l->drain, k);
	arrive_learn(&l->arrive, NULL, 0, k);
	learn_windows(l, NULL, NULL, k, NAN, 0);
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

void learn_epoch(struct learn *l, uint16_t port, const struct rxb_epoch *e, double dt_s,
		 double load, bool irq_in_task_time, uint64_t now_ns)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, port);
	double k = ewma_decay(dt_s, LEARN_TAU_S);

	l->band_fed = -1;
	learn_episodes(l, s, k, e->seq);
	if (net_unsampled(e)) {
		/*
		 * Learn no cost, decay nothing: the receive-path costs stay as
		 * the last sampled epoch left them and the flow keeps its
		 * traffic state. The task classes are this epoch's, and so is
		 * the receiver's placement when the scheduler saw it run (the
		 * scheduler probe is always attached), so the rate still
		 * follows the load on the receiver's CPU; the windows it saw
		 * go to the band of the rate its packets are estimated at.
		 */
		if (s && s->ncpus_ran > 0)
			learn_placement(l, s);
		learn_windows_unsampled(l, s, e, now_ns);
	} else if (sock_has_traffic(s)) {
		const struct rxb_napi_meas *n = busiest_napi(e);
		struct rxb_sock_meas own;

		if (irq_in_task_time && irq_off_task(s, e, &own))
			learn_stage_b(l, &own, e, k);
		else
			learn_stage_b(l, s, e, k);
		learn_irq(l, s, e, k);
		arrive_learn(&l->arrive, s, seen_active_s(s, e), k);
		learn_windows(l, s, e, k, load, now_ns);
		/*
		 * The drain is wall time behind a backlog, interrupts and all:
		 * the epoch as measured, not its receiver's own share.
		 */
		if (s->receivers_valid)
			drain_add(&l->drain, s, e, l->cost.spin_e_ns, k);
		else
			drain_decay(&l->drain, k);
		if (n && s->pkts_in) {
			learn_stage_a(l, n, s, k);
		} else {
			ewma_ratio_add(&l->napi_ns_per_poll, k, 0, 0, INFINITY);
			ewma_ratio_add(&l->napi_pkts_per_poll, k, 0, 0, INFINITY);
			ewma_ratio_add(&l->napi_dgrams_per_skb, k, 0, 0, INFINITY);
		}
		l->origin = VALUE_MEASURED;
		l->prior = LEARN_PRIOR_NONE;
		l->last_traffic_ns = now_ns;
		l->last_traffic_seq = e->seq;
	} else {
		learn_decay(l, k);
	}
}

bool learn_fresh(const struct learn *l, const struct rxb_epoch *e, uint16_t port)
{
	return e && l->origin == VALUE_MEASURED &&
	       (net_unsampled(e) ? l->last_traffic_seq == e->net_sampled_seq :
		sock_has_traffic(rxb_epoch_sock(e, port)) && l->last_traffic_seq == e->seq);
}
