// SPDX-License-Identifier: GPL-2.0-or-later
/* A measurement record as JSON. See collect_json.h. */
#include "daemon/collect/collect_json.h"

#include <math.h>
#include <stdio.h>

#include "common/util.h"
#include "daemon/collect/nic.h"
#include "solver/offwin.h"

/* The names of the bits of enum rxb_probe_group and enum rxb_degraded, by bit index. */
static const char *const probe_group_names[] = { "sched", "netrx", "sockq", "blkio" };
static const char *const degraded_names[] = {
	"no_bpf", "no_netlink", "no_bpf_stats", "partial_probes",
};

_Static_assert(1u << (RXB_ARRAY_SIZE(probe_group_names) - 1) == RXB_PROBE_BLKIO,
	       "a name for each probe group");
_Static_assert(1u << (RXB_ARRAY_SIZE(degraded_names) - 1) == RXB_DEGRADED_PARTIAL_PROBES,
	       "a name for each degraded bit");

const char *collect_json_probe_group_name(unsigned bit)
{
	for (unsigned i = 0; i < RXB_ARRAY_SIZE(probe_group_names); i++)
		if (bit == 1u << i)
			return probe_group_names[i];
	return "unknown";
}

void collect_json_cpu_classes(struct json_writer *w, const struct rxb_cpu_meas *c)
{
	json_int(w, "cpu", c->cpu);
	json_double(w, "cpu_bound", c->cpu_bound);
	json_double(w, "io_bound", c->io_bound);
	json_double(w, "busy_frac", c->busy_frac);
}

void collect_json_quota(struct json_writer *w, const char *key, double period_s, double slow_s,
			double slow_share, double fast_share)
{
	if (!(period_s > 0)) {
		json_null(w, key);
		return;
	}
	json_obj_begin(w, key);
	json_double(w, "period_s", period_s);
	json_double(w, "slow_s", slow_s);
	json_double(w, "slow_share", slow_share);
	json_double(w, "fast_share", fast_share);
	json_obj_end(w);
}

static void cpus_json(struct json_writer *w, const struct rxb_epoch *e)
{
	bool sched = e->probes & RXB_PROBE_SCHED;

	json_arr_begin(w, "cpus");
	for (int i = 0; i < e->ncpus; i++) {
		const struct rxb_cpu_meas *c = &e->cpus[i];

		json_obj_begin(w, NULL);
		collect_json_cpu_classes(w, c);
		json_double(w, "softirq_frac", c->softirq_frac);
		json_double(w, "hardirq_frac", c->hardirq_frac);
		json_double(w, "runnable_avg", c->runnable_avg);
		json_uint_opt(w, "switches", sched, c->switches);
		json_uint_opt(w, "preemptions", sched, c->preemptions);
		json_uint_opt(w, "untraced_switches", sched, c->untraced_switches);
		json_double(w, "cpu_bound_slice_ns", c->cpu_bound_slice_ns);
		json_double(w, "cpu_bound_run_ns", c->cpu_bound_run_ns);
		json_double(w, "cpu_bound_eff", c->cpu_bound_eff_valid ? c->cpu_bound_eff : NAN);
		collect_json_quota(w, "quota_phases", c->quota_period_s, c->quota_slow_s,
				   c->quota_slow_share, c->quota_fast_share);
		json_obj_end(w);
	}
	json_arr_end(w);
}

static void disk_json(struct json_writer *w, const struct rxb_disk_meas *d)
{
	json_obj_begin(w, "disk");
	json_bool(w, "valid", d->valid);
	json_str(w, "device", d->device);
	json_uint(w, "completions", d->completions);
	json_double(w, "mean_service_ns", d->mean_service_ns);
	json_double(w, "service_rate_per_s", d->service_rate_per_s);
	json_double(w, "mean_cpu_burst_ns", d->mean_cpu_burst_ns);
	json_double(w, "io_cpu_rate_per_s", d->io_cpu_rate_per_s);
	json_obj_end(w);
}

/* Drops by the kernel's reason: {"REASON": count, ...}. */
static void drop_counts_json(struct json_writer *w, const struct rxb_drop_count *v, int n)
{
	json_obj_begin(w, "drops_by_reason");
	for (int i = 0; i < n; i++)
		json_uint(w, v[i].reason, v[i].count);
	json_obj_end(w);
}

/*
 * Each non-empty slot's mean length and its standard deviation, ns, from
 * @hist and @sums: "<@kind>_slot_mean_ns", "<@kind>_slot_sd_ns".
 */
static void slot_moments_json(struct json_writer *w, const char *kind, const double *hist,
			      const struct rxb_win_sums *sums)
{
	double mean_ns[RXB_OFFCPU_SLOTS], sd_ns[RXB_OFFCPU_SLOTS];
	char key[32];

	offwin_slot_moments(hist, sums->sum_s, sums->sq_s2, RXB_OFFCPU_SLOTS, mean_ns, sd_ns);
	for (size_t r = 0; r < RXB_OFFCPU_SLOTS; r++) {
		mean_ns[r] *= 1e9;
		sd_ns[r] *= 1e9;
	}
	snprintf(key, sizeof(key), "%s_slot_mean_ns", kind);
	json_sparse(w, key, mean_ns, RXB_OFFCPU_SLOTS);
	snprintf(key, sizeof(key), "%s_slot_sd_ns", kind);
	json_sparse(w, key, sd_ns, RXB_OFFCPU_SLOTS);
}

/* A socket's drops by reason and its loss episodes, null without reasons. */
static void drops_json(struct json_writer *w, const struct rxb_sock_meas *s)
{
	if (s->reasons_valid)
		drop_counts_json(w, s->drop_reasons, s->nreasons);
	else
		json_null(w, "drops_by_reason");
	json_uint_opt(w, "drop_episodes", s->reasons_valid, s->drop_episodes);
	if (s->reasons_valid) {
		json_arr_begin(w, "episodes_ended");
		for (int i = 0; i < s->nepisode_bins; i++) {
			const struct rxb_episode_bin *b = &s->episodes_ended[i];

			json_obj_begin(w, NULL);
			json_double(w, "pkts_from", rxb_episode_bucket_lo(b->bucket));
			json_double(w, "pkts_to", rxb_episode_bucket_lo(b->bucket + 1u));
			json_uint(w, "count", b->count);
			json_obj_end(w);
		}
		json_arr_end(w);
		json_bool(w, "episodes_ended_cut", s->episode_bins_cut);
	} else {
		json_null(w, "episodes_ended");
		json_null(w, "episodes_ended_cut");
	}
}

/* What a socket's receiver threads did: their runs, windows and waits. */
static void receiver_json(struct json_writer *w, const struct rxb_sock_meas *s)
{
	json_obj_begin(w, "receiver");
	json_uint_opt(w, "preemptions", s->receivers_valid, s->receiver_preemptions);
	json_double(w, "run_before_preempt_ns", s->run_before_preempt_ns);
	json_double(w, "preempt_off_ns", s->preempt_off_ns);
	json_double(w, "sleep_off_ns", s->sleep_off_ns);
	json_uint_opt(w, "wake_waits", s->receivers_valid, s->wake_waits);
	json_double(w, "wake_wait_ns", s->wake_wait_ns);
	json_double(w, "wake_max_ns", s->receivers_valid ? s->wake_max_ns : NAN);
	if (s->receivers_valid) {
		json_sparse(w, "offcpu_hist_log2_ns", s->offcpu_hist, RXB_OFFCPU_SLOTS);
		slot_moments_json(w, "offcpu", s->offcpu_hist, &s->offcpu_sums);
		json_sparse(w, "wake_hist_log2_ns", s->wake_hist, RXB_OFFCPU_SLOTS);
		slot_moments_json(w, "wake", s->wake_hist, &s->wake_sums);
	} else {
		json_null(w, "offcpu_hist_log2_ns");
		json_null(w, "offcpu_slot_mean_ns");
		json_null(w, "offcpu_slot_sd_ns");
		json_null(w, "wake_hist_log2_ns");
		json_null(w, "wake_slot_mean_ns");
		json_null(w, "wake_slot_sd_ns");
	}
	json_double(w, "active_ns", s->receivers_valid ? s->active_ns : NAN);
	json_obj_end(w);
}

static void sock_json(struct json_writer *w, const struct rxb_sock_meas *s)
{
	bool v = s->counts_valid;

	json_obj_begin(w, NULL);
	json_uint(w, "port", s->port);
	json_uint(w, "ipproto", s->ipproto);
	json_uint_opt(w, "pkts_in", v, s->pkts_in);
	json_uint_opt(w, "pkts_enqueued", v, s->pkts_enqueued);
	json_uint_opt(w, "pkts_out", v, s->pkts_out);
	json_uint_opt(w, "bytes_in", v, s->bytes_in);
	json_uint_opt(w, "bytes_out", v, s->bytes_out);
	json_uint_opt(w, "empty_reads", v, s->empty_reads);
	json_uint_opt(w, "drops", s->drops_valid, s->drops);
	json_uint_opt(w, "drops_rcvbuf", s->reasons_valid, s->drops_rcvbuf);
	drops_json(w, s);
	json_int_opt(w, "queue_pkts_delta", v && s->queue_valid, s->queue_pkts_delta);
	json_uint_opt(w, "queue_pkts_cap", v && s->queue_pkts_cap, s->queue_pkts_cap);
	json_uint_opt(w, "rcvbuf_bytes", v && s->rcvbuf_bytes, s->rcvbuf_bytes);
	json_uint_opt(w, "rcvbuf_ipproto", v && s->rcvbuf_ipproto, s->rcvbuf_ipproto);
	json_double(w, "truesize_per_pkt_bytes", s->truesize_per_pkt_bytes);
	json_uint_opt(w, "recv_wakeups", s->receivers_valid, s->recv_wakeups);
	json_double(w, "pkts_per_wakeup", s->pkts_per_wakeup);
	json_uint_opt(w, "receiver_oncpu_ns", s->receivers_valid, s->receiver_oncpu_ns);
	json_double(w, "cpu_ns_per_pkt", s->cpu_ns_per_pkt);
	json_arr_begin(w, "tids");
	for (int i = 0; i < s->ntids; i++)
		json_int(w, NULL, s->tids[i]);
	json_arr_end(w);
	json_arr_begin(w, "ran_on");
	for (int i = 0; i < s->ncpus_ran; i++) {
		json_obj_begin(w, NULL);
		json_int(w, "cpu", s->ran_on[i].cpu);
		json_uint(w, "oncpu_ns", s->ran_on[i].oncpu_ns);
		json_obj_end(w);
	}
	json_arr_end(w);
	receiver_json(w, s);
	/* Without counts (no BPF): what /proc showed arriving. */
	json_bool_opt(w, "arrivals_seen", !v, s->arrivals_seen);
	json_obj_end(w);
}

static void nic_json(struct json_writer *w, const struct rxb_nic_meas *n)
{
	json_obj_begin(w, NULL);
	json_str(w, "name", n->name);
	json_int(w, "ifindex", n->ifindex);
	json_uint(w, "rx_ring", n->rx_ring);
	json_uint(w, "rx_ring_max", n->rx_ring_max);
	json_str(w, "ring_source", nic_source_name(n->ring_source));
	json_uint(w, "rx_max_frames", n->rx_max_frames);
	json_uint(w, "rx_usecs", n->rx_usecs);
	json_str(w, "coalesce_source", nic_source_name(n->coalesce_source));
	json_uint(w, "rx_packets", n->rx_packets);
	json_uint(w, "rx_missed", n->rx_missed);
	json_uint(w, "rx_fifo", n->rx_fifo);
	json_uint(w, "rx_dropped", n->rx_dropped);
	json_uint(w, "rx_over", n->rx_over);
	json_str(w, "note", n->note);
	json_obj_end(w);
}

static void stage_a_json(struct json_writer *w, const struct rxb_epoch *e)
{
	/* The NAPI polls are counted in epochs with stage A only. */
	if ((e->probes & RXB_PROBE_NETRX) && !e->net_stage_a)
		json_null(w, "napi");
	else
		json_arr_begin(w, "napi");
	for (int i = 0; i < e->nnapi; i++) {
		const struct rxb_napi_meas *n = &e->napi[i];

		json_obj_begin(w, NULL);
		json_str(w, "dev", n->dev);
		json_uint(w, "polls", n->polls);
		json_uint(w, "pkts", n->pkts);
		json_double(w, "pkts_per_poll", n->pkts_per_poll);
		json_int(w, "budget", n->budget);
		json_uint(w, "full_polls", n->full_polls);
		json_double(w, "service_ns_per_poll", n->service_ns_per_poll);
		json_double(w, "service_rate_per_s", n->service_rate_per_s);
		json_obj_end(w);
	}
	if (!(e->probes & RXB_PROBE_NETRX) || e->net_stage_a)
		json_arr_end(w);
	json_arr_begin(w, "irqs");
	for (int i = 0; i < e->nirqs; i++) {
		const struct rxb_irq_meas *q = &e->irqs[i];

		json_obj_begin(w, NULL);
		json_int(w, "irq", q->irq);
		json_str(w, "name", q->name);
		json_uint(w, "count", q->count);
		json_double(w, "rate_per_s", q->rate_per_s);
		json_double(w, "mean_ns", q->mean_ns);
		json_obj_end(w);
	}
	json_arr_end(w);
}

void collect_json_degraded_flags(struct json_writer *w, const char *key, uint32_t degraded)
{
	json_flag_names(w, key, degraded, degraded_names, RXB_ARRAY_SIZE(degraded_names));
}

static void degraded_json(struct json_writer *w, const struct rxb_epoch *e)
{
	json_bool(w, "degraded", e->degraded != 0);
	collect_json_degraded_flags(w, "degraded_flags", e->degraded);
	json_str(w, "degraded_reason", e->degraded_reason);
}

void collect_json_epoch(struct json_writer *w, const char *key, const struct rxb_epoch *e,
			const struct collect_sched_report *tasks)
{
	json_obj_begin(w, key);
	json_uint(w, "seq", e->seq);
	json_uint(w, "start_ns", e->start_ns);
	json_uint(w, "end_ns", e->end_ns);
	json_str(w, "attach_mode", e->attach_mode);
	json_flag_names(w, "probes", e->probes, probe_group_names,
			RXB_ARRAY_SIZE(probe_group_names));
	json_uint(w, "net_probe_every", e->net_probe_every);
	json_bool(w, "net_sampled", e->net_sampled);
	json_uint_opt(w, "net_sampled_seq", e->net_sampled_seq, e->net_sampled_seq);
	json_uint_opt(w, "net_attach_ns", e->net_attach_ns, e->net_attach_ns);
	json_uint_opt(w, "net_detach_ns", e->net_detach_ns, e->net_detach_ns);
	json_uint(w, "net_forced_epochs", e->net_forced);
	json_uint(w, "net_stage_a_every", e->net_stage_a_every);
	json_bool(w, "net_stage_a", e->net_stage_a);
	cpus_json(w, e);
	disk_json(w, &e->disk);
	json_arr_begin(w, "sockets");
	for (int i = 0; i < e->nsocks; i++)
		sock_json(w, &e->socks[i]);
	json_arr_end(w);
	drop_counts_json(w, e->drops_by_reason, e->nreasons);
	json_arr_begin(w, "nics");
	for (int i = 0; i < e->nnics; i++)
		nic_json(w, &e->nics[i]);
	json_arr_end(w);
	stage_a_json(w, e);
	json_arr_begin(w, "probe_cost");
	for (int i = 0; i < e->nprogs; i++) {
		const struct rxb_probe_cost *p = &e->probe_cost[i];

		json_obj_begin(w, NULL);
		json_str(w, "prog", p->prog);
		json_uint(w, "run_cnt", p->run_cnt);
		json_uint(w, "run_time_ns", p->run_time_ns);
		json_double(w, "avg_ns", p->avg_ns);
		json_obj_end(w);
	}
	json_arr_end(w);
	degraded_json(w, e);
	if (tasks)
		collect_json_tasks(w, "tasks", tasks);
	json_obj_end(w);
}

/* ------------------------------------------------------------ tasks -- */

void collect_json_tasks(struct json_writer *w, const char *key, const struct collect_sched_report *r)
{
	json_arr_begin(w, key);
	for (size_t i = 0; i < r->n; i++) {
		const struct collect_sched_task_report *t = &r->v[i];

		json_obj_begin(w, NULL);
		json_uint(w, "tid", t->tid);
		json_uint(w, "tgid", t->tgid);
		json_str(w, "comm", t->comm);
		json_str(w, "class", t->receiver ? "receiver" : collect_sched_class_name(t->cls));
		json_uint(w, "present_ns", t->d.present_ns);
		json_uint(w, "oncpu_ns", t->d.oncpu_ns);
		json_uint(w, "wait_ns", t->d.wait_ns);
		json_uint(w, "iowait_ns", t->d.iowait_ns);
		json_uint(w, "preempt", t->d.n_preempt);
		json_uint(w, "sleep", t->d.n_sleep);
		json_uint(w, "iowaits", t->d.n_iowait);
		json_uint(w, "blocked", t->d.n_blocked);
		json_uint(w, "untraced", t->d.n_untraced);
		json_uint(w, "disk_reqs", t->d.n_disk_reqs);
		json_arr_begin(w, "weights");
		for (int k = 0; k < t->nw; k++) {
			json_obj_begin(w, NULL);
			json_int(w, "cpu", t->w[k].cpu);
			json_double(w, "w", t->w[k].w);
			json_obj_end(w);
		}
		json_arr_end(w);
		json_obj_end(w);
	}
	json_arr_end(w);
}
