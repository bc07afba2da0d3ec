// SPDX-License-Identifier: GPL-2.0-or-later
/* A flow of the status document, and the learned flows. See status_flow.h. */
#include "daemon/serve/status_flow.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "common/rate_json.h"
#include "common/util.h"
#include "daemon/collect/collect_json.h"
#include "daemon/daemon.h"
#include "daemon/serve/status.h"
#include "daemon/serve/status_outcome.h"
#include "solver/bneck_pieces.h"
#include "solver/offwin.h"

static const char *const rate_flag_names[STATUS_FLOW_RATE_FLAGS] = {
	"degraded", "stale", "no_traffic", "unconstrained", "between_pauses",
	"provisional", "default_cost",
};

const char *status_flow_rate_flag_name(unsigned int bit)
{
	return bit < STATUS_FLOW_RATE_FLAGS ? rate_flag_names[bit] : NULL;
}

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

void status_flow_rate_json(struct json_writer *w, const char *key, const struct rxbneck_rate *r)
{
	if (!json_obj_begin_opt(w, key, r != NULL))
		return;
	rate_json_advice(w, r);
	json_uint(w, "xfer_time_us", r->xfer_time_us);
	json_flag_names(w, "flags", r->flags, rate_flag_names, RXB_ARRAY_SIZE(rate_flag_names));
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
			  const struct busy_sums *sat,
			  const struct busy_sums *kept, const struct busy_sums *busy)
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
	json_double(w, "fit_wake_share_ns", b->fit_wake_share_ns);
	json_double(w, "overflow_pkts_per_wakeup", b->ovf_pkts_per_wakeup);
	json_uint_opt(w, "fit_terms", b->cost_fit_terms != 0, (uint64_t)b->cost_fit_terms);
	json_double(w, "spin_share", b->spin_share);
	json_str(w, "fit_note", b->cost_fit_note);
	json_double(w, "ratio_ns", b->cpu_ns_per_pkt_ratio);
	json_double(w, "busy_ns", b->cpu_ns_per_pkt_busy);
	json_double(w, "busy_load", b->busy_load);
	json_uint(w, "busy_epochs", busy->taken);
	json_double(w, "capped_ns", b->cpu_ns_per_pkt_capped);
	json_obj_end(w);
}

/* Where stage B's capacity came from (daemon/model/capacity.h). */
static void capacity_json(struct json_writer *w, const struct capacity *c,
			  const struct drain *d)
{
	json_obj_begin(w, "capacity");
	json_str(w, "mode", capacity_mode_name(c->mode));
	json_str(w, "basis", capacity_basis_name(c->basis));
	json_double(w, "pkts_per_s", c->pkts_per_s);
	json_double(w, "cost_pkts_per_s", c->cost_pkts_per_s);
	json_double(w, "drain_pkts_per_s", c->drain_pkts_per_s);
	json_double(w, "drain_load", c->drain_load);
	json_double(w, "drain_arrivals_pps", c->drain_arrivals_pps);
	json_uint(w, "drain_epochs", d->taken);
	json_uint(w, "drain_epochs_refused", d->refused);
	json_double(w, "scale", c->scale);
	json_double(w, "drain_scale", c->drain_scale);
	json_bool(w, "drain_usable", c->drain_usable);
	json_str(w, "note", c->why);
	json_obj_end(w);
}

/* A TCP flow's drain rate (daemon/model/inputs.h), null for others. */
static void tcp_json(struct json_writer *w, const struct inputs_tcp *t)
{
	if (!json_obj_begin_opt(w, "tcp", t->present))
		return;
	value_json(w, "bytes_per_pkt", &t->bytes_per_pkt);
	value_json(w, "cpu_ns_per_pkt", &t->cpu_ns_per_pkt);
	json_double(w, "share", t->share);
	json_double(w, "drain_bps", t->drain_bps);
	json_null(w, "loss");
	json_str(w, "loss_note", "not modelled (TCP)");
	json_obj_end(w);
}

/*
 * "PER_S/SLOT:COUNT[:MEAN_NS:SD_NS],..." of @hist and its slots' moments,
 * as `rxbneckctl model` takes it.
 */
static void offcpu_spec(char *spec, size_t size, double per_s, const double *hist,
			const double *mean_s, const double *sd_s)
{
	size_t len = (size_t)snprintf(spec, size, "%.6g/", per_s);

	for (size_t r = 0; r < RXB_OFFCPU_SLOTS && len < size; r++) {
		if (!(hist[r] > 0))
			continue;
		len += (size_t)snprintf(spec + len, size - len, "%s%zu:%.6g",
					spec[len - 1] == '/' ? "" : ",", r, hist[r]);
		if (len < size && mean_s[r] > 0)
			len += (size_t)snprintf(spec + len, size - len, ":%.0f:%.0f",
						mean_s[r] * 1e9, sd_s[r] * 1e9);
	}
}

/* One stage's windows as offcpu_json() prints them. */
struct windows_doc {
	double per_s, gap_s;
	const double *hist, *mean_s, *sd_s;
	double wake_per_s;
	const double *wake_hist, *wake_mean_s, *wake_sd_s;
	double wake_max_s, seen_pps;
};

/*
 * The server's off-CPU windows after preemption this epoch (the windows
 * loss model's input): per second, the non-empty log2-ns slots, and the
 * same as `rxbneckctl model --offcpu-windows` takes it; its runqueue waits
 * after a wakeup as `--wake-windows` takes them (wake_spec), the
 * longest of those (`--wake-max-ms`; null when unknown), and the fastest
 * reads they were met at (`--windows-seen-pps`; null when unknown).
 */
static void offcpu_json(struct json_writer *w, const struct windows_doc *d)
{
	char spec[RXB_OFFCPU_SLOTS * 64 + 32];

	json_obj_begin(w, "offcpu_windows");
	json_double(w, "per_s", d->per_s);
	json_double(w, "gap_ns", d->gap_s * 1e9);
	json_double(w, "mean_ns", offwin_mean_s(d->hist, RXB_OFFCPU_SLOTS) * 1e9);
	json_sparse(w, "hist_log2_ns", d->hist, RXB_OFFCPU_SLOTS);
	offcpu_spec(spec, sizeof(spec), d->per_s, d->hist, d->mean_s, d->sd_s);
	json_str(w, "spec", spec);
	json_double(w, "wake_mean_ns", offwin_mean_s(d->wake_hist, RXB_OFFCPU_SLOTS) * 1e9);
	offcpu_spec(spec, sizeof(spec), d->wake_per_s, d->wake_hist, d->wake_mean_s,
		    d->wake_sd_s);
	json_str(w, "wake_spec", spec);
	json_double(w, "wake_max_ns", d->wake_max_s > 0 ? d->wake_max_s * 1e9 : NAN);
	json_double(w, "seen_pkts_per_s", d->seen_pps > 0 ? d->seen_pps : NAN);
	json_obj_end(w);
}

/*
 * The off-CPU windows by rate as learned (struct learn_band), whether they
 * stand for their rates now or not: which rates the receiver was fed at,
 * for how long, at which load, and when ([model] windows_by_rate).
 */
static void bands_learned_json(struct json_writer *w, const struct learn *l, double load,
			       uint64_t now)
{
	json_arr_begin(w, "windows_bands");
	for (int i = 0; i < LEARN_BANDS; i++) {
		const struct learn_band *b = &l->band[i];

		if (!b->last_ns)
			continue;
		json_obj_begin(w, NULL);
		json_double(w, "at_pps", learn_win_arrival_pps(&b->w));
		json_double(w, "fed_s", b->fed_s);
		json_double(w, "estimated_s", b->estimated_s);
		json_double(w, "load", b->load);
		json_double(w, "age_s", status_age_s(b->last_ns, now));
		json_bool(w, "live", learn_band_live(l, i, load));
		json_obj_end(w);
	}
	json_arr_end(w);
}

/*
 * The arrivals of the epochs without the per-packet probes, estimated
 * from the receiver's time (struct arrive): the fit, and how well it
 * estimated the sampled epochs before each was learned from.
 */
static void arrive_json(struct json_writer *w, const struct arrive *a)
{
	json_obj_begin(w, "arrivals_estimate");
	json_double(w, "ns_per_wakeup", a->fit.known ? a->fit.a_ns : NAN);
	json_double(w, "ns_per_pkt", a->fit.known ? a->fit.b_ns : NAN);
	json_double(w, "checked_s", a->checked_s);
	json_double(w, "err", arrive_err(a));
	json_double(w, "bias", arrive_bias(a));
	json_bool(w, "trusted", arrive_trusted(a));
	json_uint(w, "checks", a->checks);
	json_uint(w, "estimated_epochs", a->estimated);
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
	capacity_json(w, &in->b.capacity, &l->drain);
	value_json(w, "pkts_per_wakeup", &in->b.pkts_per_wakeup);
	value_json(w, "queue_pkts", &in->b.queue_pkts);
	value_json(w, "mu_net_per_s", &in->b.mu_net_per_s);
	value_json(w, "mu_pio_per_s", &in->b.mu_pio_per_s);
	value_json(w, "mu_disk_per_s", &in->b.mu_disk_per_s);
	value_json(w, "irq_ns_per_pkt", &in->b.irq_ns_per_pkt);
	value_json(w, "loss_episode_pkts", &in->b.loss_episode_pkts);
	value_json(w, "rate_rel_sd", &in->b.rate_rel_sd);
	collect_json_quota(w, "quota_phases", in->b.quota_period_s, in->b.quota_slow_s,
			   in->b.quota_slow_share, in->b.quota_fast_share);
	offcpu_json(w, &(struct windows_doc){
		.per_s = in->b.offcpu_per_s, .gap_s = in->b.offcpu_gap_s,
		.hist = in->b.offcpu_hist, .mean_s = in->b.offcpu_mean_s,
		.sd_s = in->b.offcpu_sd_s, .wake_per_s = in->b.wake_per_s,
		.wake_hist = in->b.wake_hist, .wake_mean_s = in->b.wake_mean_s,
		.wake_sd_s = in->b.wake_sd_s, .wake_max_s = in->b.wake_max_s,
		.seen_pps = in->b.windows_seen_pps,
	});
	json_obj_end(w);
	tcp_json(w, &in->tcp);
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
	/* All rates' windows: the load they were fed at, and whether the
	 * solve left them out for it (stage_b.offcpu_windows then empty). */
	json_double(w, "windows_load", in->b.windows_load);
	json_double(w, "windows_fresh_s", in->b.windows_fresh_s);
	json_bool(w, "windows_other_load", in->b.windows_other_load);
	bands_learned_json(w, l, inputs_receiver_load(&in->b), now);
	arrive_json(w, &l->arrive);
	json_double(w, "last_traffic_age_s", status_age_s(l->last_traffic_ns, now));
	json_uint_opt(w, "history_age_s",
		      l->origin == VALUE_HISTORY && l->prior == LEARN_PRIOR_NONE, l->history_age_s);
	/* Before the flow's own traffic: whose costs (daemon/model/prior.h). */
	json_str(w, "prior", l->origin != VALUE_HISTORY ? "none" :
		 l->prior == LEARN_PRIOR_HOST ? "another_flow" :
		 l->prior == LEARN_PRIOR_DEFAULT ? "default" : "this_port");
	json_uint_opt(w, "prior_port",
		      l->origin == VALUE_HISTORY && l->prior == LEARN_PRIOR_HOST, l->prior_port);
	json_obj_end(w);
	json_obj_end(w);
}

/* A solve's stage's windows (offcpu_json()). */
static void stage_offcpu_json(struct json_writer *w, const struct rxb_stage_inputs *in)
{
	offcpu_json(w, &(struct windows_doc){
		.per_s = in->offcpu_per_s, .gap_s = in->offcpu_gap_s,
		.hist = in->offcpu_hist, .mean_s = in->offcpu_mean_s,
		.sd_s = in->offcpu_sd_s, .wake_per_s = in->wake_per_s,
		.wake_hist = in->wake_hist, .wake_mean_s = in->wake_mean_s,
		.wake_sd_s = in->wake_sd_s, .wake_max_s = in->wake_max_s,
		.seen_pps = in->windows_seen_pps,
	});
}

/*
 * The pieces of a solve with the windows by rate (struct
 * flow_estimate.nbands): each one's measured rate, the rates it covered
 * (solver/bneck_pieces.h), whether the rate was chosen in it, and stage
 * B's windows there; an empty array when the solve had one set.
 */
static void bands_json(struct json_writer *w, const struct flow_estimate *g)
{
	struct bneck_piece p[LEARN_BANDS];
	struct bneck_xfer x = {
		.min_rate_bps = g->xfer.min_rate_bps, .line_rate_bps = g->xfer.line_rate_bps,
	};

	json_arr_begin(w, "windows_by_rate");
	for (uint32_t j = 0; j < g->nbands && j < LEARN_BANDS; j++)
		p[j] = (struct bneck_piece){ .at_bps = g->band_at_bps[j], .stages = &g->band_b[j] };
	for (uint32_t j = 0; j < g->nbands && j < LEARN_BANDS; j++) {
		double lo, hi;

		if (!bneck_piece_range(p, g->nbands, j, &x, &lo, &hi))
			lo = hi = NAN;
		json_obj_begin(w, NULL);
		json_double(w, "at_bps", g->band_at_bps[j]);
		json_double(w, "from_bps", lo);
		json_double(w, "to_bps", hi);
		json_bool(w, "chosen", j == g->band_chosen);
		stage_offcpu_json(w, &g->band_b[j]);
		json_obj_end(w);
	}
	json_arr_end(w);
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
	json_double(w, "mu_pio_per_s", in->load_independent ? NAN : in->mu_pio_per_s);
	json_double(w, "mu_disk_per_s", in->load_independent ? NAN : in->mu_disk_per_s);
	json_double(w, "irq_ns_per_pkt", in->irq_ns_per_pkt);
	json_double(w, "mu_rel_sd", in->mu_rel_sd);
	json_uint(w, "queue_pkts", in->queue_pkts);
	json_double(w, "queue_release_pkts", in->queue_release_pkts);
	json_double(w, "sat_drain_pkts_per_s", in->sat_drain_pkts_per_s > 0 ?
		    in->sat_drain_pkts_per_s : NAN);
	json_double(w, "sat_drain_arrivals_pps", in->sat_drain_arrivals_pps > 0 ?
		    in->sat_drain_arrivals_pps : NAN);
	json_uint(w, "batch_pkts", in->batch_pkts);
	json_str(w, "batch_rule", in->rule == RXB_BATCH_STRICT ? "strict" : "partial");
	/* The server's predicted off-CPU windows (0: none this epoch). */
	json_double(w, "vacation_us", in->vacation_s * 1e6);
	json_double(w, "vacation_period_us", in->vacation_period_s * 1e6);
	if (!in->load_independent)
		stage_offcpu_json(w, in);
	if (!in->load_independent)
		collect_json_quota(w, "quota_phases", in->quota_period_s, in->quota_slow_s,
				   in->quota_slow_share, in->quota_fast_share);
	json_double(w, "service_rate_per_s", st->service_rate_per_s);
	json_double(w, "mean_response_s", st->mean_response_s);
	json_double(w, "capacity_bps", st->capacity_bps);
	json_double(w, "capacity_full_bps", st->capacity_full_bps > 0 ?
		  st->capacity_full_bps : st->capacity_bps);
	json_double(w, "share_reach_bps", st->share_reach_bps > 0 ? st->share_reach_bps : NAN);
	json_double(w, "loss", st->loss);
	json_obj_end(w);
}

/* What the model of transfer @x is solved for (the flow's and a solve's). */
static void xfer_model_json(struct json_writer *w, const struct flow_xfer *x)
{
	json_double(w, "payload_bytes", x->payload_bytes);
	json_double(w, "file_bytes", x->file_bytes);
	json_double(w, "one_way_delay_s", x->one_way_delay_s);
	json_double(w, "line_rate_bps", x->line_rate_bps);
	json_double(w, "min_rate_bps", x->min_rate_bps);
}

static void model_json(struct json_writer *w, const struct flow_model *m,
		       const struct daemon *d)
{
	const struct flow_estimate *g = &m->good;

	if (!json_obj_begin_opt(w, "model", m->have_good))
		return;
	json_uint(w, "epoch", g->epoch);
	json_uint(w, "age_epochs", d->have_epoch && d->epoch->seq > g->epoch ?
		d->epoch->seq - g->epoch : 0);
	json_double(w, "rate_bps", g->res.rate_bps);
	json_double(w, "loss", g->res.loss);
	json_double(w, "ln_loss", g->res.ln_loss);
	json_double(w, "transfer_time_s", g->res.time_s);
	json_double(w, "time_slack", g->time_slack_rel);
	json_double(w, "least_rate_bps", g->res.least_rate_bps);
	json_double(w, "least_time_s", g->res.least_time_s);
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
	json_str(w, "rounds", bneck_rounds_name(g->rounds));
	json_str(w, "loss_model", bneck_loss_name(g->loss_model));
	json_bool(w, "episodes_from_windows", g->episodes_from_windows);
	json_uint(w, "points", g->points);
	json_obj_begin(w, "transfer");
	xfer_model_json(w, &g->xfer);
	json_obj_end(w);
	json_arr_begin(w, "stages");
	for (uint32_t i = 0; i < g->nstages && i < BNECK_MAX_STAGES; i++)
		stage_json(w, &g->inputs[i], &g->res.stage[i]);
	json_arr_end(w);
	bands_json(w, g);
	json_obj_end(w);
}

static void xfer_json(struct json_writer *w, const struct flow_xfer *x)
{
	json_obj_begin(w, "transfer");
	json_str(w, "from", x->from_sender ? "sender" : "config");
	json_str(w, "sender", x->sender);
	xfer_model_json(w, x);
	json_obj_end(w);
}

static void report_json(struct json_writer *w, const struct flow *fl)
{
	const struct rxbneck_report *r = &fl->last_report;

	if (!json_obj_begin_opt(w, "last_report", fl->has_report))
		return;
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

/* Why the last epoch's packets of @fl were not counted; NULL when they were. */
static const char *traffic_why(const struct flow *fl, const struct daemon *d)
{
	const struct inputs_traffic *t = &fl->inputs.traffic;
	const struct rxb_epoch *e = d->have_epoch ? d->epoch : NULL;

	if (!e)
		return "no epoch measured yet";
	if (!t->sock_seen)
		return fl->created_ns > e->end_ns ?
		       "the flow began after the last epoch; its port is watched from the next on" :
		       "the collector did not report the port";
	if (t->counts_valid)
		return NULL;
	if (e->degraded & RXB_DEGRADED_NO_BPF)
		return "packets are counted by the BPF probes, which are not loaded";
	if (e->net_probe_every > 1 && !e->net_sampled)
		return "packets are counted in the epochs the per-packet probes are attached in "
		       "(one in net_probe_every)";
	if (!(e->probes & RXB_PROBE_SOCKQ))
		return "the socket probes are not loaded";
	/* Sampled without the enqueue program: the arrivals follow from the
	 * queue read at the epoch's edges, which failed for this port. */
	return "the port's arrivals could not be derived in the last epoch (its socket "
	       "queue was not read at both of its edges)";
}

static void counts_json(struct json_writer *w, const struct inputs_traffic *t)
{
	json_uint_opt(w, "pkts_in", t->counts_valid, t->pkts_in);
	json_uint_opt(w, "pkts_out", t->counts_valid, t->pkts_out);
	json_uint_opt(w, "drops", t->sock_seen, t->drops);
	json_uint_opt(w, "rcvbuf_drops", t->sock_seen, t->rcvbuf_drops);
}

/* The last epoch at the socket, and the last one that counted its packets. */
static void traffic_json(struct json_writer *w, const struct flow *fl, const struct daemon *d,
			 uint64_t now)
{
	const struct inputs_traffic *t = &fl->inputs.traffic;
	const char *why = traffic_why(fl, d);

	json_obj_begin(w, "traffic");
	json_bool(w, "seen", t->sock_seen);
	json_bool(w, "packets_seen", fl->packets_seen);
	json_bool(w, "counts_valid", t->counts_valid);
	json_uint_opt(w, "epoch", t->sock_seen && d->have_epoch, d->have_epoch ? d->epoch->seq : 0);
	counts_json(w, t);
	json_str(w, "why", why);
	if (json_obj_begin_opt(w, "last_counted", fl->counted_seq != 0)) {
		json_uint(w, "epoch", fl->counted_seq);
		json_double(w, "age_s", status_age_s(fl->counted_end_ns, now));
		counts_json(w, &fl->counted);
		json_obj_end(w);
	}
	json_obj_end(w);
}

/* The senders of a port subscribed to RATE, and how many of them hold one. */
struct subs_ctx {
	uint16_t port;
	unsigned subscribed, holding;
};

static void count_sub(void *arg, const struct sendsrv_peer *p)
{
	struct subs_ctx *c = arg;

	if (p->hello.flow_port != c->port || !(p->granted & RXBNECK_SUB_RATE))
		return;
	c->subscribed++;
	c->holding += p->has_rate;
}

static void subscribers_json(struct json_writer *w, const struct flow *fl, const struct daemon *d)
{
	struct subs_ctx c = { .port = fl->port };

	sendsrv_foreach_sender(d->ss, count_sub, &c);
	json_uint(w, "subscribers", c.subscribed);
	json_uint(w, "rate_holders", c.holding);
}

/*
 * What one transfer's senders are told: its model, its RATE, and which
 * rate is in force for senders that pause, and why (PROTOCOL.md §6.3).
 */
static void transfer_fields_json(struct json_writer *w, const struct flow *fl,
				 const struct flow_model *m, const struct daemon *d)
{
	char why[200];
	bool between = flows_between_covered(fl, m, why, sizeof(why));
	bool has_between = m->has_rate && m->has_rate_between;
	struct rxbneck_rate rate = m->rate;

	json_str(w, "state", flows_state_name(m->state));
	xfer_json(w, &m->xfer);
	model_json(w, m, d);
	if (json_obj_begin_opt(w, "solve_error", m->solve_err != 0)) {
		json_int(w, "errno", -m->solve_err);
		json_str(w, "message", m->solve_why);
		json_uint(w, "epoch", m->solve_err_epoch);
		json_obj_end(w);
	}
	json_uint(w, "solves", m->solves);
	json_uint(w, "solves_reused", m->solves_reused);
	json_uint(w, "solves_deferred", m->solves_deferred);
	json_uint(w, "solve_failures", m->solve_failures);
	if (fl->inputs.tcp.present)
		rate.loss = NAN;	/* not modelled (TCP) */
	status_flow_rate_json(w, "rate", m->has_rate ? &rate : NULL);
	status_flow_rate_json(w, "rate_between_pauses", has_between ? &m->rate_between : NULL);
	json_double(w, "pause_fraction", has_between ? m->good.between.pause_fraction : NAN);
	json_obj_begin(w, "rate_in_force");
	json_str(w, "kind", between ? "between_pauses" : "plain");
	json_str(w, "why", why);
	json_obj_end(w);
}

void status_flow_json(struct json_writer *w, const struct flow *fl, const struct daemon *d,
		      uint64_t now)
{
	json_obj_begin(w, NULL);
	json_uint(w, "port", fl->port);
	json_bool(w, "configured", fl->configured);
	json_uint(w, "senders", fl->nsenders);
	json_uint(w, "senders_shared", fl->nshared);
	traffic_json(w, fl, d, now);
	inputs_json(w, fl, now);
	/* The first transfer's, the flow's only one without senders: transfers[0]. */
	transfer_fields_json(w, fl, &fl->m[0], d);
	json_arr_begin(w, "transfers");
	for (int i = 0; i < fl->nmodels; i++) {
		json_obj_begin(w, NULL);
		json_uint(w, "senders", fl->m[i].nsenders);
		transfer_fields_json(w, fl, &fl->m[i], d);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_int(w, "rate_sent_to", fl->last_sent);
	subscribers_json(w, fl, d);
	json_uint(w, "reports", fl->reports);
	report_json(w, fl);
	status_outcome_json(w, &fl->outcome, now);
	pause_json(&fl->pause, w);
	json_obj_end(w);
}

static void learned_cpus_json(struct json_writer *w, int n, const int *cpu, const double *share)
{
	placement_json(w, n < LEARN_MAX_CPUS ? n : LEARN_MAX_CPUS, cpu, share);
}

/* A port in the state's history that has no flow now: learned in an earlier run. */
static void history_json(struct json_writer *w, const struct state_entry *e)
{
	uint64_t now = (uint64_t)time(NULL);

	json_obj_begin(w, NULL);
	json_uint(w, "port", e->port);
	json_str(w, "origin", "history");
	json_null(w, "left_age_s");
	json_double(w, "saved_age_s", now >= e->saved_unix_s ? (double)(now - e->saved_unix_s) : 0);
	json_double(w, "cpu_ns_per_pkt", ewma_ratio_value(&e->learn.cpu_ns_per_pkt));
	json_double(w, "pkts_per_wakeup", ewma_ratio_value(&e->learn.pkts_per_wakeup));
	learned_cpus_json(w, e->learn.ncpus, e->learn.cpu, e->learn.cpu_share);
	json_null(w, "last");
	json_obj_end(w);
}

/* A flow of this run that went away. */
static void past_json(struct json_writer *w, const struct flow_past *p, uint64_t now)
{
	json_obj_begin(w, NULL);
	json_uint(w, "port", p->port);
	json_str(w, "origin", "this run");
	json_double(w, "left_age_s", status_age_s(p->left_ns, now));
	json_null(w, "saved_age_s");
	json_double(w, "cpu_ns_per_pkt", p->cpu_ns_per_pkt);
	json_double(w, "pkts_per_wakeup", p->pkts_per_wakeup);
	learned_cpus_json(w, p->ncpus, p->cpu, p->cpu_share);
	status_outcome_json(w, &p->outcome, now);
	if (json_obj_begin_opt(w, "last", p->has_rate)) {
		rate_json_advice(w, &p->rate);
		json_uint(w, "reports", p->reports);
		json_obj_end(w);
	}
	json_obj_end(w);
}

static bool past_has(const struct flows *f, uint16_t port)
{
	for (int i = 0; i < f->npast; i++)
		if (f->past[i].port == port)
			return true;
	return false;
}

/*
 * Ports learned about that have no flow now, newest first: those that
 * left in this run, then those the state directory knows from before.
 */
void status_flow_learned_json(struct json_writer *w, const struct daemon *d, uint64_t now)
{
	const struct flows *f = &d->flows;

	json_arr_begin(w, "learned_flows");
	for (int i = f->npast - 1; i >= 0; i--)
		if (!flows_find((struct flows *)f, f->past[i].port))
			past_json(w, &f->past[i], now);
	for (int i = 0; i < d->state.n; i++) {
		const struct state_entry *e = &d->state.v[i];

		if (!flows_find((struct flows *)f, e->port) && !past_has(f, e->port))
			history_json(w, e);
	}
	json_arr_end(w);
}

