// SPDX-License-Identifier: GPL-2.0-or-later
/* The Prometheus exposition of rxbneckd. See metrics.h and docs/metrics.md. */
#include "daemon/serve/metrics.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/util.h"
#include "daemon/collect/collect_json.h"
#include "daemon/daemon.h"
#include "daemon/serve/metrics_totals.h"
#include "daemon/serve/metricsrv.h"
#include "daemon/serve/status.h"
#include "daemon/serve/status_flow.h"

#define P(name) "rxbneck_" name

/* ------------------------------------------------------------ helpers -- */

static void gauge(struct promtext *w, const char *name, const char *help, double v)
{
	promtext_family(w, name, PROMTEXT_GAUGE, help);
	promtext_sample(w, NULL, NULL, 0, v);
}

static void counter(struct promtext *w, const char *name, const char *help, uint64_t v)
{
	promtext_family(w, name, PROMTEXT_COUNTER, help);
	promtext_sample_u64(w, NULL, NULL, 0, v);
}

/* A per-flow value; false when the flow has none now (no sample). */
typedef bool (*flow_value_fn)(const struct flow *fl, double *v);

static void flow_gauge(struct promtext *w, const struct daemon *d, const char *name,
		       const char *help, flow_value_fn get)
{
	char port[8];
	struct promtext_label l = { "port", port };
	double v;

	promtext_family(w, name, PROMTEXT_GAUGE, help);
	for (int i = 0; i < d->flows.n; i++) {
		if (!get(&d->flows.v[i], &v))
			continue;
		snprintf(port, sizeof(port), "%u", d->flows.v[i].port);
		promtext_sample(w, NULL, &l, 1, v);
	}
}

/* --------------------------------------------------------- the daemon -- */

static void info_metrics(struct promtext *w, const struct daemon *d)
{
	struct promtext_label l[2];
	char groups[64] = "";
	struct utsname u;

	promtext_family(w, P("build_info"), PROMTEXT_GAUGE, "rxbneckd's version, as a label.");
	l[0] = (struct promtext_label){ "version", RXB_VERSION };
	promtext_sample(w, NULL, l, 1, 1);
	promtext_family(w, P("kernel_info"), PROMTEXT_GAUGE,
			"The running kernel's release, as a label.");
	if (uname(&u) == 0) {
		l[0] = (struct promtext_label){ "release", u.release };
		promtext_sample(w, NULL, l, 1, 1);
	}
	promtext_family(w, P("probe_info"), PROMTEXT_GAUGE,
			"How the BPF probes attach (tp_btf, raw_tp, none) and which probe "
			"groups are loaded, as labels; from the latest epoch.");
	if (!d->have_epoch)
		return;
	for (unsigned int bit = 1; bit <= RXB_PROBE_BLKIO; bit <<= 1)
		if (d->epoch->probes & bit) {
			size_t n = strlen(groups);

			snprintf(groups + n, sizeof(groups) - n, "%s%s", n ? "," : "",
				 collect_json_probe_group_name(bit));
		}
	l[0] = (struct promtext_label){ "attach_mode", d->epoch->attach_mode };
	l[1] = (struct promtext_label){ "probes", groups[0] ? groups : "none" };
	promtext_sample(w, NULL, l, 2, 1);
}

static void epoch_metrics(struct promtext *w, const struct daemon *d)
{
	gauge(w, P("start_time_seconds"), "When rxbneckd started, in seconds since the epoch "
	      "of Unix time.", (double)d->started_unix_s);
	gauge(w, P("epoch_interval_seconds"), "The configured epoch length ([measure] "
	      "interval_ms).", d->cfg.measure.interval_ms / 1e3);
	promtext_family(w, P("epoch"), PROMTEXT_GAUGE, "Number of the latest epoch (epoch.seq "
			"in rxbneckctl status): the epoch the other values are of.");
	if (d->have_epoch)
		promtext_sample_u64(w, NULL, NULL, 0, d->epoch->seq);
	counter(w, P("epochs_total"), "Epochs measured and modelled.", d->epochs);
	counter(w, P("epochs_late_total"), "Epochs skipped because the loop was busy.",
		d->overruns);
	gauge(w, P("epoch_work_seconds"), "Time the latest epoch's measuring and modelling took.",
	      d->epoch_ms_spent / 1e3);
	promtext_family(w, P("solve_duration_seconds"), PROMTEXT_HISTOGRAM,
			"Time of each successful solve of a flow's model.");
	promtext_histogram(w, NULL, 0, &d->metrics_totals.solve_s);
	counter(w, P("reloads_total"), "Configuration reloads asked for (SIGHUP, rxbneckctl "
		"reload).", d->reload.count);
	counter(w, P("reload_failures_total"), "Reloads refused (the running configuration "
		"stayed).", d->reload.failures);
}

static void health_metrics(struct promtext *w, const struct daemon *d)
{
	uint32_t h = status_health(d);
	struct promtext_label l;

	gauge(w, P("degraded"), "1 while rxbneckctl status says the health is degraded, else 0.",
	      h ? 1 : 0);
	promtext_family(w, P("degraded_reason"), PROMTEXT_GAUGE,
			"1 for each reason the daemon is degraded now, 0 for the others.");
	for (unsigned int i = 0; i < STATUS_HEALTH_N; i++) {
		l = (struct promtext_label){ "reason", status_health_name(i) };
		promtext_sample(w, NULL, &l, 1, (h >> i) & 1);
	}
}

static void cpu_metrics(struct promtext *w, const struct daemon *d)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} fam[] = {
		{ P("cpu_bound_tasks"), "Time-weighted number of CPU-bound tasks on the CPU in "
		  "the latest epoch (#C).", offsetof(struct rxb_cpu_meas, cpu_bound) },
		{ P("cpu_io_bound_tasks"), "Time-weighted number of I/O-bound tasks on the CPU in "
		  "the latest epoch (#I).", offsetof(struct rxb_cpu_meas, io_bound) },
	};
	char cpu[12];
	struct promtext_label l = { "cpu", cpu };

	for (size_t f = 0; f < RXB_ARRAY_SIZE(fam); f++) {
		promtext_family(w, fam[f].name, PROMTEXT_GAUGE, fam[f].help);
		for (int i = 0; d->have_epoch && i < d->epoch->ncpus; i++) {
			const struct rxb_cpu_meas *c = &d->epoch->cpus[i];
			double v = *(const double *)((const char *)c + fam[f].off);

			snprintf(cpu, sizeof(cpu), "%d", c->cpu);
			if (isfinite(v))
				promtext_sample(w, NULL, &l, 1, v);
		}
	}
}

/* ------------------------------------------------------- flows: advice -- */

static bool get_senders(const struct flow *fl, double *v)
{
	*v = fl->nsenders;
	return true;
}

/*
 * The per-port advice series are of the flow's first transfer (m[0]: the
 * only one without senders), as status's flows[] fields outside
 * transfers[] are.
 */
static bool get_rate(const struct flow *fl, double *v)
{
	*v = fl->m[0].rate.rate_bps / 8.0;
	return fl->m[0].has_rate;
}

static bool get_rate_epoch(const struct flow *fl, double *v)
{
	*v = (double)fl->m[0].rate.epoch;
	return fl->m[0].has_rate;
}

/* Loss and time are "not computed" (0) in a provisional rate: no sample. */
static bool get_loss(const struct flow *fl, double *v)
{
	*v = fl->m[0].rate.loss;
	return fl->m[0].has_rate && fl->m[0].rate.xfer_time_us;
}

static bool get_time(const struct flow *fl, double *v)
{
	*v = fl->m[0].rate.xfer_time_us / 1e6;
	return fl->m[0].has_rate && fl->m[0].rate.xfer_time_us;
}

static bool get_confidence(const struct flow *fl, double *v)
{
	*v = fl->m[0].rate.confidence / 1000.0;
	return fl->m[0].has_rate;
}

/* Predictions against reported outcomes (outcome.h): no sample before one compares. */
static bool get_time_ratio(const struct flow *fl, double *v)
{
	struct outcome_stats s;

	outcome_stats(&fl->outcome, &s);
	*v = s.time_ratio_median;
	return s.n_time > 0;
}

static bool get_loss_error(const struct flow *fl, double *v)
{
	struct outcome_stats s;

	outcome_stats(&fl->outcome, &s);
	*v = s.loss_err_pp_mean / 100;
	return s.n_loss > 0;
}

static bool get_line_rate(const struct flow *fl, double *v)
{
	*v = fl->m[0].xfer.line_rate_bps / 8.0;
	return true;
}

static bool get_cost(const struct flow *fl, double *v)
{
	const struct value *c = &fl->inputs.b.cpu_ns_per_pkt;

	*v = c->v / 1e9;
	return c->src != VALUE_MISSING && isfinite(c->v);
}

static void flow_labels_metrics(struct promtext *w, const struct daemon *d)
{
	char port[8];
	struct promtext_label l[2] = { { "port", port }, { NULL, NULL } };

	promtext_family(w, P("flow_state"), PROMTEXT_GAUGE, "1 for the flow's state "
			"(none, provisional, model, stale), 0 for the others.");
	for (int i = 0; i < d->flows.n; i++) {
		snprintf(port, sizeof(port), "%u", d->flows.v[i].port);
		for (int s = FLOW_NONE; s <= FLOW_STALE; s++) {
			l[1] = (struct promtext_label){ "state", flows_state_name(s) };
			promtext_sample(w, NULL, l, 2, d->flows.v[i].m[0].state == (enum flow_state)s);
		}
	}
	promtext_family(w, P("flow_advice_flag"), PROMTEXT_GAUGE, "1 for each flag the flow's "
			"advised rate carries (degraded, stale, no_traffic, unconstrained, "
			"between_pauses, provisional, default_cost), 0 for the others.");
	for (int i = 0; i < d->flows.n; i++) {
		if (!d->flows.v[i].m[0].has_rate)
			continue;
		snprintf(port, sizeof(port), "%u", d->flows.v[i].port);
		for (unsigned int b = 0; b < STATUS_FLOW_RATE_FLAGS; b++) {
			l[1] = (struct promtext_label){ "flag", status_flow_rate_flag_name(b) };
			promtext_sample(w, NULL, l, 2, (d->flows.v[i].m[0].rate.flags >> b) & 1);
		}
	}
}

/*
 * The stream-count advice (STREAMS frames) per peer of a flow: the
 * remote address (label peer) and the local port. At most [streams]
 * max_peers series each.
 */
static void flow_streams_metrics(struct promtext *w, const struct daemon *d)
{
	static const char *const names[] = { P("flow_advised_streams"),
					      P("flow_streams_confidence_ratio") };
	static const char *const helps[] = {
		"Parallel TCP streams the peer's transfers to the port are advised to use "
		"(STREAMS).",
		"Confidence in the advised stream count, 0..1.",
	};
	const struct advisor *a = &d->streams.adv;
	char port[8], addr[INET6_ADDRSTRLEN];
	struct promtext_label l[2] = { { "port", port }, { "peer", addr } };

	for (unsigned int k = 0; k < RXB_ARRAY_SIZE(names); k++) {
		promtext_family(w, names[k], PROMTEXT_GAUGE, helps[k]);
		for (uint32_t i = 0; d->streams.on && a->peers && i < a->p.max_peers; i++) {
			const struct advisor_peer *p = &a->peers[i];

			if (!p->used || !p->adv.valid)
				continue;
			snprintf(port, sizeof(port), "%u", p->port);
			advisor_addr_text(p->addr, addr, sizeof(addr));
			promtext_sample(w, NULL, l, 2, k == 0 ? (double)p->adv.streams
							     : p->adv.confidence / 1000.0);
		}
	}
}

/* ------------------------------------------- flows: the buffer advice -- */

/*
 * What the policy decides now: RRDA's f of eq. (2); the model's size
 * against the socket's, beyond the hysteresis it applies with.
 */
static int buffer_decision(const struct buffer_set *b, const struct buffer_sock *x)
{
	double cur = x->rcvbuf, to = (double)x->recommend_bytes;

	if (b->p.policy == BUFFER_RRDA)
		return x->have_decision ? x->last.f : 0;
	if (!x->model.valid || fabs(to - cur) <= BUFFER_HYSTERESIS * cur)
		return 0;
	return to > cur ? 1 : -1;
}

/* Which value of a watched socket a buffer gauge shows. */
enum buffer_field { BUF_NOW, BUF_HELD, BUF_TARGET, BUF_DECISION };

static void buffer_gauge(struct promtext *w, const struct buffer_set *b, const char *name,
			 const char *help, enum buffer_field f)
{
	char port[8], sock[24];
	struct promtext_label l[2] = { { "port", port }, { "socket", sock } };

	promtext_family(w, name, PROMTEXT_GAUGE, help);
	for (int i = 0; i < b->n; i++) {
		const struct buffer_sock *x = &b->v[i];
		double v = f == BUF_NOW ? x->rcvbuf : f == BUF_HELD ? x->rmem_alloc :
			   f == BUF_TARGET ? (double)x->recommend_bytes : buffer_decision(b, x);

		if (!x->seen)
			continue;
		snprintf(port, sizeof(port), "%u", x->port);
		snprintf(sock, sizeof(sock), "%llu", (unsigned long long)x->inode);
		promtext_sample(w, NULL, l, 2, v);
	}
}

/* Per watched socket while [buffer] is on (docs/buffer.md). */
static void buffer_metrics(struct promtext *w, const struct daemon *d)
{
	const struct buffer_set *b = &d->buf.set;

	if (b->p.mode == BUFFER_OFF)
		return;
	buffer_gauge(w, b, P("buffer_bytes"), "The socket's receive buffer now (sk_rcvbuf).",
		     BUF_NOW);
	buffer_gauge(w, b, P("buffer_held_bytes"), "Memory the socket's queued datagrams hold.",
		     BUF_HELD);
	buffer_gauge(w, b, P("buffer_target_bytes"), "The size the [buffer] policy wants for "
		     "the socket (BUFFER's advice).", BUF_TARGET);
	buffer_gauge(w, b, P("buffer_decision"), "The policy's decision now: 1 grow, -1 "
		     "shrink, 0 hold.", BUF_DECISION);
	counter(w, P("buffer_changes_total"), "Buffer sizes the daemon set (apply mode).",
		d->buf.changes);
}

/* Per-flow gauges, exposed in the order of their table. */
struct flow_series {
	const char *name;
	const char *help;
	flow_value_fn get;
};

static void flow_gauges(struct promtext *w, const struct daemon *d,
			const struct flow_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		flow_gauge(w, d, s[i].name, s[i].help, s[i].get);
}

static const struct flow_series advice_series[] = {
	{ P("flow_senders"), "Senders connected for the flow.", get_senders },
	{ P("flow_advised_rate_bytes_per_second"),
	  "The rate the flow's senders are told to send at (RATE).", get_rate },
	{ P("flow_advice_epoch"), "The epoch the advised rate was computed in.",
	  get_rate_epoch },
	{ P("flow_predicted_loss_ratio"), "Fraction of packets predicted lost at the advised "
	  "rate.", get_loss },
	{ P("flow_predicted_transfer_seconds"), "Transfer time predicted at the advised rate "
	  "for the flow's transfer.", get_time },
	{ P("flow_confidence_ratio"), "Confidence in the advised rate, 0..1.", get_confidence },
	{ P("flow_line_rate_bytes_per_second"), "The highest rate considered for the flow "
	  "(the sender's, else [model] line_rate_bps).", get_line_rate },
};

/* The predictions against the outcomes the flow's senders reported. */
static const struct flow_series prediction_series[] = {
	{ P("flow_prediction_time_ratio"), "Median of measured / predicted transfer time "
	  "over the flow's last reported transfers.", get_time_ratio },
	{ P("flow_prediction_loss_error_ratio"), "Mean absolute error of the predicted "
	  "first-round loss over the flow's last reported transfers.", get_loss_error },
};

static void flow_advice_metrics(struct promtext *w, const struct daemon *d)
{
	flow_gauges(w, d, advice_series, RXB_ARRAY_SIZE(advice_series));
	flow_labels_metrics(w, d);
	flow_streams_metrics(w, d);
	buffer_metrics(w, d);
	flow_gauges(w, d, prediction_series, RXB_ARRAY_SIZE(prediction_series));
}

/* --------------------------------------------------- flows: the model -- */

static void flow_model_metrics(struct promtext *w, const struct daemon *d)
{
	char port[8];
	struct promtext_label l[2] = { { "port", port }, { "stage", NULL } };

	flow_gauge(w, d, P("flow_packet_cost_seconds"), "The receiver's CPU time per packet "
		   "(the model's stage B cost).", get_cost);
	promtext_family(w, P("flow_queue_capacity_packets"), PROMTEXT_GAUGE, "Packets the "
			"stage's queue holds: the socket buffer (socket), the RX ring or "
			"backlog (nic).");
	for (int i = 0; i < d->flows.n; i++) {
		const struct inputs *in = &d->flows.v[i].inputs;

		snprintf(port, sizeof(port), "%u", d->flows.v[i].port);
		if (in->a.queue_pkts.src != VALUE_MISSING) {
			l[1].value = "nic";
			promtext_sample(w, NULL, l, 2, in->a.queue_pkts.v);
		}
		if (in->b.queue_pkts.src != VALUE_MISSING) {
			l[1].value = "socket";
			promtext_sample(w, NULL, l, 2, in->b.queue_pkts.v);
		}
	}
	promtext_family(w, P("flow_stage_capacity_bytes_per_second"), PROMTEXT_GAUGE,
			"The stage's capacity in the latest good solve: nic (NIC to stack) or "
			"socket (socket to application, the receiving host).");
	for (int i = 0; i < d->flows.n; i++) {
		const struct flow_estimate *g = &d->flows.v[i].m[0].good;

		if (!d->flows.v[i].m[0].have_good)
			continue;
		snprintf(port, sizeof(port), "%u", d->flows.v[i].port);
		for (uint32_t s = 0; s < g->nstages && s < BNECK_MAX_STAGES; s++) {
			l[1].value = g->inputs[s].load_independent ? "nic" : "socket";
			promtext_sample(w, NULL, l, 2, g->res.stage[s].capacity_bps / 8.0);
		}
	}
}

/* ------------------------------------------------- flows: the counters -- */

static void flow_port_counter(struct promtext *w, const struct daemon *d, const char *name,
			      const char *help, size_t off, bool is_double)
{
	char port[8];
	struct promtext_label l = { "port", port };

	promtext_family(w, name, PROMTEXT_COUNTER, help);
	for (int i = 0; i < d->flows.n; i++) {
		const struct metrics_port *p = metrics_totals_port(&d->metrics_totals,
								   d->flows.v[i].port);
		const char *f;

		if (!p)
			continue;
		f = (const char *)p + off;
		snprintf(port, sizeof(port), "%u", p->port);
		if (is_double)
			promtext_sample(w, NULL, &l, 1, *(const double *)f);
		else
			promtext_sample_u64(w, NULL, &l, 1, *(const uint64_t *)f);
	}
}

static void flow_traffic_metrics(struct promtext *w, const struct daemon *d)
{
	char port[8];
	struct promtext_label l[2] = { { "port", port }, { "reason", NULL } };

	flow_port_counter(w, d, P("flow_received_packets_total"), "Packets that arrived at the "
			  "flow's socket, in the epochs that counted them.",
			  offsetof(struct metrics_port, pkts_in), false);
	flow_port_counter(w, d, P("flow_read_packets_total"), "Packets the application read "
			  "from the flow's socket, in the epochs that counted them.",
			  offsetof(struct metrics_port, pkts_out), false);
	flow_port_counter(w, d, P("flow_counted_seconds_total"), "Length of the epochs that "
			  "counted the flow's packets (the per-packet probes attach one epoch "
			  "in [measure] net_probe_every).",
			  offsetof(struct metrics_port, counted_s), true);
	flow_port_counter(w, d, P("flow_reports_total"), "Transfer reports from the flow's "
			  "senders.", offsetof(struct metrics_port, reports), false);
	promtext_family(w, P("flow_dropped_packets_total"), PROMTEXT_COUNTER, "Packets of the "
			"flow's socket the kernel dropped, by its drop reason (unknown: only "
			"the number was measured).");
	for (int i = 0; i < d->flows.n; i++) {
		const struct metrics_port *p = metrics_totals_port(&d->metrics_totals,
								   d->flows.v[i].port);

		for (int r = 0; p && r < p->nreasons; r++) {
			snprintf(port, sizeof(port), "%u", p->port);
			l[1].value = p->drops[r].reason;
			promtext_sample_u64(w, NULL, l, 2, p->drops[r].pkts);
		}
	}
}

/* ----------------------------------------------------- probes, servers -- */

static void probe_metrics(struct promtext *w, const struct daemon *d)
{
	const struct metrics_totals *t = &d->metrics_totals;
	struct promtext_label l = { "program", NULL };

	promtext_family(w, P("probe_runs_total"), PROMTEXT_COUNTER, "Runs of the BPF program "
			"(kernel BPF statistics; none without them).");
	for (int i = 0; i < t->nprogs; i++) {
		l.value = t->progs[i].prog;
		promtext_sample_u64(w, NULL, &l, 1, t->progs[i].runs);
	}
	promtext_family(w, P("probe_run_seconds_total"), PROMTEXT_COUNTER, "CPU time the BPF "
			"program ran (kernel BPF statistics; none without them).");
	for (int i = 0; i < t->nprogs; i++) {
		l.value = t->progs[i].prog;
		promtext_sample(w, NULL, &l, 1, t->progs[i].run_ns / 1e9);
	}
}

static void sender_metrics(struct promtext *w, const struct daemon *d)
{
	struct status_refusal refused[STATUS_REFUSALS];
	struct sendsrv_stats st;
	struct promtext_label l;

	sendsrv_stats(d->ss, &st);
	gauge(w, P("senders_connected"), "Senders connected past HELLO.", st.conns_active);
	counter(w, P("sender_connections_accepted_total"), "Sender connections accepted.",
		st.accepted);
	promtext_family(w, P("sender_connections_refused_total"), PROMTEXT_COUNTER,
			"Sender connections refused: outside [control] allow, or beyond the "
			"connection limit.");
	l = (struct promtext_label){ "reason", "allow" };
	promtext_sample_u64(w, NULL, &l, 1, st.rejected_allow);
	l = (struct promtext_label){ "reason", "full" };
	promtext_sample_u64(w, NULL, &l, 1, st.rejected_full);
	status_refusals(d, refused);
	promtext_family(w, P("sender_refusals_total"), PROMTEXT_COUNTER, "Every refusal of a "
			"sender, by reason: connections, HELLOs and REPORTs (rxbneckctl "
			"status: senders.refused).");
	for (int i = 0; i < STATUS_REFUSALS; i++) {
		l = (struct promtext_label){ "reason", refused[i].name };
		promtext_sample_u64(w, NULL, &l, 1, refused[i].n);
	}
	counter(w, P("sender_frames_received_total"), "Frames received from senders.",
		st.frames_in);
	promtext_family(w, P("sender_frames_sent_total"), PROMTEXT_COUNTER,
			"Frames sent to senders, by type.");
	for (unsigned int t = 0; t < SENDSRV_FRAME_TYPES; t++) {
		if (!st.frames_out_by_type[t])
			continue;
		l = (struct promtext_label){ "type", rxbneck_type_name(t) };
		promtext_sample_u64(w, NULL, &l, 1, st.frames_out_by_type[t]);
	}
	promtext_family(w, P("sender_errors_sent_total"), PROMTEXT_COUNTER,
			"ERROR frames sent to senders, by error code.");
	for (unsigned int e = 1; e <= RXBNECK_ERR_MAX_; e++) {
		l = (struct promtext_label){ "error", rxbneck_error_name(e) };
		promtext_sample_u64(w, NULL, &l, 1, st.errors_sent[e]);
	}
}

static void metricsrv_metrics(struct promtext *w, const struct daemon *d)
{
	static const struct { const char *code; size_t off; } codes[] = {
		{ "200", offsetof(struct metricsrv_stats, ok) },
		{ "404", offsetof(struct metricsrv_stats, not_found) },
		{ "405", offsetof(struct metricsrv_stats, bad_method) },
		{ "500", offsetof(struct metricsrv_stats, failed) },
	};
	struct metricsrv_stats st;
	struct promtext_label l;

	if (!d->ms)
		return;
	metricsrv_stats(d->ms, &st);
	promtext_family(w, P("metrics_requests_total"), PROMTEXT_COUNTER, "Requests the "
			"metrics endpoint answered, by HTTP status (libmicrohttpd's own "
			"answers to malformed requests not counted).");
	for (size_t i = 0; i < RXB_ARRAY_SIZE(codes); i++) {
		l = (struct promtext_label){ "code", codes[i].code };
		promtext_sample_u64(w, NULL, &l, 1,
				    *(const uint64_t *)((const char *)&st + codes[i].off));
	}
	counter(w, P("metrics_connections_refused_total"), "Metrics connections refused: "
		"outside [metrics] allow.", st.refused_allow);
	counter(w, P("metrics_connections_cut_total"), "Metrics connections closed at "
		"[metrics] timeout_s after their accept.", st.cut);
}

void metrics_render(struct promtext *w, const struct daemon *d)
{
	info_metrics(w, d);
	epoch_metrics(w, d);
	health_metrics(w, d);
	cpu_metrics(w, d);
	flow_advice_metrics(w, d);
	flow_model_metrics(w, d);
	flow_traffic_metrics(w, d);
	probe_metrics(w, d);
	sender_metrics(w, d);
	metricsrv_metrics(w, d);
}
