// SPDX-License-Identifier: GPL-2.0-or-later
/* --follow: rate and pauses from rxbneckd via librxbneck. See follow.h. */
#include "tools/rbudp/follow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "rxbneck/client.h"

static void on_rate(void *user, const struct rxbneck_rate *r)
{
	struct rbudp_follow *f = user;
	struct rbudp_follow_rate *v = rxb_append((void **)&f->rates, &f->n_rates,
						 &f->cap_rates, sizeof(*v));

	if (!v)
		return;	/* keep following; only the record is short */
	v->t_ns = rxb_mono_ns();
	v->rate_bps = r->rate_bps;
	v->loss = r->loss;
	v->xfer_time_us = r->xfer_time_us;
	v->epoch = r->epoch;
	v->flags = r->flags;
	v->confidence = r->confidence;
	rxb_debug("rxbneckd RATE %.4g bit/s (loss %.3g, epoch %llu)", (double)r->rate_bps,
		  r->loss, (unsigned long long)r->epoch);
}

static void on_pause(void *user, const struct rxbneck_pause_window *w)
{
	struct rbudp_follow *f = user;
	struct rbudp_follow_sched *v = rxb_append((void **)&f->scheds, &f->n_scheds,
						  &f->cap_scheds, sizeof(*v));

	if (v) {
		*v = (struct rbudp_follow_sched){
			.received_ns = w->received_ns,
			.first_stop_ns = w->first_stop_ns,
			.duration_us = w->pause.duration_us,
			.period_us = w->pause.period_us,
			.repeat_count = w->pause.repeat_count,
			.cancel = w->pause.flags & RXBNECK_PAUSE_CANCEL,
		};
	}
	if (w->pause.flags & RXBNECK_PAUSE_CANCEL)
		f->cancel_frames++;
	else
		f->pause_frames++;
	rxb_debug("rxbneckd PAUSE in %llu us for %llu us, period %llu us x %u%s",
		  (unsigned long long)w->pause.start_in_us,
		  (unsigned long long)w->pause.duration_us,
		  (unsigned long long)w->pause.period_us, w->pause.repeat_count,
		  (w->pause.flags & RXBNECK_PAUSE_CANCEL) ? " (cancel)" : "");
}

int rbudp_follow_open(struct rbudp_follow *f, const struct rbudp_follow_opts *o,
		      char *err, size_t err_size)
{
	struct rxbneck_client_config cfg;
	const struct rxbneck_hello_ack *ack;
	uint64_t deadline;
	int rc;

	memset(f, 0, sizeof(*f));
	f->o = *o;
	rxbneck_client_config_init(&cfg);
	cfg.host = o->host;
	cfg.port = o->port;
	cfg.hello.flow_port = o->flow_port;
	cfg.hello.flow_proto = 17;
	cfg.hello.payload_bytes = o->dgram_bytes;
	cfg.hello.file_bytes = o->file_bytes;
	cfg.hello.rtt_us = o->rtt_us;
	cfg.hello.max_rate_bps = o->max_rate_bps;
	cfg.hello.subscribe = RXBNECK_SUB_RATE | (o->obey_pause ? RXBNECK_SUB_PAUSE : 0);
	snprintf(cfg.hello.name, sizeof(cfg.hello.name), "rxbneck-send %s", RXB_VERSION);
	cfg.pause_lead_us = o->pause_lead_us;
	cfg.cb.on_rate = on_rate;
	cfg.cb.on_pause = on_pause;
	cfg.user = f;
	f->c = rxbneck_client_new(&cfg);
	if (!f->c) {
		snprintf(err, err_size, "--follow: out of memory");
		return -1;
	}
	rc = rxbneck_client_connect(f->c);
	if (rc < 0) {
		snprintf(err, err_size, "--follow %s:%u: %s: %s", o->host, o->port,
			 rxbneck_strerror(rc), rxbneck_client_errmsg(f->c));
		return -1;
	}
	f->connected = true;
	ack = rxbneck_client_daemon(f->c);
	if (ack) {
		rxb_strlcpy(f->daemon_name, ack->name, sizeof(f->daemon_name));
		f->report_accepted = ack->accepts & RXBNECK_ACCEPT_REPORT;
		if (o->obey_pause && !(ack->granted & RXBNECK_SUB_PAUSE))
			rxb_warn("--follow: rxbneckd does not grant PAUSE: following the rate only");
	}
	deadline = rxb_mono_ns() + (uint64_t)o->first_rate_timeout_ms * RXB_NSEC_PER_MSEC;
	while (f->n_rates == 0) {
		uint64_t now = rxb_mono_ns();

		if (now >= deadline) {
			snprintf(err, err_size, "--follow %s:%u: no RATE within %d ms (does "
				 "rxbneckd watch UDP port %u yet?)", o->host, o->port,
				 o->first_rate_timeout_ms, o->flow_port);
			return -1;
		}
		rc = rxbneck_client_wait(f->c, (int)((deadline - now) / RXB_NSEC_PER_MSEC) + 1);
		if (rc < 0) {
			snprintf(err, err_size, "--follow %s:%u while waiting for the first "
				 "RATE: %s: %s", o->host, o->port, rxbneck_strerror(rc),
				 rxbneck_client_errmsg(f->c));
			return -1;
		}
	}
	if (f->rates[f->n_rates - 1].rate_bps == 0) {
		snprintf(err, err_size, "--follow: rxbneckd advises a rate of 0 bit/s");
		return -1;
	}
	return 0;
}

void rbudp_follow_close(struct rbudp_follow *f)
{
	rxbneck_client_close(f->c);
	free(f->rates);
	free(f->windows);
	free(f->scheds);
	memset(f, 0, sizeof(*f));
}

uint64_t rbudp_follow_rate(const struct rbudp_follow *f)
{
	/* A RATE of 0 is not a rate to send at: keep the previous one. */
	for (uint32_t i = f->n_rates; i-- > 0;) {
		uint64_t r = f->rates[i].rate_bps;

		if (!r)
			continue;
		return f->o.max_rate_bps && r > f->o.max_rate_bps ? f->o.max_rate_bps : r;
	}
	return 0;
}

void rbudp_follow_poll(struct rbudp_follow *f, uint64_t now_ns, uint64_t *rate_bps,
		       uint64_t *paused_until_ns, uint64_t *next_stop_ns)
{
	uint64_t until = UINT64_MAX;

	*paused_until_ns = 0;
	*next_stop_ns = UINT64_MAX;
	if (f->connected) {
		int rc = rxbneck_client_process(f->c);

		if (rc < 0) {
			/* The advice stopped, the transfer need not: keep the
			 * last rate, stop pausing, say so. */
			f->connected = false;
			f->lost_ns = now_ns;
			snprintf(f->lost, sizeof(f->lost), "%s: %s", rxbneck_strerror(rc),
				 rxbneck_client_errmsg(f->c));
			rxb_warn("--follow: lost rxbneckd (%s); continuing at the last rate "
				 "without pauses", f->lost);
		}
	}
	*rate_bps = rbudp_follow_rate(f);
	if (!f->connected || !f->o.obey_pause)
		return;
	if (rxbneck_client_pause_state(f->c, now_ns, &until) == 1)
		*paused_until_ns = until;
	else
		*next_stop_ns = until;
}

void rbudp_follow_paused(struct rbudp_follow *f, uint64_t start_ns, uint64_t end_ns)
{
	struct rbudp_follow_window *v = rxb_append((void **)&f->windows, &f->n_windows,
						   &f->cap_windows, sizeof(*v));

	f->pause_ns += end_ns - start_ns;
	if (v)
		*v = (struct rbudp_follow_window){ start_ns, end_ns };
}

void rbudp_follow_report(struct rbudp_follow *f, uint32_t rounds, uint64_t elapsed_ns,
			 uint64_t first_rate_bps, uint64_t pkts_sent, uint64_t pkts_resent,
			 uint64_t pkts_lost_first, bool aborted)
{
	struct rxbneck_report r = {
		.port = f->o.flow_port,
		.flags = aborted ? RXBNECK_REPORT_ABORTED : 0,
		.rounds = rounds,
		.file_bytes = f->o.file_bytes,
		.elapsed_us = elapsed_ns / 1000,
		.rate_bps = first_rate_bps,
		.pkts_sent = pkts_sent,
		.pkts_resent = pkts_resent,
		.pkts_lost_first = pkts_lost_first,
	};
	int rc;

	if (!f->connected || !f->report_accepted)
		return;
	rc = rxbneck_client_report(f->c, &r);
	if (rc == 0)
		rc = rxbneck_client_process(f->c);	/* push it out before BYE */
	if (rc < 0)
		rxb_warn("--follow: REPORT to rxbneckd failed: %s", rxbneck_strerror(rc));
}
