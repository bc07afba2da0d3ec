// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for rxbneckctl model --from-status: the reader of a
 * flow's solved inputs in the daemon's status document
 * (model_live_from_doc(), ctl/model_live.c). The first two bytes are the
 * port asked for (little-endian), the rest the document's JSON.
 *
 * Properties besides "no crash, no leak, no sanitizer report": a document
 * read without complaint gives inputs the solver's own checks take
 * (check_inputs() in solver/bneck_model.c), so that a what-if never starts
 * from numbers the solver would refuse or choke on:
 *  - each stage: mu_net_per_s positive and finite, mu_net_full_per_s 0 or
 *    below it, 1 <= batch_pkts <= queue_pkts <= 2^30, a release within
 *    the queue, a vacation shorter than its period, irq time, spread,
 *    saturated drain and windows finite and >= 0 (spread <= 1), a quota
 *    none or with phases qphase takes, #C and #I below TAGGED_MAX_TASKS;
 *  - the transfer: payload, file, line and minimum rate positive and
 *    finite, minimum below line, delay >= 0, an episode 0 or >= 1;
 *  - the flow found is the one asked for.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/model.h"
#include "solver/qphase.h"
#include "solver/tagged.h"

static bool pos(double v)
{
	return v > 0 && isfinite(v);
}

static bool nonneg(double v)
{
	return v >= 0 && isfinite(v);
}

static void check_slots(const double *v)
{
	for (size_t r = 0; r < RXB_OFFCPU_SLOTS; r++)
		if (!nonneg(v[r]))
			abort();
}

static void check_stage(const struct rxb_stage_inputs *in)
{
	if (!pos(in->mu_net_per_s) ||
	    !(in->mu_net_full_per_s == 0 || (in->mu_net_full_per_s > 0 &&
					      in->mu_net_full_per_s < in->mu_net_per_s)))
		abort();
	if (in->batch_pkts < 1 || in->batch_pkts > in->queue_pkts || in->queue_pkts > (1u << 30))
		abort();
	if (!(in->queue_release_pkts >= 0 && in->queue_release_pkts <= in->queue_pkts))
		abort();
	if (!nonneg(in->vacation_s) ||
	    (in->vacation_s > 0 && !(in->vacation_period_s > in->vacation_s &&
				     isfinite(in->vacation_period_s))))
		abort();
	if (!nonneg(in->irq_ns_per_pkt) || !(in->mu_rel_sd >= 0 && in->mu_rel_sd <= 1) ||
	    !nonneg(in->sat_drain_pkts_per_s))
		abort();
	if (in->load_independent)
		return;
	if (!nonneg(in->offcpu_per_s) || !nonneg(in->offcpu_gap_s) || !nonneg(in->wake_per_s) ||
	    !nonneg(in->wake_max_s) || !nonneg(in->windows_seen_pps))
		abort();
	check_slots(in->offcpu_hist);
	check_slots(in->offcpu_mean_s);
	check_slots(in->offcpu_sd_s);
	check_slots(in->wake_hist);
	check_slots(in->wake_mean_s);
	check_slots(in->wake_sd_s);
	if (in->quota_period_s != 0 &&
	    !qphase_phases_valid(in->quota_period_s, in->quota_slow_s, in->quota_slow_share,
				 in->quota_fast_share))
		abort();
	if (!(in->cpu_bound >= 0 && in->cpu_bound < TAGGED_MAX_TASKS) ||
	    !(in->io_bound >= 0 && in->io_bound < TAGGED_MAX_TASKS) ||
	    !pos(in->mu_pio_per_s) || !pos(in->mu_disk_per_s))
		abort();
}

static void check_xfer(const struct bneck_xfer *x)
{
	if (!pos(x->payload_bytes) || !pos(x->file_bytes) || !nonneg(x->one_way_delay_s) ||
	    !pos(x->min_rate_bps) || !pos(x->line_rate_bps) ||
	    !(x->min_rate_bps < x->line_rate_bps) ||
	    !(x->loss_episode_pkts == 0 || (x->loss_episode_pkts >= 1 &&
					    isfinite(x->loss_episode_pkts))))
		abort();
	if (x->rounds != BNECK_ROUNDS_BURST && x->rounds != BNECK_ROUNDS_SEED)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	struct json_object *doc;
	struct model_args a;
	uint16_t port;

	if (size < 2 || size > 1 << 20)
		return 0;
	port = (uint16_t)(data[0] | data[1] << 8);
	tok = json_tokener_new();
	if (!tok)
		return 0;
	doc = json_tokener_parse_ex(tok, (const char *)data + 2, (int)(size - 2));
	json_tokener_free(tok);
	if (!doc)
		return 0;
	memset(&a, 0, sizeof(a));
	a.x.points = 200;
	if (model_live_from_doc(&a, doc, port) == CTL_EXIT_OK) {
		if (!a.live.used || a.live.port != port)
			abort();
		check_stage(&a.stage);
		if (a.has_front)
			check_stage(&a.front);
		check_xfer(&a.x);
	}
	json_object_put(doc);
	return 0;
}
