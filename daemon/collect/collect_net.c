// SPDX-License-Identifier: GPL-2.0-or-later
/* Receive-path stages from probe snapshots. See collect_net.h. */
#include "daemon/collect/collect_net.h"

#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/collect/procfs.h"


/* ------------------------------------------------------------ stage A -- */

static const struct netrx_snap_napi *find_napi(const struct netrx_snap *s,
					       uint64_t key)
{
	for (int i = 0; i < s->nnapi; i++)
		if (s->napi[i].key == key)
			return &s->napi[i];
	return NULL;
}

static const struct netrx_snap_irq *find_irq(const struct netrx_snap *s, int irq)
{
	for (int i = 0; i < s->nirqs; i++)
		if (s->irqs[i].irq == irq)
			return &s->irqs[i];
	return NULL;
}

static int napi_cmp(const void *a, const void *b)
{
	const struct rxb_napi_meas *x = a, *y = b;

	return x->polls < y->polls ? 1 : x->polls > y->polls ? -1 : 0;
}

static int irq_cmp(const void *a, const void *b)
{
	const struct rxb_irq_meas *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void stage_a_napi(const struct netrx_snap *prev, const struct netrx_snap *cur,
			 struct rxb_epoch *out)
{
	struct rxb_napi_meas all[NETRX_MAX_NAPI];
	int n = 0;

	for (int i = 0; i < cur->nnapi && n < NETRX_MAX_NAPI; i++) {
		const struct netrx_napi *c = &cur->napi[i].v;
		const struct netrx_snap_napi *pp = find_napi(prev, cur->napi[i].key);
		struct netrx_napi zero = { 0 };
		const struct netrx_napi *p = pp ? &pp->v : &zero;
		struct rxb_napi_meas *m = &all[n];
		uint64_t timed = rxb_sub0(c->timed_polls, p->timed_polls);

		memset(m, 0, sizeof(*m));
		m->polls = rxb_sub0(c->polls, p->polls);
		if (!m->polls)
			continue;
		rxb_strlcpy(m->dev, c->dev, sizeof(m->dev));
		m->pkts = rxb_sub0(c->pkts, p->pkts);
		m->full_polls = rxb_sub0(c->full_polls, p->full_polls);
		m->pkts_per_poll = rxb_ratio((double)m->pkts, (double)m->polls);
		m->budget = c->budget;
		m->service_ns_per_poll =
			rxb_ratio((double)rxb_sub0(c->timed_ns, p->timed_ns), (double)timed);
		m->service_rate_per_s = m->service_ns_per_poll > 0 ?
			1e9 / m->service_ns_per_poll : NAN;
		n++;
	}
	qsort(all, (size_t)n, sizeof(all[0]), napi_cmp);
	out->nnapi = n < RXB_MAX_NAPI ? n : RXB_MAX_NAPI;
	memcpy(out->napi, all, (size_t)out->nnapi * sizeof(all[0]));
}

static void stage_a_irqs(const struct netrx_snap *prev, const struct netrx_snap *cur,
			 double epoch_s, struct rxb_epoch *out)
{
	struct rxb_irq_meas all[NETRX_MAX_IRQS];
	int n = 0;

	for (int i = 0; i < cur->nirqs && n < NETRX_MAX_IRQS; i++) {
		const struct netrx_irq *c = &cur->irqs[i].v;
		const struct netrx_snap_irq *pp = find_irq(prev, cur->irqs[i].irq);
		struct rxb_irq_meas *m = &all[n];
		uint64_t ns;

		memset(m, 0, sizeof(*m));
		m->count = rxb_sub0(c->count, pp ? pp->v.count : 0);
		if (!m->count)
			continue;
		ns = rxb_sub0(c->ns, pp ? pp->v.ns : 0);
		m->irq = cur->irqs[i].irq;
		rxb_strlcpy(m->name, c->name, sizeof(m->name));
		m->rate_per_s = rxb_ratio((double)m->count, epoch_s);
		m->mean_ns = rxb_ratio((double)ns, (double)m->count);
		n++;
	}
	qsort(all, (size_t)n, sizeof(all[0]), irq_cmp);
	out->nirqs = n < RXB_MAX_IRQS ? n : RXB_MAX_IRQS;
	memcpy(out->irqs, all, (size_t)out->nirqs * sizeof(all[0]));
}

void collect_net_sirq_update(struct collect_net_sirq *q, const char *text)
{
	uint64_t now[RXB_MAX_CPUS];
	int n = text ? procfs_parse_softirqs(text, "NET_RX", now, RXB_MAX_CPUS) : -1;

	q->ndelta = 0;
	if (n <= 0) {
		q->ncpus = 0;
		return;
	}
	if (q->ncpus == n) {
		for (int c = 0; c < n; c++)
			q->delta[c] = rxb_sub0(now[c], q->cnt[c]);
		q->ndelta = n;
	}
	memcpy(q->cnt, now, (size_t)n * sizeof(now[0]));
	q->ncpus = n;
}

/*
 * The time per NET_RX softirq to price CPU @c's count with: its own last
 * measurement, else the mean of the other CPUs' (the softirqs run the same
 * code; a sender that moves to a CPU stage A never saw run them must not
 * leave that CPU's share unknown). NaN before any CPU was timed.
 */
static double sirq_ns_per(const struct collect_net_sirq *q, int c)
{
	double sum_ns = 0;
	int n = 0;

	if (q->ns_per[c] > 0)
		return q->ns_per[c];
	for (int i = 0; i < q->ndelta && i < RXB_MAX_CPUS; i++) {
		if (q->ns_per[i] > 0) {
			sum_ns += q->ns_per[i];
			n++;
		}
	}
	return n ? sum_ns / n : NAN;
}

/*
 * Timed softirqs a CPU's price per softirq is learned from, at least. A
 * stage-A epoch at a transfer's end may time a handful (9 polls for 11
 * packets): the cold cost of an idle receive path, many times that of
 * the thousands a second in a transfer. Priced at it, the next epochs'
 * softirqs come to most of the CPU or more (0.8-1.7 in the iperf3 test),
 * and the receiver's own time, which that share is taken off, to little.
 */
#define SIRQ_MIN_TIMED	32

/*
 * A softirq share above the whole CPU is no measurement (a price from
 * another load, or one timed softirq the hypervisor stretched, scaled by
 * NETRX_SAMPLE_EVERY): unknown rather than wrong.
 */
static double sirq_frac_checked(double frac)
{
	return frac > 1 ? NAN : frac;
}

/* The NET_RX softirq share of CPU @c in a sampled epoch without stage A. */
static double sirq_estimate(const struct collect_net_sirq *q, int c, double epoch_ns)
{
	double ns_per;

	if (!q || c >= q->ndelta)
		return NAN;
	if (!q->delta[c])
		return 0;
	ns_per = sirq_ns_per(q, c);
	if (!(ns_per > 0) || !(epoch_ns > 0))
		return NAN;
	return (double)q->delta[c] * ns_per / epoch_ns;
}

void collect_net_stage_a(const struct netrx_snap *prev, const struct netrx_snap *cur,
		  bool sampled, bool stage_a, struct collect_net_sirq *q,
		  struct rxb_epoch *out)
{
	double epoch_ns = (double)rxb_sub0(cur->at_ns, prev->at_ns);

	out->nnapi = 0;
	stage_a = stage_a && sampled;
	if (stage_a)
		stage_a_napi(prev, cur, out);
	stage_a_irqs(prev, cur, epoch_ns / 1e9, out);
	for (int c = 0; c < out->ncpus && c < cur->ncpus; c++) {
		const struct netrx_cpu *n = &cur->cpus[c];
		const struct netrx_cpu *p = c < prev->ncpus ? &prev->cpus[c] : NULL;

		uint64_t cnt = rxb_sub0(n->netrx_cnt, p ? p->netrx_cnt : 0);
		uint64_t timed = rxb_sub0(n->netrx_timed, p ? p->netrx_timed : 0);
		double ns = (double)rxb_sub0(n->netrx_ns, p ? p->netrx_ns : 0);

		out->cpus[c].hardirq_frac =
			rxb_ratio((double)rxb_sub0(n->hardirq_ns, p ? p->hardirq_ns : 0), epoch_ns);
		if (!sampled) {
			out->cpus[c].softirq_frac = NAN;
		} else if (!stage_a) {
			out->cpus[c].softirq_frac =
				sirq_frac_checked(sirq_estimate(q, c, epoch_ns));
		} else {
			/* Timed softirqs stand for all of them (netrx.h). */
			out->cpus[c].softirq_frac = !cnt ? 0 : !timed ? NAN :
				sirq_frac_checked(ns * ((double)cnt / (double)timed) / epoch_ns);
			if (q && timed >= SIRQ_MIN_TIMED && c < RXB_MAX_CPUS)
				q->ns_per[c] = ns / (double)timed;
		}
	}
}

/* ------------------------------------------------------------ stage B -- */

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t collect_net_receivers(const struct sockq_snap *cur, struct collect_sched_tid_time *tids,
		      size_t max)
{
	uint32_t all[SOCKQ_MAX_RX_DEQ];
	size_t n = 0, out = 0;

	for (int i = 0; i < cur->ndeq && n < SOCKQ_MAX_RX_DEQ; i++)
		all[n++] = cur->deq[i].k.tid;
	qsort(all, n, sizeof(all[0]), u32_cmp);
	for (size_t i = 0; i < n && out < max; i++) {
		if (i && all[i] == all[i - 1])
			continue;
		memset(&tids[out], 0, sizeof(tids[out]));
		tids[out++].tid = all[i];
	}
	return out;
}

static const struct sockq_snap_port *find_port(const struct sockq_snap *s,
					       uint16_t port)
{
	for (int i = 0; i < s->nports; i++)
		if (s->ports[i].port == port)
			return &s->ports[i];
	return NULL;
}

static const struct sockq_deq *find_deq(const struct sockq_snap *s, uint32_t tid,
					uint32_t port)
{
	for (int i = 0; i < s->ndeq; i++)
		if (s->deq[i].k.tid == tid && s->deq[i].k.port == port)
			return &s->deq[i].v;
	return NULL;
}

/* Packets @tid dequeued this epoch from @port (all watched ports if 0). */
static uint64_t tid_pkts(const struct sockq_snap *prev, const struct sockq_snap *cur,
			 uint32_t tid, uint32_t port)
{
	uint64_t sum = 0;

	for (int i = 0; i < cur->ndeq; i++) {
		const struct sockq_snap_deq *d = &cur->deq[i];
		const struct sockq_deq *p;

		if (d->k.tid != tid || (port && d->k.port != port))
			continue;
		p = find_deq(prev, tid, d->k.port);
		sum += rxb_sub0(d->v.pkts, p ? p->pkts : 0);
	}
	return sum;
}

static const struct sched_snap_rx *find_rx(const struct sched_snap *s, uint32_t tid)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->nrx; i++)
		if (s->rx[i].tid == tid)
			return &s->rx[i];
	return NULL;
}

/* The receivers' scheduling statistics, weighted by their share. */
struct rx_sums {
	double preempts, run_ns, poff_ns, poff_cnt, soff_ns, soff_cnt, blocks;
	double wwait_ns, wwait_cnt, idle_ns;
	uint64_t wake_max_ns;	/* the longest wait of any of them */
	double off_hist[RXB_OFFCPU_SLOTS];
	double wake_hist[RXB_OFFCPU_SLOTS];
	struct rxb_win_sums off_sums, wake_sums;
};

static void add_rx_stats(const struct sched_snap *sprev, const struct sched_snap *scur,
			 uint32_t tid, double share, struct rx_sums *s)
{
	const struct sched_snap_rx *cr = find_rx(scur, tid), *pr = find_rx(sprev, tid);
	const struct sched_rx_tid *c, *p;
	struct sched_rx_tid zero;

	if (!cr)
		return;
	c = &cr->v;
	if (pr) {
		p = &pr->v;
	} else {
		memset(&zero, 0, sizeof(zero));
		p = &zero;
	}
	if (cr->wake_max_ns > s->wake_max_ns)
		s->wake_max_ns = cr->wake_max_ns;
	s->preempts += share * (double)rxb_sub0(c->preempts, p->preempts);
	s->run_ns += share * (double)rxb_sub0(c->run_preempt_ns, p->run_preempt_ns);
	s->poff_ns += share * (double)rxb_sub0(c->preempt_off_ns, p->preempt_off_ns);
	s->poff_cnt += share * (double)rxb_sub0(c->preempt_off_cnt, p->preempt_off_cnt);
	s->soff_ns += share * (double)rxb_sub0(c->sleep_off_ns, p->sleep_off_ns);
	s->soff_cnt += share * (double)rxb_sub0(c->sleep_off_cnt, p->sleep_off_cnt);
	s->wwait_ns += share * (double)rxb_sub0(c->wake_wait_ns, p->wake_wait_ns);
	s->wwait_cnt += share * (double)rxb_sub0(c->wake_wait_cnt, p->wake_wait_cnt);
	s->idle_ns += share * (double)rxb_sub0(c->idle_sleep_ns, p->idle_sleep_ns);
	s->blocks += share * (double)rxb_sub0(c->blocks, p->blocks);
	collect_sched_add_off_hist(p, c, share, s->off_hist, &s->off_sums);
	collect_sched_add_wake_hist(p, c, share, s->wake_hist, &s->wake_sums);
}

static void add_ran_on(struct rxb_sock_meas *m, int cpu, uint64_t ns)
{
	int cap = (int)(sizeof(m->ran_on) / sizeof(m->ran_on[0]));

	if (!ns)
		return;
	for (int i = 0; i < m->ncpus_ran; i++)
		if (m->ran_on[i].cpu == cpu) {
			m->ran_on[i].oncpu_ns += ns;
			return;
		}
	if (m->ncpus_ran < cap)
		m->ran_on[m->ncpus_ran++] = (struct rxb_cpu_time){ cpu, ns };
}

/* The receivers of @m's port and their shares, from this epoch's packets. */
static void shares_now(const struct rxb_sock_meas *m, const struct sockq_snap *prev,
		       const struct sockq_snap *cur, const struct collect_sched_tid_time *tids,
		       size_t ntids, struct collect_net_port_rx *r)
{
	r->port = m->port;
	r->n = 0;
	for (size_t i = 0; i < ntids && r->n < COLLECT_NET_MAX_RX_PER_PORT; i++) {
		uint64_t here = tid_pkts(prev, cur, tids[i].tid, m->port);

		if (!here)
			continue;
		r->tid[r->n] = tids[i].tid;
		r->share[r->n++] = (double)here /
				   (double)tid_pkts(prev, cur, tids[i].tid, 0);
	}
}

static const struct collect_sched_tid_time *find_tid(const struct collect_sched_tid_time *tids,
					      size_t ntids, uint32_t tid)
{
	for (size_t i = 0; i < ntids; i++)
		if (tids[i].tid == tid)
			return &tids[i];
	return NULL;
}

/*
 * The receiver threads' scheduling this epoch, each weighted by its share
 * of packets from the port (@r). With @counts, also the costs per packet.
 */
static void receivers_of(struct rxb_sock_meas *m, const struct collect_net_port_rx *r,
			 const struct sched_snap *sprev, const struct sched_snap *scur,
			 const struct collect_sched_tid_time *tids, size_t ntids, bool counts)
{
	struct rx_sums rs = { 0 };
	bool unseen = false;
	double oncpu = 0;

	collect_sched_receivers_unknown(m);
	for (int i = 0; i < r->n; i++) {
		const struct collect_sched_tid_time *t = find_tid(tids, ntids, r->tid[i]);
		double share = r->share[i];

		if (!t)		/* forgotten since: it exited */
			continue;
		if (m->ntids < RXB_MAX_TIDS)
			m->tids[m->ntids++] = (int32_t)t->tid;
		if (!t->seen) {
			unseen |= share > 0;
			continue;
		}
		oncpu += share * (double)t->oncpu_ns;
		for (int c = 0; c < t->ncpus_ran; c++)
			add_ran_on(m, t->ran_on[c].cpu,
				   (uint64_t)(share * (double)t->ran_on[c].oncpu_ns));
		add_rx_stats(sprev, scur, t->tid, share, &rs);
	}
	/*
	 * Without the scheduler probe only the thread ids are known; nor when
	 * it did not see a receiver that read packets this epoch (its record
	 * not read, or not kept): its time is not zero, but unknown.
	 */
	m->receivers_valid = scur != NULL && !unseen;
	if (!m->receivers_valid)
		return;
	m->receiver_oncpu_ns = (uint64_t)oncpu;
	/* Each block is followed by one wakeup; blocks are always traced. */
	m->recv_wakeups = (uint64_t)(rs.blocks + 0.5);
	m->receiver_preemptions = (uint64_t)(rs.preempts + 0.5);
	m->run_before_preempt_ns = rxb_ratio(rs.run_ns, rs.preempts);
	m->preempt_off_ns = rxb_ratio(rs.poff_ns, rs.poff_cnt);
	m->sleep_off_ns = rxb_ratio(rs.soff_ns, rs.soff_cnt);
	m->wake_waits = (uint64_t)(rs.wwait_cnt + 0.5);
	m->wake_wait_ns = rxb_ratio(rs.wwait_ns, rs.wwait_cnt);
	/* The long sleeps are in soff_ns too, counted when they ended. */
	m->active_ns = fmax(oncpu + rs.poff_ns + rs.soff_ns - rs.idle_ns, 0.0);
	memcpy(m->offcpu_hist, rs.off_hist, sizeof(m->offcpu_hist));
	memcpy(m->wake_hist, rs.wake_hist, sizeof(m->wake_hist));
	m->offcpu_sums = rs.off_sums;
	m->wake_sums = rs.wake_sums;
	m->wake_max_ns = (double)rs.wake_max_ns;
	if (!counts)
		return;
	m->cpu_ns_per_pkt = rxb_ratio(oncpu, (double)m->pkts_out);
	m->pkts_per_wakeup = rxb_ratio((double)m->pkts_out, rs.blocks);
}

static const struct collect_net_port_rx *remembered(const struct collect_net_rx_memory *mem,
					      uint16_t port)
{
	for (int i = 0; i < mem->nports; i++)
		if (mem->ports[i].port == port)
			return &mem->ports[i];
	return NULL;
}

static void reason_label(char *buf, size_t size, uint32_t r, collect_net_reason_fn name,
			 void *arg)
{
	const char *nm = name ? name(arg, r) : NULL;

	if (nm)
		rxb_strlcpy(buf, nm, size);
	else
		snprintf(buf, size, "%u", r);
}

static int drop_cmp(const void *a, const void *b)
{
	const struct rxb_drop_count *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The socket's largest drop reasons this epoch. */
static void sock_reasons(struct rxb_sock_meas *m, const struct sockq_slot *c,
			 const struct sockq_slot *p, collect_net_reason_fn name, void *arg)
{
	struct rxb_drop_count all[SOCKQ_SLOT_REASONS];
	int n = 0, cap = (int)(sizeof(m->drop_reasons) / sizeof(m->drop_reasons[0]));

	for (uint32_t r = 0; r < SOCKQ_SLOT_REASONS; r++) {
		uint64_t d = rxb_sub0(c->drop_reason[r], p->drop_reason[r]);

		if (!d)
			continue;
		all[n].count = d;
		if (r == SOCKQ_SLOT_REASONS - 1)	/* the catch-all bucket */
			rxb_strlcpy(all[n].reason, "OTHER", sizeof(all[n].reason));
		else
			reason_label(all[n].reason, sizeof(all[n].reason), r, name, arg);
		n++;
	}
	if (n)
		qsort(all, (size_t)n, sizeof(all[0]), drop_cmp);
	m->nreasons = n < cap ? n : cap;
	memcpy(m->drop_reasons, all, (size_t)m->nreasons * sizeof(all[0]));
}

/* A sampled epoch: every count of the socket. */
static void sock_counts(struct rxb_sock_meas *m, const struct sockq_snap_port *c,
			const struct sockq_snap_port *p, const struct sockq_slot *cv,
			const struct sockq_slot *pv)
{
	uint64_t truesize;

	m->counts_valid = true;
	m->pkts_enqueued = rxb_sub0(cv->enq, pv->enq);
	m->pkts_out = rxb_sub0(cv->deq, pv->deq);
	m->empty_reads = rxb_sub0(cv->empty_reads, pv->empty_reads);
	m->bytes_in = rxb_sub0(cv->enq_bytes, pv->enq_bytes);
	m->bytes_out = rxb_sub0(cv->deq_bytes, pv->deq_bytes);
	m->pkts_in = m->pkts_enqueued + m->drops;
	truesize = rxb_sub0(cv->enq_truesize, pv->enq_truesize);
	m->truesize_per_pkt_bytes = rxb_ratio((double)truesize, (double)m->pkts_enqueued);
	if (c && c->have_state) {
		m->ipproto = (uint8_t)c->v.proto;
		m->rcvbuf_bytes = c->v.rcvbuf_bytes;
		m->rcvbuf_ipproto = (uint8_t)c->v.rcvbuf_proto;
		m->queue_pkts_delta = (int64_t)c->qlen -
			(p && p->have_state ? (int64_t)p->qlen : 0);
	}
	/* The probes counted every enqueue and dequeue of the epoch. */
	m->queue_valid = true;
	if (m->rcvbuf_bytes && m->truesize_per_pkt_bytes > 0) {
		double k = floor(m->rcvbuf_bytes / m->truesize_per_pkt_bytes);

		m->queue_pkts_cap = k < 1 ? 1 : (uint32_t)k;
	}
}

bool collect_net_conserve(uint64_t pkts_out, uint64_t bytes_out, uint64_t rq0_bytes,
			  uint64_t rq1_bytes, double truesize_per_pkt_bytes,
			  double bytes_per_pkt, struct collect_net_derived *d)
{
	int64_t q0, q1, enq;
	double bytes;

	if (truesize_per_pkt_bytes > 0) {
		q0 = llround((double)rq0_bytes / truesize_per_pkt_bytes);
		q1 = llround((double)rq1_bytes / truesize_per_pkt_bytes);
	} else if (!rq0_bytes && !rq1_bytes) {
		q0 = q1 = 0;	/* empty at both edges, whatever the size */
	} else {
		return false;
	}
	d->queue_pkts_delta = q1 - q0;
	enq = (int64_t)pkts_out + d->queue_pkts_delta;
	d->pkts_enqueued = enq > 0 ? (uint64_t)enq : 0;
	bytes = (double)bytes_out + (double)d->queue_pkts_delta *
		(bytes_per_pkt > 0 ? bytes_per_pkt : 0);
	d->bytes_in = bytes > 0 ? (uint64_t)llround(bytes) : 0;
	return true;
}

/*
 * A sampled epoch without the enqueue program: its arrivals, queue change
 * and receive buffer by conservation (collect_net.h), over what
 * sock_counts() filled. False when they cannot be derived.
 */
static bool sock_derived(struct rxb_sock_meas *m, const struct sockq_snap_port *c,
			 const struct sockq_snap_port *p,
			 const struct collect_net_port_rx *old)
{
	double truesize = old ? old->truesize_per_pkt_bytes : 0;
	struct collect_net_derived d;

	if (!c || !p || !c->have_rqueue || !p->have_rqueue ||
	    !collect_net_conserve(m->pkts_out, m->bytes_out, p->rqueue_bytes,
				  c->rqueue_bytes, truesize, old ? old->bytes_per_pkt : 0, &d))
		return false;
	m->pkts_enqueued = d.pkts_enqueued;
	m->pkts_in = d.pkts_enqueued + m->drops;
	m->bytes_in = d.bytes_in;
	m->queue_pkts_delta = d.queue_pkts_delta;
	m->queue_valid = true;
	m->truesize_per_pkt_bytes = NAN;	/* not measured */
	if (c->diag_rcvbuf_bytes) {
		m->rcvbuf_bytes = c->diag_rcvbuf_bytes;
		m->rcvbuf_ipproto = IPPROTO_UDP;
	}
	m->queue_pkts_cap = 0;
	if (m->rcvbuf_bytes && truesize > 0) {
		double k = floor(m->rcvbuf_bytes / truesize);

		m->queue_pkts_cap = k < 1 ? 1 : (uint32_t)k;
	}
	return true;
}

/* Did the epoch from @prev to @cur count enqueues of @port, with their memory? */
static bool sizes_counted(const struct sockq_snap *prev, const struct sockq_snap *cur,
			  uint16_t port)
{
	const struct sockq_snap_port *c = cur ? find_port(cur, port) : NULL;
	const struct sockq_snap_port *p = prev ? find_port(prev, port) : NULL;

	return c && p && c->v.enq > p->v.enq && c->v.enq_truesize > p->v.enq_truesize;
}

bool collect_net_sizes_known(const struct collect_net_rx_memory *mem,
			     const struct sockq_snap *prev, const struct sockq_snap *cur,
			     bool enq_counted, const uint16_t *ports, int nports)
{
	for (int i = 0; i < nports; i++) {
		const struct collect_net_port_rx *r = remembered(mem, ports[i]);

		if (r && r->truesize_per_pkt_bytes > 0)
			continue;
		if (!enq_counted || !sizes_counted(prev, cur, ports[i]))
			return false;
	}
	return true;
}

/* Undo sock_counts(): the port's epoch as a not sampled one. */
static void sock_uncounted(struct rxb_sock_meas *m)
{
	m->counts_valid = m->queue_valid = false;
	m->pkts_enqueued = m->pkts_in = m->pkts_out = m->empty_reads = 0;
	m->bytes_in = m->bytes_out = 0;
	m->queue_pkts_delta = 0;
	m->queue_pkts_cap = 0;
	m->truesize_per_pkt_bytes = NAN;
}

/* What a counted epoch leaves for the derived ones after it. */
static void remember_sizes(const struct rxb_sock_meas *m, const struct sockq_slot *cv,
			   const struct sockq_slot *pv, struct collect_net_port_rx *r,
			   const struct collect_net_port_rx *old)
{
	r->truesize_per_pkt_bytes = old ? old->truesize_per_pkt_bytes : 0;
	r->bytes_per_pkt = old ? old->bytes_per_pkt : 0;
	if (!(m->truesize_per_pkt_bytes > 0))
		return;
	r->truesize_per_pkt_bytes = m->truesize_per_pkt_bytes;
	/* Payload of the packets at the tail when each was queued. */
	r->bytes_per_pkt = rxb_ratio((double)rxb_sub0(cv->enq_bytes, pv->enq_bytes),
				     (double)m->pkts_enqueued);
}

_Static_assert(SOCKQ_EPISODE_BUCKETS == RXB_EPISODE_BUCKETS,
	       "the probe's episode buckets are the record's");

/* The loss episodes that began, and those that ended, between two snapshots. */
static void episodes_of(struct rxb_sock_meas *m, const struct sockq_snap_port *c,
			const struct sockq_snap_port *p)
{
	if (!c)
		return;
	m->drop_episodes = rxb_sub0(c->drop_episodes, p ? p->drop_episodes : 0);
	for (uint32_t i = 0; i < SOCKQ_EPISODE_BUCKETS; i++) {
		uint64_t n = rxb_sub0(c->episode_hist[i], p ? p->episode_hist[i] : 0);

		if (!n)
			continue;
		if (m->nepisode_bins == RXB_EPISODE_BINS) {
			m->episode_bins_cut = true;
			break;
		}
		m->episodes_ended[m->nepisode_bins].bucket = (uint16_t)i;
		m->episodes_ended[m->nepisode_bins++].count = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
}

void collect_net_stage_b(const struct sockq_snap *prev, const struct sockq_snap *cur,
		  const struct sched_snap *sprev, const struct sched_snap *scur,
		  const struct collect_sched_tid_time *tids, size_t ntids,
		  const uint16_t *ports, int nports, collect_net_reason_fn name, void *arg,
		  bool sampled, bool enq_counted, struct collect_net_rx_memory *mem,
		  struct rxb_epoch *out)
{
	struct collect_net_rx_memory now = { 0 };

	out->nsocks = 0;
	for (int i = 0; i < nports && out->nsocks < RXB_MAX_SOCKS; i++) {
		const struct sockq_snap_port *c = find_port(cur, ports[i]);
		const struct sockq_snap_port *p = find_port(prev, ports[i]);
		struct rxb_sock_meas *m = &out->socks[out->nsocks++];
		struct sockq_slot zero = { 0 };
		const struct sockq_slot *cv = c ? &c->v : &zero;
		const struct sockq_slot *pv = p ? &p->v : &zero;
		struct collect_net_port_rx *r = &now.ports[now.nports];
		const struct collect_net_port_rx *old;

		memset(m, 0, sizeof(*m));
		m->port = ports[i];
		m->truesize_per_pkt_bytes = NAN;
		/* kfree_skb stays attached: drops are counted in every epoch. */
		m->drops_valid = cur->have_rx_sk;
		m->reasons_valid = cur->have_rx_sk;
		m->drops = rxb_sub0(cv->drops, pv->drops);
		m->drops_rcvbuf = rxb_sub0(cv->drops_rcvbuf, pv->drops_rcvbuf);
		episodes_of(m, c, p);
		sock_reasons(m, cv, pv, name, arg);
		old = remembered(mem, ports[i]);
		if (sampled) {
			sock_counts(m, c, p, cv, pv);
			if (!enq_counted && !sock_derived(m, c, p, old)) {
				sock_uncounted(m);
				goto unsampled;
			}
			shares_now(m, prev, cur, tids, ntids, r);
			receivers_of(m, r, sprev, scur, tids, ntids, true);
			/* Nobody dequeued: the last receivers are still the
			 * best guess for the epochs until the next sample. */
			if (!r->n && old)
				*r = *old;
			remember_sizes(m, cv, pv, r, old);
			now.nports++;
			continue;
		}
unsampled:
		if (old) {
			*r = *old;
			now.nports++;
			receivers_of(m, r, sprev, scur, tids, ntids, false);
		} else {
			collect_sched_receivers_unknown(m);
		}
	}
	/* Ports no longer watched are forgotten. */
	*mem = now;
}

void collect_net_drop_reasons(const struct sockq_snap *prev, const struct sockq_snap *cur,
		       collect_net_reason_fn name, void *arg, struct rxb_epoch *out)
{
	out->nreasons = 0;
	for (int i = 0; i < cur->nreasons && out->nreasons < RXB_MAX_DROP_REASONS; i++) {
		const struct sockq_snap_reason *c = &cur->reasons[i];
		uint64_t before = 0, d;
		struct rxb_drop_count *r;

		for (int j = 0; j < prev->nreasons; j++)
			if (prev->reasons[j].reason == c->reason)
				before = prev->reasons[j].count;
		d = rxb_sub0(c->count, before);
		if (!d)
			continue;
		r = &out->drops_by_reason[out->nreasons++];
		reason_label(r->reason, sizeof(r->reason), c->reason, name, arg);
		r->count = d;
	}
}
