// SPDX-License-Identifier: GPL-2.0-or-later
/* The stream-count advice as text. See view_streams.h. */
#include "ctl/view/view_streams.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "ctl/view/answer.h"
#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"

#define IND		2
#define TEXT_LEN	256

static void header(FILE *f, const struct json_object *doc, const struct json_object *p)
{
	char a[TEXT_LEN], b[VFMT_LEN];
	const char *addr = jpath_str(p, "address");

	if (addr)
		fprintf(f, "Peer %s, local port %s\n", vfmt_text(a, sizeof(a), addr),
			vfmt_count(b, jpath_num(p, "port")));
	else
		fprintf(f, "Samples from %s\n", vfmt_text(a, sizeof(a), jpath_str(doc, "file")));
}

static void samples(FILE *f, const struct json_object *p)
{
	size_t n = jpath_len(p, "samples");
	double total = 0;
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], k[VFMT_LEN], h[TEXT_LEN];

	for (size_t i = 0; i < n; i++)
		total += jpath_num(jpath_at(p, "samples", i), "count");
	view_key(f, IND, "samples");
	fprintf(f, "%zu stream counts from %s samples\n", n, vfmt_count(a, total));
	if (!n)
		return;
	view_cont(f, IND);
	fprintf(f, "%5s %14s %8s %14s %10s  %s\n", "n", "throughput", "samples", "sd", "age", "from");
	for (size_t i = 0; i < n; i++) {
		const struct json_object *s = jpath_at(p, "samples", i);
		size_t no = jpath_len(s, "origins");

		h[0] = '\0';
		for (size_t o = 0; o < no; o++) {
			char t[32];

			snprintf(h + strlen(h), sizeof(h) - strlen(h), "%s%s", o ? "," : "",
				 vfmt_text(t, sizeof(t), jpath_str(jpath_at(s, "origins", o), NULL)));
		}
		if (jpath_bool(s, "fitted") == 0)
			snprintf(h + strlen(h), sizeof(h) - strlen(h), " (not fitted)");
		view_cont(f, IND);
		fprintf(f, "%5s %14s %8s %14s %10s  %s\n", vfmt_count(a, jpath_num(s, "n")),
			vfmt_rate(b, jpath_num(s, "throughput_bps")),
			vfmt_count(c, jpath_num(s, "count")), vfmt_rate(g, jpath_num(s, "sd_bps")),
			vfmt_dur(k, jpath_num(s, "age_s")), h[0] ? h : VFMT_NONE);
	}
}

/* "at n = 1, 4, 16" */
static void used(FILE *f, const struct json_object *fit)
{
	char a[VFMT_LEN];

	for (size_t i = 0; i < jpath_len(fit, "samples_used"); i++)
		fprintf(f, "%s%s", i ? ", " : " at n = ",
			vfmt_count(a, jpath_num(jpath_at(fit, "samples_used", i), NULL)));
}

static void coefs(FILE *f, const struct json_object *fit)
{
	static const char *const names[][2] = {
		{ "a", "a'" }, { "b", "b'" }, { "c", "c'" }, { "a2", "a2'" }, { "b2", "b2'" },
		{ "nb", "from n" }, { "x", "x" },
	};
	const struct json_object *k = jpath_obj(fit, "coef");
	bool any = false;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		double v = jpath_num(k, names[i][0]);

		if (!isfinite(v))
			continue;
		if (!any)
			view_cont(f, IND);
		fprintf(f, "%s%s %.6g", any ? ", " : "", names[i][1], v);
		any = true;
	}
	if (any)
		fputc('\n', f);
}

static void fit(FILE *f, const struct json_object *p)
{
	const struct json_object *fi = jpath_obj(p, "fit");
	const char *model = jpath_str(fi, "model");
	char a[VFMT_LEN], b[VFMT_LEN], t[32];

	view_key(f, IND, "model");
	if (!fi) {
		fputs(VFMT_NONE "\n", f);
		return;
	}
	if (model && !strcmp(model, "measured")) {
		fputs("none fits: the advice is the best measured stream count\n", f);
		return;
	}
	fprintf(f, "%s, error %s (%s)", vfmt_text(t, sizeof(t), model),
		vfmt_rate(a, jpath_num(fi, "err_bps")), vfmt_pct(b, jpath_num(fi, "rel_err"), 1));
	used(f, fi);
	fputc('\n', f);
	coefs(f, fi);
}

/* Whether the frame's flags list @name. */
static bool has_flag(const struct json_object *fr, const char *name)
{
	for (size_t i = 0; i < jpath_len(fr, "flags"); i++) {
		const char *s = jpath_str(jpath_at(fr, "flags", i), NULL);

		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

/* The daemon's documents: what a STREAMS frame to this peer says now. */
static void frame(FILE *f, const struct json_object *p)
{
	const struct json_object *fr = jpath_obj(p, "frame");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN];

	if (!fr)
		return;
	view_key(f, IND, "STREAMS");
	if (jpath_bool(fr, "valid") != 1) {
		fputs("none yet (no sample)\n", f);
		return;
	}
	if (has_flag(fr, "explore")) {
		fprintf(f, "%s streams next: the exponential sampling (1, 2, 4, ...) goes on\n",
			vfmt_count(a, jpath_num(fr, "streams")));
		return;
	}
	fprintf(f, "%s streams, %s predicted, confidence %s%s%s\n",
		vfmt_count(a, jpath_num(fr, "streams")), vfmt_rate(b, jpath_num(fr, "predicted_bps")),
		vfmt_pct(c, jpath_num(fr, "confidence") / 1000, 0),
		has_flag(fr, "capped") ? ", held by the receiver's capacity" : "",
		has_flag(fr, "measured") ? ", the best measured (no model fits)" : "");
}

static void advice(FILE *f, const struct json_object *p)
{
	const struct json_object *ad = jpath_obj(p, "advice"), *fi = jpath_obj(p, "fit");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[TEXT_LEN];
	const char *why = jpath_str(p, "cap_why");

	view_key(f, IND, jpath_obj(p, "frame") ? "fit's advice" : "advice");
	if (!ad) {
		fputs(VFMT_NONE "\n", f);
		return;
	}
	fprintf(f, "%s streams, %s predicted (peak: %s streams, %s%s)\n",
		vfmt_count(a, jpath_num(ad, "streams")), vfmt_rate(b, jpath_num(ad, "predicted_bps")),
		vfmt_count(c, jpath_num(ad, "peak_streams")), vfmt_rate(g, jpath_num(ad, "peak_bps")),
		jpath_bool(ad, "rising") == 1 ? ", still rising there" : "");
	view_key(f, IND, "confidence");
	fprintf(f, "%s\n", vfmt_pct(a, jpath_num(fi, "confidence"), 0));
	view_key(f, IND, "receiver cap");
	if (!isfinite(jpath_num(ad, "cap_bps")))
		fprintf(f, "%s\n", why ? vfmt_text(h, sizeof(h), why) : "none");
	else
		fprintf(f, "%s, %s%s%s\n", vfmt_rate(a, jpath_num(ad, "cap_bps")),
			jpath_bool(ad, "capped") == 1 ? "binds: fewer streams than the curve's best" :
							 "does not bind",
			why ? "; " : "", why ? vfmt_text(h, sizeof(h), why) : "");
}

static void explore(FILE *f, const struct json_object *p)
{
	const struct json_object *e = jpath_obj(p, "explore");
	char a[VFMT_LEN];

	if (!e)
		return;
	view_key(f, IND, "sampling");
	if (isfinite(jpath_num(e, "next")))
		fprintf(f, "exponential (1, 2, 4, ...): next %s streams\n",
			vfmt_count(a, jpath_num(e, "next")));
	else
		fprintf(f, "exponential (1, 2, 4, ...): done\n");
}

/* The curve at powers of two (every n with VIEW_VERBOSE). */
static void curve(FILE *f, const struct json_object *p, unsigned flags)
{
	size_t n = jpath_len(p, "curve");
	char a[VFMT_LEN], b[VFMT_LEN];
	int col = 0;

	if (!n)
		return;
	view_key(f, IND, "curve");
	for (size_t i = 0; i < n; i++) {
		const struct json_object *pt = jpath_at(p, "curve", i);
		double sn = jpath_num(jpath_at(pt, NULL, 0), NULL);

		if (!(flags & VIEW_VERBOSE) && (i + 1) & i && i + 1 != n)
			continue;
		if (col == 4) {
			fputc('\n', f);
			view_cont(f, IND);
			col = 0;
		}
		fprintf(f, "%s%s: %s", col ? ", " : "", vfmt_count(a, sn),
			vfmt_rate(b, jpath_num(jpath_at(pt, NULL, 1), NULL)));
		col++;
	}
	fputc('\n', f);
}

static void models(FILE *f, const struct json_object *p)
{
	const struct json_object *fi = jpath_obj(p, "fit");
	size_t n = jpath_len(fi, "models");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], t[32];

	if (!n)
		return;
	view_key(f, IND, "models");
	fprintf(f, "%-10s %14s %8s %8s %8s\n", "model", "error", "tried", "undeterm.", "rejected");
	for (size_t i = 0; i < n; i++) {
		const struct json_object *m = jpath_at(fi, "models", i);

		view_cont(f, IND);
		fprintf(f, "%-10s %14s %8s %8s %8s\n", vfmt_text(t, sizeof(t), jpath_str(m, "model")),
			jpath_bool(m, "found") == 1 ? vfmt_rate(a, jpath_num(m, "err_bps")) :
						      "none",
			vfmt_count(b, jpath_num(m, "tried")), vfmt_count(c, jpath_num(m, "undetermined")),
			vfmt_count(g, jpath_num(m, "rejected")));
	}
}

void view_streams(FILE *f, const struct json_object *doc, unsigned flags)
{
	size_t n = jpath_len(doc, "peers");

	if (jpath_bool(doc, "enabled") == 0)
		fputs("The stream-count advisor is off ([streams] enabled = no).\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct json_object *p = jpath_at(doc, "peers", i);

		if (i)
			fputc('\n', f);
		header(f, doc, p);
		samples(f, p);
		frame(f, p);
		fit(f, p);
		advice(f, p);
		explore(f, p);
		curve(f, p, flags);
		if (flags & VIEW_VERBOSE)
			models(f, p);
	}
	if (!n && jpath_bool(doc, "enabled") != 0)
		fputs("(no peer with samples)\n", f);
}

int view_streams_text(FILE *f, const char *json, size_t len, unsigned flags, char *why)
{
	struct json_object *doc = answer_parse_json(json, len, why);

	if (!doc)
		return -EINVAL;
	view_streams(f, doc, flags);
	json_object_put(doc);
	return 0;
}
