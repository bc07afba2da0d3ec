// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The measurement collector: keeps the previous snapshot of each probe
 * group (bpf/; collect_probes.c loads them) and turns the change since into
 * one struct rxb_epoch per call. See collect.h.
 */
#include "daemon/collect/collect.h"
#include "daemon/collect/collect_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/blkio.h"
#include "bpf/netrx.h"
#include "bpf/sched.h"
#include "bpf/sockq.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/collect_disk.h"
#include "daemon/collect/collect_net.h"
#include "daemon/collect/collect_proc.h"
#include "daemon/collect/collect_queues.h"
#include "daemon/collect/collect_sched.h"
#include "daemon/collect/cpushare.h"
#include "daemon/collect/nic.h"
#include "daemon/collect/procfs.h"
#include "daemon/collect/rx_preempts.h"
#include "daemon/collect/sampling.h"

int collect_attach_parse(const char *s)
{
	static const char *const names[] = { "auto", "tp_btf", "raw_tp", "none" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int collect_groups_parse(const char *s)
{
	static const char *const names[] = { "sched", "netrx", "sockq", "blkio" };
	const char *p = s;
	int bits = 0;

	if (!strcmp(s, "all"))
		return COLLECT_GROUP_ALL;
	while (*p) {
		size_t len = strcspn(p, ",");
		int found = -1;

		for (int i = 0; i < 4; i++)
			if (strlen(names[i]) == len && !strncmp(p, names[i], len))
				found = i;
		if (found < 0)
			return -1;
		bits |= 1 << found;
		p += len;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	return bits ? bits : -1;
}

static const char *const attach_names[] = {
	[COLLECT_ATTACH_AUTO] = "auto",
	[COLLECT_ATTACH_TP_BTF] = "tp_btf",
	[COLLECT_ATTACH_RAW_TP] = "raw_tp",
	[COLLECT_ATTACH_NONE] = "none",
};

const char *collect_attach_name(enum collect_attach a)
{
	return RXB_NAME(attach_names, a, "?");
}

void collect_add_reason(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 3 >= size)
		return;
	if (len) {
		strcpy(buf + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static int copy_opts(struct collect *c, const struct collect_opts *o)
{
	if (o->net_probe_every > COLLECT_MAX_NET_PROBE_EVERY ||
	    o->net_stage_a_every > COLLECT_MAX_NET_PROBE_EVERY)
		return -EINVAL;
	if (o->nports < 0 || o->nports > RXB_MAX_SOCKS ||
	    o->ndevices < 0 || o->ndevices > COLLECT_MAX_DEVICES ||
	    (o->nports && !o->ports) || (o->ndevices && !o->devices) ||
	    o->attach < COLLECT_ATTACH_AUTO || o->attach > COLLECT_ATTACH_NONE ||
	    (o->groups & ~(unsigned)COLLECT_GROUP_ALL))
		return -EINVAL;
	if (o->nports)
		memcpy(c->ports, o->ports, (size_t)o->nports * sizeof(c->ports[0]));
	c->nports = o->nports;
	for (int i = 0; i < o->ndevices; i++)
		rxb_strlcpy(c->devices[i], o->devices[i], RXB_IFNAME_LEN);
	c->ndevices = o->ndevices;
	c->fb.rx_ring = o->fallback_rx_ring;
	c->fb.rx_max_frames = o->fallback_rx_max_frames;
	c->fb.rx_usecs = o->fallback_rx_usecs;
	c->report_tasks = o->report_tasks;
	cpushare_init(&c->share, "/proc", "/sys/fs/cgroup");
	if (!c->fb.rx_ring)
		c->fb.rx_ring = procfs_read_netdev_max_backlog();
	return 0;
}

static int alloc_snaps(struct collect *c)
{
	for (int i = 0; i < 2; i++) {
		sched_snap_init(&c->sched[i]);
		if (netrx_snap_init(&c->net[i]) || sockq_snap_init(&c->sock[i]) ||
		    blkio_snap_init(&c->blk[i]))
			return -ENOMEM;
	}
	return 0;
}

static void free_snaps(struct collect *c)
{
	for (int i = 0; i < 2; i++) {
		sched_snap_free(&c->sched[i]);
		netrx_snap_free(&c->net[i]);
		sockq_snap_free(&c->sock[i]);
		blkio_snap_free(&c->blk[i]);
	}
}

static int kernel_task_counters(void *arg, uint32_t tid, uint64_t *sum_exec_ns,
				uint64_t *run_delay_ns, uint64_t *pcount)
{
	(void)arg;
	return procfs_read_schedstat(tid, sum_exec_ns, run_delay_ns, pcount);
}

size_t collect_rx_preempts_early(struct collect *c, const struct rxb_rx_preempt **out)
{
	*out = NULL;
	if (!c)
		return 0;
	return rx_preempts_early(&c->rxp, c->sp, out);
}

int collect_rx_preempts_fd(const struct collect *c)
{
	if (!c || !c->sp || !c->rxp.v)
		return -ENOENT;
	return sched_probe_rx_fd(c->sp);
}

/* Read every probe into snapshot slot @i. */
static void snapshot_all(struct collect *c, int i)
{
	if (c->sp && sched_probe_snapshot(c->sp, &c->sched[i], kernel_task_counters, NULL))
		c->sched[i].ntasks = 0;
	if (c->np)
		netrx_probe_snapshot(c->np, &c->net[i]);
	if (c->sq) {
		sockq_probe_snapshot(c->sq, &c->sock[i]);
		c->queues_read = collect_queues_read(&c->queues, c->smp.diag, &c->sock[i]);
	}
	if (c->bp)
		blkio_probe_snapshot(c->bp, &c->blk[i]);
}

/* The NET_RX softirq counts at the epoch's end (only needed when stage
 * A's programs can be detached in sampled epochs). */
static void read_sirqs(struct collect *c)
{
	char *text = NULL;
	int err;

	if (!c->np || c->smp.a_every <= 1)
		return;
	err = procfs_read_file("/proc/softirqs", &text, NULL);
	if (err)
		rxb_log_errno(RXB_LOG_DEBUG, -err, "collect: /proc/softirqs");
	collect_net_sirq_update(&c->sirq, err ? NULL : text);
	free(text);
}

/*
 * After the snapshot that ends epoch c->seq (@prev: the one that started
 * it; -1: none, the baseline): which per-packet programs the next one has
 * (sampling.h). The memory per packet is known from the epochs before, or
 * from this one's counts, which the stage B computation takes in later.
 */
static void plan_next(struct collect *c, int prev)
{
	c->smp.derive_ready = c->queues_read &&
			      collect_net_sizes_known(&c->rx_mem,
						      prev >= 0 ? &c->sock[prev] : NULL,
						      &c->sock[c->cur], c->smp.enq_counted,
						      c->ports, c->nports);
	sampling_plan(&c->smp, c->seq);
}

/* /proc standing in for the probe groups that are not loaded. */
static void epoch_proc(struct collect *c, struct rxb_epoch *out)
{
	char why[128] = "";

	if (!c->sp && collect_proc_tasks(c->proc, out, why, sizeof(why)) == 0 && why[0]) {
		out->disk.mean_cpu_burst_ns = NAN;
		out->disk.io_cpu_rate_per_s = NAN;
		collect_add_reason(out->degraded_reason, sizeof(out->degraded_reason), "%s", why);
	}
	if (!c->bp)
		collect_proc_disk(c->proc, out);
	if (!c->sq)
		collect_proc_sockets(c->proc, c->ports, c->nports, out);
	if (!c->np)
		collect_proc_irqs(c->proc, out);
}

/* Baselines: the first epoch covers the time from here. 0 or -ENOMEM. */
static int baseline(struct collect *c)
{
	struct rxb_epoch *tmp = calloc(1, sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	/* The probes opened with every program attached (sampling_init()):
	 * the first epoch is a sampled one. */
	c->last_ns = rxb_mono_ns();
	snapshot_all(c, c->cur);
	read_sirqs(c);
	plan_next(c, -1);
	collect_probes_costs(c, tmp, false);
	collect_proc_cpu_times(c->proc, tmp, true);
	epoch_proc(c, tmp);	/* /proc's baselines; what it fills in @tmp is dropped */
	free(tmp);
	return 0;
}

int collect_init(struct collect **out, const struct collect_opts *opts)
{
	struct collect *c;
	int err;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->stats_fd = -1;
	err = copy_opts(c, opts);
	if (!err)
		err = alloc_snaps(c);
	if (!err)
		err = collect_proc_init(&c->proc);
	if (err) {
		free_snaps(c);
		free(c);
		return err;
	}
	collect_probes_open(c, opts);
	if (c->sp && rx_preempts_init(&c->rxp)) {
		collect_finish(c);
		return -ENOMEM;
	}
	collect_queues_init(&c->queues);
	sampling_init(&c->smp, c->np, c->sq, c->proc,
		      opts->net_probe_every ? opts->net_probe_every : 1,
		      opts->net_stage_a_every);
	err = nic_reader_init(&c->nic);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "collect: netlink NIC reader");
		c->nic = NULL;
		c->degraded |= RXB_DEGRADED_NO_NETLINK;
		collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
			   "NIC parameters unavailable: %s", strerror(-err));
	}
	if (baseline(c)) {
		collect_finish(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void collect_finish(struct collect *c)
{
	if (!c)
		return;
	collect_probes_close(c);
	nic_reader_finish(c->nic);
	sampling_finish(&c->smp);
	collect_queues_finish(&c->queues);
	collect_proc_finish(c->proc);
	rx_preempts_finish(&c->rxp);
	free_snaps(c);
	collect_sched_report_free(&c->report);
	free(c);
}

const struct collect_sched_report *collect_task_report(const struct collect *c)
{
	return &c->report;
}

/* Is @port among the watched ones? */
static bool watching(const struct collect *c, uint16_t port)
{
	for (int i = 0; i < c->nports; i++)
		if (c->ports[i] == port)
			return true;
	return false;
}

int collect_set_ports(struct collect *c, const uint16_t *ports, int n)
{
	bool added = false;

	if (n < 0 || n > RXB_MAX_SOCKS || (n && !ports))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		added |= !watching(c, ports[i]);
	/* A new port (a new sender) has no costs measured yet. */
	if (added)
		sampling_new_port(&c->smp, c->seq);
	if (n)
		memcpy(c->ports, ports, (size_t)n * sizeof(ports[0]));
	c->nports = n;
	if (c->sq)
		return sockq_probe_set_ports(c->sq, ports, n);
	return 0;
}

int collect_set_net_probe_every(struct collect *c, uint32_t every)
{
	if (every < 1 || every > COLLECT_MAX_NET_PROBE_EVERY)
		return -EINVAL;
	sampling_set_every(&c->smp, every, c->seq);
	return 0;
}

uint64_t collect_poll_due_ns(const struct collect *c)
{
	return c ? sampling_poll_due_ns(&c->smp, c->nports) : UINT64_MAX;
}

void collect_poll(struct collect *c, uint64_t now_ns)
{
	if (!c)
		return;
	sampling_poll(&c->smp, now_ns, c->seq, c->ports, c->nports);
}

/* -------------------------------------------------------------- epoch -- */

static void fill_nics(struct collect *c, struct rxb_epoch *out)
{
	char names[COLLECT_MAX_DEVICES][RXB_IFNAME_LEN];
	int n;

	out->nnics = 0;
	if (!c->nic)
		return;
	if (c->ndevices) {
		memcpy(names, c->devices, sizeof(names));
		n = c->ndevices;
	} else {
		n = nic_list_devices(c->nic, names, COLLECT_MAX_DEVICES);
		if (n < 0) {
			rxb_log_errno(RXB_LOG_WARNING, -n, "collect: listing devices");
			return;
		}
	}
	for (int i = 0; i < n && out->nnics < RXB_MAX_NICS; i++) {
		struct rxb_nic_meas *m = &out->nics[out->nnics];
		int err = nic_reader_sample(c->nic, names[i], &c->fb, m);

		if (err) {
			rxb_log_errno(RXB_LOG_DEBUG, -err, "collect: sampling %s", names[i]);
			continue;
		}
		out->nnics++;
	}
}

static const char *reason_name(void *arg, uint32_t reason)
{
	return sockq_probe_reason_name(arg, reason);
}

static bool task_gone(uint32_t tid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%u", tid);
	return access(path, F_OK) != 0;
}

/* A receiver thread that exited: the task's record says so, or it is gone. */
static bool receiver_gone(const struct sched_snap *ss, uint32_t tid)
{
	for (size_t j = 0; j < ss->ntasks; j++)
		if (ss->tasks[j].tid == tid)
			return ss->tasks[j].state == SCHED_ST_DEAD;
	return task_gone(tid);
}

/* Forget receivers and disk users that exited, and dead tasks. */
static void housekeeping(struct collect *c)
{
	const struct sockq_snap *s = &c->sock[c->cur];
	const struct sched_snap *ss = &c->sched[c->cur];

	for (int i = 0; c->sq && i < s->ndeq; i++)
		if (receiver_gone(ss, s->deq[i].k.tid))
			sockq_probe_forget_tid(c->sq, s->deq[i].k.tid);
	if (c->sp)
		sched_probe_forget_dead(c->sp, ss);
	if (c->bp)
		blkio_probe_sweep(c->bp, &c->blk[!c->cur], &c->blk[c->cur], task_gone);
}

static const struct blkio_issuer *issuer(const struct blkio_snap *s, uint32_t tid)
{
	size_t n = (size_t)s->nissuers;
	size_t i = rxb_lower_bound_u32(s->issuers, n, sizeof(s->issuers[0]),
				       offsetof(__typeof__(s->issuers[0]), tid), tid);

	return i < n && s->issuers[i].tid == tid ? &s->issuers[i].v : NULL;
}

/* What @tid's block requests did this epoch (collect_sched_reqs_fn). */
static void disk_reqs(void *arg, uint32_t tid, struct collect_sched_disk_use *out)
{
	struct collect *c = arg;
	const struct blkio_issuer *now = issuer(&c->blk[c->cur], tid);
	const struct blkio_issuer *before = issuer(&c->blk[!c->cur], tid);
	struct blkio_issuer zero = { 0 };

	if (!now)
		return;
	if (!before)
		before = &zero;
	out->issued = rxb_sub0(now->issued, before->issued);
	out->completed = rxb_sub0(now->completed, before->completed);
	out->service_ns = rxb_sub0(now->service_ns, before->service_ns);
}

static void epoch_bpf(struct collect *c, struct rxb_epoch *out, int prev,
		      bool sampled, bool stage_a)
{
	int cur = c->cur;
	size_t nrx = 0;

	/* The busiest disk first: csched refines its service time from the
	 * I/O-bound tasks' own requests. */
	if (c->bp)
		collect_disk_compute(&c->blk[prev], &c->blk[cur], &out->disk);
	if (c->sq)
		nrx = collect_net_receivers(&c->sock[cur], c->rx, MAX_RX_TIDS);
	if (c->sp) {
		collect_sched_rows_monotone(&c->sched[prev], &c->sched[cur]);
		/* The task list is what cpushare weighs; --tasks prints it too. */
		c->report.with_runnable = true;
		collect_sched_compute(&c->sched[prev], &c->sched[cur], c->rx, nrx, out,
			       &c->report, c->bp ? disk_reqs : NULL, c);
		cpushare_epoch(&c->share, &c->report, out);
	}
	if (c->np)
		collect_net_stage_a(&c->net[prev], &c->net[cur], sampled, stage_a,
				    &c->sirq, out);
	if (c->sq) {
		collect_net_stage_b(&c->sock[prev], &c->sock[cur],
			     c->sp ? &c->sched[prev] : NULL,
			     c->sp ? &c->sched[cur] : NULL, c->rx, nrx,
			     c->ports, c->nports, reason_name, c->sq, sampled,
			     c->smp.enq_counted, &c->rx_mem, out);
		collect_net_drop_reasons(&c->sock[prev], &c->sock[cur], reason_name,
				  c->sq, out);
	}
}

/* The parts that stay NaN unless something measures them. */
static void init_epoch(struct rxb_epoch *out, int ncpus)
{
	memset(out, 0, sizeof(*out));
	out->ncpus = ncpus < RXB_MAX_CPUS ? ncpus : RXB_MAX_CPUS;
	for (int i = 0; i < out->ncpus; i++) {
		struct rxb_cpu_meas *m = &out->cpus[i];

		m->cpu = i;
		m->cpu_bound = m->io_bound = m->runnable_avg = NAN;
		m->busy_frac = m->softirq_frac = m->hardirq_frac = NAN;
		m->cpu_bound_slice_ns = NAN;
		m->cpu_bound_run_ns = NAN;
		m->cpu_bound_eff = NAN;
		m->quota_period_s = m->quota_slow_s = 0;
		m->quota_slow_share = m->quota_fast_share = 0;
	}
	out->disk.mean_service_ns = NAN;
	out->disk.service_rate_per_s = NAN;
	out->disk.mean_cpu_burst_ns = NAN;
	out->disk.io_cpu_rate_per_s = NAN;
}

int collect_epoch(struct collect *c, struct rxb_epoch *out)
{
	int prev = c->cur, ncpus = libbpf_num_possible_cpus();
	bool sampled, stage_a;

	if (ncpus <= 0)
		ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	init_epoch(out, ncpus);
	out->seq = ++c->seq;
	sampled = sampling_epoch_end(&c->smp, c->seq, c->ports, c->nports, &stage_a);
	/* The epoch ends when the probes are read (the scheduler's first). */
	out->start_ns = c->last_ns;
	out->end_ns = rxb_mono_ns();
	c->last_ns = out->end_ns;
	c->cur = !c->cur;
	snapshot_all(c, c->cur);
	read_sirqs(c);
	plan_next(c, prev);
	rx_preempts_epoch(&c->rxp, c->sp, out);
	out->net_probe_every = c->smp.every;
	out->net_sampled = sampled;
	out->net_stage_a = stage_a;
	out->net_stage_a_every = c->smp.a_every;
	out->net_sampled_seq = c->smp.sampled_seq;
	out->net_forced = c->smp.forced;
	out->net_attach_ns = c->smp.attach_ns;
	out->net_detach_ns = c->smp.detach_ns;

	rxb_strlcpy(out->attach_mode, c->attach_mode, sizeof(out->attach_mode));
	out->probes = (c->sp ? RXB_PROBE_SCHED : 0) | (c->np ? RXB_PROBE_NETRX : 0) |
		      (c->sq ? RXB_PROBE_SOCKQ : 0) | (c->bp ? RXB_PROBE_BLKIO : 0);
	out->degraded = c->degraded;
	rxb_strlcpy(out->degraded_reason, c->degraded_reason,
		    sizeof(out->degraded_reason));

	epoch_bpf(c, out, prev, sampled, stage_a);
	epoch_proc(c, out);
	/* CPU idle (and, without netrx, the irq shares) from /proc/stat. */
	collect_proc_cpu_times(c->proc, out, c->np == NULL);
	fill_nics(c, out);
	collect_probes_costs(c, out, true);
	if (c->sched[c->cur].tasks_full)
		collect_add_reason(out->degraded_reason, sizeof(out->degraded_reason),
			   "task map full: %llu records not kept",
			   (unsigned long long)c->sched[c->cur].tasks_full);
	if (c->bp && c->blk[c->cur].inflight_full)
		collect_add_reason(out->degraded_reason, sizeof(out->degraded_reason),
			   "block requests in flight beyond the map: %llu not timed",
			   (unsigned long long)c->blk[c->cur].inflight_full);
	if (c->sched[c->cur].task_cpus_full)
		collect_add_reason(out->degraded_reason, sizeof(out->degraded_reason),
			   "task-CPU map full: %llu stretches of time not split by CPU",
			   (unsigned long long)c->sched[c->cur].task_cpus_full);
	housekeeping(c);
	return 0;
}
