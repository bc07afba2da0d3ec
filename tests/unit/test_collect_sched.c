// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the task-class computation (daemon/collect/collect_sched) and the
 * scheduler reader's split of un-accounted time (bpf/sched.c), on
 * snapshots of known composition.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/sched.h"
#include "daemon/collect/collect_sched.h"
#include "tests/unit/unit_main.h"

#define MS 1000000ULL
#define EPOCH (1000 * MS)
#define T0 (5000 * MS)

/* ------------------------------------------------------ classification -- */

static void test_classify(void **state)
{
	struct task_delta cpu = { .present_ns = EPOCH, .oncpu_ns = 300 * MS,
				  .wait_ns = 650 * MS, .n_preempt = 200 };
	struct task_delta half = cpu, blocky = cpu, io, sleeper, gone;

	(void)state;
	assert_int_equal(collect_sched_classify(&cpu), TASK_CLASS_CPU);
	/* Exactly at the threshold counts. */
	half.oncpu_ns = 250 * MS;
	half.wait_ns = 250 * MS;
	assert_int_equal(collect_sched_classify(&half), TASK_CLASS_CPU);
	half.wait_ns -= 1;
	assert_int_equal(collect_sched_classify(&half), TASK_CLASS_NONE);
	/* Runnable, but leaves the CPU mostly by blocking. */
	blocky.n_sleep = 250;
	blocky.n_iowait = 51;
	assert_int_equal(collect_sched_classify(&blocky), TASK_CLASS_IO);
	blocky.n_iowait = 0;
	assert_int_equal(collect_sched_classify(&blocky), TASK_CLASS_NONE);

	io = (struct task_delta){ .present_ns = EPOCH, .oncpu_ns = 100 * MS,
				  .wait_ns = 20 * MS, .iowait_ns = 600 * MS,
				  .n_iowait = 5000, .n_sleep = 10 };
	assert_int_equal(collect_sched_classify(&io), TASK_CLASS_IO);
	/* Mostly asleep on something else, one disk read: not I/O-bound. */
	sleeper = io;
	sleeper.iowait_ns = 1 * MS;
	sleeper.n_iowait = 1;
	assert_int_equal(collect_sched_classify(&sleeper), TASK_CLASS_NONE);
	memset(&gone, 0, sizeof(gone));
	assert_int_equal(collect_sched_classify(&gone), TASK_CLASS_NONE);
	assert_string_equal(collect_sched_class_name(TASK_CLASS_IO), "io");
}

/* ------------------------------------------------------ snapshot helpers -- */

struct snapbuf {
	struct sched_snap s;
	struct sched_snap_task tasks[16];
	struct sched_snap_row rows[32];
	struct sched_snap_rx rx[4];
	struct sched_cpu cpus[2];
};

static void snap_init(struct snapbuf *b, uint64_t at)
{
	memset(b, 0, sizeof(*b));
	b->s.at_ns = at;
	b->s.tasks = b->tasks;
	b->s.rows = b->rows;
	b->s.rx = b->rx;
	b->s.cpus = b->cpus;
	b->s.ncpus = 2;
}

/* Add a task (tid order!) with cumulative counters and its per-CPU rows. */
static struct sched_snap_task *add_task(struct snapbuf *b, uint32_t tid,
					uint64_t first, uint64_t on0, uint64_t wait0,
					uint64_t on1, uint64_t wait1)
{
	struct sched_snap_task *t = &b->tasks[b->s.ntasks++];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->tgid = tid;
	t->first_ns = first;
	t->state = SCHED_ST_RUNNABLE;
	t->oncpu_ns = on0 + on1;
	t->wait_ns = wait0 + wait1;
	if (on0 || wait0)
		b->rows[b->s.nrows++] = (struct sched_snap_row){ tid, 0, on0, wait0 };
	if (on1 || wait1)
		b->rows[b->s.nrows++] = (struct sched_snap_row){ tid, 1, on1, wait1 };
	return t;
}

static struct rxb_epoch *new_epoch(void)
{
	struct rxb_epoch *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	return e;
}

/*
 * The snapshots before (@p, at T0) and after (@c, an epoch later) one
 * epoch and the epoch @e computed from them, set up before each test that
 * takes them and freed after it.
 */
struct epoch_fixture {
	struct snapbuf p, c;
	struct rxb_epoch e;
};

static int epoch_setup(void **state)
{
	struct epoch_fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snap_init(&f->p, T0);
	snap_init(&f->c, T0 + EPOCH);
	*state = f;
	return 0;
}

static int epoch_teardown(void **state)
{
	free(*state);
	return 0;
}

/* k CPU-bound tasks pinned to CPU 1, always runnable, sharing it. */
static void test_pinned_cpu_bound(void **state)
{
	struct epoch_fixture *f = *state;
	struct snapbuf *p = &f->p, *c = &f->c;
	struct rxb_epoch *e = &f->e;
	const uint64_t share = EPOCH / 3;

	for (uint32_t tid = 100; tid < 103; tid++) {
		struct sched_snap_task *t;

		t = add_task(p, tid, 1, 0, 0, 10 * MS, 20 * MS);
		t->n_preempt = 10;
		t->slice_ns = 10 * 1400000ULL;
		t = add_task(c, tid, 1, 0, 0, 10 * MS + share, 20 * MS + 2 * share);
		t->n_preempt = 10 + 240;
		t->slice_ns = (10 + 240) * 1400000ULL;
		/* Tick-enforced: each of the 240 runs lasted 4 ms. */
		t->run_preempt_ns = 240 * 4000000ULL;
	}
	/* A sleeper on CPU 0 that ran 5 ms and blocked 50 times. */
	add_task(p, 200, 1, 1 * MS, 0, 0, 0)->n_sleep = 1;
	add_task(c, 200, 1, 6 * MS, 0, 0, 0)->n_sleep = 51;
	c->cpus[1].switches = 300;
	c->cpus[1].preemptions = 250;

	collect_sched_compute(&p->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_int_equal(e->ncpus, 2);
	assert_float_equal(e->cpus[1].cpu_bound, 3.0, 1e-6);
	assert_float_equal(e->cpus[0].cpu_bound, 0.0, 1e-9);
	assert_float_equal(e->cpus[1].io_bound, 0.0, 1e-9);
	assert_float_equal(e->cpus[1].runnable_avg, 3.0, 1e-6);
	assert_float_equal(e->cpus[0].runnable_avg, 0.005, 1e-9);
	assert_float_equal(e->cpus[1].cpu_bound_slice_ns, 1400000.0, 1e-3);
	assert_true(isnan(e->cpus[0].cpu_bound_slice_ns));
	assert_float_equal(e->cpus[1].cpu_bound_run_ns, 4000000.0, 1e-3);
	assert_true(isnan(e->cpus[0].cpu_bound_run_ns));
	assert_int_equal(e->cpus[1].switches, 300);
	assert_int_equal(e->cpus[1].preemptions, 250);
	assert_true(isnan(e->disk.mean_cpu_burst_ns));
}

/* A CPU-bound task that migrates counts where it ran; the report says so. */
static void test_migrating_and_report(void **state)
{
	struct epoch_fixture *f = *state;
	struct snapbuf *p = &f->p, *c = &f->c;
	struct rxb_epoch *e = &f->e;
	struct collect_sched_report r = { 0 };

	add_task(p, 300, 1, 0, 0, 0, 0);
	/* 300 ms running + 0 wait on CPU 0, 700 ms running on CPU 1. */
	add_task(c, 300, 1, 300 * MS, 0, 700 * MS, 0);
	collect_sched_compute(&p->s, &c->s, NULL, 0, e, &r, NULL, NULL);
	assert_float_equal(e->cpus[0].cpu_bound, 0.3, 1e-9);
	assert_float_equal(e->cpus[1].cpu_bound, 0.7, 1e-9);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0].tid, 300);
	assert_int_equal(r.v[0].cls, TASK_CLASS_CPU);
	assert_int_equal(r.v[0].nw, 2);
	assert_int_equal(r.v[0].w[0].cpu, 1);	/* largest first */
	assert_float_equal(r.v[0].w[0].w, 0.7, 1e-9);
	collect_sched_report_free(&r);
}

/*
 * A stalled read: the snapshot starts at its at_ns, but two always-runnable
 * tasks pinned to CPU 1 are read 300 ms later (their counters are as of
 * then), in one epoch and not the next. Each is runnable all of its own
 * span, so #C is 2 in both epochs; divided by the snapshots' epochs it
 * would be 2 * 1.3 and then 2 * 0.7.
 */
static void test_stalled_read(void **state)
{
	struct snapbuf *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct snapbuf *c = malloc(sizeof(*c));
	struct rxb_epoch *e = new_epoch();
	const uint64_t stall = 300 * MS;

	(void)state;
	snap_init(a, T0);
	snap_init(b, T0 + EPOCH);
	snap_init(c, T0 + 2 * EPOCH);
	for (uint32_t tid = 100; tid < 102; tid++) {
		struct sched_snap_task *t;
		/* Half running, half waiting: runnable = elapsed since T0. */
		uint64_t rb = EPOCH + stall;

		t = add_task(a, tid, 1, 0, 0, 0, 0);
		t->n_preempt = 1;
		t = add_task(b, tid, 1, 0, 0, rb / 2, rb / 2);
		t->n_preempt = 100;
		t->at_ns = T0 + EPOCH + stall;
		t = add_task(c, tid, 1, 0, 0, EPOCH, EPOCH);
		t->n_preempt = 200;
	}
	collect_sched_compute(&a->s, &b->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->cpus[1].cpu_bound, 2.0, 1e-9);
	assert_float_equal(e->cpus[1].runnable_avg, 2.0, 1e-9);
	collect_sched_compute(&b->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->cpus[1].cpu_bound, 2.0, 1e-9);
	/* Counters claiming more than the stretch (time counted late): one
	 * task counts 1 at most. */
	c->tasks[0].wait_ns += EPOCH;
	c->rows[0].wait_ns += EPOCH;
	collect_sched_compute(&b->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->cpus[1].cpu_bound, 2.0, 1e-9);
	free(a);
	free(b);
	free(c);
	free(e);
}

static void two_thousand_reqs(void *arg, uint32_t tid, struct collect_sched_disk_use *u)
{
	(void)arg;
	if (tid != 400)
		return;
	u->issued = 2000;
	u->completed = 1990;
	u->service_ns = 1990 * 150000ULL;
}

/* An I/O-bound task: class, weight, and mu_P-I/O from bursts per disk wait. */
static void test_io_bound_and_burst(void **state)
{
	struct epoch_fixture *f = *state;
	struct snapbuf *p = &f->p, *c = &f->c;
	struct rxb_epoch *e = &f->e;
	struct sched_snap_task *t;

	t = add_task(p, 400, 1, 50 * MS, 1 * MS, 0, 0);
	t->state = SCHED_ST_IOWAIT;
	t = add_task(c, 400, 1, 50 * MS + 100 * MS, 1 * MS + 10 * MS, 0, 0);
	t->state = SCHED_ST_IOWAIT;
	t->iowait_ns = 800 * MS;
	t->n_iowait = 1000;		/* 100 ms on CPU / 1000 waits = 100 us */
	collect_sched_compute(&p->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->cpus[0].io_bound, 1.0, 1e-9);
	assert_float_equal(e->cpus[0].cpu_bound, 0.0, 1e-9);
	assert_float_equal(e->disk.mean_cpu_burst_ns, 100000.0, 1e-6);
	assert_float_equal(e->disk.io_cpu_rate_per_s, 10000.0, 1e-6);
	/* It issued 2000 requests but slept only 1000 times (a fast disk
	 * finished some before it slept): 2000 bursts of 50 us. */
	collect_sched_compute(&p->s, &c->s, NULL, 0, e, NULL, two_thousand_reqs, NULL);
	assert_float_equal(e->disk.mean_cpu_burst_ns, 50000.0, 1e-6);
	/* ... and mu_D from the disk's time on its requests. */
	assert_true(e->disk.valid);
	assert_float_equal(e->disk.mean_service_ns, 150000.0, 1e-6);
	assert_float_equal(e->disk.service_rate_per_s, 1e9 / 150000.0, 1e-6);
	/* Untraced switch-outs count as the traced mix (all disk waits). */
	c->tasks[0].n_untraced = 1000;
	collect_sched_compute(&p->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->disk.mean_cpu_burst_ns, 50000.0, 1e-6);
}

/*
 * Receivers are left out and reported; new, dead and reused tids, and one
 * missing from the snapshot before.
 */
static void test_receiver_new_dead_reused(void **state)
{
	struct epoch_fixture *f = *state;
	struct snapbuf *p = &f->p, *c = &f->c;
	struct rxb_epoch *e = &f->e;
	struct collect_sched_tid_time rx[1] = { { .tid = 500 } };
	struct sched_snap_task *t;

	/* 500: a busy receiver on CPU 1 and 0. */
	add_task(p, 500, 1, 0, 0, 0, 0);
	add_task(c, 500, 1, 100 * MS, 0, 800 * MS, 100 * MS);
	/* 600: born half-way through, CPU-bound since. */
	t = add_task(c, 600, T0 + EPOCH / 2, 0, 0, 400 * MS, 100 * MS);
	t->born_ns = T0 + EPOCH / 2;
	/* 700: a CPU-bound task that died after 200 ms. */
	add_task(p, 700, 1, 0, 0, 0, 0);
	t = add_task(c, 700, 1, 0, 0, 200 * MS, 0);
	t->state = SCHED_ST_DEAD;
	t->dead_ns = T0 + 200 * MS;
	/*
	 * 800: the tid names another task now, first seen after the last
	 * snapshot (a new first_ns): counters from 0.
	 */
	add_task(p, 800, 1, 0, 0, 5000 * MS, 0);
	add_task(c, 800, T0 + 1, 0, 0, 0, 600 * MS);
	/*
	 * 900: seen long before the last snapshot but missing from it (its
	 * record's read failed): its 50 s since it began are not this epoch's,
	 * it is left out.
	 */
	add_task(c, 900, 1, 0, 0, 50000 * MS, 0);
	collect_sched_compute(&p->s, &c->s, rx, 1, e, NULL, NULL, NULL);

	assert_true(rx[0].seen);
	assert_int_equal(rx[0].oncpu_ns, 900 * MS);
	assert_int_equal(rx[0].ncpus_ran, 2);
	assert_int_equal(rx[0].ran_on[0].cpu, 1);
	assert_int_equal(rx[0].ran_on[0].oncpu_ns, 800 * MS);
	/* CPU 1: 600 (0.5 runnable, present 0.5: CPU-bound) + 700 (0.2, present
	 * 0.2) + 800 (0.6 waiting, present 1: CPU-bound); not the receiver,
	 * not 900. */
	assert_float_equal(e->cpus[1].cpu_bound, 0.5 + 0.2 + 0.6, 1e-9);
	assert_float_equal(e->cpus[0].cpu_bound, 0.0, 1e-9);
	/* runnable_avg counts everyone, the receiver too (900 is unknown). */
	assert_float_equal(e->cpus[1].runnable_avg, 0.9 + 1.3, 1e-9);
	/* The snapshot before had no task (its read failed): unknown, not 0. */
	p->s.ntasks = 0;
	collect_sched_compute(&p->s, &c->s, rx, 1, e, NULL, NULL, NULL);
	assert_true(isnan(e->cpus[1].cpu_bound) && isnan(e->cpus[1].runnable_avg));
	assert_false(rx[0].seen);
}

/*
 * A receiver on CPU 1 whose 5 ms segment was pending in the snapshot
 * before (row 15 ms) and folded between this snapshot's two reads (row
 * 10 ms): the dip is held at 15, so the epoch after, when the row reads
 * 15 again, adds nothing - the 5 ms count once, in the epoch they ran in.
 * A reused tid's rows are not raised.
 */
static void test_rows_monotone(void **state)
{
	struct epoch_fixture *f = *state;
	struct snapbuf *p = &f->p, *c = &f->c, *n = calloc(1, sizeof(*n));
	struct collect_sched_tid_time rx[1] = { { .tid = 500 } };

	(void)state;
	assert_non_null(n);
	snap_init(n, T0 + 2 * EPOCH);
	add_task(p, 500, 1, 0, 0, 15 * MS, 0);
	add_task(c, 500, 1, 0, 0, 10 * MS, 0);
	add_task(n, 500, 1, 0, 0, 15 * MS, 0);
	add_task(p, 600, 1, 0, 0, 40 * MS, 0);
	add_task(c, 600, T0 + 1, 0, 0, 3 * MS, 0);	/* another task, tid 600 */
	collect_sched_rows_monotone(&p->s, &c->s);
	assert_int_equal(c->rows[0].oncpu_ns, 15 * MS);
	assert_int_equal(c->rows[1].oncpu_ns, 3 * MS);
	collect_sched_rows_monotone(&c->s, &n->s);
	collect_sched_compute(&c->s, &n->s, rx, 1, &f->e, NULL, NULL, NULL);
	assert_true(rx[0].seen);
	assert_int_equal(rx[0].ncpus_ran, 0);	/* nothing on any CPU this epoch */
	free(n);
}

/* ------------------------------------------- time since the switch-out -- */

static void test_split_since_out(void **state)
{
	struct sched_task t;
	struct sched_split s;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.out_ns = 1000 * MS;
	t.sum_exec_ns = 50 * MS;
	t.run_delay_ns = 7 * MS;
	t.pcount = 10;

	/* Preempted, not run since: all waiting. */
	t.state = SCHED_ST_RUNNABLE;
	s = sched_split_since_out(&t, 1100 * MS, 50 * MS, 7 * MS, 10);
	assert_int_equal(s.on_ns, 0);
	assert_int_equal(s.wait_ns, 100 * MS);
	assert_int_equal(s.off_ns, 0);

	/* Preempted, back on the CPU (a switch-in the kernel counted): 30 ms
	 * run, 70 ms accounted wait. */
	s = sched_split_since_out(&t, 1100 * MS, 80 * MS, 77 * MS, 11);
	assert_int_equal(s.on_ns, 30 * MS);
	assert_int_equal(s.wait_ns, 70 * MS);
	assert_int_equal(s.off_ns, 0);

	/* ... the same, but 40 ms of it stolen by the hypervisor while on
	 * the CPU (not in sum_exec_runtime, not in run_delay): still
	 * runnable, counted as waiting, as the switch-out will. */
	s = sched_split_since_out(&t, 1100 * MS, 80 * MS, 37 * MS, 11);
	assert_int_equal(s.on_ns, 30 * MS);
	assert_int_equal(s.wait_ns, 70 * MS);
	assert_int_equal(s.off_ns, 0);

	/* Asleep, woken at +60 ms (traced), waiting since. */
	t.state = SCHED_ST_SLEEPING;
	t.woken_ns = 1060 * MS;
	s = sched_split_since_out(&t, 1100 * MS, 50 * MS, 7 * MS, 10);
	assert_int_equal(s.off_ns, 60 * MS);
	assert_int_equal(s.wait_ns, 40 * MS);
	assert_int_equal(s.on_ns, 0);

	/* Asleep, its wakeup and switch-in untraced, ran 5 ms after 1 ms
	 * waiting: the kernel's counters tell. */
	t.woken_ns = 0;
	s = sched_split_since_out(&t, 1100 * MS, 55 * MS, 8 * MS, 11);
	assert_int_equal(s.on_ns, 5 * MS);
	assert_int_equal(s.wait_ns, 1 * MS);
	assert_int_equal(s.off_ns, 94 * MS);

	/* Counters that claim more than the elapsed time are clamped. */
	s = sched_split_since_out(&t, 1010 * MS, 90 * MS, 99 * MS, 12);
	assert_int_equal(s.on_ns, 10 * MS);
	assert_int_equal(s.wait_ns + s.off_ns, 0);
}

/* ------------------------------------------ a task gone without a trace -- */

static int counters_gone(void *arg, uint32_t tid, uint64_t *sum, uint64_t *delay,
			 uint64_t *pcnt)
{
	(void)arg; (void)tid; (void)sum; (void)delay; (void)pcnt;
	return -ENOENT;		/* as procfs_read_schedstat() for a gone tid */
}

/* Alive, woken and not yet run: the kernel's totals unchanged. */
static int counters_waiting(void *arg, uint32_t tid, uint64_t *sum, uint64_t *delay,
			    uint64_t *pcnt)
{
	const struct sched_task *t = arg;

	(void)tid;
	*sum = t->sum_exec_ns;
	*delay = t->run_delay_ns;
	*pcnt = t->pcount;
	return 0;
}

/*
 * Snap one record at @at the way the reader does, with its row for the
 * time since its last switch-out.
 */
static void snap_record(struct snapbuf *b, uint32_t tid, const struct sched_task *t,
			uint64_t at, sched_counters_fn fn, void *arg)
{
	struct sched_split part;

	part = sched_snap_task_of(&b->tasks[b->s.ntasks++], tid, t, at, fn, arg);
	if (part.on_ns || part.wait_ns)
		b->rows[b->s.nrows++] = (struct sched_snap_row){ tid, t->cpu, part.on_ns,
								 part.wait_ns };
}

/*
 * A task woken on CPU 1 whose switch-in and exit were never traced (seen
 * on the test VM: an idle CPU 1 held at #C 1 for minutes, so the e2e
 * harness waited for a quiet machine that never came). Gone from /proc, it
 * must count for nothing; alive and still waiting, it is CPU-bound.
 */
static void test_gone_untraced(void **state)
{
	struct epoch_fixture *f = *state;
	struct snapbuf *p = &f->p, *c = &f->c;
	struct rxb_epoch *e = &f->e;
	struct sched_task t;

	memset(&t, 0, sizeof(t));
	t.state = SCHED_ST_SLEEPING;
	t.cpu = 1;
	t.seg_cpu = 1;
	t.first_ns = T0 - 20 * MS;
	t.out_ns = T0 - 10 * MS;
	t.woken_ns = T0 - 10 * MS;
	t.oncpu_ns = 3 * MS;

	/* Gone: snapped dead at its wakeup, nothing charged since. */
	snap_init(p, T0);
	snap_init(c, T0 + EPOCH);
	snap_record(p, 900, &t, T0, counters_gone, NULL);
	snap_record(c, 900, &t, T0 + EPOCH, counters_gone, NULL);
	assert_true(c->tasks[0].gone);
	assert_int_equal(c->tasks[0].state, SCHED_ST_DEAD);
	assert_int_equal(c->tasks[0].dead_ns, T0 - 10 * MS);
	assert_int_equal(c->tasks[0].wait_ns, 0);
	assert_int_equal(c->tasks[0].oncpu_ns, 3 * MS);
	collect_sched_compute(&p->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->cpus[1].cpu_bound, 0.0, 1e-9);
	assert_float_equal(e->cpus[1].runnable_avg, 0.0, 1e-9);

	/* Alive and still waiting since its wakeup: runnable all epoch. */
	memset(e, 0, sizeof(*e));
	snap_init(p, T0);
	snap_init(c, T0 + EPOCH);
	snap_record(p, 900, &t, T0, counters_waiting, &t);
	snap_record(c, 900, &t, T0 + EPOCH, counters_waiting, &t);
	assert_false(c->tasks[0].gone);
	assert_int_equal(c->tasks[0].state, SCHED_ST_SLEEPING);
	collect_sched_compute(&p->s, &c->s, NULL, 0, e, NULL, NULL, NULL);
	assert_float_equal(e->cpus[1].cpu_bound, 1.0, 0.01);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_classify),
	cmocka_unit_test_setup_teardown(test_pinned_cpu_bound, epoch_setup, epoch_teardown),
	cmocka_unit_test_setup_teardown(test_migrating_and_report, epoch_setup, epoch_teardown),
	cmocka_unit_test(test_stalled_read),
	cmocka_unit_test_setup_teardown(test_io_bound_and_burst, epoch_setup, epoch_teardown),
	cmocka_unit_test_setup_teardown(test_receiver_new_dead_reused, epoch_setup, epoch_teardown),
	cmocka_unit_test_setup_teardown(test_rows_monotone, epoch_setup, epoch_teardown),
	cmocka_unit_test(test_split_since_out),
	cmocka_unit_test_setup_teardown(test_gone_untraced, epoch_setup, epoch_teardown),
)
