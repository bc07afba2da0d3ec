/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Records exchanged between sched.bpf.c (scheduler tracepoints) and its
 * user-space reader sched.c.
 *
 * The BPF side keeps one record per task (key: tid). Time is accounted at
 * each switch-out, from the kernel's own per-task counters: on-CPU time from
 * se.sum_exec_runtime and runqueue wait from sched_info.run_delay; the rest of
 * the interval since the previous switch-out is time off the runqueue,
 * charged to the way the task left then (asleep, waiting for disk I/O, other
 * D state). Anchoring on switch-outs and kernel counters keeps the totals
 * exact even when some switch-ins or wakeups are not traced (seen on the
 * project's VM: switches out of the idle task on one CPU never fire the
 * tracepoint). Running and runnable time is also split per CPU (key: tid,
 * cpu), because task classes are counted per CPU. Counters only grow; the
 * reader takes deltas. Included by BPF code (after vmlinux.h) and user space.
 */
#ifndef RXB_BPF_SCHED_H
#define RXB_BPF_SCHED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SCHED_MAX_TASKS		65536
#define SCHED_MAX_TASK_CPUS	65536
#define SCHED_MAX_RX_TIDS	1024
#define SCHED_HIST_SLOTS	32	/* log2 buckets of nanoseconds */
/*
 * A receiver asleep on its empty socket this long had no traffic: far
 * longer than the gaps between the packets of any blast the model is
 * asked about (0.12 ms at 100 Mb/s), far shorter than a transfer's gaps
 * between rounds on a long path.
 */
#define SCHED_IDLE_SLEEP_NS	(10ULL * 1000 * 1000)

/* Task states as sched_switch reports them (include/linux/sched.h). */
#define SCHED_TASK_RUNNING		0x0000
#define SCHED_TASK_INTERRUPTIBLE	0x0001
#define SCHED_TASK_UNINTERRUPTIBLE	0x0002
#define SCHED_TASK_DEAD			0x0080
#define SCHED_TASK_NOLOAD		0x0400

/* How a task last left a CPU. */
enum sched_task_state {
	SCHED_ST_RUNNABLE = 1,	/* preempted (or yielded): still on a runqueue */
	SCHED_ST_SLEEPING,	/* blocked, not on disk I/O */
	SCHED_ST_IOWAIT,	/* blocked in io_schedule() (in_iowait): disk */
	SCHED_ST_BLOCKED,	/* D state, not I/O (locks, TASK_KILLABLE waits) */
	SCHED_ST_DEAD,
};

/*
 * One task. @seq is odd while the BPF side updates the record, so the reader
 * can tell a torn copy (it re-reads until two copies agree and @seq is even).
 * @seg_* is the part of oncpu/wait spent on @seg_cpu that has not yet been
 * folded into the per-(tid, cpu) map: most tasks never change CPU, so most
 * switches touch one hash entry per task instead of two.
 */
struct sched_task {
	__u32 seq;
	__u32 state;		/* enum sched_task_state: how it left at out_ns */
	__u32 cpu;		/* where it ran last, or waits now, as far as seen */
	__u32 tgid;
	__u64 out_ns;		/* last switch-out (or when first seen) */
	__u64 woken_ns;		/* woken since out_ns (0: not seen) */
	__u64 sum_exec_ns;	/* se.sum_exec_runtime at out_ns */
	__u64 run_delay_ns;	/* sched_info.run_delay at out_ns */
	__u64 pcount;		/* sched_info.pcount (switch-ins) at out_ns */
	__u64 first_ns;		/* first seen: a reused tid has a new one */
	__u64 born_ns;		/* created (sched_wakeup_new) while we watched */
	__u64 dead_ns;		/* 0 unless SCHED_ST_DEAD */
	__u64 oncpu_ns;
	__u64 wait_ns;		/* runnable but not running */
	__u64 sleep_ns;
	__u64 iowait_ns;
	__u64 blocked_ns;
	__u64 n_preempt;	/* switched out while still runnable */
	__u64 n_sleep;		/* ... to sleep (S) */
	__u64 n_iowait;		/* ... to wait for I/O: ends a CPU burst */
	__u64 n_blocked;	/* ... in D, not I/O */
	__u64 n_migrate;
	/*
	 * Switch-outs the tracepoint never reported, from the kernel's count
	 * of switch-ins (pcount): each traced switch-out should follow
	 * exactly one switch-in. Their kind is unknown.
	 */
	__u64 n_untraced;
	__u64 run_preempt_ns;	/* sum of run lengths ended by preemption */
	__u64 slice_ns;		/* sum of se.slice at those preemptions (EEVDF) */
	__u32 seg_cpu;
	/*
	 * Whether this tid is in rx_tids (enum sched_rx_state), as of rx_tids'
	 * generation rx_gen: switch-outs look it up again only when receivers
	 * were added since, so other tasks' switches skip the hash.
	 */
	__u32 rx_state;
	__u64 seg_oncpu_ns;
	__u64 seg_wait_ns;
	char comm[16];
	__u32 rx_gen;
	__u32 pad;
};

enum sched_rx_state {
	SCHED_RX_UNKNOWN,	/* a new record: look it up */
	SCHED_RX_NO,
	SCHED_RX_YES,
};

struct sched_task_cpu_key {
	__u32 tid;
	__u32 cpu;
};

struct sched_task_cpu {
	__u64 oncpu_ns;
	__u64 wait_ns;
};

/* Per CPU (a one-entry per-CPU array). */
struct sched_cpu {
	__u64 switches;
	__u64 preemptions;	/* switches whose prev stayed runnable */
	/*
	 * Switches whose prev was not the previous switch's next: at least one
	 * switch on this CPU was not traced. A health figure; the accounting
	 * above does not depend on seeing every switch.
	 */
	__u64 untraced;
	__u32 last_next_tid;
	__u32 pad;
};

/*
 * Receiver threads of watched sockets (key: tid). sockq.bpf.c inserts a tid
 * when it dequeues from a watched socket; sched.bpf.c then keeps these
 * on/off-CPU statistics for it, the inputs of the pause-window predictor
 * (docs/pause.md). The map is shared between the two objects, and so is
 * rx_gen, a one-entry array that sockq.bpf.c bumps after each insert.
 */
struct sched_rx_tid {
	__u32 port;		/* last watched port it dequeued from */
	/*
	 * Odd while a switch-out adds a run and its window to the counts
	 * below (rx_account() in sched.bpf.c): the reader keeps a copy only
	 * if this was even and had not moved by a second copy.
	 */
	__u32 seq;
	__u64 blocks;		/* switch-outs by blocking: one wakeup each */
	__u64 preempts;
	__u64 run_preempt_ns;	/* run lengths that ended in preemption */
	__u64 preempt_off_ns;	/* off-CPU intervals that followed them, to
				 * the next run's switch-out less its on-CPU
				 * time (off_hist: to the switch-in) */
	__u64 preempt_off_cnt;
	__u64 sleep_off_ns;	/* off-CPU intervals after blocking */
	__u64 sleep_off_cnt;
	/*
	 * The part of those intervals after blocking in S state (a receiver
	 * blocks there on an empty socket) spent woken but waiting for a CPU:
	 * from the traced wakeup (sched_wakeup) to the switch-in, else the
	 * kernel's sched_info.run_delay over the interval. One per run after
	 * sleeping; off-CPU windows that begin with an empty queue.
	 */
	__u64 wake_wait_ns;
	__u64 wake_wait_cnt;
	/*
	 * Of those sleeps in S state, the ones of SCHED_IDLE_SLEEP_NS or
	 * more before the wakeup: their total up to it. Counted when they
	 * end, as sleep_off_ns is, so an epoch's sleep_off_ns less this is
	 * made of short intervals only.
	 */
	__u64 idle_sleep_ns;
	__u64 run_hist[SCHED_HIST_SLOTS];	/* log2(run before preemption) */
	__u64 off_hist[SCHED_HIST_SLOTS];	/* log2(off-CPU after preemption) */
	__u64 wake_hist[SCHED_HIST_SLOTS];	/* log2(wake_wait), 0 in slot 0 */
	/*
	 * Per slot of those two: the lengths' sum (ns) and the sum of their
	 * squares (in µs², which cannot overflow for windows under an hour
	 * counted a million times), so that the model knows where in its
	 * slot a slot's windows lie (solver/offwin.h).
	 */
	__u64 off_sum_ns[SCHED_HIST_SLOTS];
	__u64 off_sq_us2[SCHED_HIST_SLOTS];
	__u64 wake_sum_ns[SCHED_HIST_SLOTS];
	__u64 wake_sq_us2[SCHED_HIST_SLOTS];
	/*
	 * The longest wake_wait of the reader's epoch wake_max_epoch[i], in
	 * the slot i of its parity (wake_epoch in sched.bpf.c).
	 */
	__u64 wake_max_ns[2];
	__u32 wake_max_epoch[2];
	/*
	 * The wait's end, timed at the switch-in itself: wake_in_ns is the
	 * switch-in after the wakeup that set wake_pending (0: not seen).
	 * Taking it as the run's switch-out less its on-CPU time instead
	 * is tens of µs early when the runtime counter and the clock
	 * disagree over the run.
	 */
	__u64 wake_in_ns;
	__u32 wake_pending;	/* woken, its switch-in not yet seen */
	__u32 wake_pad;
	/*
	 * The preemption being followed (the pause predictor's per-event
	 * checks, docs/pause.md):
	 * set when the thread is switched out while runnable, sent as one
	 * struct sched_rx_event when it is switched back in.
	 */
	__u64 ev_run_start_ns;	/* switch-in of the run that was preempted
				 * (its switch-out less its on-CPU time),
				 * 0 = unknown */
	__u64 ev_out_ns;	/* the preemption, 0 = none pending */
	__u64 ev_slice_ns;	/* its se.slice then (EEVDF), 0 on CFS */
	__u64 ev_next_slice_ns;	/* se.slice of the task that took the CPU */
	__u32 ev_cpu;
	__u32 ev_next_tid;
	__u32 ev_blocks;	/* runs ended by blocking since the last event */
	__u32 ev_pad;
	/*
	 * The switch-in that ended that preemption's window, timed when it
	 * happened (0: not seen), for off_hist as wake_in_ns is for
	 * wake_hist: the switch-out less the run's on-CPU time is late by
	 * whatever the runtime counter leaves out of the run, such as the
	 * time a hypervisor took the vCPU away (steal), milliseconds at times.
	 */
	__u64 off_in_ns;
};

/*
 * One involuntary preemption of a receiver thread and the off-CPU interval
 * that followed, sent through the rx_events ring buffer when the thread
 * runs again. Receivers are preempted at most a few hundred times a second
 * (once per slice at most), so this is no per-packet record.
 */
#define SCHED_RX_EV_EEVDF	0x1	/* the kernel has sched_entity.deadline */

struct sched_rx_event {
	__u32 tid;
	__u32 cpu;		/* where it was preempted */
	__u32 flags;		/* SCHED_RX_EV_* */
	__u32 blocks;		/* runs that ended by blocking since the last event */
	__u32 next_tid;		/* the task that took the CPU */
	__u32 in_cpu;		/* where it ran again */
	__u32 port;		/* the watched port it last dequeued from */
	__u32 pad;
	__u64 run_start_ns;	/* the preempted run's switch-in, 0 = unknown */
	__u64 out_ns;		/* preemption (bpf_ktime_get_ns: CLOCK_MONOTONIC) */
	__u64 in_ns;		/* back on a CPU */
	__u64 slice_ns;		/* its se.slice at the preemption (EEVDF) */
	__u64 next_slice_ns;	/* the next task's se.slice (EEVDF) */
};

#define SCHED_RX_RINGBUF_BYTES	(256 * 1024)

#ifndef __bpf__
/* ------------------------------------------------ user-space reader -- */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/probe.h"

/*
 * One task's cumulative counters at the time of a read, with the time since
 * its last switch-out estimated from the traced switch-in and wakeup (so a
 * task that has been running all epoch shows it). The next switch-out
 * replaces the estimate by the kernel's counters; deltas telescope, so an
 * estimate error moves time between epochs but never adds or loses any.
 */
struct sched_snap_task {
	uint32_t tid;
	uint32_t tgid;
	uint64_t first_ns;	/* identity of the task together with tid */
	uint64_t born_ns;
	uint64_t dead_ns;
	uint32_t state;		/* enum sched_task_state */
	uint32_t cpu;
	uint64_t oncpu_ns;
	uint64_t wait_ns;
	uint64_t sleep_ns;
	uint64_t iowait_ns;
	uint64_t blocked_ns;
	uint64_t n_preempt;
	uint64_t n_sleep;
	uint64_t n_iowait;
	uint64_t n_blocked;
	uint64_t n_migrate;
	uint64_t n_untraced;
	uint64_t run_preempt_ns;
	uint64_t slice_ns;
	/*
	 * When the counters were as of: when the reader took the record (or,
	 * for a task whose time since its last switch-out was read from the
	 * kernel, then). A snapshot of many tasks is not instantaneous (a
	 * stalled read can take a good part of an epoch), so rates use each
	 * task's own.
	 */
	uint64_t at_ns;
	/*
	 * The task no longer exists though its record says it may be on a
	 * runqueue: its tid ended without a traced exit (see
	 * sched_snap_task_of()). state is then SCHED_ST_DEAD,
	 * dead_ns its last traced event, and sched_probe_forget_dead()
	 * drops the record.
	 */
	bool gone;
	char comm[16];
};

/* Running and runnable time of one task on one CPU (cumulative). */
struct sched_snap_row {
	uint32_t tid;
	uint32_t cpu;
	uint64_t oncpu_ns;
	uint64_t wait_ns;
};

struct sched_snap_rx {
	uint32_t tid;
	struct sched_rx_tid v;
	/* The longest wait after a wakeup since the previous snapshot, 0:
	 * none counted (from v.wake_max_ns[]). */
	uint64_t wake_max_ns;
};

/* Everything read at one instant; arrays sorted by tid (then cpu). */
struct sched_snap {
	uint64_t at_ns;			/* CLOCK_MONOTONIC of the read */
	struct sched_snap_task *tasks;
	size_t ntasks, tasks_cap;
	struct sched_snap_row *rows;
	size_t nrows, rows_cap;
	struct sched_snap_rx *rx;
	size_t nrx, rx_cap;
	struct sched_cpu *cpus;		/* [ncpus], indexed by CPU number */
	int ncpus;
	uint64_t tasks_full;		/* records the BPF side could not create */
	uint64_t task_cpus_full;	/* per-CPU segments it had no room for */
};

void sched_snap_init(struct sched_snap *s);
void sched_snap_free(struct sched_snap *s);

struct sched_probe;

/* Load and attach the scheduler programs in @mode. 0 or -errno (nothing is
 * left loaded). */
int sched_probe_open(struct sched_probe **out, enum probe_mode mode);
void sched_probe_close(struct sched_probe *sp);
struct probe_obj *sched_probe_obj(struct sched_probe *sp);
/* The receiver-thread map, for sockq to share (bpf_map__reuse_fd). */
int sched_probe_rx_tids_fd(const struct sched_probe *sp);
/* rx_tids' generation counter, shared the same way. */
int sched_probe_rx_gen_fd(const struct sched_probe *sp);

/*
 * Start the record of a task that existed before the probes, from its
 * /proc/<pid>/task/<tid>/schedstat counters read at @now_ns, so that its
 * first epoch is complete. @runnable: /proc state R. Does nothing if the
 * BPF side has already seen the task. 0 or -errno.
 */
int sched_probe_seed(struct sched_probe *sp, uint32_t tid, uint32_t tgid,
		     const char *comm, bool runnable, uint32_t cpu,
		     uint64_t sum_exec_ns, uint64_t run_delay_ns, uint64_t pcount,
		     uint64_t now_ns);

/*
 * The kernel's on-CPU and runqueue-wait totals and number of switch-ins of
 * @tid right now (e.g. /proc/<tid>/schedstat). 0, or -errno when unknown.
 */
typedef int (*sched_counters_fn)(void *arg, uint32_t tid, uint64_t *sum_exec_ns,
				 uint64_t *run_delay_ns, uint64_t *pcount);

/*
 * How the time between a task's last traced switch-out and @now splits,
 * given the kernel's totals read at @now (@sum_exec_ns, @run_delay_ns,
 * @pcount): on-CPU exactly; waiting: all the rest if it was preempted,
 * else since it was woken if the kernel counted no switch-in since, else
 * the kernel's accounted wait; the rest off the runqueue. Exposed for the
 * unit tests.
 */
struct sched_split {
	uint64_t off_ns;
	uint64_t wait_ns;
	uint64_t on_ns;
};

struct sched_split sched_split_since_out(const struct sched_task *t, uint64_t now,
					 uint64_t sum_exec_ns, uint64_t run_delay_ns,
					 uint64_t pcount);

/*
 * One BPF task record as a snapshot read at @read_ns: its counters plus the
 * time since its last switch-out, split from @fn's kernel totals (may be
 * NULL) when it may be runnable, else estimated from the record. A task @fn
 * reports gone (-ENOENT, -ESRCH) is snapped dead (gone = true) with nothing
 * charged after its last traced event. Returns that split. Exposed for the
 * unit tests.
 */
struct sched_split sched_snap_task_of(struct sched_snap_task *o, uint32_t tid,
				      const struct sched_task *t, uint64_t read_ns,
				      sched_counters_fn fn, void *arg);

/*
 * Read all counters now. For tasks the probe believes running or runnable,
 * @fn (may be NULL) supplies the kernel's current totals, so that the time
 * since their last traced switch-out is split exactly even when their
 * switch-out or wakeup was not traced. 0 or -errno.
 */
int sched_probe_snapshot(struct sched_probe *sp, struct sched_snap *snap,
			 sched_counters_fn fn, void *arg);
/* Delete the records of tasks that @snap saw dead (their last counters are
 * in @snap, so nothing is lost), unless their tid was reused since. */
void sched_probe_forget_dead(struct sched_probe *sp, const struct sched_snap *snap);

/*
 * Hand every receiver preemption event queued since the last call to @cb
 * (in the order the kernel queued them), without blocking. Returns the
 * number handed over, or -errno. *@lost (may be NULL) gets the number of
 * events the kernel could not queue since the probe was opened (ring
 * buffer full).
 */
int sched_probe_drain_rx(struct sched_probe *sp,
			 void (*cb)(void *arg, const struct sched_rx_event *ev),
			 void *arg, uint64_t *lost);
/*
 * A descriptor that polls readable (EPOLLIN) while receiver preemption
 * events wait to be drained, for an event loop's epoll set; owned by @sp.
 * -errno when there is none.
 */
int sched_probe_rx_fd(const struct sched_probe *sp);
#endif /* !__bpf__ */

#endif
