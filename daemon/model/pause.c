// SPDX-License-Identifier: GPL-2.0-or-later
/* The RBUDP+ pause-window predictor of one flow. See pause.h. */
#include "daemon/model/pause.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static const char *const sched_names[] = {
	[PAUSE_SCHED_UNKNOWN] = "unknown",
	[PAUSE_SCHED_EEVDF] = "eevdf",
	[PAUSE_SCHED_CFS] = "cfs",
};

static const char *const state_names[] = {
	[PAUSE_DISABLED] = "disabled",
	[PAUSE_IDLE] = "idle",
	[PAUSE_ONESHOT] = "one-shot",
	[PAUSE_PERIODIC] = "periodic",
};

const char *pause_sched_name(enum pause_sched s)
{
	return (unsigned)s < RXB_ARRAY_SIZE(sched_names) ? sched_names[s] : "?";
}

const char *pause_state_name(enum pause_state s)
{
	return (unsigned)s < RXB_ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

static unsigned ilog2_u(unsigned v)
{
	unsigned r = 0;

	while (v > 1) {
		v >>= 1;
		r++;
	}
	return r;
}

/* The kernel's scaling of its slices with the CPU count (SCHED_TUNABLESCALING_LOG). */
static uint64_t cpu_factor(int ncpus)
{
	unsigned n = ncpus < 1 ? 1 : ncpus > 8 ? 8 : (unsigned)ncpus;

	return 1 + ilog2_u(n);
}

uint64_t pause_eevdf_slice_ns(uint64_t base_slice_ns, int ncpus)
{
	return base_slice_ns * cpu_factor(ncpus);
}

uint64_t pause_cfs_slice_ns(uint64_t latency_ns, uint64_t min_gran_ns,
			    unsigned nr_running, int ncpus)
{
	uint64_t f = cpu_factor(ncpus), lat = latency_ns * f, gran = min_gran_ns * f;
	uint64_t period;

	if (!nr_running)
		nr_running = 1;
	/* __sched_period(): stretched when the tasks do not fit the latency. */
	period = nr_running > lat / gran ? nr_running * gran : lat;
	return period / nr_running;
}

static void predict(struct pause *ps);

void pause_init(struct pause *ps, const struct pause_params *p)
{
	memset(ps, 0, sizeof(*ps));
	ps->cpu = -1;
	pause_set_params(ps, p);
	ps->state = p->enabled ? PAUSE_IDLE : PAUSE_DISABLED;
	rxb_strlcpy(ps->why, "no receiver preemption seen yet", sizeof(ps->why));
}

void pause_finish(struct pause *ps)
{
	/* Nothing is allocated; kept for the init/finish symmetry of modules. */
	memset(ps, 0, sizeof(*ps));
}

void pause_set_params(struct pause *ps, const struct pause_params *p)
{
	ps->p = *p;
	if (ps->p.max_window_ns < ps->p.min_window_ns)
		ps->p.max_window_ns = ps->p.min_window_ns;
	if (ps->p.ncpus < 1)
		ps->p.ncpus = 1;
	/* The windows predicted from now on follow the new rules. */
	predict(ps);
}

/* ------------------------------------------------------------ errors -- */

static void err_add(struct pause_err *e, double err_us)
{
	e->n++;
	e->abs_sum_us += fabs(err_us);
	e->sum_us += err_us;
	e->ring_us[e->ring_pos] = fabs(err_us);
	e->ring_pos = (e->ring_pos + 1) % PAUSE_HIST;
	if (e->ring_n < PAUSE_HIST)
		e->ring_n++;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted @v. */
static double pct(const double *v, uint32_t n, double q)
{
	uint32_t k = (uint32_t)ceil(q * n);

	return v[k ? k - 1 : 0];
}

void pause_err_summary(const struct pause_err *e, struct pause_err_summary *out)
{
	double v[PAUSE_HIST];

	out->n = e->n;
	out->mean_us = out->bias_us = out->p50_us = out->p90_us = NAN;
	if (!e->n)
		return;
	out->mean_us = e->abs_sum_us / (double)e->n;
	out->bias_us = e->sum_us / (double)e->n;
	memcpy(v, e->ring_us, e->ring_n * sizeof(v[0]));
	qsort(v, e->ring_n, sizeof(v[0]), dbl_cmp);
	out->p50_us = pct(v, e->ring_n, 0.5);
	out->p90_us = pct(v, e->ring_n, 0.9);
}

/* -------------------------------------------------------- prediction -- */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median_run(const struct pause *ps)
{
	uint64_t v[PAUSE_RUNS];

	memcpy(v, ps->runs_ns, ps->runs_n * sizeof(v[0]));
	qsort(v, ps->runs_n, sizeof(v[0]), u64_cmp);
	return v[(ps->runs_n - 1) / 2];
}

/* The nominal slice of one of @nr equal-weight tasks on this scheduler. */
static uint64_t nominal_slice(const struct pause *ps, unsigned nr)
{
	if (ps->sched == PAUSE_SCHED_CFS)
		return pause_cfs_slice_ns(PAUSE_CFS_LATENCY_NS, PAUSE_CFS_MIN_GRAN_NS,
					  nr, ps->p.ncpus);
	return pause_eevdf_slice_ns(PAUSE_EEVDF_BASE_SLICE_NS, ps->p.ncpus);
}

/* Recompute ps->pred from the estimator state (RBUDP+'s Fig. 3 rule). */
static void predict(struct pause *ps)
{
	struct pause_pred *pr = &ps->pred;
	double k = ps->have_cpu_info && isfinite(ps->cpu_bound) && ps->cpu_bound > 0 ?
		   ps->cpu_bound : 0;
	unsigned nr = 1 + (unsigned)lround(k);
	double s;

	memset(pr, 0, sizeof(*pr));
	pr->cpu = ps->cpu;
	pr->cpu_bound = k;
	if (ps->sched == PAUSE_SCHED_UNKNOWN)
		return;
	/* T_I/O: what the receiver actually gets before it is preempted. */
	if (ps->runs_n) {
		pr->tio_ns = median_run(ps);
		pr->tio_src = "measured-run";
	} else if (ps->have_cpu_info && isfinite(ps->run_ns) && ps->run_ns > 0) {
		/* Equal weights, equal turns: the hogs' runs show the tick. */
		pr->tio_ns = (uint64_t)llround(ps->run_ns);
		pr->tio_src = "hog-run";
	} else if (ps->sched == PAUSE_SCHED_EEVDF && ps->last_slice_ns) {
		pr->tio_ns = ps->last_slice_ns;
		pr->tio_src = "se.slice";
	} else {
		pr->tio_ns = nominal_slice(ps, nr);
		pr->tio_src = "nominal";
	}
	if (pr->tio_ns < 1000)
		pr->tio_ns = 1000;	/* a period must exceed its window */
	/*
	 * D: one turn of each CPU-bound task. Equal-weight tasks get equal
	 * slices (EEVDF: base_slice whatever the weight; CFS: equal shares of
	 * the period), enforced alike at the tick, so the receiver's own
	 * median run is the most robust measure of a hog's turn: the hogs'
	 * mean run is cut short whenever a third task wakes up and preempts
	 * one mid-turn (seen on the shared test VM), while the turn goes on
	 * after it. On EEVDF a different se.slice of the hogs scales it.
	 */
	if (ps->runs_n) {
		double ratio = 1;

		if (ps->sched == PAUSE_SCHED_EEVDF && ps->last_slice_ns) {
			double hog = ps->have_cpu_info && isfinite(ps->slice_ns) &&
				     ps->slice_ns > 0 ? ps->slice_ns
						      : (double)ps->last_next_slice_ns;

			if (hog > 0)
				ratio = hog / (double)ps->last_slice_ns;
		}
		s = (double)pr->tio_ns * ratio;
		pr->slice_src = "receiver-run";
	} else if (ps->have_cpu_info && isfinite(ps->run_ns) && ps->run_ns > 0) {
		s = ps->run_ns;
		pr->slice_src = "hog-run";
	} else if (ps->have_cpu_info && isfinite(ps->slice_ns) && ps->slice_ns > 0) {
		s = ps->slice_ns;
		pr->slice_src = "se.slice";
	} else if (ps->sched == PAUSE_SCHED_EEVDF && ps->last_next_slice_ns) {
		s = (double)ps->last_next_slice_ns;
		pr->slice_src = "se.slice";
	} else {
		s = (double)nominal_slice(ps, nr);
		pr->slice_src = "nominal";
	}
	pr->slice_ns = s;
	pr->d_model_ns = (uint64_t)llround(k * s);
	pr->d_ns = pr->d_model_ns;
	if (pr->d_ns < ps->p.min_window_ns)
		pr->d_ns = 0;
	if (pr->d_ns > ps->p.max_window_ns)
		pr->d_ns = ps->p.max_window_ns;
	pr->period_ns = pr->tio_ns + pr->d_ns;
	pr->valid = true;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static bool is_hit(uint64_t p0, uint64_t p1, uint64_t out, uint64_t in)
{
	return (double)overlap(p0, p1, out, in) >= PAUSE_HIT_OVERLAP * (double)(in - out);
}

/* Was the published schedule right about this window? */
static void check_schedule(struct pause *ps, uint64_t out, uint64_t in)
{
	uint64_t end = ps->sched_start_ns + (uint64_t)ps->sched_count * ps->sched_period_ns;
	double j;
	uint64_t k, w0;

	if (!ps->sched_active || in <= ps->sched_start_ns || out >= end)
		return;
	j = round(((double)out - (double)ps->sched_start_ns) / (double)ps->sched_period_ns);
	k = j < 0 ? 0 : (uint64_t)j;
	if (k >= ps->sched_count)
		k = ps->sched_count - 1;
	w0 = ps->sched_start_ns + k * ps->sched_period_ns;
	ps->sched_checked++;
	if (is_hit(w0, w0 + ps->sched_dur_ns, out, in))
		ps->sched_hits++;
}

/*
 * Did the receiver come back where the published schedule says, give or
 * take PAUSE_REPHASE_FRAC of the window? With equal weights the turns keep
 * their order, but a third task's wake-up or a turn of two ticks changes
 * it now and then (3-4 % of the turns of a busy receiver with two hogs,
 * perf sched on the test VM): the receiver then waits one turn more or
 * less, and every later window moves by a whole turn - a third of the
 * period with two hogs, half the sender's pause in the wrong place -
 * until the next plan. A window the hit rule still calls a hit can be
 * such a shift (half of it overlaps), hence the test on the return.
 */
static void check_phase(struct pause *ps, uint64_t in)
{
	uint64_t back0 = ps->sched_start_ns + ps->sched_dur_ns, back, err;
	double j;

	if (!ps->sched_active || !ps->sched_period_ns || in < ps->sched_start_ns)
		return;
	j = round(((double)in - (double)back0) / (double)ps->sched_period_ns);
	back = back0 + (uint64_t)(j < 0 ? 0 : j) * ps->sched_period_ns;
	err = in > back ? in - back : back - in;
	if ((double)err > PAUSE_REPHASE_FRAC * (double)ps->sched_dur_ns) {
		ps->rephase = true;
		ps->rephase_err_ns = err;
	}
}

/* Check the standing prediction against one preemption, then learn from it. */
static void feed(struct pause *ps, const struct rxb_rx_preempt *ev)
{
	enum pause_sched kind = (ev->flags & RXB_RX_PREEMPT_EEVDF) ? PAUSE_SCHED_EEVDF
								   : PAUSE_SCHED_CFS;
	uint64_t off = ev->in_ns - ev->out_ns;
	bool is_long = off >= ps->p.min_window_ns;

	if (ps->sched != kind) {
		ps->sched = kind;
		predict(ps);
	}
	ps->preemptions++;
	ps->ep_preemptions++;
	ps->blocks += ev->blocks;
	ps->off_sum_ns += (double)off;
	ps->ep_off_sum_ns += (double)off;
	if (is_long)
		ps->ep_long++;
	if (is_long) {
		check_schedule(ps, ev->out_ns, ev->in_ns);
		check_phase(ps, ev->in_ns);
	}

	/* The check: the prediction made when this run began. */
	if (!ev->run_start_ns || ev->run_start_ns > ev->out_ns || !ps->pred.valid) {
		ps->unscored++;
	} else if (!is_long) {
		ps->shorts++;
		if (ps->pred.d_ns)
			ps->false_alarms++;
	} else {
		ps->scored++;
		ps->recent_scored++;
		if (!ps->pred.d_ns) {
			ps->missed++;
		} else {
			uint64_t s = ev->run_start_ns + ps->pred.tio_ns;

			if (is_hit(s, s + ps->pred.d_ns, ev->out_ns, ev->in_ns)) {
				ps->hits++;
				ps->recent_hits++;
			}
			err_add(&ps->start_err, ((double)s - (double)ev->out_ns) / 1e3);
			err_add(&ps->dur_err, ((double)ps->pred.d_ns - (double)off) / 1e3);
		}
	}

	/* Learn. */
	if (ev->run_start_ns && ev->run_start_ns <= ev->out_ns) {
		uint64_t run = ev->out_ns - ev->run_start_ns;

		ps->runs_ns[ps->runs_pos] = run;
		ps->runs_pos = (ps->runs_pos + 1) % PAUSE_RUNS;
		if (ps->runs_n < PAUSE_RUNS)
			ps->runs_n++;
		ps->run_sum_ns += (double)run;
		ps->run_n++;
		ps->ep_run_sum_ns += (double)run;
		ps->ep_run_n++;
	}
	ps->last_slice_ns = ev->slice_ns;
	ps->last_next_slice_ns = ev->next_slice_ns;
	ps->anchor_ns = ev->in_ns;
	ps->cpu = (int)ev->cpu;
	predict(ps);
}

static bool tid_in(uint32_t tid, const int32_t *tids, int n)
{
	for (int i = 0; i < n; i++)
		if ((uint32_t)tids[i] == tid)
			return true;
	return false;
}

static void epoch_counts_reset(struct pause *ps)
{
	ps->ep_preemptions = ps->ep_long = ps->ep_run_n = 0;
	ps->ep_off_sum_ns = ps->ep_run_sum_ns = 0;
	ps->ep_rephased = 0;
}

/* Feed @ev unless pause_early() took it already this epoch. */
static void feed_once(struct pause *ps, const struct rxb_rx_preempt *ev)
{
	if (ev->in_ns <= ev->out_ns || (ps->early && ev->in_ns <= ps->fed_in_ns))
		return;
	if (ev->in_ns > ps->fed_in_ns)
		ps->fed_in_ns = ev->in_ns;
	feed(ps, ev);
}

bool pause_early(struct pause *ps, const struct rxb_rx_preempt *ev, size_t n,
		 uint16_t port)
{
	if (!ps->p.enabled)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].port != port)
			continue;
		if (!ps->early) {
			epoch_counts_reset(ps);
			ps->early = true;
		}
		feed_once(ps, &ev[i]);
	}
	if (!ps->early || !ps->pred.valid || !ps->pred.d_ns)
		return false;
	if (!ps->sched_active)
		return ps->ep_long >= PAUSE_MIN_EVENTS;
	if (!ps->rephase)
		return false;
	/*
	 * A receiver whose every return is out of phase (its period is
	 * wrong until the epoch counts the hogs again, or it blocks at
	 * random) would get a new plan at every read: bound the frames.
	 */
	if (ps->ep_rephased >= PAUSE_REPHASE_MAX) {
		ps->rephase = false;
		ps->rephase_capped++;
		return false;
	}
	return true;
}

void pause_epoch(struct pause *ps, const struct rxb_epoch *e,
		 const int32_t *tids, int ntids)
{
	if (!ps->early)
		epoch_counts_reset(ps);
	ps->recent_scored /= 2;
	ps->recent_hits /= 2;
	ps->epoch = e->seq;
	ps->lost = e->rx_preempts_lost;
	for (size_t i = 0; e->rx_preempts && i < e->nrx_preempts; i++) {
		const struct rxb_rx_preempt *ev = &e->rx_preempts[i];

		if (!tid_in(ev->tid, tids, ntids))
			continue;
		feed_once(ps, ev);
	}
	ps->early = false;
	/* The CPU-bound tasks the next windows are made of. */
	ps->have_cpu_info = false;
	if (ps->cpu >= 0 && ps->cpu < e->ncpus && ps->cpu < RXB_MAX_CPUS) {
		const struct rxb_cpu_meas *c = &e->cpus[ps->cpu];

		ps->have_cpu_info = isfinite(c->cpu_bound);
		ps->cpu_bound = c->cpu_bound;
		ps->run_ns = c->cpu_bound_run_ns;
		ps->slice_ns = c->cpu_bound_slice_ns;
	}
	predict(ps);
}

/* ------------------------------------------------------------ publish -- */

static void idle(struct pause *ps, const char *why)
{
	rxb_strlcpy(ps->why, why, sizeof(ps->why));
	ps->state = ps->p.enabled ? PAUSE_IDLE : PAUSE_DISABLED;
}

/*
 * Why no schedule can be planned now (@why holds a formatted reason), or
 * NULL when one can. @was_active: a schedule ran until now.
 */
static const char *plan_refusal(const struct pause *ps, uint64_t now_ns, uint64_t epoch_ns,
				uint64_t absorb_ns, bool was_active, char *why, size_t wlen)
{
	const struct pause_pred *pr = &ps->pred;

	if (!ps->p.enabled)
		return "disabled ([pause] enabled = no)";
	if (!pr->valid)
		return "no receiver preemption seen yet";
	if (ps->ep_long < PAUSE_MIN_EVENTS && !(was_active && ps->early)) {
		/* (A new phase within the epoch keeps the schedule the epoch's
		 * windows allowed.) */
		snprintf(why, wlen, "%llu off-CPU windows >= min_window this epoch "
			 "(%d needed)", (unsigned long long)ps->ep_long, PAUSE_MIN_EVENTS);
		return why;
	}
	if (!pr->d_ns) {
		snprintf(why, wlen, "predicted window %.0f us < min_window (%.2f "
			 "CPU-bound tasks on cpu %d)", pr->d_model_ns / 1e3, pr->cpu_bound,
			 pr->cpu);
		return why;
	}
	if (now_ns > ps->anchor_ns + pr->tio_ns + epoch_ns + RXB_NSEC_PER_SEC)
		return "the last receiver preemption is too old to extrapolate";
	if (absorb_ns >= pr->d_ns) {
		/*
		 * RBUDP+'s receivers had small buffers; a queue that holds
		 * a whole window of arrivals loses nothing to it, and a pause
		 * would only idle the link.
		 */
		snprintf(why, wlen, "the receive queue absorbs the %.0f us window "
			 "(%.0f us of arrivals at the rate data arrives)", pr->d_ns / 1e3,
			 absorb_ns / 1e3);
		return why;
	}
	return NULL;
}

bool pause_plan(struct pause *ps, uint16_t port, uint64_t now_ns,
		uint64_t epoch_ns, uint32_t rtt_us, uint64_t epoch,
		uint64_t absorb_ns, struct rxbneck_pause *out)
{
	const struct pause_pred *pr = &ps->pred;
	bool was_active = ps->sched_active;
	/* Only a plan within the epoch is a re-phase: the epoch's own
	 * refresh moves to the latest phase anyway. */
	bool rephasing = ps->rephase && was_active && ps->early;
	uint64_t first, j, count;
	char why[128];
	const char *no;

	memset(out, 0, sizeof(*out));
	out->port = port;
	out->epoch = epoch;
	ps->sched_active = false;
	ps->rephase = ps->rephasing = false;
	ps->absorb_ns = absorb_ns;
	no = plan_refusal(ps, now_ns, epoch_ns, absorb_ns, was_active, why, sizeof(why));
	if (no) {
		idle(ps, no);
		if (!was_active)
			return false;
		out->flags = RXBNECK_PAUSE_CANCEL;
		return true;
	}

	/* The next window after now, in the phase of the last return. */
	first = ps->anchor_ns + pr->tio_ns;
	if (first < now_ns) {
		j = (now_ns - first + pr->period_ns - 1) / pr->period_ns;
		first += j * pr->period_ns;
	}
	/* Stop only once the queue would be full: absorb into the window. */
	out->start_in_us = (first + absorb_ns - now_ns) / 1000;
	out->duration_us = (pr->d_ns - absorb_ns) / 1000;
	if (!out->duration_us)
		out->duration_us = 1;
	out->confidence = ps->recent_scored > 0 ?
		(uint16_t)lround(1000 * ps->recent_hits / ps->recent_scored) : 0;
	if (pr->period_ns > epoch_ns && (uint64_t)rtt_us * 1000 / 2 < pr->d_ns) {
		/* At most one window before the next refresh, and reachable. */
		out->repeat_count = 1;
		out->period_us = 0;
		count = 1;
		ps->state = PAUSE_ONESHOT;
	} else {
		out->period_us = pr->period_ns / 1000;
		if (out->period_us <= out->duration_us)
			out->period_us = out->duration_us + 1;
		/* Two epochs' worth: it runs out if the refreshes stop. */
		count = (2 * epoch_ns + pr->period_ns - 1) / pr->period_ns;
		if (count < 1)
			count = 1;
		if (count > UINT32_MAX)
			count = UINT32_MAX;
		out->repeat_count = (uint32_t)count;
		ps->state = PAUSE_PERIODIC;
	}
	ps->why[0] = '\0';
	ps->sched_active = true;
	/* The schedule is checked as the predicted windows it stands for. */
	ps->sched_start_ns = first;
	ps->sched_period_ns = out->period_us ? out->period_us * 1000 : pr->period_ns;
	ps->sched_dur_ns = pr->d_ns;
	ps->sched_count = (uint32_t)count;
	ps->rephasing = rephasing;
	return true;
}

void pause_note_sent(struct pause *ps, const struct rxbneck_pause *p, int sent)
{
	ps->last = *p;
	ps->last_absorb_ns = ps->absorb_ns;
	ps->has_last = true;
	ps->last_sent = sent;
	if (p->flags & RXBNECK_PAUSE_CANCEL) {
		ps->cancels++;
	} else {
		ps->published++;
		if (ps->rephasing) {
			ps->rephased++;
			ps->ep_rephased++;
		}
		else if (ps->early)	/* planned within the epoch (pause_early()) */
			ps->published_early++;
	}
}

/* ------------------------------------------------------------- status -- */


static void err_json(struct json_writer *w, const char *key, const struct pause_err *e)
{
	struct pause_err_summary s;

	pause_err_summary(e, &s);
	json_obj_begin(w, key);
	json_uint(w, "n", s.n);
	json_double(w, "mean_abs_us", s.mean_us);
	json_double(w, "bias_us", s.bias_us);
	json_double(w, "p50_abs_us", s.p50_us);
	json_double(w, "p90_abs_us", s.p90_us);
	json_obj_end(w);
}

void pause_json(const struct pause *ps, struct json_writer *w)
{
	const struct pause_pred *pr = &ps->pred;

	json_obj_begin(w, "pause");
	json_bool(w, "enabled", ps->p.enabled);
	json_str(w, "scheduler", pause_sched_name(ps->sched));
	json_str(w, "state", pause_state_name(ps->state));
	json_str(w, "why", ps->why[0] ? ps->why : NULL);

	json_obj_begin(w, "prediction");
	json_bool(w, "valid", pr->valid);
	json_double(w, "t_io_us", pr->valid ? pr->tio_ns / 1e3 : NAN);
	json_str(w, "t_io_source", pr->tio_src ? pr->tio_src : "none");
	json_double(w, "window_us", pr->valid ? pr->d_ns / 1e3 : NAN);
	json_double(w, "window_model_us", pr->valid ? pr->d_model_ns / 1e3 : NAN);
	json_double(w, "period_us", pr->valid ? pr->period_ns / 1e3 : NAN);
	json_double(w, "queue_absorbs_us", ps->absorb_ns ? ps->absorb_ns / 1e3 : NAN);
	json_int(w, "cpu", pr->cpu);
	json_double(w, "cpu_bound", pr->cpu_bound);
	json_double(w, "slice_us", pr->valid ? pr->slice_ns / 1e3 : NAN);
	json_str(w, "slice_source", pr->slice_src ? pr->slice_src : "none");
	json_obj_end(w);

	json_obj_begin(w, "measured");
	json_uint(w, "preemptions", ps->preemptions);
	json_uint(w, "blocks", ps->blocks);
	json_uint(w, "events_lost", ps->lost);
	json_double(w, "run_mean_us", rxb_ratio(ps->run_sum_ns, (double)ps->run_n) / 1e3);
	json_double(w, "off_mean_us", rxb_ratio(ps->off_sum_ns, (double)ps->preemptions) / 1e3);
	json_uint(w, "epoch_preemptions", ps->ep_preemptions);
	json_uint(w, "epoch_long_windows", ps->ep_long);
	json_double(w, "epoch_run_mean_us", rxb_ratio(ps->ep_run_sum_ns, (double)ps->ep_run_n) / 1e3);
	json_double(w, "epoch_off_mean_us",
		  rxb_ratio(ps->ep_off_sum_ns, (double)ps->ep_preemptions) / 1e3);
	json_obj_end(w);

	json_obj_begin(w, "check");
	json_uint(w, "scored", ps->scored);
	json_uint(w, "hits", ps->hits);
	json_double(w, "hit_rate", rxb_ratio((double)ps->hits, (double)ps->scored));
	json_uint(w, "missed", ps->missed);
	json_uint(w, "false_alarms", ps->false_alarms);
	json_uint(w, "short", ps->shorts);
	json_uint(w, "unscored", ps->unscored);
	err_json(w, "start_error", &ps->start_err);
	err_json(w, "duration_error", &ps->dur_err);
	json_uint(w, "schedule_checked", ps->sched_checked);
	json_uint(w, "schedule_hits", ps->sched_hits);
	json_double(w, "schedule_hit_rate", rxb_ratio((double)ps->sched_hits,
						(double)ps->sched_checked));
	json_obj_end(w);

	json_uint(w, "published", ps->published);
	json_uint(w, "published_early", ps->published_early);
	json_uint(w, "rephased", ps->rephased);
	json_double(w, "rephase_last_error_us", ps->rephased ? ps->rephase_err_ns / 1e3 : NAN);
	json_uint(w, "rephase_capped", ps->rephase_capped);
	json_uint(w, "cancels", ps->cancels);
	if (ps->has_last) {
		json_obj_begin(w, "last");
		json_uint(w, "flags", ps->last.flags);
		json_uint(w, "start_in_us", ps->last.start_in_us);
		json_uint(w, "duration_us", ps->last.duration_us);
		json_double(w, "queue_absorbs_us",
			  ps->last_absorb_ns ? ps->last_absorb_ns / 1e3 : 0);
		json_uint(w, "period_us", ps->last.period_us);
		json_uint(w, "repeat_count", ps->last.repeat_count);
		json_uint(w, "confidence", ps->last.confidence);
		json_uint(w, "epoch", ps->last.epoch);
		json_int(w, "sent_to", ps->last_sent);
		json_obj_end(w);
	} else {
		json_null(w, "last");
	}
	json_obj_end(w);
}
