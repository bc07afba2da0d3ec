// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's side of the flows (daemon/model/flows.h): senders' events
 * in from the sender server, rates and pauses out to it, learned costs to
 * and from the state directory, and after each epoch's measurement the
 * model's step, the ports the collector watches and when its per-packet
 * probes attach. See daemon_int.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/collect.h"
#include "daemon/collect/procfs.h"
#include "daemon/collect/recvcost.h"
#include "daemon/collect/sockdiag.h"
#include "daemon/collect/sockowner.h"
#include "daemon/daemon_int.h"
#include "daemon/model/prior.h"

#define STATE_SAVE_NS		(60 * RXB_NSEC_PER_SEC)
#define STATE_SAVE_SOON_NS	(5 * RXB_NSEC_PER_SEC)

/* ------------------------------------------------------------- senders -- */

/* The unwatched flows a source holds senders on (sendsrv_foreach_sender()). */
struct held {
	const struct daemon *d;
	const struct sendsrv_peer *p;
	int n;
	uint16_t port[FLOWS_MAX];
};

static void count_held(void *arg, const struct sendsrv_peer *q)
{
	struct held *h = arg;
	const struct flow *fl;
	uint16_t port = q->hello.flow_port;

	if (!sendsrv_same_source(&q->addr, &h->p->addr))
		return;
	fl = flows_find((struct flows *)&h->d->flows, port);
	if (!fl || fl->configured)
		return;
	for (int i = 0; i < h->n; i++)
		if (h->port[i] == port)
			return;
	if (h->n < FLOWS_MAX)
		h->port[h->n++] = port;
}

/*
 * [control] max_flows_per_address: a sender may not take another
 * unwatched flow port when its address (IPv6: its /64) already holds
 * senders on that many. Watched ports ([measure] watch_ports) are not
 * counted: they are the administrator's.
 */
static bool over_flow_share(const struct daemon *d, const struct sendsrv_peer *p)
{
	struct held h = { .d = d, .p = p };
	const struct flow *fl = flows_find((struct flows *)&d->flows, p->hello.flow_port);

	if (fl && fl->configured)
		return false;
	sendsrv_foreach_sender(d->ss, count_held, &h);
	for (int i = 0; i < h.n; i++)
		if (h.port[i] == p->hello.flow_port)
			return false;
	return h.n >= (int)d->admit.max_flows_per_address;
}

/*
 * [control] flow_owner_uids: the port's receiving socket (UDP; a TCP
 * flow's listener) must be one of theirs, as sock_diag says. A port with
 * no socket yet is refused too: the receiver binds before its sender says
 * HELLO.
 */
static bool owner_ok(struct daemon *d, const struct sendsrv_peer *p)
{
	const struct rxb_uid_list *want = &d->admit.owner_uids;
	uint32_t uids[8];
	int n, err;

	if (!want->n)
		return true;
	if (!d->admit.diag) {
		err = sockdiag_open(&d->admit.diag);
		if (err) {
			rxb_log_errno(RXB_LOG_ERR, -err, "sender %s: flow port %u refused: "
				      "cannot ask sock_diag who owns it", p->addr_str,
				      p->hello.flow_port);
			return false;
		}
	}
	n = sockdiag_port_owners(d->admit.diag, p->hello.flow_proto, p->hello.flow_port, uids,
				 (int)RXB_ARRAY_SIZE(uids));
	if (n < 0) {
		rxb_log_errno(RXB_LOG_ERR, -n, "sender %s: flow port %u refused: sock_diag",
			      p->addr_str, p->hello.flow_port);
		return false;
	}
	for (int i = 0; i < n && i < (int)RXB_ARRAY_SIZE(uids); i++)
		for (int j = 0; j < want->n; j++)
			if (uids[i] == want->uid[j])
				return true;
	if (sendsrv_log_ok(d->ss))
		rxb_notice("sender %s: flow port %u refused: %s ([control] flow_owner_uids)",
			   p->addr_str, p->hello.flow_port,
			   n ? "its socket belongs to another user" : "no socket is bound to it");
	return false;
}

static int on_hello(void *ctx, const struct sendsrv_peer *p)
{
	struct daemon *d = ctx;
	int err;

	if (over_flow_share(d, p)) {
		d->admit.flows_per_address++;
		if (sendsrv_log_ok(d->ss))
			rxb_notice("sender %s: flow port %u refused: its address holds senders "
				   "on %u unwatched ports ([control] max_flows_per_address)",
				   p->addr_str, p->hello.flow_port, d->admit.max_flows_per_address);
		return RXBNECK_ERR_REFUSED;
	}
	if (!owner_ok(d, p)) {
		d->admit.not_owner++;
		return RXBNECK_ERR_REFUSED;
	}
	err = flows_sender_hello(&d->flows, p);
	if (err == -ENOSPC) {
		d->admit.flows_full++;
		if (sendsrv_log_ok(d->ss))
			rxb_notice("sender %s: flow port %u refused: already watching %d ports",
				   p->addr_str, p->hello.flow_port, FLOWS_MAX);
		return RXBNECK_ERR_REFUSED;
	}
	if (sendsrv_log_ok(d->ss))
		rxb_info("sender %s ('%s') for %s port %u: payload %u B, file %llu B, RTT %u us",
			 p->addr_str, p->hello.name, p->hello.flow_proto == 6 ? "TCP" : "UDP",
			 p->hello.flow_port, p->hello.payload_bytes,
			 (unsigned long long)p->hello.file_bytes, p->hello.rtt_us);
	daemon_flows_sync_ports(d);
	return 0;
}

static void on_goodbye(void *ctx, const struct sendsrv_peer *p, int why)
{
	struct daemon *d = ctx;

	if (sendsrv_log_ok(d->ss))
		rxb_info("sender %s for port %u left (%s)", p->addr_str, p->hello.flow_port,
			 why == SENDSRV_GONE_BYE ? "bye" : why == SENDSRV_GONE_EOF ? "closed" :
			 why == SENDSRV_GONE_PEER_ERROR ? "it sent an error" :
			 why == SENDSRV_GONE_SHUTDOWN ? "shutdown" :
			 rxbneck_error_name((unsigned)why));
	flows_sender_gone(&d->flows, p);
	if (!d->stop)
		daemon_flows_sync_ports(d);
}

/* PROTOCOL.md §5.11: sendsrv checked that it is about the sender's own flow. */
static void on_report(void *ctx, const struct sendsrv_peer *p,
		      const struct rxbneck_report *r)
{
	struct daemon *d = ctx;

	/* Rate-limited: a sender may send REPORTs back to back (sendsrv.h). */
	if (sendsrv_log_ok(d->ss))
		rxb_info("sender %s: transfer on port %u %s: %llu B in %.3f s at %.1f Mb/s, "
			 "%u rounds, %llu of %llu packets resent", p->addr_str, r->port,
			 r->flags & RXBNECK_REPORT_ABORTED ? "aborted" : "done",
			 (unsigned long long)r->file_bytes, r->elapsed_us / 1e6,
			 r->rate_bps / 1e6, r->rounds, (unsigned long long)r->pkts_resent,
			 (unsigned long long)r->pkts_sent);
	flows_note_report(&d->flows, p, r);
}

static int rate_for(void *ctx, const struct sendsrv_peer *p, struct rxbneck_rate *r,
		    struct rxbneck_rate *between)
{
	struct daemon *d = ctx;

	return flows_rate_for(&d->flows, p, r, between);
}

static void seen_sender(void *arg, const struct sendsrv_peer *p)
{
	flows_sender_seen(arg, p);
}

void daemon_flows_sender_ops(struct daemon *d, struct sendsrv_ops *ops)
{
	ops->ctx = d;
	ops->on_hello = on_hello;
	ops->on_report = on_report;
	ops->on_goodbye = on_goodbye;
	ops->rate_for = rate_for;
}

/* ---------------------------------------------------- rates and pauses -- */

static int publish_rates(void *ctx, uint16_t port)
{
	struct daemon *d = ctx;

	return d->ss ? sendsrv_offer_rates(d->ss, port) : 0;
}

static int publish_pause(void *ctx, const struct rxbneck_pause *p)
{
	struct daemon *d = ctx;

	return d->ss ? sendsrv_publish_pause(d->ss, p) : 0;
}

/* ------------------------------------------------------------- history -- */

static bool history_get(void *ctx, uint16_t port, struct learn *out)
{
	struct daemon *d = ctx;

	return d->state_ok && state_history_get(&d->state, port, out);
}

static void keep_history(struct daemon *d, uint16_t port, const struct learn *l)
{
	if (d->state_ok && l->origin == VALUE_MEASURED)
		state_history_put(&d->state, port, l);
}

/* A flow goes away: what it learned is saved soon (save_state()). */
static void history_put(void *ctx, uint16_t port, const struct learn *l)
{
	struct daemon *d = ctx;

	keep_history(d, port, l);
	d->state_soon = d->state.dirty;
}

/*
 * What the flows learned in this run, to disk every STATE_SAVE_NS, within
 * STATE_SAVE_SOON_NS of a flow going away or of a failed save (a full disk
 * is seen, and its end, within seconds), and at exit (flows_finish() and
 * state_close()).
 */
static void save_state(struct daemon *d)
{
	uint64_t now = rxb_mono_ns(), since = now - d->state_saved_ns;

	if (!d->state_ok || !(since >= STATE_SAVE_NS || (d->state_soon && since >= STATE_SAVE_SOON_NS)))
		return;
	d->state_saved_ns = now;
	for (int i = 0; i < d->flows.n; i++)
		keep_history(d, d->flows.v[i].port, &d->flows.v[i].learn);
	d->state_soon = state_save(&d->state) != 0;
}

/*
 * Another flow's costs learned on this host: the flow of this run with
 * the latest traffic, else the newest in the state directory.
 */
static bool host_costs(struct daemon *d, uint16_t port, struct learn *out, uint16_t *from)
{
	const struct flow *best = NULL;

	for (int i = 0; i < d->flows.n; i++) {
		const struct flow *fl = &d->flows.v[i];

		if (fl->port != port && fl->learn.origin == VALUE_MEASURED &&
		    (!best || fl->learn.last_traffic_ns > best->learn.last_traffic_ns))
			best = fl;
	}
	if (best) {
		*out = best->learn;
		*from = best->port;
		return true;
	}
	return d->state_ok && state_history_newest(&d->state, port, out, from);
}

/* Before the flow's own traffic: costs from elsewhere, placement from its socket. */
static void prior(void *ctx, uint16_t port, double payload_bytes, struct learn *l)
{
	struct daemon *d = ctx;
	struct sockowner o;
	struct learn other;
	uint16_t from = 0;
	char costs[64];
	int err;

	err = sockowner_find(port, &o);
	if (l->origin == VALUE_MISSING || l->prior != LEARN_PRIOR_NONE) {
		if (host_costs(d, port, &other, &from))
			prior_from(l, &other, from);
		else	/* the receive path measured on the receiver's CPU */
			prior_default_calibrated(l, payload_bytes,
						 recvcost_ns(&d->recvcost, err ? -1 : o.cpu,
							     payload_bytes));
	}
	if (err) {
		rxb_info("flow %u: no receiving socket found before traffic (%s): placement %s",
			 port, err == -ENOENT ? "no UDP socket on the port in this network namespace, "
			 "or no process holding it" : strerror(-err),
			 l->ncpus ? "from this port's history" : "unknown");
		prior_place(l, -1, 0);
		return;
	}
	prior_place(l, o.cpu, o.rcvbuf_bytes);
	if (l->prior == LEARN_PRIOR_HOST)
		snprintf(costs, sizeof(costs), "port %u's", l->prior_port);
	else if (l->prior == LEARN_PRIOR_DEFAULT)
		snprintf(costs, sizeof(costs), "the defaults, %.0f ns per datagram",
			 ewma_ratio_value(&l->cpu_ns_per_pkt));
	else
		rxb_strlcpy(costs, "this port's history", sizeof(costs));
	rxb_info("flow %u: receiver '%s' pid %d tid %d (%s) on cpu%d%s, rcvbuf %u B; "
		 "costs before its traffic: %s", port, o.comm, o.pid, o.tid, o.how, o.cpu,
		 o.pinned ? " (pinned)" : " (last ran)", o.rcvbuf_bytes, costs);
}

static void solved(void *ctx, uint16_t port, double solve_s)
{
	struct daemon *d = ctx;

	(void)port;
	metrics_totals_solved(&d->metrics_totals, solve_s);
}

int daemon_flows_init(struct daemon *d)
{
	struct flows_params p;
	struct flows_ops ops = {
		.ctx = d,
		.publish_rates = publish_rates,
		.publish_pause = publish_pause,
		.history_get = history_get,
		.history_put = history_put,
		.prior = prior,
		.solved = solved,
	};
	int err;

	recvcost_init(&d->recvcost);
	daemon_reload_flows_params(d, &d->cfg, &p);
	daemon_reload_admit(d, &d->cfg);
	err = flows_init(&d->flows, &p, &ops);
	if (!err)
		err = flows_set_config_ports(&d->flows, d->cfg.measure.watch_ports.port,
					     d->cfg.measure.watch_ports.n);
	if (err)
		rxb_log_errno(RXB_LOG_ERR, -err, "setting up the flows");
	return err;
}

/* ------------------------------------------------------------- epochs -- */

void daemon_flows_sync_ports(struct daemon *d)
{
	uint16_t ports[FLOWS_MAX];
	int n, err;

	if (!d->flows.ports_changed || !d->col)
		return;
	n = flows_ports(&d->flows, ports);
	err = collect_set_ports(d->col, ports, n);
	if (err)
		rxb_log_errno(RXB_LOG_WARNING, -err, "collector: watching %d ports", n);
	else
		rxb_debug("collector: watching %d ports", n);
}

/* A flow's receive path as netplan compares it: stage B's placement and
 * the load of each of its CPUs in epoch @e. */
static struct netplan_obs flow_obs(const struct flow *fl, const struct rxb_epoch *e)
{
	const struct inputs_stage_b *b = &fl->inputs.b;
	struct netplan_obs o = { .port = fl->port };

	if (!b->present)
		return o;
	for (int i = 0; i < b->ncpus && i < LEARN_MAX_CPUS && o.ncpus < NETPLAN_OBS_CPUS; i++) {
		struct netplan_cpu *c = &o.cpus[o.ncpus++];
		int cpu = b->cpu[i];
		bool known = e && cpu >= 0 && cpu < e->ncpus && cpu < RXB_MAX_CPUS;

		c->cpu = cpu;
		c->share = b->cpu_share[i];
		c->cpu_bound = known && e->cpus[cpu].cpu_bound >= 0 ? e->cpus[cpu].cpu_bound : NAN;
		c->io_bound = known && e->cpus[cpu].io_bound >= 0 ? e->cpus[cpu].io_bound : NAN;
	}
	return o;
}

/*
 * Learn, then sample (netplan.h): after this epoch, attach the per-packet
 * probes in every epoch while the flows' receive paths are being learned,
 * one epoch in [measure] net_probe_every otherwise.
 */
static void plan_probes(struct daemon *d)
{
	_Static_assert(NETPLAN_MAX_FLOWS >= FLOWS_MAX, "netplan sees every flow");
	struct netplan_obs obs[FLOWS_MAX];
	uint64_t now = d->epoch->end_ns;

	for (int i = 0; i < d->flows.n; i++)
		obs[i] = flow_obs(&d->flows.v[i], d->epoch);
	if (netplan_epoch(&d->netplan, now, obs, d->flows.n) && d->netplan.p.learn_ns)
		rxb_info("per-packet probes: every epoch for %u s (%s)",
			 d->cfg.measure.net_probe_learn_s, d->netplan.why);
	daemon_flows_probe_every(d, now);
}

void daemon_flows_probe_every(struct daemon *d, uint64_t now)
{
	uint32_t every = netplan_every(&d->netplan, now);
	int err;

	if (every == d->net_every_now || !d->col)
		return;
	err = collect_set_net_probe_every(d->col, every);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "collector: per-packet probes one epoch in %u",
			      every);
		return;
	}
	if (every > 1)
		rxb_info("per-packet probes: one epoch in %u (receive paths learned)", every);
	d->net_every_now = every;
}

void daemon_flows_epoch(struct daemon *d)
{
	d->netdev_max_backlog = procfs_read_netdev_max_backlog();
	sendsrv_foreach_sender(d->ss, seen_sender, &d->flows);
	flows_epoch(&d->flows, d->epoch, d->netdev_max_backlog);
	daemon_buffer_after_epoch(&d->buf, &d->flows, d->epoch);
	daemon_flows_sync_ports(d);
	plan_probes(d);
	save_state(d);
}
