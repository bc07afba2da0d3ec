// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Scheduler tracepoints: per-task time on CPU, waiting for a CPU, asleep,
 * waiting for disk I/O and in other D states; how tasks leave the CPU; and
 * on/off-CPU statistics of watched receiver threads. See sched.h for why
 * time is accounted at switch-outs from the kernel's own task counters.
 *
 * Every program exists twice, as tp_btf and raw_tp (see core.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/core.bpf.h"
#include "bpf/sched.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHED_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct sched_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHED_MAX_TASK_CPUS);
	__type(key, struct sched_task_cpu_key);
	__type(value, struct sched_task_cpu);
} task_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_cpu);
} cpu_stats SEC(".maps");

/* rx_tids and rx_gen, shared with sockq.bpf.c. */
#include "bpf/rx_tids.bpf.h"

/* Receiver preemptions with the off-CPU interval that followed (sched.h). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SCHED_RX_RINGBUF_BYTES);
} rx_events SEC(".maps");

/* Receiver preemption events the ring buffer had no room for. */
__u64 rx_events_lost = 0;

/* A new record is built here: it is too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_task);
} scratch SEC(".maps");

/* Records the task map had no room for: reported, never silently lost. */
__u64 tasks_full = 0;
/* Per-CPU segments the (tid, cpu) map had no room for: their time is in
 * the task's totals only (fold_segment()), reported likewise. */
__u64 task_cpus_full = 0;

/*
 * Receivers preempted and not yet back on a CPU (ev_out_ns set). While
 * there are none - most of the time - a switch-in needs no rx_tids lookup
 * of the task coming in. A receiver that user space forgets while it is
 * preempted leaves this one too high: switch-ins then look their task up
 * every time, which costs time but never a count.
 */
__u64 rx_pending = 0;

/*
 * Receivers woken from sleep and not yet switched in (wake_pending set),
 * for the same reason and with the same caveat as rx_pending.
 */
__u64 rx_woken = 0;

/*
 * The reader's epoch: set by user space at each snapshot (sched.c), read
 * here when a receiver's wait after a wakeup is counted. A maximum cannot
 * be taken as a difference of two reads, so each wait goes into the
 * record's slot for this epoch's parity (sched_rx_tid.wake_max_ns[]),
 * restarted when the slot's epoch is an older one: the reader bumps the
 * epoch and then reads the slot of the one that ended, which no wait
 * counted after the bump touches.
 */
volatile __u32 wake_epoch;

/*
 * floor(log2(v)) for v >= 1 (0 for 0), at most SCHED_HIST_SLOTS - 1: a
 * binary search in six steps, without the loop of one shift per bit (the
 * receivers' histograms are updated at every switch-out after a wakeup).
 */
static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0, s;

	/* Is v at least 2^32, 2^16, 2^8, 2^4, 2^2? Then shift that off. */
#pragma unroll
	for (int i = 5; i > 0; i--) {
		s = (v >= 1ULL << (1 << i)) << i;
		v >>= s;
		r |= s;
	}
	r |= (__u32)(v >> 1);
	return r < SCHED_HIST_SLOTS - 1 ? r : SCHED_HIST_SLOTS - 1;
}

static __always_inline __u64 sub0(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static __always_inline __u32 tid_of(struct task_struct *p, bool btf)
{
	return RD(btf, p, pid);
}

/* The kernel's cumulative on-CPU time of @p. */
static __always_inline __u64 sum_exec(struct task_struct *p, bool btf)
{
	return RD(btf, p, se.sum_exec_runtime);
}

/*
 * The record of @tid, created with @state at @now when missing: the kernel's
 * counters read now are the baseline, so nothing before @now is charged.
 * A record left in SCHED_ST_DEAD belongs to an exited task whose tid was
 * reused: it is started afresh (a new first_ns tells the reader).
 */
static __always_inline struct sched_task *
get_task(__u32 tid, struct task_struct *p, __u32 state, __u32 cpu, __u64 now,
	 bool btf)
{
	struct sched_task *t, *init;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t && t->state != SCHED_ST_DEAD)
		return t;
	init = bpf_map_lookup_elem(&scratch, &zero);
	if (!init)
		return NULL;
	__builtin_memset(init, 0, sizeof(*init));
	init->state = state;
	init->cpu = cpu;
	init->seg_cpu = cpu;
	init->out_ns = now;
	init->first_ns = now;
	init->sum_exec_ns = sum_exec(p, btf);
	init->run_delay_ns = core_run_delay(p, btf);
	init->pcount = core_pcount(p, btf);
	init->tgid = BPF_CORE_READ(p, tgid);
	BPF_CORE_READ_STR_INTO(&init->comm, p, comm);
	if (bpf_map_update_elem(&tasks, &tid, init, BPF_ANY)) {
		__sync_fetch_and_add(&tasks_full, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&tasks, &tid);
}

/*
 * Bracket an update so the reader can detect a torn copy. Only the CPU the
 * task leaves writes @seq (a task is switched out on one CPU at a time), so
 * plain increments do: a locked add on every switch cost more than the
 * rest of the update. The compiler barriers keep the record's stores
 * between the two; on x86 stores are seen in program order, and on arm64
 * the JIT's non-fetching atomic add was no barrier either.
 */
static __always_inline void begin_update(struct sched_task *t)
{
	t->seq++;
	barrier();
}

static __always_inline void end_update(struct sched_task *t)
{
	barrier();
	t->seq++;
}

/* Move the unfolded per-CPU segment into the (tid, cpu) map. */
static __always_inline void fold_segment(__u32 tid, struct sched_task *t)
{
	struct sched_task_cpu_key k = { .tid = tid, .cpu = t->seg_cpu };
	struct sched_task_cpu *tc, zero = {};

	if (!t->seg_oncpu_ns && !t->seg_wait_ns)
		return;
	tc = bpf_map_lookup_elem(&task_cpus, &k);
	if (!tc) {
		bpf_map_update_elem(&task_cpus, &k, &zero, BPF_NOEXIST);
		tc = bpf_map_lookup_elem(&task_cpus, &k);
		if (!tc) {
			/*
			 * Map full: the time stays in the totals only. The
			 * segment is dropped, not left to be read (and folded
			 * later) as the next CPU's.
			 */
			__sync_fetch_and_add(&task_cpus_full, 1);
			t->seg_oncpu_ns = 0;
			t->seg_wait_ns = 0;
			return;
		}
	}
	__sync_fetch_and_add(&tc->oncpu_ns, t->seg_oncpu_ns);
	__sync_fetch_and_add(&tc->wait_ns, t->seg_wait_ns);
	t->seg_oncpu_ns = 0;
	t->seg_wait_ns = 0;
}

/* How @prev leaves the CPU, from the preempt flag, its state and in_iowait. */
static __always_inline __u32 leave_state(bool preempt, struct task_struct *prev,
					 unsigned int prev_state, bool btf)
{
	if (preempt || prev_state == SCHED_TASK_RUNNING)
		return SCHED_ST_RUNNABLE;
	if (prev_state & SCHED_TASK_DEAD)
		return SCHED_ST_DEAD;
	if (RD_BITFIELD(btf, prev, in_iowait))
		return SCHED_ST_IOWAIT;
	if ((prev_state & SCHED_TASK_UNINTERRUPTIBLE) &&
	    !(prev_state & SCHED_TASK_NOLOAD))
		return SCHED_ST_BLOCKED;
	return SCHED_ST_SLEEPING;
}

/* Time off the runqueue, charged to the way the task left at out_ns. */
static __always_inline void charge_off(struct sched_task *t, __u64 off)
{
	switch (t->state) {
	case SCHED_ST_SLEEPING:
		t->sleep_ns += off;
		break;
	case SCHED_ST_IOWAIT:
		t->iowait_ns += off;
		break;
	case SCHED_ST_BLOCKED:
		t->blocked_ns += off;
		break;
	default:
		/* Preempted tasks are never off the runqueue: rounding. */
		t->wait_ns += off;
		t->seg_wait_ns += off;
		break;
	}
}

/*
 * The receiver record of @tid, or NULL when it is none. A missing entry is
 * taken from @t's cache while rx_tids has had no insert since it was
 * looked up; a cached "yes" is looked up each time (the record is needed,
 * and user space may have removed it). Reading the generation before the
 * lookup means an insert racing with it is found at the next switch-out.
 */
static __always_inline struct sched_rx_tid *rx_of(__u32 tid,
						  struct sched_task *t)
{
	struct sched_rx_tid *rx;
	__u32 zero = 0, gen;
	__u64 *g;

	g = bpf_map_lookup_elem(&rx_gen, &zero);
	if (!g)
		return bpf_map_lookup_elem(&rx_tids, &tid);
	gen = (__u32)*g;
	if (t->rx_state == SCHED_RX_NO && t->rx_gen == gen)
		return NULL;
	rx = bpf_map_lookup_elem(&rx_tids, &tid);
	t->rx_state = rx ? SCHED_RX_YES : SCHED_RX_NO;
	t->rx_gen = gen;
	return rx;
}

/*
 * A receiver's wait after its wakeup at @woken, at the switch-out (@now)
 * that ends the run after it: to the switch-in timed when it happened,
 * else to the switch-out less the run's on-CPU time @on. Clears the
 * record's switch-in for the next wakeup.
 */
static __always_inline __u64 rx_wake_wait(struct sched_rx_tid *rx, __u64 woken,
					  __u64 now, __u64 on)
{
	__u64 in = rx->wake_in_ns;

	if (rx->wake_pending) {
		/* Its switch-in was not traced. */
		rx->wake_pending = 0;
		__sync_fetch_and_add(&rx_woken, (__u64)-1);
		in = 0;
	}
	rx->wake_in_ns = 0;
	if (in >= woken && in <= now)
		return in - woken;
	return sub0(sub0(now, on), woken);
}

/*
 * A receiver's window after its preemption at @out, at the switch-out
 * (@now) that ends the run after it: to the switch-in timed when it
 * happened (rx_follow), else to the switch-out less the run's on-CPU
 * time @on. Clears the record's switch-in for the next preemption.
 */
static __always_inline __u64 rx_preempt_off(struct sched_rx_tid *rx, __u64 out,
					    __u64 now, __u64 on)
{
	__u64 in = rx->off_in_ns;

	rx->off_in_ns = 0;
	if (in >= out && in <= now)
		return in - out;
	return sub0(sub0(now, on), out);
}

/* The switch-in of receiver @tid at @now, if a wakeup of it is pending. */
static __always_inline void rx_switch_in(__u32 tid, __u64 now)
{
	struct sched_rx_tid *rx;

	if (!tid || !*(volatile __u64 *)&rx_woken)
		return;
	rx = bpf_map_lookup_elem(&rx_tids, &tid);
	if (!rx || !rx->wake_pending)
		return;
	rx->wake_in_ns = now;
	rx->wake_pending = 0;
	__sync_fetch_and_add(&rx_woken, (__u64)-1);
}

/* @wait into the longest wait after a wakeup of this epoch (wake_epoch). */
static __always_inline void wake_max_add(struct sched_rx_tid *rx, __u64 wait)
{
	__u32 ep = wake_epoch, i = ep & 1;

	if (rx->wake_max_epoch[i] != ep) {
		rx->wake_max_epoch[i] = ep;
		rx->wake_max_ns[i] = 0;
	}
	if (wait > rx->wake_max_ns[i])
		rx->wake_max_ns[i] = wait;
}

/*
 * One window of @ns into slot @r of a histogram and its sums. The square
 * is of the length rounded to the nearest µs: truncated, each square would
 * be short by about the length itself in µs² (8000 µs² for 8 ms), more
 * than the whole variance of a slot of like windows.
 */
static __always_inline void hist_add(__u64 *hist, __u64 *sum_ns, __u64 *sq_us2, __u64 ns)
{
	__u32 r = log2_slot(ns) & (SCHED_HIST_SLOTS - 1);
	__u64 us = (ns + 500) / 1000;

	hist[r]++;
	sum_ns[r] += ns;
	sq_us2[r] += us * us;
}

/*
 * Pause-window inputs of a receiver thread: this run's length when it ends
 * in preemption, and the off-CPU interval that preceded the run, split by
 * how that interval began: @off by the kernel's counters (the run's steal
 * in it, so that runs and intervals add up to the time), @win as timed
 * from the switch-out to the switch-in (the histograms); after a sleep in
 * S state also its part on the runqueue (@wait: woken, not yet running).
 */
static __always_inline void rx_account(struct sched_rx_tid *rx,
				       struct sched_task *t, __u32 how,
				       __u64 run, __u64 off, __u64 win, __u64 wait)
{
	if (!rx)
		return;
	rx->seq++;
	barrier();
	if (t->state == SCHED_ST_RUNNABLE) {
		rx->preempt_off_ns += off;
		rx->preempt_off_cnt++;
		hist_add(rx->off_hist, rx->off_sum_ns, rx->off_sq_us2, win);
	} else {
		rx->sleep_off_ns += off;
		rx->sleep_off_cnt++;
		if (t->state == SCHED_ST_SLEEPING) {
			__u64 slept = off > wait ? off - wait : 0;

			rx->wake_wait_ns += wait;
			rx->wake_wait_cnt++;
			hist_add(rx->wake_hist, rx->wake_sum_ns, rx->wake_sq_us2, wait);
			wake_max_add(rx, wait);
			if (slept >= SCHED_IDLE_SLEEP_NS)
				rx->idle_sleep_ns += slept;
		}
	}
	if (how == SCHED_ST_RUNNABLE) {
		rx->preempts++;
		rx->run_preempt_ns += run;
		rx->run_hist[log2_slot(run) & (SCHED_HIST_SLOTS - 1)]++;
	} else {
		rx->blocks++;
	}
	barrier();
	rx->seq++;
}

/*
 * Follow the receiver threads for the pause-window predictor: note an
 * involuntary preemption (@runnable) of @prev after a run of @run_ns (its
 * on-CPU time since its last switch-out, from the kernel's counter: the
 * run began at now - @run_ns; 0: unknown) and, when the preempted thread
 * runs again as @next, queue one event with the whole off-CPU interval.
 * A tid runs on one CPU at a time, so its switch-out and its next
 * switch-in never race.
 */
static __always_inline void rx_follow(struct task_struct *prev,
				      struct task_struct *next,
				      struct sched_rx_tid *prev_rx,
				      __u32 next_tid, bool runnable, __u32 cpu,
				      __u64 now, __u64 run_ns, bool btf)
{
	struct sched_rx_tid *rx = prev_rx;
	struct sched_rx_event *ev;

	if (rx) {
		if (runnable) {
			if (!rx->ev_out_ns)
				__sync_fetch_and_add(&rx_pending, 1);
			rx->ev_run_start_ns = run_ns && run_ns < now ? now - run_ns : 0;
			rx->ev_out_ns = now;
			rx->ev_cpu = cpu;
			rx->ev_slice_ns = core_se_slice(prev, btf);
			rx->ev_next_slice_ns = core_se_slice(next, btf);
			rx->ev_next_tid = next_tid;
		} else {
			/* Blocked: no involuntary window follows this run. */
			if (rx->ev_out_ns)
				__sync_fetch_and_add(&rx_pending, (__u64)-1);
			rx->ev_out_ns = 0;
			rx->ev_blocks++;
		}
	}
	if (!next_tid || !*(volatile __u64 *)&rx_pending)
		return;
	rx = bpf_map_lookup_elem(&rx_tids, &next_tid);
	if (!rx || !rx->ev_out_ns)
		return;
	if (now > rx->ev_out_ns) {
		rx->off_in_ns = now;
		ev = bpf_ringbuf_reserve(&rx_events, sizeof(*ev), 0);
		if (ev) {
			ev->tid = next_tid;
			ev->cpu = rx->ev_cpu;
			ev->flags = core_sched_is_eevdf(next) ? SCHED_RX_EV_EEVDF : 0;
			ev->blocks = rx->ev_blocks;
			ev->next_tid = rx->ev_next_tid;
			ev->in_cpu = cpu;
			ev->port = rx->port;
			ev->pad = 0;
			ev->run_start_ns = rx->ev_run_start_ns;
			ev->out_ns = rx->ev_out_ns;
			ev->in_ns = now;
			ev->slice_ns = rx->ev_slice_ns;
			ev->next_slice_ns = rx->ev_next_slice_ns;
			bpf_ringbuf_submit(ev, 0);
		} else {
			__sync_fetch_and_add(&rx_events_lost, 1);
		}
		rx->ev_blocks = 0;
	}
	rx->ev_out_ns = 0;
	__sync_fetch_and_add(&rx_pending, (__u64)-1);
}

/* Count how @t's run of @on ns ended: preempted, asleep, in I/O, ... */
static __always_inline void count_leave(struct sched_task *t, __u32 how, __u64 on,
					__u64 now, struct task_struct *prev, bool btf)
{
	switch (how) {
	case SCHED_ST_RUNNABLE:
		t->n_preempt++;
		t->run_preempt_ns += on;
		/* EEVDF (6.6+) has a per-entity slice; CFS does not. */
		t->slice_ns += core_se_slice(prev, btf);
		break;
	case SCHED_ST_SLEEPING:
		t->n_sleep++;
		break;
	case SCHED_ST_IOWAIT:
		t->n_iowait++;
		break;
	case SCHED_ST_BLOCKED:
		t->n_blocked++;
		break;
	case SCHED_ST_DEAD:
		t->dead_ns = now;
		break;
	}
}

/*
 * Account @prev's run that ends now; returns its receiver record, if any,
 * and in *@run_ns its on-CPU time since its last traced switch-out (0:
 * first sight).
 */
static __always_inline struct sched_rx_tid *
switch_out(bool preempt, struct task_struct *prev, unsigned int prev_state,
	   __u32 cpu, __u64 now, __u32 tid, __u64 *run_ns, bool btf)
{
	__u32 how = leave_state(preempt, prev, prev_state, btf);
	__u64 sum = sum_exec(prev, btf), delay = core_run_delay(prev, btf);
	struct sched_rx_tid *rx;
	__u64 dt, on, win, wait, npc, wait_woken = 0;
	struct sched_task *t;

	if (!tid)
		return NULL;	/* the idle task: idle time comes from /proc/stat */
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (!t || t->state == SCHED_ST_DEAD) {
		/* First sight: this is the baseline, nothing to charge. */
		t = get_task(tid, prev, how, cpu, now, btf);
		if (!t)
			return bpf_map_lookup_elem(&rx_tids, &tid);
		if (how == SCHED_ST_DEAD)
			t->dead_ns = now;
		return rx_of(tid, t);
	}
	begin_update(t);
	rx = rx_of(tid, t);
	dt = sub0(now, t->out_ns);
	on = sub0(sum, t->sum_exec_ns);
	if (on > dt)
		on = dt;
	*run_ns = on;
	if (core_have_run_delay(prev))
		wait = sub0(delay, t->run_delay_ns);
	else if (t->state == SCHED_ST_RUNNABLE)
		wait = dt - on;
	else
		wait = t->woken_ns ? sub0(sub0(now, t->woken_ns), on) : 0;
	if (wait > dt - on)
		wait = dt - on;
	if (t->seg_cpu != cpu) {
		fold_segment(tid, t);
		t->seg_cpu = cpu;
	}
	/* More than one switch-in since the last traced switch-out: the
	 * switch-outs in between were not traced. */
	npc = core_pcount(prev, btf);
	if (npc > t->pcount + 1)
		t->n_untraced += npc - t->pcount - 1;
	t->oncpu_ns += on;
	t->seg_oncpu_ns += on;
	t->wait_ns += wait;
	t->seg_wait_ns += wait;
	charge_off(t, dt - on - wait);
	/*
	 * A receiver's wait after its wakeup: from the traced wakeup to this
	 * run's switch-in (now - on). The kernel's run_delay misses it when
	 * the sleeper was still queued (EEVDF's delayed dequeue: a wakeup
	 * then re-queues without counting a wait), so it is the fallback.
	 */
	if (rx && t->woken_ns)
		wait_woken = rx_wake_wait(rx, t->woken_ns, now, on);
	win = dt - on;
	if (rx && t->state == SCHED_ST_RUNNABLE)
		win = rx_preempt_off(rx, t->out_ns, now, on);
	rx_account(rx, t, how, on, dt - on, win, rx && t->woken_ns ? wait_woken : wait);

	count_leave(t, how, on, now, prev, btf);
	t->state = how;
	t->cpu = cpu;
	t->out_ns = now;
	t->woken_ns = 0;
	t->sum_exec_ns = sum;
	t->run_delay_ns = delay;
	t->pcount = npc;
	end_update(t);
	return rx;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state, bool btf)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 zero = 0, cpu = bpf_get_smp_processor_id();
	struct sched_cpu *c = bpf_map_lookup_elem(&cpu_stats, &zero);
	__u32 prev_tid = tid_of(prev, btf), next_tid = tid_of(next, btf);
	struct sched_rx_tid *rx;
	__u64 run_ns = 0;

	if (!c)
		return 0;
	c->switches++;
	if (preempt || prev_state == SCHED_TASK_RUNNING)
		c->preemptions++;
	if (c->switches > 1 && c->last_next_tid != prev_tid)
		c->untraced++;
	c->last_next_tid = next_tid;
	/*
	 * Only the task leaving is accounted: the kernel's counters read at
	 * its next switch-out cover this switch-in too, and the reader asks
	 * the kernel (schedstat) about tasks that may be running now.
	 */
	rx = switch_out(preempt, prev, prev_state, cpu, now, prev_tid, &run_ns, btf);
	rx_follow(prev, next, rx, next_tid,
		  preempt || prev_state == SCHED_TASK_RUNNING, cpu, now, run_ns, btf);
	rx_switch_in(next_tid, now);
	return 0;
}

/*
 * Only the first wakeup after blocking matters (spurious ones and wakeups
 * of a task still on its CPU change nothing): a known task's record is
 * looked at before the clock and the task's CPU are read, so those cost
 * nothing. Plain stores: these only refine the reader's estimate until
 * the next switch-out.
 */
static __always_inline int on_wakeup(struct task_struct *p, bool new_task,
				     bool btf)
{
	__u32 tid = tid_of(p, btf);
	struct sched_task *t;
	__u64 now;
	__u32 cpu;

	if (!tid)
		return 0;
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t && t->state != SCHED_ST_DEAD && !new_task &&
	    (t->state == SCHED_ST_RUNNABLE || t->woken_ns))
		return 0;
	now = bpf_ktime_get_ns();
	cpu = core_task_cpu(p, btf);
	if (!t || t->state == SCHED_ST_DEAD) {
		t = get_task(tid, p, new_task ? SCHED_ST_RUNNABLE : SCHED_ST_SLEEPING,
			     cpu, now, btf);
		if (!t)
			return 0;
	}
	if (new_task && !t->born_ns)
		t->born_ns = now;
	if (t->state != SCHED_ST_RUNNABLE && !t->woken_ns) {
		struct sched_rx_tid *rx = rx_of(tid, t);

		t->woken_ns = now;
		t->cpu = cpu;
		if (rx && !rx->wake_pending) {
			rx->wake_in_ns = 0;
			rx->wake_pending = 1;
			__sync_fetch_and_add(&rx_woken, 1);
		}
	}
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu,
				      bool btf)
{
	__u32 tid = tid_of(p, btf);
	struct sched_task *t;

	if (!tid)
		return 0;
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (!t)
		return 0;
	t->n_migrate++;
	/* Where a queued task now waits (a running one is switched out first). */
	t->cpu = dest_cpu;
	return 0;
}

CORE_TP_PROGS(sched_switch, sched_switch, on_switch(preempt, prev, next, prev_state, btf),
	      bool preempt, struct task_struct *prev, struct task_struct *next,
	      unsigned int prev_state)

CORE_TP_PROGS(sched_wakeup, sched_wakeup, on_wakeup(p, false, btf), struct task_struct *p)

CORE_TP_PROGS(sched_wakeup_new, sched_wakeup_new, on_wakeup(p, true, btf),
	      struct task_struct *p)

CORE_TP_PROGS(sched_migrate_task, sched_migrate, on_migrate(p, dest_cpu, btf),
	      struct task_struct *p, int dest_cpu)
