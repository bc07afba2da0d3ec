// SPDX-License-Identifier: GPL-2.0-or-later
/* One measurement record as text. See view_measure.h. */
#include "ctl/view/view_measure.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "ctl/view/answer.h"
#include "ctl/view/jpath.h"
#include "common/vfmt.h"

#define TEXT_LEN	256

static void cpus(FILE *f, const struct json_object *e)
{
	fprintf(f, "  %4s %14s %14s %5s %8s %8s %9s %8s %9s\n", "cpu", "CPU-bound (#C)",
		"I/O-bound (#I)", "busy", "softirq", "hardirq", "switches", "preempt", "slice");
	for (size_t i = 0; i < jpath_len(e, "cpus"); i++) {
		const struct json_object *c = jpath_at(e, "cpus", i);
		char a[VFMT_LEN], b[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN], s[VFMT_LEN],
		     w[VFMT_LEN], p[VFMT_LEN], t[VFMT_LEN];

		fprintf(f, "  %4s %14s %14s %5s %8s %8s %9s %8s %9s\n", vfmt_count(a, jpath_num(c, "cpu")),
			vfmt_fixed(b, jpath_num(c, "cpu_bound"), 2), vfmt_fixed(g, jpath_num(c, "io_bound"), 2),
			vfmt_pct(h, jpath_num(c, "busy_frac"), 0), vfmt_pct(k, jpath_num(c, "softirq_frac"), 1),
			vfmt_pct(s, jpath_num(c, "hardirq_frac"), 1), vfmt_count(w, jpath_num(c, "switches")),
			vfmt_count(p, jpath_num(c, "preemptions")),
			vfmt_dur(t, jpath_num(c, "cpu_bound_slice_ns") / 1e9));
	}
}

static void disk(FILE *f, const struct json_object *e)
{
	const struct json_object *d = jpath_obj(e, "disk");
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], t[64];

	fprintf(f, "  disk %s: %s completions, service %s, completions (mu_D) %s/s, "
		"I/O-bound bursts (mu_P-I/O) %s/s\n", vfmt_text(t, sizeof(t), jpath_str(d, "device")),
		vfmt_count(a, jpath_num(d, "completions")),
		vfmt_dur(b, jpath_num(d, "mean_service_ns") / 1e9),
		vfmt_si(c, jpath_num(d, "service_rate_per_s")),
		vfmt_si(g, jpath_num(d, "io_cpu_rate_per_s")));
}

static void socket_one(FILE *f, const struct json_object *e, const struct json_object *s)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], k[VFMT_LEN],
	     m[VFMT_LEN], n[VFMT_LEN], q[VFMT_LEN];

	fprintf(f, "  socket :%s  dropped %s (receive buffer %s, in %s episodes)",
		vfmt_count(a, jpath_num(s, "port")), vfmt_count(b, jpath_num(s, "drops")),
		vfmt_count(c, jpath_num(s, "drops_rcvbuf")), vfmt_count(g, jpath_num(s, "drop_episodes")));
	if (!isfinite(jpath_num(s, "pkts_in"))) {
		fprintf(f, "; packets not counted (%s)\n", jpath_bool(e, "net_sampled") == 0 ?
			"in sampled epochs only" : "needs the BPF probes");
		return;
	}
	fprintf(f, "\n    %s in, %s read, %s empty reads, queue %s (capacity %s), "
		"cost %s ns per packet, %s per wake-up; threads",
		vfmt_count(a, jpath_num(s, "pkts_in")), vfmt_count(b, jpath_num(s, "pkts_out")),
		vfmt_count(c, jpath_num(s, "empty_reads")), vfmt_count(g, jpath_num(s, "queue_pkts_delta")),
		vfmt_count(h, jpath_num(s, "queue_pkts_cap")), vfmt_count(k, jpath_num(s, "cpu_ns_per_pkt")),
		vfmt_fixed(m, jpath_num(s, "pkts_per_wakeup"), 1));
	for (size_t i = 0; i < jpath_len(s, "tids"); i++)
		fprintf(f, " %s", vfmt_count(n, jpath_num(jpath_at(s, "tids", i), NULL)));
	fputs(" on cpus", f);
	for (size_t i = 0; i < jpath_len(s, "ran_on"); i++)
		fprintf(f, " %s", vfmt_count(q, jpath_num(jpath_at(s, "ran_on", i), "cpu")));
	fputc('\n', f);
}

static void napi_nics(FILE *f, const struct json_object *e)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], t[64], s[32], r[32];

	for (size_t i = 0; i < jpath_len(e, "napi"); i++) {
		const struct json_object *n = jpath_at(e, "napi", i);

		fprintf(f, "  napi %-12s %s polls, %s packets per poll, %s per poll\n",
			vfmt_text(t, sizeof(t), jpath_str(n, "dev")), vfmt_count(a, jpath_num(n, "polls")),
			vfmt_fixed(b, jpath_num(n, "pkts_per_poll"), 2),
			vfmt_dur(c, jpath_num(n, "service_ns_per_poll") / 1e9));
	}
	for (size_t i = 0; i < jpath_len(e, "nics"); i++) {
		const struct json_object *n = jpath_at(e, "nics", i);

		fprintf(f, "  nic %-8s rx ring %s (%s), coalescing %s frames (%s), %s missed, %s dropped\n",
			vfmt_text(t, sizeof(t), jpath_str(n, "name")), vfmt_count(a, jpath_num(n, "rx_ring")),
			vfmt_text(s, sizeof(s), jpath_str(n, "ring_source")),
			vfmt_count(b, jpath_num(n, "rx_max_frames")),
			vfmt_text(r, sizeof(r), jpath_str(n, "coalesce_source")),
			vfmt_count(g, jpath_num(n, "rx_missed")), vfmt_count(h, jpath_num(n, "rx_dropped")));
	}
}

static void drops_probes(FILE *f, const struct json_object *e)
{
	struct json_object *d = jpath_obj(e, "drops_by_reason");
	char a[VFMT_LEN], b[VFMT_LEN], t[64];
	bool any = false;

	if (d) {
		json_object_object_foreach(d, key, val) {
			fprintf(f, "%s %s=%s", any ? "" : "  drops:", vfmt_text(t, sizeof(t), key),
				vfmt_count(a, jpath_num(val, NULL)));
			any = true;
		}
	}
	if (any)
		fputc('\n', f);
	for (size_t i = 0; i < jpath_len(e, "probe_cost"); i++) {
		const struct json_object *p = jpath_at(e, "probe_cost", i);

		fprintf(f, "  probe %-24s runs %10s  mean %s\n",
			vfmt_text(t, sizeof(t), jpath_str(p, "prog")), vfmt_count(a, jpath_num(p, "run_cnt")),
			vfmt_dur(b, jpath_num(p, "avg_ns") / 1e9));
	}
}

static void tasks(FILE *f, const struct json_object *e)
{
	for (size_t i = 0; i < jpath_len(e, "tasks"); i++) {
		const struct json_object *t = jpath_at(e, "tasks", i);
		char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], g[VFMT_LEN], h[VFMT_LEN], comm[32], cls[32];

		fprintf(f, "  task %7s %-16s %-8s on cpu %9s, waiting %9s, in I/O %9s",
			vfmt_count(a, jpath_num(t, "tid")), vfmt_text(comm, sizeof(comm), jpath_str(t, "comm")),
			vfmt_text(cls, sizeof(cls), jpath_str(t, "class")),
			vfmt_dur(b, jpath_num(t, "oncpu_ns") / 1e9), vfmt_dur(c, jpath_num(t, "wait_ns") / 1e9),
			vfmt_dur(g, jpath_num(t, "iowait_ns") / 1e9));
		for (size_t k = 0; k < jpath_len(t, "weights"); k++) {
			const struct json_object *w = jpath_at(t, "weights", k);

			fprintf(f, "  cpu%s %s", vfmt_count(a, jpath_num(w, "cpu")),
				vfmt_fixed(h, jpath_num(w, "w"), 2));
		}
		fputc('\n', f);
	}
}

void view_measure(FILE *f, const struct json_object *e)
{
	char a[VFMT_LEN], b[VFMT_LEN], c[VFMT_LEN], t[TEXT_LEN];
	double every = jpath_num(e, "net_probe_every");

	fprintf(f, "epoch %s  %s  probes %s", vfmt_count(a, jpath_num(e, "seq")),
		vfmt_dur(b, (jpath_num(e, "end_ns") - jpath_num(e, "start_ns")) / 1e9),
		vfmt_text(t, 32, jpath_str(e, "attach_mode")));
	if (jpath_bool(e, "degraded") == 1)
		fprintf(f, "  DEGRADED: %s", vfmt_text(t, sizeof(t), jpath_str(e, "degraded_reason")));
	fputc('\n', f);
	if (every > 1)
		fprintf(f, "  per-packet probes %s (one epoch in %s; latest sampled %s)\n",
			jpath_bool(e, "net_sampled") == 1 ? "sampled" : "not sampled",
			vfmt_count(a, every), vfmt_count(c, jpath_num(e, "net_sampled_seq")));
	if (jpath_bool(e, "net_sampled") == 1 && jpath_bool(e, "net_stage_a") == 0)
		fprintf(f, "  stage A (NET_RX softirq, NAPI) not attached this epoch (one sampled "
			"epoch in %s): no napi, softirq share from /proc/softirqs\n",
			vfmt_count(a, jpath_num(e, "net_stage_a_every")));
	cpus(f, e);
	disk(f, e);
	for (size_t i = 0; i < jpath_len(e, "sockets"); i++)
		socket_one(f, e, jpath_at(e, "sockets", i));
	napi_nics(f, e);
	drops_probes(f, e);
	tasks(f, e);
}

int view_measure_text(FILE *f, const char *json, size_t len)
{
	char why[ANSWER_WHY_LEN];
	struct json_object *rec = answer_parse_json(json, len, why);

	if (!rec) {
		fprintf(stderr, "measurement record: %s\n", why);
		return -EINVAL;
	}
	view_measure(f, rec);
	json_object_put(rec);
	return 0;
}
