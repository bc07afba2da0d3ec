// SPDX-License-Identifier: GPL-2.0-or-later
/* One flow of the status document as text. See view_flow.h. */
#include "ctl/view/view_flow.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"
#include "ctl/view/view_pause.h"

#define IND		2	/* a flow's lines */
#define ROW_IND		4	/* its model inputs */
#define TEXT_LEN	256

enum unit { U_FIXED0, U_FIXED1, U_FIXED2, U_FIXED3, U_SI };

/* One model input row: words (symbol), value and unit, source and reason. */
struct row {
	const char *key;	/* in inputs.stage_x */
	const char *label;
	enum unit unit;
	const char *suffix;	/* after the value: "ns", "/s", "" */
};

static const char *number(char *buf, double v, enum unit u)
{
	return u == U_SI ? vfmt_si(buf, v) : vfmt_fixed(buf, v, (int)u);
}

static bool missing(const struct json_object *in)
{
	const char *src = jpath_str(in, "source");

	return !src || !strcmp(src, "missing") || !isfinite(jpath_num(in, "value"));
}

static void input_row(FILE *f, const struct json_object *stage, const struct row *r)
{
	const struct json_object *in = jpath_obj(stage, r->key);
	const char *why = jpath_str(in, "why");
	char v[VFMT_LEN], val[VFMT_LEN + 16], src[32], w[TEXT_LEN];

	if (missing(in)) {
		snprintf(val, sizeof(val), VFMT_NONE);
		snprintf(src, sizeof(src), "missing");
	} else {
		snprintf(val, sizeof(val), "%s%s%s", number(v, jpath_num(in, "value"), r->unit),
			 r->suffix[0] == '/' || !r->suffix[0] ? "" : " ", r->suffix);
		vfmt_text(src, sizeof(src), jpath_str(in, "source"));
	}
	fprintf(f, "%*s%-36s %14s  %s", ROW_IND, "", r->label, val, src);
	if (why && why[0])
		fprintf(f, ": %s", vfmt_text(w, sizeof(w), why));
	else if (!in)
		fputs(": not reported by the daemon", f);
	fputc('\n', f);
}

static const struct row stage_b_rows[] = {
	{ "cpu_bound", "CPU-bound tasks on its CPU (#C)", U_FIXED2, "" },
	{ "io_bound", "I/O-bound tasks on its CPU (#I)", U_FIXED2, "" },
	{ "cpu_ns_per_pkt", "receiver cost per packet", U_FIXED0, "ns" },
	{ "pkts_per_wakeup", "packets per wake-up (N)", U_FIXED1, "" },
	{ "queue_pkts", "receive queue capacity (K)", U_FIXED0, "packets" },
	{ "mu_net_per_s", "receiver service rate (mu_P-Net)", U_SI, "/s" },
};

/* Shown when they say something: #I > 0, a value above 0, measured at all. */
static const struct row stage_b_extra[] = {
	{ "mu_pio_per_s", "I/O-bound task bursts (mu_P-I/O)", U_SI, "/s" },
	{ "mu_disk_per_s", "disk completions (mu_D)", U_SI, "/s" },
	{ "irq_ns_per_pkt", "interrupt time per packet", U_FIXED0, "ns" },
	{ "loss_episode_pkts", "packets lost per loss episode", U_FIXED0, "" },
	{ "rate_rel_sd", "service rate spread (relative sd)", U_FIXED3, "" },
};

static const struct row stage_a_rows[] = {
	{ "mu_per_s", "NAPI polls per second (mu_A)", U_SI, "/s" },
	{ "pkts_per_poll", "packets per poll (N)", U_FIXED1, "" },
	{ "queue_pkts", "device queue capacity (K)", U_FIXED0, "packets" },
};

static bool extra_wanted(const struct json_object *b, const char *key, unsigned flags)
{
	const struct json_object *in = jpath_obj(b, key);

	if (flags & VIEW_VERBOSE)
		return true;
	if (!strncmp(key, "mu_pio", 6) || !strncmp(key, "mu_disk", 7))
		return jpath_num(b, "io_bound.value") > 0;
	if (!strcmp(key, "irq_ns_per_pkt"))
		return jpath_num(in, "value") > 0;
	return !missing(in);
}

/* "cost basis" in words. */
static const char *basis_words(const char *b)
{
	static const char *const words[][2] = {
		{ "saturated", "while the socket overflowed" },
		{ "fit", "fitted over wake-ups and packets" },
		{ "last-fit", "the last fit that separated its terms" },
		{ "ratio", "on-CPU time per packet" },
		{ "kept-up", "while the receiver kept up" },
		{ "busy", "capped at the busy cost" },
	};

	for (size_t i = 0; b && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(b, words[i][0]))
			return words[i][1];
	return NULL;
}

static void placement(FILE *f, const struct json_object *b)
{
	char a[VFMT_LEN], c[VFMT_LEN];
	size_t n = jpath_len(b, "cpus");

	if (!n) {
		fputs("; the receiving thread's CPU not known yet", f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct json_object *p = jpath_at(b, "cpus", i);

		fprintf(f, "%s%s (%s)", i ? ", cpu" : "; the receiving thread on cpu",
			vfmt_count(a, jpath_num(p, "cpu")), vfmt_pct(c, jpath_num(p, "share"), 0));
	}
}

/* The packets' payload, to say stage B's capacity in bits per second. */
static double payload_bytes(const struct json_object *fl)
{
	double b = jpath_num(fl, "transfer.payload_bytes");

	if (!(b > 0))
		b = jpath_num(jpath_at(fl, "transfers", 0), "transfer.payload_bytes");
	return b > 0 ? b : NAN;
}

/* "262 k/s", or "-" when not known. */
static const char *per_s(char *buf, double v)
{
	size_t n = strlen(vfmt_si(buf, v));

	if (isfinite(v))
		snprintf(buf + n, VFMT_LEN - n, "/s");
	return buf;
}

/* Where stage B's capacity (c) came from, in the layout of input_row(). */
static void capacity_source(FILE *f, const struct json_object *c)
{
	const char *basis = jpath_str(c, "basis"), *note = jpath_str(c, "note");
	double refused = jpath_num(c, "drain_epochs_refused");
	char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], w[TEXT_LEN];

	if (basis && !strcmp(basis, "saturated_drain")) {
		fprintf(f, "from the saturated drain: %s epochs at load %s",
			vfmt_count(a, jpath_num(c, "drain_epochs")),
			vfmt_fixed(b, jpath_num(c, "drain_load"), 2));
		if (refused > 0)
			fprintf(f, " (%s refused)", vfmt_count(g, refused));
		fprintf(f, ", mu_P-Net x %s", vfmt_fixed(a, jpath_num(c, "scale"), 2));
		return;
	}
	fputs(basis && !strcmp(basis, "cost") ? "from the per-packet cost" : VFMT_NONE, f);
	if (note && note[0])
		fprintf(f, ": %s", vfmt_text(w, sizeof(w), note));
}

/* Stage B's capacity: packets / s the solve had, in b/s of payload. */
static void capacity_row(FILE *f, const struct json_object *b, double payload)
{
	const struct json_object *c = jpath_obj(b, "capacity");
	double pps = jpath_num(c, "pkts_per_s");
	char val[VFMT_LEN];

	if (isfinite(payload))
		vfmt_rate(val, pps * payload * 8.0);
	else
		per_s(val, pps);
	fprintf(f, "%*s%-36s %14s  ", ROW_IND, "", "receiver capacity (c)", val);
	if (!c)
		fputs("not reported by the daemon", f);
	else
		capacity_source(f, c);
	fputc('\n', f);
}

/* -v: both capacities beside each other, and the drain behind the one. */
static void capacity_detail(FILE *f, const struct json_object *in)
{
	const struct json_object *c = jpath_obj(in, "stage_b.capacity");
	char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], m[VFMT_LEN];

	if (!c)
		return;
	view_key(f, IND, "capacity");
	fprintf(f, "packets: %s from the cost, %s saturated drain at load %s "
		"(%s epochs, %s refused); mu_P-Net scale %s\n",
		per_s(a, jpath_num(c, "cost_pkts_per_s")),
		per_s(b, jpath_num(c, "drain_pkts_per_s")),
		vfmt_fixed(g, jpath_num(c, "drain_load"), 2),
		vfmt_count(h, jpath_num(c, "drain_epochs")),
		vfmt_count(k, jpath_num(c, "drain_epochs_refused")),
		vfmt_fixed(m, jpath_num(c, "scale"), 2));
}

static void stage_b(FILE *f, const struct json_object *in, double payload, unsigned flags)
{
	const struct json_object *b = jpath_obj(in, "stage_b");
	const char *basis = jpath_str(b, "cpu_cost.basis");
	char t[TEXT_LEN];

	fprintf(f, "%*sreceiver stage (B): %s", IND, "",
		jpath_bool(b, "modelled") == 1 ? "modelled" : "not modelled");
	placement(f, b);
	fputc('\n', f);
	for (size_t i = 0; i < sizeof(stage_b_rows) / sizeof(stage_b_rows[0]); i++) {
		input_row(f, b, &stage_b_rows[i]);
		if (!strcmp(stage_b_rows[i].key, "cpu_ns_per_pkt") && basis_words(basis))
			fprintf(f, "%*s%-36s %14s  estimate: %s (%s)\n", ROW_IND, "", "", "",
				vfmt_text(t, 32, basis), basis_words(basis));
	}
	capacity_row(f, b, payload);
	if (jpath_bool(b, "io_bound_ignored") == 1)
		fprintf(f, "%*s#I is not modelled: the disk rates are not measured\n", ROW_IND, "");
	for (size_t i = 0; i < sizeof(stage_b_extra) / sizeof(stage_b_extra[0]); i++)
		if (extra_wanted(b, stage_b_extra[i].key, flags))
			input_row(f, b, &stage_b_extra[i]);
}

static void stage_a(FILE *f, const struct json_object *in)
{
	const struct json_object *a = jpath_obj(in, "stage_a");
	char t[64];

	const char *dev = jpath_str(a, "device");

	fprintf(f, "%*sdevice stage (A): %s%s%s\n", IND, "", dev && dev[0] ? vfmt_text(t, sizeof(t), dev) : "",
		dev && dev[0] ? ", " : "",
		jpath_bool(a, "modelled") == 1 ? "modelled (softirq work, independent of the load)" :
		"not modelled");
	for (size_t i = 0; i < sizeof(stage_a_rows) / sizeof(stage_a_rows[0]); i++)
		input_row(f, a, &stage_a_rows[i]);
	if (jpath_num(a, "dgrams_per_skb.value") > 1.05) {
		static const struct row r = { "dgrams_per_skb", "datagrams per skb (UDP GSO)", U_FIXED1, "" };

		input_row(f, a, &r);
	}
}

/* The flow's state in words. */
static void header(FILE *f, const struct json_object *fl)
{
	const char *st = jpath_str(fl, "state");
	double senders = jpath_num(fl, "senders");
	char a[VFMT_LEN], b[VFMT_LEN], t[32];

	snprintf(t, sizeof(t), "Flow %s", vfmt_count(a, jpath_num(fl, "port")));
	view_key(f, 0, t);
	if (st && !strcmp(st, "model"))
		fprintf(f, "modelled in epoch %s", vfmt_count(a, jpath_num(fl, "model.epoch")));
	else if (st && !strcmp(st, "stale"))
		fprintf(f, "STALE: the solve failed, the last good model is from epoch %s",
			vfmt_count(a, jpath_num(fl, "model.epoch")));
	else if (st && !strcmp(st, "provisional"))
		fputs("provisional: nothing to model yet", f);
	else
		fputs("nothing published yet", f);
	if (senders > 0)
		fprintf(f, "; %s sender%s connected", vfmt_count(b, senders), senders == 1 ? "" : "s");
	else
		fputs("; no sender connected", f);
	fprintf(f, "%s\n", jpath_bool(fl, "configured") == 1 ? "; in [measure] watch_ports" : "");
}

static void flags_text(FILE *f, const struct json_object *rate)
{
	char t[32];
	size_t n = jpath_len(rate, "flags");

	if (!n)
		fputs(jpath_get(rate, "flags") ? "none" : VFMT_NONE, f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", vfmt_text(t, sizeof(t), jpath_str(jpath_at(rate, "flags", i), NULL)));
}

/* Who has the RATE: subscribers, those holding one, this epoch's push. */
static void holders(FILE *f, const struct json_object *fl)
{
	double subs = jpath_num(fl, "subscribers"), hold = jpath_num(fl, "rate_holders");
	double sent = jpath_num(fl, "rate_sent_to");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN];

	view_cont(f, IND);
	if (subs == 0) {
		fputs("no sender subscribed to RATE\n", f);
		return;
	}
	if (isfinite(subs))
		fprintf(f, "%s subscribed to RATE, %s hold%s one; ", vfmt_count(a, subs),
			vfmt_count(b, hold), hold == 1 ? "s" : "");
	if (sent < 0)
		fputs("this epoch's was refused by the control server\n", f);
	else
		fprintf(f, "this epoch's went to %s%s\n", vfmt_count(c, sent),
			sent < hold ? " (a RATE that changed little is not sent again)" : "");
}

/* A transfer's RATE, its rate between pauses, and which is in force and why. */
static void rate(FILE *f, const struct json_object *x)
{
	const struct json_object *r = jpath_obj(x, "rate"), *rb = jpath_obj(x, "rate_between_pauses");
	const struct json_object *in = jpath_obj(x, "rate_in_force");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], t[TEXT_LEN];

	view_key(f, IND, "RATE");
	if (!r) {
		fputs("none offered yet\n", f);
		return;
	}
	fprintf(f, "%s, confidence %s of 1000, flags ", vfmt_rate(a, jpath_num(r, "rate_bps")),
		vfmt_count(b, jpath_num(r, "confidence")));
	flags_text(f, r);
	fprintf(f, " (epoch %s)\n", vfmt_count(c, jpath_num(r, "epoch")));
	if (rb) {
		view_key(f, IND, "between pauses");
		fprintf(f, "%s to senders that pause (paused %s of the time): loss %s, transfer %s\n",
			vfmt_rate(a, jpath_num(rb, "rate_bps")),
			vfmt_pct(b, jpath_num(x, "pause_fraction"), 0),
			vfmt_prob(g, jpath_num(rb, "loss")),
			vfmt_dur(h, jpath_num(rb, "xfer_time_us") / 1e6));
	}
	if (in) {
		view_key(f, IND, "in force");
		fprintf(f, "%s\n", vfmt_text(t, sizeof(t), jpath_str(in, "why")));
	}
}

/*
 * The off-CPU windows by the rate they were met at, when the solve used
 * them (model.windows_by_rate, at_bps increasing): the bands' rates and
 * the one whose windows the rate asked for came from.
 */
static void bands(FILE *f, const struct json_object *m)
{
	size_t n = jpath_len(m, "windows_by_rate");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN];
	double chosen = NAN;

	if (n < 2)
		return;
	for (size_t j = 0; j < n; j++)
		if (jpath_bool(jpath_at(m, "windows_by_rate", j), "chosen") == 1)
			chosen = jpath_num(jpath_at(m, "windows_by_rate", j), "at_bps");
	view_cont(f, IND);
	fprintf(f, "each rate with the windows met nearest it: %s bands, %s .. %s",
		vfmt_count(a, (double)n),
		vfmt_rate(b, jpath_num(jpath_at(m, "windows_by_rate", 0), "at_bps")),
		vfmt_rate(c, jpath_num(jpath_at(m, "windows_by_rate", n - 1), "at_bps")));
	if (isfinite(chosen))
		fprintf(f, "; the rate from those met at %s", vfmt_rate(g, chosen));
	fputc('\n', f);
}

static void prediction(FILE *f, const struct json_object *fl)
{
	const struct json_object *m = jpath_obj(fl, "model"), *e = jpath_obj(fl, "solve_error");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], t[TEXT_LEN];

	if (m) {
		view_key(f, IND, "prediction");
		fprintf(f, "at %s: first-round loss %s, transfer time %s; at the line rate %s, %s\n",
			vfmt_rate(a, jpath_num(m, "rate_bps")), vfmt_prob(b, jpath_num(m, "loss")),
			vfmt_dur(c, jpath_num(m, "transfer_time_s")),
			vfmt_prob(g, jpath_num(m, "line_rate_loss")),
			vfmt_dur(h, jpath_num(m, "line_rate_time_s")));
		if (jpath_num(m, "least_rate_bps") != jpath_num(m, "rate_bps") &&
		    jpath_num(m, "time_slack") > 0) {
			view_cont(f, IND);
			fprintf(f, "the least time, %s, at %s: the lowest rate within %s of it\n",
				vfmt_dur(c, jpath_num(m, "least_time_s")),
				vfmt_rate(a, jpath_num(m, "least_rate_bps")),
				vfmt_prob(b, jpath_num(m, "time_slack")));
		}
		bands(f, m);
		if (jpath_bool(m, "unconstrained") == 1) {
			view_cont(f, IND);
			fputs("the receiving host is not the bottleneck (UNCONSTRAINED)\n", f);
		}
	}
	if (e) {
		view_key(f, IND, "problem");
		fprintf(f, "%s (epoch %s)\n", vfmt_text(t, sizeof(t), jpath_str(e, "message")),
			vfmt_count(a, jpath_num(e, "epoch")));
	}
}

static void transfer(FILE *f, const struct json_object *fl)
{
	const struct json_object *x = jpath_obj(fl, "transfer");
	const char *from = jpath_str(x, "from");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], t[TEXT_LEN];

	view_key(f, IND, "transfer");
	fprintf(f, "%s file in %s packets, one-way delay %s, rates %s .. %s; ",
		vfmt_bytes(a, jpath_num(x, "file_bytes")), vfmt_bytes(b, jpath_num(x, "payload_bytes")),
		vfmt_dur(c, jpath_num(x, "one_way_delay_s")), vfmt_rate(g, jpath_num(x, "min_rate_bps")),
		vfmt_rate(h, jpath_num(x, "line_rate_bps")));
	if (from && !strcmp(from, "sender"))
		fprintf(f, "from the HELLO of %s\n", vfmt_text(t, sizeof(t), jpath_str(x, "sender")));
	else
		fputs("the [model] defaults (no sender said otherwise)\n", f);
}

static void counts(FILE *f, const struct json_object *t, bool pkts)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN];

	if (pkts)
		fprintf(f, "%s packets in, %s read, ", vfmt_count(a, jpath_num(t, "pkts_in")),
			vfmt_count(b, jpath_num(t, "pkts_out")));
	fprintf(f, "%s dropped (%s at the receive buffer)", vfmt_count(c, jpath_num(t, "drops")),
		vfmt_count(g, jpath_num(t, "rcvbuf_drops")));
}

static void traffic(FILE *f, const struct json_object *fl)
{
	const struct json_object *t = jpath_obj(fl, "traffic"), *lc = jpath_obj(t, "last_counted");
	char a[VFMT_LEN], b[VFMT_LEN], w[TEXT_LEN];
	const char *why = jpath_str(t, "why");

	view_key(f, IND, "traffic");
	if (jpath_bool(t, "seen") != 1) {
		fprintf(f, "not measured: %s\n", why ? vfmt_text(w, sizeof(w), why) : "the port was not watched");
	} else {
		fprintf(f, "epoch %s: ", vfmt_count(a, jpath_num(t, "epoch")));
		counts(f, t, jpath_bool(t, "counts_valid") == 1);
		if (jpath_bool(t, "counts_valid") != 1)
			fprintf(f, "; packets not counted: %s", why ? vfmt_text(w, sizeof(w), why) : VFMT_NONE);
		fputc('\n', f);
	}
	if (lc && jpath_bool(t, "counts_valid") != 1) {
		view_cont(f, IND);
		fprintf(f, "last counted in epoch %s, %s ago: ", vfmt_count(a, jpath_num(lc, "epoch")),
			vfmt_dur(b, jpath_num(lc, "age_s")));
		counts(f, lc, true);
		fputc('\n', f);
	}
}

static void report(FILE *f, const struct json_object *fl)
{
	const struct json_object *r = jpath_obj(fl, "last_report");
	double first = jpath_num(r, "pkts_sent") - jpath_num(r, "pkts_resent");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN],
	     m[VFMT_LEN], n[VFMT_LEN];

	if (!r)
		return;
	view_key(f, IND, "last report");
	fprintf(f, "%s in %s at %s, %s rounds, %s lost in the first round%s; "
		"the model said %s, %s (%s reports)\n",
		vfmt_bytes(a, jpath_num(r, "file_bytes")), vfmt_dur(b, jpath_num(r, "elapsed_s")),
		vfmt_rate(c, jpath_num(r, "rate_bps")), vfmt_count(g, jpath_num(r, "rounds")),
		vfmt_prob(h, first > 0 ? jpath_num(r, "pkts_lost_first") / first : NAN),
		jpath_bool(r, "aborted") == 1 ? " (aborted)" : "",
		vfmt_rate(k, jpath_num(r, "model_rate_bps")), vfmt_dur(m, jpath_num(r, "model_time_s")),
		vfmt_count(n, jpath_num(fl, "reports")));
}

void view_flow_predictions(FILE *f, int indent, const struct json_object *fl)
{
	const struct json_object *p = jpath_obj(fl, "predictions");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN];
	double kept = jpath_num(p, "kept");

	if (!p || !(kept > 0))
		return;
	view_key(f, indent, "predictions");
	fprintf(f, "%s transfers", vfmt_count(a, kept));
	if (jpath_num(p, "time_compared") > 0)
		fprintf(f, ", T measured/predicted median %s (%s-%s)",
			vfmt_fixed(b, jpath_num(p, "time_ratio_median"), 2),
			vfmt_fixed(c, jpath_num(p, "time_ratio_min"), 2),
			vfmt_fixed(g, jpath_num(p, "time_ratio_max"), 2));
	else
		fputs(", T not predicted", f);
	if (jpath_num(p, "loss_compared") > 0)
		fprintf(f, ", first-round loss %s pp off on average",
			vfmt_fixed(h, jpath_num(p, "loss_error_pp_mean"), 1));
	else
		fputs(", first-round loss not predicted", f);
	fputc('\n', f);
}

/* Where the costs come from when not from this epoch's traffic. */
static void costs_origin(FILE *f, const struct json_object *in)
{
	const struct json_object *l = jpath_obj(in, "learned");
	const char *o = jpath_str(l, "origin"), *p;
	char a[VFMT_LEN];

	if (jpath_bool(in, "no_traffic") != 1 || !o)
		return;
	view_key(f, IND, "costs");
	p = jpath_str(l, "prior");
	if (p && !strcmp(p, "another_flow"))
		fprintf(f, "port %s's, learned on this host (no traffic of its own yet)\n",
			vfmt_count(a, jpath_num(l, "prior_port")));
	else if (p && !strcmp(p, "default"))
		fputs("the defaults: nothing learned on this host yet (docs/daemon.md)\n", f);
	else if (!strcmp(o, "history"))
		fprintf(f, "from an earlier run (state directory), %s old\n",
			vfmt_dur(a, jpath_num(l, "history_age_s")));
	else if (!strcmp(o, "measured"))
		fprintf(f, "learned in this run, last traffic %s ago\n",
			vfmt_dur(a, jpath_num(l, "last_traffic_age_s")));
	else
		fputs("not measured yet: the flow has had no traffic\n", f);
}

/*
 * The receiver's off-CPU windows left out of the solve: learned beside
 * other co-runners than it has now (docs/model.md §2.2).
 */
static void windows_load(FILE *f, const struct json_object *in)
{
	const struct json_object *l = jpath_obj(in, "learned");
	double now = jpath_num(in, "stage_b.cpu_bound.value") +
		     jpath_num(in, "stage_b.io_bound.value");
	char a[VFMT_LEN], b[VFMT_LEN];

	if (jpath_bool(l, "windows_other_load") != 1)
		return;
	view_key(f, IND, "windows");
	fprintf(f, "learned at #C + #I %s, %s now: left out (the queue alone) "
		"until 1 s of receiving at this load\n",
		vfmt_fixed(a, jpath_num(l, "windows_load"), 2), vfmt_fixed(b, now, 2));
}

/* -v: every estimate of the receiver's cost per packet (docs/daemon.md §3). */
static void cost_estimates(FILE *f, const struct json_object *in)
{
	const struct json_object *c = jpath_obj(in, "stage_b.cpu_cost");
	char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], m[VFMT_LEN],
	     t[TEXT_LEN];

	if (!c)
		return;
	view_key(f, IND, "cost estimates");
	fprintf(f, "saturated %s ns (load %s, %s epochs), kept-up %s ns, busy %s ns, ratio %s ns\n",
		vfmt_count(a, jpath_num(c, "saturated_ns")), vfmt_fixed(b, jpath_num(c, "saturated_load"), 2),
		vfmt_count(g, jpath_num(c, "saturated_epochs")), vfmt_count(h, jpath_num(c, "kept_up_ns")),
		vfmt_count(k, jpath_num(c, "busy_ns")), vfmt_count(m, jpath_num(c, "ratio_ns")));
	view_cont(f, IND);
	fprintf(f, "fit: %s ns per packet (b), %s per wake-up (a), %s per empty read (e), %s terms",
		vfmt_count(a, jpath_num(c, "fit_b_ns")), vfmt_count(b, jpath_num(c, "fit_a_ns")),
		vfmt_count(g, jpath_num(c, "fit_e_ns")), vfmt_count(h, jpath_num(c, "fit_terms")));
	if (jpath_str(c, "fit_note") && jpath_str(c, "fit_note")[0])
		fprintf(f, "; %s", vfmt_text(t, sizeof(t), jpath_str(c, "fit_note")));
	fputc('\n', f);
}

/* -v: what the solve made of each stage, and the solver's counters. */
/*
 * The windows by rate of a solve ([model] windows_by_rate): how many
 * pieces, and the rate the chosen one's windows were met at.
 */
static void view_bands(FILE *f, const struct json_object *m)
{
	size_t n = jpath_len(m, "windows_by_rate");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN];

	for (size_t j = 0; j < n; j++) {
		const struct json_object *p = jpath_at(m, "windows_by_rate", j);

		if (jpath_bool(p, "chosen") != 1)
			continue;
		view_key(f, IND, "windows by rate");
		fprintf(f, "%zu pieces; the rate is in the one met reading %s (%s to %s)\n", n,
			vfmt_rate(a, jpath_num(p, "at_bps")), vfmt_rate(b, jpath_num(p, "from_bps")),
			vfmt_rate(c, jpath_num(p, "to_bps")));
	}
}

static void solved(FILE *f, const struct json_object *fl)
{
	const struct json_object *m = jpath_obj(fl, "model");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN],
	     r[VFMT_LEN];

	for (size_t i = 0; i < jpath_len(m, "stages"); i++) {
		const struct json_object *s = jpath_at(m, "stages", i);

		view_key(f, IND, jpath_bool(s, "load_independent") == 1 ? "solved stage A" :
			 "solved stage B");
		fprintf(f, "serves %s/s (mean response %s), drains %s, loss %s; K %s, N %s (%s)",
			vfmt_si(a, jpath_num(s, "service_rate_per_s")),
			vfmt_dur(b, jpath_num(s, "mean_response_s")),
			vfmt_rate(c, jpath_num(s, "capacity_bps")), vfmt_prob(g, jpath_num(s, "loss")),
			vfmt_count(h, jpath_num(s, "queue_pkts")), vfmt_count(k, jpath_num(s, "batch_pkts")),
			vfmt_text(r, sizeof(r), jpath_str(s, "batch_rule")));
		/* [model] drain_floor and rate_uncertainty, where the solve had them. */
		if (isfinite(jpath_num(s, "sat_drain_pkts_per_s")))
			fprintf(f, "; above its saturated drain, %s, a queue drained at that",
				per_s(a, jpath_num(s, "sat_drain_pkts_per_s")));
		if (isfinite(jpath_num(s, "sat_drain_arrivals_pps")))
			fprintf(f, " (with %s arriving; their interrupts' share moves it)",
				per_s(a, jpath_num(s, "sat_drain_arrivals_pps")));
		if (jpath_num(s, "mu_rel_sd") > 0)
			fprintf(f, "; rate spread %s", vfmt_fixed(b, jpath_num(s, "mu_rel_sd"), 3));
		fputc('\n', f);
	}
	view_bands(f, m);
	view_key(f, IND, "solver");
	fprintf(f, "%s solves, %s failed, %s reused; the last took %s, %s evaluations\n",
		vfmt_count(a, jpath_num(fl, "solves")), vfmt_count(b, jpath_num(fl, "solve_failures")),
		vfmt_count(c, jpath_num(fl, "solves_reused")),
		vfmt_dur(g, jpath_num(m, "solve_ms") / 1e3), vfmt_count(h, jpath_num(m, "evaluations")));
}

void view_flow(FILE *f, const struct json_object *fl, unsigned flags)
{
	const struct json_object *in = jpath_obj(fl, "inputs");
	const char *note = jpath_str(in, "note");
	size_t n = jpath_len(fl, "transfers");
	char t[TEXT_LEN], a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN];

	header(f, fl);
	if (!n) {	/* a daemon before per-sender transfers */
		rate(f, fl);
		holders(f, fl);
		prediction(f, fl);
		transfer(f, fl);
	}
	for (size_t i = 0; i < n; i++) {
		const struct json_object *x = jpath_at(fl, "transfers", i);

		if (n > 1) {
			view_key(f, IND, "transfer");
			fprintf(f, "%s of %s, %s sender%s\n", vfmt_count(a, (double)i + 1),
				vfmt_count(b, (double)n), vfmt_count(c, jpath_num(x, "senders")),
				jpath_num(x, "senders") == 1 ? "" : "s");
		}
		rate(f, x);
		prediction(f, x);
		transfer(f, x);
	}
	if (n)
		holders(f, fl);
	traffic(f, fl);
	report(f, fl);
	view_flow_predictions(f, IND, fl);
	costs_origin(f, in);
	windows_load(f, in);
	stage_b(f, in, payload_bytes(fl), flags);
	stage_a(f, in);
	if (note && note[0]) {
		view_key(f, IND, "note");
		fprintf(f, "%s\n", vfmt_text(t, sizeof(t), note));
	}
	if (flags & VIEW_VERBOSE) {
		cost_estimates(f, in);
		capacity_detail(f, in);
		solved(f, fl);
	}
	view_pause(f, jpath_obj(fl, "pause"), flags);
}
