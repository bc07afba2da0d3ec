// SPDX-License-Identifier: GPL-2.0-or-later
/* The /proc side of the measurement. See collect_proc.h. */
#include "daemon/collect/collect_proc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/collect/collect_sched.h"
#include "daemon/collect/procfs.h"

#define COLLECT_PROC_MAX_DISKS	128
#define COLLECT_PROC_MAX_UDP	4096
#define COLLECT_PROC_MAX_IRQS	512

struct ptask {
	uint32_t tid;
	int cpu;
	uint64_t sum_exec_ns, run_delay_ns, nvcsw, nivcsw, blkio_ticks;
	uint64_t at_ns;		/* just after its files were read */
	char state;		/* R, S, D, ... then */
};

struct task_table {
	struct ptask *v;
	size_t n, cap;
};

struct collect_proc {
	bool have_cpu;
	int ncpu_prev;
	struct procfs_cpu_time cpu_prev[RXB_MAX_CPUS];

	bool have_tasks;
	struct task_table tasks[2];	/* previous, current */
	int cur;

	bool have_disk;
	uint64_t disk_at_ns;
	int ndisk_prev;
	struct procfs_disk disk_prev[COLLECT_PROC_MAX_DISKS];
	struct procfs_disk disk_now[COLLECT_PROC_MAX_DISKS];

	int nudp_ports;
	uint16_t udp_ports[RXB_MAX_SOCKS];
	uint64_t udp_drops_prev[RXB_MAX_SOCKS];
	bool have_mib;
	struct procfs_udp_mib mib_prev;		/* the namespace's UDP counters */

	struct procfs_udp_sock udp[COLLECT_PROC_MAX_UDP];

	bool have_irq;
	uint64_t irq_at_ns;
	int nirq_prev;
	struct procfs_irq irq_prev[COLLECT_PROC_MAX_IRQS];
	struct procfs_irq irq_now[COLLECT_PROC_MAX_IRQS];
};

int collect_proc_init(struct collect_proc **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void collect_proc_finish(struct collect_proc *cp)
{
	if (!cp)
		return;
	free(cp->tasks[0].v);
	free(cp->tasks[1].v);
	free(cp);
}

/* ------------------------------------------------------------- CPUs -- */

static uint64_t total_ticks(const struct procfs_cpu_time *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq +
	       t->softirq + t->steal;
}

int collect_proc_cpu_times(struct collect_proc *cp, struct rxb_epoch *out, bool irq_fracs)
{
	struct procfs_cpu_time now[RXB_MAX_CPUS];
	int n = procfs_read_stat(now, RXB_MAX_CPUS);

	if (n < 0)
		return n;
	if (!out->ncpus) {
		for (int i = 0; i < n; i++)
			if (now[i].cpu + 1 > out->ncpus && now[i].cpu < RXB_MAX_CPUS)
				out->ncpus = now[i].cpu + 1;
		for (int c = 0; c < out->ncpus; c++)
			out->cpus[c].cpu = c;
	}
	for (int c = 0; c < out->ncpus; c++) {
		out->cpus[c].busy_frac = NAN;
		if (irq_fracs) {
			out->cpus[c].hardirq_frac = NAN;
			out->cpus[c].softirq_frac = NAN;
		}
	}
	for (int i = 0; cp->have_cpu && i < n; i++) {
		const struct procfs_cpu_time *p = NULL, *c = &now[i];
		struct rxb_cpu_meas *m;
		double total;

		for (int j = 0; j < cp->ncpu_prev; j++)
			if (cp->cpu_prev[j].cpu == c->cpu)
				p = &cp->cpu_prev[j];
		if (!p || c->cpu >= out->ncpus)
			continue;
		m = &out->cpus[c->cpu];
		total = (double)rxb_sub0(total_ticks(c), total_ticks(p));
		if (total <= 0)
			continue;
		m->busy_frac = 1.0 - (double)(rxb_sub0(c->idle, p->idle) +
					      rxb_sub0(c->iowait, p->iowait)) / total;
		if (irq_fracs) {
			m->hardirq_frac = (double)rxb_sub0(c->irq, p->irq) / total;
			m->softirq_frac = (double)rxb_sub0(c->softirq, p->softirq) / total;
		}
	}
	memcpy(cp->cpu_prev, now, (size_t)n * sizeof(now[0]));
	cp->ncpu_prev = n;
	cp->have_cpu = true;
	return 0;
}

/* ------------------------------------------------------------ tasks -- */

static int add_task(void *arg, const struct procfs_task *t)
{
	struct task_table *tt = arg;

	if (!t->have_schedstat)
		return 0;
	if (tt->n == tt->cap) {
		size_t ncap = tt->cap ? tt->cap * 2 : 1024;
		struct ptask *p = realloc(tt->v, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		tt->v = p;
		tt->cap = ncap;
	}
	tt->v[tt->n++] = (struct ptask){
		.tid = t->tid, .cpu = t->cpu, .sum_exec_ns = t->sum_exec_ns,
		.run_delay_ns = t->run_delay_ns, .nvcsw = t->nvcsw,
		.nivcsw = t->nivcsw, .blkio_ticks = t->blkio_ticks,
		.at_ns = rxb_mono_ns(), .state = t->state,
	};
	return 0;
}

static int ptask_cmp(const void *a, const void *b)
{
	const struct ptask *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct ptask *find_ptask(const struct task_table *tt, uint32_t tid)
{
	struct ptask key = { .tid = tid };

	return tt->n ? bsearch(&key, tt->v, tt->n, sizeof(key), ptask_cmp) : NULL;
}

static bool delayacct_on(void)
{
	char *text;
	bool on = false;

	if (procfs_read_file("/proc/sys/kernel/task_delayacct", &text, NULL) == 0) {
		on = text[0] == '1';
		free(text);
	}
	return on;
}

int collect_proc_tasks(struct collect_proc *cp, struct rxb_epoch *out, char *why, size_t whylen)
{
	struct task_table *prev = &cp->tasks[cp->cur], *cur = &cp->tasks[!cp->cur];
	bool blkio = delayacct_on();
	double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
	int err;

	cur->n = 0;
	err = procfs_for_each_task(true, add_task, cur);
	if (err < 0)
		return err;
	if (cur->n)
		qsort(cur->v, cur->n, sizeof(cur->v[0]), ptask_cmp);
	for (int c = 0; c < out->ncpus; c++) {
		struct rxb_cpu_meas *m = &out->cpus[c];

		m->cpu_bound = cp->have_tasks ? 0 : NAN;
		m->io_bound = cp->have_tasks && blkio ? 0 : NAN;
		m->runnable_avg = cp->have_tasks ? 0 : NAN;
		m->cpu_bound_slice_ns = NAN;
		m->cpu_bound_run_ns = NAN;
	}
	if (!blkio && why)
		snprintf(why, whylen, "io_bound needs kernel.task_delayacct=1 without BPF");
	for (size_t i = 0; cp->have_tasks && i < cur->n; i++) {
		const struct ptask *t = &cur->v[i], *p = find_ptask(prev, t->tid);
		struct task_delta d;
		enum task_class cls;
		struct rxb_cpu_meas *m;
		double span_ns;

		if (!p || t->cpu < 0 || t->cpu >= out->ncpus)
			continue;
		/*
		 * Over the stretch between its own two reads: walking /proc
		 * can stall for a good part of an epoch (as the BPF reader's
		 * snapshots, collect_sched.c).
		 */
		span_ns = (double)rxb_sub0(t->at_ns, p->at_ns);
		if (span_ns <= 0)
			continue;
		memset(&d, 0, sizeof(d));
		d.span_ns = (uint64_t)span_ns;
		d.present_ns = (uint64_t)span_ns;
		d.oncpu_ns = rxb_sub0(t->sum_exec_ns, p->sum_exec_ns);
		d.wait_ns = rxb_sub0(t->run_delay_ns, p->run_delay_ns);
		d.n_preempt = rxb_sub0(t->nivcsw, p->nivcsw);
		d.n_sleep = rxb_sub0(t->nvcsw, p->nvcsw);
		d.iowait_ns = (uint64_t)((double)rxb_sub0(t->blkio_ticks, p->blkio_ticks) *
					 tick_ns);
		d.n_iowait = d.iowait_ns ? 1 : 0;
		/*
		 * Runnable at both reads and never blocked in between: on the
		 * runqueue all along. What its clocks leave out is stolen
		 * time (the hypervisor's, left out of sum_exec_runtime) of it
		 * holding the CPU, which they would count late otherwise.
		 */
		if (p->state == 'R' && t->state == 'R' && t->nvcsw == p->nvcsw &&
		    d.oncpu_ns + d.wait_ns < d.span_ns)
			d.wait_ns = d.span_ns - d.oncpu_ns;
		/* ... and when they do, no more than the stretch itself. */
		if (d.oncpu_ns > d.span_ns)
			d.oncpu_ns = d.span_ns;
		if (d.wait_ns > d.span_ns - d.oncpu_ns)
			d.wait_ns = d.span_ns - d.oncpu_ns;
		cls = collect_sched_classify(&d);
		m = &out->cpus[t->cpu];
		m->runnable_avg += (double)(d.oncpu_ns + d.wait_ns) / span_ns;
		if (cls == TASK_CLASS_CPU)
			m->cpu_bound += (double)(d.oncpu_ns + d.wait_ns) / span_ns;
		else if (cls == TASK_CLASS_IO && blkio)
			m->io_bound += 1.0;
	}
	cp->cur = !cp->cur;
	cp->have_tasks = true;
	return 0;
}

/* ------------------------------------------------------------- disk -- */

static bool whole_disk(const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/block/%s", name);
	return access(path, F_OK) == 0;
}

int collect_proc_disk(struct collect_proc *cp, struct rxb_epoch *out)
{
	int n = procfs_read_diskstats(cp->disk_now, COLLECT_PROC_MAX_DISKS);
	uint64_t best = 0, best_ms = 0;
	const char *name = NULL;

	if (n < 0)
		return n;
	out->disk.valid = false;
	out->disk.completions = 0;
	out->disk.mean_service_ns = NAN;
	out->disk.service_rate_per_s = NAN;
	for (int i = 0; cp->have_disk && i < n; i++) {
		const struct procfs_disk *c = &cp->disk_now[i];

		if (!whole_disk(c->name))
			continue;
		for (int j = 0; j < cp->ndisk_prev; j++) {
			const struct procfs_disk *p = &cp->disk_prev[j];
			uint64_t ios, ms;

			if (p->major != c->major || p->minor != c->minor)
				continue;
			ios = rxb_sub0(c->rd_ios + c->wr_ios, p->rd_ios + p->wr_ios);
			ms = rxb_sub0(c->rd_ms + c->wr_ms, p->rd_ms + p->wr_ms);
			if (ios > best) {
				best = ios;
				best_ms = ms;
				name = c->name;
			}
		}
	}
	if (best) {
		out->disk.valid = true;
		out->disk.completions = best;
		rxb_strlcpy(out->disk.device, name, sizeof(out->disk.device));
		out->disk.mean_service_ns = (double)best_ms * 1e6 / (double)best;
		if (best_ms)
			out->disk.service_rate_per_s = 1e9 / out->disk.mean_service_ns;
	}
	memcpy(cp->disk_prev, cp->disk_now, (size_t)n * sizeof(cp->disk_now[0]));
	cp->ndisk_prev = n;
	cp->have_disk = true;
	return 0;
}

/* ---------------------------------------------------------- sockets -- */

static int prev_drops(const struct collect_proc *cp, uint16_t port, uint64_t *out)
{
	for (int i = 0; i < cp->nudp_ports; i++)
		if (cp->udp_ports[i] == port) {
			*out = cp->udp_drops_prev[i];
			return 1;
		}
	return 0;
}

/*
 * The namespace's UDP datagrams delivered or dropped for a full buffer
 * since the last call (-1: unknown). They are a port's only when every UDP
 * socket of the namespace is on that port.
 */
static int64_t udp_arrivals(struct collect_proc *cp)
{
	struct procfs_udp_mib now;
	int64_t d = -1;

	if (procfs_read_udp_mib(&now)) {
		cp->have_mib = false;
		return -1;
	}
	if (cp->have_mib)
		d = (int64_t)(rxb_sub0(now.in_datagrams, cp->mib_prev.in_datagrams) +
			      rxb_sub0(now.rcvbuf_errors, cp->mib_prev.rcvbuf_errors));
	cp->mib_prev = now;
	cp->have_mib = true;
	return d;
}

int collect_proc_sockets(struct collect_proc *cp, const uint16_t *ports, int nports,
		  struct rxb_epoch *out)
{
	int n = procfs_read_net_udp(cp->udp, COLLECT_PROC_MAX_UDP);
	int64_t arrived = udp_arrivals(cp);
	uint64_t drops[RXB_MAX_SOCKS];

	if (n < 0)
		return n;
	if (nports > RXB_MAX_SOCKS)
		nports = RXB_MAX_SOCKS;
	out->nsocks = 0;
	for (int i = 0; i < nports; i++) {
		struct rxb_sock_meas *m = &out->socks[out->nsocks++];
		uint64_t queued = 0, before;
		int mine = 0;

		drops[i] = 0;
		for (int j = 0; j < n; j++)
			if (cp->udp[j].port == ports[i]) {
				drops[i] += cp->udp[j].drops;
				queued += cp->udp[j].rx_queue_bytes;
				mine++;
			}
		memset(m, 0, sizeof(*m));
		m->port = ports[i];
		m->ipproto = 17;
		m->counts_valid = false;
		m->drops_valid = prev_drops(cp, ports[i], &before);
		m->drops = m->drops_valid ? rxb_sub0(drops[i], before) : 0;
		/* Packets arrived: dropped, waiting, or all the namespace's. */
		m->arrivals_seen = m->drops || queued || (mine && mine == n && arrived > 0);
		m->truesize_per_pkt_bytes = NAN;
		collect_sched_receivers_unknown(m);
	}
	for (int i = 0; i < nports; i++) {
		cp->udp_ports[i] = ports[i];
		cp->udp_drops_prev[i] = drops[i];
	}
	cp->nudp_ports = nports;
	return 0;
}

/* ------------------------------------------------------------- IRQs -- */

int collect_proc_irqs(struct collect_proc *cp, struct rxb_epoch *out)
{
	int n = procfs_read_interrupts(cp->irq_now, COLLECT_PROC_MAX_IRQS);
	uint64_t now = rxb_mono_ns();
	double epoch_s = (double)rxb_sub0(now, cp->irq_at_ns) / 1e9;

	if (n < 0)
		return n;
	out->nirqs = 0;
	for (int i = 0; cp->have_irq && i < n && out->nirqs < RXB_MAX_IRQS; i++) {
		const struct procfs_irq *c = &cp->irq_now[i];
		struct rxb_irq_meas *m;
		uint64_t d = c->count;

		if (c->irq < 0)
			continue;
		for (int j = 0; j < cp->nirq_prev; j++)
			if (cp->irq_prev[j].irq == c->irq)
				d = rxb_sub0(c->count, cp->irq_prev[j].count);
		if (!d)
			continue;
		m = &out->irqs[out->nirqs++];
		m->irq = c->irq;
		rxb_strlcpy(m->name, c->name, sizeof(m->name));
		m->count = d;
		m->rate_per_s = epoch_s > 0 ? (double)d / epoch_s : NAN;
		m->mean_ns = NAN;
	}
	memcpy(cp->irq_prev, cp->irq_now, (size_t)n * sizeof(cp->irq_now[0]));
	cp->nirq_prev = n;
	cp->irq_at_ns = now;
	cp->have_irq = true;
	return 0;
}

/* ------------------------------------------------ new receivers -- */

int collect_proc_udp_port_socks(struct collect_proc *cp, const uint16_t *ports, int nports,
			 struct port_socks *out)
{
	int n = procfs_read_net_udp(cp->udp, COLLECT_PROC_MAX_UDP);

	if (n < 0)
		return n;
	if (nports > RXB_MAX_SOCKS)
		nports = RXB_MAX_SOCKS;
	for (int i = 0; i < nports; i++) {
		struct port_socks *v = &out[i];

		v->port = ports[i];
		v->nsocks = 0;
		v->inode_sum = 0;
		for (int j = 0; j < n; j++)
			if (cp->udp[j].port == ports[i] && cp->udp[j].inode) {
				v->nsocks++;
				v->inode_sum += cp->udp[j].inode;
			}
	}
	return nports;
}
