/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Task classes per CPU, and the CPU side of the disk model, from two
 * snapshots of the scheduler probe (bpf/sched.h) taken one epoch apart.
 *
 * A task is classified from what it did during the epoch
 * (docs/measurement.md, "Task classes"):
 *
 *  CPU-bound  runnable (running or waiting for a CPU) for at least
 *             COLLECT_SCHED_CPU_RUNNABLE_MIN of the time it existed in the epoch,
 *             and switched out by preemption at least as often as by
 *             blocking (a task that never left the CPU qualifies).
 *  I/O-bound  not CPU-bound, blocked at least once in io_schedule() (D state
 *             with in_iowait: waiting for the disk), and busy - running,
 *             runnable or waiting for the disk - for at least
 *             COLLECT_SCHED_IO_ACTIVE_MIN of its time, i.e. not mostly asleep
 *             waiting for something else.
 *  none       everything else (interactive, sleeping, daemons), and the
 *             receiver threads of watched sockets, which are the model's
 *             tagged customer and are reported with their sockets.
 *
 * Counts per CPU are time-weighted by where the tasks were:
 *   cpu_bound[c] = sum over CPU-bound tasks of runnable time on c / epoch:
 *                  the mean number of CPU-bound tasks competing for c;
 *   io_bound[c]  = sum over I/O-bound tasks of (time present / epoch) x
 *                  (share of its runnable time spent on c): an I/O-bound task
 *                  counts as one for the whole epoch even while at the disk,
 *                  spread over the CPUs it used.
 * mu_P-I/O: the mean CPU burst of I/O-bound tasks is their on-CPU time
 * divided by their number of disk accesses: the larger of their disk waits
 * (each ends one burst) and the block requests they issued (a fast disk can
 * complete a request before its submitter sleeps, so waits undercount).
 * mu_D: when the block layer tells who issued what (@reqs), the disk's
 * service time is that of the I/O-bound tasks' requests - the disk as the
 * model's I/O-bound tasks see it, not other traffic such as writeback;
 * otherwise collect_disk's figure for the busiest disk stays.
 */
#ifndef RXB_DAEMON_COLLECT_SCHED_H
#define RXB_DAEMON_COLLECT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/sched.h"
#include "rxb/measure.h"

#define COLLECT_SCHED_CPU_RUNNABLE_MIN	0.5
#define COLLECT_SCHED_IO_ACTIVE_MIN	0.5

enum task_class {
	TASK_CLASS_NONE = 0,
	TASK_CLASS_CPU,
	TASK_CLASS_IO,
};

/* What one task did during the epoch. */
struct task_delta {
	uint64_t span_ns;	/* the stretch its counters cover (~ the epoch) */
	uint64_t present_ns;	/* part of that span the task existed */
	uint64_t oncpu_ns;
	uint64_t wait_ns;
	uint64_t iowait_ns;
	uint64_t n_preempt;
	uint64_t n_sleep;
	uint64_t n_iowait;
	uint64_t n_blocked;
	uint64_t n_untraced;	/* switch-outs not traced (kind unknown) */
	uint64_t n_disk_reqs;	/* block requests it issued */
};

enum task_class collect_sched_classify(const struct task_delta *d);
const char *collect_sched_class_name(enum task_class c);

/* On-CPU time of one receiver thread over the epoch, and where. */
struct collect_sched_tid_time {
	uint32_t tid;			/* in: the thread asked about */
	bool seen;			/* out: found in both snapshots or new */
	uint64_t oncpu_ns;
	int ncpus_ran;
	struct rxb_cpu_time ran_on[8];	/* largest shares first */
};

/* How one classified task was counted, for inspection (--tasks). */
#define COLLECT_SCHED_REPORT_CPUS 4
struct collect_sched_task_report {
	uint32_t tid;
	uint32_t tgid;
	char comm[16];
	enum task_class cls;
	bool receiver;		/* a watched socket's receiver (not classified) */
	struct task_delta d;
	int nw;
	struct collect_sched_weight {
		int cpu;
		double w;	/* what it added to cpu_bound/io_bound there
				 * (unclassified: its runnable share there) */
	} w[COLLECT_SCHED_REPORT_CPUS];	/* largest first */
};

struct collect_sched_report {
	struct collect_sched_task_report *v;
	size_t n, cap;
	/* Also list unclassified tasks runnable for at least
	 * COLLECT_SCHED_REPORT_RUNNABLE_MIN of the epoch, with w their
	 * runnable share on each CPU (cpushare.h counts them). */
	bool with_runnable;
};

#define COLLECT_SCHED_REPORT_RUNNABLE_MIN	0.01

void collect_sched_report_free(struct collect_sched_report *r);

/*
 * Fill @out->cpus[0..ncpus) (cpu_bound, io_bound, runnable_avg, switches,
 * preemptions, cpu_bound_slice_ns; busy/irq fractions are left alone) and
 * @out->disk.mean_cpu_burst_ns / io_cpu_rate_per_s from the epoch between
 * @prev and @cur. Tasks in @rx (sorted or not) are left out of the classes
 * and their on-CPU time is returned there. @out->ncpus is set to
 * min(cur->ncpus, RXB_MAX_CPUS). With @report (may be NULL), every CPU- or
 * I/O-bound task and every receiver is listed there. Pure computation.
 */
/* What the block layer saw of one task's requests during the epoch. */
struct collect_sched_disk_use {
	uint64_t issued;
	uint64_t completed;
	uint64_t service_ns;	/* of those completed */
};

/* Fill @out for @tid (zeros if unknown). */
typedef void (*collect_sched_reqs_fn)(void *arg, uint32_t tid, struct collect_sched_disk_use *out);

/*
 * Raise each (task, CPU) row of @cur to @prev's where it fell below it. A
 * row is the folded time plus the segment still pending in the task's
 * record, read after the rows (bpf/sched.c): a segment folded between the
 * two reads is in neither, so the row dips below the snapshot before,
 * which had it as pending. Clamped to 0 and counted again when the row
 * catches up, it would count twice; held at its high-water mark, once.
 * Rows of a tid that names another task now are left alone.
 */
void collect_sched_rows_monotone(const struct sched_snap *prev, struct sched_snap *cur);

void collect_sched_compute(const struct sched_snap *prev, const struct sched_snap *cur,
		    struct collect_sched_tid_time *rx, size_t nrx, struct rxb_epoch *out,
		    struct collect_sched_report *report, collect_sched_reqs_fn reqs, void *reqs_arg);

/*
 * Give every thread in /proc a baseline in the scheduler probe (from its
 * schedstat counters), so the first epoch also covers tasks that have not
 * switched since the probes attached. Returns the number of threads seeded,
 * or -errno.
 */
int collect_sched_seed_from_proc(struct sched_probe *sp);

/*
 * Add @share times the receiver thread's off-CPU windows after preemption
 * between @prev and @cur (its off_hist deltas; @prev NULL: since the
 * thread was first seen) to @hist[RXB_OFFCPU_SLOTS]: the windows'
 * log2-ns histogram (docs/model.md §2.2); and their lengths' sums per
 * slot to @sums.
 */
void collect_sched_add_off_hist(const struct sched_rx_tid *prev,
				const struct sched_rx_tid *cur, double share,
				double hist[RXB_OFFCPU_SLOTS], struct rxb_win_sums *sums);

/*
 * The same for its runqueue waits after a wakeup from sleep (wake_hist):
 * off-CPU windows that begin with the socket empty (docs/model.md §2.2).
 */
void collect_sched_add_wake_hist(const struct sched_rx_tid *prev,
				 const struct sched_rx_tid *cur, double share,
				 double hist[RXB_OFFCPU_SLOTS], struct rxb_win_sums *sums);

/*
 * Mark @m's per-packet and scheduling measures of its receiving threads
 * unknown (NaN): their cost per packet and packets per wake-up, and the
 * mean run before a preemption, off-CPU intervals, wake-up wait and
 * active time.
 */
void collect_sched_receivers_unknown(struct rxb_sock_meas *m);

#endif
