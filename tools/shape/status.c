// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape's status: per receiver the rate in force and why, the
 * daemon's latest advice, what the class sent, dropped and queued. One
 * line per receiver, or one JSON object per report (--json). See agent.h.
 */
#include "tools/shape/agent.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/log.h"
#include "common/rate_json.h"
#include "common/util.h"
#include "common/vfmt.h"
#include "tools/shape/util.h"

const char shape_status_pause_note[] =
	"PAUSE off: a send/pause schedule cannot be held to 1 ms by changing the class "
	"from user space (docs/shape.md, section 5)";

static const char *proto_name(uint8_t p)
{
	return p == 6 ? "tcp" : "udp";
}

static void text_line(struct shape_agent *a, const struct shape_rx *rx, uint64_t now,
		      const char *event)
{
	char force[VFMT_LEN], adv[160], sent[VFMT_LEN], peak[VFMT_LEN], as[INET6_ADDRSTRLEN];

	if (rx->mode == SHAPE_MODE_UNSHAPED)
		snprintf(force, sizeof(force), "unshaped");
	else
		vfmt_rate(force, (double)rx->force_bps);
	if (rx->have_rate) {
		char r[VFMT_LEN];

		snprintf(adv, sizeof(adv), "advice %s loss %.3g%% epoch %llu (%.1f s ago)",
			 vfmt_rate(r, (double)rx->rate.rate_bps),
			 100.0 * rx->rate.loss, (unsigned long long)rx->rate.epoch,
			 (double)(now - rx->rate_ns) / 1e9);
	} else {
		snprintf(adv, sizeof(adv), "no advice yet");
	}
	vfmt_bytes(sent, (double)rx->st.bytes);
	vfmt_bytes(peak, (double)rx->peak_backlog_bytes);
	fprintf(a->out, "%s: %s %s/%u -> %s via %s class %x:%x: in force %s [%s]; daemon %s, %s;"
		" sent %s %llu pkts, drops %llu, overlimits %llu, queue peak %s; PAUSE off\n", event,
		rx->conf->name, proto_name(rx->conf->proto), rx->conf->flow_port,
		shape_tc_addr_str(&rx->addrs[0], as, sizeof(as)), rx->dev->tc.name,
		a->conf->handle, rx->minor, force, shape_policy_mode_name(rx->mode),
		rx->connected ? "connected" : "unreachable", adv, sent,
		(unsigned long long)rx->st.packets, (unsigned long long)rx->st.drops,
		(unsigned long long)rx->st.overlimits, peak);
}

static void json_rx(struct json_writer *w, struct shape_agent *a, const struct shape_rx *rx,
		    uint64_t now)
{
	char s[64];

	json_obj_begin(w, NULL);
	json_str(w, "name", rx->conf->name);
	json_obj_begin(w, "daemon");
	json_str(w, "host", rx->conf->host);
	json_uint(w, "port", rx->conf->port);
	json_bool(w, "connected", rx->connected);
	json_uint(w, "connects", rx->connects);
	snprintf(s, sizeof(s), "%016llx", (unsigned long long)rx->instance_id);
	json_str(w, "instance_id", rx->connects ? s : NULL);
	json_str(w, "last_error", rx->last_error);
	json_obj_end(w);
	json_obj_begin(w, "flow");
	json_str(w, "proto", proto_name(rx->conf->proto));
	json_uint(w, "port", rx->conf->flow_port);
	json_arr_begin(w, "addresses");
	for (unsigned i = 0; i < rx->naddr; i++)
		json_str(w, NULL, shape_tc_addr_str(&rx->addrs[i], s, sizeof(s)));
	json_arr_end(w);
	json_obj_end(w);
	json_str(w, "dev", rx->dev->tc.name);
	snprintf(s, sizeof(s), "%x:%x", a->conf->handle, rx->minor);
	json_str(w, "class", s);
	if (json_obj_begin_opt(w, "advice", rx->have_rate)) {
		rate_json_advice(w, &rx->rate);
		json_uint(w, "flags", rx->rate.flags);
		json_double(w, "age_s", (double)(now - rx->rate_ns) / 1e9);
		json_uint(w, "count", rx->rates);
		json_obj_end(w);
	}
	json_obj_begin(w, "in_force");
	json_str(w, "mode", shape_policy_mode_name(rx->mode));
	json_uint_opt(w, "rate_bps", rx->mode != SHAPE_MODE_UNSHAPED, rx->force_bps);
	json_uint(w, "wire_bytes_per_s", rx->wire_Bps);
	json_uint(w, "burst_bytes", rx->burst_bytes);
	json_double(w, "payload_bytes_per_pkt", rx->payload_bytes);
	json_bool(w, "payload_measured", rx->payload_measured);
	json_uint(w, "header_bytes_per_pkt", rx->hdr_bytes);
	json_obj_end(w);
	if (json_obj_begin_opt(w, "class_stats", rx->have_stats)) {
		json_uint(w, "bytes", rx->st.bytes);
		json_uint(w, "packets", rx->st.packets);
		json_uint(w, "drops", rx->st.drops);
		json_uint(w, "overlimits", rx->st.overlimits);
		json_uint(w, "backlog_bytes", rx->st.backlog_bytes);
		json_uint(w, "qlen", rx->st.qlen);
		json_uint(w, "peak_backlog_bytes", rx->peak_backlog_bytes);
		json_uint(w, "peak_qlen", rx->peak_qlen);
		json_uint(w, "polls", rx->polls);
		json_uint(w, "busy_polls", rx->busy_polls);
		json_obj_end(w);
	}
	json_obj_end(w);
}

void shape_status_print(struct shape_agent *a, uint64_t now, const char *event)
{
	struct json_writer w;
	struct timespec rt;

	if (!a->json) {
		for (unsigned i = 0; i < a->nrx; i++)
			text_line(a, &a->rx[i], now, event);
		fflush(a->out);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_str(&w, "event", event);
	json_double(&w, "unix_time", (double)rt.tv_sec + rt.tv_nsec / 1e9);
	json_double(&w, "mono_s", (double)now / 1e9);
	json_double(&w, "uptime_s", (double)(now - a->start_ns) / 1e9);
	json_bool(&w, "dry_run", a->dry_run);
	json_str(&w, "pause", "off");
	json_str(&w, "pause_note", shape_status_pause_note);
	json_bool_opt(&w, "fq_available", a->fq >= 0, a->fq == 1);
	json_arr_begin(&w, "receivers");
	for (unsigned i = 0; i < a->nrx; i++)
		json_rx(&w, a, &a->rx[i], now);
	json_arr_end(&w);
	json_obj_end(&w);
	if (json_ok(&w)) {
		fputs(json_text(&w), a->out);
		fputc('\n', a->out);
		fflush(a->out);
	} else {
		rxb_warn("status: the JSON report could not be built (out of memory?)");
	}
	json_finish(&w);
}
