// SPDX-License-Identifier: GPL-2.0-or-later
/* The receive-buffer adaptation as text. See view_buffers.h. */
#include "ctl/view/view_buffers.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "ctl/view/answer.h"
#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"

#define TEXT_LEN	256

static void head(FILE *f, const struct json_object *b, unsigned flags)
{
	char m[32], p[32], a[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN];
	const struct json_object *host = jpath_obj(b, "host");

	view_key(f, 0, "Buffers");
	fprintf(f, "%s, policy %s, every %s ms, ceiling %s\n",
		vfmt_text(m, sizeof(m), jpath_str(b, "mode")),
		vfmt_text(p, sizeof(p), jpath_str(b, "policy")),
		vfmt_count(a, jpath_num(b, "dt_ms")), vfmt_bytes(c, jpath_num(b, "ceiling_bytes")));
	view_cont(f, 0);
	fprintf(f, "memory used %s (alpha), UDP memory %s of %s before pressure%s\n",
		vfmt_pct(a, jpath_num(host, "mem_util"), 1),
		vfmt_bytes(c, jpath_num(host, "udp_mem_bytes")),
		vfmt_bytes(g, jpath_num(host, "udp_mem_pressure_bytes")),
		jpath_bool(host, "udp_mem_pressure") == 1 ? ": UNDER PRESSURE, no growth" : "");
	if (!strcmp(jpath_str(b, "mode") ? jpath_str(b, "mode") : "", "apply")) {
		view_cont(f, 0);
		fprintf(f, "applied %s changes, %s refused, %s failed; allowed: %s users, %s "
			"executables%s\n", vfmt_count(a, jpath_num(b, "changes")),
			vfmt_count(c, jpath_num(b, "refusals")), vfmt_count(g, jpath_num(b, "failures")),
			vfmt_count(h, (double)jpath_len(b, "allow_users")),
			vfmt_count(m, (double)jpath_len(b, "allow_exes")),
			jpath_bool(host, "force_refused") == 1 ?
			"; SO_RCVBUFFORCE refused: capped at 2 x rmem_max" : "");
	}
	if (flags & VIEW_VERBOSE) {
		view_cont(f, 0);
		fprintf(f, "%s steps, %s each (mean), %s at most\n", vfmt_count(a, jpath_num(b, "steps")),
			vfmt_dur(c, jpath_num(b, "step_us_mean") / 1e6),
			vfmt_dur(g, jpath_num(b, "step_us_max") / 1e6));
	}
}

/* The policy's last word on one socket, with its values. */
static void decision(FILE *f, const struct json_object *s, const char *policy)
{
	const struct json_object *r = jpath_obj(s, "rrda"), *m = jpath_obj(s, "model");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], w[TEXT_LEN];

	view_key(f, 2, "decision");
	if (!strcmp(policy, "model")) {
		if (jpath_bool(m, "valid") != 1) {
			fprintf(f, "none: %s\n", vfmt_text(w, sizeof(w), jpath_str(m, "why")));
			return;
		}
		fprintf(f, "model (%s): K %s packets x %s, loss %s at %s\n",
			vfmt_text(w, 16, jpath_str(m, "criterion")),
			vfmt_count(a, jpath_num(m, "queue_pkts")),
			vfmt_bytes(b, jpath_num(m, "truesize_bytes")),
			vfmt_prob(c, jpath_num(m, "loss")), vfmt_rate(g, jpath_num(m, "rate_bps")));
		return;
	}
	if (!isfinite(jpath_num(r, "f"))) {
		fprintf(f, "none: %s\n", vfmt_text(w, sizeof(w), jpath_str(r, "why")));
		return;
	}
	fprintf(f, "rrda %s: f %+.0f, v_b %s, v' %s per step, alpha %s, step %s\n",
		vfmt_text(w, 32, jpath_str(r, "why")), jpath_num(r, "f"),
		vfmt_bytes(a, jpath_num(r, "v_b_bytes")), vfmt_bytes(b, jpath_num(r, "ema_bytes")),
		vfmt_fixed(c, jpath_num(r, "mem_util"), 3), vfmt_bytes(g, jpath_num(r, "step_bytes")));
}

static void socket_view(FILE *f, const struct json_object *s, const char *policy,
			unsigned flags)
{
	const struct json_object *o = jpath_obj(s, "owner"), *lc = jpath_obj(s, "last_change");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], w[TEXT_LEN];

	fprintf(f, "  port %s socket %s", vfmt_count(a, jpath_num(s, "port")),
		vfmt_count(b, jpath_num(s, "inode")));
	if (o)
		fprintf(f, " (pid %s uid %s %s%s)", vfmt_count(a, jpath_num(o, "pid")),
			vfmt_count(b, jpath_num(o, "uid")), vfmt_text(w, 80, jpath_str(o, "exe")),
			jpath_bool(o, "allowed") == 1 ? "" : ", not allowed");
	fputc('\n', f);
	view_key(f, 2, "buffer");
	fprintf(f, "%s now, %s held, %s wanted (floor %s), %s drops\n",
		vfmt_bytes(a, jpath_num(s, "rcvbuf_bytes")), vfmt_bytes(b, jpath_num(s, "held_bytes")),
		vfmt_bytes(c, jpath_num(s, "recommend_bytes")),
		vfmt_bytes(g, jpath_num(s, "floor_bytes")), vfmt_count(w, jpath_num(s, "drops")));
	decision(f, s, policy);
	if (lc) {
		view_key(f, 2, "last change");
		fprintf(f, "%s -> %s, %s ago: %s\n", vfmt_bytes(a, jpath_num(lc, "from_bytes")),
			vfmt_bytes(b, jpath_num(lc, "to_bytes")), vfmt_dur(c, jpath_num(lc, "age_s")),
			vfmt_text(w, sizeof(w), jpath_str(lc, "reason")));
	}
	if (jpath_str(s, "refused")) {
		view_key(f, 2, "refused");
		fprintf(f, "%s\n", vfmt_text(w, sizeof(w), jpath_str(s, "refused")));
	}
	if (flags & VIEW_VERBOSE) {
		view_key(f, 2, "memory");
		fprintf(f, "buffer %s mean, %s peak; held %s mean, %s peak (over %s)\n",
			vfmt_bytes(a, jpath_num(s, "mean_rcvbuf_bytes")),
			vfmt_bytes(b, jpath_num(s, "peak_rcvbuf_bytes")),
			vfmt_bytes(c, jpath_num(s, "mean_held_bytes")),
			vfmt_bytes(g, jpath_num(s, "peak_held_bytes")),
			vfmt_dur(w, jpath_num(s, "watched_s")));
	}
}

void view_buffers(FILE *f, const struct json_object *b, unsigned flags)
{
	const char *mode = jpath_str(b, "mode"), *policy = jpath_str(b, "policy");
	size_t n = jpath_len(b, "sockets");

	head(f, b, flags);
	if (mode && !strcmp(mode, "off"))
		return;
	for (size_t i = 0; i < n; i++)
		socket_view(f, jpath_at(b, "sockets", i), policy ? policy : "", flags);
	if (!n) {
		view_cont(f, 0);
		fputs("no UDP socket on a watched port\n", f);
	}
}

int view_buffers_text(FILE *f, const char *json, size_t len, unsigned flags)
{
	char why[ANSWER_WHY_LEN];
	struct json_object *b = answer_parse_json(json, len, why);

	if (!b) {
		fprintf(stderr, "buffers document: %s\n", why);
		return -EINVAL;
	}
	view_buffers(f, b, flags);
	json_object_put(b);
	return 0;
}
