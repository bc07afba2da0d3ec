/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The samples file of `rxbneckctl streams --samples FILE`: CSV, one sample
 * per line,
 *	n,throughput_bps
 * n a whole number of streams (1 .. STREAMS_N_LIMIT), the throughput in
 * bits/s (> 0; SI suffixes as elsewhere: 950M, 1.2G). Blank lines and
 * lines starting with '#' are skipped; the first other line may be a
 * header (its first field is not a number). Samples of the same n are
 * averaged: the fit takes one point per stream count (the paper's
 * "CollectiveData"). Untrusted input: at most STREAMS_CSV_MAX_BYTES,
 * STREAMS_CSV_MAX_LINE bytes a line, STREAMS_FIT_MAX_POINTS distinct n;
 * an error names the line.
 */
#ifndef RXB_CTL_STREAMS_CSV_H
#define RXB_CTL_STREAMS_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "solver/streams_fit.h"

#define STREAMS_CSV_MAX_BYTES	(1024 * 1024)
#define STREAMS_CSV_MAX_LINE	256

struct streams_csv {
	int m;					/* distinct n */
	struct streams_point p[STREAMS_FIT_MAX_POINTS];	/* increasing n, mean th */
	uint32_t count[STREAMS_FIT_MAX_POINTS];	/* samples behind each */
	double sd[STREAMS_FIT_MAX_POINTS];	/* their standard deviation, NaN below 2 */
	uint32_t rows;				/* samples read */
};

/*
 * Parse @len bytes of @text (need not be NUL-terminated) into @out. 0, or
 * -EINVAL with "LINE: what is wrong" in @err (@errlen bytes); -EFBIG over
 * STREAMS_CSV_MAX_BYTES. No sample at all is an error too.
 */
int streams_csv_parse(const char *text, size_t len, struct streams_csv *out, char *err,
		      size_t errlen);

#endif
