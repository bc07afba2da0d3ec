/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A writer of the Prometheus text exposition format, version 0.0.4 (the
 * format every Prometheus and OpenTelemetry collector scrapes), into a
 * growable buffer with a size cap.
 *
 * A family is begun with its name, type and help; its samples follow,
 * each with an optional name suffix (a histogram's _bucket/_sum/_count)
 * and labels. Escaping is done here: label values escape backslash,
 * double quote and newline; help text escapes backslash and newline.
 * Metric and label names are checked against [a-zA-Z_:][a-zA-Z0-9_:]* (a
 * label name without ':'); a bad name, a sample outside a family, an
 * allocation failure or the cap latch: later calls do nothing and
 * promtext_ok() returns false.
 *
 *	struct promtext w;
 *	struct promtext_label l[] = { { "port", "5001" } };
 *	promtext_init(&w, 1 << 20);
 *	promtext_family(&w, "rxbneck_flow_senders", PROMTEXT_GAUGE, "Senders.");
 *	promtext_sample(&w, NULL, l, 1, 2);
 *	if (promtext_ok(&w)) fputs(promtext_text(&w), stdout);
 *	promtext_finish(&w);
 *
 * Histograms: struct promtext_hist counts observations per bucket (upper
 * bounds inclusive, as Prometheus's "le"); promtext_histogram() writes the
 * buckets cumulative, the +Inf bucket equal to _count, then _sum, _count.
 */
#ifndef RXB_DAEMON_PROMTEXT_H
#define RXB_DAEMON_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

#define PROMTEXT_NAME_MAX	96	/* metric names, suffix included */
#define PROMTEXT_HIST_MAX	24	/* finite bucket bounds */
#define PROMTEXT_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

enum promtext_type {
	PROMTEXT_COUNTER,
	PROMTEXT_GAUGE,
	PROMTEXT_HISTOGRAM,
};

struct promtext_label {
	const char *name;
	const char *value;	/* any bytes but NUL; escaped here */
};

struct promtext {
	struct strbuf out;		/* capped at promtext_init()'s max_bytes */
	char family[PROMTEXT_NAME_MAX];	/* "" outside a family */
	enum promtext_type type;
};

struct promtext_hist {
	int nbounds;
	double bound[PROMTEXT_HIST_MAX];	/* ascending, finite */
	uint64_t count[PROMTEXT_HIST_MAX + 1];	/* per bucket, not cumulative;
						 * the last: above every bound */
	double sum;
	uint64_t total;
};

void promtext_init(struct promtext *w, size_t max_bytes);
void promtext_finish(struct promtext *w);

/* "# HELP" and "# TYPE" lines; the samples that follow belong to @name. */
void promtext_family(struct promtext *w, const char *name, enum promtext_type type,
		     const char *help);
/*
 * One sample of the current family: its name plus @suffix (may be NULL),
 * @nlabels labels, the value. Non-finite values are written as NaN, +Inf,
 * -Inf.
 */
void promtext_sample(struct promtext *w, const char *suffix,
		     const struct promtext_label *labels, int nlabels, double v);
/* The same with an exact integer value (counters beyond 2^53). */
void promtext_sample_u64(struct promtext *w, const char *suffix,
			 const struct promtext_label *labels, int nlabels, uint64_t v);

/* Bounds must ascend and be finite; -EINVAL (and an empty histogram) else. */
int promtext_hist_init(struct promtext_hist *h, const double *bounds, int n);
void promtext_hist_observe(struct promtext_hist *h, double v);
/* The histogram family's samples for @h (after promtext_family(HISTOGRAM)). */
void promtext_histogram(struct promtext *w, const struct promtext_label *labels, int nlabels,
			const struct promtext_hist *h);

bool promtext_ok(const struct promtext *w);
/* NUL-terminated text so far ("" when nothing was written). */
const char *promtext_text(const struct promtext *w);
size_t promtext_len(const struct promtext *w);
/*
 * Hand the buffer over (the caller free()s it; NULL when nothing or when
 * failed); @w is empty afterwards.
 */
char *promtext_take(struct promtext *w, size_t *len);

#endif
