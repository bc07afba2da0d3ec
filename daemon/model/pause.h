/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RBUDP+ pause-window predictor (Datta, Sharma and Feng, Fig. 3;
 * docs/pause.md) on today's scheduler, for one flow.
 *
 * RBUDP+ tells the sender, when the receiving task is scheduled at t,
 * to stop at t + T_I/O (the receiver's time slice) for D = the sum of the
 * slices of the CPU-bound tasks that run before it again. On EEVDF (6.6+)
 * and CFS (before 6.6) with the receiver always runnable (the paper's
 * assumption), the receiver and k equal-weight CPU-bound tasks on its CPU
 * take turns of one slice each, so:
 *
 *   T_I/O = the receiver's run before an involuntary preemption: the
 *           median of its recent measured runs (prev_state == TASK_RUNNING
 *           at sched_switch); before any, the CPU-bound tasks' mean run
 *           (equal weights, equal turns), else its slice (se.slice on
 *           EEVDF, pause_cfs_slice_ns() on CFS);
 *   D     = k x s, k = the time-weighted number of CPU-bound tasks on the
 *           CPU it was last preempted on (rxb_cpu_meas.cpu_bound), s = one
 *           turn of such a task: equal weights get equal slices, enforced
 *           alike at the tick, so s = the receiver's median run (times
 *           hog se.slice / receiver se.slice on EEVDF); before any run is
 *           measured, their mean run before preemption (cpu_bound_run_ns),
 *           else their se.slice, else the nominal slice of the scheduler;
 *   P     = T_I/O + D, the period of the windows.
 *
 * Every preemption of the receiver is a check: the prediction made when
 * the preempted run began (state from before that event) is compared with
 * the off-CPU interval that followed, [out, in]:
 *
 *   scored     the actual window is at least min_window long (shorter ones
 *              are not worth a pause and are counted as `short`);
 *   hit        a window was predicted and it overlaps at least half of the
 *              actual one: |[s, s + D] ∩ [out, in]| >= (in - out) / 2,
 *              s = run start + T_I/O;
 *   missed     scored, but no window (D < min_window) was predicted;
 *   false alarm a window was predicted but the actual one was short;
 *   errors     for scored events with a prediction: start s - out and
 *              duration D - (in - out), in µs: mean of |err|, signed mean
 *              (bias), p50 and p90 of |err| over the last PAUSE_HIST.
 *
 * What is published (pause_plan(), once per epoch, PROTOCOL.md §6.2): the
 * windows are anchored at the receiver's last return to the CPU after a
 * preemption (a) - the next starts at a + T_I/O + j·P, the first such time
 * after now. The daemon publishes at epoch boundaries, not at every switch
 * of the receiver, so when windows repeat within an epoch it sends a
 * periodic schedule (period P, duration D, repeat_count covering two
 * epochs so that it runs out if the daemon stops refreshing it); a one-shot
 * window only when P exceeds the epoch and the sender's RTT/2 is shorter
 * than D (otherwise it could not act on it). The published schedule is
 * itself checked against the next epoch's windows (schedule hits). Within
 * an epoch it also publishes a new receiver's first schedule as soon as its
 * windows are seen, and a new one whenever the receiver comes back more
 * than PAUSE_REPHASE_FRAC of a window away from the schedule's return
 * (pause_early()).
 *
 * No globals, no allocation: the state is embedded in struct flow.
 */
#ifndef RXB_DAEMON_PAUSE_H
#define RXB_DAEMON_PAUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/json.h"
#include "rxb/measure.h"
#include "rxbneck/proto.h"

#define PAUSE_HIST		256	/* recent errors kept for percentiles */
#define PAUSE_RUNS		64	/* recent runs for T_I/O */
#define PAUSE_MIN_EVENTS	4	/* preemptions in an epoch to publish */
#define PAUSE_HIT_OVERLAP	0.5	/* of the actual window */
#define PAUSE_REPHASE_FRAC	0.25	/* of the window: a return further from
					 * the schedule's re-plans it */
#define PAUSE_REPHASE_MAX	8	/* re-plans per epoch, at most */
/* EEVDF's default sysctl_sched_base_slice (6.x), CFS's defaults. */
#define PAUSE_EEVDF_BASE_SLICE_NS	700000ULL
#define PAUSE_CFS_LATENCY_NS		6000000ULL
#define PAUSE_CFS_MIN_GRAN_NS		750000ULL

enum pause_sched {
	PAUSE_SCHED_UNKNOWN = 0,	/* no receiver preemption seen yet */
	PAUSE_SCHED_EEVDF,
	PAUSE_SCHED_CFS,
};

enum pause_state {
	PAUSE_DISABLED = 0,	/* [pause] enabled = no */
	PAUSE_IDLE,		/* nothing to announce (why says so) */
	PAUSE_ONESHOT,		/* a one-shot window was sent */
	PAUSE_PERIODIC,		/* a periodic schedule was sent */
};

struct pause_params {
	bool enabled;
	uint64_t min_window_ns;
	uint64_t max_window_ns;
	int ncpus;		/* online CPUs (for the nominal slices) */
};

/* Error statistics of one quantity, µs. */
struct pause_err {
	uint64_t n;
	double abs_sum_us;
	double sum_us;		/* signed: bias */
	double ring_us[PAUSE_HIST];	/* |err| of the last PAUSE_HIST */
	uint32_t ring_n, ring_pos;
};

struct pause_err_summary {
	uint64_t n;
	double mean_us, bias_us, p50_us, p90_us;	/* NaN when n == 0 */
};

/* The current prediction (state before the next event). */
struct pause_pred {
	bool valid;		/* T_I/O known */
	uint64_t tio_ns;
	uint64_t d_ns;		/* 0: no window (D < min_window) */
	uint64_t d_model_ns;	/* k x s before the min/max rules */
	uint64_t period_ns;
	int cpu;
	double cpu_bound;	/* k */
	double slice_ns;	/* s */
	const char *slice_src;	/* "receiver-run", "hog-run", "se.slice",
				 * "nominal" */
	const char *tio_src;	/* "measured-run", "hog-run", "se.slice",
				 * "nominal" */
};

struct pause {
	struct pause_params p;
	enum pause_sched sched;
	enum pause_state state;
	char why[128];

	/* Estimator inputs. */
	uint64_t runs_ns[PAUSE_RUNS];	/* recent preempted runs */
	uint32_t runs_n, runs_pos;
	uint64_t last_slice_ns;		/* receiver's se.slice, last event */
	uint64_t last_next_slice_ns;
	uint64_t anchor_ns;		/* last return after a preemption */
	int cpu;			/* where it was last preempted */
	bool have_cpu_info;
	double cpu_bound, run_ns, slice_ns;	/* of that CPU, last epoch */
	struct pause_pred pred;

	/*
	 * Events taken within the epoch (pause_early()): the epoch's counts
	 * began with the first of them, and pause_epoch() skips what was
	 * taken (in_ns up to fed_in_ns).
	 */
	bool early;
	uint64_t fed_in_ns;
	uint64_t published_early;	/* of published, first schedules planned
					 * within an epoch */
	/*
	 * With a schedule out, a return to the CPU more than a quarter of the
	 * window away from the schedule's (the turns' order changed: EEVDF
	 * then shifts the phase by a whole turn) asks for a new plan within
	 * the epoch, in the new phase.
	 */
	bool rephase;
	bool rephasing;			/* the last plan was one */
	uint64_t rephased;		/* of published, such new plans */
	uint32_t ep_rephased;		/* this epoch's */
	uint64_t rephase_capped;	/* not made: PAUSE_REPHASE_MAX reached */
	uint64_t rephase_err_ns;	/* the return's distance, last one */

	/* Measured (all time and this epoch). */
	uint64_t preemptions, blocks, lost;
	uint64_t ep_preemptions, ep_long;
	double ep_off_sum_ns, ep_run_sum_ns;
	uint64_t ep_run_n;
	double off_sum_ns, run_sum_ns;
	uint64_t run_n;

	/* Checks of the predictor. */
	uint64_t scored, hits, missed, false_alarms, shorts, unscored;
	double recent_scored, recent_hits;	/* halved every epoch */
	struct pause_err start_err, dur_err;

	/* The published schedule, in CLOCK_MONOTONIC ns, and its checks. */
	bool sched_active;
	uint64_t absorb_ns;		/* of the last plan, 0 = unknown */
	uint64_t sched_start_ns, sched_period_ns, sched_dur_ns;
	uint32_t sched_count;
	uint64_t sched_checked, sched_hits;
	uint64_t published, cancels, epoch;
	bool has_last;
	struct rxbneck_pause last;
	uint64_t last_absorb_ns;	/* absorb_ns of the plan behind it */
	int last_sent;
};

void pause_init(struct pause *ps, const struct pause_params *p);
void pause_finish(struct pause *ps);
/* New [pause] settings (a reload); the measurements stay. */
void pause_set_params(struct pause *ps, const struct pause_params *p);

/* Nominal slices: EEVDF base_slice x (1 + ilog2(min(ncpus, 8))); CFS
 * max(latency, nr x min_granularity) / nr with the same factor (equal
 * weights). */
uint64_t pause_eevdf_slice_ns(uint64_t base_slice_ns, int ncpus);
uint64_t pause_cfs_slice_ns(uint64_t latency_ns, uint64_t min_gran_ns,
			    unsigned nr_running, int ncpus);

/*
 * One epoch of measurements: check and learn from @e's receiver
 * preemptions of threads in @tids (the flow's receivers), then take the
 * CPU-bound tasks of the receiver's CPU from @e for the next prediction.
 */
void pause_epoch(struct pause *ps, const struct rxb_epoch *e,
		 const int32_t *tids, int ntids);

/*
 * Within an epoch, for a flow with senders: check and learn from the
 * preemptions in @ev of receivers of @port (a new receiver is known by its
 * port before the epoch names its tid). The epoch's counts then run from
 * here, and pause_epoch() does not take these events again. Returns true
 * when a schedule should be planned now (pause_plan()): with none out,
 * once the predictor has this epoch's PAUSE_MIN_EVENTS long windows; with
 * one out, when the receiver came back out of the schedule's phase.
 */
bool pause_early(struct pause *ps, const struct rxb_rx_preempt *ev, size_t n,
		 uint16_t port);

/*
 * What to publish now for flow @port: fills @out and returns true when a
 * frame (a schedule, or CANCEL of a previous one) should go out.
 * @rtt_us: the sender's RTT (0 = unknown), @epoch_ns: the epoch length.
 * @absorb_ns: how long the flow's receive queue can take arrivals at the
 * sending rate while the receiver is off the CPU (K_B x payload / rate; 0
 * when unknown). Only the part of a window beyond it loses packets, so the
 * sender is told to stop for D - absorb, starting absorb into the window,
 * and not at all when the queue holds the whole window.
 */
bool pause_plan(struct pause *ps, uint16_t port, uint64_t now_ns,
		uint64_t epoch_ns, uint32_t rtt_us, uint64_t epoch,
		uint64_t absorb_ns, struct rxbneck_pause *out);
/* What publishing it gave (senders reached, or -errno). */
void pause_note_sent(struct pause *ps, const struct rxbneck_pause *p, int sent);

void pause_err_summary(const struct pause_err *e, struct pause_err_summary *out);
const char *pause_sched_name(enum pause_sched s);
const char *pause_state_name(enum pause_state s);

/* Status: the "pause" object of a flow (rxbneckctl writes its text). */
void pause_json(const struct pause *ps, struct json_writer *w);

#endif
