// SPDX-License-Identifier: GPL-2.0-or-later
/* The Prometheus text exposition format. See promtext.h. */
#include "daemon/serve/promtext.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void promtext_init(struct promtext *w, size_t max_bytes)
{
	memset(w, 0, sizeof(*w));
	strbuf_init(&w->out, max_bytes);
}

void promtext_finish(struct promtext *w)
{
	strbuf_finish(&w->out);
	memset(w, 0, sizeof(*w));
}

static void put(struct promtext *w, const char *s, size_t n)
{
	strbuf_add(&w->out, s, n);
}

static void puts_(struct promtext *w, const char *s)
{
	put(w, s, strlen(s));
}

/* @s with backslash and newline escaped, and '"' too when @quote. */
static void put_escaped(struct promtext *w, const char *s, bool quote)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			put(w, "\\\\", 2);
		else if (*p == '\n')
			put(w, "\\n", 2);
		else if (*p == '"' && quote)
			put(w, "\\\"", 2);
		else
			put(w, p, 1);
	}
}

static bool name_ok(const char *s, bool colon)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
			     (colon && *p == ':');

		if (!alpha && (p == s || *p < '0' || *p > '9'))
			return false;
	}
	return true;
}

static const char *type_name(enum promtext_type t)
{
	return t == PROMTEXT_COUNTER ? "counter" : t == PROMTEXT_GAUGE ? "gauge" : "histogram";
}

void promtext_family(struct promtext *w, const char *name, enum promtext_type type,
		     const char *help)
{
	if (w->out.failed)
		return;
	if (!name_ok(name, true) || strlen(name) + 8 >= sizeof(w->family)) {
		strbuf_fail(&w->out);
		return;
	}
	snprintf(w->family, sizeof(w->family), "%s", name);
	w->type = type;
	puts_(w, "# HELP ");
	puts_(w, name);
	put(w, " ", 1);
	put_escaped(w, help ? help : "", false);
	puts_(w, "\n# TYPE ");
	puts_(w, name);
	put(w, " ", 1);
	puts_(w, type_name(type));
	put(w, "\n", 1);
}

/* "name{a="x",b="y"} " up to the value. */
static void sample_head(struct promtext *w, const char *suffix,
			const struct promtext_label *labels, int nlabels)
{
	if (w->out.failed)
		return;
	if (!w->family[0] || (suffix && *suffix && !name_ok(suffix, true))) {
		strbuf_fail(&w->out);
		return;
	}
	puts_(w, w->family);
	if (suffix)
		puts_(w, suffix);
	for (int i = 0; i < nlabels; i++) {
		if (!name_ok(labels[i].name, false) || !labels[i].value) {
			strbuf_fail(&w->out);
			return;
		}
		put(w, i ? "," : "{", 1);
		puts_(w, labels[i].name);
		put(w, "=\"", 2);
		put_escaped(w, labels[i].value, true);
		put(w, "\"", 1);
	}
	if (nlabels > 0)
		put(w, "}", 1);
	put(w, " ", 1);
}

/* The shortest of %.15g..%.17g that reads back as @v. */
static void format_double(char *buf, size_t size, double v)
{
	if (isnan(v)) {
		snprintf(buf, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void promtext_sample(struct promtext *w, const char *suffix,
		     const struct promtext_label *labels, int nlabels, double v)
{
	char num[40];

	sample_head(w, suffix, labels, nlabels);
	format_double(num, sizeof(num), v);
	puts_(w, num);
	put(w, "\n", 1);
}

void promtext_sample_u64(struct promtext *w, const char *suffix,
			 const struct promtext_label *labels, int nlabels, uint64_t v)
{
	char num[24];

	sample_head(w, suffix, labels, nlabels);
	snprintf(num, sizeof(num), "%" PRIu64, v);
	puts_(w, num);
	put(w, "\n", 1);
}

int promtext_hist_init(struct promtext_hist *h, const double *bounds, int n)
{
	memset(h, 0, sizeof(*h));
	if (n < 0 || n > PROMTEXT_HIST_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1]))
			return -EINVAL;
	memcpy(h->bound, bounds, (size_t)n * sizeof(bounds[0]));
	h->nbounds = n;
	return 0;
}

void promtext_hist_observe(struct promtext_hist *h, double v)
{
	int i = 0;

	if (isnan(v))
		return;
	while (i < h->nbounds && v > h->bound[i])
		i++;
	h->count[i]++;
	h->total++;
	h->sum += v;
}

void promtext_histogram(struct promtext *w, const struct promtext_label *labels, int nlabels,
			const struct promtext_hist *h)
{
	struct promtext_label l[9];
	uint64_t cum = 0;
	char le[40];

	if (w->out.failed)
		return;
	if (nlabels < 0 || nlabels > 8 || w->type != PROMTEXT_HISTOGRAM) {
		strbuf_fail(&w->out);
		return;
	}
	if (nlabels)
		memcpy(l, labels, (size_t)nlabels * sizeof(l[0]));
	l[nlabels].name = "le";
	l[nlabels].value = le;
	for (int i = 0; i < h->nbounds; i++) {
		cum += h->count[i];
		format_double(le, sizeof(le), h->bound[i]);
		promtext_sample_u64(w, "_bucket", l, nlabels + 1, cum);
	}
	snprintf(le, sizeof(le), "+Inf");
	promtext_sample_u64(w, "_bucket", l, nlabels + 1, h->total);
	promtext_sample(w, "_sum", labels, nlabels, h->sum);
	promtext_sample_u64(w, "_count", labels, nlabels, h->total);
}

bool promtext_ok(const struct promtext *w)
{
	return !w->out.failed;
}

const char *promtext_text(const struct promtext *w)
{
	return strbuf_text(&w->out);
}

size_t promtext_len(const struct promtext *w)
{
	return strbuf_len(&w->out);
}

char *promtext_take(struct promtext *w, size_t *len)
{
	w->family[0] = '\0';
	return strbuf_take(&w->out, len);
}
