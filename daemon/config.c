// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckd's configuration file: the key table and loading. See config.h
 * for the format and the API.
 *
 * Loading is one pass over an in-memory copy of the file: config_scan()
 * splits it into sections and entries with their line numbers; each entry
 * is checked against the table (unknown, given twice) and its value parsed
 * by its row (config_value.c) into a scratch copy of the defaults; then the
 * rules between keys are checked. Only then is *out written, so every error
 * carries FILE:LINE and nothing is ever half-applied.
 */
#include "daemon/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/config_scan.h"
#include "daemon/config_value.h"

/* ------------------------------------------------------------ the table -- */

#define FIELD(f) .offset = offsetof(struct rxb_config, f), \
		 .size = sizeof(((struct rxb_config *)0)->f)

/*
 * A row names its section S and key K once, as identifiers: the strings in
 * the file are #S and #K, and the value lands in the field S.K of struct
 * rxb_config, so a key and its field cannot drift apart.
 */
#define ROW(S, K, T, DEF, RL, DOC) \
	.section = #S, .key = #K, .type = T, FIELD(S.K), .def = DEF, .reload = RL, .doc = DOC
#define ROW_UINT(S, K, MIN, MAX, DEF, RL, DOC) \
	{ ROW(S, K, CONFIG_UINT, DEF, RL, DOC), .lim = { .u = { MIN, MAX } } }
#define ROW_DBL(S, K, MIN, MAX, DEF, RL, DOC) \
	{ ROW(S, K, CONFIG_DOUBLE, DEF, RL, DOC), .lim = { .d = { MIN, MAX } } }
#define ROW_SI(S, K, MIN, MAX, DEF, RL, DOC) \
	{ ROW(S, K, CONFIG_SI, DEF, RL, DOC), .lim = { .d = { MIN, MAX } } }
#define ROW_ENUM(S, K, NAMES, DEF, RL, DOC) \
	{ ROW(S, K, CONFIG_ENUM, DEF, RL, DOC), .lim = { .names = NAMES } }
#define ROW_T(S, K, T, DEF, RL, DOC) { ROW(S, K, T, DEF, RL, DOC) }

#define LIVE CONFIG_RELOAD_LIVE
#define RESTART CONFIG_RELOAD_RESTART

static const char *const attach_names[] = { "auto", "tp_btf", "raw_tp", "none", NULL };
static const char *const batch_names[] = { "partial", "strict", NULL };
/* In the order of enum bneck_rounds (solver/bneck.h). */
static const char *const rounds_names[] = { "burst", "seed", NULL };
static const char *const loss_names[] = { "queue", "windows", "service", NULL };
static const char *const episode_names[] = { "off", "measured", NULL };
static const char *const loss_episode_names[] = { "off", "measured", "windows", NULL };
/* In the order of enum capacity_mode (daemon/model/capacity.h). */
static const char *const capacity_names[] = { "cost", "drain", NULL };

/* In the order of enum buffer_mode and enum buffer_policy (daemon/model/buffer.h). */
static const char *const buffer_mode_names[] = { "off", "advise", "apply", NULL };
static const char *const buffer_policy_names[] = { "rrda", "model", NULL };

static const char *const sections[] = {
	"daemon", "measure", "model", "control", "pause", "metrics", "streams", "buffer",
	NULL,
};

/*
 * To add a key: a field in struct rxb_config, a row here (in the order of
 * the documentation; LIVE if a reload can apply it, RESTART if it is made
 * once at start-up), and its entry in conf/rxbneckd.conf and docs/config.md
 * - tests/unit/test_config.c fails until all three agree. A LIVE key must
 * reach the part that uses it in daemon/daemon_reload.c, both ways (applied
 * in apply(), read back in daemon_reload_effective()):
 * tests/unit/test_daemon_reload.c fails until it does. A new section also
 * goes in sections[] below. Rules between keys go in check_rules().
 */
static const struct config_key keys[] = {
	/* [daemon] */
	ROW_T(daemon, state_dir, CONFIG_PATH, "/var/lib/rxbneckd", RESTART,
	      "Directory for state that survives restarts (stream-count history)."),
	ROW_T(daemon, runtime_dir, CONFIG_PATH, "/run/rxbneckd", RESTART,
	      "Directory for runtime files; created at start-up."),
	ROW_T(daemon, ctl_socket, CONFIG_PATH, "/run/rxbneckd/rxbneckd.sock", RESTART,
	      "Unix socket rxbneckctl talks to."),
	ROW_T(daemon, ctl_socket_mode, CONFIG_MODE, "0660", RESTART,
	      "Permission bits of the control socket (octal)."),
	ROW_T(daemon, ctl_group, CONFIG_GROUP, "", RESTART,
	      "Group owning the control socket; empty: the daemon's group."),
	ROW_T(daemon, log_level, CONFIG_LOG_LEVEL, "info", LIVE,
	      "Least severe message logged: err, warning, notice, info, debug."),

	/* [measure] */
	ROW_UINT(measure, interval_ms, 10, 60000, "1000", LIVE,
		 "Epoch length: how often counters are read and the model solved."),
	/* Upper bound: COLLECT_MAX_NET_PROBE_EVERY (checked in daemon.c). */
	ROW_UINT(measure, net_probe_every, 1, 3600, "32", LIVE,
		 "Once learned, attach the per-packet probes one epoch in this many."),
	ROW_UINT(measure, net_probe_learn_s, 0, 3600, "15", LIVE,
		 "Per-packet probes in every epoch for this long after a change."),
	ROW_T(measure, watch_ports, CONFIG_PORT_LIST, "", LIVE,
	      "Local ports watched from start-up; senders' hellos add more."),
	ROW_UINT(measure, flow_linger_s, 0, 3600, "30", LIVE,
		 "Seconds a port a sender added stays watched after its last sender left."),
	ROW_ENUM(measure, attach, attach_names, "auto", RESTART,
		 "How probes attach: auto, tp_btf, raw_tp, or none (no BPF, degraded)."),
	ROW_T(measure, bpf_stats, CONFIG_BOOL, "yes", LIVE,
	      "Enable kernel.bpf_stats_enabled to measure the probes' own cost."),
	ROW_T(measure, devices, CONFIG_IFNAME_LIST, "", LIVE,
	      "Network devices to read; empty: all up, non-loopback devices."),
	ROW_UINT(measure, fallback_rx_ring, 1, 1048576, "256", LIVE,
		 "RX ring size assumed when a device cannot report it."),
	ROW_UINT(measure, fallback_rx_max_frames, 0, 65536,
		 "1", LIVE, "Coalescing rx-frames assumed when a device cannot report it."),
	ROW_UINT(measure, fallback_rx_usecs, 0, 1000000, "0", LIVE,
		 "Coalescing rx-usecs assumed when a device cannot report it."),

	/* [model] */
	ROW_UINT(model, payload_bytes, 1, 65507, "1468", LIVE,
		 "Payload per packet assumed until a sender says otherwise."),
	ROW_SI(model, default_file_bytes, 1, 1e15, "1G", LIVE,
	       "Transfer size assumed until a sender says otherwise."),
	ROW_DBL(model, default_one_way_delay_ms, 0, 10000,
		"0.1", LIVE, "One-way delay assumed until a sender reports its RTT."),
	ROW_SI(model, line_rate_bps, 1e3, 1e13, "10G", LIVE,
	       "Highest sending rate considered (bits/s)."),
	ROW_SI(model, min_rate_bps, 1e3, 1e13, "10M", LIVE,
	       "Lowest sending rate considered (bits/s)."),
	ROW_UINT(model, sweep_points, 2, 100000, "200", LIVE,
		 "Rates evaluated between min_rate_bps and line_rate_bps."),
	ROW_ENUM(model, batch_rule, batch_names, "partial", LIVE,
		 "Bulk service rule: partial (min(n, N)) or strict (only with N queued)."),
	ROW_ENUM(model, rounds, rounds_names, "burst", LIVE,
		 "Resend rounds: burst (each round a burst the queue partly absorbs) or seed "
		 "(each loses the same fraction)."),
	ROW_ENUM(model, loss, loss_names, "service", LIVE,
		 "Socket stage loss: queue (the bulk queue), windows (also the loss to the receiver's measured off-CPU windows, the larger) or service (the windows alone, the receiver at its own rate between them)."),
	ROW_T(model, queue_depth_cost, CONFIG_BOOL, "no", LIVE,
	      "Serve the receiver at its kept-up cost until its queue overflows, at its saturated cost after."),
	ROW_T(model, quota_phases, CONFIG_BOOL, "yes", LIVE,
	      "Where one cgroup with a CPU quota shares the receiver's CPU, take its phases (runs, then throttled) in place of the off-CPU windows."),
	ROW_ENUM(model, loss_episodes, loss_episode_names, "windows", LIVE,
		 "Burst rounds: off (a packet lost is a round), measured (loss comes in episodes of the measured size) or windows (as measured, but where loss = windows or service has the windows set the loss, each rate's episode is what a losing window loses)."),
	ROW_T(model, drain_floor, CONFIG_BOOL, "yes", LIVE,
	      "loss = service: a rate above the receiver's measured saturated drain is a queue drained at it (the receiver never catches up)."),
	ROW_T(model, windows_by_rate, CONFIG_BOOL, "yes", LIVE,
	      "loss = windows or service: solve each rate with the off-CPU windows met at the nearest rate the receiver read at (two rates or more seen), not with all rates' windows mixed."),
	ROW_DBL(model, time_slack, 0, 1, "0.02", LIVE,
		"Advise the lowest rate below the least modelled transfer time from which the time stays within this fraction of the least (0: the rate of the least)."),
	ROW_ENUM(model, rate_uncertainty, episode_names, "off", LIVE,
		 "off (the receiver's rate is taken as known) or measured (the rate minimises the time expected over its measured spread)."),
	ROW_ENUM(model, capacity, capacity_names, "cost", LIVE,
		 "Stage B's capacity: cost (per-packet cost and counted load) or drain (the measured saturated drain, where usable)."),

	/* [control] */
	ROW_T(control, listen_address, CONFIG_ADDRESS_LIST, "127.0.0.1 ::1", RESTART,
	      "Addresses the sender control server listens on."),
	ROW_UINT(control, port, 1, 65535, "7440", RESTART,
		 "TCP port of the sender control server."),
	ROW_T(control, allow, CONFIG_CIDR_LIST, "127.0.0.0/8 ::1/128", LIVE,
	      "Networks senders may connect from; empty: nobody."),
	ROW_UINT(control, max_connections, 1, 65536, "1024", LIVE,
		 "Most sender connections at a time."),
	ROW_UINT(control, max_connections_per_address, 1, 65536, "64", LIVE,
		 "Most sender connections from one address (IPv6: one /64) at a time."),
	ROW_UINT(control, max_flows_per_address, 1,
		 RXB_MAX_SOCKS, "4", LIVE,
		 "Most unwatched flow ports one address (IPv6: one /64) may hold senders on."),
	ROW_T(control, flow_owner_uids, CONFIG_UID_LIST, "", LIVE,
	      "Serve a HELLO only for a port whose receiving socket one of these users owns; "
	      "empty: any."),
	ROW_UINT(control, max_frame_bytes, 512, 65536, "4096", LIVE,
		 "Largest frame accepted from a sender."),
	ROW_SI(control, output_queue_bytes, 1024, 67108864,
	       "16Ki", LIVE, "Bytes queued for one sender before it counts as stuck."),
	ROW_UINT(control, idle_timeout_s, 0, 86400, "60", LIVE,
		 "Close a sender connection silent for this long; 0: never."),
	ROW_UINT(control, hello_timeout_s, 1, 3600, "5", LIVE,
		 "Close a connection that has not said hello within this time."),
	ROW_DBL(control, rate_change_fraction, 0, 1, "0.05", LIVE,
		"Push a new rate when it moved by more than this fraction."),
	ROW_UINT(control, push_every_epochs, 0, 3600, "10", LIVE,
		 "Push the rate at least every this many epochs; 0: only on change."),

	/* [pause] */
	ROW_T(pause, enabled, CONFIG_BOOL, "yes", LIVE,
	      "Predict and announce pause windows."),
	ROW_UINT(pause, min_window_us, 1, 1000000, "200", LIVE,
		 "Shorter predicted windows are not announced."),
	ROW_UINT(pause, max_window_ms, 1, 60000, "100", LIVE,
		 "Longer predicted windows are capped to this."),

	/* [metrics] */
	ROW_T(metrics, enabled, CONFIG_BOOL, "no", RESTART,
	      "Serve Prometheus metrics over HTTP at /metrics."),
	ROW_T(metrics, listen, CONFIG_HOSTPORT, "127.0.0.1:7441", RESTART,
	      "Address and port of the metrics endpoint."),
	ROW_T(metrics, allow, CONFIG_CIDR_LIST, "127.0.0.0/8 ::1/128", LIVE,
	      "Networks scrapers may connect from; empty: nobody."),
	ROW_UINT(metrics, max_connections, 1, 1024, "16", RESTART,
		 "Most metrics connections at a time."),
	ROW_UINT(metrics, max_connections_per_address, 1, 1024, "4", RESTART,
		 "Most metrics connections from one address."),
	ROW_UINT(metrics, timeout_s, 1, 300, "10", RESTART,
		 "Close a metrics connection this long after it was accepted."),
	/* [streams] */
	ROW_T(streams, enabled, CONFIG_BOOL, "yes", LIVE,
	      "Sample parallel TCP transfers and advise senders how many streams to use."),
	ROW_T(streams, ports, CONFIG_PORT_LIST, "", LIVE,
	      "Local ports whose transfers are sampled; empty: every listening TCP port."),
	ROW_UINT(streams, max_peers, 1, 1024, "256", LIVE,
		 "Peers (address and local port) whose samples are kept."),
	ROW_UINT(streams, max_points, 2, 64, "32", LIVE,
		 "Stream counts kept per peer."),
	ROW_UINT(streams, max_conns, 1, 65536, "16384", LIVE,
		 "TCP connections looked at per epoch."),
	ROW_UINT(streams, max_n, 2, 1024, "64", LIVE,
		 "Most streams considered: the predicted curve's range."),
	ROW_DBL(streams, tolerance, 0, 0.5, "0.02", LIVE,
		"Advise the fewest streams predicted within this fraction of the best."),
	ROW_DBL(streams, rise, 0, 1, "0.05", LIVE,
		"The exponential sampling stops when doubling gains less than this."),
	ROW_SI(streams, min_stream_bps, 0, 1e12, "100k", LIVE,
	       "A connection is a stream of a transfer when it received at least this."),
	ROW_DBL(streams, min_share, 0, 1, "0.05", LIVE,
		"... and at least this share of the transfer's busiest connection."),
	ROW_UINT(streams, settle, 1, 60, "1", LIVE,
		 "Epochs with the same streams before a transfer's epoch is a sample."),
	ROW_UINT(streams, sample_memory_s, 1, 86400, "600", LIVE,
		 "Sampled time a stream count remembers; older samples fade."),
	ROW_DBL(streams, min_sample_s, 0, 3600, "3", LIVE,
		"Sampled time a stream count needs before the fit uses it."),
	ROW_UINT(streams, max_age_h, 0, 87600, "168", LIVE,
		 "Samples not renewed for this many hours are dropped; 0: never."),
	ROW_UINT(streams, save_s, 1, 86400, "60", LIVE,
		 "Write the samples to the state directory at most this often."),
	ROW_UINT(streams, fits_per_epoch, 1, 1024, "8", LIVE,
		 "Peers refitted per epoch at most."),
	/* [buffer] */
	ROW_ENUM(buffer, mode, buffer_mode_names, "off", LIVE,
		 "Receive-buffer adaptation: off, advise (tell senders and rxbneckctl), or "
		 "apply (set the receivers' buffers)."),
	ROW_ENUM(buffer, policy, buffer_policy_names, "rrda", LIVE,
		 "rrda (grow while the receiver falls behind) or model (the smallest buffer "
		 "the model says holds the flow)."),
	ROW_UINT(buffer, dt_ms, 10, 10000, "100", LIVE,
		 "How often the sockets are looked at and RRDA steps."),
	ROW_UINT(buffer, k, 1, 64, "3", LIVE,
		 "RRDA: steps whose smoothed surplus must share a sign to resize."),
	ROW_DBL(buffer, beta, 0, 1000000, "16", LIVE,
		"RRDA: a step makes room for this many steps' smoothed surplus."),
	ROW_DBL(buffer, omega, 0, 1, "0.5", LIVE,
		"RRDA: weight of the newest step in the moving average."),
	ROW_SI(buffer, floor_bytes, 0, 2147483646, "0", LIVE,
	       "Never shrink a buffer below this; 0: the size its application chose."),
	ROW_SI(buffer, ceiling_bytes, 4608, 2147483646, "64Mi", LIVE,
	       "Never grow a buffer above this."),
	ROW_DBL(buffer, loss_target, 0, 0.5, "0.0001", LIVE,
		"model: the socket's loss the buffer is sized for; 0: by transfer time only."),
	ROW_DBL(buffer, time_slack, 0, 1, "0.01", LIVE,
		"model: where no buffer meets loss_target, the transfer time allowed above "
		"the largest buffer's."),
	ROW_T(buffer, allow_users, CONFIG_UID_LIST, "", LIVE,
	      "apply: users (names or uids) whose sockets may be resized."),
	ROW_T(buffer, allow_exes, CONFIG_PATH_LIST, "", LIVE,
	      "apply: executables whose sockets may be resized."),
};

#define NKEYS RXB_ARRAY_SIZE(keys)

const struct config_key *config_keys(size_t *n)
{
	*n = NKEYS;
	return keys;
}

const char *const *config_sections(void)
{
	return sections;
}

/* --------------------------------------------------------- load context -- */

struct load {
	const char *name;	/* file name for messages */
	char *err;
	size_t errlen;
	struct rxb_config cfg;	/* defaults, then what the file sets */
	int line_of[NKEYS];	/* where each key was set; 0: default */
	int section_line[RXB_ARRAY_SIZE(sections)];	/* line of its header; 0: none */
};

/* "NAME:LINE: " (or "NAME: " for line 0), then the message. Returns @ret. */
static int load_error(struct load *l, int line, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int load_error(struct load *l, int line, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!l->err || !l->errlen)
		return ret;
	if (line > 0)
		n = snprintf(l->err, l->errlen, "%s:%d: ", l->name, line);
	else
		n = snprintf(l->err, l->errlen, "%s: ", l->name);
	if (n < 0 || (size_t)n >= l->errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return ret;
}

/* ------------------------------------------- sections and keys by name -- */

static int section_index(const char *name)
{
	for (int i = 0; sections[i]; i++)
		if (strcmp(sections[i], name) == 0)
			return i;
	return -1;
}

static int key_index(const char *section, const char *key)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
			return (int)i;
	return -1;
}

/* Levenshtein distance of two short names, for "did you mean". */
static int name_distance(const char *a, const char *b)
{
	int prev[CONFIG_MAX_NAME + 1], cur[CONFIG_MAX_NAME + 1];
	int la = (int)strlen(a), lb = (int)strlen(b);

	if (la > CONFIG_MAX_NAME || lb > CONFIG_MAX_NAME)
		return CONFIG_MAX_NAME;
	for (int j = 0; j <= lb; j++)
		prev[j] = j;
	for (int i = 1; i <= la; i++) {
		cur[0] = i;
		for (int j = 1; j <= lb; j++) {
			int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			int del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
	}
	return prev[lb];
}

/* The closest key of @section to @key, if it is a plausible typo. */
static const char *suggest_key(const char *section, const char *key)
{
	const char *best = NULL;
	int best_d = 3;		/* up to two edits */

	for (size_t i = 0; i < NKEYS; i++) {
		int d;

		if (strcmp(keys[i].section, section) != 0)
			continue;
		d = name_distance(key, keys[i].key);
		if (d < best_d) {
			best_d = d;
			best = keys[i].key;
		}
	}
	return best;
}

/* ----------------------------------------------- what the scan hands us -- */

static int on_section(void *ctx, int line, const char *name)
{
	struct load *l = ctx;
	int idx = section_index(name);

	if (idx < 0) {
		char known[128] = "";

		for (int i = 0; sections[i]; i++) {
			size_t kl = strlen(known);

			snprintf(known + kl, sizeof(known) - kl, "%s[%s]", i ? ", " : "",
				 sections[i]);
		}
		return load_error(l, line, -EINVAL, "unknown section [%s] (known: %s)",
				  name, known);
	}
	if (l->section_line[idx])
		return load_error(l, line, -EINVAL, "section [%s] given twice (first on line %d)",
				  name, l->section_line[idx]);
	l->section_line[idx] = line;
	return 0;
}

static int on_entry(void *ctx, int line, const char *section, const char *key,
		    const char *value)
{
	struct load *l = ctx;
	int idx = key_index(section, key);
	const struct config_key *k;
	char why[160], want[160];
	int err;

	if (idx < 0) {
		const char *hint = suggest_key(section, key);

		return load_error(l, line, -EINVAL, "[%s] %s: unknown key%s%s%s", section, key,
				  hint ? " (did you mean " : "", hint ? hint : "",
				  hint ? "?)" : "");
	}
	if (l->line_of[idx])
		return load_error(l, line, -EINVAL, "[%s] %s: given twice (first on line %d)",
				  section, key, l->line_of[idx]);
	l->line_of[idx] = line;
	k = &keys[idx];
	err = config_value_parse(k, value, (char *)&l->cfg + k->offset, why, sizeof(why));
	if (err) {
		config_value_describe(k, want, sizeof(want));
		return load_error(l, line, err < 0 ? err : -EINVAL, "[%s] %s: %s (expected %s)",
				  section, key, why, want);
	}
	return 0;
}

/* -------------------------------------------------------- cross checks -- */

static const struct config_key *find_key(const char *section, const char *key)
{
	int i = key_index(section, key);

	return i < 0 ? NULL : &keys[i];
}

/*
 * Rules between keys. The message goes to the line of @b when it was set
 * in the file, else to @a's, else (both defaults) to the file.
 */
static int check_order(struct load *l, const struct rxb_config *cfg,
		       const char *sa, const char *ka, uint64_t va_scaled,
		       const char *sb, const char *kb, uint64_t vb_scaled, const char *rule)
{
	const struct config_key *a = find_key(sa, ka), *b = find_key(sb, kb);
	char ta[64], tb[64];
	int line;

	if (va_scaled <= vb_scaled)
		return 0;
	config_format(a, cfg, ta, sizeof(ta));
	config_format(b, cfg, tb, sizeof(tb));
	line = l->line_of[b - keys] ? l->line_of[b - keys] : l->line_of[a - keys];
	return load_error(l, line, -EINVAL, "[%s] %s (%s) %s [%s] %s (%s)",
			  sa, ka, ta, rule, sb, kb, tb);
}

static int check_rules(struct load *l, const struct rxb_config *c)
{
	int err;

	err = check_order(l, c, "model", "min_rate_bps", c->model.min_rate_bps,
			  "model", "line_rate_bps", c->model.line_rate_bps,
			  "must not be above");
	if (!err)
		err = check_order(l, c, "pause", "min_window_us", c->pause.min_window_us,
				  "pause", "max_window_ms", c->pause.max_window_ms * 1000ULL,
				  "must not be longer than");
	if (!err)
		err = check_order(l, c, "metrics", "max_connections_per_address",
				  c->metrics.max_connections_per_address,
				  "metrics", "max_connections", c->metrics.max_connections,
				  "must not be above");
	if (!err && c->buffer.floor_bytes)
		err = check_order(l, c, "buffer", "floor_bytes", c->buffer.floor_bytes,
				  "buffer", "ceiling_bytes", c->buffer.ceiling_bytes,
				  "must not be above");
	if (!err && c->control.idle_timeout_s)
		err = check_order(l, c, "control", "hello_timeout_s", c->control.hello_timeout_s,
				  "control", "idle_timeout_s", c->control.idle_timeout_s,
				  "must not be longer than");
	return err;
}

/* ----------------------------------------------------------------- API -- */

void config_defaults(struct rxb_config *cfg)
{
	char why[160];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NKEYS; i++)
		/* The table's defaults are tested to parse; this cannot fail. */
		if (config_value_parse(&keys[i], keys[i].def, (char *)cfg + keys[i].offset,
				       why, sizeof(why)))
			rxb_err("config: bad built-in default [%s] %s: %s",
				keys[i].section, keys[i].key, why);
}

int config_format(const struct config_key *k, const struct rxb_config *cfg,
		  char *buf, size_t size)
{
	return config_value_format(k, (const char *)cfg + k->offset, buf, size);
}

int config_parse(const char *text, size_t len, const char *name,
		 struct rxb_config *out, char *err, size_t errlen)
{
	struct load l = { .name = name ? name : "(config)", .err = err, .errlen = errlen };
	struct config_scan_ops ops = { .ctx = &l, .section = on_section, .entry = on_entry };
	char why[256] = "";
	int ret, line;

	if (err && errlen)
		err[0] = '\0';
	if (len > CONFIG_MAX_FILE)
		return load_error(&l, 0, -EFBIG, "file too large (more than %d bytes)",
				  CONFIG_MAX_FILE);
	config_defaults(&l.cfg);
	ret = config_scan(text, len, &ops, &line, why, sizeof(why));
	if (ret && why[0])	/* a syntax error; the callbacks wrote their own */
		load_error(&l, line, ret, "%s", why);
	if (!ret)
		ret = check_rules(&l, &l.cfg);
	if (ret)
		return ret;
	*out = l.cfg;
	return 0;
}

int config_load(const char *path, struct rxb_config *out, char *err, size_t errlen)
{
	struct load l = { .name = path, .err = err, .errlen = errlen };
	struct stat st;
	char *buf;
	size_t len = 0;
	int fd, ret;

	if (err && errlen)
		err[0] = '\0';
	/* O_NONBLOCK: a FIFO put in its place must not hang the daemon. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return load_error(&l, 0, -errno, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = load_error(&l, 0, -errno, "cannot stat: %s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = load_error(&l, 0, -EINVAL, "not a regular file");
		goto out_close;
	}
	/* The daemon runs as root: a file anyone can write is a way in. */
	if (st.st_mode & S_IWOTH) {
		ret = load_error(&l, 0, -EPERM, "writable by everyone (chmod o-w it)");
		goto out_close;
	}
	if (st.st_size > CONFIG_MAX_FILE) {
		ret = load_error(&l, 0, -EFBIG, "file too large (more than %d bytes)",
				 CONFIG_MAX_FILE);
		goto out_close;
	}
	buf = malloc(CONFIG_MAX_FILE + 1);
	if (!buf) {
		ret = load_error(&l, 0, -ENOMEM, "out of memory");
		goto out_close;
	}
	/* Read to EOF rather than trusting st_size: the file may be growing. */
	for (;;) {
		ssize_t n = read(fd, buf + len, CONFIG_MAX_FILE + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = load_error(&l, 0, -errno, "read failed: %s", strerror(errno));
			goto out_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_MAX_FILE) {
			ret = load_error(&l, 0, -EFBIG, "file too large (more than %d bytes)",
					 CONFIG_MAX_FILE);
			goto out_free;
		}
	}
	ret = config_parse(buf, len, path, out, err, errlen);
out_free:
	free(buf);
out_close:
	close(fd);
	return ret;
}

int config_diff(const struct rxb_config *old, const struct rxb_config *new,
		config_change_fn fn, void *ctx)
{
	char a[1024], b[1024];
	int n = 0;

	for (size_t i = 0; i < NKEYS; i++) {
		config_format(&keys[i], old, a, sizeof(a));
		config_format(&keys[i], new, b, sizeof(b));
		if (strcmp(a, b) == 0)
			continue;
		n++;
		if (fn)
			fn(ctx, &keys[i], a, b);
	}
	return n;
}

void config_sendsrv_limits(const struct rxb_config *cfg, struct sendsrv_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_frame_bytes = cfg->control.max_frame_bytes;
	lim->max_conns = cfg->control.max_connections;
	lim->max_conns_per_source = cfg->control.max_connections_per_address;
	lim->hello_timeout_ns = cfg->control.hello_timeout_s * RXB_NSEC_PER_SEC;
	lim->idle_timeout_ns = cfg->control.idle_timeout_s * RXB_NSEC_PER_SEC;
	lim->max_out_bytes = (uint32_t)cfg->control.output_queue_bytes;	/* <= 64 MiB */
	lim->rate_change_frac = cfg->control.rate_change_fraction;
	lim->rate_refresh_epochs = cfg->control.push_every_epochs;
	lim->epoch_ms = cfg->measure.interval_ms;
	lim->buffer_advice = cfg->buffer.mode != 0;	/* [buffer] mode not off */
	memcpy(lim->allow, cfg->control.allow.cidr, sizeof(lim->allow));
	lim->n_allow = (size_t)cfg->control.allow.n;
}

void config_from_sendsrv_limits(const struct sendsrv_limits *lim, struct rxb_config *cfg)
{
	cfg->control.max_frame_bytes = lim->max_frame_bytes;
	cfg->control.max_connections = lim->max_conns;
	cfg->control.max_connections_per_address = lim->max_conns_per_source;
	cfg->control.hello_timeout_s = (uint32_t)(lim->hello_timeout_ns / RXB_NSEC_PER_SEC);
	cfg->control.idle_timeout_s = (uint32_t)(lim->idle_timeout_ns / RXB_NSEC_PER_SEC);
	cfg->control.output_queue_bytes = lim->max_out_bytes;
	cfg->control.rate_change_fraction = lim->rate_change_frac;
	cfg->control.push_every_epochs = lim->rate_refresh_epochs;
	cfg->measure.interval_ms = lim->epoch_ms;
	memset(&cfg->control.allow, 0, sizeof(cfg->control.allow));
	memcpy(cfg->control.allow.cidr, lim->allow, lim->n_allow * sizeof(lim->allow[0]));
	cfg->control.allow.n = (int)lim->n_allow;
}
