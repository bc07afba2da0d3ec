// SPDX-License-Identifier: GPL-2.0-or-later
/* The stream-count advice as JSON. See streams_doc.h. */
#include "daemon/model/streams_doc.h"

#include <math.h>

/* The n of the samples a combination used. */
static void used_json(struct json_writer *w, const struct streams_bfc *b,
		      const struct streams_point *p, int m)
{
	json_arr_begin(w, "samples_used");
	for (int i = 0; i < streams_model_points(b->coef.model) && b->found; i++)
		if (b->idx[i] >= 0 && b->idx[i] < m)
			json_double(w, NULL, p[b->idx[i]].n);
	json_arr_end(w);
}

/* Only the coefficients the model has; the others null. */
static void coef_json(struct json_writer *w, const struct streams_coef *k, bool found)
{
	enum streams_model md = found ? k->model : STREAMS_NONE;
	bool three = md == STREAMS_NEWTON || md == STREAMS_FULL2;

	json_obj_begin(w, "coef");
	json_double(w, "a", md != STREAMS_NONE && md != STREAMS_HACKER ? k->a : NAN);
	json_double(w, "b", md != STREAMS_NONE ? k->b : NAN);
	json_double(w, "c", three ? k->c : NAN);
	json_double(w, "a2", md == STREAMS_BREAK ? k->a2 : NAN);
	json_double(w, "b2", md == STREAMS_BREAK ? k->b2 : NAN);
	json_double(w, "nb", md == STREAMS_BREAK ? k->nb : NAN);
	json_double(w, "x", md == STREAMS_LOSS ? k->x : NAN);
	json_obj_end(w);
}

static void models_json(struct json_writer *w, const struct streams_point *p, int m,
			const struct streams_fit_result *r)
{
	json_arr_begin(w, "models");
	for (int md = 1; md < STREAMS_NMODELS; md++) {
		const struct streams_bfc *b = &r->per_model[md];

		if (!b->tried)
			continue;
		json_obj_begin(w, NULL);
		json_str(w, "model", streams_model_name(md));
		json_bool(w, "found", b->found);
		json_double(w, "err_bps", b->found ? b->err : NAN);
		json_uint(w, "tried", b->tried);
		json_uint(w, "undetermined", b->undetermined);
		json_uint(w, "rejected", b->rejected);
		used_json(w, b, p, m);
		coef_json(w, &b->coef, b->found);
		json_obj_end(w);
	}
	json_arr_end(w);
}

void streams_doc_result(struct json_writer *w, const struct streams_point *p, int m,
			const struct streams_fit_opts *o, const struct streams_fit_result *r)
{
	bool fitted = r->model != STREAMS_NONE;

	json_obj_begin(w, "fit");
	json_str(w, "model", streams_model_name(r->model));
	coef_json(w, &r->best.coef, fitted);
	json_double(w, "err_bps", fitted ? r->best.err : NAN);
	json_double(w, "rel_err", fitted ? r->rel_err : NAN);
	json_double(w, "confidence", r->confidence);
	used_json(w, &r->best, p, m);
	models_json(w, p, m, r);
	json_obj_end(w);

	json_obj_begin(w, "advice");
	json_uint(w, "streams", r->n_opt);
	json_double(w, "predicted_bps", r->th_opt);
	json_uint(w, "peak_streams", r->n_peak);
	json_double(w, "peak_bps", r->th_peak);
	json_bool(w, "rising", r->rising);
	json_bool(w, "capped", r->capped);
	json_double(w, "cap_bps", o->cap > 0 ? o->cap : NAN);
	json_double(w, "tolerance", o->tolerance);
	json_uint(w, "n_max", r->n_max);
	json_obj_end(w);

	json_arr_begin(w, "curve");
	for (uint32_t n = 1; fitted && n <= r->n_max; n++) {
		json_arr_begin(w, NULL);
		json_uint(w, NULL, n);
		json_double(w, NULL, streams_eval(&r->best.coef, n));
		json_arr_end(w);
	}
	json_arr_end(w);
}
