// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckd's event loop and life cycle. See daemon.h and docs/daemon.md. */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "daemon/collect/collect.h"
#include "daemon/collect/procfs.h"
#include "daemon/serve/status.h"

#define MAX_EVENTS		64
#define MAX_WAIT_MS		1000	/* wake at least this often */
#define STATE_SAVE_NS		(60 * RXB_NSEC_PER_SEC)
#define STATUS_MIN_NS		(5 * RXB_NSEC_PER_SEC)	/* STATUS= at most this often */
/*
 * While a flow waits for its first pause schedule: how often the receivers'
 * preemptions are read within the epoch. A window is ~8 ms at two hogs;
 * a schedule this much late costs about a window of the blast. Only while
 * a sender of such a flow is connected: ~100 wake-ups a second.
 */
#define RX_EARLY_NS		(10 * RXB_NSEC_PER_MSEC)

enum tag {
	TAG_SIGNAL = 1,
	TAG_TIMER,
	TAG_SENDSRV,
	TAG_CTLSRV,
	TAG_RXRING,
};

static uint64_t pack(enum tag t, int fd)
{
	return (uint64_t)t << 32 | (uint32_t)fd;
}

/* ------------------------------------------------------ epoll plumbing -- */

static int ep_ctl(struct daemon *d, int op, enum tag t, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = pack(t, fd) };

	if (epoll_ctl(d->epfd, op, fd, &ev)) {
		int err = errno;

		rxb_log_errno(RXB_LOG_WARNING, err, "epoll_ctl(%s, fd %d)",
			      op == EPOLL_CTL_ADD ? "add" : op == EPOLL_CTL_MOD ? "mod" : "del",
			      fd);
		return -err;
	}
	return 0;
}

static int ss_add(void *ctx, int fd, uint32_t ev)
{
	return ep_ctl(ctx, EPOLL_CTL_ADD, TAG_SENDSRV, fd, ev);
}

static int ss_mod(void *ctx, int fd, uint32_t ev)
{
	return ep_ctl(ctx, EPOLL_CTL_MOD, TAG_SENDSRV, fd, ev);
}

static void any_del(void *ctx, int fd)
{
	struct daemon *d = ctx;

	/* A closed fd leaves epoll by itself; ENOENT/EBADF are harmless. */
	if (epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL) && errno != ENOENT && errno != EBADF)
		rxb_log_errno(RXB_LOG_WARNING, errno, "epoll_ctl(del, fd %d)", fd);
}

static int cs_add(void *ctx, int fd, uint32_t ev)
{
	return ep_ctl(ctx, EPOLL_CTL_ADD, TAG_CTLSRV, fd, ev);
}

static int cs_mod(void *ctx, int fd, uint32_t ev)
{
	return ep_ctl(ctx, EPOLL_CTL_MOD, TAG_CTLSRV, fd, ev);
}

/*
 * Put the collector's preemption ring in the epoll set (wake on its next
 * event) or take it out. When it cannot be added, rx_early() looks on the
 * RX_EARLY_NS timer instead, until the collector is restarted.
 */
static void rx_ring_watch(struct daemon *d, bool on)
{
	int fd;

	if (!on) {
		if (d->rx_ring_fd >= 0)
			any_del(d, d->rx_ring_fd);
		d->rx_ring_fd = -1;
		return;
	}
	if (d->rx_ring_fd >= 0 || d->rx_ring_failed || !d->col)
		return;
	fd = collect_rx_preempts_fd(d->col);
	if (fd == -ENOENT) {
		/* No scheduler probe: no preemptions to look at until a restart. */
		d->rx_ring_failed = true;
		d->rx_early_due_ns = UINT64_MAX;
		return;
	}
	if (fd < 0 || ep_ctl(d, EPOLL_CTL_ADD, TAG_RXRING, fd, EPOLLIN)) {
		if (fd < 0)
			rxb_log_errno(RXB_LOG_WARNING, -fd, "receiver preemption ring: no "
				      "descriptor to wait on; looking every %d ms instead",
				      (int)(RX_EARLY_NS / RXB_NSEC_PER_MSEC));
		d->rx_ring_failed = true;
		return;
	}
	d->rx_ring_fd = fd;
}

/* ------------------------------------------------------------- helpers -- */

static void flows_params_from(const struct daemon *d, const struct rxb_config *cfg,
			      struct flows_params *p)
{
	memset(p, 0, sizeof(*p));
	p->irq_time_accounting = d->irq_time_accounting;
	p->payload_bytes = cfg->model.payload_bytes;
	p->file_bytes = (double)cfg->model.default_file_bytes;
	p->one_way_delay_s = cfg->model.default_one_way_delay_ms / 1e3;
	p->line_rate_bps = (double)cfg->model.line_rate_bps;
	p->min_rate_bps = (double)cfg->model.min_rate_bps;
	p->sweep_points = cfg->model.sweep_points;
	p->rule = cfg->model.batch_rule;
	p->rounds = (enum bneck_rounds)cfg->model.rounds;
	p->loss_episodes = cfg->model.loss_episodes == 1;
	p->depth_cost = cfg->model.queue_depth_cost;
	p->rate_uncertainty = cfg->model.rate_uncertainty == 1;
	p->fallback_rx_ring = cfg->measure.fallback_rx_ring;
	p->pause.enabled = cfg->pause.enabled;
	p->pause.min_window_ns = (uint64_t)cfg->pause.min_window_us * RXB_NSEC_PER_USEC;
	p->pause.max_window_ns = (uint64_t)cfg->pause.max_window_ms * RXB_NSEC_PER_MSEC;
	p->pause.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
}

static enum collect_attach attach_of(enum rxb_attach_mode m)
{
	switch (m) {
	case RXB_ATTACH_TP_BTF:
		return COLLECT_ATTACH_TP_BTF;
	case RXB_ATTACH_RAW_TP:
		return COLLECT_ATTACH_RAW_TP;
	case RXB_ATTACH_NONE:
		return COLLECT_ATTACH_NONE;
	case RXB_ATTACH_AUTO:
		break;
	}
	return COLLECT_ATTACH_AUTO;
}

static int collector_start(struct daemon *d, const struct rxb_config *cfg,
			   struct collect **out)
{
	struct collect_opts o = COLLECT_OPTS_DEFAULT;
	uint16_t ports[FLOWS_MAX];
	int err;

	o.nports = flows_ports(&d->flows, ports);
	o.ports = ports;
	/* attach is a restart key: the collector keeps the one it started with. */
	o.attach = attach_of(d->started.measure.attach);
	o.devices = (const char (*)[RXB_IFNAME_LEN])cfg->measure.devices.name;
	o.ndevices = cfg->measure.devices.n;
	o.fallback_rx_ring = cfg->measure.fallback_rx_ring;
	o.fallback_rx_max_frames = cfg->measure.fallback_rx_max_frames;
	o.fallback_rx_usecs = cfg->measure.fallback_rx_usecs;
	o.bpf_stats = cfg->measure.bpf_stats;
	_Static_assert(COLLECT_MAX_NET_PROBE_EVERY == 3600,
		       "[measure] net_probe_every's bound in config.c");
	o.net_probe_every = netplan_every(&d->netplan, rxb_mono_ns());
	err = collect_init(out, &o);
	if (err)
		rxb_log_errno(RXB_LOG_ERR, -err, "starting the measurement collector");
	return err;
}

static void netplan_params_from(const struct rxb_config *cfg, struct netplan_params *p)
{
	p->steady_every = cfg->measure.net_probe_every;
	p->learn_ns = (uint64_t)cfg->measure.net_probe_learn_s * RXB_NSEC_PER_SEC;
}

/* A flow's receive path as netplan compares it: stage B's placement and load. */
static struct netplan_obs flow_obs(const struct flow *fl)
{
	const struct mi_stage_b *b = &fl->inputs.b;
	struct netplan_obs o = { .port = fl->port, .cpu = -1,
				 .cpu_bound = NAN, .io_bound = NAN };
	double top = 0;

	if (!b->present)
		return o;
	for (int i = 0; i < b->ncpus && i < MI_MAX_CPUS; i++)
		if (b->cpu_share[i] > top) {
			top = b->cpu_share[i];
			o.cpu = b->cpu[i];
		}
	o.cpu_bound = b->cpu_bound.v;
	o.io_bound = b->io_bound.v;
	return o;
}

/*
 * Learn, then sample (netplan.h): after this epoch, attach the per-packet
 * probes in every epoch while the flows' receive paths are being learned,
 * one epoch in [measure] net_probe_every otherwise.
 */
static void plan_probes(struct daemon *d)
{
	_Static_assert(NETPLAN_MAX_FLOWS >= FLOWS_MAX, "netplan sees every flow");
	struct netplan_obs obs[FLOWS_MAX];
	uint64_t now = d->epoch->end_ns;
	uint32_t every;
	int err;

	for (int i = 0; i < d->flows.n; i++)
		obs[i] = flow_obs(&d->flows.v[i]);
	if (netplan_epoch(&d->netplan, now, obs, d->flows.n) && d->netplan.p.learn_ns)
		rxb_info("per-packet probes: every epoch for %u s (%s)",
			 d->cfg.measure.net_probe_learn_s, d->netplan.why);
	every = netplan_every(&d->netplan, now);
	if (every == d->net_every_now || !d->col)
		return;
	err = collect_set_net_probe_every(d->col, every);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "collector: per-packet probes one epoch in %u",
			      every);
		return;
	}
	if (every > 1)
		rxb_info("per-packet probes: one epoch in %u (receive paths learned)", every);
	d->net_every_now = every;
}

/* Tell the collector which ports to watch when the flows changed. */
static void sync_ports(struct daemon *d)
{
	uint16_t ports[FLOWS_MAX];
	int n, err;

	if (!d->flows.ports_changed || !d->col)
		return;
	n = flows_ports(&d->flows, ports);
	err = collect_set_ports(d->col, ports, n);
	if (err)
		rxb_log_errno(RXB_LOG_WARNING, -err, "collector: watching %d ports", n);
	else
		rxb_debug("collector: watching %d ports", n);
}

static int arm_timer(struct daemon *d, uint32_t interval_ms)
{
	struct itimerspec its = {
		.it_interval = {
			.tv_sec = interval_ms / 1000,
			.tv_nsec = (long)(interval_ms % 1000) * 1000000L,
		},
	};

	its.it_value = its.it_interval;
	if (timerfd_settime(d->tfd, 0, &its, NULL)) {
		int err = errno;

		rxb_log_errno(RXB_LOG_ERR, err, "arming the epoch timer (%u ms)", interval_ms);
		return -err;
	}
	return 0;
}

/* ------------------------------------------------------------- senders -- */

static int on_hello(void *ctx, const struct sendsrv_peer *p)
{
	struct daemon *d = ctx;
	int err = flows_sender_hello(&d->flows, p);

	if (err == -ENOSPC) {
		rxb_notice("sender %s: flow port %u refused: already watching %d ports",
			   p->addr_str, p->hello.flow_port, FLOWS_MAX);
		return RXBNECK_ERR_REFUSED;
	}
	rxb_info("sender %s ('%s') for %s port %u: payload %u B, file %llu B, RTT %u us",
		 p->addr_str, p->hello.name, p->hello.flow_proto == 6 ? "TCP" : "UDP",
		 p->hello.flow_port, p->hello.payload_bytes,
		 (unsigned long long)p->hello.file_bytes, p->hello.rtt_us);
	sync_ports(d);
	return 0;
}

static void on_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	struct daemon *d = ctx;

	rxb_info("sender %s for port %u left (%s)", p->addr_str, p->hello.flow_port,
		 why == SENDSRV_GONE_BYE ? "bye" : why == SENDSRV_GONE_EOF ? "closed" :
		 why == SENDSRV_GONE_PEER_ERROR ? "it sent an error" :
		 why == SENDSRV_GONE_SHUTDOWN ? "shutdown" : rxbneck_error_name((unsigned)why));
	flows_sender_gone(&d->flows, p);
	if (!d->stop)
		sync_ports(d);
}

static void on_report(void *ctx, const struct sendsrv_peer *p,
		      const struct rxbneck_report *r)
{
	struct daemon *d = ctx;
	struct flow *fl = flows_find(&d->flows, r->port);

	rxb_info("sender %s: transfer on port %u %s: %llu B in %.3f s at %.1f Mb/s, "
		 "%u rounds, %llu of %llu packets resent",
		 p->addr_str, r->port, r->flags & RXBNECK_REPORT_ABORTED ? "aborted" : "done",
		 (unsigned long long)r->file_bytes, r->elapsed_us / 1e6, r->rate_bps / 1e6,
		 r->rounds, (unsigned long long)r->pkts_resent,
		 (unsigned long long)r->pkts_sent);
	if (fl)
		flows_note_report(&d->flows, fl, r);
}

static void seen_sender(void *arg, const struct sendsrv_peer *p)
{
	flows_sender_seen(arg, p);
}

static int publish_rate(void *ctx, const struct rxbneck_rate *r,
			const struct rxbneck_rate *between)
{
	struct daemon *d = ctx;

	return d->ss ? sendsrv_publish_rate(d->ss, r, between) : 0;
}

static int publish_pause(void *ctx, const struct rxbneck_pause *p)
{
	struct daemon *d = ctx;

	return d->ss ? sendsrv_publish_pause(d->ss, p) : 0;
}

/* ------------------------------------------------------------- history -- */

static bool history_get(void *ctx, uint16_t port, struct mi_learn *out)
{
	struct daemon *d = ctx;

	return d->state_ok && state_history_get(&d->state, port, out);
}

static void history_put(void *ctx, uint16_t port, const struct mi_learn *l)
{
	struct daemon *d = ctx;

	if (d->state_ok && l->origin == MI_SRC_MEASURED)
		state_history_put(&d->state, port, l);
}

/*
 * What the flows learned in this run, to disk every STATE_SAVE_NS (and at
 * exit through flows_finish() and state_close()).
 */
static void save_state(struct daemon *d)
{
	uint64_t now = rxb_mono_ns();

	if (!d->state_ok || now - d->state_saved_ns < STATE_SAVE_NS)
		return;
	d->state_saved_ns = now;
	for (int i = 0; i < d->flows.n; i++)
		history_put(d, d->flows.v[i].port, &d->flows.v[i].learn);
	state_save(&d->state);
}

/* ------------------------------------------------------------- epochs -- */

static void notify_status(struct daemon *d, bool force)
{
	char line[sizeof(d->status_line)];
	const struct flow *best = NULL;
	struct sendsrv_stats st;
	uint64_t now = rxb_mono_ns();
	size_t len;

	if (!notify_enabled(&d->notify))
		return;
	sendsrv_stats(d->ss, &st);
	for (int i = 0; i < d->flows.n; i++)
		if (d->flows.v[i].has_rate && (!best || d->flows.v[i].nsenders > best->nsenders))
			best = &d->flows.v[i];
	len = (size_t)snprintf(line, sizeof(line), "epoch %llu; %d flows; %u senders",
			       (unsigned long long)d->epochs, d->flows.n, st.conns_active);
	if (best && len < sizeof(line))
		snprintf(line + len, sizeof(line) - len, "; port %u: %.1f Mb/s (%s)",
			 best->port, best->rate.rate_bps / 1e6, flows_state_name(best->state));
	if (d->have_epoch && d->epoch->degraded && strlen(line) + 12 < sizeof(line))
		strcat(line, "; degraded");
	/* At most every STATUS_MIN_NS, and only when something changed. */
	if (!force && (now - d->status_sent_ns < STATUS_MIN_NS || !strcmp(line, d->status_line)))
		return;
	rxb_strlcpy(d->status_line, line, sizeof(d->status_line));
	d->status_sent_ns = now;
	notify_sendf(&d->notify, "STATUS=%s", line);
}

static void on_epoch(struct daemon *d)
{
	uint64_t expirations, t0, t1;
	ssize_t n = read(d->tfd, &expirations, sizeof(expirations));
	int err;

	if (n != sizeof(expirations)) {
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			rxb_log_errno(RXB_LOG_WARNING, errno, "reading the epoch timer");
		return;
	}
	if (expirations > 1) {
		d->overruns += expirations - 1;
		rxb_notice("epoch %llu: %llu epochs late (the loop was busy)",
			   (unsigned long long)d->epochs + 1,
			   (unsigned long long)(expirations - 1));
	}
	t0 = rxb_mono_ns();
	err = collect_epoch(d->col, d->epoch);
	t1 = rxb_mono_ns();
	d->collect_ms = (double)(t1 - t0) / 1e6;
	if (err)
		rxb_log_errno(RXB_LOG_WARNING, -err, "epoch %llu: nothing could be measured (%s)",
			      (unsigned long long)d->epoch->seq, d->epoch->degraded_reason);
	d->have_epoch = true;
	d->epochs++;
	d->netdev_max_backlog = procfs_read_netdev_max_backlog();
	sendsrv_foreach_sender(d->ss, seen_sender, &d->flows);
	flows_epoch(&d->flows, d->epoch, d->netdev_max_backlog);
	sync_ports(d);
	plan_probes(d);
	d->epoch_ms_spent = (double)(rxb_mono_ns() - t0) / 1e6;
	rxb_debug("epoch %llu: collect %.2f ms, model %.2f ms, %d flows",
		  (unsigned long long)d->epoch->seq, d->collect_ms, d->flows.last_solve_ms,
		  d->flows.n);
	save_state(d);
	notify_status(d, false);
}

/* ------------------------------------------------------------- reload -- */

/* Keys whose new value is applied while running. */
static bool live_key(const struct config_key *k)
{
	static const char *const live[][2] = {
		{ "daemon", "log_level" },
		{ "measure", "interval_ms" }, { "measure", "watch_ports" },
		{ "measure", "bpf_stats" }, { "measure", "devices" },
		{ "measure", "fallback_rx_ring" }, { "measure", "fallback_rx_max_frames" },
		{ "measure", "fallback_rx_usecs" }, { "measure", "net_probe_every" },
		{ "measure", "net_probe_learn_s" },
		{ "model", NULL },
		{ "control", "allow" }, { "control", "rate_change_fraction" },
		{ "control", "push_every_epochs" },
		{ "pause", NULL },
	};

	if (k->reload == CONFIG_RELOAD_RESTART)
		return false;
	for (size_t i = 0; i < RXB_ARRAY_SIZE(live); i++)
		if (!strcmp(live[i][0], k->section) &&
		    (!live[i][1] || !strcmp(live[i][1], k->key)))
			return true;
	return false;
}

struct diff_ctx {
	struct daemon *d;
	struct daemon_reload *r;
	size_t len;
	bool collector;		/* a key the collector was started with */
};

static void log_change(void *arg, const struct config_key *k, const char *old_val,
		       const char *new_val)
{
	struct diff_ctx *c = arg;
	bool live = live_key(k);
	int n;

	rxb_notice("reload: [%s] %s: '%s' -> '%s'%s", k->section, k->key, old_val,
		   new_val, live ? "" : " (takes effect at restart)");
	/* The keys the collector is not started with (net_probe_every is:
	 * netplan's answer may change at once). */
	if (!strcmp(k->section, "measure") && live && strcmp(k->key, "interval_ms") &&
	    strcmp(k->key, "watch_ports") && strcmp(k->key, "net_probe_learn_s"))
		c->collector = true;
	if (!live && c->r->nrestart < DAEMON_MAX_CHANGES)
		snprintf(c->r->restart[c->r->nrestart++], sizeof(c->r->restart[0]),
			 "[%s] %s", k->section, k->key);
	if (c->len < sizeof(c->r->msg)) {
		n = snprintf(c->r->msg + c->len, sizeof(c->r->msg) - c->len, "%s[%s] %s",
			     c->len ? ", " : "", k->section, k->key);
		if (n > 0)
			c->len += (size_t)n;
	}
}

static void reload_failed(struct daemon *d, const char *why)
{
	d->reload.ok = false;
	d->reload.failures++;
	rxb_strlcpy(d->reload.msg, why, sizeof(d->reload.msg));
	rxb_err("reload failed, keeping the running configuration: %s", why);
	notify_sendf(&d->notify, "STATUS=reload failed: %.200s", why);
}

/* Apply @next's live keys; nothing changes when it returns an error. */
static int apply_config(struct daemon *d, const struct rxb_config *next, bool collector,
			char *why, size_t wlen)
{
	struct flows_params p, old_p = d->flows.p;
	struct netplan_params np, old_np = d->netplan.p;
	struct sendsrv_limits lim;
	struct collect *col = NULL;
	int err;

	netplan_params_from(next, &np);
	err = netplan_set_params(&d->netplan, &np);
	if (err) {
		snprintf(why, wlen, "[measure] net_probe_every: %s", strerror(-err));
		return err;
	}
	flows_params_from(d, next, &p);
	err = flows_set_params(&d->flows, &p);
	if (err) {
		snprintf(why, wlen, "[model]: %s", strerror(-err));
		netplan_set_params(&d->netplan, &old_np);	/* cannot fail: was in use */
		return err;
	}
	err = flows_set_config_ports(&d->flows, next->measure.watch_ports.port,
				     next->measure.watch_ports.n);
	if (err) {
		snprintf(why, wlen, "[measure] watch_ports: with the ports senders use, "
			 "more than %d flows", FLOWS_MAX);
		flows_set_params(&d->flows, &old_p);	/* cannot fail: same size */
		netplan_set_params(&d->netplan, &old_np);
		return err;
	}
	if (collector) {
		err = collector_start(d, next, &col);
		if (err) {
			snprintf(why, wlen, "restarting the collector: %s", strerror(-err));
			flows_set_params(&d->flows, &old_p);
			netplan_set_params(&d->netplan, &old_np);
			flows_set_config_ports(&d->flows, d->cfg.measure.watch_ports.port,
					       d->cfg.measure.watch_ports.n);
			return err;
		}
		rx_ring_watch(d, false);
		d->rx_ring_failed = false;
		d->rx_early_due_ns = 0;
		collect_finish(d->col);
		d->col = col;
		d->net_every_now = netplan_every(&d->netplan, rxb_mono_ns());
		rxb_notice("reload: collector restarted with the new [measure] settings");
	}
	sync_ports(d);
	if (next->measure.interval_ms != d->cfg.measure.interval_ms)
		arm_timer(d, next->measure.interval_ms);
	config_sendsrv_limits(next, &lim);
	if (sendsrv_update_limits(d->ss, &lim))
		rxb_warn("reload: the control server refused the new limits");
	rxb_log_set_level(next->daemon.log_level);
	return 0;
}

int daemon_reload(struct daemon *d)
{
	struct rxb_config next;
	struct diff_ctx dc = { .d = d, .r = &d->reload };
	char err_msg[DAEMON_RELOAD_MSG_LEN];
	int err, changed;

	d->reload.count++;
	d->reload.at_unix_s = rxb_wall_s();
	notify_send(&d->notify, "RELOADING=1");
	err = config_load(d->config_path, &next, err_msg, sizeof(err_msg));
	if (err) {
		reload_failed(d, err_msg);
		notify_send(&d->notify, "READY=1");
		return err;
	}
	d->reload.nrestart = 0;
	d->reload.msg[0] = '\0';
	changed = config_diff(&d->cfg, &next, log_change, &dc);
	err = apply_config(d, &next, dc.collector, err_msg, sizeof(err_msg));
	if (err) {
		d->reload.nrestart = 0;
		reload_failed(d, err_msg);
		notify_send(&d->notify, "READY=1");
		return err;
	}
	d->cfg = next;
	d->reload.ok = true;
	if (!changed)
		rxb_strlcpy(d->reload.msg, "nothing changed", sizeof(d->reload.msg));
	rxb_notice("reload of %s: %d keys changed%s", d->config_path, changed,
		   d->reload.nrestart ? "; some take effect at restart" : "");
	notify_send(&d->notify, "READY=1");
	notify_status(d, true);
	return 0;
}

/* ------------------------------------------------------------- signals -- */

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;
	ssize_t n;

	while ((n = read(d->sigfd, &si, sizeof(si))) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			rxb_notice("%s from pid %u: stopping", strsignal((int)si.ssi_signo),
				   si.ssi_pid);
			d->stop = true;
			break;
		case SIGHUP:
			rxb_notice("SIGHUP from pid %u: reloading %s", si.ssi_pid,
				   d->config_path);
			daemon_reload(d);
			break;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		rxb_log_errno(RXB_LOG_WARNING, errno, "reading signals");
}

static int setup_signals(struct daemon *d)
{
	sigset_t set;

	/* SIGPIPE: every send uses MSG_NOSIGNAL, but be sure. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sigfd < 0)
		return -errno;
	return ep_ctl(d, EPOLL_CTL_ADD, TAG_SIGNAL, d->sigfd, EPOLLIN);
}

/* --------------------------------------------------------------- ctl -- */

static void ctl_request(void *ctx, const struct ctl_request *req, struct ctl_reply *rep)
{
	struct daemon *d = ctx;

	status_dispatch(d, req, rep);
}

/* ----------------------------------------------------------- life cycle -- */

static int make_runtime_dir(const char *dir)
{
	if (mkdir(dir, 0755) && errno != EEXIST) {
		int err = errno;

		rxb_log_errno(RXB_LOG_ERR, err, "creating the runtime directory %s", dir);
		return -err;
	}
	return 0;
}

static int start_sendsrv(struct daemon *d)
{
	const struct rxb_config *cfg = &d->cfg;
	struct sendsrv_limits lim;
	struct sendsrv_ops ops = {
		.ctx = d,
		.fd_add = ss_add,
		.fd_mod = ss_mod,
		.fd_del = any_del,
		.on_hello = on_hello,
		.on_report = on_report,
		.on_goodbye = on_goodbye,
	};
	int err;

	config_sendsrv_limits(cfg, &lim);
	err = sendsrv_init(&d->ss, &lim, &ops);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "starting the sender control server");
		return err;
	}
	for (int i = 0; i < cfg->control.listen_address.n; i++) {
		err = sendsrv_listen(d->ss, cfg->control.listen_address.addr[i],
				     cfg->control.port, &d->sendsrv_port);
		if (err)
			return err;	/* sendsrv logged it */
	}
	rxb_info("sender control server on port %u (%d addresses)", d->sendsrv_port,
		 cfg->control.listen_address.n);
	return 0;
}

static int start_ctlsrv(struct daemon *d)
{
	const struct rxb_config *cfg = &d->cfg;
	struct ctlsrv_opts o = {
		.path = cfg->daemon.ctl_socket,
		.mode = cfg->daemon.ctl_socket_mode,
		.gid = cfg->daemon.ctl_group.name[0] ? cfg->daemon.ctl_group.gid : (gid_t)-1,
	};
	struct ctlsrv_ops ops = {
		.ctx = d,
		.fd_add = cs_add,
		.fd_mod = cs_mod,
		.fd_del = any_del,
		.request = ctl_request,
	};
	int err = ctlsrv_init(&d->cs, &o, &ops);

	if (!err)
		rxb_info("rxbneckctl socket %s (mode %04o%s%s)", o.path, o.mode,
			 o.gid != (gid_t)-1 ? ", group " : "",
			 o.gid != (gid_t)-1 ? cfg->daemon.ctl_group.name : "");
	return err;
}

static int start_flows(struct daemon *d)
{
	struct flows_params p;
	struct flows_ops ops = {
		.ctx = d,
		.publish_rate = publish_rate,
		.publish_pause = publish_pause,
		.history_get = history_get,
		.history_put = history_put,
	};
	int err;

	flows_params_from(d, &d->cfg, &p);
	err = flows_init(&d->flows, &p, &ops);
	if (!err)
		err = flows_set_config_ports(&d->flows, d->cfg.measure.watch_ports.port,
					     d->cfg.measure.watch_ports.n);
	if (err)
		rxb_log_errno(RXB_LOG_ERR, -err, "setting up the flows");
	return err;
}

static int start_loop(struct daemon *d)
{
	int err;

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, -err, "epoll_create1");
		return err;
	}
	err = setup_signals(d);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "setting up signals");
		return err;
	}
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->tfd < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, -err, "timerfd_create");
		return err;
	}
	return ep_ctl(d, EPOLL_CTL_ADD, TAG_TIMER, d->tfd, EPOLLIN);
}

int daemon_init(struct daemon *d, const char *config_path)
{
	char err_msg[DAEMON_RELOAD_MSG_LEN];
	struct netplan_params np;
	int err;

	memset(d, 0, sizeof(*d));
	d->epfd = d->sigfd = d->tfd = d->rx_ring_fd = -1;
	d->state.dirfd = -1;
	d->started_ns = rxb_mono_ns();
	d->started_unix_s = rxb_wall_s();
	if (rxb_strlcpy(d->config_path, config_path, sizeof(d->config_path)) >=
	    sizeof(d->config_path)) {
		rxb_err("%s: configuration path too long", config_path);
		return -ENAMETOOLONG;
	}
	err = config_load(config_path, &d->cfg, err_msg, sizeof(err_msg));
	if (err) {
		rxb_err("%s", err_msg);
		return err;
	}
	d->started = d->cfg;
	rxb_log_set_level(d->cfg.daemon.log_level);
	netplan_params_from(&d->cfg, &np);
	err = netplan_init(&d->netplan, &np);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "[measure] net_probe_every");
		return err;
	}
	/*
	 * Whether the kernel charges interrupt time to the task it interrupts
	 * (the receiver's measured CPU time then holds the softirq work done
	 * on its CPU, docs/model.md): its configuration says.
	 */
	d->irq_time_accounting = procfs_read_kconfig("IRQ_TIME_ACCOUNTING");
	if (d->irq_time_accounting < 0)
		rxb_warn("kernel configuration not readable (/boot/config-*, /proc/config.gz): "
			 "interrupt time in the receiver's CPU time not corrected");
	d->epoch = calloc(1, sizeof(*d->epoch));
	if (!d->epoch) {
		daemon_finish(d);
		return -ENOMEM;
	}
	err = notify_init(&d->notify);
	if (!err)
		err = start_loop(d);
	if (!err) {
		d->state_ok = state_open(&d->state, d->cfg.daemon.state_dir) == 0;
		err = start_flows(d);
	}
	if (!err)
		err = make_runtime_dir(d->cfg.daemon.runtime_dir);
	if (!err)
		err = start_sendsrv(d);
	if (!err)
		err = start_ctlsrv(d);
	if (!err)
		err = collector_start(d, &d->cfg, &d->col);
	if (!err)
		d->net_every_now = netplan_every(&d->netplan, rxb_mono_ns());
	if (!err)
		err = arm_timer(d, d->cfg.measure.interval_ms);
	if (err) {
		daemon_finish(d);
		return err;
	}
	d->netdev_max_backlog = procfs_read_netdev_max_backlog();
	rxb_notice("rxbneckd %s ready: config %s, epoch %u ms, %d watched ports",
		   RXB_VERSION, config_path, d->cfg.measure.interval_ms, d->flows.n);
	notify_sendf(&d->notify, "READY=1\nSTATUS=ready, first epoch in %u ms\nMAINPID=%d",
		     d->cfg.measure.interval_ms, (int)getpid());
	return 0;
}

static int wait_ms(struct daemon *d)
{
	uint64_t now = rxb_mono_ns(), t = sendsrv_next_deadline_ns(d->ss);
	uint64_t u = ctlsrv_next_deadline_ns(d->cs), w = notify_watchdog_due_ns(&d->notify);
	uint64_t p = collect_poll_due_ns(d->col);

	if (u < t)
		t = u;
	if (w < t)
		t = w;
	if (p < t)
		t = p;
	if (d->have_epoch && d->rx_ring_fd < 0 && flows_rx_early_ns(&d->flows, RX_EARLY_NS) &&
	    d->rx_early_due_ns < t)
		t = d->rx_early_due_ns;
	if (t <= now)
		return 0;
	t = (t - now + RXB_NSEC_PER_MSEC - 1) / RXB_NSEC_PER_MSEC;
	return t > MAX_WAIT_MS ? MAX_WAIT_MS : (int)t;
}

static void dispatch(struct daemon *d, const struct epoll_event *ev)
{
	int fd = (int)(uint32_t)ev->data.u64;

	switch ((enum tag)(ev->data.u64 >> 32)) {
	case TAG_SIGNAL:
		on_signal(d);
		break;
	case TAG_TIMER:
		on_epoch(d);
		break;
	case TAG_SENDSRV:
		sendsrv_handle(d->ss, fd, ev->events);
		break;
	case TAG_CTLSRV:
		ctlsrv_handle(d->cs, fd, ev->events);
		break;
	case TAG_RXRING:
		break;	/* rx_early() drains it after the dispatch */
	}
}

/*
 * Within an epoch, a flow that waits for its first pause schedule, or whose
 * schedule may have lost its phase (flows_rx_early_ns()). The daemon sleeps
 * on the preemption ring until the first event comes, then looks at most
 * once per RX_EARLY_NS (once per period with a schedule out) while events
 * keep coming. Looking every RX_EARLY_NS instead cost a sender on a
 * receiver that is never preempted 108 daemon wake-ups a second against 11
 * without a sender, and 0.37 % of a CPU; sleeping on the ring, 15 and
 * nothing measurable (bench/rx_early.sh).
 */
static void rx_early(struct daemon *d, uint64_t now)
{
	const struct rxb_rx_preempt *ev;
	uint64_t every = d->col && d->have_epoch ? flows_rx_early_ns(&d->flows, RX_EARLY_NS) : 0;
	size_t n;

	if (every && now >= d->rx_early_due_ns) {
		n = collect_rx_preempts_early(d->col, &ev);
		if (n)
			flows_rx_early(&d->flows, ev, n);
		every = flows_rx_early_ns(&d->flows, RX_EARLY_NS);
		if (n || d->rx_ring_failed)
			d->rx_early_due_ns = now + every;
	}
	rx_ring_watch(d, every && now >= d->rx_early_due_ns);
}

int daemon_run(struct daemon *d)
{
	struct epoll_event evs[MAX_EVENTS];

	while (!d->stop) {
		int n = epoll_wait(d->epfd, evs, MAX_EVENTS, wait_ms(d));
		uint64_t now;

		if (n < 0 && errno != EINTR) {
			int err = errno;

			rxb_log_errno(RXB_LOG_ERR, err, "epoll_wait");
			return -err;
		}
		for (int i = 0; i < n && !d->stop; i++)
			dispatch(d, &evs[i]);
		now = rxb_mono_ns();
		if (d->col)
			collect_poll(d->col, now);
		rx_early(d, now);
		sendsrv_tick(d->ss, now);
		ctlsrv_tick(d->cs, now);
		notify_watchdog(&d->notify, now);
	}
	return 0;
}

void daemon_finish(struct daemon *d)
{
	notify_send(&d->notify, "STOPPING=1\nSTATUS=stopping");
	if (d->ss)
		sendsrv_finish(d->ss);	/* BYE to every sender; on_goodbye each */
	d->ss = NULL;
	ctlsrv_finish(d->cs);
	d->cs = NULL;
	if (d->flows.ws.curve)
		flows_finish(&d->flows);	/* hands every flow to history */
	if (d->state_ok)
		state_close(&d->state);
	d->state_ok = false;
	rx_ring_watch(d, false);
	collect_finish(d->col);
	d->col = NULL;
	netplan_finish(&d->netplan);
	free(d->epoch);
	d->epoch = NULL;
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sigfd >= 0)
		close(d->sigfd);
	if (d->epfd >= 0)
		close(d->epfd);
	d->tfd = d->sigfd = d->epfd = -1;
	notify_finish(&d->notify);
}
