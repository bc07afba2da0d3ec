// SPDX-License-Identifier: GPL-2.0-or-later
/* The stream-count advisor's document. See status_streams.h. */
#include "daemon/serve/status_streams.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/daemon.h"
#include "daemon/model/streams_doc.h"

/* Which peers: all, one address, or one address and local port. */
struct filter {
	bool any;
	uint8_t addr[16];
	uint32_t port;		/* 0: any */
};

/* "192.0.2.7", "192.0.2.7:5201", "2001:db8::7", "[2001:db8::7]:5201". */
static bool parse_peer(const char *arg, struct filter *f)
{
	char buf[INET6_ADDRSTRLEN + 8], *port = NULL, *end;
	unsigned long p;

	if (rxb_strlcpy(buf, arg, sizeof(buf)) >= sizeof(buf))
		return false;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] && close[1] != ':'))
			return false;
		*close = '\0';
		port = close[1] ? close + 2 : NULL;
		memmove(buf, buf + 1, strlen(buf + 1) + 1);
	} else if (strchr(buf, ':') && strchr(buf, ':') == strrchr(buf, ':')) {
		port = strchr(buf, ':');
		*port++ = '\0';
	}
	if (port) {
		p = strtoul(port, &end, 10);
		if (!port[0] || *end || p < 1 || p > 65535)
			return false;
		f->port = (uint32_t)p;
	}
	return advisor_addr_parse(buf, f->addr) == 0;
}

static const char *const flag_names[] = { "explore", "capped", "rising", "measured" };

static void samples_json(struct json_writer *w, const struct advisor_peer *p, uint64_t now)
{
	json_arr_begin(w, "samples");
	for (int i = 0; i < p->nb; i++) {
		const struct advisor_bucket *b = &p->b[i];
		bool fitted = false;

		for (int k = 0; k < p->m; k++)
			fitted = fitted || p->pts[k].n == b->n;
		json_obj_begin(w, NULL);
		json_uint(w, "n", b->n);
		json_double(w, "throughput_bps", b->mean_bps);
		json_uint(w, "count", b->count);
		json_double(w, "weight_s", b->weight_s);
		json_double(w, "sd_bps", advisor_bucket_sd(b));
		json_double(w, "age_s", now >= b->last_unix ? (double)(now - b->last_unix) : 0);
		json_arr_begin(w, "origins");
		if (b->origins & ADVISOR_PASSIVE)
			json_str(w, NULL, "passive");
		if (b->origins & ADVISOR_SENDER)
			json_str(w, NULL, "sender");
		json_arr_end(w);
		json_bool(w, "fitted", fitted);
		json_obj_end(w);
	}
	json_arr_end(w);
}

static void advice_json(struct json_writer *w, const struct advisor_peer *p)
{
	struct rxbneck_streams f;

	daemon_streams_frame(p, &f);
	json_obj_begin(w, "frame");
	json_bool(w, "valid", p->adv.valid);
	json_uint(w, "streams", f.streams);
	json_uint(w, "predicted_bps", f.predicted_bps);
	json_uint(w, "epoch", f.epoch);
	json_uint(w, "confidence", f.confidence);
	json_str(w, "model", streams_model_name(f.model));
	json_uint(w, "points", f.points);
	json_flag_names(w, "flags", f.flags, flag_names, RXB_ARRAY_SIZE(flag_names));
	json_obj_end(w);
}

static void peer_json(struct json_writer *w, const struct advisor_peer *p, uint64_t now,
		      double rise)
{
	char addr[INET6_ADDRSTRLEN];

	advisor_addr_text(p->addr, addr, sizeof(addr));
	json_obj_begin(w, NULL);
	json_str(w, "address", addr);
	json_uint(w, "port", p->port);
	json_uint(w, "samples_taken", p->samples);
	json_double(w, "heard_age_s", now >= p->last_unix ? (double)(now - p->last_unix) : 0);
	samples_json(w, p, now);
	json_obj_begin(w, "explore");
	json_double(w, "rise", rise);
	json_uint_opt(w, "next", p->explore_next != 0, p->explore_next);
	json_obj_end(w);
	json_str(w, "cap_why", p->cap_why);
	json_uint(w, "fit_epoch", p->fit_epoch);
	advice_json(w, p);
	if (p->fitted)
		streams_doc_result(w, p->pts, p->m, &p->opts, &p->res);
	json_obj_end(w);
}

void status_streams_summary(struct json_writer *w, const char *key, const struct daemon *d)
{
	const struct daemon_streams *st = &d->streams;
	const struct advisor_stats *a = &st->adv.st;

	json_obj_begin(w, key);
	json_bool(w, "enabled", st->on);
	json_uint(w, "peers", st->adv.npeers);
	json_uint(w, "max_peers", st->adv.p.max_peers);
	json_uint(w, "samples_passive", a->samples_passive);
	json_uint(w, "samples_sender", a->samples_sender);
	json_uint(w, "samples_refused", a->refused + st->samples_off);
	json_uint(w, "fits", a->fits);
	json_uint(w, "peers_evicted", a->peers_evicted);
	json_uint(w, "buckets_evicted", a->buckets_evicted);
	json_uint(w, "buckets_aged", a->buckets_aged);
	json_obj_begin(w, "transfers");
	json_bool(w, "sampling", st->sd != NULL);
	json_uint(w, "dumps", st->dumps);
	json_uint(w, "dump_errors", st->dump_errors);
	json_str(w, "last_error", st->last_err ? strerror(-st->last_err) : "");
	json_double(w, "dump_us", st->dump_us);
	json_uint(w, "conns", st->xf.st.conns_seen);
	json_uint(w, "conns_skipped", st->conns_skipped + st->xf.st.conns_dropped);
	json_uint(w, "transfers", st->xf.st.groups);
	json_uint(w, "unsettled", st->xf.st.unsettled);
	json_obj_end(w);
	json_obj_begin(w, "history");
	json_uint(w, "saves", st->saves);
	json_uint(w, "save_errors", st->save_errors);
	json_str(w, "save_error", st->save_err ? strerror(-st->save_err) : "");
	json_uint(w, "loaded", st->loaded.lines);
	json_uint(w, "load_bad", st->loaded.bad);
	json_uint(w, "load_refused", st->loaded.refused);
	json_obj_end(w);
	json_obj_end(w);
}

static bool wanted(const struct filter *f, const struct advisor_peer *p)
{
	return f->any || (!memcmp(f->addr, p->addr, 16) && (!f->port || f->port == p->port));
}

void status_streams_cmd(struct daemon *d, const struct ctl_request *req, struct json_writer *w,
			struct ctl_reply *rep)
{
	struct filter f = { .any = true };
	uint64_t now = rxb_wall_s();
	int peers = 0;

	for (int i = 0; i < req->argc; i++) {
		if (!strcmp(req->argv[i], "json"))
			continue;
		if (!f.any || !parse_peer(req->argv[i], &f)) {
			rep->err = CTL_ERR_BAD_ARGUMENT;
			snprintf(rep->msg, sizeof(rep->msg), "'streams' takes one peer (ADDRESS, "
				 "ADDRESS:PORT or [IPv6]:PORT), not '%.60s'", req->argv[i]);
			return;
		}
		f.any = false;
	}
	json_obj_begin(w, NULL);
	json_str(w, "source", "daemon");
	json_bool(w, "enabled", d->streams.on);
	status_streams_summary(w, "advisor", d);
	json_arr_begin(w, "peers");
	for (uint32_t i = 0; i < d->streams.adv.p.max_peers && d->streams.adv.peers; i++) {
		const struct advisor_peer *p = &d->streams.adv.peers[i];

		if (p->used && wanted(&f, p)) {
			peer_json(w, p, now, d->streams.adv.p.rise);
			peers++;
		}
	}
	json_arr_end(w);
	json_obj_end(w);
}
