// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model --plot FILE: the figure of transfer time and loss
 * against the rate, drawn by rxbneck-plot-model (ctl/plot.h), which gets
 * the curve as JSON on its standard input. See model.h.
 */
#include <stdio.h>

#include "common/json.h"
#include "ctl/ctl.h"
#include "ctl/model.h"
#include "ctl/plot.h"

static void point_json(struct json_writer *w, const char *key, double rate, double loss, double t)
{
	json_obj_begin(w, key);
	json_double(w, "rate_bps", rate);
	json_double(w, "loss", loss);
	json_double(w, "time_s", t);
	json_obj_end(w);
}

/* What the script draws, as its input says. */
static void plot_json(struct json_writer *w, const struct model_args *a, const struct bneck_result *r)
{
	char title[384];

	if (a->live.used)
		snprintf(title, sizeof(title), "rxbneckd flow %u (epoch %llu)%s%s", a->live.port,
			 (unsigned long long)a->live.epoch, a->live.overridden[0] ? ", with " : "",
			 a->live.overridden);
	else
		snprintf(title, sizeof(title), "#C %g, #I %g, K %u, N %u, one-way delay %g ms",
			 a->stage.cpu_bound, a->stage.io_bound, a->stage.queue_pkts,
			 a->stage.batch_pkts, a->x.one_way_delay_s * 1e3);
	json_obj_begin(w, NULL);
	json_str(w, "title", title);
	json_arr_begin(w, "curve");
	for (uint32_t i = 0; i < r->npoints; i++) {
		json_arr_begin(w, NULL);
		json_double(w, NULL, r->curve[i].rate_bps);
		json_double(w, NULL, r->curve[i].loss);
		json_double(w, NULL, r->curve[i].time_s);
		json_arr_end(w);
	}
	json_arr_end(w);
	point_json(w, "chosen", r->rate_bps, r->loss, r->time_s);
	point_json(w, "line", a->x.line_rate_bps, r->line_loss, r->line_time_s);
	if (a->live.used) {
		point_json(w, "daemon", a->live.rate_bps, a->live.loss, a->live.time_s);
	} else {
		json_null(w, "daemon");
	}
	json_obj_end(w);
}

int model_plot_write(const struct model_args *a, const struct bneck_result *r)
{
	struct json_writer w;
	int ret;

	json_init(&w, false);
	plot_json(&w, a, r);
	if (!json_ok(&w)) {
		json_finish(&w);
		fprintf(stderr, CTL_PROG " " MODEL_CMD ": --plot: out of memory\n");
		return CTL_EXIT_FAIL;
	}
	ret = plot_run(MODEL_CMD, "rxbneck-plot-model", "RXBNECK_PLOT_MODEL", a->plot_path,
		       json_text(&w), json_len(&w));
	json_finish(&w);
	return ret;
}
