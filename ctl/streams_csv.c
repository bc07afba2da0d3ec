// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The samples file of rxbneckctl streams. See streams_csv.h. Hand-written:
 * two numeric columns need no CSV library (libcsv's quoting and
 * multi-line fields are what this format forbids), and each field goes
 * through the strict number parsers of common/parse.h.
 */
#include "ctl/streams_csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"

_Static_assert(STREAMS_N_LIMIT == 1024, "line_sample() says 1 .. 1024");

/* Running sums per n, by Welford's update. */
struct acc {
	double n, mean, m2;
	uint32_t count;
};

/* @s without blanks at either end, in place. */
static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int add(struct acc *a, int *na, double n, double th)
{
	int i;
	double d;

	for (i = 0; i < *na && a[i].n != n; i++)
		;
	if (i == *na) {
		if (*na == STREAMS_FIT_MAX_POINTS)
			return -ENOSPC;
		a[(*na)++] = (struct acc){ .n = n };
	}
	a[i].count++;
	d = th - a[i].mean;
	a[i].mean += d / a[i].count;
	a[i].m2 += d * (th - a[i].mean);
	return 0;
}

/* One line (NUL-terminated, no newline): 1 a sample, 0 skipped, < 0 error. */
static int line_sample(char *line, bool header_ok, double *n, double *th, const char **why)
{
	char *comma, *f0, *f1;
	uint64_t u;

	line = trim(line);
	if (!line[0] || line[0] == '#')
		return 0;
	comma = strchr(line, ',');
	if (!comma) {
		*why = "expected two fields, n,throughput_bps";
		return -EINVAL;
	}
	*comma = '\0';
	f0 = trim(line);
	f1 = trim(comma + 1);
	if (strchr(f1, ',')) {
		*why = "more than two fields";
		return -EINVAL;
	}
	if (rxb_parse_u64(f0, 0, UINT64_MAX, &u)) {
		if (header_ok && (f0[0] < '0' || f0[0] > '9'))
			return 0;
		*why = "n is not a whole number";
		return -EINVAL;
	}
	if (u < 1 || u > STREAMS_N_LIMIT) {
		*why = "n is not within 1 .. 1024";
		return -EINVAL;
	}
	if (rxb_parse_si(f1, 1e-300, 1e18, th)) {
		*why = "the throughput is not a positive number of bits/s";
		return -EINVAL;
	}
	*n = (double)u;
	return 1;
}

/* Sorted by n into @out. */
static void collect(const struct acc *a, int na, struct streams_csv *out)
{
	bool used[STREAMS_FIT_MAX_POINTS] = { false };

	for (int k = 0; k < na; k++) {
		int best = -1;

		for (int i = 0; i < na; i++)
			if (!used[i] && (best < 0 || a[i].n < a[best].n))
				best = i;
		used[best] = true;
		out->p[k] = (struct streams_point){ a[best].n, a[best].mean };
		out->count[k] = a[best].count;
		out->sd[k] = a[best].count > 1 ? sqrt(a[best].m2 / (a[best].count - 1)) : NAN;
	}
	out->m = na;
}

int streams_csv_parse(const char *text, size_t len, struct streams_csv *out, char *err,
		      size_t errlen)
{
	struct acc a[STREAMS_FIT_MAX_POINTS];
	char line[STREAMS_CSV_MAX_LINE + 1];
	bool header_ok = true;
	size_t off = 0;
	int na = 0, lineno = 0;

	memset(out, 0, sizeof(*out));
	if (len > STREAMS_CSV_MAX_BYTES) {
		rxb_parse_error(err, errlen, 0, "more than %d bytes", STREAMS_CSV_MAX_BYTES);
		return -EFBIG;
	}
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		const char *why = NULL;
		double sn, th;
		int r;

		lineno++;
		if (n > STREAMS_CSV_MAX_LINE)
			return rxb_parse_error(err, errlen, lineno, "longer than %d bytes",
					 STREAMS_CSV_MAX_LINE);
		memcpy(line, text + off, n);
		line[n] = '\0';
		off += n + 1;
		if (strlen(line) != n)
			return rxb_parse_error(err, errlen, lineno, "a NUL byte");
		r = line_sample(line, header_ok, &sn, &th, &why);
		if (r < 0)
			return rxb_parse_error(err, errlen, lineno, "%s", why);
		if (r == 0) {
			/* Only the first line with content may be a header. */
			if (line[0] && trim(line)[0] && trim(line)[0] != '#')
				header_ok = false;
			continue;
		}
		header_ok = false;
		if (add(a, &na, sn, th))
			return rxb_parse_error(err, errlen, lineno, "more than %d distinct stream counts",
					 STREAMS_FIT_MAX_POINTS);
		out->rows++;
	}
	if (!na)
		return rxb_parse_error(err, errlen, 0, "no sample (lines of n,throughput_bps)");
	collect(a, na, out);
	return 0;
}
