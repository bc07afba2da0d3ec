// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The collector's probe groups (bpf/): which variant to load (tp_btf or
 * raw_tp), what a group that fails to load leaves degraded and why, the
 * programs' run-time statistics (BPF_ENABLE_STATS) that give
 * rxb_epoch.probe_cost[], and closing it all. See collect_int.h.
 */
#include "daemon/collect/collect_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/probe.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/collect_sched.h"

static void note_failed_progs(struct collect *c, const struct probe_obj *po)
{
	if (po->nfailed) {
		c->degraded |= RXB_DEGRADED_PARTIAL_PROBES;
		collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
			   "%s: %s", po->name, po->failed);
	}
}

/* A loaded group: keep its programs for probe_cost[]. */
static void register_progs(struct collect *c, const struct probe_obj *po)
{
	for (int i = 0; i < po->nprogs && c->nprogs < RXB_MAX_PROGS; i++)
		c->cost[c->nprogs++].prog = po->progs[i];
	note_failed_progs(c, po);
}

/* Which variant to load: the feature probe, unless forced. */
static enum probe_mode choose_mode(enum collect_attach a)
{
	if (a == COLLECT_ATTACH_TP_BTF)
		return PROBE_MODE_TP_BTF;
	if (a == COLLECT_ATTACH_RAW_TP)
		return PROBE_MODE_RAW_TP;
	if (probe_tp_btf_works("sched_switch"))
		return PROBE_MODE_TP_BTF;
	rxb_notice("collect: tp_btf not supported here, using raw_tp");
	return PROBE_MODE_RAW_TP;
}

/*
 * Probe group @group was opened with result @err: count it loaded, or note
 * why it was not. True when it loaded.
 */
static bool group_opened(struct collect *c, const char *group, int err, int *loaded)
{
	if (!err) {
		(*loaded)++;
		return true;
	}
	c->degraded |= RXB_DEGRADED_PARTIAL_PROBES;
	if (!c->first_err)
		c->first_err = err;
	collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
		   "%s probes not loaded: %s", group, strerror(-err));
	return false;
}

/* Seed task baselines from /proc (see collect_sched_seed_from_proc()). */
static void seed_tasks(struct collect *c)
{
	int n = collect_sched_seed_from_proc(c->sp);

	if (n < 0)
		rxb_log_errno(RXB_LOG_WARNING, -n, "collect: seeding tasks from /proc");
	else
		rxb_debug("collect: %d tasks seeded from /proc", n);
}

static void load_probes(struct collect *c, enum collect_attach attach,
			unsigned groups, bool seed)
{
	enum probe_mode mode = choose_mode(attach);
	int err, loaded = 0;

	probe_route_libbpf_log();
	rxb_strlcpy(c->attach_mode, probe_mode_name(mode), sizeof(c->attach_mode));
	if (groups != COLLECT_GROUP_ALL) {
		c->degraded |= RXB_DEGRADED_PARTIAL_PROBES;
		collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
			   "probe groups left out by request");
	}
	if (groups & COLLECT_GROUP_SCHED) {
		err = sched_probe_open(&c->sp, mode);
		if (group_opened(c, "sched", err, &loaded)) {
			register_progs(c, sched_probe_obj(c->sp));
			if (seed)
				seed_tasks(c);
		}
	}
	if (groups & COLLECT_GROUP_NETRX) {
		err = netrx_probe_open(&c->np, mode);
		if (group_opened(c, "netrx", err, &loaded))
			register_progs(c, netrx_probe_obj(c->np));
	}
	if (groups & COLLECT_GROUP_SOCKQ) {
		/* Receivers it finds are followed by the scheduler probe. */
		err = sockq_probe_open(&c->sq, mode,
				       c->sp ? sched_probe_rx_tids_fd(c->sp) : -1,
				       c->sp ? sched_probe_rx_gen_fd(c->sp) : -1);
		if (group_opened(c, "sockq", err, &loaded)) {
			register_progs(c, sockq_probe_obj(c->sq));
			err = sockq_probe_set_ports(c->sq, c->ports, c->nports);
			if (err) {
				c->degraded |= RXB_DEGRADED_PARTIAL_PROBES;
				collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
					   "watching the ports: %s", strerror(-err));
			}
		}
	}
	if (groups & COLLECT_GROUP_BLKIO) {
		err = blkio_probe_open(&c->bp, mode);
		if (group_opened(c, "blkio", err, &loaded))
			register_progs(c, blkio_probe_obj(c->bp));
	}
	if (!loaded) {
		/* One reason instead of the same one per group. */
		c->degraded &= ~RXB_DEGRADED_PARTIAL_PROBES;
		c->degraded |= RXB_DEGRADED_NO_BPF;
		c->degraded_reason[0] = '\0';
		collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
			   "no BPF probe loaded (%s): /proc and netlink only",
			   c->first_err ? strerror(-c->first_err) : "none requested");
		rxb_strlcpy(c->attach_mode, "none", sizeof(c->attach_mode));
		rxb_warn("collect: no BPF probe could be loaded; measuring from /proc only");
	}
}

static void enable_stats(struct collect *c)
{
	c->stats_fd = probe_enable_stats();
	if (c->stats_fd >= 0)
		return;
	rxb_log_errno(RXB_LOG_WARNING, -c->stats_fd,
		      "collect: enabling BPF run-time statistics");
	c->degraded |= RXB_DEGRADED_NO_BPF_STATS;
	collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
		   "probe cost unknown: BPF_ENABLE_STATS: %s", strerror(-c->stats_fd));
	c->stats_fd = -1;
}

void collect_probes_costs(struct collect *c, struct rxb_epoch *out, bool report)
{
	out->nprogs = 0;
	for (int i = 0; i < c->nprogs; i++) {
		struct prog_cost *pc = &c->cost[i];
		uint64_t cnt, ns;

		if (probe_prog_stats(pc->prog, &cnt, &ns))
			continue;
		if (report && c->stats_fd >= 0) {
			struct rxb_probe_cost *o = &out->probe_cost[out->nprogs++];

			rxb_strlcpy(o->prog, bpf_program__name(pc->prog), sizeof(o->prog));
			o->run_cnt = cnt > pc->run_cnt ? cnt - pc->run_cnt : 0;
			o->run_time_ns = ns > pc->run_time_ns ? ns - pc->run_time_ns : 0;
			o->avg_ns = o->run_cnt ? (double)o->run_time_ns / (double)o->run_cnt
					       : NAN;
		}
		pc->run_cnt = cnt;
		pc->run_time_ns = ns;
	}
}

void collect_probes_open(struct collect *c, const struct collect_opts *opts)
{
	if (opts->attach == COLLECT_ATTACH_NONE) {
		c->degraded |= RXB_DEGRADED_NO_BPF;
		collect_add_reason(c->degraded_reason, sizeof(c->degraded_reason),
			   "BPF not requested (attach none)");
		rxb_strlcpy(c->attach_mode, "none", sizeof(c->attach_mode));
	} else {
		load_probes(c, opts->attach, opts->groups ? opts->groups : COLLECT_GROUP_ALL,
			    opts->seed_from_proc);
		/* Statistics only for programs that are there. */
		if (!(c->degraded & RXB_DEGRADED_NO_BPF)) {
			if (opts->bpf_stats)
				enable_stats(c);
			else
				c->degraded |= RXB_DEGRADED_NO_BPF_STATS;
		}
	}
}

void collect_probes_close(struct collect *c)
{
	sockq_probe_close(c->sq);
	sched_probe_close(c->sp);
	netrx_probe_close(c->np);
	blkio_probe_close(c->bp);
	if (c->stats_fd >= 0)
		close(c->stats_fd);	/* BPF stats back to what they were */
}
