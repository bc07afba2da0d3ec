// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape's receivers at run time: the connection to each one's
 * rxbneckd (librxbneck, as a sender of the flow that subscribes to RATE),
 * the rate in force and its class, the class's counters. See agent.h.
 */
#include "tools/shape/agent.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "common/vfmt.h"
#include "tools/shape/rate.h"
#include "tools/shape/util.h"

/* The measured payload size replaces the one in use when it differs by
 * more than this fraction (a change of the class's rate by about as much). */
#define PAYLOAD_CHANGE	0.01
/* ... and is measured over at least this long. */
#define PAYLOAD_WINDOW_NS	(1000ull * RXB_NSEC_PER_MSEC)

/* --------------------------------------------------------- connection -- */

static void on_rate(void *user, const struct rxbneck_rate *r)
{
	struct shape_rx *rx = user;
	uint64_t now = rxb_mono_ns();

	rx->rate = *r;
	rx->rate_ns = now;
	rx->have_rate = true;
	rx->rates++;
	shape_policy_advice(&rx->policy, r->rate_bps, now);
	rxb_debug("%s: RATE %llu bit/s, loss %.3g, epoch %llu, confidence %u, flags 0x%x",
		  rx->conf->name, (unsigned long long)r->rate_bps, r->loss,
		  (unsigned long long)r->epoch, r->confidence, r->flags);
}

static void on_error(void *user, int rc, const char *msg)
{
	struct shape_rx *rx = user;

	snprintf(rx->last_error, sizeof(rx->last_error), "%s: %s", rxbneck_strerror(rc), msg);
}

static int new_client(struct shape_agent *a, struct shape_rx *rx)
{
	const struct shape_receiver_conf *c = rx->conf;
	struct rxbneck_client_config cfg;

	rxbneck_client_config_init(&cfg);
	cfg.host = c->host;
	cfg.port = c->port;
	cfg.timeout_ms = a->conf->connect_timeout_ms;
	cfg.hello.flow_port = c->flow_port;
	cfg.hello.flow_proto = c->proto;
	/* RATE only: PAUSE cannot be applied from here (docs/shape.md §5), and
	 * a PAUSE subscriber is told the higher rate for between the pauses. */
	cfg.hello.subscribe = RXBNECK_SUB_RATE;
	cfg.hello.payload_bytes = rx->hello_payload_bytes;
	cfg.hello.rtt_us = c->rtt_us;
	cfg.hello.file_bytes = c->file_bytes;
	cfg.hello.max_rate_bps = c->max_rate_bps;
	snprintf(cfg.hello.name, sizeof(cfg.hello.name), "rxbneck-shape %s", RXB_VERSION);
	cfg.cb.on_rate = on_rate;
	cfg.cb.on_error = on_error;
	cfg.user = rx;
	rx->client = rxbneck_client_new(&cfg);
	return rx->client ? 0 : -ENOMEM;
}

static void schedule_retry(struct shape_agent *a, struct shape_rx *rx, uint64_t now)
{
	rx->next_attempt_ns = now + rx->backoff_ms * RXB_NSEC_PER_MSEC;
	rx->backoff_ms *= 2;
	if (rx->backoff_ms > a->conf->reconnect_max_ms)
		rx->backoff_ms = a->conf->reconnect_max_ms;
}

void shape_peer_connect(struct shape_agent *a, struct shape_rx *rx, uint64_t now)
{
	const struct rxbneck_hello_ack *ack;
	char msg[sizeof(rx->last_error)];
	uint64_t rates = rx->rates;
	int rc;

	if (!rx->client && new_client(a, rx)) {
		snprintf(rx->last_error, sizeof(rx->last_error), "out of memory");
		schedule_retry(a, rx, now);
		return;
	}
	rc = rxbneck_client_connect(rx->client);
	now = rxb_mono_ns();
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", rxbneck_strerror(rc),
			 rxbneck_client_errmsg(rx->client));
		/* The first failure and every new reason are worth a warning; the
		 * same one again, while retrying, is not. */
		if (rx->failures == 0 || strcmp(msg, rx->last_error) != 0)
			rxb_warn("%s: cannot reach rxbneckd at %s port %u: %s (retrying)",
				 rx->conf->name, rx->conf->host, rx->conf->port, msg);
		memcpy(rx->last_error, msg, sizeof(msg));
		rx->failures++;
		schedule_retry(a, rx, now);
		return;
	}
	ack = rxbneck_client_daemon(rx->client);
	rxb_notice("%s: connected to rxbneckd at %s port %u (%s, epoch %u ms)%s",
		   rx->conf->name, rx->conf->host, rx->conf->port, ack->name, ack->epoch_ms,
		   rx->connects && ack->instance_id != rx->instance_id ? ", a new instance" : "");
	rx->instance_id = ack->instance_id;
	rx->connected = true;
	rx->connects++;
	rx->failures = 0;
	rx->last_error[0] = '\0';
	rx->backoff_ms = SHAPE_BACKOFF_MIN_MS;
	shape_policy_connected(&rx->policy, now);
	/* A RATE that came with HELLO_ACK, during connect(), is this
	 * connection's advice even if the old one ran out of hold. */
	if (rx->rates != rates)
		shape_policy_advice(&rx->policy, rx->rate.rate_bps, rx->rate_ns);
	shape_peer_apply(a, rx, now);
}

void shape_peer_process(struct shape_agent *a, struct shape_rx *rx, uint64_t now)
{
	int rc;

	if (!rx->connected)
		return;
	rc = rxbneck_client_process(rx->client);
	now = rxb_mono_ns();
	if (rc >= 0) {
		shape_peer_apply(a, rx, now);
		return;
	}
	if (!rx->last_error[0])
		snprintf(rx->last_error, sizeof(rx->last_error), "%s: %s", rxbneck_strerror(rc),
			 rxbneck_client_errmsg(rx->client));
	rx->connected = false;
	shape_policy_lost(&rx->policy, now);
	rx->backoff_ms = SHAPE_BACKOFF_MIN_MS;
	schedule_retry(a, rx, now);
	rxb_warn("%s: lost rxbneckd at %s port %u: %s", rx->conf->name, rx->conf->host,
		 rx->conf->port, rx->last_error);
	shape_peer_apply(a, rx, now);
}

void shape_peer_close(struct shape_rx *rx)
{
	rxbneck_client_close(rx->client);
	rx->client = NULL;
	rx->connected = false;
}

/* ---------------------------------------------------------- the class -- */

static void say_mode(struct shape_agent *a, struct shape_rx *rx, struct shape_target t,
		     uint64_t now)
{
	char r[VFMT_LEN], f[VFMT_LEN];
	double hold_s = (double)a->conf->hold_ms / 1e3;
	const char *why = rx->connected ? "no advice yet"
			  : rx->connects == 0 && rx->failures == 0 ? "starting, no advice yet"
			  : "daemon unreachable";

	vfmt_rate(r, (double)t.rate_bps);
	vfmt_rate(f, (double)a->conf->fallback_bps);
	switch (t.mode) {
	case SHAPE_MODE_ADVICE:
		rxb_notice("%s: shaping to the daemon's advice, %s", rx->conf->name, r);
		break;
	case SHAPE_MODE_HOLD:
		rxb_notice("%s: daemon unreachable: keeping its last advice, %s, for %.3g s more",
			   rx->conf->name, r, (double)(t.until_ns - now) / 1e9);
		break;
	case SHAPE_MODE_FALLBACK:
		rxb_notice("%s: %s: the fallback rate, %s", rx->conf->name, why, f);
		break;
	case SHAPE_MODE_UNSHAPED:
		rxb_notice("%s: %s: not shaping (fallback = unshaped%s)", rx->conf->name, why,
			   hold_s > 0 && rx->connects ? ", after the hold" : "");
		break;
	}
}

void shape_peer_apply(struct shape_agent *a, struct shape_rx *rx, uint64_t now)
{
	struct shape_target t = shape_policy_target(&rx->policy, now);
	struct shape_tc_class cl = {
		.major = a->conf->handle, .minor = rx->minor, .proto = rx->conf->proto,
		.flow_port = rx->conf->flow_port, .addrs = rx->addrs, .naddr = rx->naddr,
		.queue_bytes = a->conf->queue_bytes,
	};
	uint64_t bps = t.mode == SHAPE_MODE_UNSHAPED ? SHAPE_RATE_UNLIMITED_BPS : t.rate_bps;
	uint64_t wire = shape_rate_wire_Bps(bps, rx->payload_bytes, rx->hdr_bytes);
	uint32_t burst = shape_rate_burst_bytes(wire, a->conf->burst_bytes);
	bool mode_changed = !rx->installed || t.mode != rx->mode;
	int e;

	if (a->fatal || !rx->dev->installed)
		return;
	if (rx->installed && wire == rx->wire_Bps && burst == rx->burst_bytes &&
	    t.mode == rx->mode)
		return;
	if (!rx->installed)
		e = shape_tc_class_add(a->tc, &rx->dev->tc, &cl, wire, burst, a->fatal_msg,
				       sizeof(a->fatal_msg));
	else
		e = shape_tc_class_rate(a->tc, &rx->dev->tc, cl.major, cl.minor, wire, burst,
					a->fatal_msg, sizeof(a->fatal_msg));
	if (e) {
		a->fatal = e;
		return;
	}
	rx->installed = true;
	rx->wire_Bps = wire;
	rx->burst_bytes = burst;
	rx->force_bps = t.mode == SHAPE_MODE_UNSHAPED ? 0 : t.rate_bps;
	rx->mode = t.mode;
	if (mode_changed)
		say_mode(a, rx, t, now);
	rxb_debug("%s: class %x:%x at %llu B/s on the wire (%.1f payload + %u header bytes "
		  "per packet%s), burst %u B", rx->conf->name, cl.major, cl.minor,
		  (unsigned long long)wire, rx->payload_bytes, rx->hdr_bytes,
		  rx->payload_measured ? ", measured" : "", burst);
}

/* ------------------------------------------------------- the counters -- */

/* A new payload size per packet from the counters, when they say so. */
static void measure_payload(struct shape_agent *a, struct shape_rx *rx, uint64_t now,
			    uint64_t *mark_ns)
{
	double p;

	if (now - *mark_ns < PAYLOAD_WINDOW_NS)
		return;
	p = shape_rate_measured_payload(rx->st.bytes - rx->st_mark.bytes,
					rx->st.packets - rx->st_mark.packets, rx->hdr_bytes);
	if (p <= 0)
		return;
	rx->st_mark = rx->st;
	*mark_ns = now;
	if (fabs(p - rx->payload_bytes) <= PAYLOAD_CHANGE * rx->payload_bytes)
		return;
	rxb_info("%s: %.1f payload bytes per packet measured (was %.1f): class rate adjusted",
		 rx->conf->name, p, rx->payload_bytes);
	rx->payload_bytes = p;
	rx->payload_measured = true;
	shape_peer_apply(a, rx, now);
}

static void dev_stats(struct shape_agent *a, struct shape_dev *d, uint64_t now)
{
	uint16_t minors[SHAPE_MAX_RECEIVERS];
	struct shape_tc_stats st[SHAPE_MAX_RECEIVERS];
	struct shape_rx *rx[SHAPE_MAX_RECEIVERS];
	unsigned n = 0;
	int e;

	for (unsigned i = 0; i < d->nrx; i++)
		if (d->rx[i]->installed) {
			rx[n] = d->rx[i];
			minors[n++] = d->rx[i]->minor;
		}
	if (!n)
		return;
	e = shape_tc_class_stats(a->tc, d->tc.ifindex, a->conf->handle, minors, n, st,
				 a->fatal_msg, sizeof(a->fatal_msg));
	if (e == -EOPNOTSUPP)
		return;		/* dry run */
	if (e) {
		/* Our classes vanished: someone removed the qdisc. */
		a->fatal = e;
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		struct shape_rx *r = rx[i];

		if (!r->have_stats) {
			r->st_mark = st[i];
			r->payload_mark_ns = now;
			r->have_stats = true;
		}
		r->st = st[i];
		if (st[i].backlog_bytes > r->peak_backlog_bytes)
			r->peak_backlog_bytes = st[i].backlog_bytes;
		if (st[i].qlen > r->peak_qlen)
			r->peak_qlen = st[i].qlen;
		r->polls++;
		r->busy_polls += st[i].qlen > 0;
	}
}

void shape_peer_stats(struct shape_agent *a, uint64_t now)
{
	for (unsigned i = 0; i < a->ndev && !a->fatal; i++)
		dev_stats(a, &a->dev[i], now);
	for (unsigned i = 0; i < a->nrx && !a->fatal; i++) {
		struct shape_rx *rx = &a->rx[i];

		if (rx->have_stats)
			measure_payload(a, rx, now, &rx->payload_mark_ns);
	}
}
