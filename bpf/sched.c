// SPDX-License-Identifier: GPL-2.0-or-later
/* Loader and reader of sched.bpf.c. See sched.h. */
#include "bpf/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/util.h"
#include "sched.skel.h"

struct sched_probe {
	struct rxb_sched *skel;
	struct probe_obj po;
	struct ring_buffer *rx_rb;	/* rx_events reader */
	/* The consumer of the drain under way (sched_probe_drain_rx). */
	void (*rx_cb)(void *arg, const struct sched_rx_event *ev);
	void *rx_arg;
	int rx_n;
	/* Per-epoch readers of tasks and task_cpus (probe_batch_read). */
	struct probe_batch tasks_rd, rows_rd;
};

/* Elements per batch lookup: a few hundred tasks run on a small host. */
#define SCHED_READ_CHUNK	256

static int rx_event(void *ctx, void *data, size_t size)
{
	struct sched_probe *sp = ctx;

	if (size < sizeof(struct sched_rx_event))
		return 0;	/* cannot happen: one record type */
	if (sp->rx_cb)
		sp->rx_cb(sp->rx_arg, data);
	sp->rx_n++;
	return 0;
}

void sched_snap_init(struct sched_snap *s)
{
	memset(s, 0, sizeof(*s));
}

void sched_snap_free(struct sched_snap *s)
{
	free(s->tasks);
	free(s->rows);
	free(s->rx);
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

int sched_probe_open(struct sched_probe **out, enum probe_mode mode)
{
	struct sched_probe *sp;
	int err;

	*out = NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->skel = rxb_sched__open();
	if (!sp->skel) {
		err = -errno;
		rxb_log_errno(RXB_LOG_WARNING, -err, "sched: opening BPF object");
		goto fail;
	}
	err = probe_obj_start(&sp->po, "sched", sp->skel->skeleton, mode, NULL);
	if (err)
		goto fail;
	err = probe_batch_init(&sp->tasks_rd, sizeof(uint32_t), sizeof(struct sched_task),
			       SCHED_READ_CHUNK, true, offsetof(struct sched_task, seq));
	if (!err)
		err = probe_batch_init(&sp->rows_rd, sizeof(struct sched_task_cpu_key),
				       sizeof(struct sched_task_cpu), SCHED_READ_CHUNK,
				       false, 0);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "sched: map read buffers");
		goto fail;
	}
	sp->rx_rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.rx_events),
				     rx_event, sp, NULL);
	if (!sp->rx_rb) {
		err = -errno;
		rxb_log_errno(RXB_LOG_WARNING, -err, "sched: receiver event ring buffer");
		goto fail;
	}
	*out = sp;
	return 0;
fail:
	sched_probe_close(sp);
	return err;
}

/* Also what a failed sched_probe_open() undoes: every step is safe on a
 * member that was never set up. */
void sched_probe_close(struct sched_probe *sp)
{
	if (!sp)
		return;
	probe_obj_detach(&sp->po);
	ring_buffer__free(sp->rx_rb);
	probe_batch_finish(&sp->rows_rd);
	probe_batch_finish(&sp->tasks_rd);
	rxb_sched__destroy(sp->skel);
	free(sp);
}

struct probe_obj *sched_probe_obj(struct sched_probe *sp)
{
	return &sp->po;
}

int sched_probe_rx_tids_fd(const struct sched_probe *sp)
{
	return bpf_map__fd(sp->skel->maps.rx_tids);
}

int sched_probe_rx_gen_fd(const struct sched_probe *sp)
{
	return bpf_map__fd(sp->skel->maps.rx_gen);
}

/* Grow *@arr (of @size-byte elements) to hold at least @n. */
static int reserve(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap = *cap ? *cap : 256;
	void *p;

	if (n <= *cap)
		return 0;
	while (ncap < n)
		ncap *= 2;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct sched_snap_row *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int task_cmp(const void *a, const void *b)
{
	const struct sched_snap_task *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int rx_cmp(const void *a, const void *b)
{
	const struct sched_snap_rx *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int add_row(struct sched_snap *s, uint32_t tid, uint32_t cpu,
		   uint64_t oncpu_ns, uint64_t wait_ns)
{
	if (!oncpu_ns && !wait_ns)
		return 0;
	if (reserve((void **)&s->rows, &s->rows_cap, s->nrows + 1, sizeof(*s->rows)))
		return -ENOMEM;
	s->rows[s->nrows++] = (struct sched_snap_row){
		.tid = tid, .cpu = cpu, .oncpu_ns = oncpu_ns, .wait_ns = wait_ns,
	};
	return 0;
}

/* Rows may hold the same (tid, cpu) several times: sort and sum them. */
static void merge_rows(struct sched_snap *s)
{
	size_t out = 0;

	if (s->nrows)
		qsort(s->rows, s->nrows, sizeof(*s->rows), row_cmp);
	for (size_t i = 0; i < s->nrows; i++) {
		if (out && s->rows[out - 1].tid == s->rows[i].tid &&
		    s->rows[out - 1].cpu == s->rows[i].cpu) {
			s->rows[out - 1].oncpu_ns += s->rows[i].oncpu_ns;
			s->rows[out - 1].wait_ns += s->rows[i].wait_ns;
		} else {
			s->rows[out++] = s->rows[i];
		}
	}
	s->nrows = out;
}

/* probe_batch_fn: one (tid, cpu) row of task_cpus. */
static int row_read(void *arg, const void *key, const void *val)
{
	const struct sched_task_cpu_key *k = key;
	const struct sched_task_cpu *v = val;

	return add_row(arg, k->tid, k->cpu, v->oncpu_ns, v->wait_ns);
}

static int read_rows(struct sched_probe *sp, struct sched_snap *s)
{
	return probe_batch_read(&sp->rows_rd, bpf_map__fd(sp->skel->maps.task_cpus),
				row_read, s);
}

/* Time since the last switch-out, split as far as the traced wakeup tells,
 * when the kernel's counters cannot be read (the task is gone). */
static struct sched_split partial_of(const struct sched_task *t, uint64_t now)
{
	struct sched_split p = { 0, 0, 0 };
	uint64_t out = t->out_ns;

	if (t->state == SCHED_ST_DEAD || now <= out)
		return p;
	if (t->state == SCHED_ST_RUNNABLE) {
		p.wait_ns = now - out;
	} else if (t->woken_ns && t->woken_ns < now) {
		p.off_ns = t->woken_ns > out ? t->woken_ns - out : 0;
		p.wait_ns = now - (t->woken_ns > out ? t->woken_ns : out);
	} else {
		p.off_ns = now - out;
	}
	return p;
}

/* The newest event in a record: its last switch-out or a wakeup since. */
static uint64_t last_event_ns(const struct sched_task *t)
{
	return t->woken_ns > t->out_ns ? t->woken_ns : t->out_ns;
}

/* Does the record say the task may have been on a runqueue since out_ns? */
static bool maybe_runnable(const struct sched_task *t)
{
	return t->state == SCHED_ST_RUNNABLE || t->woken_ns;
}

/*
 * The same split from the kernel's totals now (@sum, @delay, and @pcnt, its
 * count of switch-ins): on-CPU time is exact. A task preempted at out_ns
 * has waited whenever it was not on a CPU since; one that blocked and was
 * not switched in since is waiting since it was woken; one that was has
 * all its waiting in the kernel's run_delay (accounted at switch-in).
 */
struct sched_split sched_split_since_out(const struct sched_task *t, uint64_t now,
					 uint64_t sum, uint64_t delay, uint64_t pcnt)
{
	struct sched_split p = { 0, 0, 0 };
	uint64_t span = now > t->out_ns ? now - t->out_ns : 0;
	bool ran = pcnt > t->pcount;
	uint64_t rest;

	if (t->state == SCHED_ST_DEAD)
		return p;
	p.on_ns = sum > t->sum_exec_ns ? sum - t->sum_exec_ns : 0;
	if (p.on_ns > span)
		p.on_ns = span;
	rest = span - p.on_ns;
	/*
	 * Preempted at out_ns, so never off the runqueue since (whether or
	 * not it ran again): all that is not on-CPU is waiting, and what the
	 * kernel's clocks left out is runnable time too, as the probe's own
	 * charge_off() counts it at the switch-out. Under a hypervisor that
	 * is the stolen time of the task holding the CPU (excluded from
	 * sum_exec_runtime): leaving it out here and having the switch-out
	 * count it later moved up to a whole epoch of a CPU hog's time into
	 * the next epoch.
	 */
	if (t->state == SCHED_ST_RUNNABLE)
		p.wait_ns = rest;
	else if (!ran && t->woken_ns && now > t->woken_ns)
		p.wait_ns = now - t->woken_ns;		/* queued since woken */
	else
		p.wait_ns = delay > t->run_delay_ns ? delay - t->run_delay_ns : 0;
	if (p.wait_ns > rest)
		p.wait_ns = rest;
	p.off_ns = rest - p.wait_ns;
	return p;
}

/* Copy a BPF task record, adding the estimate since its last switch-out. */
static void snap_task(struct sched_snap_task *o, uint32_t tid,
		      const struct sched_task *t, const struct sched_split *p,
		      uint64_t at_ns)
{
	memset(o, 0, sizeof(*o));
	o->tid = tid;
	o->at_ns = at_ns;
	o->tgid = t->tgid;
	o->first_ns = t->first_ns;
	o->born_ns = t->born_ns;
	o->dead_ns = t->dead_ns;
	o->state = t->state;
	o->cpu = t->cpu;
	o->oncpu_ns = t->oncpu_ns + p->on_ns;
	o->wait_ns = t->wait_ns + p->wait_ns;
	o->sleep_ns = t->sleep_ns;
	o->iowait_ns = t->iowait_ns;
	o->blocked_ns = t->blocked_ns;
	switch (t->state) {
	case SCHED_ST_SLEEPING:
		o->sleep_ns += p->off_ns;
		break;
	case SCHED_ST_IOWAIT:
		o->iowait_ns += p->off_ns;
		break;
	case SCHED_ST_BLOCKED:
		o->blocked_ns += p->off_ns;
		break;
	}
	o->n_preempt = t->n_preempt;
	o->n_sleep = t->n_sleep;
	o->n_iowait = t->n_iowait;
	o->n_blocked = t->n_blocked;
	o->n_migrate = t->n_migrate;
	o->n_untraced = t->n_untraced;
	o->run_preempt_ns = t->run_preempt_ns;
	o->slice_ns = t->slice_ns;
	memcpy(o->comm, t->comm, sizeof(o->comm));
	o->comm[sizeof(o->comm) - 1] = '\0';
}

struct task_read {
	const struct probe_batch *rd;
	struct sched_snap *s;
	sched_counters_fn fn;
	void *arg;
};

struct sched_split sched_snap_task_of(struct sched_snap_task *o, uint32_t tid,
				      const struct sched_task *t, uint64_t read_ns,
				      sched_counters_fn fn, void *arg)
{
	struct sched_split part = partial_of(t, read_ns);
	/* No event in the record is later than its read. */
	uint64_t at_ns = read_ns;
	bool gone = false;

	if (fn && maybe_runnable(t)) {
		uint64_t sum, delay, pcnt;
		int err = fn(arg, tid, &sum, &delay, &pcnt);

		if (err == 0) {
			at_ns = rxb_mono_ns();
			part = sched_split_since_out(t, at_ns, sum, delay, pcnt);
		} else if (err == -ENOENT || err == -ESRCH) {
			gone = true;
		}
	}
	if (gone) {
		/*
		 * Gone, yet preempted or woken when last seen: its tid ended
		 * without a traced exit (a thread that calls execve() while
		 * not its group's leader takes the leader's tid in
		 * de_thread(), and its own is never switched out again). A
		 * task that does not exist waits for no CPU; estimating on
		 * from the record would charge it as runnable from then on
		 * and keep an idle CPU's #C at 1 while the record lasts.
		 * Nothing is charged after its last traced event.
		 */
		memset(&part, 0, sizeof(part));
	}
	snap_task(o, tid, t, &part, at_ns);
	if (gone) {
		o->gone = true;
		o->state = SCHED_ST_DEAD;
		o->dead_ns = last_event_ns(t);
	}
	return part;
}

/* probe_batch_fn: one task record, with its time since the last switch-out. */
static int task_read(void *arg, const void *key, const void *val)
{
	struct task_read *tr = arg;
	struct sched_snap *s = tr->s;
	const struct sched_task *t = val;
	uint32_t tid = *(const uint32_t *)key;
	struct sched_split part;

	if (reserve((void **)&s->tasks, &s->tasks_cap, s->ntasks + 1,
		    sizeof(*s->tasks)))
		return -ENOMEM;
	part = sched_snap_task_of(&s->tasks[s->ntasks++], tid, t, tr->rd->read_ns,
				  tr->fn, tr->arg);
	/* The unfolded segment and the estimate since, per CPU. */
	if (add_row(s, tid, t->seg_cpu, t->seg_oncpu_ns, t->seg_wait_ns) ||
	    add_row(s, tid, t->cpu, part.on_ns, part.wait_ns))
		return -ENOMEM;
	return 0;
}

static int read_tasks(struct sched_probe *sp, struct sched_snap *s,
		      sched_counters_fn fn, void *arg)
{
	struct task_read tr = { .rd = &sp->tasks_rd, .s = s, .fn = fn, .arg = arg };

	return probe_batch_read(&sp->tasks_rd, bpf_map__fd(sp->skel->maps.tasks),
				task_read, &tr);
}

/* The longest wait of epoch @ep in @v, 0 when none was counted in it. */
static uint64_t wake_max_of(const struct sched_rx_tid *v, uint32_t ep)
{
	return v->wake_max_epoch[ep & 1] == ep ? v->wake_max_ns[ep & 1] : 0;
}

/*
 * A consistent copy of receiver @tid's record into @v, through @tmp: one
 * whose seq was even and had not moved by the second copy (sched.h). A
 * copy torn by a switch-out would move one epoch's windows by a sample.
 * 0, -ENOENT (gone), -EAGAIN (kept changing) or -errno.
 */
static int rx_read_stable(int fd, uint32_t tid, struct sched_rx_tid *v,
			  struct sched_rx_tid *tmp)
{
	for (int tries = 0; tries < 8; tries++) {
		if (bpf_map_lookup_elem(fd, &tid, v) || bpf_map_lookup_elem(fd, &tid, tmp))
			return -errno;
		if (!(v->seq & 1) && v->seq == tmp->seq)
			return 0;
	}
	return -EAGAIN;
}

/*
 * The receiver records, each with its longest wait after a wakeup since
 * the previous read: the BPF side counts waits into the current epoch's
 * slot, so end the epoch first and read the slot of the one that ended.
 */
static int read_rx(struct sched_probe *sp, struct sched_snap *s)
{
	int fd = bpf_map__fd(sp->skel->maps.rx_tids);
	uint32_t key, next, ep = sp->skel->bss->wake_epoch;
	struct sched_rx_tid tmp;
	void *prev = NULL;
	int err;

	__atomic_store_n(&sp->skel->bss->wake_epoch, ep + 1, __ATOMIC_SEQ_CST);

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sched_snap_rx *r;

		key = next;
		prev = &key;
		if (reserve((void **)&s->rx, &s->rx_cap, s->nrx + 1, sizeof(*s->rx)))
			return -ENOMEM;
		r = &s->rx[s->nrx];
		err = rx_read_stable(fd, key, &r->v, &tmp);
		if (err) {
			if (err != -ENOENT)
				rxb_log_errno(RXB_LOG_DEBUG, -err,
					      "sched: reading receiver %u; skipped", key);
			continue;
		}
		r->tid = key;
		r->wake_max_ns = wake_max_of(&r->v, ep);
		s->nrx++;
	}
	return 0;
}

static int read_cpus(struct sched_probe *sp, struct sched_snap *s)
{
	int ncpus = libbpf_num_possible_cpus();
	uint32_t zero = 0;

	if (ncpus <= 0)
		return ncpus < 0 ? ncpus : -EINVAL;
	if (s->ncpus != ncpus) {
		struct sched_cpu *p = realloc(s->cpus, (size_t)ncpus * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->cpus = p;
		s->ncpus = ncpus;
	}
	if (bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.cpu_stats), &zero,
				s->cpus))
		return -errno;
	return 0;
}

int sched_probe_seed(struct sched_probe *sp, uint32_t tid, uint32_t tgid,
		     const char *comm, bool runnable, uint32_t cpu,
		     uint64_t sum_exec_ns, uint64_t run_delay_ns, uint64_t pcount,
		     uint64_t now_ns)
{
	struct sched_task t;

	memset(&t, 0, sizeof(t));
	t.state = runnable ? SCHED_ST_RUNNABLE : SCHED_ST_SLEEPING;
	t.cpu = cpu;
	t.seg_cpu = cpu;
	t.tgid = tgid;
	t.out_ns = now_ns;
	t.first_ns = now_ns;
	t.sum_exec_ns = sum_exec_ns;
	t.run_delay_ns = run_delay_ns;
	t.pcount = pcount;
	rxb_strlcpy(t.comm, comm, sizeof(t.comm));
	/* BPF_NOEXIST: a record the probes made meanwhile is better. */
	if (bpf_map_update_elem(bpf_map__fd(sp->skel->maps.tasks), &tid, &t,
				BPF_NOEXIST)) {
		if (errno == EEXIST)
			return 0;
		return -errno;
	}
	return 0;
}

int sched_probe_snapshot(struct sched_probe *sp, struct sched_snap *s,
			 sched_counters_fn fn, void *arg)
{
	int err;

	s->ntasks = 0;
	s->nrows = 0;
	s->nrx = 0;
	s->at_ns = rxb_mono_ns();
	/*
	 * Rows before tasks: a segment folded between the two reads is then
	 * missed once (and seen at the next read) rather than counted twice
	 * in one snapshot. The row then dips below the snapshot before, which
	 * had the segment as pending: collect_sched_rows_monotone() holds it.
	 */
	err = read_rows(sp, s);
	if (!err)
		err = read_tasks(sp, s, fn, arg);
	if (!err)
		err = read_rx(sp, s);
	if (!err)
		err = read_cpus(sp, s);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "sched: reading counters");
		return err;
	}
	s->tasks_full = sp->skel->bss->tasks_full;
	s->task_cpus_full = sp->skel->bss->task_cpus_full;
	if (s->ntasks)
		qsort(s->tasks, s->ntasks, sizeof(*s->tasks), task_cmp);
	if (s->nrx)
		qsort(s->rx, s->nrx, sizeof(*s->rx), rx_cmp);
	merge_rows(s);
	return 0;
}

void sched_probe_forget_dead(struct sched_probe *sp, const struct sched_snap *s)
{
	int tfd = bpf_map__fd(sp->skel->maps.tasks);
	int cfd = bpf_map__fd(sp->skel->maps.task_cpus);
	int rfd = bpf_map__fd(sp->skel->maps.rx_tids);
	size_t r = 0;

	for (size_t i = 0; i < s->ntasks; i++) {
		const struct sched_snap_task *t = &s->tasks[i];
		struct sched_task cur;

		if (t->state != SCHED_ST_DEAD)
			continue;
		/*
		 * Only if still the same dead task. A tid reused since the
		 * snapshot keeps its rows: the BPF side adds the new task's
		 * time to them, and the reader takes deltas per task.
		 */
		if (bpf_map_lookup_elem(tfd, &t->tid, &cur) == 0) {
			if (cur.first_ns != t->first_ns ||
			    !(cur.state == SCHED_ST_DEAD ||
			      (t->gone && last_event_ns(&cur) == t->dead_ns)))
				continue;
			bpf_map_delete_elem(tfd, &t->tid);
		}
		while (r < s->nrows && s->rows[r].tid < t->tid)
			r++;
		for (; r < s->nrows && s->rows[r].tid == t->tid; r++) {
			struct sched_task_cpu_key k = { t->tid, s->rows[r].cpu };

			bpf_map_delete_elem(cfd, &k);
		}
		bpf_map_delete_elem(rfd, &t->tid);
	}
}

int sched_probe_rx_fd(const struct sched_probe *sp)
{
	int fd;

	if (!sp || !sp->rx_rb)
		return -ENOENT;
	fd = ring_buffer__epoll_fd(sp->rx_rb);
	return fd >= 0 ? fd : -EBADF;
}

int sched_probe_drain_rx(struct sched_probe *sp,
			 void (*cb)(void *arg, const struct sched_rx_event *ev),
			 void *arg, uint64_t *lost)
{
	int err;

	sp->rx_cb = cb;
	sp->rx_arg = arg;
	sp->rx_n = 0;
	err = ring_buffer__consume(sp->rx_rb);
	sp->rx_cb = NULL;
	sp->rx_arg = NULL;
	if (lost)
		*lost = sp->skel->bss->rx_events_lost;
	if (err < 0) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "sched: reading receiver events");
		return err;
	}
	return sp->rx_n;
}
