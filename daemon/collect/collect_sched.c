// SPDX-License-Identifier: GPL-2.0-or-later
/* Task classes per CPU from scheduler snapshots. See collect_sched.h. */
#include "daemon/collect/collect_sched.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/collect/procfs.h"

_Static_assert(RXB_OFFCPU_SLOTS == SCHED_HIST_SLOTS,
	       "the published window histogram is the probe's");

/* @share times the deltas of one probe array, each scaled by @unit. */
static void add_deltas(const __u64 *prev, const __u64 *cur, double share, double unit,
		       double out[RXB_OFFCPU_SLOTS])
{
	for (size_t r = 0; r < RXB_OFFCPU_SLOTS; r++)
		out[r] += share * unit * (double)rxb_sub0(cur[r], prev ? prev[r] : 0);
}

void collect_sched_add_off_hist(const struct sched_rx_tid *prev,
				const struct sched_rx_tid *cur, double share,
				double hist[RXB_OFFCPU_SLOTS], struct rxb_win_sums *sums)
{
	add_deltas(prev ? prev->off_hist : NULL, cur->off_hist, share, 1.0, hist);
	add_deltas(prev ? prev->off_sum_ns : NULL, cur->off_sum_ns, share, 1e-9, sums->sum_s);
	add_deltas(prev ? prev->off_sq_us2 : NULL, cur->off_sq_us2, share, 1e-12, sums->sq_s2);
}

void collect_sched_add_wake_hist(const struct sched_rx_tid *prev,
				 const struct sched_rx_tid *cur, double share,
				 double hist[RXB_OFFCPU_SLOTS], struct rxb_win_sums *sums)
{
	add_deltas(prev ? prev->wake_hist : NULL, cur->wake_hist, share, 1.0, hist);
	add_deltas(prev ? prev->wake_sum_ns : NULL, cur->wake_sum_ns, share, 1e-9,
		   sums->sum_s);
	add_deltas(prev ? prev->wake_sq_us2 : NULL, cur->wake_sq_us2, share, 1e-12,
		   sums->sq_s2);
}

enum task_class collect_sched_classify(const struct task_delta *d)
{
	uint64_t runnable = d->oncpu_ns + d->wait_ns;
	uint64_t blocks = d->n_sleep + d->n_iowait + d->n_blocked;

	if (!d->present_ns)
		return TASK_CLASS_NONE;
	if ((double)runnable >= COLLECT_SCHED_CPU_RUNNABLE_MIN * (double)d->present_ns &&
	    d->n_preempt >= blocks)
		return TASK_CLASS_CPU;
	if (d->n_iowait > 0 &&
	    (double)(runnable + d->iowait_ns) >=
		    COLLECT_SCHED_IO_ACTIVE_MIN * (double)d->present_ns)
		return TASK_CLASS_IO;
	return TASK_CLASS_NONE;
}

static const char *const class_names[] = {
	[TASK_CLASS_NONE] = "none",
	[TASK_CLASS_CPU] = "cpu",
	[TASK_CLASS_IO] = "io",
};

const char *collect_sched_class_name(enum task_class c)
{
	return RXB_NAME(class_names, c, "none");
}

/* The part of [start, end) a task existed in. */
static uint64_t present_ns(const struct sched_snap_task *t, bool known_before,
			   uint64_t start, uint64_t end)
{
	uint64_t from = start, to = end;

	if (!known_before && t->born_ns > start)
		from = t->born_ns;
	if (t->state == SCHED_ST_DEAD && t->dead_ns && t->dead_ns < end)
		to = t->dead_ns;
	return rxb_sub0(to, from);
}

static const struct sched_snap_task *find_task(const struct sched_snap *s,
					       uint32_t tid)
{
	size_t i = rxb_lower_bound_u32(s->tasks, s->ntasks, sizeof(s->tasks[0]),
				       offsetof(struct sched_snap_task, tid), tid);

	return i < s->ntasks && s->tasks[i].tid == tid ? &s->tasks[i] : NULL;
}

/* Index of the first row of @tid in @s (s->nrows if none). */
static size_t first_row(const struct sched_snap *s, uint32_t tid)
{
	return rxb_lower_bound_u32(s->rows, s->nrows, sizeof(s->rows[0]),
				   offsetof(__typeof__(s->rows[0]), tid), tid);
}

/* Whether @tid names the same task in @a and @b (seen in both, same start). */
static bool same_task(const struct sched_snap *a, const struct sched_snap *b, uint32_t tid)
{
	const struct sched_snap_task *x = find_task(a, tid), *y = find_task(b, tid);

	return x && y && x->first_ns == y->first_ns;
}

void collect_sched_rows_monotone(const struct sched_snap *prev, struct sched_snap *cur)
{
	size_t p = 0;

	for (size_t c = 0; c < cur->nrows; c++) {
		struct sched_snap_row *r = &cur->rows[c];
		const struct sched_snap_row *q;

		while (p < prev->nrows && (prev->rows[p].tid < r->tid ||
		       (prev->rows[p].tid == r->tid && prev->rows[p].cpu < r->cpu)))
			p++;
		if (p == prev->nrows)
			break;
		q = &prev->rows[p];
		if (q->tid != r->tid || q->cpu != r->cpu || !same_task(prev, cur, r->tid))
			continue;
		if (r->oncpu_ns < q->oncpu_ns)
			r->oncpu_ns = q->oncpu_ns;
		if (r->wait_ns < q->wait_ns)
			r->wait_ns = q->wait_ns;
	}
}

/* Per-CPU running/runnable deltas of one task. */
struct cpu_share {
	uint32_t cpu;
	uint64_t oncpu_ns;
	uint64_t runnable_ns;
};

static int task_shares(const struct sched_snap *prev, const struct sched_snap *cur,
		       uint32_t tid, bool same_task, struct cpu_share *sh, int max)
{
	size_t c = first_row(cur, tid);
	size_t p = same_task ? first_row(prev, tid) : prev->nrows;
	int n = 0;

	for (; c < cur->nrows && cur->rows[c].tid == tid; c++) {
		const struct sched_snap_row *r = &cur->rows[c];
		uint64_t on = r->oncpu_ns, wait = r->wait_ns;

		while (p < prev->nrows && prev->rows[p].tid == tid &&
		       prev->rows[p].cpu < r->cpu)
			p++;
		if (p < prev->nrows && prev->rows[p].tid == tid &&
		    prev->rows[p].cpu == r->cpu) {
			on = rxb_sub0(on, prev->rows[p].oncpu_ns);
			wait = rxb_sub0(wait, prev->rows[p].wait_ns);
		}
		if ((!on && !wait) || n >= max)
			continue;
		sh[n++] = (struct cpu_share){ r->cpu, on, on + wait };
	}
	return n;
}

/*
 * The task's counters in @c and @p are as of their own at_ns (0: as of the
 * snapshot's), which can be well after the epoch's ends when a read
 * stalled: its delta then covers [p->at_ns, c->at_ns), not [start, end).
 */
static void task_delta_of(const struct sched_snap_task *c,
			  const struct sched_snap_task *p, uint64_t start,
			  uint64_t end, struct task_delta *d)
{
	struct sched_snap_task zero = { 0 };

	if (p && p->at_ns)
		start = p->at_ns;
	if (c->at_ns)
		end = c->at_ns;
	if (!p)
		p = &zero;
	d->span_ns = rxb_sub0(end, start);
	d->present_ns = present_ns(c, p != &zero, start, end);
	d->oncpu_ns = rxb_sub0(c->oncpu_ns, p->oncpu_ns);
	d->wait_ns = rxb_sub0(c->wait_ns, p->wait_ns);
	d->iowait_ns = rxb_sub0(c->iowait_ns, p->iowait_ns);
	d->n_preempt = rxb_sub0(c->n_preempt, p->n_preempt);
	d->n_sleep = rxb_sub0(c->n_sleep, p->n_sleep);
	d->n_iowait = rxb_sub0(c->n_iowait, p->n_iowait);
	d->n_blocked = rxb_sub0(c->n_blocked, p->n_blocked);
	d->n_untraced = rxb_sub0(c->n_untraced, p->n_untraced);
}

static struct collect_sched_tid_time *find_rx(struct collect_sched_tid_time *rx, size_t nrx,
				       uint32_t tid)
{
	for (size_t i = 0; i < nrx; i++)
		if (rx[i].tid == tid)
			return &rx[i];
	return NULL;
}

static int share_cmp(const void *a, const void *b)
{
	const struct cpu_share *x = a, *y = b;

	/* Largest on-CPU time first. */
	return x->oncpu_ns < y->oncpu_ns ? 1 : x->oncpu_ns > y->oncpu_ns ? -1 : 0;
}

static void note_rx(struct collect_sched_tid_time *r, const struct task_delta *d,
		    struct cpu_share *sh, int nsh)
{
	int cap = (int)(sizeof(r->ran_on) / sizeof(r->ran_on[0]));

	r->seen = true;
	r->oncpu_ns = d->oncpu_ns;
	r->ncpus_ran = 0;
	qsort(sh, (size_t)nsh, sizeof(*sh), share_cmp);
	for (int i = 0; i < nsh && r->ncpus_ran < cap; i++) {
		if (!sh[i].oncpu_ns)
			break;
		r->ran_on[r->ncpus_ran++] =
			(struct rxb_cpu_time){ (int)sh[i].cpu, sh[i].oncpu_ns };
	}
}

void collect_sched_report_free(struct collect_sched_report *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int weight_cmp(const void *a, const void *b)
{
	const struct collect_sched_weight *x = a, *y = b;

	return x->w < y->w ? 1 : x->w > y->w ? -1 : 0;
}

static void report_task(struct collect_sched_report *r, const struct sched_snap_task *t,
			const struct task_delta *d, enum task_class cls,
			bool receiver, const double *w, const struct cpu_share *sh,
			int nsh)
{
	struct collect_sched_task_report *o;

	if (!r)
		return;
	if (cls == TASK_CLASS_NONE && !receiver &&
	    (!r->with_runnable || !(d->span_ns > 0) ||
	     (double)(d->oncpu_ns + d->wait_ns) <
		     COLLECT_SCHED_REPORT_RUNNABLE_MIN * (double)d->span_ns))
		return;
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 64;
		struct collect_sched_task_report *p = realloc(r->v, ncap * sizeof(*p));

		if (!p)
			return;	/* the report is best effort; the epoch is not */
		r->v = p;
		r->cap = ncap;
	}
	o = &r->v[r->n++];
	memset(o, 0, sizeof(*o));
	o->tid = t->tid;
	o->tgid = t->tgid;
	memcpy(o->comm, t->comm, sizeof(o->comm));
	o->cls = cls;
	o->receiver = receiver;
	o->d = *d;
	for (int i = 0; i < nsh; i++) {
		int k = o->nw < COLLECT_SCHED_REPORT_CPUS ? o->nw++ : COLLECT_SCHED_REPORT_CPUS - 1;

		if (k == COLLECT_SCHED_REPORT_CPUS - 1 && o->w[k].w >= w[i])
			continue;
		o->w[k].cpu = (int)sh[i].cpu;
		o->w[k].w = w[i];
		qsort(o->w, (size_t)o->nw, sizeof(o->w[0]), weight_cmp);
	}
}

/* Running sums while the tasks are visited. */
struct acc {
	double slice_num[RXB_MAX_CPUS];	/* share-weighted slice (or run) ns */
	double slice_den[RXB_MAX_CPUS];	/* share-weighted preemptions */
	double run_num[RXB_MAX_CPUS];	/* share-weighted runs before preemption */
	double io_oncpu_ns;
	double io_bursts;
	double io_completed;	/* their requests completed */
	double io_service_ns;	/* ... and the disk's time on them */
	struct cpu_share sh[RXB_MAX_CPUS];	/* one task's CPUs */
	double w[RXB_MAX_CPUS];			/* what it added on each */
};

static void add_task(struct rxb_epoch *out, struct acc *a,
		     const struct sched_snap_task *t, const struct sched_snap_task *p,
		     const struct task_delta *d, enum task_class cls,
		     const struct cpu_share *sh, int nsh, double epoch_ns)
{
	/*
	 * Its runnable share of the stretch its own counters cover, split
	 * over CPUs as the per-CPU rows say. The rows are read before the
	 * tasks, so after a stalled read their sum is not the task's.
	 */
	double span_ns = d->span_ns ? (double)d->span_ns : epoch_ns;
	double frac = (double)(d->oncpu_ns + d->wait_ns) / span_ns;
	uint64_t runnable = 0;
	uint64_t slice = p ? rxb_sub0(t->slice_ns, p->slice_ns) : t->slice_ns;
	uint64_t run = p ? rxb_sub0(t->run_preempt_ns, p->run_preempt_ns)
			 : t->run_preempt_ns;

	/* One task is never runnable for longer than the stretch. */
	if (frac > 1)
		frac = 1;
	for (int i = 0; i < nsh; i++)
		runnable += sh[i].runnable_ns;
	for (int i = 0; i < nsh; i++) {
		uint32_t c = sh[i].cpu;
		double share = runnable ? (double)sh[i].runnable_ns / (double)runnable : 0;

		a->w[i] = 0;
		if (c >= (uint32_t)out->ncpus)
			continue;
		out->cpus[c].runnable_avg += share * frac;
		if (cls == TASK_CLASS_CPU) {
			a->w[i] = share * frac;
			out->cpus[c].cpu_bound += a->w[i];
			/* EEVDF: the slice it had; CFS (no se.slice): its run. */
			a->slice_num[c] += share * (double)(slice ? slice : run);
			a->slice_den[c] += share * (double)d->n_preempt;
			a->run_num[c] += share * (double)run;
		} else if (cls == TASK_CLASS_IO) {
			a->w[i] = (double)d->present_ns / span_ns * share;
			out->cpus[c].io_bound += a->w[i];
		} else {
			a->w[i] = share * frac;	/* reported only */
		}
	}
	/* An I/O-bound task that never ran this epoch still exists. */
	if (cls == TASK_CLASS_IO && !runnable && t->cpu < (uint32_t)out->ncpus)
		out->cpus[t->cpu].io_bound += (double)d->present_ns / span_ns;
	if (cls == TASK_CLASS_IO) {
		uint64_t traced = d->n_preempt + d->n_sleep + d->n_iowait + d->n_blocked;
		/* Untraced switch-outs are taken to be of the traced mix. */
		double waits = (double)d->n_iowait *
			(traced ? 1.0 + (double)d->n_untraced / (double)traced : 1.0);

		a->io_oncpu_ns += (double)d->oncpu_ns;
		a->io_bursts += waits > (double)d->n_disk_reqs ? waits
							       : (double)d->n_disk_reqs;
	}
}

static void fill_cpu_counters(const struct sched_snap *prev,
			      const struct sched_snap *cur, struct rxb_epoch *out)
{
	for (int c = 0; c < out->ncpus; c++) {
		struct rxb_cpu_meas *m = &out->cpus[c];
		const struct sched_cpu *n = &cur->cpus[c];

		m->cpu = c;
		if (c < prev->ncpus) {
			m->switches = rxb_sub0(n->switches, prev->cpus[c].switches);
			m->preemptions = rxb_sub0(n->preemptions, prev->cpus[c].preemptions);
			m->untraced_switches = rxb_sub0(n->untraced, prev->cpus[c].untraced);
		} else {
			m->switches = n->switches;
			m->preemptions = n->preemptions;
			m->untraced_switches = n->untraced;
		}
	}
}

/* Every output collect_sched_compute() fills, to its value before any task. */
static void outputs_reset(const struct sched_snap *cur, struct collect_sched_tid_time *rx,
			  size_t nrx, struct rxb_epoch *out, struct collect_sched_report *report)
{
	out->ncpus = cur->ncpus < RXB_MAX_CPUS ? cur->ncpus : RXB_MAX_CPUS;
	for (int c = 0; c < out->ncpus; c++) {
		struct rxb_cpu_meas *m = &out->cpus[c];

		m->cpu = c;
		m->cpu_bound = 0;
		m->io_bound = 0;
		m->runnable_avg = 0;
		m->cpu_bound_slice_ns = NAN;
		m->cpu_bound_run_ns = NAN;
		m->cpu_bound_eff = NAN;
		m->cpu_bound_eff_valid = false;
		m->quota_period_s = m->quota_slow_s = 0;
		m->quota_slow_share = m->quota_fast_share = 0;
	}
	for (size_t i = 0; i < nrx; i++) {
		rx[i].seen = false;
		rx[i].oncpu_ns = 0;
		rx[i].ncpus_ran = 0;
	}
	out->disk.mean_cpu_burst_ns = NAN;
	out->disk.io_cpu_rate_per_s = NAN;
	if (report)
		report->n = 0;
}

/* The per-CPU and disk means of the tasks' sums in @a. */
static void outputs_means(const struct acc *a, struct rxb_epoch *out)
{
	for (int c = 0; c < out->ncpus; c++) {
		if (a->slice_den[c] > 0) {
			out->cpus[c].cpu_bound_slice_ns = a->slice_num[c] / a->slice_den[c];
			out->cpus[c].cpu_bound_run_ns = a->run_num[c] / a->slice_den[c];
		}
	}
	if (a->io_bursts > 0) {
		out->disk.mean_cpu_burst_ns = a->io_oncpu_ns / a->io_bursts;
		if (out->disk.mean_cpu_burst_ns > 0)
			out->disk.io_cpu_rate_per_s = 1e9 / out->disk.mean_cpu_burst_ns;
	}
	if (a->io_completed > 0 && a->io_service_ns > 0) {
		out->disk.valid = true;
		out->disk.completions = (uint64_t)a->io_completed;
		out->disk.mean_service_ns = a->io_service_ns / a->io_completed;
		out->disk.service_rate_per_s = 1e9 / out->disk.mean_service_ns;
	}
}

void collect_sched_compute(const struct sched_snap *prev, const struct sched_snap *cur,
		    struct collect_sched_tid_time *rx, size_t nrx, struct rxb_epoch *out,
		    struct collect_sched_report *report, collect_sched_reqs_fn reqs, void *reqs_arg)
{
	uint64_t start = prev->at_ns, end = cur->at_ns;
	double epoch_ns = (double)rxb_sub0(end, start);
	struct acc *a;

	outputs_reset(cur, rx, nrx, out, report);
	if (epoch_ns <= 0 || !out->ncpus)
		return;
	fill_cpu_counters(prev, cur, out);

	/*
	 * A snapshot without tasks is one whose read failed (there is always
	 * some task): the epoch's counts are unknown, not 0.
	 */
	a = prev->ntasks && cur->ntasks ? calloc(1, sizeof(*a)) : NULL;
	if (!a) {
		for (int c = 0; c < out->ncpus; c++) {
			out->cpus[c].cpu_bound = NAN;
			out->cpus[c].io_bound = NAN;
			out->cpus[c].runnable_avg = NAN;
		}
		return;
	}
	for (size_t i = 0; i < cur->ntasks; i++) {
		const struct sched_snap_task *t = &cur->tasks[i];
		const struct sched_snap_task *p = find_task(prev, t->tid);
		struct cpu_share *sh = a->sh;
		struct collect_sched_disk_use du;
		struct collect_sched_tid_time *r;
		struct task_delta d;
		enum task_class cls;
		int nsh;

		if (p && p->first_ns != t->first_ns)
			p = NULL;	/* the tid now names another task */
		/*
		 * Known before the last snapshot yet not in it (its record's
		 * read failed there): its counters since it began are not this
		 * epoch's. Left out; the next epoch diffs against this one.
		 */
		if (!p && t->first_ns < start)
			continue;
		/* Dead before this epoch began: reported already. */
		if (p && p->state == SCHED_ST_DEAD)
			continue;
		task_delta_of(t, p, start, end, &d);
		memset(&du, 0, sizeof(du));
		if (reqs)
			reqs(reqs_arg, t->tid, &du);
		d.n_disk_reqs = du.issued;
		nsh = task_shares(prev, cur, t->tid, p != NULL, sh, RXB_MAX_CPUS);
		r = find_rx(rx, nrx, t->tid);
		if (r) {
			note_rx(r, &d, sh, nsh);
			cls = TASK_CLASS_NONE;	/* the tagged customer */
		} else {
			cls = collect_sched_classify(&d);
		}
		add_task(out, a, t, p, &d, cls, sh, nsh, epoch_ns);
		if (cls == TASK_CLASS_IO) {
			a->io_completed += (double)du.completed;
			a->io_service_ns += (double)du.service_ns;
		}
		report_task(report, t, &d, cls, r != NULL, a->w, sh, nsh);
	}
	outputs_means(a, out);
	free(a);
}

struct seed_ctx {
	struct sched_probe *sp;
	int seeded;
};

static int seed_one(void *arg, const struct procfs_task *t)
{
	struct seed_ctx *ctx = arg;

	if (!t->have_schedstat)
		return 0;
	if (sched_probe_seed(ctx->sp, t->tid, t->tgid, t->comm, t->state == 'R',
			     t->cpu < 0 ? 0 : (uint32_t)t->cpu, t->sum_exec_ns,
			     t->run_delay_ns, t->pcount, rxb_mono_ns()) == 0)
		ctx->seeded++;
	return 0;
}

int collect_sched_seed_from_proc(struct sched_probe *sp)
{
	struct seed_ctx ctx = { sp, 0 };
	int err = procfs_for_each_task(false, seed_one, &ctx);

	return err < 0 ? err : ctx.seeded;
}

void collect_sched_receivers_unknown(struct rxb_sock_meas *m)
{
	m->cpu_ns_per_pkt = NAN;
	m->pkts_per_wakeup = NAN;
	m->run_before_preempt_ns = NAN;
	m->preempt_off_ns = NAN;
	m->sleep_off_ns = NAN;
	m->wake_wait_ns = NAN;
	m->active_ns = NAN;
}
