// SPDX-License-Identifier: GPL-2.0-or-later
/* The status document as text. See view_status.h. */
#include "ctl/view/view_status.h"

#include <math.h>
#include <string.h>

#include "common/util.h"
#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"
#include "ctl/view/view_buffers.h"
#include "ctl/view/view_flow.h"
#include "ctl/view/view_measure.h"

#define TEXT_LEN	256

/* The strings of the array at @path, one per continuation line after @first. */
static void strings(FILE *f, const struct json_object *o, const char *path, const char *first)
{
	char t[TEXT_LEN];

	for (size_t i = 0; i < jpath_len(o, path); i++) {
		view_cont(f, 0);
		fprintf(f, "%s%s\n", first,
			vfmt_text(t, sizeof(t), jpath_str(jpath_at(o, path, i), NULL)));
	}
}

static void head(FILE *f, const struct json_object *d)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], v[TEXT_LEN], cfg[TEXT_LEN], lvl[32];

	fprintf(f, "rxbneckd %s (control protocol %s), pid %s, up %s\n",
		vfmt_text(v, 64, jpath_str(d, "version")),
		vfmt_count(a, jpath_num(d, "ctl_protocol")),
		vfmt_count(b, jpath_num(d, "daemon.pid")),
		vfmt_dur(c, jpath_num(d, "daemon.uptime_s")));
	view_key(f, 0, "Configuration");
	fprintf(f, "%s, log level %s\n", vfmt_text(cfg, sizeof(cfg), jpath_str(d, "daemon.config_file")),
		vfmt_text(lvl, sizeof(lvl), jpath_str(d, "daemon.log_level")));
	view_key(f, 0, "Health");
	fprintf(f, "%s\n", vfmt_text(v, 32, jpath_str(d, "daemon.health")));
	strings(f, d, "daemon.degraded_reasons", "- ");
	strings(f, d, "daemon.notes", "note: ");
}

static void epoch(FILE *f, const struct json_object *d)
{
	const struct json_object *e = jpath_obj(d, "epoch");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], t[TEXT_LEN];
	double late = jpath_num(d, "daemon.epochs_late");

	view_key(f, 0, "Epoch");
	if (!e) {
		fprintf(f, "none yet (one every %s ms)\n", vfmt_count(a, jpath_num(d, "daemon.epoch_ms")));
		return;
	}
	fprintf(f, "%s (one every %s ms), ended %s ago; measuring took %s, solving %s; probes %s",
		vfmt_count(a, jpath_num(e, "seq")), vfmt_count(b, jpath_num(d, "daemon.epoch_ms")),
		vfmt_dur(c, jpath_num(e, "age_s")), vfmt_dur(g, jpath_num(d, "daemon.collect_ms") / 1e3),
		vfmt_dur(h, jpath_num(d, "daemon.model_ms") / 1e3),
		vfmt_text(t, 32, jpath_str(e, "attach_mode")));
	if (late > 0)
		fprintf(f, "; %s timer ticks missed", vfmt_count(a, late));
	fputc('\n', f);
	if (jpath_str(e, "degraded_reason") && jpath_str(e, "degraded_reason")[0]) {
		view_cont(f, 0);
		fprintf(f, "%s\n", vfmt_text(t, sizeof(t), jpath_str(e, "degraded_reason")));
	}
}

static void net_probes(FILE *f, const struct json_object *d)
{
	const struct json_object *np = jpath_obj(d, "daemon.net_probes");
	double every = jpath_num(np, "every"), left = jpath_num(np, "learning_left_s");
	char a[VFMT_LEN], t[TEXT_LEN];

	if (!np)
		return;
	view_key(f, 0, "Packet probes");
	if (every > 1)
		fprintf(f, "attached one epoch in %s", vfmt_count(a, every));
	else
		fputs(isfinite(every) ? "attached every epoch" : VFMT_NONE, f);
	if (jpath_bool(np, "learning") == 1 && isfinite(left))
		fprintf(f, ", learning for %s more", vfmt_dur(a, left));
	if (jpath_str(np, "last_change"))
		fprintf(f, "; last change %s ago: %s", vfmt_dur(a, jpath_num(np, "last_change_age_s")),
			vfmt_text(t, sizeof(t), jpath_str(np, "last_change")));
	fputc('\n', f);
}

static void reload(FILE *f, const struct json_object *d)
{
	const struct json_object *r = jpath_obj(d, "daemon.reload");
	char a[VFMT_LEN], b[VFMT_LEN], t[TEXT_LEN];
	double n = jpath_num(r, "count");

	if (!(n > 0))
		return;
	view_key(f, 0, "Reloads");
	fprintf(f, "%s (%s failed); the last %s: %s\n", vfmt_count(a, n),
		vfmt_count(b, jpath_num(r, "failures")),
		jpath_bool(r, "ok") == 1 ? "applied" : "FAILED, the previous configuration runs",
		vfmt_text(t, sizeof(t), jpath_str(r, "message")));
	strings(f, r, "restart_needed", "restart needed for ");
}

static void cpus(FILE *f, const struct json_object *d)
{
	size_t n = jpath_len(d, "cpus");

	view_key(f, 0, "CPUs");
	if (!n) {
		fputs("not measured yet\n", f);
		return;
	}
	fprintf(f, "%4s %14s %14s %6s %9s %8s\n", "cpu", "CPU-bound (#C)", "I/O-bound (#I)",
		"busy", "runnable", "softirq");
	for (size_t i = 0; i < n; i++) {
		const struct json_object *c = jpath_at(d, "cpus", i);
		char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], s[VFMT_LEN];

		view_cont(f, 0);
		fprintf(f, "%4s %14s %14s %6s %9s %8s\n", vfmt_count(a, jpath_num(c, "cpu")),
			vfmt_fixed(b, jpath_num(c, "cpu_bound"), 2),
			vfmt_fixed(g, jpath_num(c, "io_bound"), 2),
			vfmt_pct(h, jpath_num(c, "busy_frac"), 0),
			vfmt_fixed(k, jpath_num(c, "runnable_avg"), 2),
			vfmt_pct(s, jpath_num(c, "softirq_frac"), 1));
	}
}

/* Refusals by reason (what older daemons do not send is left out). */
static void refusals(FILE *f, const struct json_object *s)
{
	static const struct { const char *key, *what; } r[] = {
		{ "not_allowed", "not in the allow-list" },
		{ "connection_limit", "connection limit" },
		{ "connection_limit_per_address", "connection limit per address" },
		{ "closed_by_allow_reload", "closed by an allow-list reload" },
		{ "flow_table_full", "no room for another flow" },
		{ "flows_per_address", "unwatched flows per address" },
		{ "flow_owner", "port not a flow_owner_uids user's" },
		{ "bad_report", "REPORT that did not add up" },
	};
	const struct json_object *ref = jpath_obj(s, "refused");
	char a[VFMT_LEN];
	bool any = false;

	for (size_t i = 0; ref && i < RXB_ARRAY_SIZE(r); i++) {
		double v = jpath_num(ref, r[i].key);

		if (!(v > 0))
			continue;
		if (!any) {
			view_cont(f, 0);
			fputs("refused: ", f);
		}
		fprintf(f, "%s%s %s", any ? ", " : "", vfmt_count(a, v), r[i].what);
		any = true;
	}
	if (any)
		fputc('\n', f);
}

static double refused_total(const struct json_object *s)
{
	const struct json_object *ref = jpath_obj(s, "refused");

	if (!ref)
		return jpath_num(s, "rejected_allow") + jpath_num(s, "rejected_full");
	return jpath_num(ref, "not_allowed") + jpath_num(ref, "connection_limit") +
	       jpath_num(ref, "connection_limit_per_address") +
	       jpath_num(ref, "flow_table_full") + jpath_num(ref, "flows_per_address") +
	       jpath_num(ref, "flow_owner");
}

static void senders(FILE *f, const struct json_object *d)
{
	const struct json_object *s = jpath_obj(d, "senders");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN],
	     r[VFMT_LEN];

	view_key(f, 0, "Senders");
	fprintf(f, "%s connected on port %s (%s accepted, %s refused); pushed %s RATE, "
		"%s PAUSE; %s reports\n", vfmt_count(a, jpath_num(s, "connected")),
		vfmt_count(b, jpath_num(s, "port")), vfmt_count(c, jpath_num(s, "accepted")),
		vfmt_count(g, refused_total(s)),
		vfmt_count(h, jpath_num(s, "rate_pushes")), vfmt_count(k, jpath_num(s, "pause_pushes")),
		vfmt_count(r, jpath_num(s, "reports")));
	refusals(f, s);
}

/* A learned flow that has no sender and is not configured any more. */
static void learned_one(FILE *f, const struct json_object *l, bool first)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN];
	const struct json_object *last = jpath_obj(l, "last");
	double left = jpath_num(l, "left_age_s");

	if (first)
		view_key(f, 0, "Learned flows");
	else
		view_cont(f, 0);
	fprintf(f, "port %s: ", vfmt_count(a, jpath_num(l, "port")));
	if (isfinite(left))
		fprintf(f, "left %s ago", vfmt_dur(a, left));
	else
		fprintf(f, "in the state directory, saved %s ago",
			vfmt_dur(a, jpath_num(l, "saved_age_s")));
	fprintf(f, "; receiver cost %s ns per packet, N %s per wake-up",
		vfmt_count(b, jpath_num(l, "cpu_ns_per_pkt")),
		vfmt_fixed(c, jpath_num(l, "pkts_per_wakeup"), 1));
	for (size_t i = 0; i < jpath_len(l, "cpus"); i++)
		fprintf(f, "%s%s", i ? "," : ", on cpu",
			vfmt_count(g, jpath_num(jpath_at(l, "cpus", i), "cpu")));
	if (last)
		fprintf(f, "; last RATE %s (epoch %s)", vfmt_rate(h, jpath_num(last, "rate_bps")),
			vfmt_count(a, jpath_num(last, "epoch")));
	fputc('\n', f);
	view_flow_predictions(f, 2, l);
}

static void learned(FILE *f, const struct json_object *d)
{
	for (size_t i = 0; i < jpath_len(d, "learned_flows"); i++)
		learned_one(f, jpath_at(d, "learned_flows", i), i == 0);
}

/* -v: the daemon's own machinery. */
static void machinery(FILE *f, const struct json_object *d)
{
	const struct json_object *c = jpath_obj(d, "daemon.ctl"), *s = jpath_obj(d, "daemon.state_dir");
	char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], t[TEXT_LEN];

	view_key(f, 0, "State directory");
	fprintf(f, "%s: %s, %s saves, history of %s ports\n",
		vfmt_text(t, sizeof(t), jpath_str(s, "path")),
		jpath_bool(s, "ok") == 1 ? "usable" : "UNUSABLE", vfmt_count(a, jpath_num(s, "saves")),
		vfmt_count(b, jpath_num(s, "history_ports")));
	if (jpath_str(s, "error") && jpath_str(s, "error")[0]) {
		view_cont(f, 0);
		fprintf(f, "%s\n", vfmt_text(t, sizeof(t), jpath_str(s, "error")));
	}
	view_key(f, 0, "Control socket");
	fprintf(f, "%s: %s clients now, %s requests, %s errors, %s busy, %s evicted\n",
		vfmt_text(t, sizeof(t), jpath_str(c, "socket")), vfmt_count(a, jpath_num(c, "clients")),
		vfmt_count(b, jpath_num(c, "requests")), vfmt_count(g, jpath_num(c, "errors")),
		vfmt_count(h, jpath_num(c, "busy")), vfmt_count(k, jpath_num(c, "evicted")));
	view_key(f, 0, "Disk rates");
	fprintf(f, "completions (mu_D) %s/s, I/O-bound bursts (mu_P-I/O) %s/s\n",
		vfmt_si(a, jpath_num(d, "disk.mu_disk_per_s")),
		vfmt_si(b, jpath_num(d, "disk.mu_pio_per_s")));
}

void view_status(FILE *f, const struct json_object *doc, unsigned flags)
{
	size_t n = jpath_len(doc, "flows");

	if (flags & VIEW_VERBOSE) {
		view_legend(f);
		fputc('\n', f);
	}
	head(f, doc);
	epoch(f, doc);
	net_probes(f, doc);
	reload(f, doc);
	cpus(f, doc);
	senders(f, doc);
	if (flags & VIEW_VERBOSE)
		machinery(f, doc);
	learned(f, doc);
	if (!n) {
		view_key(f, 0, "Flows");
		fputs("none: no watched port and no sender\n", f);
	}
	for (size_t i = 0; i < n; i++) {
		fputc('\n', f);
		view_flow(f, jpath_at(doc, "flows", i), flags);
	}
	/* receive-buffer adaptation: only when it is on */
	if (jpath_str(doc, "buffers.mode") && strcmp(jpath_str(doc, "buffers.mode"), "off")) {
		fputc('\n', f);
		view_buffers(f, jpath_obj(doc, "buffers"), flags);
	}
	if ((flags & VIEW_VERBOSE) && jpath_obj(doc, "measurement")) {
		fputs("\nThe last epoch's measurement:\n", f);
		view_measure(f, jpath_obj(doc, "measurement"));
	}
}
