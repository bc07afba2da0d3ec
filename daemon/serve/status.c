// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl's commands: status, senders, reload, version. See status.h. */
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

#define CTL_PROTOCOL_VERSION	1

static double age_s(uint64_t then_ns, uint64_t now_ns)
{
	return then_ns && now_ns >= then_ns ? (double)(now_ns - then_ns) / 1e9 : NAN;
}

static const char *const rate_flag_names[] = {
	"degraded", "stale", "no_traffic", "unconstrained", "between_pauses",
};

/* ------------------------------------------------------------------ JSON -- */

static void value_json(struct json_writer *w, const char *key, const struct value *v)
{
	json_obj_begin(w, key);
	json_double(w, "value", v->src == VALUE_MISSING ? NAN : v->v);
	json_str(w, "source", value_src_name(v->src));
	if (v->why[0])
		json_str(w, "why", v->why);
	json_obj_end(w);
}

static void rate_flags_json(struct json_writer *w, const char *key, uint16_t flags)
{
	json_arr_begin(w, key);
	for (unsigned i = 0; i < RXB_ARRAY_SIZE(rate_flag_names); i++)
		if (flags & (1u << i))
			json_str(w, NULL, rate_flag_names[i]);
	json_arr_end(w);
}

static void rate_json(struct json_writer *w, const char *key, const struct rxbneck_rate *r)
{
	json_obj_begin(w, key);
	json_uint(w, "rate_bps", r->rate_bps);
	json_double(w, "loss", r->loss);
	json_uint(w, "epoch", r->epoch);
	json_uint(w, "confidence", r->confidence);
	json_uint(w, "xfer_time_us", r->xfer_time_us);
	rate_flags_json(w, "flags", r->flags);
	json_obj_end(w);
}

static void placement_json(struct json_writer *w, int n, const int *cpu, const double *share)
{
	json_arr_begin(w, "cpus");
	for (int i = 0; i < n; i++) {
		json_obj_begin(w, NULL);
		json_int(w, "cpu", cpu[i]);
		json_double(w, "share", share[i]);
		json_obj_end(w);
	}
	json_arr_end(w);
}

/* Which estimate cpu_ns_per_pkt is, and the others beside it. */
static void cpu_cost_json(struct json_writer *w, const struct inputs_stage_b *b,
			  const struct busy_sums *sat, const struct busy_sums *kept,
			  const struct busy_sums *busy)
{
	json_obj_begin(w, "cpu_cost");
	json_str(w, "basis", cost_basis_name(b->cpu_ns_per_pkt_basis));
	json_double(w, "saturated_ns", b->cpu_ns_per_pkt_saturated);
	json_double(w, "saturated_load", b->saturated_load);
	json_double(w, "kept_up_ns", b->cpu_ns_per_pkt_kept_up);
	json_double(w, "kept_up_load", b->kept_up_load);
	json_uint(w, "kept_up_epochs", kept->taken);
	json_double(w, "full_ns", b->cpu_ns_per_pkt_full);
	json_uint(w, "saturated_epochs", sat->taken);
	json_uint(w, "overflow_epochs_refused", sat->refused);
	json_double(w, "fit_b_ns", b->cpu_ns_per_pkt_fit);
	json_double(w, "fit_a_ns", b->cpu_ns_per_wakeup);
	json_double(w, "fit_e_ns", b->cpu_ns_per_empty_read);
	if (b->cost_fit_terms)
		json_uint(w, "fit_terms", (uint64_t)b->cost_fit_terms);
	else
		json_null(w, "fit_terms");
	json_double(w, "spin_share", b->spin_share);
	json_str(w, "fit_note", b->cost_fit_note);
	json_double(w, "ratio_ns", b->cpu_ns_per_pkt_ratio);
	json_double(w, "busy_ns", b->cpu_ns_per_pkt_busy);
	json_double(w, "busy_load", b->busy_load);
	json_uint(w, "busy_epochs", busy->taken);
	json_double(w, "capped_ns", b->cpu_ns_per_pkt_capped);
	json_obj_end(w);
}

static void inputs_json(struct json_writer *w, const struct flow *fl, uint64_t now)
{
	const struct inputs *in = &fl->inputs;
	const struct learn *l = &fl->learn;

	json_obj_begin(w, "inputs");
	json_uint(w, "stages", in->nstages);
	json_uint(w, "confidence", in->confidence);
	json_bool(w, "no_traffic", in->no_traffic);
	json_str(w, "note", in->why);
	json_obj_begin(w, "stage_b");
	json_bool(w, "modelled", in->b.present);
	value_json(w, "cpu_bound", &in->b.cpu_bound);
	value_json(w, "io_bound", &in->b.io_bound);
	json_bool(w, "io_bound_ignored", in->b.io_ignored);
	placement_json(w, in->b.ncpus, in->b.cpu, in->b.cpu_share);
	value_json(w, "cpu_ns_per_pkt", &in->b.cpu_ns_per_pkt);
	cpu_cost_json(w, &in->b, &l->busy.sat, &l->busy.kept, &l->busy.all_in);
	value_json(w, "pkts_per_wakeup", &in->b.pkts_per_wakeup);
	value_json(w, "queue_pkts", &in->b.queue_pkts);
	value_json(w, "mu_net_per_s", &in->b.mu_net_per_s);
	value_json(w, "mu_pio_per_s", &in->b.mu_pio_per_s);
	value_json(w, "mu_disk_per_s", &in->b.mu_disk_per_s);
	value_json(w, "irq_ns_per_pkt", &in->b.irq_ns_per_pkt);
	value_json(w, "loss_episode_pkts", &in->b.loss_episode_pkts);
	value_json(w, "rate_rel_sd", &in->b.rate_rel_sd);
	json_obj_end(w);
	json_obj_begin(w, "stage_a");
	json_bool(w, "modelled", in->a.present);
	json_str(w, "device", in->a.dev);
	json_bool(w, "load_independent", true);
	value_json(w, "mu_per_s", &in->a.mu_per_s);
	value_json(w, "pkts_per_poll", &in->a.pkts_per_poll);
	value_json(w, "queue_pkts", &in->a.queue_pkts);
	value_json(w, "dgrams_per_skb", &in->a.dgrams_per_skb);
	json_obj_end(w);
	json_obj_begin(w, "learned");
	json_str(w, "origin", value_src_name(l->origin));
	json_double(w, "last_traffic_age_s", age_s(l->last_traffic_ns, now));
	if (l->origin == VALUE_HISTORY)
		json_uint(w, "history_age_s", l->history_age_s);
	else
		json_null(w, "history_age_s");
	json_obj_end(w);
	json_obj_end(w);
}

static void stage_json(struct json_writer *w, const struct rxb_stage_inputs *in,
		       const struct bneck_stage *st)
{
	json_obj_begin(w, NULL);
	json_bool(w, "load_independent", in->load_independent);
	json_double(w, "cpu_bound", in->load_independent ? NAN : in->cpu_bound);
	json_double(w, "io_bound", in->load_independent ? NAN : in->io_bound);
	json_double(w, "mu_net_per_s", in->mu_net_per_s);
	json_double(w, "mu_net_full_per_s", in->mu_net_full_per_s > 0 ?
		  in->mu_net_full_per_s : in->mu_net_per_s);
	json_double(w, "irq_ns_per_pkt", in->irq_ns_per_pkt);
	json_double(w, "mu_rel_sd", in->mu_rel_sd);
	json_uint(w, "queue_pkts", in->queue_pkts);
	json_uint(w, "batch_pkts", in->batch_pkts);
	json_str(w, "batch_rule", in->rule == RXB_BATCH_STRICT ? "strict" : "partial");
	/* The server's predicted off-CPU windows (0: none this epoch). */
	json_double(w, "vacation_us", in->vacation_s * 1e6);
	json_double(w, "vacation_period_us", in->vacation_period_s * 1e6);
	json_double(w, "service_rate_per_s", st->service_rate_per_s);
	json_double(w, "mean_response_s", st->mean_response_s);
	json_double(w, "capacity_bps", st->capacity_bps);
	json_double(w, "capacity_full_bps", st->capacity_full_bps > 0 ?
		  st->capacity_full_bps : st->capacity_bps);
	json_double(w, "loss", st->loss);
	json_obj_end(w);
}

static void model_json(struct json_writer *w, const struct flow *fl, const struct daemon *d)
{
	const struct flow_estimate *g = &fl->good;

	if (!fl->have_good) {
		json_null(w, "model");
		return;
	}
	json_obj_begin(w, "model");
	json_uint(w, "epoch", g->epoch);
	json_uint(w, "age_epochs", d->have_epoch && d->epoch->seq > g->epoch ?
		d->epoch->seq - g->epoch : 0);
	json_double(w, "rate_bps", g->res.rate_bps);
	json_double(w, "loss", g->res.loss);
	json_double(w, "ln_loss", g->res.ln_loss);
	json_double(w, "transfer_time_s", g->res.time_s);
	json_double(w, "n_resend", g->n_resend);
	json_double(w, "loss_episode_pkts", g->loss_episode_pkts > 0 ? g->loss_episode_pkts : 1.0);
	json_double(w, "line_rate_loss", g->res.line_loss);
	json_double(w, "line_rate_time_s", g->res.line_time_s);
	json_bool(w, "unconstrained", g->unconstrained);
	json_uint(w, "confidence", g->confidence);
	json_double(w, "loss_rel_err", g->res.loss_rel_err);
	json_double(w, "model_rel_err", g->res.model_rel_err);
	json_uint(w, "evaluations", g->res.evaluations);
	json_double(w, "solve_ms", g->solve_ms);
	json_obj_begin(w, "transfer");
	json_double(w, "payload_bytes", g->xfer.payload_bytes);
	json_double(w, "file_bytes", g->xfer.file_bytes);
	json_double(w, "one_way_delay_s", g->xfer.one_way_delay_s);
	json_double(w, "line_rate_bps", g->xfer.line_rate_bps);
	json_double(w, "min_rate_bps", g->xfer.min_rate_bps);
	json_obj_end(w);
	json_arr_begin(w, "stages");
	for (uint32_t i = 0; i < g->nstages && i < BNECK_MAX_STAGES; i++)
		stage_json(w, &g->inputs[i], &g->res.stage[i]);
	json_arr_end(w);
	json_obj_end(w);
}

static void xfer_json(struct json_writer *w, const struct flow_xfer *x)
{
	json_obj_begin(w, "transfer");
	json_str(w, "from", x->from_sender ? "sender" : "config");
	json_str(w, "sender", x->sender);
	json_double(w, "payload_bytes", x->payload_bytes);
	json_double(w, "file_bytes", x->file_bytes);
	json_double(w, "one_way_delay_s", x->one_way_delay_s);
	json_double(w, "line_rate_bps", x->line_rate_bps);
	json_double(w, "min_rate_bps", x->min_rate_bps);
	json_obj_end(w);
}

static void report_json(struct json_writer *w, const struct flow *fl)
{
	const struct rxbneck_report *r = &fl->last_report;

	if (!fl->has_report) {
		json_null(w, "last_report");
		return;
	}
	json_obj_begin(w, "last_report");
	json_bool(w, "aborted", r->flags & RXBNECK_REPORT_ABORTED);
	json_uint(w, "rounds", r->rounds);
	json_uint(w, "file_bytes", r->file_bytes);
	json_double(w, "elapsed_s", r->elapsed_us / 1e6);
	json_uint(w, "rate_bps", r->rate_bps);
	json_uint(w, "pkts_sent", r->pkts_sent);
	json_uint(w, "pkts_resent", r->pkts_resent);
	json_uint(w, "pkts_lost_first", r->pkts_lost_first);
	json_double(w, "model_rate_bps", fl->report_model_rate_bps);
	json_double(w, "model_time_s", fl->report_model_time_s);
	json_obj_end(w);
}

static void flow_json(struct json_writer *w, const struct flow *fl, const struct daemon *d,
		      uint64_t now)
{
	const struct inputs_traffic *t = &fl->inputs.traffic;

	json_obj_begin(w, NULL);
	json_uint(w, "port", fl->port);
	json_bool(w, "configured", fl->configured);
	json_uint(w, "senders", fl->nsenders);
	json_str(w, "state", flows_state_name(fl->state));
	xfer_json(w, &fl->xfer);
	json_obj_begin(w, "traffic");
	json_bool(w, "seen", t->sock_seen);
	json_bool(w, "counts_valid", t->counts_valid);
	json_uint(w, "pkts_in", t->pkts_in);
	json_uint(w, "pkts_out", t->pkts_out);
	json_uint(w, "drops", t->drops);
	json_uint(w, "rcvbuf_drops", t->rcvbuf_drops);
	json_obj_end(w);
	inputs_json(w, fl, now);
	model_json(w, fl, d);
	if (fl->solve_err) {
		json_obj_begin(w, "solve_error");
		json_int(w, "errno", -fl->solve_err);
		json_str(w, "message", fl->solve_why);
		json_uint(w, "epoch", fl->solve_err_epoch);
		json_obj_end(w);
	} else {
		json_null(w, "solve_error");
	}
	json_uint(w, "solves", fl->solves);
	json_uint(w, "solves_reused", fl->solves_reused);
	json_uint(w, "solve_failures", fl->solve_failures);
	if (fl->has_rate)
		rate_json(w, "rate", &fl->rate);
	else
		json_null(w, "rate");
	if (fl->has_rate && fl->has_rate_between) {
		rate_json(w, "rate_between_pauses", &fl->rate_between);
		json_double(w, "pause_fraction", fl->good.between.pause_fraction);
	} else {
		json_null(w, "rate_between_pauses");
		json_null(w, "pause_fraction");
	}
	json_int(w, "rate_sent_to", fl->last_sent);
	json_uint(w, "reports", fl->reports);
	report_json(w, fl);
	pause_json(&fl->pause, w);
	json_obj_end(w);
}

/* Why the daemon is not fully healthy: one short line each. */
static int health_reasons(const struct daemon *d, const char **v, int max)
{
	int n = 0;

	if (!d->have_epoch && n < max)
		v[n++] = "no epoch measured yet";
	if (d->have_epoch && (d->epoch->degraded & RXB_DEGRADED_NO_BPF) && n < max)
		v[n++] = "no BPF probes: measuring from /proc and netlink only";
	if (d->have_epoch && (d->epoch->degraded & RXB_DEGRADED_PARTIAL_PROBES) && n < max)
		v[n++] = "some BPF probes are not loaded";
	if (d->have_epoch && (d->epoch->degraded & RXB_DEGRADED_NO_NETLINK) && n < max)
		v[n++] = "NIC parameters unavailable (netlink)";
	if (!d->state_ok && n < max)
		v[n++] = "state directory unusable: no history kept";
	if (d->reload.count && !d->reload.ok && n < max)
		v[n++] = "last reload failed: the previous configuration runs";
	for (int i = 0; i < d->flows.n && n < max; i++)
		if (d->flows.v[i].state == FLOW_STALE) {
			v[n++] = "a flow's model is stale (see flows[].solve_error)";
			break;
		}
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
	if (learning && np->started)
		json_double(w, "learning_left_s", (double)(np->learn_until_ns - now) / 1e9);
	else
		json_null(w, "learning_left_s");
	json_uint(w, "changes", np->learn_starts);
	if (np->learn_starts) {
		json_str(w, "last_change", np->why);
		json_double(w, "last_change_age_s", age_s(np->last_change_ns, now));
	} else {
		json_null(w, "last_change");
		json_null(w, "last_change_age_s");
	}
	json_obj_end(w);
}

static void net_probes_text(struct ctlsrv_out *o, const struct daemon *d, uint64_t now)
{
	const struct netplan *np = &d->netplan;

	if (d->net_every_now <= 1)
		ctlsrv_out_puts(o, "Net probes  every epoch");
	else
		ctlsrv_out_printf(o, "Net probes  one epoch in %u", d->net_every_now);
	if (netplan_learning(np, now) && np->started)
		ctlsrv_out_printf(o, ", learning for %.0f s more", (double)(np->learn_until_ns - now) / 1e9);
	if (np->learn_starts)
		ctlsrv_out_printf(o, " (last change %.0f s ago: %s)", age_s(np->last_change_ns, now),
			       np->why);
	ctlsrv_out_puts(o, "\n");
}

static void daemon_json(struct json_writer *w, const struct daemon *d, uint64_t now)
{
	const char *why[12];
	int n = health_reasons(d, why, (int)RXB_ARRAY_SIZE(why));
	struct ctlsrv_stats cs;

	ctlsrv_stats(d->cs, &cs);
	json_obj_begin(w, "daemon");
	json_int(w, "pid", getpid());
	json_double(w, "uptime_s", age_s(d->started_ns, now));
	json_uint(w, "started_unix_s", d->started_unix_s);
	json_str(w, "config_file", d->config_path);
	json_str(w, "health", n ? "degraded" : "ok");
	json_arr_begin(w, "degraded_reasons");
	for (int i = 0; i < n; i++)
		json_str(w, NULL, why[i]);
	json_arr_end(w);
	n = notes(d, why, (int)RXB_ARRAY_SIZE(why));
	json_arr_begin(w, "notes");
	for (int i = 0; i < n; i++)
		json_str(w, NULL, why[i]);
	json_arr_end(w);
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
	if (d->irq_time_accounting >= 0)
		json_bool(w, "irq_time_accounting", d->irq_time_accounting == 1);
	else
		json_null(w, "irq_time_accounting");
	json_obj_begin(w, "state_dir");
	json_str(w, "path", d->state.dir);
	json_bool(w, "ok", d->state_ok);
	json_str(w, "error", d->state.err);
	json_uint(w, "saves", d->state.saves);
	json_uint(w, "history_ports", (uint64_t)d->state.n);
	json_obj_end(w);
	json_obj_begin(w, "reload");
	json_uint(w, "count", d->reload.count);
	json_uint(w, "failures", d->reload.failures);
	if (d->reload.count) {
		json_uint(w, "last_unix_s", d->reload.at_unix_s);
		json_bool(w, "ok", d->reload.ok);
		json_str(w, "message", d->reload.msg);
	} else {
		json_null(w, "last_unix_s");
		json_null(w, "ok");
		json_null(w, "message");
	}
	json_arr_begin(w, "restart_needed");
	for (int i = 0; i < d->reload.nrestart; i++)
		json_str(w, NULL, d->reload.restart[i]);
	json_arr_end(w);
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

	if (!d->have_epoch) {
		json_null(w, "epoch");
		return;
	}
	json_obj_begin(w, "epoch");
	json_uint(w, "seq", e->seq);
	json_double(w, "duration_s", (double)(e->end_ns - e->start_ns) / 1e9);
	json_double(w, "age_s", age_s(e->end_ns, now));
	json_str(w, "attach_mode", e->attach_mode);
	json_arr_begin(w, "degraded");
	for (unsigned bit = 1; bit && bit <= RXB_DEGRADED_PARTIAL_PROBES; bit <<= 1)
		if (e->degraded & bit)
			json_str(w, NULL, collect_json_degraded_name(bit));
	json_arr_end(w);
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
		json_int(w, "cpu", c->cpu);
		json_double(w, "cpu_bound", c->cpu_bound);
		json_double(w, "io_bound", c->io_bound);
		json_double(w, "busy_frac", c->busy_frac);
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

static void senders_summary_json(struct json_writer *w, const struct daemon *d)
{
	struct sendsrv_stats st;

	sendsrv_stats(d->ss, &st);
	json_obj_begin(w, "senders");
	json_uint(w, "port", d->sendsrv_port);
	json_uint(w, "connected", st.conns_active);
	json_uint(w, "awaiting_hello", st.conns_hello);
	json_uint(w, "closing", st.conns_closing);
	json_uint(w, "accepted", st.accepted);
	json_uint(w, "rejected_allow", st.rejected_allow);
	json_uint(w, "rejected_full", st.rejected_full);
	json_uint(w, "frames_in", st.frames_in);
	json_uint(w, "frames_out", st.frames_out);
	json_uint(w, "rate_pushes", st.rate_pushes);
	json_uint(w, "pause_pushes", st.pause_pushes);
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
		flow_json(w, &d->flows.v[i], d, now);
	json_arr_end(w);
	senders_summary_json(w, d);
	if (d->have_epoch)
		collect_json_epoch(w, "measurement", d->epoch, NULL);
	else
		json_null(w, "measurement");
	json_obj_end(w);
}

/* -------------------------------------------------------------- senders -- */

struct senders_ctx {
	struct json_writer *w;
	struct ctlsrv_out *o;
	uint64_t now;
	int n;
};

static void subs_text(char *buf, size_t size, uint16_t subs)
{
	snprintf(buf, size, "%s%s%s", subs & RXBNECK_SUB_RATE ? "rate" : "",
		 (subs & RXBNECK_SUB_RATE) && (subs & RXBNECK_SUB_PAUSE) ? "," : "",
		 subs & RXBNECK_SUB_PAUSE ? "pause" : "");
	if (!buf[0])
		rxb_strlcpy(buf, "-", size);
}

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
	json_double(w, "connected_s", age_s(p->connected_ns, c->now));
	json_double(w, "idle_s", age_s(p->last_rx_ns, c->now));
	json_uint(w, "frames_in", p->frames_in);
	json_uint(w, "frames_out", p->frames_out);
	json_uint(w, "bytes_in", p->bytes_in);
	json_uint(w, "bytes_out", p->bytes_out);
	json_uint(w, "reports", p->reports);
	json_uint(w, "pauses_sent", p->pauses_sent);
	json_uint(w, "out_queued_bytes", p->out_queued_bytes);
	if (p->has_rate)
		rate_json(w, "last_rate", &p->last_rate);
	else
		json_null(w, "last_rate");
	json_obj_end(w);
	c->n++;
}

static void sender_text(void *arg, const struct sendsrv_peer *p)
{
	struct senders_ctx *c = arg;
	char subs[32], rate[48] = "-";

	subs_text(subs, sizeof(subs), p->granted);
	if (p->has_rate)
		snprintf(rate, sizeof(rate), "%.1f Mb/s @%llu", p->last_rate.rate_bps / 1e6,
			 (unsigned long long)p->last_rate.epoch);
	ctlsrv_out_printf(c->o, "%-5llu %-26s %-5u %-10s %8u %8.1f %7.0f %-20s %s\n",
		       (unsigned long long)p->id, p->addr_str, p->hello.flow_port, subs,
		       p->hello.rtt_us, age_s(p->connected_ns, c->now),
		       (double)p->frames_out, rate, p->hello.name[0] ? p->hello.name : "-");
	c->n++;
}

static void senders_cmd(struct daemon *d, const struct ctl_request *req, struct ctl_reply *rep)
{
	struct senders_ctx c = { .o = &rep->body, .now = rxb_mono_ns() };
	struct json_writer w;

	if (req->json) {
		json_init(&w, false);
		c.w = &w;
		json_obj_begin(&w, NULL);
		json_arr_begin(&w, "senders");
		sendsrv_foreach_sender(d->ss, sender_json, &c);
		json_arr_end(&w);
		json_obj_end(&w);
		if (json_ok(&w)) {
			ctlsrv_out_write(&rep->body, json_text(&w), json_len(&w));
			ctlsrv_out_puts(&rep->body, "\n");
		} else {
			rep->err = CTL_ERR_INTERNAL;
			rxb_strlcpy(rep->msg, "formatting JSON failed", sizeof(rep->msg));
		}
		json_finish(&w);
		return;
	}
	ctlsrv_out_printf(&rep->body, "%-5s %-26s %-5s %-10s %8s %8s %7s %-20s %s\n", "ID",
		       "ADDRESS", "PORT", "GRANTED", "RTT_US", "CONN_S", "FRAMES", "LAST RATE",
		       "NAME");
	sendsrv_foreach_sender(d->ss, sender_text, &c);
	if (!c.n)
		ctlsrv_out_puts(&rep->body, "(no senders connected)\n");
}

/* ----------------------------------------------------------------- text -- */

static void fmt_rate(char *buf, size_t size, double bps)
{
	if (!isfinite(bps))
		snprintf(buf, size, "-");
	else if (bps >= 1e9)
		snprintf(buf, size, "%.3f Gb/s", bps / 1e9);
	else
		snprintf(buf, size, "%.1f Mb/s", bps / 1e6);
}

static void value_text(struct ctlsrv_out *o, const char *name, const struct value *v,
		       const char *fmt)
{
	if (v->src == VALUE_MISSING) {
		ctlsrv_out_printf(o, " %s ? (%s)", name, v->why);
		return;
	}
	ctlsrv_out_printf(o, " %s ", name);
	ctlsrv_out_printf(o, fmt, v->v);
	ctlsrv_out_printf(o, " (%s)", value_src_name(v->src));
}

static void flags_text(char *buf, size_t size, uint16_t flags)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < RXB_ARRAY_SIZE(rate_flag_names); i++)
		if (flags & (1u << i) && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
						rate_flag_names[i]);
	if (!buf[0])
		rxb_strlcpy(buf, "none", size);
}

static void flow_text(struct ctlsrv_out *o, const struct flow *fl, const struct daemon *d)
{
	const struct inputs *in = &fl->inputs;
	const struct flow_xfer *x = &fl->xfer;
	char r1[32], r2[32], flags[64], pbuf[1024];

	ctlsrv_out_printf(o, "Flow %-5u  %s", fl->port, flows_state_name(fl->state));
	if (fl->have_good) {
		fmt_rate(r1, sizeof(r1), fl->good.res.rate_bps);
		ctlsrv_out_printf(o, ": %s  loss %.3g  T %.3f s  confidence %u  (epoch %llu%s)",
			       r1, fl->good.res.loss, fl->good.res.time_s, fl->good.confidence,
			       (unsigned long long)fl->good.epoch,
			       fl->good.unconstrained ? ", host not the bottleneck" : "");
	}
	ctlsrv_out_puts(o, "\n");
	if (fl->solve_err)
		ctlsrv_out_printf(o, "            problem   %s (epoch %llu)\n", fl->solve_why,
			       (unsigned long long)fl->solve_err_epoch);
	fmt_rate(r1, sizeof(r1), x->min_rate_bps);
	fmt_rate(r2, sizeof(r2), x->line_rate_bps);
	ctlsrv_out_printf(o, "            transfer  payload %.0f B, file %.0f B, one-way %.3f ms, "
		       "search %s .. %s (%s%s%s)\n", x->payload_bytes, x->file_bytes,
		       x->one_way_delay_s * 1e3, r1, r2, x->from_sender ? "sender " : "config",
		       x->from_sender ? x->sender : "", fl->configured ? ", configured" : "");
	ctlsrv_out_printf(o, "            traffic   %s in %llu out %llu drops %llu (rcvbuf %llu)\n",
		       in->traffic.sock_seen ? "" : "(not reported)",
		       (unsigned long long)in->traffic.pkts_in,
		       (unsigned long long)in->traffic.pkts_out,
		       (unsigned long long)in->traffic.drops,
		       (unsigned long long)in->traffic.rcvbuf_drops);
	ctlsrv_out_printf(o, "            stage B  %s", in->b.present ? "" : " (not modelled)");
	value_text(o, "#C", &in->b.cpu_bound, "%.2f");
	value_text(o, "#I", &in->b.io_bound, "%.2f");
	for (int i = 0; i < in->b.ncpus; i++)
		ctlsrv_out_printf(o, "%s%d:%.0f%%", i ? "," : " on cpu", in->b.cpu[i],
			       in->b.cpu_share[i] * 100);
	ctlsrv_out_puts(o, "\n                     ");
	value_text(o, "ns/pkt", &in->b.cpu_ns_per_pkt, "%.0f");
	if (in->b.cpu_ns_per_pkt_basis != COST_NONE)
		ctlsrv_out_printf(o, " [%s]", cost_basis_name(in->b.cpu_ns_per_pkt_basis));
	if (isfinite(in->b.cpu_ns_per_pkt_full))
		ctlsrv_out_printf(o, " full-queue ns/pkt %.0f", in->b.cpu_ns_per_pkt_full);
	if (isfinite(in->b.cpu_ns_per_pkt_capped))
		ctlsrv_out_printf(o, " (estimated %.0f)", in->b.cpu_ns_per_pkt_capped);
	value_text(o, "N", &in->b.pkts_per_wakeup, "%.1f");
	value_text(o, "K", &in->b.queue_pkts, "%.0f");
	value_text(o, "mu_P-Net/s", &in->b.mu_net_per_s, "%.4g");
	if (in->b.irq_ns_per_pkt.v > 0)
		value_text(o, "irq ns/pkt", &in->b.irq_ns_per_pkt, "%.0f");
	if (in->b.loss_episode_pkts.src != VALUE_MISSING)
		value_text(o, "pkts/loss episode", &in->b.loss_episode_pkts, "%.0f");
	if (in->b.rate_rel_sd.src != VALUE_MISSING)
		value_text(o, "rate rel. sd", &in->b.rate_rel_sd, "%.3f");
	ctlsrv_out_puts(o, "\n");
	ctlsrv_out_printf(o, "            stage A  %s %s", in->a.present ? "" : " (not modelled)",
		       in->a.dev[0] ? in->a.dev : "");
	value_text(o, "polls/s", &in->a.mu_per_s, "%.4g");
	value_text(o, "N", &in->a.pkts_per_poll, "%.1f");
	value_text(o, "K", &in->a.queue_pkts, "%.0f");
	if (in->a.dgrams_per_skb.v > 1.05)
		value_text(o, "datagrams/skb", &in->a.dgrams_per_skb, "%.1f");
	ctlsrv_out_puts(o, "\n");
	if (in->why[0])
		ctlsrv_out_printf(o, "            note      %s\n", in->why);
	if (fl->has_rate) {
		fmt_rate(r1, sizeof(r1), (double)fl->rate.rate_bps);
		flags_text(flags, sizeof(flags), fl->rate.flags);
		ctlsrv_out_printf(o, "            RATE      %s flags %s confidence %u epoch %llu, "
			       "%d senders subscribed got it\n", r1, flags, fl->rate.confidence,
			       (unsigned long long)fl->rate.epoch, fl->last_sent);
		if (fl->has_rate_between) {
			fmt_rate(r1, sizeof(r1), (double)fl->rate_between.rate_bps);
			ctlsrv_out_printf(o, "            RATE+     %s between pauses (paused %.0f %% "
				       "of the time), loss %.3g, T %.3f s: to senders that pause\n",
				       r1, fl->good.between.pause_fraction * 100,
				       fl->rate_between.loss, fl->rate_between.xfer_time_us / 1e6);
		}
	}
	if (fl->has_report) {
		fmt_rate(r1, sizeof(r1), (double)fl->last_report.rate_bps);
		ctlsrv_out_printf(o, "            report    %.3f s at %s, %u rounds (%llu reports)\n",
			       fl->last_report.elapsed_us / 1e6, r1, fl->last_report.rounds,
			       (unsigned long long)fl->reports);
	}
	pause_text(&fl->pause, pbuf, sizeof(pbuf));
	ctlsrv_out_puts(o, pbuf);
	(void)d;
}

static void status_text(struct ctlsrv_out *o, const struct daemon *d)
{
	const char *why[12];
	int n = health_reasons(d, why, (int)RXB_ARRAY_SIZE(why));
	uint64_t now = rxb_mono_ns();
	struct sendsrv_stats st;

	ctlsrv_out_printf(o, "rxbneckd %s, pid %d, up %.0f s, config %s\n", RXB_VERSION,
		       (int)getpid(), age_s(d->started_ns, now), d->config_path);
	ctlsrv_out_printf(o, "Health      %s\n", n ? "degraded" : "ok");
	for (int i = 0; i < n; i++)
		ctlsrv_out_printf(o, "            - %s\n", why[i]);
	n = notes(d, why, (int)RXB_ARRAY_SIZE(why));
	for (int i = 0; i < n; i++)
		ctlsrv_out_printf(o, "            note: %s\n", why[i]);
	if (d->have_epoch) {
		ctlsrv_out_printf(o, "Epoch       %llu every %u ms, %.2f s ago; collect %.1f ms, "
			       "model %.1f ms; probes %s\n",
			       (unsigned long long)d->epoch->seq, d->cfg.measure.interval_ms,
			       age_s(d->epoch->end_ns, now), d->collect_ms,
			       d->flows.last_solve_ms, d->epoch->attach_mode);
		if (d->epoch->degraded_reason[0])
			ctlsrv_out_printf(o, "            %s\n", d->epoch->degraded_reason);
	} else {
		ctlsrv_out_printf(o, "Epoch       none yet (every %u ms)\n",
			       d->cfg.measure.interval_ms);
	}
	net_probes_text(o, d, now);
	if (d->reload.count)
		ctlsrv_out_printf(o, "Reload      %llu (%llu failed); last %s: %s\n",
			       (unsigned long long)d->reload.count,
			       (unsigned long long)d->reload.failures,
			       d->reload.ok ? "ok" : "FAILED", d->reload.msg);
	for (int i = 0; i < d->reload.nrestart; i++)
		ctlsrv_out_printf(o, "            restart needed for %s\n", d->reload.restart[i]);
	ctlsrv_out_puts(o, "CPUs        cpu     #C     #I   busy  runnable\n");
	for (int i = 0; d->have_epoch && i < d->epoch->ncpus; i++) {
		const struct rxb_cpu_meas *c = &d->epoch->cpus[i];

		ctlsrv_out_printf(o, "            %3d %6.2f %6.2f %5.0f%% %9.2f\n", c->cpu,
			       c->cpu_bound, c->io_bound, c->busy_frac * 100, c->runnable_avg);
	}
	if (!d->flows.n)
		ctlsrv_out_puts(o, "Flows       none: no watched port and no sender\n");
	for (int i = 0; i < d->flows.n; i++)
		flow_text(o, &d->flows.v[i], d);
	sendsrv_stats(d->ss, &st);
	ctlsrv_out_printf(o, "Senders     %u connected on port %u (%llu accepted, %llu refused); "
		       "%llu RATE pushes, %llu PAUSE pushes, %llu reports\n", st.conns_active, d->sendsrv_port,
		       (unsigned long long)st.accepted,
		       (unsigned long long)(st.rejected_allow + st.rejected_full),
		       (unsigned long long)st.rate_pushes, (unsigned long long)st.pause_pushes,
		       (unsigned long long)st.reports);
}

/* ------------------------------------------------------------- dispatch -- */

static void reload_cmd(struct daemon *d, const struct ctl_request *req,
		       struct ctl_reply *rep)
{
	int err;

	rxb_notice("reload requested by rxbneckctl (pid %d, uid %u)", (int)req->pid,
		   (unsigned)req->uid);
	err = daemon_reload(d);
	if (err) {
		rep->err = CTL_ERR_FAILED;
		snprintf(rep->msg, sizeof(rep->msg), "reload failed, the running "
			 "configuration stays: %.200s", d->reload.msg);
		return;
	}
	if (req->json) {
		struct json_writer w;

		json_init(&w, false);
		json_obj_begin(&w, NULL);
		json_bool(&w, "ok", true);
		json_str(&w, "changed", d->reload.msg);
		json_arr_begin(&w, "restart_needed");
		for (int i = 0; i < d->reload.nrestart; i++)
			json_str(&w, NULL, d->reload.restart[i]);
		json_arr_end(&w);
		json_obj_end(&w);
		if (json_ok(&w)) {
			ctlsrv_out_write(&rep->body, json_text(&w), json_len(&w));
			ctlsrv_out_puts(&rep->body, "\n");
		}
		json_finish(&w);
		return;
	}
	ctlsrv_out_printf(&rep->body, "reloaded %s: %s\n", d->config_path, d->reload.msg);
	for (int i = 0; i < d->reload.nrestart; i++)
		ctlsrv_out_printf(&rep->body, "restart needed for %s\n", d->reload.restart[i]);
}

static void status_cmd(struct daemon *d, const struct ctl_request *req,
		       struct ctl_reply *rep)
{
	struct json_writer w;

	if (!req->json) {
		status_text(&rep->body, d);
		return;
	}
	json_init(&w, false);
	status_json(&w, d);
	if (json_ok(&w)) {
		ctlsrv_out_write(&rep->body, json_text(&w), json_len(&w));
		ctlsrv_out_puts(&rep->body, "\n");
	} else {
		rep->err = CTL_ERR_INTERNAL;
		rxb_strlcpy(rep->msg, "formatting JSON failed", sizeof(rep->msg));
	}
	json_finish(&w);
}

static void version_cmd(const struct ctl_request *req, struct ctl_reply *rep)
{
	if (req->json)
		ctlsrv_out_printf(&rep->body, "{\"version\":\"%s\",\"ctl_protocol\":%d}\n",
			       RXB_VERSION, CTL_PROTOCOL_VERSION);
	else
		ctlsrv_out_printf(&rep->body, "rxbneckd %s (control protocol %d)\n", RXB_VERSION,
			       CTL_PROTOCOL_VERSION);
}

void status_dispatch(struct daemon *d, const struct ctl_request *req,
		     struct ctl_reply *rep)
{
	static const struct {
		const char *verb;
	} verbs[] = { { "status" }, { "senders" }, { "reload" }, { "version" } };
	bool known = false;

	for (size_t i = 0; i < RXB_ARRAY_SIZE(verbs); i++)
		known |= !strcmp(req->verb, verbs[i].verb);
	if (!known) {
		rep->err = CTL_ERR_UNKNOWN;
		snprintf(rep->msg, sizeof(rep->msg),
			 "unknown command '%.40s' (status, senders, reload, version)", req->verb);
		return;
	}
	for (int i = 0; i < req->argc; i++)
		if (strcmp(req->argv[i], "json") && strcmp(req->argv[i], "text")) {
			rep->err = CTL_ERR_BAD_ARGUMENT;
			snprintf(rep->msg, sizeof(rep->msg),
				 "'%.40s' takes 'json' or 'text', not '%.40s'", req->verb,
				 req->argv[i]);
			return;
		}
	if (!strcmp(req->verb, "status"))
		status_cmd(d, req, rep);
	else if (!strcmp(req->verb, "senders"))
		senders_cmd(d, req, rep);
	else if (!strcmp(req->verb, "reload"))
		reload_cmd(d, req, rep);
	else
		version_cmd(req, rep);
}
