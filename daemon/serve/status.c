// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl's commands: status, senders, buffers, reload, version, streams. See status.h. */
#include "daemon/serve/status.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/collect_json.h"
#include "daemon/daemon.h"
#include "daemon/serve/status_buffer.h"
#include "daemon/serve/status_flow.h"
#include "daemon/serve/status_streams.h"

#define CTL_PROTOCOL_VERSION	2

double status_age_s(uint64_t then_ns, uint64_t now_ns)
{
	return then_ns && now_ns >= then_ns ? (double)(now_ns - then_ns) / 1e9 : NAN;
}

/* The reasons of status_health(), in bit order: a label and a short line. */
static const struct {
	const char *name, *text;
} health_table[STATUS_HEALTH_N] = {
	{ "no_epoch", "no epoch measured yet" },
	{ "no_bpf", "no BPF probes: measuring from /proc and netlink only" },
	{ "partial_probes", "some BPF probes are not loaded" },
	{ "no_netlink", "NIC parameters unavailable (netlink)" },
	{ "state_dir", "state directory unusable: no history kept" },
	{ "state_save", "the state file could not be read or saved" },
	{ "reload_failed", "last reload failed: the previous configuration runs" },
	{ "flow_stale", "a flow's model is stale (see flows[].transfers[].solve_error)" },
};

const char *status_health_name(unsigned int i)
{
	return i < STATUS_HEALTH_N ? health_table[i].name : "?";
}

uint32_t status_health(const struct daemon *d)
{
	uint32_t deg = d->have_epoch ? d->epoch->degraded : 0, h = 0;

	if (!d->have_epoch)
		h |= 1u << STATUS_HEALTH_NO_EPOCH;
	if (deg & RXB_DEGRADED_NO_BPF)
		h |= 1u << STATUS_HEALTH_NO_BPF;
	if (deg & RXB_DEGRADED_PARTIAL_PROBES)
		h |= 1u << STATUS_HEALTH_PARTIAL_PROBES;
	if (deg & RXB_DEGRADED_NO_NETLINK)
		h |= 1u << STATUS_HEALTH_NO_NETLINK;
	if (!d->state_ok)
		h |= 1u << STATUS_HEALTH_STATE_DIR;
	/* A damaged file, a full disk: until the next save succeeds. */
	if (d->state_ok && d->state.err[0])
		h |= 1u << STATUS_HEALTH_STATE_SAVE;
	if (d->reload.count && !d->reload.ok)
		h |= 1u << STATUS_HEALTH_RELOAD_FAILED;
	for (int i = 0; i < d->flows.n; i++)
		for (int j = 0; j < d->flows.v[i].nmodels; j++)
			if (d->flows.v[i].m[j].state == FLOW_STALE)
				h |= 1u << STATUS_HEALTH_FLOW_STALE;
	return h;
}

/* Why the daemon is not fully healthy: one short line each. */
static int health_reasons(const struct daemon *d, const char **v, int max)
{
	uint32_t h = status_health(d);
	int n = 0;

	for (unsigned int i = 0; i < STATUS_HEALTH_N && n < max; i++)
		if (h & (1u << i))
			/* The state file's own words: which file, what failed. */
			v[n++] = i == STATUS_HEALTH_STATE_SAVE ? d->state.err : health_table[i].text;
	return n;
}

/* What is worth knowing but does not make the model less trustworthy. */
static int notes(const struct daemon *d, const char **v, int max)
{
	int n = 0;

	if (d->have_epoch && (d->epoch->degraded & RXB_DEGRADED_NO_BPF_STATS) && n < max)
		v[n++] = d->cfg.measure.bpf_stats ?
			 "probe cost unknown: BPF statistics need CAP_SYS_ADMIN" :
			 "probe cost not measured ([measure] bpf_stats = no)";
	return n;
}

/* Learn, then sample: when the per-packet probes attach (netplan.h). */
static void net_probes_json(struct json_writer *w, const struct daemon *d, uint64_t now)
{
	const struct netplan *np = &d->netplan;
	bool learning = netplan_learning(np, now);

	json_obj_begin(w, "net_probes");
	json_uint(w, "every", d->net_every_now);
	json_uint(w, "steady_every", np->p.steady_every);
	json_double(w, "learn_s", (double)np->p.learn_ns / 1e9);
	json_bool(w, "learning", learning);
	json_double(w, "learning_left_s", learning && np->started ?
			    (double)(np->learn_until_ns - now) / 1e9 : NAN);
	json_uint(w, "changes", np->learn_starts);
	json_str(w, "last_change", np->learn_starts ? np->why : NULL);
	json_double(w, "last_change_age_s",
		    np->learn_starts ? status_age_s(np->last_change_ns, now) : NAN);
	json_obj_end(w);
}

/* The keys the last reload changed that take effect at the next start. */
static void restart_needed_json(struct json_writer *w, const struct daemon *d)
{
	json_arr_begin(w, "restart_needed");
	for (int i = 0; i < d->reload.nrestart; i++)
		json_str(w, NULL, d->reload.restart[i]);
	json_arr_end(w);
}

static void daemon_json(struct json_writer *w, const struct daemon *d, uint64_t now)
{
	const char *why[12];
	int n = health_reasons(d, why, (int)RXB_ARRAY_SIZE(why));
	struct ctlsrv_stats cs;

	ctlsrv_stats(d->cs, &cs);
	json_obj_begin(w, "daemon");
	json_int(w, "pid", getpid());
	json_double(w, "uptime_s", status_age_s(d->started_ns, now));
	json_uint(w, "started_unix_s", d->started_unix_s);
	json_str(w, "config_file", d->config_path);
	json_str(w, "health", n ? "degraded" : "ok");
	json_str_array(w, "degraded_reasons", why, (size_t)n);
	n = notes(d, why, (int)RXB_ARRAY_SIZE(why));
	json_str_array(w, "notes", why, (size_t)n);
	json_str(w, "log_level", rxb_log_level_name(rxb_log_get_level()));
	json_uint(w, "epoch_ms", d->cfg.measure.interval_ms);
	json_uint(w, "epochs", d->epochs);
	json_uint(w, "epochs_late", d->overruns);
	json_double(w, "collect_ms", d->collect_ms);
	json_double(w, "model_ms", d->flows.last_solve_ms);
	json_double(w, "epoch_work_ms", d->epoch_ms_spent);
	json_uint(w, "netdev_max_backlog", d->netdev_max_backlog);
	net_probes_json(w, d, now);
	/* CONFIG_IRQ_TIME_ACCOUNTING: null when the configuration is unreadable. */
	json_bool_opt(w, "irq_time_accounting", d->irq_time_accounting >= 0,
		      d->irq_time_accounting == 1);
	json_obj_begin(w, "state_dir");
	json_str(w, "path", d->state.dir);
	json_bool(w, "ok", d->state_ok);
	json_str(w, "error", d->state.err);
	json_uint(w, "saves", d->state.saves);
	json_uint(w, "save_failures", d->state.save_failures);
	json_uint(w, "history_ports", (uint64_t)d->state.n);
	json_obj_end(w);
	json_obj_begin(w, "reload");
	json_uint(w, "count", d->reload.count);
	json_uint(w, "failures", d->reload.failures);
	json_uint_opt(w, "last_unix_s", d->reload.count, d->reload.at_unix_s);
	json_bool_opt(w, "ok", d->reload.count, d->reload.ok);
	json_str(w, "message", d->reload.count ? d->reload.msg : NULL);
	restart_needed_json(w, d);
	json_obj_end(w);
	json_obj_begin(w, "watchdog");
	json_bool(w, "enabled", notify_watchdog_due_ns(&d->notify) != UINT64_MAX);
	json_double(w, "interval_s", d->notify.watchdog_ns / 1e9);
	json_obj_end(w);
	json_obj_begin(w, "ctl");
	json_str(w, "socket", d->started.daemon.ctl_socket);
	json_uint(w, "clients", cs.clients);
	json_uint(w, "requests", cs.requests);
	json_uint(w, "errors", cs.errors);
	json_uint(w, "busy", cs.busy);
	json_uint(w, "evicted", cs.evicted);
	json_uint(w, "timeouts", cs.timeouts);
	json_uint(w, "mem_bytes", cs.mem_bytes);
	json_uint(w, "mem_bound_bytes", ctlsrv_memory_bound());
	json_obj_end(w);
	json_obj_end(w);
}

static void epoch_json(struct json_writer *w, const struct daemon *d, uint64_t now)
{
	const struct rxb_epoch *e = d->epoch;

	if (!json_obj_begin_opt(w, "epoch", d->have_epoch))
		return;
	json_uint(w, "seq", e->seq);
	json_double(w, "duration_s", (double)(e->end_ns - e->start_ns) / 1e9);
	json_double(w, "age_s", status_age_s(e->end_ns, now));
	json_str(w, "attach_mode", e->attach_mode);
	collect_json_degraded_flags(w, "degraded", e->degraded);
	json_str(w, "degraded_reason", e->degraded_reason);
	json_obj_end(w);
}

/* The per-CPU task classes (the same numbers as measurement.cpus). */
static void cpus_json(struct json_writer *w, const struct daemon *d)
{
	json_arr_begin(w, "cpus");
	for (int i = 0; d->have_epoch && i < d->epoch->ncpus; i++) {
		const struct rxb_cpu_meas *c = &d->epoch->cpus[i];

		json_obj_begin(w, NULL);
		collect_json_cpu_classes(w, c);
		json_double(w, "runnable_avg", c->runnable_avg);
		json_double(w, "softirq_frac", c->softirq_frac);
		json_double(w, "hardirq_frac", c->hardirq_frac);
		json_obj_end(w);
	}
	json_arr_end(w);
}

static void disk_model_json(struct json_writer *w, const struct daemon *d)
{
	double svc = ewma_ratio_value(&d->flows.disk.service_ns);
	double burst = ewma_ratio_value(&d->flows.disk.burst_ns);

	json_obj_begin(w, "disk");
	json_double(w, "mu_disk_per_s", svc > 0 ? 1e9 / svc : NAN);
	json_double(w, "mu_pio_per_s", burst > 0 ? 1e9 / burst : NAN);
	json_obj_end(w);
}

void status_refusals(const struct daemon *d, struct status_refusal v[STATUS_REFUSALS])
{
	struct sendsrv_stats st;

	sendsrv_stats(d->ss, &st);
	/* One more reason than STATUS_REFUSALS does not compile (-Werror). */
	const struct status_refusal r[STATUS_REFUSALS] = {
		{ "not_allowed", st.rejected_allow },
		{ "connection_limit", st.rejected_full },
		{ "connection_limit_per_address", st.rejected_source },
		{ "closed_by_allow_reload", st.closed_not_allowed },
		{ "flow_table_full", d->admit.flows_full },
		{ "flows_per_address", d->admit.flows_per_address },
		{ "flow_owner", d->admit.not_owner },
		{ "bad_report", st.reports_rejected },
	};

	memcpy(v, r, sizeof(r));
}

static void senders_summary_json(struct json_writer *w, const struct daemon *d)
{
	struct status_refusal refused[STATUS_REFUSALS];
	struct sendsrv_stats st;

	sendsrv_stats(d->ss, &st);
	status_refusals(d, refused);
	json_obj_begin(w, "senders");
	json_uint(w, "port", d->sendsrv_port);
	json_uint(w, "connected", st.conns_active);
	json_uint(w, "awaiting_hello", st.conns_hello);
	json_uint(w, "closing", st.conns_closing);
	json_uint(w, "accepted", st.accepted);
	json_uint(w, "rejected_allow", st.rejected_allow);
	json_uint(w, "rejected_full", st.rejected_full);
	/* Every refusal, by reason (docs/PROTOCOL.md §8, §9). */
	json_obj_begin(w, "refused");
	for (int i = 0; i < STATUS_REFUSALS; i++)
		json_uint(w, refused[i].name, refused[i].n);
	json_obj_end(w);
	json_uint(w, "flows_evicted", d->flows.evicted);
	json_uint(w, "frames_in", st.frames_in);
	json_uint(w, "frames_out", st.frames_out);
	json_uint(w, "rate_pushes", st.rate_pushes);
	json_uint(w, "pause_pushes", st.pause_pushes);
	json_uint(w, "buffer_pushes", st.buffer_pushes);
	json_uint(w, "reports", st.reports);
	json_obj_begin(w, "errors_sent");
	for (unsigned i = 1; i <= RXBNECK_ERR_MAX_; i++)
		if (st.errors_sent[i])
			json_uint(w, rxbneck_error_name(i), st.errors_sent[i]);
	json_obj_end(w);
	json_uint(w, "mem_bytes", st.mem_bytes);
	json_uint(w, "mem_bound_bytes", st.mem_bound_bytes);
	json_obj_end(w);
}

void status_json(struct json_writer *w, const struct daemon *d)
{
	uint64_t now = rxb_mono_ns();

	json_obj_begin(w, NULL);
	json_str(w, "version", RXB_VERSION);
	json_uint(w, "ctl_protocol", CTL_PROTOCOL_VERSION);
	daemon_json(w, d, now);
	epoch_json(w, d, now);
	cpus_json(w, d);
	disk_model_json(w, d);
	json_arr_begin(w, "flows");
	for (int i = 0; i < d->flows.n; i++)
		status_flow_json(w, &d->flows.v[i], d, now);
	json_arr_end(w);
	status_flow_learned_json(w, d, now);
	senders_summary_json(w, d);
	status_streams_summary(w, "streams", d);
	status_buffer_json(w, "buffers", d, now);
	if (d->have_epoch)
		collect_json_epoch(w, "measurement", d->epoch, NULL);
	else
		json_null(w, "measurement");
	json_obj_end(w);
}

/* -------------------------------------------------------------- senders -- */

struct senders_ctx {
	struct json_writer *w;
	uint64_t now;
};

static void sender_json(void *arg, const struct sendsrv_peer *p)
{
	struct senders_ctx *c = arg;
	struct json_writer *w = c->w;
	const struct rxbneck_hello *h = &p->hello;

	json_obj_begin(w, NULL);
	json_uint(w, "id", p->id);
	json_str(w, "address", p->addr_str);
	json_str(w, "name", h->name);
	json_uint(w, "flow_port", h->flow_port);
	json_str(w, "flow_proto", h->flow_proto == 6 ? "tcp" : "udp");
	json_uint(w, "subscribe", h->subscribe);
	json_uint(w, "granted", p->granted);
	json_uint(w, "payload_bytes", h->payload_bytes);
	json_uint(w, "file_bytes", h->file_bytes);
	json_uint(w, "rtt_us", h->rtt_us);
	json_uint(w, "max_rate_bps", h->max_rate_bps);
	json_double(w, "connected_s", status_age_s(p->connected_ns, c->now));
	json_double(w, "idle_s", status_age_s(p->last_rx_ns, c->now));
	json_uint(w, "frames_in", p->frames_in);
	json_uint(w, "frames_out", p->frames_out);
	json_uint(w, "bytes_in", p->bytes_in);
	json_uint(w, "bytes_out", p->bytes_out);
	json_uint(w, "reports", p->reports);
	json_uint(w, "pauses_sent", p->pauses_sent);
	json_uint(w, "out_queued_bytes", p->out_queued_bytes);
	status_flow_rate_json(w, "last_rate", p->has_rate ? &p->last_rate : NULL);
	/* The PAUSE schedule in force for it (PROTOCOL.md §6.3), or null. */
	if (json_obj_begin_opt(w, "pause_in_force", p->pause_until_ns > c->now)) {
		json_uint(w, "epoch", p->pause.epoch);
		json_uint(w, "duration_us", p->pause.duration_us);
		json_uint(w, "period_us", p->pause.period_us);
		json_uint(w, "repeat_count", p->pause.repeat_count);
		json_double(w, "sent_s_ago", status_age_s(p->pause_sent_ns, c->now));
		json_double(w, "ends_in_s", p->pause_until_ns != UINT64_MAX ?
			    (double)(p->pause_until_ns - c->now) / 1e9 : NAN);
		json_obj_end(w);
	}
	json_obj_end(w);
}

/* @w's document as the answer's body, or INTERNAL. */
static void reply_json(struct json_writer *w, struct ctl_reply *rep)
{
	if (json_ok(w)) {
		strbuf_add(&rep->body, json_text(w), json_len(w));
		strbuf_adds(&rep->body, "\n");
	} else {
		rep->err = CTL_ERR_INTERNAL;
		rxb_strlcpy(rep->msg, "formatting JSON failed", sizeof(rep->msg));
	}
}

static void senders_cmd(struct daemon *d, struct json_writer *w)
{
	struct senders_ctx c = { .w = w, .now = rxb_mono_ns() };

	json_obj_begin(w, NULL);
	json_arr_begin(w, "senders");
	sendsrv_foreach_sender(d->ss, sender_json, &c);
	json_arr_end(w);
	json_obj_end(w);
}

static void reload_cmd(struct daemon *d, const struct ctl_request *req, struct json_writer *w,
		       struct ctl_reply *rep)
{
	rxb_notice("reload requested by rxbneckctl (pid %d, uid %u)", (int)req->pid,
		   (unsigned)req->uid);
	if (daemon_reload(d)) {
		rep->err = CTL_ERR_FAILED;
		snprintf(rep->msg, sizeof(rep->msg), "reload failed, the running "
			 "configuration stays: %.200s", d->reload.msg);
		return;
	}
	json_obj_begin(w, NULL);
	json_bool(w, "ok", true);
	json_str(w, "config_file", d->config_path);
	json_str(w, "changed", d->reload.msg);
	restart_needed_json(w, d);
	json_obj_end(w);
}

static void version_cmd(struct json_writer *w)
{
	json_obj_begin(w, NULL);
	json_str(w, "version", RXB_VERSION);
	json_uint(w, "ctl_protocol", CTL_PROTOCOL_VERSION);
	json_obj_end(w);
}

/*
 * Every answer is JSON (control protocol 2): "json" is still taken, as
 * clients of protocol 1 send it; "text" is refused, the text being
 * rxbneckctl's to write now.
 */
static bool check_args(const struct ctl_request *req, struct ctl_reply *rep)
{
	for (int i = 0; i < req->argc; i++) {
		if (!strcmp(req->argv[i], "json"))
			continue;
		rep->err = CTL_ERR_BAD_ARGUMENT;
		if (!strcmp(req->argv[i], "text"))
			snprintf(rep->msg, sizeof(rep->msg), "the daemon answers JSON only "
				 "(control protocol %d); rxbneckctl %.40s shows it as text",
				 CTL_PROTOCOL_VERSION, req->verb);
		else
			snprintf(rep->msg, sizeof(rep->msg), "'%.40s' takes no argument but "
				 "'json', not '%.40s'", req->verb, req->argv[i]);
		return false;
	}
	return true;
}

void status_dispatch(struct daemon *d, const struct ctl_request *req,
		     struct ctl_reply *rep)
{
	static const char *const verbs[] = { "status", "senders", "reload", "version", "streams",
					     "buffers" };
	struct json_writer w;
	size_t v;

	for (v = 0; v < RXB_ARRAY_SIZE(verbs) && strcmp(req->verb, verbs[v]); v++)
		;
	if (v == RXB_ARRAY_SIZE(verbs)) {
		rep->err = CTL_ERR_UNKNOWN;
		snprintf(rep->msg, sizeof(rep->msg),
			 "unknown command '%.40s' (status, senders, buffers, reload, version, streams)",
			 req->verb);
		return;
	}
	if (v != 4 && !check_args(req, rep))
		return;
	json_init(&w, false);
	if (v == 0)
		status_json(&w, d);
	else if (v == 1)
		senders_cmd(d, &w);
	else if (v == 2)
		reload_cmd(d, req, &w, rep);
	else if (v == 3)
		version_cmd(&w);
	else if (v == 4)
		status_streams_cmd(d, req, &w, rep);
	else
		status_buffer_json(&w, NULL, d, rxb_mono_ns());
	if (rep->err == CTL_OK)
		reply_json(&w, rep);
	json_finish(&w);
}
