// SPDX-License-Identifier: GPL-2.0-or-later
/* Learned costs and the epoch's workload -> the model's inputs. See inputs.h. */
#include "daemon/model/inputs.h"

#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "daemon/model/busy.h"
#include "daemon/model/cost.h"
#include "daemon/model/learn.h"
#include "solver/qphase.h"

#define BACKLOG_DEV	"(backlog)"	/* bpf/netrx: the per-CPU backlog NAPI */

/*
 * Placeholders for mu_P-I/O and mu_D when #I = 0: bneck_compute() wants
 * positive rates, but the end-system net with no I/O-bound task never
 * fires the transitions that use them, so their value cannot change the
 * result.
 */
#define UNUSED_RATE_PER_S	1.0

/*
 * Where the learned costs come from: this epoch, earlier, an earlier run
 * or another flow (history), or the defaults (prior.h).
 */
static enum value_src cost_src(const struct learn *l, bool fresh)
{
	if (fresh)
		return VALUE_MEASURED;
	if (l->origin != VALUE_HISTORY)
		return VALUE_LEARNED;
	return l->prior == LEARN_PRIOR_DEFAULT ? VALUE_DEFAULT : VALUE_HISTORY;
}

/*
 * #C of one CPU for the model's equal-share CPU: the effective count
 * (weights, quotas and part-time tasks: daemon/collect/cpushare.h) where
 * measured, else the plain class count.
 */
static double cpu_competition(const struct rxb_cpu_meas *m)
{
	return m->cpu_bound_eff_valid && isfinite(m->cpu_bound_eff) ? m->cpu_bound_eff
								     : m->cpu_bound;
}

/*
 * The quota phases of the CPU the receiver ran on (INPUTS_QUOTA_MIN_SHARE of
 * its on-CPU time there at least: phases of several CPUs do not add up).
 * Left at 0 (inputs_compute() clears @b) where there are none.
 */
static void quota_phases(const struct learn *l, const struct rxb_epoch *e,
			 struct inputs_stage_b *b)
{
	const struct rxb_cpu_meas *m;
	int top = 0;

	for (int k = 1; k < l->ncpus; k++)
		if (l->cpu_share[k] > l->cpu_share[top])
			top = k;
	if (!l->ncpus || !(l->cpu_share[top] >= INPUTS_QUOTA_MIN_SHARE) ||
	    l->cpu[top] < 0 || l->cpu[top] >= e->ncpus || l->cpu[top] >= RXB_MAX_CPUS)
		return;
	m = &e->cpus[l->cpu[top]];
	if (!(m->quota_period_s > 0))
		return;
	b->quota_period_s = m->quota_period_s;
	b->quota_slow_s = m->quota_slow_s;
	b->quota_slow_share = m->quota_slow_share;
	b->quota_fast_share = m->quota_fast_share;
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
		c += l->cpu_share[k] * cpu_competition(&e->cpus[cpu]);
		i += l->cpu_share[k] * e->cpus[cpu].io_bound;
	}
	quota_phases(l, e, b);
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
double inputs_receiver_load(const struct inputs_stage_b *b)
{
	if (b->cpu_bound.src == VALUE_MISSING || b->io_bound.src == VALUE_MISSING)
		return NAN;
	return b->cpu_bound.v + b->io_bound.v;
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
 * rate_rel_sd: the packet-weighted relative standard deviation of the cost
 * per packet over the epochs in the ring measured at about the present
 * load (BUSY_MAX_DLOAD, as for the costs: the cost depends on the
 * co-runners), with Bessel's correction for their number. Epochs with and
 * without overflow both count: whether a blast finds the receiver keeping
 * up or behind (the kept-up cost is the lower) is part of what its drain
 * will be. The
 * rate is 1 / cost, whose relative spread this is to first order.
 */
static void rate_spread(const struct learn *l, enum value_src src, struct inputs_stage_b *b)
{
	double now = inputs_receiver_load(b), m, sd;
	uint32_t n;

	if (!isfinite(now)) {
		value_missing(&b->rate_rel_sd, "needs #C + #I");
		return;
	}
	if (!busy_spread(&l->busy, now, &n, &m, &sd)) {
		value_missing(&b->rate_rel_sd, "%u busy epochs at #C+#I %.1f, %d needed",
			      n, now, BUSY_SPREAD_MIN_EPOCHS);
		return;
	}
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

/* K_B, the receive buffer in packets, and N_B, the packets per wake-up. */
static void queue_b(const struct learn *l, enum value_src src, struct inputs_stage_b *b)
{
	double wake = ewma_ratio_value(&l->pkts_per_wakeup);
	double ts = ewma_ratio_value(&l->truesize_per_pkt);

	if (l->rcvbuf_bytes && ts > 0) {
		double cap = floor(l->rcvbuf_bytes / ts);

		value_set(&b->queue_pkts, cap < 1 ? 1 : cap, src);
		/*
		 * UDP charges what the reader frees back to the socket only
		 * once it adds up to a quarter of sk_rcvbuf (udp_rmem_release(),
		 * net/ipv4/udp.c), unless the reader emptied the queue.
		 */
		b->queue_release_pkts = l->rcvbuf_udp ? floor(l->rcvbuf_bytes / 4 / ts) : 0;
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
}

/* Stage B's solver inputs from @b's values (all known). */
static void stage_b(const struct inputs_env *env, uint32_t k, uint32_t n,
		    struct inputs_stage_b *b, struct rxb_stage_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->cpu_bound = b->cpu_bound.v;
	in->io_bound = b->io_bound.v;
	in->mu_net_per_s = b->mu_net_per_s.v;
	if (isfinite(b->cpu_ns_per_pkt_full))
		in->mu_net_full_per_s = 1e9 / (b->cpu_ns_per_pkt_full * n);
	in->queue_pkts = k;
	in->queue_release_pkts = fmin(b->queue_release_pkts, k);
	/* Phases the solver would refuse would fail every solve: none then. */
	if (env->quota_phases &&
	    qphase_phases_valid(b->quota_period_s, b->quota_slow_s, b->quota_slow_share,
				b->quota_fast_share)) {
		in->quota_period_s = b->quota_period_s;
		in->quota_slow_s = b->quota_slow_s;
		in->quota_slow_share = b->quota_slow_share;
		in->quota_fast_share = b->quota_fast_share;
	}
	in->batch_pkts = n;
	in->rule = env->rule;
	in->load_independent = false;
	in->irq_ns_per_pkt = b->irq_ns_per_pkt.v > 0 ? b->irq_ns_per_pkt.v : 0;
	if (env->rate_uncertainty && b->rate_rel_sd.src != VALUE_MISSING)
		in->mu_rel_sd = b->rate_rel_sd.v;
	in->mu_pio_per_s = UNUSED_RATE_PER_S;
	in->mu_disk_per_s = UNUSED_RATE_PER_S;
	in->offcpu_per_s = b->offcpu_per_s;
	in->offcpu_gap_s = b->offcpu_gap_s;
	memcpy(in->offcpu_hist, b->offcpu_hist, sizeof(in->offcpu_hist));
	memcpy(in->offcpu_mean_s, b->offcpu_mean_s, sizeof(in->offcpu_mean_s));
	memcpy(in->offcpu_sd_s, b->offcpu_sd_s, sizeof(in->offcpu_sd_s));
	in->wake_per_s = b->wake_per_s;
	memcpy(in->wake_hist, b->wake_hist, sizeof(in->wake_hist));
	memcpy(in->wake_mean_s, b->wake_mean_s, sizeof(in->wake_mean_s));
	memcpy(in->wake_sd_s, b->wake_sd_s, sizeof(in->wake_sd_s));
	in->wake_max_s = b->wake_max_s;
	in->windows_seen_pps = b->windows_seen_pps;
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
}

/*
 * The off-CPU windows as learned over the epochs the receiver received in,
 * not the last epoch's alone: a transfer that starts after idle epochs
 * meets the windows the receiver met while it last received - at the same
 * load. Windows learned beside other co-runners, or over too little
 * receiving since they started afresh at this load, are left out (the
 * stage is solved by its queue at the present #C and #I): the load on the
 * receiver's CPU changes between transfers more often than during one.
 */
static void offcpu_windows(const struct learn *l, struct inputs_stage_b *b)
{
	double now = inputs_receiver_load(b);

	b->windows_load = l->win_load;
	b->windows_fresh_s = l->win_fresh_s;
	b->windows_other_load = learn_win_other_load(l, now);
	if (!learn_win_stand(l, now))
		return;
	b->offcpu_per_s = learn_offcpu(&l->win, b->offcpu_hist, &b->offcpu_gap_s,
				       b->wake_hist, &b->wake_per_s);
	learn_offcpu_moments(&l->win, b->offcpu_mean_s, b->offcpu_sd_s, b->wake_mean_s,
			     b->wake_sd_s);
	b->wake_max_s = learn_wake_max_s(&l->win);
	b->windows_seen_pps = learn_windows_seen_pps(&l->win);
}

static void compute_b(const struct learn *l, const struct learn_disk *disk,
		      uint16_t port, const struct rxb_epoch *e, bool fresh,
		      const struct inputs_env *env, struct inputs *out)
{
	struct inputs_stage_b *b = &out->b;
	enum value_src src = cost_src(l, fresh);
	uint32_t k, n;

	workload(l, e, b);
	disk_rates(disk, b);
	cost_choose(l, e, port, src, env->depth_cost, b);
	irq_cost(l, src, b);
	cost_cap(l, b);
	rate_spread(l, src, b);
	episode_size(l, e, b);
	offcpu_windows(l, b);
	queue_b(l, src, b);
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
	stage_b(env, k, n, b, &out->stages[out->nstages]);
	capacity_calibrate(&l->drain, inputs_receiver_load(b), env->now_ns, env->capacity,
			   &out->stages[out->nstages], &b->capacity);
	/*
	 * Where the drain is usable at this load, also where it is too far
	 * from the cost to be taken as the capacity: it is what the receiver
	 * drained, and when the cost is the one that is off, the floor is
	 * what keeps the rate near the drain.
	 */
	if (env->drain_floor && b->capacity.drain_usable) {
		out->stages[out->nstages].sat_drain_pkts_per_s = b->capacity.drain_pkts_per_s;
		if (b->capacity.drain_arrivals_pps > 0)
			out->stages[out->nstages].sat_drain_arrivals_pps =
				b->capacity.drain_arrivals_pps;
	}
	if (b->capacity.basis == CAPACITY_DRAIN) {
		b->mu_net_per_s.v = out->stages[out->nstages].mu_net_per_s;
		snprintf(b->mu_net_per_s.why, sizeof(b->mu_net_per_s.why),
			 "x %.3f of the cost's, to the saturated drain", b->capacity.scale);
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
 * flow is idle, less again for this port's costs from an earlier run,
 * still less for another flow's, and least for the defaults (prior.h).
 */
static uint16_t input_confidence(const struct inputs *r, const struct rxb_epoch *e,
				 const struct learn *l)
{
	double c = 1000;

	switch (r->b.cpu_ns_per_pkt.src) {
	case VALUE_MEASURED:
		break;
	case VALUE_LEARNED:
		c *= 0.7;
		break;
	case VALUE_HISTORY:
		c *= l->prior == LEARN_PRIOR_HOST ? 0.3 : 0.4;
		break;
	case VALUE_DEFAULT:
		c *= 0.1;
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

/*
 * A TCP flow's inputs (struct inputs_tcp): its cost per packet is the
 * smoothed on-CPU ratio, which holds its wake-ups too; the workload is
 * stage B's.
 */
static void compute_tcp(const struct learn *l, bool fresh, struct inputs *out)
{
	struct inputs_tcp *t = &out->tcp;
	enum value_src src = cost_src(l, fresh);
	double ns = ewma_ratio_value(&l->cpu_ns_per_pkt);
	double bytes = ewma_ratio_value(&l->bytes_per_pkt);

	t->drain_bps = NAN;
	if (bytes > 0)
		value_set(&t->bytes_per_pkt, bytes, src);
	else
		value_missing(&t->bytes_per_pkt, "not measured yet");
	if (!(ns > 0)) {
		value_missing(&t->cpu_ns_per_pkt, "%s", out->b.cpu_ns_per_pkt.why);
		return;
	}
	value_set(&t->cpu_ns_per_pkt, ns, src);
	if (out->b.cpu_bound.src == VALUE_MISSING)
		return;
	t->share = out->b.cpu_bound.v + 1;
	t->present = true;
	out->confidence = (uint16_t)lround((src == VALUE_MEASURED ? 1000 :
					    src == VALUE_LEARNED ? 700 : 400) *
					   (t->bytes_per_pkt.src == VALUE_MISSING ? 0.5 : 1));
	snprintf(out->why, sizeof(out->why),
		 "stage B not modelled (TCP): the advice is the drain rate at %.0f ns/pkt, "
		 "#C %.2f; loss not modelled", ns, out->b.cpu_bound.v);
}

double inputs_tcp_advise(struct inputs_tcp *t, double payload_bytes)
{
	if (!t->present)
		return NAN;
	if (t->bytes_per_pkt.src == VALUE_MISSING)
		value_set(&t->bytes_per_pkt, payload_bytes, VALUE_CONFIG);
	t->drain_bps = t->bytes_per_pkt.v * 8 * 1e9 / (t->cpu_ns_per_pkt.v * t->share);
	return t->drain_bps;
}

/* Stage B's windows fields from @w. */
static void windows_to_stage(const struct learn_win *w, struct rxb_stage_inputs *in)
{
	in->offcpu_per_s = learn_offcpu(w, in->offcpu_hist, &in->offcpu_gap_s, in->wake_hist,
					&in->wake_per_s);
	learn_offcpu_moments(w, in->offcpu_mean_s, in->offcpu_sd_s, in->wake_mean_s,
			     in->wake_sd_s);
	in->wake_max_s = learn_wake_max_s(w);
	in->windows_seen_pps = learn_windows_seen_pps(w);
}

/*
 * Stage B once per band that stands for its rates, with that band's
 * windows (struct inputs.band_b). Two bands of one arrival rate would make
 * an empty piece: the later is left out.
 */
static void compute_bands(const struct learn *l, struct inputs *out)
{
	int idx[LEARN_BANDS];
	int n = learn_bands_live(l, inputs_receiver_load(&out->b), idx);
	uint32_t m = 0;

	out->nbands = 0;
	if (n < 2 || !out->nstages)
		return;
	for (int i = 0; i < n; i++) {
		const struct learn_win *w = &l->band[idx[i]].w;
		double pps = learn_win_arrival_pps(w);

		if (m && !(pps > out->band_at_pps[m - 1]))
			continue;
		out->band_b[m] = out->stages[out->nstages - 1];
		windows_to_stage(w, &out->band_b[m]);
		out->band_at_pps[m++] = pps;
	}
	out->nbands = m >= 2 ? m : 0;
}

/* inputs_compute() but for the windows by rate. */
static void compute_stages(const struct learn *l, const struct learn_disk *disk, uint16_t port,
			   const struct rxb_epoch *e, const struct inputs_env *env,
			   struct inputs *out)
{
	const struct rxb_sock_meas *s = rxb_epoch_sock(e, port);
	bool fresh = learn_fresh(l, e, port);

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
		if (learn_stream_only(l) && l->other_ipproto == IPPROTO_TCP)
			compute_tcp(l, fresh, out);
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
	out->confidence = input_confidence(out, e, l);
}

void inputs_compute(const struct learn *l, const struct learn_disk *disk, uint16_t port,
		    const struct rxb_epoch *e, const struct inputs_env *env,
		    struct inputs *out)
{
	compute_stages(l, disk, port, e, env, out);
	if (env->windows_by_rate)
		compute_bands(l, out);
}

/*
 * The receiver load (#C + #I) of epoch @e on the CPUs the receiver last
 * ran on, NaN unknown: the load the windows it feeds are of.
 */
static double epoch_load(const struct learn *l, const struct rxb_epoch *e)
{
	struct inputs_stage_b b;

	memset(&b, 0, sizeof(b));
	workload(l, e, &b);
	return inputs_receiver_load(&b);
}

void inputs_update(struct learn *l, const struct learn_disk *disk, uint16_t port,
		   const struct rxb_epoch *e, double dt_s, const struct inputs_env *env,
		   struct inputs *out)
{
	learn_epoch(l, port, e, dt_s, epoch_load(l, e), env->irq_in_task_time, env->now_ns);
	compute_stages(l, disk, port, e, env, out);
	/* The band this epoch fed is at this load: it counts from now. */
	learn_band_load(l, inputs_receiver_load(&out->b));
	if (env->windows_by_rate)
		compute_bands(l, out);
}
