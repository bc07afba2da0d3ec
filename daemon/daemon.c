// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckd's event loop and life cycle. See daemon.h and docs/daemon.md. */
#include "daemon/daemon_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/collect.h"
#include "daemon/collect/procfs.h"
#include "daemon/serve/metrics.h"
#include "daemon/collect/sockdiag.h"
#include "daemon/serve/status.h"

#define MAX_EVENTS		64
#define MAX_WAIT_MS		1000	/* wake at least this often */
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
	TAG_METRICS,
	TAG_BUFFER,
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

static int ms_add(void *ctx, int fd, uint32_t ev)
{
	return ep_ctl(ctx, EPOLL_CTL_ADD, TAG_METRICS, fd, ev);
}

/* When the ring cannot be added, rx_early() looks on the RX_EARLY_NS timer
 * instead, until the collector is restarted. */
void daemon_rx_ring_watch(struct daemon *d, bool on)
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

/* ------------------------------------------------------------- epochs -- */

int daemon_arm_timer(struct daemon *d, uint32_t interval_ms)
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

void daemon_status(struct daemon *d, bool force)
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
		if (d->flows.v[i].m[0].has_rate &&
		    (!best || d->flows.v[i].nsenders > best->nsenders))
			best = &d->flows.v[i];
	len = (size_t)snprintf(line, sizeof(line), "epoch %llu; %d flows; %u senders",
			       (unsigned long long)d->epochs, d->flows.n, st.conns_active);
	/* The busiest flow's first transfer. */
	if (best && len < sizeof(line))
		snprintf(line + len, sizeof(line) - len, "; port %u: %.1f Mb/s (%s)",
			 best->port, best->m[0].rate.rate_bps / 1e6,
			 flows_state_name(best->m[0].state));
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
	daemon_flows_epoch(d);
	metrics_totals_epoch(&d->metrics_totals, &d->flows, d->epoch);
	daemon_streams_epoch(d);
	d->epoch_ms_spent = (double)(rxb_mono_ns() - t0) / 1e6;
	rxb_debug("epoch %llu: collect %.2f ms, model %.2f ms, %d flows",
		  (unsigned long long)d->epoch->seq, d->collect_ms, d->flows.last_solve_ms,
		  d->flows.n);
	daemon_status(d, false);
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

/* ------------------------------------------------------------ metrics -- */

static void metrics_write(void *ctx, struct promtext *w)
{
	metrics_render(w, ctx);
}

/* The [metrics] endpoint, when enabled. */
static int start_metricsrv(struct daemon *d)
{
	const struct rxb_config *cfg = &d->cfg;
	struct metricsrv_opts o = {
		.port = cfg->metrics.listen.port,
		.max_conns = cfg->metrics.max_connections,
		.max_conns_per_addr = cfg->metrics.max_connections_per_address,
		.timeout_s = cfg->metrics.timeout_s,
		.n_allow = (size_t)cfg->metrics.allow.n,
	};
	struct metricsrv_ops ops = {
		.ctx = d,
		.fd_add = ms_add,
		.fd_del = any_del,
		.render = metrics_write,
	};

	if (!cfg->metrics.enabled)
		return 0;
	rxb_strlcpy(o.addr, cfg->metrics.listen.addr, sizeof(o.addr));
	memcpy(o.allow, cfg->metrics.allow.cidr, sizeof(o.allow));
	return metricsrv_init(&d->ms, &o, &ops);	/* logged */
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
		.fd_add = ss_add,
		.fd_mod = ss_mod,
		.fd_del = any_del,
	};
	int err;

	daemon_flows_sender_ops(d, &ops);
	daemon_streams_sender_ops(d, &ops);
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

/* The configuration, and what is decided from it before anything starts. */
static int load_config(struct daemon *d, const char *config_path)
{
	char err_msg[DAEMON_RELOAD_MSG_LEN];
	struct netplan_params np;
	int err;

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
	daemon_reload_netplan_params(&d->cfg, &np);
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
	return 0;
}

static int publish_buffer(void *ctx, const struct rxbneck_buffer *b)
{
	struct daemon *d = ctx;

	return d->ss ? sendsrv_publish_buffer(d->ss, b) : 0;
}

int daemon_buffer_watch(struct daemon *d)
{
	int fd = daemon_buffer_fd(&d->buf), err;

	if (fd == d->buf_fd)
		return 0;
	if (d->buf_fd >= 0)
		any_del(d, d->buf_fd);
	d->buf_fd = -1;
	if (fd < 0)
		return 0;
	err = ep_ctl(d, EPOLL_CTL_ADD, TAG_BUFFER, fd, EPOLLIN);
	if (!err)
		d->buf_fd = fd;
	return err;
}

/* [buffer]: its own timer and its BUFFER frames. */
static int start_buffer(struct daemon *d)
{
	struct daemon_buffer_cfg cfg;
	struct daemon_buffer_ops ops = { .ctx = d, .publish = publish_buffer };
	int err;

	daemon_reload_buffer_cfg(&d->cfg, &cfg);
	err = daemon_buffer_init(&d->buf, &cfg, &ops);
	return err ? err : daemon_buffer_watch(d);
}

/* Every part, in order; the first failure stops (daemon_finish() cleans up). */
static int start_parts(struct daemon *d)
{
	int err = notify_init(&d->notify);

	if (!err)
		err = start_loop(d);
	if (!err) {
		d->state_ok = state_open(&d->state, d->cfg.daemon.state_dir) == 0;
		err = daemon_flows_init(d);
	}
	if (!err)
		err = daemon_streams_init(d);
	if (!err)
		err = make_runtime_dir(d->cfg.daemon.runtime_dir);
	if (!err)
		err = start_sendsrv(d);
	if (!err)
		err = start_ctlsrv(d);
	if (!err)
		err = start_metricsrv(d);
	if (!err) {
		daemon_reload_collector_cfg(d, &d->cfg, &d->col_cfg);
		err = daemon_reload_start_collector(d, &d->col_cfg, &d->col);
	}
	if (!err)
		err = start_buffer(d);
	if (!err) {
		d->net_every_now = netplan_every(&d->netplan, rxb_mono_ns());
		err = daemon_arm_timer(d, d->cfg.measure.interval_ms);
	}
	return err;
}

int daemon_init(struct daemon *d, const char *config_path)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->epfd = d->sigfd = d->tfd = d->rx_ring_fd = d->buf_fd = -1;
	d->buf.tfd = -1;	/* daemon_finish() may run before start_buffer() */
	d->notify.fd = -1;	/* daemon_finish() may run before notify_init() */
	d->state.dirfd = -1;
	d->started_ns = rxb_mono_ns();
	d->started_unix_s = rxb_wall_s();
	metrics_totals_init(&d->metrics_totals);
	err = load_config(d, config_path);
	if (err)
		return err;
	d->epoch = calloc(1, sizeof(*d->epoch));
	err = d->epoch ? start_parts(d) : -ENOMEM;
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
	uint64_t p = collect_poll_due_ns(d->col), m = metricsrv_next_deadline_ns(d->ms);

	if (u < t)
		t = u;
	if (m < t)
		t = m;
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
	case TAG_METRICS:
		metricsrv_handle(d->ms);
		break;
	case TAG_BUFFER:
		daemon_buffer_on_timer(&d->buf, &d->flows, d->have_epoch ? d->epoch : NULL);
		break;
	}
}

/*
 * Within an epoch, a flow that waits for its first pause schedule, or whose
 * schedule may have lost its phase (flows_rx_early_ns()). The daemon sleeps
 * on the preemption ring until the first event comes, then looks at most
 * once per RX_EARLY_NS (once per period with a schedule out) while events
 * keep coming. Why sleep on the ring rather than look every RX_EARLY_NS: on
 * a receiver that is never preempted, a sender then costs about 15 daemon
 * wake-ups a second (11 without one) where looking costs about 108 and a
 * third of a per cent of a CPU (bench/rx_early.sh measures both).
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
	daemon_rx_ring_watch(d, every && now >= d->rx_early_due_ns);
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
		metricsrv_tick(d->ms, now);
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
	metricsrv_finish(d->ms);
	d->ms = NULL;
	if (d->flows.ws.curve)
		flows_finish(&d->flows);	/* hands every flow to history */
	daemon_streams_finish(d);		/* before the state directory closes */
	sockdiag_close(d->admit.diag);
	d->admit.diag = NULL;
	if (d->state_ok)
		state_close(&d->state);
	d->state_ok = false;
	daemon_rx_ring_watch(d, false);
	d->buf_fd = -1;		/* closed with the set below */
	daemon_buffer_finish(&d->buf);
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
