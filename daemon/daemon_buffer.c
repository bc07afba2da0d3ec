// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckd's receive-buffer adaptation. See daemon_buffer.h, docs/buffer.md. */
#include "daemon/daemon_buffer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/procfs.h"

/* ------------------------------------------------------------- timer -- */

static int arm(int tfd, double dt_s)
{
	uint64_t ns = (uint64_t)(dt_s * 1e9);
	struct itimerspec its = {
		.it_interval = { .tv_sec = (time_t)(ns / RXB_NSEC_PER_SEC),
				 .tv_nsec = (long)(ns % RXB_NSEC_PER_SEC) },
	};

	its.it_value = its.it_interval;
	if (timerfd_settime(tfd, 0, &its, NULL))
		return -errno;
	return 0;
}

/* Open what mode != off needs: the sock_diag socket and the timer. */
static int open_io(struct daemon_buffer *b)
{
	int err;

	if (!b->sd) {
		err = sockdiag_open(&b->sd);
		if (err) {
			rxb_log_errno(RXB_LOG_ERR, -err, "[buffer]: opening a sock_diag socket");
			return err;
		}
	}
	if (b->tfd < 0) {
		b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (b->tfd < 0) {
			err = -errno;
			rxb_log_errno(RXB_LOG_ERR, -err, "[buffer]: timerfd_create");
			return err;
		}
	}
	err = arm(b->tfd, b->cfg.p.rrda.dt_s);
	if (err)
		rxb_log_errno(RXB_LOG_ERR, -err, "[buffer]: arming the %.0f ms timer",
			      b->cfg.p.rrda.dt_s * 1e3);
	return err;
}

static void close_io(struct daemon_buffer *b)
{
	sockdiag_close(b->sd);
	b->sd = NULL;
	if (b->tfd >= 0)
		close(b->tfd);
	b->tfd = -1;
}

int daemon_buffer_init(struct daemon_buffer *b, const struct daemon_buffer_cfg *cfg,
		       const struct daemon_buffer_ops *ops)
{
	int err;

	memset(b, 0, sizeof(*b));
	b->tfd = -1;
	b->cfg = *cfg;
	if (ops)
		b->ops = *ops;
	err = buffer_init(&b->set, &cfg->p);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "[buffer]: settings");
		return err;
	}
	{
		uint64_t hz;

		if (procfs_read_kconfig_u64("HZ", &hz) == 0 && hz >= 10 && hz <= 10000)
			b->tick_ns = 1e9 / (double)hz;
	}
	if (cfg->p.mode == BUFFER_OFF)
		return 0;
	err = open_io(b);
	if (err)
		daemon_buffer_finish(b);
	else
		rxb_info("[buffer] %s, policy %s, every %.0f ms", buffer_mode_name(cfg->p.mode),
			 buffer_policy_name(cfg->p.policy), cfg->p.rrda.dt_s * 1e3);
	return err;
}

void daemon_buffer_finish(struct daemon_buffer *b)
{
	close_io(b);
	buffer_finish(&b->set);
}

int daemon_buffer_reconfigure(struct daemon_buffer *b, const struct daemon_buffer_cfg *cfg)
{
	struct buffer_params old = b->set.p;
	int err = buffer_set_params(&b->set, &cfg->p);

	if (err)
		return err;
	if (cfg->p.mode != BUFFER_OFF) {
		struct daemon_buffer_cfg keep = b->cfg;

		b->cfg = *cfg;
		err = open_io(b);
		if (err) {
			b->cfg = keep;
			buffer_set_params(&b->set, &old);	/* was in use: cannot fail */
			return err;
		}
	} else {
		close_io(b);
		b->cfg = *cfg;
	}
	/* a new allow-list is judged again at the next change */
	for (int i = 0; i < BUFFER_MAX_SOCKS; i++)
		b->owner[i].refusal_logged[0] = '\0';
	b->force_refused = false;
	return 0;
}

int daemon_buffer_fd(const struct daemon_buffer *b)
{
	return b->tfd;
}

/* ------------------------------------------------------------- flows -- */

/* The CPU the flow's receiver ran on most, -1 if unknown. */
static int receiver_cpu(const struct inputs_stage_b *b)
{
	double top = 0;
	int cpu = -1;

	for (int i = 0; i < b->ncpus && i < LEARN_MAX_CPUS; i++)
		if (b->cpu_share[i] > top) {
			top = b->cpu_share[i];
			cpu = b->cpu[i];
		}
	return cpu;
}

/*
 * The socket stage's off-CPU windows when the pause predictor has none:
 * a receiver that sleeps between reads is not preempted, so it has no
 * predicted vacations, yet when it wakes with k CPU-bound tasks on its CPU
 * it can wait a round of their turns. A turn is their slice (se.slice) as
 * the tick enforces it: a task whose slice ran out is preempted at the next
 * tick (docs/pause.md §1), so a turn lasts from one slice to a slice and a
 * tick (1.4 to 5.4 ms at HZ 250; 4 ms measured as the median); the buffer
 * is sized for the longest, D = k x (slice + tick), at least k x their
 * measured run (which the receiver's own wake-ups cut short, so it is not
 * the turn itself). P = D + one turn.
 */
static void sleeper_windows(struct rxb_stage_inputs *sb, const struct inputs_stage_b *b,
			    const struct rxb_epoch *e, double tick_ns)
{
	int cpu = receiver_cpu(b);
	double k = sb->cpu_bound, turn = NAN;

	if (sb->vacation_s > 0 || !e || cpu < 0 || !(k >= 0.5))
		return;
	for (int i = 0; i < e->ncpus && i < RXB_MAX_CPUS; i++) {
		const struct rxb_cpu_meas *c = &e->cpus[i];
		double slice = c->cpu_bound_slice_ns;

		if (c->cpu != cpu)
			continue;
		if (slice > 0 && tick_ns > 0)
			slice += tick_ns;
		turn = fmax(slice > 0 ? slice : 0.0,
			    c->cpu_bound_run_ns > 0 ? c->cpu_bound_run_ns : 0.0);
	}
	if (!(turn > 0) || !isfinite(turn))
		return;
	sb->vacation_s = k * turn / 1e9;
	sb->vacation_period_s = (k + 1.0) * turn / 1e9;
}

/*
 * The port's one receive buffer is sized for one transfer's model: the
 * solved one with the most senders (the first on ties), else the first.
 */
static const struct flow_model *buffer_model(const struct flow *fl)
{
	const struct flow_model *best = &fl->m[0];

	for (int i = 0; i < fl->nmodels && i < FLOW_MAX_XFERS; i++) {
		const struct flow_model *m = &fl->m[i];

		if (m->have_good && (!best->have_good || m->nsenders > best->nsenders))
			best = m;
	}
	return best;
}

/* What the flow's senders will send: each model's rate times its senders
 * (at least @m's rate while any sender follows one); 0 without senders. */
static double published_bps(const struct flow *fl, const struct flow_model *m)
{
	double sum = 0;

	if (!fl->nsenders)
		return 0;
	for (int i = 0; i < fl->nmodels && i < FLOW_MAX_XFERS; i++)
		if (fl->m[i].has_rate)
			sum += (double)fl->m[i].rate.rate_bps * fl->m[i].nsenders;
	return sum > 0 ? sum : m->has_rate ? (double)m->rate.rate_bps : 0;
}

void daemon_buffer_flow_of(const struct flow *fl, const struct rxb_epoch *e,
			   double tick_ns, struct buffer_flow *out)
{
	const struct flow_model *m = buffer_model(fl);
	const struct flow_estimate *g = &m->good;
	const struct inputs_traffic *t = &fl->inputs.traffic;
	double dt = e && e->end_ns > e->start_ns ? (double)(e->end_ns - e->start_ns) / 1e9 : 0;

	memset(out, 0, sizeof(*out));
	out->port = fl->port;
	out->truesize_bytes = ewma_ratio_value(&fl->learn.truesize_per_pkt);
	if (!(out->truesize_bytes > 0) || !isfinite(out->truesize_bytes))
		out->truesize_bytes = 0;
	if (!m->have_good || !g->nstages)
		return;
	out->have_model = true;
	out->solved_ns = g->at_ns;
	out->nstages = g->nstages;
	memcpy(out->stages, g->inputs, sizeof(out->stages));
	sleeper_windows(&out->stages[g->nstages - 1], &fl->inputs.b, e, tick_ns);
	out->xfer = (struct bneck_xfer){
		.payload_bytes = g->xfer.payload_bytes,
		.file_bytes = g->xfer.file_bytes,
		.one_way_delay_s = g->xfer.one_way_delay_s,
		.line_rate_bps = g->xfer.line_rate_bps,
		.min_rate_bps = g->xfer.min_rate_bps,
		.points = 2,
		.rounds = g->rounds,
		.loss_episode_pkts = g->loss_episode_pkts,
	};
	/* what the next transfer will send: only with senders that follow it */
	out->published_bps = published_bps(fl, m);
	/* packets that arrived (queued or dropped), in the model's payload */
	if (t->counts_valid && dt > 0)
		out->arrival_bps = (double)t->pkts_in / dt * 8.0 * g->xfer.payload_bytes;
}

/* The flows' ports and truesizes for a step (no model needed there). */
static int step_flows(const struct flows *f, struct buffer_flow *out)
{
	int n = 0;

	for (int i = 0; i < f->n && n < FLOWS_MAX; i++) {
		double ts = ewma_ratio_value(&f->v[i].learn.truesize_per_pkt);

		memset(&out[n], 0, sizeof(out[n]));
		out[n].port = f->v[i].port;
		out[n].truesize_bytes = ts > 0 && isfinite(ts) ? ts : 0;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------- dump -- */

struct dump_ctx {
	struct daemon_buffer *b;
	const struct buffer_flow *flows;
	int nflows;
};

static void keep_sock(const struct sockdiag_sock *s, void *arg)
{
	struct dump_ctx *c = arg;

	for (int i = 0; i < c->nflows; i++) {
		if (c->flows[i].port != s->port)
			continue;
		if (c->b->ndump < DAEMON_BUFFER_MAX_DUMP)
			c->b->dump[c->b->ndump++] = *s;
		else
			c->b->dump_cut = true;
		return;
	}
}

/* ---------------------------------------------------------- actuator -- */

static struct daemon_buffer_owner *owner_slot(struct daemon_buffer *b, uint64_t inode)
{
	struct daemon_buffer_owner *free_slot = NULL;

	for (int i = 0; i < BUFFER_MAX_SOCKS; i++) {
		if (b->owner[i].c.inode == inode)
			return &b->owner[i];
		/* a slot whose socket the table no longer follows */
		if (!free_slot && (!b->owner[i].c.inode || !buffer_find(&b->set, b->owner[i].c.inode)))
			free_slot = &b->owner[i];
	}
	if (free_slot)
		memset(free_slot, 0, sizeof(*free_slot));
	return free_slot;
}

static int hints_of(const struct rxb_epoch *e, uint16_t port, int32_t *h)
{
	const struct rxb_sock_meas *m = rxb_epoch_sock(e, port);
	int n = 0;

	for (int i = 0; m && i < m->ntids && i < RXB_MAX_TIDS; i++)
		h[n++] = m->tids[i];
	return n;
}

static void refuse(struct daemon_buffer *b, struct daemon_buffer_owner *o,
		   const struct buffer_action *a, int err, const char *why, uint64_t now)
{
	buffer_applied(&b->set, a, 0, err, why, now);
	b->refusals++;
	/* once per reason and socket */
	if (strcmp(o->refusal_logged, why))
		rxb_notice("buffer: port %u socket %llu: not resized (%llu -> %llu B wanted): %s",
			   a->port, (unsigned long long)a->inode,
			   (unsigned long long)a->from_bytes, (unsigned long long)a->to_bytes, why);
	rxb_strlcpy(o->refusal_logged, why, sizeof(o->refusal_logged));
}

/* One change: owner, allow-list, pidfd_getfd, SO_RCVBUFFORCE. */
static int apply_one(struct daemon_buffer *b, const struct buffer_action *a,
		     const struct rxb_epoch *e, uint64_t now, uint64_t *got)
{
	struct daemon_buffer_owner *o = owner_slot(b, a->inode);
	int32_t hints[RXB_MAX_TIDS];
	int nh = hints_of(e, a->port, hints), err;
	char why[160];

	*got = 0;
	if (!o)
		return -ENOSPC;
	for (int attempt = 0; attempt < 2; attempt++) {
		err = rcvbuf_lookup(&o->c, a->inode, hints, nh, &b->cfg.allow, now);
		if (err) {
			refuse(b, o, a, err, "no process the daemon may look into holds it", now);
			return err;
		}
		if (!o->c.allowed) {
			snprintf(why, sizeof(why), "owner pid %d uid %u (%.80s) is not in "
				 "allow_users/allow_exes", o->c.owner.pid, o->c.owner.uid,
				 o->c.owner.exe[0] ? o->c.owner.exe : "executable unknown");
			refuse(b, o, a, -EPERM, why, now);
			return -EPERM;
		}
		err = rcvbuf_set(&o->c.owner, a->inode, a->to_bytes, b->set.p.force, got);
		if (err != -ESTALE)
			break;
		o->c.found = false;	/* the descriptor moved: look again */
	}
	if (err) {
		snprintf(why, sizeof(why), "pid %d fd %d: %s", o->c.owner.pid, o->c.owner.fd,
			 strerror(-err));
		buffer_applied(&b->set, a, 0, err, why, now);
		b->failures++;
		rxb_warn("buffer: port %u socket %llu: setting %llu B failed: %s", a->port,
			 (unsigned long long)a->inode, (unsigned long long)a->to_bytes, why);
		return err;
	}
	b->changes++;
	o->refusal_logged[0] = '\0';
	buffer_applied(&b->set, a, *got, 0, NULL, now);
	rxb_notice("buffer: port %u socket %llu (pid %d %s): rcvbuf %llu -> %llu B (%s)",
		   a->port, (unsigned long long)a->inode, o->c.owner.pid, o->c.owner.exe,
		   (unsigned long long)a->from_bytes, (unsigned long long)*got, a->reason);
	/* Above rmem_max and not all of it: SO_RCVBUFFORCE was refused. */
	if (b->set.p.force && *got < a->to_bytes && a->to_bytes > 2 * b->mem.rmem_max_bytes &&
	    b->mem.rmem_max_bytes) {
		struct buffer_params p = b->set.p;

		p.force = false;
		buffer_set_params(&b->set, &p);
		b->force_refused = true;
		rxb_warn("buffer: SO_RCVBUFFORCE refused (no CAP_NET_ADMIN): sizes capped at "
			 "2 x net.core.rmem_max = %llu B",
			 (unsigned long long)(2 * b->mem.rmem_max_bytes));
	}
	return 0;
}

/* The flow's model takes the new size; solved at once at most once an epoch. */
static void feed_model(struct daemon_buffer *b, struct flows *f, uint16_t port,
		       uint64_t bytes, uint64_t now)
{
	int slot = -1;
	bool now_ok;

	for (int i = 0; i < FLOWS_MAX; i++)
		if (b->last_solve_port[i] == port || (slot < 0 && !b->last_solve_port[i]))
			slot = i;
	if (slot < 0)
		slot = 0;
	if (b->last_solve_port[slot] != port) {
		b->last_solve_port[slot] = port;
		b->last_solve_ns[slot] = 0;
	}
	now_ok = now - b->last_solve_ns[slot] >= b->cfg.solve_min_ns;
	if (bytes > UINT32_MAX)
		bytes = UINT32_MAX;
	if (flows_set_rcvbuf(f, port, (uint32_t)bytes, now_ok) > 0)
		b->last_solve_ns[slot] = now;
}

void daemon_buffer_on_timer(struct daemon_buffer *b, struct flows *f,
			    const struct rxb_epoch *e)
{
	struct buffer_flow flows[FLOWS_MAX];
	struct buffer_action act[BUFFER_MAX_SOCKS];
	struct dump_ctx dc = { .b = b, .flows = flows };
	uint64_t expirations, t0 = rxb_mono_ns(), dt;
	struct buffer_step_in in;
	int n, err;

	if (b->tfd < 0 || read(b->tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	dc.nflows = step_flows(f, flows);
	err = procmem_read(&b->mem);
	b->ndump = 0;
	b->dump_cut = false;
	if (dc.nflows) {
		int r = sockdiag_udp_mem(b->sd, keep_sock, &dc);

		if (r < 0 && !err)
			err = r;
	}
	if (err && err != b->last_err)
		rxb_log_errno(RXB_LOG_WARNING, -err, "buffer: reading the sockets' or the "
			      "host's memory");
	b->last_err = err;
	in = (struct buffer_step_in){
		.now_ns = t0, .socks = b->dump, .nsocks = b->ndump, .mem = &b->mem,
		.flows = flows, .nflows = dc.nflows,
	};
	n = buffer_step(&b->set, &in, act, BUFFER_MAX_SOCKS);
	for (int i = 0; i < n; i++) {
		uint64_t got;

		if (apply_one(b, &act[i], e, t0, &got) == 0)
			feed_model(b, f, act[i].port, got, t0);
	}
	dt = rxb_mono_ns() - t0;
	b->steps++;
	b->step_ns_total += dt;
	if (dt > b->step_ns_max)
		b->step_ns_max = dt;
}

/* ------------------------------------------------------------ epochs -- */

bool daemon_buffer_advice(const struct daemon_buffer *b, uint16_t port,
			  struct rxbneck_buffer *out)
{
	const struct buffer_sock *x = buffer_port_sock(&b->set, port);
	uint64_t hi;

	memset(out, 0, sizeof(*out));
	if (b->set.p.mode == BUFFER_OFF || !x || !x->recommend_bytes)
		return false;
	hi = b->set.p.rrda.ceiling_bytes < b->set.kernel_max_bytes ?
	     b->set.p.rrda.ceiling_bytes : b->set.kernel_max_bytes;
	out->port = port;
	out->rcvbuf_bytes = x->recommend_bytes > RXBNECK_RCVBUF_MAX ? RXBNECK_RCVBUF_MAX
								      : x->recommend_bytes;
	out->current_bytes = x->rcvbuf;
	out->pkt_bytes = x->truesize_bytes > 0 && x->truesize_bytes < UINT32_MAX ?
			 (uint32_t)lround(x->truesize_bytes) : 0;
	out->epoch = b->epoch;
	if (b->set.p.mode == BUFFER_APPLY && x->rcvbuf == x->recommend_bytes)
		out->flags |= RXBNECK_BUFFER_APPLIED;
	if (b->set.p.policy == BUFFER_MODEL)
		out->flags |= RXBNECK_BUFFER_MODEL;
	if (x->recommend_bytes + 2 >= (hi & ~1ULL) &&
	    ((b->set.p.policy == BUFFER_RRDA && x->last.f > 0) ||
	     (b->set.p.policy == BUFFER_MODEL && x->model.by_time)))
		out->flags |= RXBNECK_BUFFER_LIMITED;
	return true;
}

/* @port's slot in the per-flow arrays (taken when new; -1: all taken). */
static int flow_slot(struct daemon_buffer *b, uint16_t port)
{
	int slot = -1;

	for (int i = 0; i < FLOWS_MAX; i++)
		if (b->arrival_port[i] == port || (slot < 0 && !b->arrival_port[i]))
			slot = i;
	if (slot >= 0 && b->arrival_port[slot] != port) {
		b->arrival_port[slot] = port;
		b->arrival_bps[slot] = 0;
		b->window_s[slot] = 0;
		b->window_ns[slot] = 0;
	}
	return slot;
}

/* The arrival rate of @fl's latest epoch that measured it (0: none). */
static double last_arrival(struct daemon_buffer *b, int slot, const struct flow *fl,
			   double now_bps)
{
	if (slot < 0)
		return now_bps;
	if (fl->inputs.traffic.counts_valid)
		b->arrival_bps[slot] = now_bps;
	return b->arrival_bps[slot];
}

/*
 * The off-CPU windows the model does not know of, from what overflowed:
 * an epoch's rcvbuf drop episodes of M datagrams on average, at a queue of
 * K datagrams and arrivals at lambda, were windows of at least (K + M) /
 * lambda (the queue filled, then M more came). K is the least the socket
 * had in the epoch: a size set since (the model's own answer to these
 * drops) would make the window look longer than it was, and the next
 * size larger again. The longest such window is
 * kept, decaying with DAEMON_BUFFER_WINDOW_TAU_S, and the socket stage is
 * given windows at least that long (P = 2 D: a window at most every other
 * window's length). Other work on the receiver's CPU than CPU-bound tasks
 * (short-lived tasks, kernel threads, a busy neighbour's bursts) opens
 * such windows too: on the shared test VM a receiver with no CPU-bound
 * task beside it overflowed 12-datagram queues at 2300 datagrams a second.
 */
static void observed_window(struct daemon_buffer *b, int slot, const struct flow *fl,
			    const struct rxb_epoch *e, struct buffer_flow *bf)
{
	const struct rxb_sock_meas *m = rxb_epoch_sock(e, fl->port);
	struct buffer_sock *x = (struct buffer_sock *)buffer_port_sock(&b->set, fl->port);
	struct rxb_stage_inputs *sb;
	uint32_t least = x ? buffer_take_min(x) : 0;
	double lam = bf->arrival_bps / (8.0 * bf->xfer.payload_bytes), d;

	if (slot < 0 || !e)
		return;
	if (b->window_ns[slot] && e->end_ns > b->window_ns[slot])
		b->window_s[slot] *= exp(-(double)(e->end_ns - b->window_ns[slot]) / 1e9 /
					 DAEMON_BUFFER_WINDOW_TAU_S);
	b->window_ns[slot] = e->end_ns;
	if (m && m->reasons_valid && m->drop_episodes && x && x->truesize_bytes > 0) {
		d = buffer_overflow_window_s(floor(least / x->truesize_bytes),
					     (double)m->drops_rcvbuf, (double)m->drop_episodes, lam);
		if (d > b->window_s[slot])
			b->window_s[slot] = d;
	}
	if (!bf->have_model || !bf->nstages)
		return;
	sb = &bf->stages[bf->nstages - 1];
	if (b->window_s[slot] > sb->vacation_s) {
		sb->vacation_s = b->window_s[slot];
		sb->vacation_period_s = 2.0 * sb->vacation_s;
	}
}

void daemon_buffer_after_epoch(struct daemon_buffer *b, struct flows *f,
			       const struct rxb_epoch *e)
{
	if (b->set.p.mode == BUFFER_OFF)
		return;
	b->epoch = e ? e->seq : b->epoch;
	for (int i = 0; i < f->n; i++) {
		const struct flow *fl = &f->v[i];
		struct buffer_flow bf;
		struct rxbneck_buffer adv;
		int err;

		int slot = flow_slot(b, fl->port);

		daemon_buffer_flow_of(fl, e, b->tick_ns, &bf);
		bf.arrival_bps = last_arrival(b, slot, fl, bf.arrival_bps);
		observed_window(b, slot, fl, e, &bf);
		err = buffer_model_update(&b->set, &bf, false);
		if (err && err != -ENODATA)
			rxb_debug("buffer: port %u: model sizing failed: %s", fl->port,
				  strerror(-err));
		if (b->ops.publish && daemon_buffer_advice(b, fl->port, &adv))
			b->ops.publish(b->ops.ctx, &adv);
	}
}
