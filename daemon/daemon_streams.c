// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's side of the stream-count advisor ([streams], docs/streams.md):
 * each epoch the TCP transfers to the host (daemon/collect/tcpconn.h,
 * grouped by daemon/model/xfers.h) give passive samples, senders'
 * STREAMS_SAMPLE frames give theirs, the advisor (daemon/model/advisor.h)
 * refits and advises, within the receiver's drain capacity computed here;
 * the STREAMS pushes go out; the samples go to the state directory
 * (daemon/model/streams_hist.h). See daemon_int.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/sockdiag.h"
#include "daemon/collect/tcpconn.h"
#include "daemon/daemon_int.h"
#include "daemon/model/streams_hist.h"
#include "solver/tagged.h"

/* The receiver's cost per byte counts once it rests on this many bytes. */
#define COST_MIN_BYTES		(1024.0 * 1024.0)
/* The nominal batch of the tagged model (its E[R] scales with it at #I = 0). */
#define CAP_BATCH_BYTES		65536.0

static void params_of(const struct rxb_config *cfg, struct advisor_params *ap,
		      struct xfers_params *xp)
{
	const typeof(cfg->streams) *s = &cfg->streams;

	*ap = (struct advisor_params){
		.max_peers = s->max_peers, .max_points = s->max_points,
		.max_weight_s = s->sample_memory_s, .max_age_s = (uint64_t)s->max_age_h * 3600,
		.min_weight_s = fmin(s->min_sample_s, s->sample_memory_s), .max_n = s->max_n,
		.tolerance = s->tolerance, .rise = s->rise, .fits_per_epoch = s->fits_per_epoch,
	};
	*xp = (struct xfers_params){
		.max_conns = s->max_conns, .max_groups = s->max_peers,
		.min_stream_bps = (double)s->min_stream_bps, .min_share = s->min_share,
		.settle = s->settle, .max_n = s->max_n,
	};
}

static void settings_of(struct daemon_streams *st, const struct rxb_config *cfg)
{
	st->on = cfg->streams.enabled;
	st->ports = cfg->streams.ports;
	st->save_s = cfg->streams.save_s;
	st->min_sample_s = cfg->streams.min_sample_s;
}

int daemon_streams_init(struct daemon *d)
{
	struct daemon_streams *st = &d->streams;
	struct advisor_params ap;
	struct xfers_params xp;
	int err;

	params_of(&d->cfg, &ap, &xp);
	settings_of(st, &d->cfg);
	err = advisor_init(&st->adv, &ap);
	if (!err)
		err = xfers_init(&st->xf, &xp);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "[streams]: setting up the advisor");
		return err;
	}
	err = sockdiag_open(&st->sd);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "[streams]: no socket diagnostics: "
			      "transfers are not sampled, senders' samples still are");
		st->sd = NULL;
	}
	if (d->state_ok) {
		st->load_err = streams_hist_load(d->state.dirfd, &st->adv, rxb_wall_s(),
						 &st->loaded);
		if (st->load_err && st->load_err != -ENOENT)
			rxb_log_errno(RXB_LOG_WARNING, -st->load_err, "[streams]: reading %s/%s",
				      d->state.dir, STREAMS_HIST_FILE);
		else if (!st->load_err)
			rxb_info("[streams]: %u stream counts of %u peers from %s/%s (%u lines "
				 "unreadable, %u out of bounds or too old)", st->loaded.lines,
				 st->adv.npeers, d->state.dir, STREAMS_HIST_FILE, st->loaded.bad,
				 st->loaded.refused);
	}
	return 0;
}

static void save(struct daemon *d, uint64_t now)
{
	struct daemon_streams *st = &d->streams;

	if (!d->state_ok || !st->dirty)
		return;
	st->save_err = streams_hist_save(d->state.dirfd, &st->adv);
	st->saved_ns = now;
	if (st->save_err) {
		st->save_errors++;
		rxb_log_errno(RXB_LOG_WARNING, -st->save_err, "[streams]: writing %s/%s",
			      d->state.dir, STREAMS_HIST_FILE);
		return;
	}
	st->saves++;
	st->dirty = false;
}

void daemon_streams_finish(struct daemon *d)
{
	struct daemon_streams *st = &d->streams;

	if (!st->adv.peers)
		return;
	save(d, rxb_mono_ns());
	sockdiag_close(st->sd);
	st->sd = NULL;
	xfers_finish(&st->xf);
	advisor_finish(&st->adv);
}

/* ----------------------------------------------------------- senders -- */

/* A sender's address as the advisor keys it (v4-mapped for IPv4). */
static void addr16(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	}
}

static void on_sample(void *ctx, const struct sendsrv_peer *p,
		      const struct rxbneck_streams_sample *smp)
{
	struct daemon *d = ctx;
	uint8_t addr[16];

	if (!d->streams.on) {
		d->streams.samples_off++;
		return;
	}
	addr16(&p->addr, addr);
	if (advisor_add(&d->streams.adv, addr, p->hello.flow_port, smp->streams,
			(double)smp->throughput_bps, smp->duration_us / 1e6, ADVISOR_SENDER,
			rxb_wall_s()) == 0)
		d->streams.dirty = true;
}

static int streams_for(void *ctx, const struct sendsrv_peer *p, struct rxbneck_streams *out)
{
	struct daemon *d = ctx;
	const struct advisor_peer *ap;
	uint8_t addr[16];

	if (!d->streams.on)
		return -ENOENT;
	addr16(&p->addr, addr);
	ap = advisor_find(&d->streams.adv, addr, p->hello.flow_port);
	if (!ap || !ap->adv.valid)
		return -ENOENT;
	daemon_streams_frame(ap, out);
	return 0;
}

void daemon_streams_frame(const struct advisor_peer *ap, struct rxbneck_streams *out)
{
	const struct advisor_advice *a = &ap->adv;
	double rel = ap->fitted ? ap->res.rel_err : NAN;

	_Static_assert((int)RXBNECK_MODEL_AVG_QUAD == (int)STREAMS_AVG_QUAD &&
		       (int)RXBNECK_MODEL_MEASURED == (int)STREAMS_NONE,
		       "the wire's model numbers are the solver's");
	memset(out, 0, sizeof(*out));
	out->port = ap->port;
	out->streams = a->streams;
	out->predicted_bps = a->predicted_bps > 0 ? (uint64_t)llround(a->predicted_bps) : 0;
	out->epoch = a->epoch;
	out->flags = a->flags;
	out->confidence = a->confidence;
	out->model = a->model;
	out->points = (uint8_t)(a->points > 255 ? 255 : a->points);
	out->rel_err = isfinite(rel) && rel >= 0 ? (uint16_t)fmin(65534, lround(1000 * rel)) :
						   0xffff;
}

void daemon_streams_sender_ops(struct daemon *d, struct sendsrv_ops *ops)
{
	(void)d;
	ops->on_streams_sample = on_sample;
	ops->streams_for = streams_for;
}

/* ----------------------------------------------------- receiver cap -- */

/* The cost entry of @port; with @make, a free or the stalest one. */
static struct daemon_streams_cost *cost_of(struct daemon_streams *st, uint16_t port, bool make)
{
	struct daemon_streams_cost *o = NULL;

	for (int i = 0; i < RXB_MAX_SOCKS; i++) {
		if (st->cost[i].port == port)
			return &st->cost[i];
		if (!o || st->cost[i].seen_seq < o->seen_seq)
			o = &st->cost[i];
	}
	if (!make)
		return NULL;
	memset(o, 0, sizeof(*o));
	o->port = port;
	return o;
}

/*
 * The receivers' on-CPU ns per byte read, per watched port, from the
 * epochs that counted both (the per-packet probes' epochs): the data of
 * stage B's cost (docs/model.md), per byte because a TCP read is any
 * number of segments.
 */
static void feed_costs(struct daemon *d)
{
	const struct rxb_epoch *e = d->epoch;
	double k = ewma_decay((double)(e->end_ns - e->start_ns) / 1e9, LEARN_TAU_S);

	for (int i = 0; i < e->nsocks && i < RXB_MAX_SOCKS; i++) {
		const struct rxb_sock_meas *s = &e->socks[i];
		struct daemon_streams_cost *c;

		if (!s->counts_valid || !s->receivers_valid || !s->bytes_out ||
		    !s->receiver_oncpu_ns)
			continue;
		c = cost_of(&d->streams, s->port, true);
		ewma_ratio_add(&c->ns_per_byte, k, (double)s->receiver_oncpu_ns,
			       (double)s->bytes_out, COST_MIN_BYTES);
		c->seen_seq = e->seq;
		c->threads = s->ntids > 0 ? s->ntids : 1;
		if (s->ncpus_ran > 0 && s->ncpus_ran < c->threads)
			c->threads = s->ncpus_ran;
	}
}

double daemon_streams_drain_bps(double ns_per_byte, int threads, double cpu_bound,
				double io_bound, double mu_pio_per_s, double mu_disk_per_s,
				const struct ctmc_opts *o, char *why, size_t len)
{
	struct tagged_rates r = { 0 };
	struct tagged_result res;
	const char *io = "";

	if (!(ns_per_byte > 0) || threads < 1) {
		snprintf(why, len, "no receiver cost measured");
		return NAN;
	}
	r.mu_net_per_s = 1e9 / (ns_per_byte * CAP_BATCH_BYTES);
	if (io_bound > 0 && mu_pio_per_s > 0 && mu_disk_per_s > 0) {
		r.mu_pio_per_s = mu_pio_per_s;
		r.mu_disk_per_s = mu_disk_per_s;
	} else {
		if (io_bound > 0)
			io = " (I/O-bound tasks counted as CPU-bound)";
		/* Without the disk's rates, the I/O-bound tasks count as CPU-bound: a bound. */
		cpu_bound += io_bound;
		io_bound = 0;
		/* No I/O-bound task: their rates take no part, but the model wants them set. */
		r.mu_pio_per_s = r.mu_disk_per_s = r.mu_net_per_s;
	}
	if (tagged_seed_mean(cpu_bound, io_bound, &r, o, &res) || !(res.mean_response_s > 0)) {
		snprintf(why, len, "the receiver's model could not be solved (#C %.2f, #I %.2f)",
			 cpu_bound, io_bound);
		return NAN;
	}
	snprintf(why, len, "receiver %.3g ns/B, %d thread%s, #C %.2f, #I %.2f%s", ns_per_byte,
		 threads, threads > 1 ? "s" : "", cpu_bound, io_bound, io);
	return 8 * CAP_BATCH_BYTES / res.mean_response_s * threads;
}

/*
 * What the receiving threads of @port can drain, bits/s, from their
 * measured cost and the #C, #I of stage B's inputs (daemon_streams_drain_bps()).
 */
static double drain_cap(void *ctx, uint16_t port, char *why, size_t len)
{
	struct daemon *d = ctx;
	struct daemon_streams_cost *c = cost_of(&d->streams, port, false);
	struct flow *fl = flows_find(&d->flows, port);
	double ns = c ? ewma_ratio_value(&c->ns_per_byte) : NAN, cb = 0, ib = 0;
	double pio = 0, disk = 0;

	if (!(ns > 0)) {
		snprintf(why, len, "not measured: the receiver's cost needs port %u watched "
			 "([measure] watch_ports, or a sender's HELLO) and its traffic", port);
		return NAN;
	}
	if (fl && fl->inputs.b.cpu_bound.src != VALUE_MISSING && isfinite(fl->inputs.b.cpu_bound.v))
		cb = fl->inputs.b.cpu_bound.v;
	if (fl && fl->inputs.b.io_bound.src != VALUE_MISSING && isfinite(fl->inputs.b.io_bound.v))
		ib = fl->inputs.b.io_bound.v;
	if (fl) {
		pio = fl->inputs.b.mu_pio_per_s.v;
		disk = fl->inputs.b.mu_disk_per_s.v;
	}
	return daemon_streams_drain_bps(ns, c->threads, cb, ib, pio, disk, &d->flows.copts,
					why, len);
}

/* ----------------------------------------------------------- samples -- */

struct dump_ctx {
	struct daemon_streams *st;
};

static bool sampled_port(const struct daemon_streams *st, uint16_t port)
{
	if (!st->ports.n)
		return st->listen_map[port / 64] & (1ULL << (port % 64));
	for (int i = 0; i < st->ports.n; i++)
		if (st->ports.port[i] == port)
			return true;
	return false;
}

static void on_listener(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid, void *arg)
{
	struct daemon_streams *st = arg;

	(void)proto;
	(void)inode;
	(void)uid;
	st->listen_map[port / 64] |= 1ULL << (port % 64);
}

static void on_conn(const struct tcpconn *c, void *arg)
{
	struct daemon_streams *st = arg;

	if (sampled_port(st, c->lport))
		xfers_conn(&st->xf, c);
}

static void on_xfer(void *arg, const struct xfers_sample *s)
{
	struct daemon_streams *st = arg;

	if (advisor_add(&st->adv, s->addr, s->port, s->n, s->bps, s->dt_s, ADVISOR_PASSIVE,
			rxb_wall_s()) == 0)
		st->dirty = true;
}

/* One interval of the transfers to this host. */
static void sample_transfers(struct daemon_streams *st)
{
	struct tcpconn_req rq = { .fn = on_conn, .arg = st, .max_conns = st->xf.p.max_conns };
	uint64_t t0 = rxb_mono_ns();
	int n = 0;

	if (!st->ports.n) {
		memset(st->listen_map, 0, sizeof(st->listen_map));
		n = sockdiag_tcp_listeners(st->sd, on_listener, st);
	}
	xfers_begin(&st->xf, t0);
	if (n >= 0)
		n = tcpconn_dump(st->sd, &rq);
	st->dumps++;
	st->dump_us = (double)(rxb_mono_ns() - t0) / 1e3;
	st->conns_skipped = rq.skipped;
	if (n < 0) {
		if (!st->dump_errors++ || st->last_err != n)
			rxb_log_errno(RXB_LOG_WARNING, -n, "[streams]: dumping TCP connections");
		st->last_err = n;
		xfers_abort(&st->xf);
		return;
	}
	st->last_err = 0;
	xfers_end(&st->xf, on_xfer, st);
}

void daemon_streams_epoch(struct daemon *d)
{
	struct daemon_streams *st = &d->streams;
	uint64_t now = rxb_mono_ns();

	if (!st->adv.peers)
		return;
	feed_costs(d);
	if (st->on && st->sd)
		sample_transfers(st);
	advisor_epoch(&st->adv, d->epoch->seq, rxb_wall_s(), drain_cap, d);
	if (st->on && d->ss)
		sendsrv_publish_streams(d->ss);
	if (now - st->saved_ns >= (uint64_t)st->save_s * RXB_NSEC_PER_SEC)
		save(d, now);
}

/* ------------------------------------------------------------ reload -- */

int daemon_streams_reload(struct daemon *d, const struct rxb_config *next, char *why,
			  size_t wlen)
{
	struct daemon_streams *st = &d->streams;
	struct advisor_params ap;
	struct xfers_params xp, old = st->xf.p;
	int err;

	params_of(next, &ap, &xp);
	err = xfers_set_params(&st->xf, &xp);
	if (!err) {
		err = advisor_set_params(&st->adv, &ap);
		/* Back to what fitted before: no allocation, cannot fail. */
		if (err)
			xfers_set_params(&st->xf, &old);
	}
	if (err) {
		snprintf(why, wlen, "[streams]: %s", strerror(-err));
		return err;
	}
	settings_of(st, next);
	return 0;
}

void daemon_streams_effective(const struct daemon *d, struct rxb_config *out)
{
	const struct daemon_streams *st = &d->streams;
	const struct advisor_params *ap = &st->adv.p;
	const struct xfers_params *xp = &st->xf.p;
	typeof(out->streams) *s = &out->streams;

	s->enabled = st->on;
	s->ports = st->ports;
	s->save_s = st->save_s;
	s->max_peers = ap->max_peers == xp->max_groups ? ap->max_peers : 0;
	s->max_points = ap->max_points;
	s->max_conns = xp->max_conns;
	s->max_n = ap->max_n == xp->max_n ? ap->max_n : 0;
	s->tolerance = ap->tolerance;
	s->rise = ap->rise;
	s->min_stream_bps = (uint64_t)xp->min_stream_bps;
	s->min_share = xp->min_share;
	s->settle = xp->settle;
	s->sample_memory_s = (uint32_t)ap->max_weight_s;
	/* The advisor holds min(min_sample_s, sample_memory_s): the key itself. */
	s->min_sample_s = st->min_sample_s;
	s->max_age_h = (uint32_t)(ap->max_age_s / 3600);
	s->fits_per_epoch = ap->fits_per_epoch;
}
