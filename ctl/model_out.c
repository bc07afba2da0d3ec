// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model: the result as text, as one JSON object, as CSV, and
 * the --table grid. Rates per second throughout. See model.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "ctl/ctl.h"
#include "ctl/model.h"
#include "solver/offwin.h"

/* Banerjee et al.'s Fig. 3 grid for --table. */
#define TABLE_C_MIN	1
#define TABLE_C_MAX	4
#define TABLE_I_MIN	0
#define TABLE_I_MAX	3

static const char *rule_name(enum rxb_batch_rule r)
{
	return r == RXB_BATCH_STRICT ? "strict" : "partial";
}

static void json_live(struct json_writer *w, const struct model_live *l)
{
	if (!json_obj_begin_opt(w, "from_status", l->used))
		return;
	json_uint(w, "port", l->port);
	json_uint(w, "epoch", l->epoch);
	json_double(w, "daemon_rate_bps", l->rate_bps);
	json_double(w, "daemon_loss", l->loss);
	json_double(w, "daemon_transfer_time_s", l->time_s);
	json_str(w, "overridden", l->overridden);
	json_bool(w, "windows_dropped", l->windows_dropped);
	json_bool(w, "episodes_from_windows_dropped", l->episodes_dropped);
	json_obj_end(w);
}

static void json_front(struct json_writer *w, const struct model_args *a)
{
	if (!json_obj_begin_opt(w, "stage_a", a->has_front))
		return;
	json_double(w, "mu_per_s", a->front.mu_net_per_s);
	json_uint(w, "queue_pkts", a->front.queue_pkts);
	json_uint(w, "batch_pkts", a->front.batch_pkts);
	json_str(w, "batch_rule", rule_name(a->front.rule));
	json_obj_end(w);
}

static void json_inputs(struct json_writer *w, const struct model_args *a)
{
	json_obj_begin(w, "inputs");
	json_double(w, "cpu_bound", a->stage.cpu_bound);
	json_double(w, "io_bound", a->stage.io_bound);
	json_uint(w, "cpus", a->cpus);
	json_double(w, "balance_per_s", a->balance_per_s);
	json_double(w, "mu_pio_per_s", a->stage.mu_pio_per_s);
	json_double(w, "mu_disk_per_s", a->stage.mu_disk_per_s);
	json_double(w, "mu_net_per_s", a->stage.mu_net_per_s);
	json_double(w, "mu_net_full_per_s", a->stage.mu_net_full_per_s > 0 ?
		  a->stage.mu_net_full_per_s : a->stage.mu_net_per_s);
	json_bool(w, "load_independent", a->stage.load_independent);
	json_double(w, "irq_ns_per_pkt", a->stage.irq_ns_per_pkt);
	json_double(w, "mu_rel_sd", a->stage.mu_rel_sd);
	json_double(w, "vacation_s", a->stage.vacation_s);
	json_double(w, "vacation_period_s", a->stage.vacation_period_s);
	json_double(w, "offcpu_per_s", a->stage.offcpu_per_s);
	json_double(w, "offcpu_mean_s", offwin_mean_s(a->stage.offcpu_hist, RXB_OFFCPU_SLOTS));
	json_double(w, "offcpu_gap_s", a->stage.offcpu_gap_s);
	json_double(w, "wake_per_s", a->stage.wake_per_s);
	json_double(w, "wake_mean_s", offwin_mean_s(a->stage.wake_hist, RXB_OFFCPU_SLOTS));
	json_double(w, "wake_max_s", a->stage.wake_max_s);
	json_double(w, "windows_seen_pps", a->stage.windows_seen_pps);
	json_double(w, "queue_release_pkts", a->stage.queue_release_pkts);
	json_double(w, "sat_drain_pkts_per_s", a->stage.sat_drain_pkts_per_s);
	json_double(w, "sat_drain_arrivals_pps", a->stage.sat_drain_arrivals_pps);
	json_double(w, "quota_period_s", a->stage.quota_period_s);
	json_double(w, "quota_slow_s", a->stage.quota_slow_s);
	json_double(w, "quota_slow_share", a->stage.quota_slow_share);
	json_double(w, "quota_fast_share", a->stage.quota_fast_share);
	json_uint(w, "queue_pkts", a->stage.queue_pkts);
	json_uint(w, "batch_pkts", a->stage.batch_pkts);
	json_str(w, "batch_rule", rule_name(a->stage.rule));
	json_front(w, a);
	json_double(w, "payload_bytes", a->x.payload_bytes);
	json_double(w, "file_bytes", a->x.file_bytes);
	json_double(w, "one_way_delay_s", a->x.one_way_delay_s);
	json_double(w, "line_rate_bps", a->x.line_rate_bps);
	json_double(w, "min_rate_bps", a->x.min_rate_bps);
	json_uint(w, "points", a->x.points);
	json_str(w, "rounds", bneck_rounds_name(a->x.rounds));
	json_str(w, "loss_model", bneck_loss_name(a->x.loss_model));
	json_double(w, "loss_episode_pkts", a->x.loss_episode_pkts > 1.0 ? a->x.loss_episode_pkts : 1.0);
	json_bool(w, "episodes_from_windows", a->x.episodes_from_windows);
	json_obj_end(w);
}

static void json_stat(struct json_writer *w, const char *key, const struct ctmc_stat *s)
{
	json_obj_begin(w, key);
	json_str(w, "method", ctmc_method_name(s->method));
	json_uint(w, "iterations", s->iterations);
	json_double(w, "residual", s->residual);
	json_double(w, "error_bound", s->err_bound);
	json_obj_end(w);
}

static int print_json(struct json_writer *w)
{
	int ok = json_ok(w);

	if (ok)
		printf("%s\n", json_text(w));
	else
		fprintf(stderr, CTL_PROG " " MODEL_CMD ": out of memory writing JSON\n");
	json_finish(w);
	return ok ? CTL_EXIT_OK : CTL_EXIT_FAIL;
}

static void json_numerics(struct json_writer *w, const struct bneck_result *r,
			  const struct bneck_stage *s)
{
	json_obj_begin(w, "numerics");
	json_double(w, "loss_rel_error", r->loss_rel_err);
	json_double(w, "mean_response_rel_error", r->model_rel_err);
	json_uint(w, "evaluations", r->evaluations);
	if (s->tagged_used) {
		json_uint(w, "background_states", s->tagged.bg_states);
		json_uint(w, "tagged_states", s->tagged.tag_states);
		json_stat(w, "steady_state", &s->tagged.steady);
		json_stat(w, "absorption", &s->tagged.absorb);
	}
	json_obj_end(w);
}

static void json_curve(struct json_writer *w, const struct bneck_result *r)
{
	json_arr_begin(w, "curve");
	for (uint32_t i = 0; i < r->npoints; i++) {
		json_obj_begin(w, NULL);
		json_double(w, "rate_bps", r->curve[i].rate_bps);
		json_double(w, "loss", r->curve[i].loss);
		json_double(w, "time_s", r->curve[i].time_s);
		json_double(w, "n_resend", r->curve[i].n_resend);
		json_double(w, "first_loss", r->curve[i].first_loss);
		json_obj_end(w);
	}
	json_arr_end(w);
}

/* The stage the options describe: the last (the socket's). */
static const struct bneck_stage *own_stage(const struct model_args *a, const struct bneck_result *r)
{
	return &r->stage[a->has_front ? 1 : 0];
}

int model_out_json(const struct model_args *a, const struct bneck_result *r,
		   const struct model_quantiles *qs, double prism_q, uint32_t prism_states)
{
	const struct bneck_stage *s = own_stage(a, r);
	struct json_writer w;

	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_inputs(&w, a);
	json_live(&w, &a->live);
	json_double(&w, "bottleneck_rate_bps", r->rate_bps);
	json_double(&w, "loss_at_bottleneck", r->loss);
	json_double(&w, "ln_loss_at_bottleneck", r->ln_loss);
	json_double(&w, "transfer_time_s", r->time_s);
	json_double(&w, "time_slack", a->x.time_slack_rel);
	json_double(&w, "least_rate_bps", r->least_rate_bps);
	json_double(&w, "least_time_s", r->least_time_s);
	json_double(&w, "n_resend", r->breakdown.n_resend);
	json_double(&w, "resend_rounds", r->breakdown.resend_rounds);
	json_double(&w, "resend_pkts", r->breakdown.resend_pkts);
	json_double(&w, "drain_s", r->breakdown.drain_s);
	json_double(&w, "absorb_pkts", s->absorb_pkts);
	json_double(&w, "mean_response_s", s->mean_response_s);
	json_double(&w, "service_rate_per_s", s->service_rate_per_s);
	json_double(&w, "capacity_bps", s->capacity_bps);
	json_double(&w, "capacity_full_bps", s->capacity_full_bps > 0 ?
		  s->capacity_full_bps : s->capacity_bps);
	json_double(&w, "share_reach_bps", s->share_reach_bps > 0 ? s->share_reach_bps : NAN);
	json_double(&w, "line_rate_loss", r->line_loss);
	json_double(&w, "line_rate_time_s", r->line_time_s);
	/* The pieces solved over (--from-status of a solve with them). */
	json_arr_begin(&w, "windows_by_rate_at_bps");
	for (uint32_t j = 0; model_bands_used(a) && j < a->nbands; j++)
		json_double(&w, NULL, a->band_at_bps[j]);
	json_arr_end(&w);
	if (qs->valid) {
		json_obj_begin(&w, "response_quantiles_s");
		json_double(&w, "p50", qs->p50_s);
		json_double(&w, "p90", qs->p90_s);
		json_double(&w, "p99", qs->p99_s);
		json_obj_end(&w);
	}
	json_numerics(&w, r, s);
	if (a->prism_prefix) {
		json_obj_begin(&w, "prism_export");
		json_str(&w, "prefix", a->prism_prefix);
		json_uint(&w, "states", prism_states);
		json_double(&w, "start_rate_per_s", prism_q);
		json_double(&w, "expected_reward_s", s->mean_response_s);
		json_obj_end(&w);
	}
	json_curve(&w, r);
	json_obj_end(&w);
	return print_json(&w);
}

int model_out_csv(const struct bneck_result *r)
{
	printf("rate_bps,loss,time_s,n_resend\n");
	for (uint32_t i = 0; i < r->npoints; i++)
		printf("%.10g,%.10g,%.10g,%.10g\n", r->curve[i].rate_bps, r->curve[i].loss,
		       r->curve[i].time_s, r->curve[i].n_resend);
	if (fflush(stdout) || ferror(stdout)) {
		perror(CTL_PROG " " MODEL_CMD ": writing the curve");
		return CTL_EXIT_FAIL;
	}
	return CTL_EXIT_OK;
}

static void print_live(const struct model_live *l)
{
	if (!l->used)
		return;
	printf("Inputs     rxbneckd's flow %u as solved in epoch %llu%s%s\n", l->port,
	       (unsigned long long)l->epoch, l->overridden[0] ? "; changed: " : "",
	       l->overridden);
	if (l->windows_dropped)
		printf("           its off-CPU windows dropped: measured at the load before the change\n");
	if (l->episodes_dropped)
		printf("           its loss episodes as measured: the loss model given has no windows\n");
}

static void print_inputs(const struct model_args *a)
{
	const struct rxb_stage_inputs *s = &a->stage;

	print_live(&a->live);
	if (a->has_front)
		printf("Stage A    NAPI polls (mu_A) %.6g/s, K %u pkts, N %u pkts (load-independent)\n",
		       a->front.mu_net_per_s, a->front.queue_pkts, a->front.batch_pkts);
	if (s->load_independent)
		printf("Service    load-independent: mu = %.6g batches/s\n", s->mu_net_per_s);
	else if (s->io_bound > 0)
		printf("Workload   CPU-bound tasks (#C) %g, I/O-bound tasks (#I) %g on the receiver's CPU\n"
		       "           service rates per second: receiver (mu_P-Net) %.6g, "
		       "I/O-bound bursts (mu_P-I/O) %.6g, disk (mu_D) %.6g\n",
		       s->cpu_bound, s->io_bound, s->mu_net_per_s, s->mu_pio_per_s, s->mu_disk_per_s);
	else
		printf("Workload   CPU-bound tasks (#C) %g, I/O-bound tasks (#I) 0 on the receiver's CPU\n"
		       "           service rate per second: receiver (mu_P-Net) %.6g\n",
		       s->cpu_bound, s->mu_net_per_s);
	if (a->cpus > 1)
		printf("           (the receiver's CPU is one of %u; tasks spread over them,\n"
		       "           CPU-bound ones balanced at %.6g/s; the receiver on CPU 0)\n",
		       a->cpus, a->balance_per_s);
	if (s->irq_ns_per_pkt > 0)
		printf("           interrupts take %g ns of its CPU per arriving packet\n",
		       s->irq_ns_per_pkt);
	if (s->mu_rel_sd > 0)
		printf("           its rate uncertain by %g (relative sd): T is expected over it\n",
		       s->mu_rel_sd);
	if (s->vacation_s > 0)
		printf("           off its CPU %.4g ms every %.4g ms (predicted windows)\n",
		       s->vacation_s * 1e3, s->vacation_period_s * 1e3);
	if (s->offcpu_per_s > 0) {
		printf("           off its CPU %.4g times a second, %.4g ms on average (measured windows",
		       s->offcpu_per_s, offwin_mean_s(s->offcpu_hist, RXB_OFFCPU_SLOTS) * 1e3);
		if (s->offcpu_gap_s > 0)
			printf(", %.4g ms on the CPU between", s->offcpu_gap_s * 1e3);
		printf(")\n");
	}
	if (s->wake_per_s > 0) {
		printf("           woken %.4g times a second, %.4g ms on average before it ran",
		       s->wake_per_s, offwin_mean_s(s->wake_hist, RXB_OFFCPU_SLOTS) * 1e3);
		if (s->wake_max_s > 0)
			printf(", %.4g ms at most", s->wake_max_s * 1e3);
		printf("\n");
	}
	if ((s->offcpu_per_s > 0 || s->wake_per_s > 0) && s->windows_seen_pps > 0)
		printf("           windows met at up to %.4g packets a second\n",
		       s->windows_seen_pps);
	if (model_bands_used(a)) {
		printf("           by the rate met at: %u pieces, reading", a->nbands);
		for (uint32_t j = 0; j < a->nbands; j++)
			printf("%s %.5g", j ? "," : "", a->band_at_bps[j] / 1e6);
		printf(" Mb/s\n           (each its own windows; the lines above: all rates')\n");
	}
	if (s->sat_drain_pkts_per_s > 0 && s->sat_drain_arrivals_pps > 0)
		printf("           drained %.4g packets a second with its queue overflowed,\n"
		       "           %.4g a second arriving\n",
		       s->sat_drain_pkts_per_s, s->sat_drain_arrivals_pps);
	else if (s->sat_drain_pkts_per_s > 0)
		printf("           drained %.4g packets a second with its queue overflowed\n",
		       s->sat_drain_pkts_per_s);
	if (s->quota_period_s > 0)
		printf("           a co-runner's CPU quota: its share %.3g for %.4g ms of every %.4g ms,\n"
		       "           %.3g for the rest (%s)\n",
		       s->quota_slow_share, s->quota_slow_s * 1e3, s->quota_period_s * 1e3,
		       s->quota_fast_share,
		       a->x.loss_model == BNECK_LOSS_WINDOWS || a->x.loss_model == BNECK_LOSS_SERVICE ?
		       "its phases stand for the windows" : "not used by this loss model");
	printf("Queue      capacity (K) %u pkts, packets per service (N) %u, rule %s",
	       s->queue_pkts, s->batch_pkts, rule_name(s->rule));
	if (s->queue_release_pkts > 0)
		printf(", memory given back every %.6g pkts read", s->queue_release_pkts);
	printf("\n");
	printf("Transfer   payload %g B  file %.0f B  one-way delay %g ms\n",
	       a->x.payload_bytes, a->x.file_bytes, a->x.one_way_delay_s * 1e3);
	printf("Sweep      %g .. %g Mb/s, %u points; %s rounds", a->x.min_rate_bps / 1e6,
	       a->x.line_rate_bps / 1e6, a->x.points, bneck_rounds_name(a->x.rounds));
	if (a->x.episodes_from_windows)
		printf(", loss episodes from the windows where they set the loss");
	if (a->x.loss_episode_pkts > 1.0)
		printf(", %g packets per loss episode", a->x.loss_episode_pkts);
	if (a->x.loss_model != BNECK_LOSS_QUEUE)
		printf("; %s loss model", bneck_loss_name(a->x.loss_model));
	if (a->x.time_slack_rel > 0)
		printf("; time slack %g", a->x.time_slack_rel);
	putchar('\n');
}

static void print_curve(const struct model_args *a, const struct bneck_result *r)
{
	uint32_t n = r->npoints, rows = a->curve_rows;
	bool marked = false;

	if (!rows || rows > n)
		rows = n;
	printf("\n  %12s  %12s  %10s\n", "rate Mb/s", "loss", "time s");
	for (uint32_t k = 0; k < rows; k++) {
		uint32_t i = rows == 1 ? n - 1 :
			     (uint32_t)((uint64_t)k * (n - 1) / (rows - 1));
		const struct bneck_point *p = &r->curve[i];

		if (!marked && p->rate_bps >= r->rate_bps) {
			printf("  %12.3f  %12.4g  %10.4f  <- bottleneck\n",
			       r->rate_bps / 1e6, r->loss, r->time_s);
			marked = true;
			if (p->rate_bps == r->rate_bps)
				continue;
		}
		printf("  %12.3f  %12.4g  %10.4f\n", p->rate_bps / 1e6, p->loss,
		       p->time_s);
	}
}

int model_out_text(const struct model_args *a, const struct bneck_result *r,
		   const struct model_quantiles *qs, uint32_t prism_states)
{
	const struct bneck_stage *s = own_stage(a, r);

	print_inputs(a);
	printf("\nService    E[R] %.4g us", s->mean_response_s * 1e6);
	if (qs->valid)
		printf("  (median %.4g us, p90 %.4g us, p99 %.4g us)",
		       qs->p50_s * 1e6, qs->p90_s * 1e6, qs->p99_s * 1e6);
	printf("\n           mu = 1/E[R] = %.6g batches/s: drains %.1f Mb/s\n",
	       s->service_rate_per_s, s->capacity_bps / 1e6);
	if (s->capacity_full_bps > 0)
		printf("           once its queue has overflowed: drains %.1f Mb/s\n",
		       s->capacity_full_bps / 1e6);
	if (s->share_reach_bps > 0)
		printf("           its windows leave it more than its share: they hold up to %.1f Mb/s\n",
		       s->share_reach_bps / 1e6);
	printf("Bottleneck %.1f Mb/s   loss %.3g   transfer time %.4f s\n",
	       r->rate_bps / 1e6, r->loss, r->time_s);
	if (r->least_rate_bps != r->rate_bps)
		printf("           the least time, %.4f s, at %.1f Mb/s: within the slack of %g\n",
		       r->least_time_s, r->least_rate_bps / 1e6, a->x.time_slack_rel);
	printf("           (resend rounds %.3g, emptying the queue %.1f ms; at the line rate: loss %.3g, %.4f s)\n",
	       r->breakdown.n_resend, r->breakdown.drain_s * 1e3, r->line_loss,
	       r->line_time_s);
	if (a->live.used)
		printf("           rxbneckd chose %.1f Mb/s (loss %.3g, %.4f s) in epoch %llu\n",
		       a->live.rate_bps / 1e6, a->live.loss, a->live.time_s,
		       (unsigned long long)a->live.epoch);
	if (s->tagged_used)
		printf("Numerics   background chain %u states (%s, residual %.1e), tagged chain %u states (%s)\n"
		       "           E[R] rel. error <= %.1e, loss rel. error <= %.1e, %u evaluations of T(B)\n",
		       s->tagged.bg_states, ctmc_method_name(s->tagged.steady.method),
		       s->tagged.steady.residual, s->tagged.tag_states,
		       ctmc_method_name(s->tagged.absorb.method), r->model_rel_err,
		       r->loss_rel_err, r->evaluations);
	else
		printf("Numerics   loss rel. error <= %.1e, %u evaluations of T(B)\n",
		       r->loss_rel_err, r->evaluations);
	if (a->prism_prefix)
		printf("PRISM      %s.{tra,sta,lab,srew}: %u states; R=? [ F \"absorbed\" ] should give %.10g s\n",
		       a->prism_prefix, prism_states, s->mean_response_s);
	if (a->plot_path)
		printf("Plot       %s\n", a->plot_path);
	print_curve(a, r);
	return CTL_EXIT_OK;
}

static int table_json(const struct model_args *a,
		      struct bneck_result r[TABLE_C_MAX + 1][TABLE_I_MAX + 1])
{
	struct json_writer w;

	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_inputs(&w, a);
	json_arr_begin(&w, "table");
	for (int c = TABLE_C_MIN; c <= TABLE_C_MAX; c++) {
		for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++) {
			const struct bneck_stage *s = own_stage(a, &r[c][i]);

			json_obj_begin(&w, NULL);
			json_int(&w, "cpu_bound", c);
			json_int(&w, "io_bound", i);
			json_double(&w, "bottleneck_rate_bps", r[c][i].rate_bps);
			json_double(&w, "loss_at_bottleneck", r[c][i].loss);
			json_double(&w, "transfer_time_s", r[c][i].time_s);
			json_double(&w, "mean_response_s", s->mean_response_s);
			json_double(&w, "service_rate_per_s", s->service_rate_per_s);
			json_obj_end(&w);
		}
	}
	json_arr_end(&w);
	json_obj_end(&w);
	return print_json(&w);
}

int model_out_table(struct model_args *a, struct bneck_ws *ws)
{
	struct bneck_result r[TABLE_C_MAX + 1][TABLE_I_MAX + 1];
	struct rxb_stage_inputs st[BNECK_MAX_STAGES];
	uint32_t n;
	int err;

	for (int c = TABLE_C_MIN; c <= TABLE_C_MAX; c++) {
		for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++) {
			a->stage.cpu_bound = c;
			a->stage.io_bound = i;
			n = model_stages(a, st);
			err = bneck_compute(ws, st, n, &a->x, NULL, &r[c][i]);
			if (err)
				return model_solve_error("bottleneck computation", err);
		}
	}
	if (a->json)
		return table_json(a, r);
	printf("Effective bottleneck rate, Mb/s (seed Fig. 3 grid)\n"
	       "  per second: mu_P-I/O %.6g  mu_D %.6g  mu_P-Net %.6g;  K %u  N %u (%s)\n"
	       "  file %.0f B, one-way delay %g ms, line %g Mb/s\n\n",
	       a->stage.mu_pio_per_s, a->stage.mu_disk_per_s, a->stage.mu_net_per_s,
	       a->stage.queue_pkts, a->stage.batch_pkts, rule_name(a->stage.rule), a->x.file_bytes,
	       a->x.one_way_delay_s * 1e3, a->x.line_rate_bps / 1e6);
	printf("  %-6s", "");
	for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++)
		printf("  %5s=%d", "#I", i);
	printf("\n");
	for (int c = TABLE_C_MIN; c <= TABLE_C_MAX; c++) {
		printf("  #C=%-3d", c);
		for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++)
			printf("  %7.1f", r[c][i].rate_bps / 1e6);
		printf("\n");
	}
	return CTL_EXIT_OK;
}
