// SPDX-License-Identifier: GPL-2.0-or-later
/* A flow's pause-window predictor as text. See view_pause.h. */
#include "ctl/view/view_pause.h"

#include <string.h>

#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"

#define IND		2
#define TEXT_LEN	256

/* A time the document gives in microseconds. */
static const char *us(char *buf, const struct json_object *o, const char *path)
{
	return vfmt_dur(buf, jpath_num(o, path) / 1e6);
}

static void prediction(FILE *f, const struct json_object *p)
{
	const struct json_object *pr = jpath_obj(p, "prediction");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], t[32];

	if (jpath_bool(pr, "valid") != 1)
		return;
	fprintf(f, "; the receiver runs T_I/O %s (%s), then is off D %s = %s x %s slices on cpu%s, "
		"period %s", us(a, pr, "t_io_us"), vfmt_text(t, sizeof(t), jpath_str(pr, "t_io_source")),
		us(b, pr, "window_us"), vfmt_fixed(c, jpath_num(pr, "cpu_bound"), 2),
		us(g, pr, "slice_us"), vfmt_count(h, jpath_num(pr, "cpu")), us(k, pr, "period_us"));
}

static void measured(FILE *f, const struct json_object *p)
{
	const struct json_object *m = jpath_obj(p, "measured");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN];

	view_cont(f, IND);
	fprintf(f, "measured: %s preemptions (%s this epoch), runs %s, off %s (this epoch %s); "
		"%s events lost\n", vfmt_count(a, jpath_num(m, "preemptions")),
		vfmt_count(b, jpath_num(m, "epoch_preemptions")), us(c, m, "run_mean_us"),
		us(g, m, "off_mean_us"), us(h, m, "epoch_off_mean_us"),
		vfmt_count(k, jpath_num(m, "events_lost")));
}

static void error_summary(FILE *f, const char *what, const struct json_object *e)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN];

	fprintf(f, "%s error mean %s (bias %s), p50 %s, p90 %s", what, us(a, e, "mean_abs_us"),
		us(b, e, "bias_us"), us(c, e, "p50_abs_us"), us(g, e, "p90_abs_us"));
}

static void checks(FILE *f, const struct json_object *p)
{
	const struct json_object *c = jpath_obj(p, "check");
	char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], m[VFMT_LEN];

	view_cont(f, IND);
	fprintf(f, "checked: %s of %s windows hit (%s), %s missed, %s false alarms, %s short\n",
		vfmt_count(a, jpath_num(c, "hits")), vfmt_count(b, jpath_num(c, "scored")),
		vfmt_pct(g, jpath_num(c, "hit_rate"), 1), vfmt_count(h, jpath_num(c, "missed")),
		vfmt_count(k, jpath_num(c, "false_alarms")), vfmt_count(m, jpath_num(c, "short")));
	view_cont(f, IND);
	error_summary(f, "start", jpath_obj(c, "start_error"));
	fputs("; ", f);
	error_summary(f, "duration", jpath_obj(c, "duration_error"));
	fprintf(f, "; schedules hit %s of %s\n", vfmt_count(a, jpath_num(c, "schedule_hits")),
		vfmt_count(b, jpath_num(c, "schedule_checked")));
}

static void last(FILE *f, const struct json_object *p)
{
	const struct json_object *l = jpath_obj(p, "last");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN],
	     m[VFMT_LEN];
	double flags = jpath_num(l, "flags");

	view_cont(f, IND);
	if (!l) {
		fputs("nothing sent yet\n", f);
		return;
	}
	fprintf(f, "last sent: %s in %s for %s every %s x %s, confidence %s, epoch %s, to %s senders\n",
		flags == 1 ? "CANCEL" : "PAUSE", us(a, l, "start_in_us"), us(b, l, "duration_us"),
		us(c, l, "period_us"), vfmt_count(g, jpath_num(l, "repeat_count")),
		vfmt_count(h, jpath_num(l, "confidence")), vfmt_count(k, jpath_num(l, "epoch")),
		vfmt_count(m, jpath_num(l, "sent_to")));
	view_cont(f, IND);
	fprintf(f, "%s schedules sent (%s early, %s re-phased), %s cancels\n",
		vfmt_count(a, jpath_num(p, "published")), vfmt_count(b, jpath_num(p, "published_early")),
		vfmt_count(c, jpath_num(p, "rephased")), vfmt_count(g, jpath_num(p, "cancels")));
}

void view_pause(FILE *f, const struct json_object *p, unsigned flags)
{
	const char *state = jpath_str(p, "state"), *why = jpath_str(p, "why");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], t[32], s[32], w[TEXT_LEN];

	if (!p)
		return;
	view_key(f, IND, "pause windows");
	fprintf(f, "%s (scheduler %s)", vfmt_text(t, sizeof(t), state),
		vfmt_text(s, sizeof(s), jpath_str(p, "scheduler")));
	if (why && why[0])
		fprintf(f, ": %s", vfmt_text(w, sizeof(w), why));
	if (state && strcmp(state, "disabled")) {
		prediction(f, p);
		if (jpath_num(p, "check.scored") > 0)
			fprintf(f, "; %s of %s windows predicted (%s)",
				vfmt_count(a, jpath_num(p, "check.hits")),
				vfmt_count(b, jpath_num(p, "check.scored")),
				vfmt_pct(c, jpath_num(p, "check.hit_rate"), 0));
	}
	fputc('\n', f);
	if (!(flags & VIEW_VERBOSE) || !state || !strcmp(state, "disabled"))
		return;
	measured(f, p);
	checks(f, p);
	last(f, p);
}
