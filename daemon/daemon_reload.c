// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration's way into the running daemon: what each part takes
 * from it at start-up, what a reload changes, and the configuration read
 * back from the parts. Which keys a reload applies is the key table's
 * word (config.c, CONFIG_RELOAD_LIVE): this file applies all that a part
 * takes from the configuration, whatever changed, and lists the
 * restart-only keys whose value in the file is not the running one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/collect.h"
#include "daemon/daemon_int.h"

/* ---------------------------------------------- the parts' settings -- */

/* [model] loss, in the order of config.c's names. */
static const enum bneck_loss loss_of_config[] = {
	BNECK_LOSS_QUEUE, BNECK_LOSS_WINDOWS, BNECK_LOSS_SERVICE,
};

void daemon_reload_flows_params(const struct daemon *d, const struct rxb_config *cfg,
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
	p->loss_model = cfg->model.loss >= 0 &&
			cfg->model.loss < (int)RXB_ARRAY_SIZE(loss_of_config) ?
			loss_of_config[cfg->model.loss] : BNECK_LOSS_QUEUE;
	p->loss_episodes = cfg->model.loss_episodes >= 1;
	p->episodes_from_windows = cfg->model.loss_episodes == 2;
	p->depth_cost = cfg->model.queue_depth_cost;
	p->quota_phases = cfg->model.quota_phases;
	p->drain_floor = cfg->model.drain_floor;
	p->windows_by_rate = cfg->model.windows_by_rate;
	p->time_slack_rel = cfg->model.time_slack;
	p->rate_uncertainty = cfg->model.rate_uncertainty == 1;
	p->capacity = (enum capacity_mode)cfg->model.capacity;
	p->fallback_rx_ring = cfg->measure.fallback_rx_ring;
	p->linger_ns = (uint64_t)cfg->measure.flow_linger_s * RXB_NSEC_PER_SEC;
	p->pause.enabled = cfg->pause.enabled;
	p->pause.min_window_ns = (uint64_t)cfg->pause.min_window_us * RXB_NSEC_PER_USEC;
	p->pause.max_window_ns = (uint64_t)cfg->pause.max_window_ms * RXB_NSEC_PER_MSEC;
	p->pause.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
}

void daemon_reload_admit(struct daemon *d, const struct rxb_config *cfg)
{
	d->admit.max_flows_per_address = cfg->control.max_flows_per_address;
	d->admit.owner_uids = cfg->control.flow_owner_uids;
}

_Static_assert(RCVBUF_MAX_UIDS == RXB_CONF_MAX_UIDS && RCVBUF_MAX_EXES == RXB_CONF_MAX_EXES &&
	       RCVBUF_PATH_LEN == RXB_CONF_PATH_LEN, "[buffer] lists as the actuator holds them");

void daemon_reload_buffer_cfg(const struct rxb_config *cfg, struct daemon_buffer_cfg *out)
{
	const typeof(cfg->buffer) *b = &cfg->buffer;

	memset(out, 0, sizeof(*out));
	out->p.mode = (enum buffer_mode)b->mode;
	out->p.policy = (enum buffer_policy)b->policy;
	out->p.rrda.dt_s = b->dt_ms / 1e3;
	out->p.rrda.k = b->k;
	out->p.rrda.beta = b->beta;
	out->p.rrda.omega = b->omega;
	out->p.rrda.floor_bytes = b->floor_bytes;
	out->p.rrda.ceiling_bytes = b->ceiling_bytes;
	out->p.rrda.min_step_bytes = DAEMON_BUFFER_MIN_STEP;
	out->p.loss_target = b->loss_target;
	out->p.time_slack = b->time_slack;
	/* SO_RCVBUFFORCE is tried; refused, the actuator falls back to rmem_max. */
	out->p.force = true;
	out->allow.nuids = b->allow_users.n;
	memcpy(out->allow.uids, b->allow_users.uid, sizeof(out->allow.uids));
	out->allow.nexes = b->allow_exes.n;
	memcpy(out->allow.exes, b->allow_exes.path, sizeof(out->allow.exes));
	out->solve_min_ns = (uint64_t)cfg->measure.interval_ms * RXB_NSEC_PER_MSEC;
}

/* The other way, from what the adaptation runs. */
static void buffer_effective(const struct daemon_buffer *db, struct rxb_config *out)
{
	const struct buffer_params *p = &db->set.p;
	struct itimerspec its;

	out->buffer.mode = (int)p->mode;
	out->buffer.policy = (int)p->policy;
	out->buffer.dt_ms = (uint32_t)(p->rrda.dt_s * 1e3 + 0.5);
	/* a running timer must run at dt */
	if (db->tfd >= 0 && (timerfd_gettime(db->tfd, &its) ||
			     (uint64_t)its.it_interval.tv_sec * 1000 +
			     (uint64_t)its.it_interval.tv_nsec / 1000000 != out->buffer.dt_ms))
		out->buffer.dt_ms = 0;
	out->buffer.k = p->rrda.k;
	out->buffer.beta = p->rrda.beta;
	out->buffer.omega = p->rrda.omega;
	out->buffer.floor_bytes = p->rrda.floor_bytes;
	out->buffer.ceiling_bytes = p->rrda.ceiling_bytes;
	out->buffer.loss_target = p->loss_target;
	out->buffer.time_slack = p->time_slack;
	memset(&out->buffer.allow_users, 0, sizeof(out->buffer.allow_users));
	memset(&out->buffer.allow_exes, 0, sizeof(out->buffer.allow_exes));
	out->buffer.allow_users.n = db->cfg.allow.nuids;
	memcpy(out->buffer.allow_users.uid, db->cfg.allow.uids, sizeof(db->cfg.allow.uids));
	out->buffer.allow_exes.n = db->cfg.allow.nexes;
	memcpy(out->buffer.allow_exes.path, db->cfg.allow.exes, sizeof(db->cfg.allow.exes));
}

void daemon_reload_netplan_params(const struct rxb_config *cfg, struct netplan_params *p)
{
	p->steady_every = cfg->measure.net_probe_every;
	p->learn_ns = (uint64_t)cfg->measure.net_probe_learn_s * RXB_NSEC_PER_SEC;
}

void daemon_reload_collector_cfg(const struct daemon *d, const struct rxb_config *cfg,
				 struct daemon_collector_cfg *out)
{
	memset(out, 0, sizeof(*out));	/* compared with memcmp() */
	/* attach is a restart key: the collector keeps the one it started with. */
	out->attach = d->started.measure.attach;
	out->bpf_stats = cfg->measure.bpf_stats;
	out->devices = cfg->measure.devices;
	out->fallback_rx_ring = cfg->measure.fallback_rx_ring;
	out->fallback_rx_max_frames = cfg->measure.fallback_rx_max_frames;
	out->fallback_rx_usecs = cfg->measure.fallback_rx_usecs;
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

int daemon_reload_start_collector(struct daemon *d, const struct daemon_collector_cfg *cc,
				  struct collect **out)
{
	struct collect_opts o = COLLECT_OPTS_DEFAULT;
	uint16_t ports[FLOWS_MAX];
	int err;

	o.nports = flows_ports(&d->flows, ports);
	o.ports = ports;
	o.attach = attach_of(cc->attach);
	o.devices = (const char (*)[RXB_IFNAME_LEN])cc->devices.name;
	o.ndevices = cc->devices.n;
	o.fallback_rx_ring = cc->fallback_rx_ring;
	o.fallback_rx_max_frames = cc->fallback_rx_max_frames;
	o.fallback_rx_usecs = cc->fallback_rx_usecs;
	o.bpf_stats = cc->bpf_stats;
	_Static_assert(COLLECT_MAX_NET_PROBE_EVERY == 3600,
		       "[measure] net_probe_every's bound in config.c");
	o.net_probe_every = netplan_every(&d->netplan, rxb_mono_ns());
	o.net_stage_a_every = COLLECT_STAGE_A_EVERY;
	err = collect_init(out, &o);
	if (err)
		rxb_log_errno(RXB_LOG_ERR, -err, "starting the measurement collector");
	return err;
}

/* ---------------------------------------------------------- applying -- */

/* What apply() changed before a later step failed, to put back. */
struct undo {
	struct netplan_params np;
	struct flows_params fp;
	bool flows;		/* fp and the configured ports */
};

static void undo(struct daemon *d, const struct undo *u)
{
	char why[64];

	/* Each put back what ran just before: cannot fail. */
	daemon_streams_reload(d, &d->cfg, why, sizeof(why));
	netplan_set_params(&d->netplan, &u->np);
	if (!u->flows)
		return;
	flows_set_params(&d->flows, &u->fp);
	flows_set_config_ports(&d->flows, d->cfg.measure.watch_ports.port,
			       d->cfg.measure.watch_ports.n);
}

/* [measure] sampling, [model], [pause] and the watched ports. */
static int apply_model(struct daemon *d, const struct rxb_config *next, struct undo *u,
		       char *why, size_t wlen)
{
	struct netplan_params np;
	struct flows_params p;
	int err;

	u->np = d->netplan.p;
	u->fp = d->flows.p;
	err = daemon_streams_reload(d, next, why, wlen);
	if (err)
		return err;
	daemon_reload_netplan_params(next, &np);
	err = netplan_set_params(&d->netplan, &np);
	if (err) {
		snprintf(why, wlen, "[measure] net_probe_every: %s", strerror(-err));
		undo(d, u);
		return err;
	}
	daemon_reload_flows_params(d, next, &p);
	err = flows_set_params(&d->flows, &p);
	if (err) {
		snprintf(why, wlen, "[model]: %s", strerror(-err));
		undo(d, u);
		return err;
	}
	u->flows = true;
	err = flows_set_config_ports(&d->flows, next->measure.watch_ports.port,
				     next->measure.watch_ports.n);
	if (err) {
		snprintf(why, wlen, "[measure] watch_ports: with the ports senders use, "
			 "more than %d flows", FLOWS_MAX);
		undo(d, u);
	}
	return err;
}

static void swap_collector(struct daemon *d, struct collect *col,
			   const struct daemon_collector_cfg *cc)
{
	daemon_rx_ring_watch(d, false);
	d->rx_ring_failed = false;
	d->rx_early_due_ns = 0;
	collect_finish(d->col);
	d->col = col;
	d->col_cfg = *cc;
	d->net_every_now = netplan_every(&d->netplan, rxb_mono_ns());
	rxb_notice("reload: collector restarted with the new [measure] settings");
}

/*
 * Give every part its settings from @next: all or nothing. The steps that
 * can fail (netplan, the flows, a new collector, the sender server's
 * limits) come first, each undoing the ones before when it fails; what
 * follows them cannot fail.
 */
static int apply(struct daemon *d, const struct rxb_config *next, char *why, size_t wlen)
{
	struct daemon_collector_cfg cc;
	struct daemon_buffer_cfg bc, old_bc;
	struct sendsrv_limits lim, old_lim;
	struct collect *col = NULL;
	struct undo u = { .flows = false };
	int err;

	err = apply_model(d, next, &u, why, wlen);
	if (err)
		return err;
	daemon_reload_collector_cfg(d, next, &cc);
	if (memcmp(&cc, &d->col_cfg, sizeof(cc)) != 0) {
		err = daemon_reload_start_collector(d, &cc, &col);
		if (err) {
			snprintf(why, wlen, "restarting the collector: %s", strerror(-err));
			undo(d, &u);
			return err;
		}
	}
	config_sendsrv_limits(next, &lim);
	sendsrv_current_limits(d->ss, &old_lim);
	err = sendsrv_update_limits(d->ss, &lim);
	if (err) {
		snprintf(why, wlen, "[control]: the sender control server refused the new "
			 "limits: %s", strerror(-err));
		collect_finish(col);
		undo(d, &u);
		return err;
	}
	daemon_reload_buffer_cfg(next, &bc);
	old_bc = d->buf.cfg;
	err = daemon_buffer_reconfigure(&d->buf, &bc);
	if (!err && daemon_buffer_watch(d)) {
		err = -ENOMEM;	/* epoll_ctl logged why */
		daemon_buffer_reconfigure(&d->buf, &old_bc);	/* was in use */
		daemon_buffer_watch(d);
	}
	if (err) {
		snprintf(why, wlen, "[buffer]: %s", strerror(-err));
		sendsrv_update_limits(d->ss, &old_lim);	/* was in use: cannot fail */
		collect_finish(col);
		undo(d, &u);
		return err;
	}
	if (col)
		swap_collector(d, col, &cc);
	if (d->ms)
		metricsrv_set_allow(d->ms, next->metrics.allow.cidr, (size_t)next->metrics.allow.n);
	daemon_reload_admit(d, next);
	if (next->measure.interval_ms != d->cfg.measure.interval_ms)
		daemon_arm_timer(d, next->measure.interval_ms);	/* logs its failure */
	rxb_log_set_level(next->daemon.log_level);
	daemon_flows_probe_every(d, rxb_mono_ns());
	daemon_flows_sync_ports(d);
	return 0;
}

/* ----------------------------------------------------------- reload -- */

struct change_log {
	struct daemon *d;
	size_t len;		/* of d->reload.msg */
};

/* config_diff(running file, new file): log each change, list it in the message. */
static void log_change(void *arg, const struct config_key *k, const char *old_val,
		       const char *new_val)
{
	struct change_log *c = arg;
	struct daemon_reload *r = &c->d->reload;
	const char *note = "";
	char running[1024];
	int n;

	if (k->reload == CONFIG_RELOAD_RESTART) {
		config_format(k, &c->d->started, running, sizeof(running));
		note = strcmp(running, new_val) ? " (takes effect at restart)" :
						  " (the value running)";
	}
	rxb_notice("reload: [%s] %s: '%s' -> '%s'%s", k->section, k->key, old_val, new_val,
		   note);
	if (c->len < sizeof(r->msg)) {
		n = snprintf(r->msg + c->len, sizeof(r->msg) - c->len, "%s[%s] %s",
			     c->len ? ", " : "", k->section, k->key);
		if (n > 0)
			c->len += (size_t)n;
	}
}

/* config_diff(as started, new file): a restart-only key the file changed. */
static void note_restart(void *arg, const struct config_key *k, const char *old_val,
			 const char *new_val)
{
	struct daemon_reload *r = arg;

	(void)old_val;
	(void)new_val;
	if (k->reload != CONFIG_RELOAD_RESTART || r->nrestart == DAEMON_MAX_CHANGES)
		return;
	snprintf(r->restart[r->nrestart++], sizeof(r->restart[0]), "[%s] %s",
		 k->section, k->key);
}

static int reload_failed(struct daemon *d, int err, const char *why)
{
	d->reload.ok = false;
	d->reload.failures++;
	rxb_strlcpy(d->reload.msg, why, sizeof(d->reload.msg));
	rxb_err("reload failed, keeping the running configuration: %s", why);
	notify_sendf(&d->notify, "STATUS=reload failed: %.200s", why);
	notify_send(&d->notify, "READY=1");
	return err;
}

int daemon_reload(struct daemon *d)
{
	struct rxb_config next;
	struct change_log log = { .d = d };
	char why[DAEMON_RELOAD_MSG_LEN];
	int err, changed;

	d->reload.count++;
	d->reload.at_unix_s = rxb_wall_s();
	notify_send(&d->notify, "RELOADING=1");
	err = config_load(d->config_path, &next, why, sizeof(why));
	if (err)
		return reload_failed(d, err, why);
	d->reload.msg[0] = '\0';
	changed = config_diff(&d->cfg, &next, log_change, &log);
	err = apply(d, &next, why, sizeof(why));
	if (err)
		return reload_failed(d, err, why);
	d->cfg = next;
	d->reload.ok = true;
	d->reload.nrestart = 0;
	config_diff(&d->started, &next, note_restart, &d->reload);
	if (!changed)
		rxb_strlcpy(d->reload.msg, "nothing changed", sizeof(d->reload.msg));
	rxb_notice("reload of %s: %d keys changed%s", d->config_path, changed,
		   d->reload.nrestart ? "; some take effect at restart" : "");
	notify_send(&d->notify, "READY=1");
	daemon_status(d, true);
	return 0;
}

/* -------------------------------------------------------- read back -- */

/* The ports in [measure] watch_ports, as the flows hold them. */
static void configured_ports(const struct flows *f, struct rxb_port_list *out)
{
	out->n = 0;
	for (int i = 0; i < f->n && out->n < RXB_CONF_MAX_PORTS; i++)
		if (f->v[i].configured)
			out->port[out->n++] = f->v[i].port;
}

static void model_effective(const struct flows_params *p, struct rxb_config *out)
{
	out->model.payload_bytes = (uint32_t)p->payload_bytes;
	out->model.default_file_bytes = (uint64_t)p->file_bytes;
	out->model.default_one_way_delay_ms = p->one_way_delay_s * 1e3;
	out->model.line_rate_bps = (uint64_t)p->line_rate_bps;
	out->model.min_rate_bps = (uint64_t)p->min_rate_bps;
	out->model.sweep_points = p->sweep_points;
	out->model.batch_rule = p->rule;
	out->model.rounds = (int)p->rounds;
	out->model.loss = 0;
	for (int i = 0; i < (int)RXB_ARRAY_SIZE(loss_of_config); i++)
		if (loss_of_config[i] == p->loss_model)
			out->model.loss = i;
	out->model.loss_episodes = p->episodes_from_windows ? 2 : p->loss_episodes;
	out->model.queue_depth_cost = p->depth_cost;
	out->model.quota_phases = p->quota_phases;
	out->model.drain_floor = p->drain_floor;
	out->model.windows_by_rate = p->windows_by_rate;
	out->model.time_slack = p->time_slack_rel;
	out->model.rate_uncertainty = p->rate_uncertainty;
	out->model.capacity = (int)p->capacity;
	out->measure.flow_linger_s = (uint32_t)(p->linger_ns / RXB_NSEC_PER_SEC);
	out->pause.enabled = p->pause.enabled;
	out->pause.min_window_us = (uint32_t)(p->pause.min_window_ns / RXB_NSEC_PER_USEC);
	out->pause.max_window_ms = (uint32_t)(p->pause.max_window_ns / RXB_NSEC_PER_MSEC);
}

void daemon_reload_effective(const struct daemon *d, struct rxb_config *out)
{
	const struct daemon_collector_cfg *cc = &d->col_cfg;
	struct sendsrv_limits lim;
	struct itimerspec its;
	uint32_t timer_ms = 0;

	*out = d->started;
	out->daemon.log_level = rxb_log_get_level();
	/* [control] from the sender server; it also has [measure] interval_ms. */
	sendsrv_current_limits(d->ss, &lim);
	config_from_sendsrv_limits(&lim, out);
	out->control.max_flows_per_address = d->admit.max_flows_per_address;
	out->control.flow_owner_uids = d->admit.owner_uids;
	if (timerfd_gettime(d->tfd, &its) == 0)
		timer_ms = (uint32_t)(its.it_interval.tv_sec * 1000 +
				      its.it_interval.tv_nsec / 1000000);
	if (timer_ms != out->measure.interval_ms)
		out->measure.interval_ms = 0;
	out->measure.net_probe_every = d->netplan.p.steady_every;
	out->measure.net_probe_learn_s = (uint32_t)(d->netplan.p.learn_ns / RXB_NSEC_PER_SEC);
	configured_ports(&d->flows, &out->measure.watch_ports);
	out->measure.attach = cc->attach;
	out->measure.bpf_stats = cc->bpf_stats;
	out->measure.devices = cc->devices;
	/* fallback_rx_ring goes to the collector and to the flows. */
	out->measure.fallback_rx_ring = cc->fallback_rx_ring == d->flows.p.fallback_rx_ring ?
					cc->fallback_rx_ring : 0;
	out->measure.fallback_rx_max_frames = cc->fallback_rx_max_frames;
	out->measure.fallback_rx_usecs = cc->fallback_rx_usecs;
	model_effective(&d->flows.p, out);
	/* [metrics] allow from the endpoint; without one, nothing runs it. */
	if (d->ms) {
		memset(&out->metrics.allow, 0, sizeof(out->metrics.allow));
		out->metrics.allow.n = (int)metricsrv_allow(d->ms, out->metrics.allow.cidr,
							    RXB_CONF_MAX_CIDRS);
	} else {
		out->metrics.allow = d->cfg.metrics.allow;
	}
	daemon_streams_effective(d, out);
	buffer_effective(&d->buf, out);
}
