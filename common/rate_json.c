// SPDX-License-Identifier: GPL-2.0-or-later
/* A RATE's advice as JSON members. See rate_json.h. */
#include "common/rate_json.h"

void rate_json_advice(struct json_writer *w, const struct rxbneck_rate *r)
{
	json_uint(w, "rate_bps", r->rate_bps);
	json_double(w, "loss", r->loss);
	json_uint(w, "epoch", r->epoch);
	json_uint(w, "confidence", r->confidence);
}
