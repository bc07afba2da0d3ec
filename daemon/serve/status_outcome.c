// SPDX-License-Identifier: GPL-2.0-or-later
/* A flow's predictions against outcomes in the status document. See status_outcome.h. */
#include "daemon/serve/status_outcome.h"

#include <math.h>

#include "daemon/serve/status.h"

static void entry_json(struct json_writer *w, const struct outcome_entry *e, uint64_t now)
{
	json_obj_begin(w, NULL);
	json_double(w, "age_s", status_age_s(e->at_ns, now));
	json_uint(w, "file_bytes", e->file_bytes);
	json_uint(w, "rtt_us", e->rtt_us);
	json_double(w, "predicted_rate_bps", e->pred_rate_bps);
	json_uint(w, "predicted_confidence", e->pred_confidence);
	json_double(w, "sent_rate_bps", e->sent_rate_bps);
	json_double(w, "predicted_time_s", e->pred_time_s);
	json_double(w, "measured_time_s", e->meas_time_s);
	json_double(w, "predicted_loss", e->pred_loss);
	json_double(w, "measured_loss", e->meas_loss);
	json_uint(w, "rounds", e->rounds);
	json_obj_end(w);
}

void status_outcome_json(struct json_writer *w, const struct outcome *o, uint64_t now)
{
	struct outcome_stats s;

	outcome_stats(o, &s);
	json_obj_begin(w, "predictions");
	json_uint(w, "reported", o->total);
	json_uint(w, "aborted", o->aborted);
	json_uint(w, "kept", s.n);
	json_uint(w, "time_compared", s.n_time);
	json_double(w, "time_ratio_median", s.time_ratio_median);
	json_double(w, "time_ratio_min", s.time_ratio_min);
	json_double(w, "time_ratio_max", s.time_ratio_max);
	json_double(w, "time_ratio_mean", s.time_ratio_mean);
	json_uint(w, "loss_compared", s.n_loss);
	json_double(w, "loss_error_pp_mean", s.loss_err_pp_mean);
	json_double(w, "loss_bias_pp_mean", s.loss_bias_pp_mean);
	json_arr_begin(w, "transfers");
	for (uint32_t i = 0; i < o->n; i++)
		entry_json(w, outcome_at(o, i), now);
	json_arr_end(w);
	json_obj_end(w);
}
