/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The competing CPU load on each CPU in receiver equivalents: the
 * effective #C that the model's processor-sharing CPU needs so that a
 * receiver thread at nice 0 gets the share the Linux scheduler gives it.
 *
 * Banerjee et al.'s tagged customer ("Modeling and Analysis to Estimate
 * the End-System Performance Bottleneck Rate for High-Speed Data
 * Transfer") shares its CPU equally with #C CPU-bound tasks: its share is
 * 1 / (1 + #C). CFS and EEVDF share by weight instead, and a task can be
 * held back by a CPU quota or by its own sleeps:
 *
 *  weight  a runnable task gets w_i / sum w of the CPU while all compete;
 *          w from its nice level (the kernel's sched_prio_to_weight: 1024
 *          at nice 0, 15 at nice 19, about 1.25x per level);
 *  part    a task runnable a fraction a_i of the time (a duty-cycled hog,
 *          or any task the classes leave out) counts a_i w_i, as the
 *          time-weighted #C counts a part-time task a_i, and uses at most
 *          a_i of the CPU: outside a quota that is its cap (it binds only
 *          above nice 0's weight: a kworker at nice -20 runnable 9 % of
 *          the time leaves the receiver 91 %, where a_i w_i alone would
 *          count it as eight busy loops);
 *  quota   tasks in a cgroup whose CPU quota (v2 cpu.max, v1
 *          cpu.cfs_quota_us / cpu.cfs_period_us; or an ancestor's) allows q
 *          of one CPU together get at most q. Their runnable time includes
 *          the time they wait throttled, so a_i says nothing of the quota.
 *
 * The receiver's share s_r is the weighted max-min fair (water-filling)
 * allocation of one CPU among the receiver (weight 1024, always runnable:
 * the saturated receiver the loss model is about) and the competing
 * groups (a quota-limited cgroup's tasks are one group with the cap q,
 * every other task its own group without one), and the effective count is
 *     C_eff = (1 - s_r) / s_r,
 * which without caps is sum a_i w_i / 1024: k busy loops at nice 0 give
 * k, as the plain #C; k at nice 19 give k x 15 / 1024; one hog held to
 * q < 1/2 of the CPU gives q / (1 - q).
 *
 * Not modelled: cgroup cpu.weight (a group's tasks are counted by their
 * own nice weights, as if in the receiver's group), a receiver at another
 * nice level than 0, quota periods long against the epoch.
 */
#ifndef RXB_DAEMON_COLLECT_CPUSHARE_H
#define RXB_DAEMON_COLLECT_CPUSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/collect/collect_sched.h"
#include "rxb/measure.h"

#define CPUSHARE_NICE0_WEIGHT	1024.0
/* Tasks looked up per epoch at most (the rest count at nice 0, no quota). */
#define CPUSHARE_MAX_TASKS	256
#define CPUSHARE_PATH_LEN	256

/* One competing group: the sum of a_i w_i of its tasks, and its cap. */
struct cpushare_group {
	double weight;
	double cap;		/* fraction of one CPU; >= 1 or inf: none */
	double period_s;	/* the quota's period; 0 without a cap */
};

/*
 * The phases one quota-held group makes beside the receiver (the loss
 * model's, solver/qphase.h): while it runs, the receiver gets slow_share;
 * the group, uncapped within the period, its weighted share s_q, so it
 * uses its cap x period in slow_s = cap x period / s_q; then it is
 * throttled and the receiver gets fast_share (what the other groups
 * leave) for the rest of the period.
 */
struct cpushare_phases {
	double period_s;
	double slow_s;
	double slow_share;
	double fast_share;
};

/*
 * The phases of the one group among @n with a cap in (0, 1) and a period,
 * beside a receiver of weight @rx_weight: false (and @out zeroed) when
 * there is none, more than one (their periods interleave; not modelled),
 * or its share never reaches its cap (it is never throttled).
 */
bool cpushare_quota_phases(const struct cpushare_group *g, size_t n, double rx_weight,
			   struct cpushare_phases *out);

/* The kernel's weight of nice level @nice (clamped to -20..19). */
double cpushare_nice_weight(int nice);

/*
 * The receiver's share of one CPU among @n groups, the receiver having
 * weight @rx_weight and no cap (water-filling; 1 when nothing competes).
 */
double cpushare_rx_share(const struct cpushare_group *g, size_t n, double rx_weight);

/* (1 - s) / s of cpushare_rx_share() with a nice-0 receiver. */
double cpushare_effective(const struct cpushare_group *g, size_t n);

/* Parsers of what the kernel reports (untrusted text; 0 or -EINVAL). */
/* /proc/<pid>/task/<tid>/stat: field 19, nice. */
int cpushare_parse_nice(const char *stat_text, int *nice);
/*
 * /proc/<tid>/cgroup: the path in the hierarchy that has the cpu
 * controller: a cgroup v1 line "N:...cpu...:PATH" (@v1 true; hybrid
 * systems keep cpu in v1), else the v2 line "0::PATH".
 */
int cpushare_parse_cgroup(const char *text, char *path, size_t len, bool *v1);
/*
 * v2 cpu.max: "max PERIOD" (cap inf) or "QUOTA PERIOD" (QUOTA / PERIOD);
 * the period (µs in the file) into @period_s.
 */
int cpushare_parse_cpu_max(const char *text, double *cap, double *period_s);
/* v1 cpu.cfs_quota_us ("-1": none) and cpu.cfs_period_us. */
int cpushare_parse_cfs(const char *quota_text, const char *period_text, double *cap,
		       double *period_s);

/*
 * Where /proc and the cgroup hierarchies are (tests point them elsewhere):
 * v2 files at CGROUP_ROOT/PATH/cpu.max, v1 at CGROUP_ROOT/cpu/PATH/cpu.cfs_*.
 */
struct cpushare {
	char proc_root[CPUSHARE_PATH_LEN];
	char cgroup_root[CPUSHARE_PATH_LEN];
};

void cpushare_init(struct cpushare *s, const char *proc_root, const char *cgroup_root);

/* What one task's files say; defaults (nice 0, no cap) where unreadable. */
struct cpushare_task {
	double weight;
	double cap;				/* inf: no quota */
	double period_s;			/* its period; 0 without */
	char cap_path[CPUSHARE_PATH_LEN];	/* the cgroup whose cpu.max binds */
};

void cpushare_task_info(const struct cpushare *s, uint32_t tgid, uint32_t tid,
			struct cpushare_task *out);

/*
 * Set @out->cpus[c].cpu_bound_eff (and the quota_* phases) for every CPU from the tasks of @r
 * (collect_sched_compute() with @r->with_runnable): the receivers and
 * I/O-bound tasks (which the model counts as #I) left out.
 */
void cpushare_epoch(const struct cpushare *s, const struct collect_sched_report *r,
		    struct rxb_epoch *out);

#endif
