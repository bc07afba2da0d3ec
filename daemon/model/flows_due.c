// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * When a flow's model is solved again, and whether the pause schedule out
 * covers the windows its rate between pauses counts on. See flows_int.h.
 */
#include <math.h>
#include <stdio.h>

#include "daemon/model/flows_int.h"
#include "solver/offwin.h"

/*
 * When to solve again. With a deep socket buffer one solve costs 10-25 ms
 * of CPU (the burst rounds are O(K) per rate and K runs to thousands),
 * while most epochs' inputs differ from those of the last solve by less
 * than their own noise. Compared with the inputs of the last good solve
 * (so that a slow drift adds up):
 *  - nothing good yet, another transfer, another queue (K, N, rule), #C or
 *    #I moved by SOLVE_URGENT_TASKS, vacations, a saturated drain, a deep
 *    queue's rate or a quota came or went: solve now;
 *  - the windows a rate between pauses was solved with no longer covered
 *    by this epoch's: solve once the solver is back within
 *    SOLVE_BETWEEN_CPU_SHARE of one CPU;
 *  - a rate (the drain's too) moved by SOLVE_MOVED_REL, #C or #I by
 *    SOLVE_MOVED_TASKS, the vacations, windows, spread or quota phases by
 *    SOLVE_MOVED_REL: solve once the solver is back within
 *    SOLVE_CPU_SHARE of one CPU (the last solve's time / share since it);
 *  - the windows by rate (struct flow_estimate.nbands) came, went or
 *    changed in number: solve now; a band's rate moved by
 *    SOLVE_MOVED_REL: as a moved rate (a band's own windows move the
 *    windows of all rates with them: as moved windows);
 *  - otherwise solve every SOLVE_REFRESH_NS.
 * Time is the epochs' clock, so a replayed or simulated run decides alike.
 */
#define SOLVE_URGENT_TASKS	0.5
#define SOLVE_MOVED_TASKS	0.1
#define SOLVE_MOVED_REL		0.03
#define SOLVE_CPU_SHARE		0.05
#define SOLVE_BETWEEN_CPU_SHARE	0.25
#define SOLVE_REFRESH_NS	(10 * RXB_NSEC_PER_SEC)

enum solve_need { SOLVE_NOT, SOLVE_MOVED, SOLVE_NOW };

static bool moved_rel(double a, double b)
{
	if (a == b || (isnan(a) && isnan(b)))
		return false;
	if (!isfinite(a) || !isfinite(b) || !(fabs(b) > 0))
		return true;
	return fabs(a / b - 1) > SOLVE_MOVED_REL;
}

/*
 * The off-CPU windows (the windows loss model's input) came, went, or moved:
 * their rate, their mean length, the mean run between them, the longest
 * wait after a wake-up (it cuts the waits' top slot, where their loss
 * comes from) or what the reader frees memory after, by SOLVE_MOVED_REL.
 */
static enum solve_need windows_moved(const struct rxb_stage_inputs *now,
				     const struct rxb_stage_inputs *then)
{
	if ((now->offcpu_per_s > 0) != (then->offcpu_per_s > 0) ||
	    (now->wake_per_s > 0) != (then->wake_per_s > 0))
		return SOLVE_NOW;
	if (moved_rel(now->offcpu_per_s, then->offcpu_per_s) ||
	    moved_rel(now->offcpu_gap_s, then->offcpu_gap_s) ||
	    moved_rel(offwin_mean_s(now->offcpu_hist, RXB_OFFCPU_SLOTS),
		      offwin_mean_s(then->offcpu_hist, RXB_OFFCPU_SLOTS)) ||
	    moved_rel(now->wake_per_s, then->wake_per_s) ||
	    moved_rel(offwin_mean_s(now->wake_hist, RXB_OFFCPU_SLOTS),
		      offwin_mean_s(then->wake_hist, RXB_OFFCPU_SLOTS)) ||
	    moved_rel(now->wake_max_s, then->wake_max_s) ||
	    moved_rel(now->windows_seen_pps, then->windows_seen_pps) ||
	    moved_rel(now->queue_release_pkts, then->queue_release_pkts))
		return SOLVE_MOVED;
	return SOLVE_NOT;
}

/*
 * The service beyond the server's own rate came, went or moved: the rate
 * it serves a deep queue at, the saturated drain and the arrivals it was
 * measured under (the drain floor, docs/model.md §2.3), the spread of the
 * rate, a co-runner's quota phases.
 */
static enum solve_need service_moved(const struct rxb_stage_inputs *now,
				     const struct rxb_stage_inputs *then)
{
	if ((now->mu_net_full_per_s > 0) != (then->mu_net_full_per_s > 0) ||
	    (now->sat_drain_pkts_per_s > 0) != (then->sat_drain_pkts_per_s > 0) ||
	    (now->quota_period_s > 0) != (then->quota_period_s > 0))
		return SOLVE_NOW;
	if (moved_rel(now->mu_net_full_per_s, then->mu_net_full_per_s) ||
	    moved_rel(now->sat_drain_pkts_per_s, then->sat_drain_pkts_per_s) ||
	    moved_rel(now->sat_drain_arrivals_pps, then->sat_drain_arrivals_pps) ||
	    moved_rel(now->mu_rel_sd, then->mu_rel_sd) ||
	    moved_rel(now->quota_period_s, then->quota_period_s) ||
	    moved_rel(now->quota_slow_s, then->quota_slow_s) ||
	    moved_rel(now->quota_slow_share, then->quota_slow_share) ||
	    moved_rel(now->quota_fast_share, then->quota_fast_share))
		return SOLVE_MOVED;
	return SOLVE_NOT;
}

static enum solve_need stage_moved(const struct rxb_stage_inputs *now,
				   const struct rxb_stage_inputs *then, bool windows)
{
	enum solve_need w = windows ? windows_moved(now, then) : SOLVE_NOT;
	enum solve_need v = service_moved(now, then);
	double dc = fabs(now->cpu_bound - then->cpu_bound);
	double di = fabs(now->io_bound - then->io_bound);

	if (now->queue_pkts != then->queue_pkts || now->batch_pkts != then->batch_pkts ||
	    now->rule != then->rule || now->load_independent != then->load_independent ||
	    (now->vacation_s > 0) != (then->vacation_s > 0) ||
	    !(dc < SOLVE_URGENT_TASKS) || !(di < SOLVE_URGENT_TASKS) || w == SOLVE_NOW ||
	    v == SOLVE_NOW)
		return SOLVE_NOW;
	if (dc > SOLVE_MOVED_TASKS || di > SOLVE_MOVED_TASKS ||
	    moved_rel(now->mu_net_per_s, then->mu_net_per_s) ||
	    moved_rel(now->mu_pio_per_s, then->mu_pio_per_s) ||
	    moved_rel(now->mu_disk_per_s, then->mu_disk_per_s) ||
	    moved_rel(now->irq_ns_per_pkt, then->irq_ns_per_pkt) ||
	    moved_rel(now->vacation_s, then->vacation_s) ||
	    moved_rel(now->vacation_period_s, then->vacation_period_s) ||
	    w == SOLVE_MOVED || v == SOLVE_MOVED)
		return SOLVE_MOVED;
	return SOLVE_NOT;
}

/*
 * A pause schedule of windows @sched_dur_s every @sched_period_s pauses
 * every window of @dur_s every @period_s (a solve's stage B vacations): as
 * long, in the same period, within the re-solve tolerance.
 */
static bool windows_cover(double sched_dur_s, double sched_period_s, double dur_s,
			  double period_s)
{
	return sched_dur_s >= dur_s * (1 - SOLVE_MOVED_REL) &&
	       fabs(sched_period_s - period_s) <= period_s * SOLVE_MOVED_REL;
}

/*
 * The rate between pauses counts on the windows it was solved with, and the
 * schedule planned after the solves pauses this epoch's (flow_vacations(),
 * pause_plan()). Windows that shrank or moved out of those of the last solve
 * would leave its senders on the plain rate until a deferred solve came:
 * they are solved sooner (SOLVE_BETWEEN_CPU_SHARE; not at once, so that
 * windows jittering by a few per cent from epoch to epoch cannot take a
 * quarter of a CPU). Windows the [pause] caps cut short are not, as no
 * solve makes a capped schedule cover them.
 */
static bool between_uncovered(const struct flow *fl, const struct flow_estimate *g)
{
	const struct rxb_stage_inputs *now, *then;

	if (!g->has_between || !fl->pause.p.enabled || !g->nstages)
		return false;
	now = &fl->inputs.stages[g->nstages - 1];
	then = &g->inputs[g->nstages - 1];
	if (!(now->vacation_s > 0) || !(then->vacation_s > 0))
		return false;	/* came or went: stage_moved() solves now */
	return !windows_cover(now->vacation_s, now->vacation_period_s, then->vacation_s,
			      then->vacation_period_s);
}

/*
 * The solver has been idle long enough since the last good solve to be
 * back within @cpu_share of one CPU: that solve's time / the share.
 */
static bool solver_within_share(const struct flow_estimate *g, uint64_t since_ns,
				double cpu_share)
{
	return since_ns >= g->solve_ms * 1e6 / cpu_share;
}

/* The bands of a solve against the flow's now (see flows_due()). */
static enum solve_need bands_moved(const struct flows *f, const struct flow *fl,
				   const struct flow_estimate *g)
{
	uint32_t n = flows_bands_used(f, fl) ? fl->inputs.nbands : 0;
	double bytes = g->xfer.payload_bytes * 8;

	if (n != g->nbands)
		return SOLVE_NOW;
	for (uint32_t j = 0; j < n; j++)
		if (moved_rel(fl->inputs.band_at_pps[j] * bytes, g->band_at_bps[j]))
			return SOLVE_MOVED;
	return SOLVE_NOT;
}

/* The same transfer as far as the solver is concerned. */
static bool xfer_same(const struct flow_xfer *a, const struct flow_xfer *b)
{
	return a->payload_bytes == b->payload_bytes && a->file_bytes == b->file_bytes &&
	       a->one_way_delay_s == b->one_way_delay_s &&
	       a->line_rate_bps == b->line_rate_bps && a->min_rate_bps == b->min_rate_bps;
}

bool flows_due(const struct flows *f, const struct flow *fl,
		     const struct flow_model *m, const struct rxb_epoch *e)
{
	const struct flow_estimate *g = &m->good;
	enum solve_need need = SOLVE_NOT;
	uint64_t since;

	if (!m->have_good || m->solve_err || !e || e->end_ns < g->epoch_end_ns ||
	    g->nstages != fl->inputs.nstages || g->points != f->p.sweep_points ||
	    g->rounds != f->p.rounds || g->loss_model != f->p.loss_model ||
	    g->time_slack_rel != f->p.time_slack_rel ||
	    !xfer_same(&g->xfer, &m->xfer) ||
	    g->loss_episode_pkts != flows_episode_pkts(f, fl) ||
	    g->episodes_from_windows != flows_episodes_from_windows(f))
		return true;
	for (uint32_t i = 0; i < g->nstages && need != SOLVE_NOW; i++) {
		enum solve_need s = stage_moved(&fl->inputs.stages[i], &g->inputs[i],
						f->p.loss_model == BNECK_LOSS_WINDOWS ||
						f->p.loss_model == BNECK_LOSS_SERVICE);

		if (s > need)
			need = s;
	}
	if (need != SOLVE_NOW) {
		enum solve_need s = bands_moved(f, fl, g);

		if (s > need)
			need = s;
	}
	since = e->end_ns - g->epoch_end_ns;
	if (need != SOLVE_NOW && between_uncovered(fl, g) &&
	    solver_within_share(g, since, SOLVE_BETWEEN_CPU_SHARE))
		return true;
	switch (need) {
	case SOLVE_NOW:
		return true;
	case SOLVE_MOVED:
		return solver_within_share(g, since, SOLVE_CPU_SHARE);
	default:
		return since >= SOLVE_REFRESH_NS;
	}
}

/* -------------------------------------------------------------- pauses -- */

/*
 * PROTOCOL.md §6.3: the rate between pauses counts on a pause in every
 * window of the vacations it was solved with (stage B's D every P); the
 * schedule out must pause them all - the same period and windows as long,
 * within the re-solve tolerance (the rate is solved again when they move
 * more). Not when [pause] max_window_ms cut the windows short, nor while
 * no schedule is out (none yet, withdrawn, or CANCEL).
 */
bool flows_between_covered(const struct flow *fl, const struct flow_model *m,
			   char *why, size_t wlen)
{
	const struct pause *ps = &fl->pause;
	const struct flow_estimate *g = &m->good;
	const struct rxb_stage_inputs *b;
	char tmp[8];

	if (!why) {
		why = tmp;
		wlen = sizeof(tmp);
	}
	if (!m->has_rate_between || !g->nstages) {
		snprintf(why, wlen, "plain: no pause windows in the model");
		return false;
	}
	b = &g->inputs[g->nstages - 1];
	if (!ps->sched_active) {
		snprintf(why, wlen, "plain: no PAUSE schedule out (%s)",
			 ps->why[0] ? ps->why : "none planned yet");
		return false;
	}
	if (!windows_cover(ps->sched_dur_ns / 1e9, ps->sched_period_ns / 1e9, b->vacation_s,
			   b->vacation_period_s)) {
		snprintf(why, wlen, "plain: the schedule out (%.0f us every %.0f us) does not "
			 "cover the windows the rate counts on (%.0f us every %.0f us)",
			 ps->sched_dur_ns / 1e3, ps->sched_period_ns / 1e3, b->vacation_s * 1e6,
			 b->vacation_period_s * 1e6);
		return false;
	}
	snprintf(why, wlen, "between pauses: the schedule of epoch %llu pauses %.0f us every "
		 "%.0f us", (unsigned long long)ps->last.epoch, ps->sched_dur_ns / 1e3,
		 ps->sched_period_ns / 1e3);
	return true;
}
