// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model --from-status PORT: the inputs of a live flow, as
 * rxbneckd's last solve used them (status document, flows[].model;
 * docs/CONTROL.md §6.2), so a what-if starts from what the daemon
 * computed; from the daemon, or from a status document saved in a file
 * (--status-file). Every number is checked as the command line's would
 * be: the document comes over a socket or from a file and is not
 * trusted. See model.h.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/model.h"
#include "ctl/view/answer.h"
#include "ctl/view/jpath.h"
#include "solver/offwin.h"

#define LIVE_TIMEOUT_S	10
#define MAX_PKTS	(1u << 30)

static int live_fail(uint16_t port, const char *fmt, const char *what)
{
	fprintf(stderr, CTL_PROG " " MODEL_CMD ": --from-status %u: ", port);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	return CTL_EXIT_FAIL;
}

/* @key of @o, a finite number in [lo, hi]; false if not. */
static bool num_in(const struct json_object *o, const char *key, double lo, double hi, double *out)
{
	double v = jpath_num(o, key);

	if (!(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

static bool pkts_in(const struct json_object *o, const char *key, uint32_t *out)
{
	double v;

	if (!num_in(o, key, 1, MAX_PKTS, &v))
		return false;
	*out = (uint32_t)llround(v);
	return true;
}

/*
 * The stage's off-CPU windows (offcpu_windows: its spec string, gap_ns,
 * wake_spec, wake_max_ns and seen_pkts_per_s), none when absent; NULL or
 * the bad key.
 */
static const char *windows_from(const struct json_object *s, struct rxb_stage_inputs *in)
{
	const struct json_object *w = jpath_obj(s, "offcpu_windows");
	const char *spec = w ? jpath_str(w, "spec") : NULL;
	double gap_ns, max_ns;

	if (!w)
		return NULL;
	if (!spec || offwin_parse(spec, &in->offcpu_per_s, in->offcpu_hist, in->offcpu_mean_s,
				  in->offcpu_sd_s, RXB_OFFCPU_SLOTS))
		return "offcpu_windows.spec";
	if (num_in(w, "gap_ns", 0, 1e15, &gap_ns))
		in->offcpu_gap_s = gap_ns / 1e9;
	/* Absent before the probe measured wake-up waits: none. */
	spec = jpath_str(w, "wake_spec");
	if (spec && offwin_parse(spec, &in->wake_per_s, in->wake_hist, in->wake_mean_s,
				 in->wake_sd_s, RXB_OFFCPU_SLOTS))
		return "offcpu_windows.wake_spec";
	/* Absent or null (a daemon that has not seen one, or an older one): not cut. */
	if (jpath_get(w, "wake_max_ns")) {
		if (!num_in(w, "wake_max_ns", 0, 1e15, &max_ns))
			return "offcpu_windows.wake_max_ns";
		in->wake_max_s = max_ns / 1e9;
	}
	/* Absent or null likewise: no bound on the windows' reach. */
	if (jpath_get(w, "seen_pkts_per_s")) {
		if (!num_in(w, "seen_pkts_per_s", 0, 1e12, &in->windows_seen_pps))
			return "offcpu_windows.seen_pkts_per_s";
	}
	return NULL;
}

/*
 * A co-runner's quota phases (quota_phases: period_s, slow_s, slow_share,
 * fast_share), none when absent or null; NULL or the bad key.
 */
static const char *quota_from(const struct json_object *s, struct rxb_stage_inputs *in)
{
	const struct json_object *q = jpath_obj(s, "quota_phases");

	if (!q)
		return NULL;
	if (!num_in(q, "period_s", 1e-9, 1e4, &in->quota_period_s))
		return "quota_phases.period_s";
	if (!num_in(q, "slow_s", 1e-9, in->quota_period_s, &in->quota_slow_s))
		return "quota_phases.slow_s";
	if (!num_in(q, "slow_share", 1e-9, 1, &in->quota_slow_share))
		return "quota_phases.slow_share";
	if (!num_in(q, "fast_share", in->quota_slow_share, 1, &in->quota_fast_share))
		return "quota_phases.fast_share";
	return NULL;
}

/*
 * One solved stage (flows[].model.stages[]) into @in; NULL, or the key
 * that is missing or out of range.
 */
static const char *stage_from(const struct json_object *s, struct rxb_stage_inputs *in)
{
	const char *rule = jpath_str(s, "batch_rule");
	const char *bad;
	double full = 0;

	memset(in, 0, sizeof(*in));
	in->load_independent = jpath_bool(s, "load_independent") == 1;
	if (!num_in(s, "mu_net_per_s", 1e-6, 1e15, &in->mu_net_per_s))
		return "mu_net_per_s";
	if (num_in(s, "mu_net_full_per_s", 1e-6, 1e15, &full) && full < in->mu_net_per_s)
		in->mu_net_full_per_s = full;
	if (!pkts_in(s, "queue_pkts", &in->queue_pkts))
		return "queue_pkts";
	if (!pkts_in(s, "batch_pkts", &in->batch_pkts) || in->batch_pkts > in->queue_pkts)
		return "batch_pkts";
	if (!rule || (strcmp(rule, "strict") && strcmp(rule, "partial")))
		return "batch_rule";
	in->rule = strcmp(rule, "strict") ? RXB_BATCH_PARTIAL : RXB_BATCH_STRICT;
	if (!num_in(s, "irq_ns_per_pkt", 0, 1e9, &in->irq_ns_per_pkt))
		in->irq_ns_per_pkt = 0;
	if (!num_in(s, "mu_rel_sd", 0, 1, &in->mu_rel_sd))
		in->mu_rel_sd = 0;
	/* Absent or null: not measured, or not in force. */
	if (!num_in(s, "sat_drain_pkts_per_s", 0, 1e12, &in->sat_drain_pkts_per_s))
		in->sat_drain_pkts_per_s = 0;
	if (!num_in(s, "sat_drain_arrivals_pps", 0, 1e12, &in->sat_drain_arrivals_pps))
		in->sat_drain_arrivals_pps = 0;
	/* Absent from a daemon that does not model it: given back at once. */
	if (jpath_get(s, "queue_release_pkts") &&
	    !num_in(s, "queue_release_pkts", 0, in->queue_pkts, &in->queue_release_pkts))
		return "queue_release_pkts";
	if (num_in(s, "vacation_us", 0, 1e12, &in->vacation_s) &&
	    num_in(s, "vacation_period_us", 0, 1e12, &in->vacation_period_s)) {
		/* A vacation longer than its period is no schedule (bneck.h). */
		if (in->vacation_s > 0 && !(in->vacation_period_s > in->vacation_s))
			return "vacation_period_us";
		in->vacation_s /= 1e6;
		in->vacation_period_s /= 1e6;
	} else {
		in->vacation_s = in->vacation_period_s = 0;
	}
	if (in->load_independent)
		return NULL;
	bad = windows_from(s, in);
	if (!bad)
		bad = quota_from(s, in);
	if (bad)
		return bad;
	if (!num_in(s, "cpu_bound", 0, TAGGED_MAX_TASKS - 1, &in->cpu_bound))
		return "cpu_bound";
	if (!num_in(s, "io_bound", 0, TAGGED_MAX_TASKS - 1, &in->io_bound))
		return "io_bound";
	/* Unused while #I = 0; a daemon that does not report them solved
	 * with #I = 0 only when they were not measured. */
	if (!num_in(s, "mu_pio_per_s", 1e-6, 1e15, &in->mu_pio_per_s))
		in->mu_pio_per_s = 1;
	if (!num_in(s, "mu_disk_per_s", 1e-6, 1e15, &in->mu_disk_per_s))
		in->mu_disk_per_s = 1;
	return NULL;
}

/*
 * The windows by rate (model.windows_by_rate: at_bps increasing, each
 * with its offcpu_windows); none when absent or fewer than two.
 * CTL_EXIT_OK or the failure, said.
 */
static int bands_from(struct model_args *a, const struct json_object *m, uint16_t port)
{
	size_t n = jpath_len(m, "windows_by_rate");
	char msg[128];

	a->nbands = 0;
	if (n < 2)
		return CTL_EXIT_OK;
	if (n > BNECK_MAX_PIECES) {
		snprintf(msg, sizeof(msg), "%zu windows_by_rate (at most %d)", n,
			 BNECK_MAX_PIECES);
		return live_fail(port, "the daemon's model has %s", msg);
	}
	for (size_t j = 0; j < n; j++) {
		const struct json_object *b = jpath_at(m, "windows_by_rate", j);
		struct rxb_stage_inputs *w = &a->band_win[j];
		const char *bad;

		memset(w, 0, sizeof(*w));
		if (!num_in(b, "at_bps", 1, 1e15, &a->band_at_bps[j]) ||
		    (j && !(a->band_at_bps[j] > a->band_at_bps[j - 1])))
			bad = "at_bps";
		else if (!jpath_obj(b, "offcpu_windows"))
			bad = "offcpu_windows";
		else
			bad = windows_from(b, w);
		if (bad) {
			snprintf(msg, sizeof(msg), "windows_by_rate[%zu].%s", j, bad);
			return live_fail(port, "the daemon's model lacks a valid '%s'", msg);
		}
	}
	a->nbands = (uint32_t)n;
	return CTL_EXIT_OK;
}

/* The transfer, round model and sweep of the solve; NULL or the bad key. */
static const char *xfer_from(const struct json_object *m, struct bneck_xfer *x)
{
	const struct json_object *t = jpath_obj(m, "transfer");
	const char *rounds = jpath_str(m, "rounds");
	const char *loss = jpath_str(m, "loss_model");
	double points, ep;

	if (!num_in(t, "payload_bytes", 1, 1e9, &x->payload_bytes))
		return "transfer.payload_bytes";
	if (!num_in(t, "file_bytes", 1, 1e18, &x->file_bytes))
		return "transfer.file_bytes";
	if (!num_in(t, "one_way_delay_s", 0, 1e4, &x->one_way_delay_s))
		return "transfer.one_way_delay_s";
	if (!num_in(t, "line_rate_bps", 1, 1e15, &x->line_rate_bps))
		return "transfer.line_rate_bps";
	if (!num_in(t, "min_rate_bps", 1, x->line_rate_bps, &x->min_rate_bps) ||
	    !(x->min_rate_bps < x->line_rate_bps))
		return "transfer.min_rate_bps";
	if (rounds && !strcmp(rounds, "burst"))
		x->rounds = BNECK_ROUNDS_BURST;
	else if (rounds && !strcmp(rounds, "seed"))
		x->rounds = BNECK_ROUNDS_SEED;
	else
		return "rounds";
	if (loss && !strcmp(loss, "windows"))
		x->loss_model = BNECK_LOSS_WINDOWS;
	else if (loss && !strcmp(loss, "service"))
		x->loss_model = BNECK_LOSS_SERVICE;
	x->episodes_from_windows = jpath_bool(m, "episodes_from_windows") == 1 &&
				   x->rounds == BNECK_ROUNDS_BURST &&
				   x->loss_model != BNECK_LOSS_QUEUE;
	if (num_in(m, "points", 2, 1000000, &points))
		x->points = (uint32_t)points;
	/* Absent before rxbneckd had [model] time_slack: the least T's rate. */
	if (!num_in(m, "time_slack", 0, 1, &x->time_slack_rel))
		x->time_slack_rel = 0;
	x->loss_episode_pkts = 0;
	if (x->rounds == BNECK_ROUNDS_BURST && num_in(m, "loss_episode_pkts", 1, 1e12, &ep) && ep > 1)
		x->loss_episode_pkts = ep;
	return NULL;
}

/* The flow's model into @a; CTL_EXIT_OK or the failure, said. */
static int from_flow(struct model_args *a, const struct json_object *fl, uint16_t port)
{
	const struct json_object *m = jpath_obj(fl, "model");
	size_t n = jpath_len(m, "stages");
	const char *bad;
	double ep;

	if (!m)
		return live_fail(port, "the daemon has no model of this flow yet: %s",
				 jpath_str(fl, "inputs.note") && jpath_str(fl, "inputs.note")[0] ?
				 jpath_str(fl, "inputs.note") : "no solve has succeeded");
	if (n < 1 || n > BNECK_MAX_STAGES)
		return live_fail(port, "the flow's model has %s stages", n ? "too many" : "no");
	bad = stage_from(jpath_at(m, "stages", n - 1), &a->stage);
	if (!bad && n == 2) {
		a->has_front = true;
		bad = stage_from(jpath_at(m, "stages", 0), &a->front);
	}
	if (!bad)
		bad = xfer_from(m, &a->x);
	if (bad)
		return live_fail(port, "the daemon's model lacks a valid '%s' (a daemon older "
				 "than this rxbneckctl?)", bad);
	if (bands_from(a, m, port))
		return CTL_EXIT_FAIL;
	a->min_rate_set = true;
	a->live.used = true;
	a->live.port = port;
	ep = jpath_num(m, "epoch");
	/* Shown only; an epoch a uint64_t cannot hold (or NaN) as 0. */
	a->live.epoch = ep >= 0 && ep < 0x1p64 ? (uint64_t)ep : 0;
	a->live.rate_bps = jpath_num(m, "rate_bps");
	a->live.loss = jpath_num(m, "loss");
	a->live.time_s = jpath_num(m, "transfer_time_s");
	return CTL_EXIT_OK;
}

int model_live_from_doc(struct model_args *a, const struct json_object *doc, uint16_t port)
{
	const struct json_object *fl = NULL;

	for (size_t i = 0; i < jpath_len(doc, "flows"); i++)
		if (jpath_num(jpath_at(doc, "flows", i), "port") == port)
			fl = jpath_at(doc, "flows", i);
	return fl ? from_flow(a, fl, port) :
	       live_fail(port, "%s", "rxbneckd watches no such flow ('rxbneckctl status' lists them)");
}

int model_live_load(struct model_args *a, const char *socket, uint16_t port)
{
	struct ctl_client_answer ans;
	char cmd[32];
	int rc;

	snprintf(cmd, sizeof(cmd), MODEL_CMD " --from-status");
	rc = ctl_client_ask(cmd, ctl_client_socket_path(socket), "status", LIVE_TIMEOUT_S, &ans);
	if (rc)
		return rc;
	rc = ans.a.ok ? model_live_from_doc(a, ans.a.doc, port) :
	     live_fail(port, "the daemon answered %s", ans.a.code);
	ctl_client_answer_release(&ans);
	return rc;
}

int model_live_load_file(struct model_args *a, const char *path, uint16_t port)
{
	bool in = strcmp(path, "-") == 0;
	const char *name = in ? "standard input" : path;
	char why[ANSWER_WHY_LEN], msg[PATH_MAX + ANSWER_WHY_LEN + 64], *text = NULL;
	struct json_object *doc;
	size_t len = 0;
	int err, rc;

	err = in ? rxb_read_fd_grow(STDIN_FILENO, ANSWER_MAX_BYTES, &text, &len) :
	      rxb_read_path(path, ANSWER_MAX_BYTES, &text, &len);
	if (err) {
		snprintf(msg, sizeof(msg), "%s: %s", name,
			 err == -EFBIG ? "larger than a status document may be (2 MiB)" :
			 strerror(-err));
		return live_fail(port, "--status-file %s", msg);
	}
	doc = answer_parse_json(text, len, why);
	free(text);
	if (!doc) {
		snprintf(msg, sizeof(msg), "%s: not a status document: %s", name, why);
		return live_fail(port, "--status-file %s", msg);
	}
	rc = model_live_from_doc(a, doc, port);
	json_object_put(doc);
	return rc;
}
