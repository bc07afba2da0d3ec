// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the stream-count advisor's history file
 * (daemon/model/streams_hist.c) and what restoring it does to the advisor
 * (daemon/model/advisor.c). Besides "no crash, no sanitizer report":
 *  - the advisor stays within its bounds: peers, buckets per peer, buckets
 *    sorted by distinct n within 1 .. max_n, finite positive means and
 *    weights at most max_weight_s, first <= last;
 *  - every bucket it holds formats to a line that parses back to the same
 *    bucket;
 *  - a fit of each peer succeeds (a restored history is advised from).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/model/streams_hist.h"

static const struct advisor_params params = {
	.max_peers = 4, .max_points = 6, .max_weight_s = 600, .max_age_s = 0,
	.min_weight_s = 0, .max_n = 64, .tolerance = 0.02, .rise = 0.05, .fits_per_epoch = 4,
};

static void check_peer(const struct advisor_peer *p, const struct advisor_params *pp)
{
	char line[STREAMS_HIST_MAX_LINE + 64];

	if (p->nb < 1 || (uint32_t)p->nb > pp->max_points)
		abort();
	for (int k = 0; k < p->nb; k++) {
		const struct advisor_bucket *b = &p->b[k];
		struct streams_hist_entry e = { .port = p->port, .b = *b }, back;

		if (b->n < 1 || b->n > pp->max_n || (k && b->n <= p->b[k - 1].n) ||
		    !(b->mean_bps > 0) || !isfinite(b->mean_bps) || !(b->weight_s > 0) ||
		    b->weight_s > pp->max_weight_s * (1 + 1e-12) || b->first_unix > b->last_unix)
			abort();
		memcpy(e.addr, p->addr, 16);
		if (streams_hist_format_line(&e, line, sizeof(line)) > STREAMS_HIST_MAX_LINE)
			abort();
		line[strcspn(line, "\n")] = '\0';
		if (streams_hist_parse_line(line, &back) || back.b.n != b->n ||
		    back.b.mean_bps != b->mean_bps || back.b.weight_s != b->weight_s ||
		    back.b.m2 != b->m2 || back.b.count != b->count || back.port != p->port ||
		    memcmp(back.addr, p->addr, 16))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct streams_hist_stats st;
	struct advisor a;
	uint32_t used = 0;

	if (advisor_init(&a, &params))
		return 0;
	if (streams_hist_parse((const char *)data, size, &a, 1763770000, &st))
		abort();
	for (uint32_t i = 0; i < a.p.max_peers; i++) {
		if (!a.peers[i].used)
			continue;
		used++;
		check_peer(&a.peers[i], &a.p);
	}
	if (used != a.npeers || used > params.max_peers)
		abort();
	advisor_epoch(&a, 1, 1763770000, NULL, NULL);
	for (uint32_t i = 0; i < a.p.max_peers; i++)
		if (a.peers[i].used && (!a.peers[i].fitted || !a.peers[i].adv.valid))
			abort();
	advisor_finish(&a);
	return 0;
}
