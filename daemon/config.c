// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckd's configuration file. See config.h for the format and the API.
 *
 * Loading is in three steps, all on one in-memory copy of the file:
 *  1. a pre-scan of our own: line by line, bounded, with line numbers; it
 *     accepts a strict subset of iniparser's syntax and checks sections and
 *     keys against the table (unknown, duplicate);
 *  2. iniparser reads the same bytes (through a memfd) with its error
 *     printing silenced; its view must match the pre-scan's exactly, else
 *     the load fails with -ENOTRECOVERABLE (the fuzzer hunts for that);
 *  3. each value is parsed by its table row into a scratch copy of the
 *     defaults, then cross-key rules are checked; only then is *out written.
 * So every error carries FILE:LINE, and nothing is ever half-applied.
 */
#include "daemon/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <iniparser/iniparser.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"

/* ------------------------------------------------------------ the table -- */

#define FIELD(f) .offset = offsetof(struct rxb_config, f), \
		 .size = sizeof(((struct rxb_config *)0)->f)

#define ROW(S, K, T, F, DEF, FL, DOC) \
	.section = S, .key = K, .type = T, FIELD(F), .def = DEF, .flags = FL, .doc = DOC
#define ROW_UINT(S, K, F, MIN, MAX, DEF, FL, DOC) \
	{ ROW(S, K, CONFIG_UINT, F, DEF, FL, DOC), .lim = { .u = { MIN, MAX } } }
#define ROW_DBL(S, K, F, MIN, MAX, DEF, FL, DOC) \
	{ ROW(S, K, CONFIG_DOUBLE, F, DEF, FL, DOC), .lim = { .d = { MIN, MAX } } }
#define ROW_SI(S, K, F, MIN, MAX, DEF, FL, DOC) \
	{ ROW(S, K, CONFIG_SI, F, DEF, FL, DOC), .lim = { .d = { MIN, MAX } } }
#define ROW_ENUM(S, K, F, NAMES, DEF, FL, DOC) \
	{ ROW(S, K, CONFIG_ENUM, F, DEF, FL, DOC), .lim = { .names = NAMES } }
#define ROW_T(S, K, T, F, DEF, FL, DOC) { ROW(S, K, T, F, DEF, FL, DOC) }

#define RESTART CONFIG_F_RESTART

static const char *const attach_names[] = { "auto", "tp_btf", "raw_tp", "none", NULL };
static const char *const batch_names[] = { "partial", "strict", NULL };
/* In the order of enum bneck_rounds (solver/bneck.h). */
static const char *const rounds_names[] = { "burst", "seed", NULL };
static const char *const episode_names[] = { "off", "measured", NULL };

static const char *const sections[] = {
	"daemon", "measure", "model", "control", "pause", NULL,
};

/*
 * To add a key: a field in struct rxb_config, a row here (in the order of
 * the documentation), and its entry in conf/rxbneckd.conf and
 * docs/config.md - tests/unit/test_config.c fails until all three agree.
 * Rules between keys go in check_rules().
 */
static const struct config_key keys[] = {
	/* [daemon] */
	ROW_T("daemon", "state_dir", CONFIG_PATH, daemon.state_dir, "/var/lib/rxbneckd", RESTART,
	      "Directory for state that survives restarts (stream-count history)."),
	ROW_T("daemon", "runtime_dir", CONFIG_PATH, daemon.runtime_dir, "/run/rxbneckd", RESTART,
	      "Directory for runtime files; created at start-up."),
	ROW_T("daemon", "ctl_socket", CONFIG_PATH, daemon.ctl_socket,
	      "/run/rxbneckd/rxbneckd.sock", RESTART,
	      "Unix socket rxbneckctl talks to."),
	ROW_T("daemon", "ctl_socket_mode", CONFIG_MODE, daemon.ctl_socket_mode, "0660", RESTART,
	      "Permission bits of the control socket (octal)."),
	ROW_T("daemon", "ctl_group", CONFIG_GROUP, daemon.ctl_group, "", RESTART,
	      "Group owning the control socket; empty: the daemon's group."),
	ROW_T("daemon", "log_level", CONFIG_LOG_LEVEL, daemon.log_level, "info", 0,
	      "Least severe message logged: err, warning, notice, info, debug."),

	/* [measure] */
	ROW_UINT("measure", "interval_ms", measure.interval_ms, 10, 60000, "1000", 0,
		 "Epoch length: how often counters are read and the model solved."),
	/* Upper bound: COLLECT_MAX_NET_PROBE_EVERY (checked in daemon.c). */
	ROW_UINT("measure", "net_probe_every", measure.net_probe_every, 1, 3600, "32", 0,
		 "Once learned, attach the per-packet probes one epoch in this many."),
	ROW_UINT("measure", "net_probe_learn_s", measure.net_probe_learn_s, 0, 3600, "15", 0,
		 "Per-packet probes in every epoch for this long after a change."),
	ROW_T("measure", "watch_ports", CONFIG_PORT_LIST, measure.watch_ports, "", 0,
	      "Local ports watched from start-up; senders' hellos add more."),
	ROW_ENUM("measure", "attach", measure.attach, attach_names, "auto", RESTART,
		 "How probes attach: auto, tp_btf, raw_tp, or none (no BPF, degraded)."),
	ROW_T("measure", "bpf_stats", CONFIG_BOOL, measure.bpf_stats, "yes", 0,
	      "Enable kernel.bpf_stats_enabled to measure the probes' own cost."),
	ROW_T("measure", "devices", CONFIG_IFNAME_LIST, measure.devices, "", 0,
	      "Network devices to read; empty: all up, non-loopback devices."),
	ROW_UINT("measure", "fallback_rx_ring", measure.fallback_rx_ring, 1, 1048576, "256", 0,
		 "RX ring size assumed when a device cannot report it."),
	ROW_UINT("measure", "fallback_rx_max_frames", measure.fallback_rx_max_frames, 0, 65536,
		 "1", 0, "Coalescing rx-frames assumed when a device cannot report it."),
	ROW_UINT("measure", "fallback_rx_usecs", measure.fallback_rx_usecs, 0, 1000000, "0", 0,
		 "Coalescing rx-usecs assumed when a device cannot report it."),

	/* [model] */
	ROW_UINT("model", "payload_bytes", model.payload_bytes, 1, 65507, "1468", 0,
		 "Payload per packet assumed until a sender says otherwise."),
	ROW_SI("model", "default_file_bytes", model.default_file_bytes, 1, 1e15, "1G", 0,
	       "Transfer size assumed until a sender says otherwise."),
	ROW_DBL("model", "default_one_way_delay_ms", model.default_one_way_delay_ms, 0, 10000,
		"0.1", 0, "One-way delay assumed until a sender reports its RTT."),
	ROW_SI("model", "line_rate_bps", model.line_rate_bps, 1e3, 1e13, "10G", 0,
	       "Highest sending rate considered (bits/s)."),
	ROW_SI("model", "min_rate_bps", model.min_rate_bps, 1e3, 1e13, "10M", 0,
	       "Lowest sending rate considered (bits/s)."),
	ROW_UINT("model", "sweep_points", model.sweep_points, 2, 100000, "200", 0,
		 "Rates evaluated between min_rate_bps and line_rate_bps."),
	ROW_ENUM("model", "batch_rule", model.batch_rule, batch_names, "partial", 0,
		 "Bulk service rule: partial (min(n, N)) or strict (only with N queued)."),
	ROW_ENUM("model", "rounds", model.rounds, rounds_names, "burst", 0,
		 "Resend rounds: burst (each round a burst the queue partly absorbs) or seed (eq. 3)."),
	ROW_T("model", "queue_depth_cost", CONFIG_BOOL, model.queue_depth_cost, "no", 0,
	      "Serve the receiver at its kept-up cost until its queue overflows, at its saturated cost after."),
	ROW_ENUM("model", "loss_episodes", model.loss_episodes, episode_names, "measured", 0,
		 "Burst rounds: off (a packet lost is a round) or measured (loss comes in episodes of the measured size)."),
	ROW_ENUM("model", "rate_uncertainty", model.rate_uncertainty, episode_names, "off", 0,
		 "off (the receiver's rate is taken as known) or measured (the rate minimises the time expected over its measured spread)."),

	/* [control] */
	ROW_T("control", "listen_address", CONFIG_ADDRESS_LIST, control.listen_address,
	      "127.0.0.1 ::1", RESTART, "Addresses the sender control server listens on."),
	ROW_UINT("control", "port", control.port, 1, 65535, "7440", RESTART,
		 "TCP port of the sender control server."),
	ROW_T("control", "allow", CONFIG_CIDR_LIST, control.allow, "127.0.0.0/8 ::1/128", 0,
	      "Networks senders may connect from; empty: nobody."),
	ROW_UINT("control", "max_connections", control.max_connections, 1, 65536, "1024", 0,
		 "Most sender connections at a time."),
	ROW_UINT("control", "max_frame_bytes", control.max_frame_bytes, 512, 65536, "4096", 0,
		 "Largest frame accepted from a sender."),
	ROW_SI("control", "output_queue_bytes", control.output_queue_bytes, 1024, 67108864,
	       "16Ki", 0, "Bytes queued for one sender before it counts as stuck."),
	ROW_UINT("control", "idle_timeout_s", control.idle_timeout_s, 0, 86400, "60", 0,
		 "Close a sender connection silent for this long; 0: never."),
	ROW_UINT("control", "hello_timeout_s", control.hello_timeout_s, 1, 3600, "5", 0,
		 "Close a connection that has not said hello within this time."),
	ROW_DBL("control", "rate_change_fraction", control.rate_change_fraction, 0, 1, "0.05", 0,
		"Push a new rate when it moved by more than this fraction."),
	ROW_UINT("control", "push_every_epochs", control.push_every_epochs, 0, 3600, "10", 0,
		 "Push the rate at least every this many epochs; 0: only on change."),

	/* [pause] */
	ROW_T("pause", "enabled", CONFIG_BOOL, pause.enabled, "yes", 0,
	      "Predict and announce pause windows."),
	ROW_UINT("pause", "min_window_us", pause.min_window_us, 1, 1000000, "200", 0,
		 "Shorter predicted windows are not announced."),
	ROW_UINT("pause", "max_window_ms", pause.max_window_ms, 1, 60000, "100", 0,
		 "Longer predicted windows are capped to this."),
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
	int line_of[NKEYS];	/* where each key was set; 0: default */
	size_t val_off[NKEYS];	/* the pre-scan's value: offset into the text */
	size_t val_len[NKEYS];	/* ... and length */
	const char *value_of[NKEYS];	/* iniparser's value (points into its dict) */
	int nsections;
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

/* A value shown in a message: at most 40 characters, then "...". */
static const char *show(const char *val, char *buf, size_t size)
{
	size_t len = strlen(val);

	if (len < 40 && len < size) {
		memcpy(buf, val, len + 1);
		return buf;
	}
	snprintf(buf, size, "%.37s...", val);
	return buf;
}

/* ------------------------------------------------- step 1: the pre-scan -- */

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

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_name_char(char c, bool dash_ok)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (dash_ok && c == '-');
}

/* Trim blanks at both ends of s[0..*len) in place; returns the new start. */
static char *trim(char *s, size_t *len)
{
	while (*len && is_blank(s[*len - 1]))
		(*len)--;
	s[*len] = '\0';
	while (*len && is_blank(*s)) {
		s++;
		(*len)--;
	}
	return s;
}

/* Check and lowercase a section or key name; NULL or the problem. */
static const char *check_name(char *name, bool dash_ok)
{
	size_t len = strlen(name);

	if (len == 0)
		return "empty name";
	if (len > CONFIG_MAX_NAME)
		return "name too long";
	for (size_t i = 0; i < len; i++) {
		if (!is_name_char(name[i], dash_ok))
			return dash_ok ? "names may only contain letters, digits, '_' and '-'"
				       : "names may only contain letters, digits and '_'";
		name[i] = (char)tolower((unsigned char)name[i]);
	}
	return NULL;
}

/*
 * Split the part after '=' into the value. Returns NULL or the problem.
 * Quoted values keep everything between the quotes; after the closing
 * quote only blanks and a comment may follow. Unquoted values end at '#'
 * or ';' and lose surrounding blanks, as iniparser does.
 */
static const char *split_value(char *rest, char **value)
{
	size_t len;

	while (is_blank(*rest))
		rest++;
	if (*rest == '"' || *rest == '\'') {
		char quote = *rest;
		char *end = strchr(rest + 1, quote);

		if (!end)
			return "unterminated quoted value";
		*end = '\0';
		*value = rest + 1;
		for (end++; is_blank(*end); end++)
			;
		if (*end && *end != '#' && *end != ';')
			return "text after the closing quote";
		return NULL;
	}
	len = strcspn(rest, "#;");
	rest[len] = '\0';
	*value = trim(rest, &len);
	if (strpbrk(*value, "\"'"))
		return "quote inside an unquoted value";
	return NULL;
}

/* Bytes a line may hold: printable ASCII and tab; others only in comments. */
static int check_bytes(struct load *l, int lineno, const char *s, size_t len, bool *high)
{
	*high = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0')
			return load_error(l, lineno, -EINVAL, "syntax error: NUL byte");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return load_error(l, lineno, -EINVAL,
					  "syntax error: control character 0x%02x", c);
		if (c >= 0x80)
			*high = true;
	}
	return 0;
}

static int scan_section(struct load *l, int lineno, char *s, size_t len, int *cur)
{
	size_t nlen;
	const char *why;
	char *name;
	int idx;

	if (len < 2 || s[len - 1] != ']')
		return load_error(l, lineno, -EINVAL,
				  "syntax error: a section header is \"[name]\" alone on its line");
	nlen = len - 2;
	name = trim(s + 1, &nlen);
	why = check_name(name, true);
	if (why)
		return load_error(l, lineno, -EINVAL, "syntax error in section header: %s", why);
	idx = section_index(name);
	if (idx < 0) {
		char known[128] = "";

		for (int i = 0; sections[i]; i++) {
			size_t kl = strlen(known);

			snprintf(known + kl, sizeof(known) - kl, "%s[%s]", i ? ", " : "",
				 sections[i]);
		}
		return load_error(l, lineno, -EINVAL, "unknown section [%s] (known: %s)",
				  name, known);
	}
	if (l->section_line[idx])
		return load_error(l, lineno, -EINVAL,
				  "section [%s] given twice (first on line %d)",
				  name, l->section_line[idx]);
	l->section_line[idx] = lineno;
	l->nsections++;
	*cur = idx;
	return 0;
}

/* @s lies in a copy of the line that starts at offset @base of the text. */
static int scan_entry(struct load *l, int lineno, char *s, const char *copy, size_t base,
		      int cur)
{
	char *eq = strchr(s, '=');
	const char *why, *hint;
	char *key, *value;
	size_t klen;
	int idx;

	if (!eq)
		return load_error(l, lineno, -EINVAL,
				  "syntax error: expected \"key = value\", \"[section]\" or a comment");
	*eq = '\0';
	klen = (size_t)(eq - s);
	key = trim(s, &klen);
	why = check_name(key, false);
	if (why)
		return load_error(l, lineno, -EINVAL, "syntax error in key: %s", why);
	if (cur < 0)
		return load_error(l, lineno, -EINVAL,
				  "%s: key outside any section (put it under [section])", key);
	why = split_value(eq + 1, &value);
	if (why)
		return load_error(l, lineno, -EINVAL, "[%s] %s: syntax error: %s",
				  sections[cur], key, why);
	idx = key_index(sections[cur], key);
	if (idx < 0) {
		hint = suggest_key(sections[cur], key);
		return load_error(l, lineno, -EINVAL, "[%s] %s: unknown key%s%s%s",
				  sections[cur], key, hint ? " (did you mean " : "",
				  hint ? hint : "", hint ? "?)" : "");
	}
	if (l->line_of[idx])
		return load_error(l, lineno, -EINVAL, "[%s] %s: given twice (first on line %d)",
				  sections[cur], key, l->line_of[idx]);
	l->line_of[idx] = lineno;
	/* Kept to compare with what iniparser reads (step 2). */
	l->val_off[idx] = base + (size_t)(value - copy);
	l->val_len[idx] = strlen(value);
	return 0;
}

/*
 * One physical line, text[base..base + len) without its '\n'; *cur is the
 * current section index.
 */
static int scan_line(struct load *l, int lineno, const char *text, size_t base, size_t len,
		     int *cur)
{
	const char *raw = text + base;
	char buf[CONFIG_MAX_LINE + 1];
	bool high;
	char *s;
	int err;

	if (len && raw[len - 1] == '\r')
		len--;		/* CRLF */
	if (len > CONFIG_MAX_LINE)
		return load_error(l, lineno, -EINVAL, "line too long (more than %d bytes)",
				  CONFIG_MAX_LINE);
	err = check_bytes(l, lineno, raw, len, &high);
	if (err)
		return err;
	memcpy(buf, raw, len);
	s = trim(buf, &len);
	/* iniparser would join the next line to this one, even to a comment. */
	if (len && s[len - 1] == '\\')
		return load_error(l, lineno, -EINVAL,
				  "syntax error: '\\' at the end of a line (continuation lines "
				  "are not supported)");
	if (len == 0 || s[0] == '#' || s[0] == ';')
		return 0;
	if (high) {
		/* Allowed in inline comments, not in names or values. */
		size_t code = s[0] == '[' ? len : strcspn(s, "#;");
		const char *q = strpbrk(s, "\"'");

		if (q && (size_t)(q - s) < code)
			code = len;	/* quoted values may hold '#' or ';' */
		for (size_t i = 0; i < code; i++)
			if ((unsigned char)s[i] >= 0x80)
				return load_error(l, lineno, -EINVAL,
						  "syntax error: non-ASCII byte outside a comment");
	}
	if (s[0] == '[')
		return scan_section(l, lineno, s, len, cur);
	return scan_entry(l, lineno, s, buf, base, *cur);
}

static int prescan(struct load *l, const char *text, size_t len)
{
	int lineno = 0, cur = -1;
	size_t pos = 0;
	int err;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		lineno++;
		err = scan_line(l, lineno, text, pos, end - pos, &cur);
		if (err)
			return err;
		pos = end + 1;
	}
	return 0;
}

/* ------------------------------------- step 2: iniparser on the same bytes -- */

/* iniparser prints its complaints; the pre-scan has reported them already. */
static int ini_quiet(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

/*
 * Run iniparser over @text and check it sees exactly the pre-scanned
 * entries; on success *dict holds the values (l->value_of points into it).
 */
static int ini_load(struct load *l, const char *text, size_t len, dictionary **dict)
{
	char path[64], full[2 * CONFIG_MAX_NAME + 2];
	dictionary *d;
	int fd, err, nkeys[RXB_ARRAY_SIZE(sections)] = { 0 };

	fd = memfd_create("rxbneckd-config", MFD_CLOEXEC);
	if (fd < 0)
		return load_error(l, 0, -errno, "cannot make an in-memory copy: %s",
				  strerror(errno));
	err = rxb_write_all(fd, text, len);
	if (err) {
		close(fd);
		return load_error(l, 0, err, "cannot make an in-memory copy: %s", strerror(-err));
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* iniparser's callback is process-wide: set it only around the call. */
	iniparser_set_error_callback(ini_quiet);
	d = iniparser_load(path);
	iniparser_set_error_callback(NULL);
	close(fd);
	if (!d)
		return load_error(l, 0, -ENOTRECOVERABLE,
				  "iniparser rejected a file the pre-scan accepted");

	for (size_t i = 0; i < NKEYS; i++) {
		if (!l->line_of[i])
			continue;
		snprintf(full, sizeof(full), "%s:%s", keys[i].section, keys[i].key);
		l->value_of[i] = iniparser_getstring(d, full, NULL);
		if (!l->value_of[i] || strlen(l->value_of[i]) != l->val_len[i] ||
		    memcmp(l->value_of[i], text + l->val_off[i], l->val_len[i]) != 0) {
			iniparser_freedict(d);
			return load_error(l, l->line_of[i], -ENOTRECOVERABLE,
					  "[%s] %s: iniparser read this line differently",
					  keys[i].section, keys[i].key);
		}
		nkeys[section_index(keys[i].section)]++;
	}
	/* Nothing more either: same sections, same number of keys in each. */
	err = iniparser_getnsec(d) == l->nsections ? 0 : -ENOTRECOVERABLE;
	for (int s = 0; !err && sections[s]; s++)
		if (l->section_line[s] && iniparser_getsecnkeys(d, sections[s]) != nkeys[s])
			err = -ENOTRECOVERABLE;
	if (err) {
		iniparser_freedict(d);
		return load_error(l, 0, err, "iniparser and the pre-scan disagree about the file");
	}
	*dict = d;
	return 0;
}

/* ------------------------------------------------ step 3: typed values -- */

/* What a key accepts, for "(expected ...)". */
static void describe(const struct config_key *k, char *buf, size_t size);

static void store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)field = (uint8_t)v; break;
	case 2: *(uint16_t *)field = (uint16_t)v; break;
	case 4: *(uint32_t *)field = (uint32_t)v; break;
	default: *(uint64_t *)field = v; break;
	}
}

static uint64_t load_uint(const void *field, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)field;
	case 2: return *(const uint16_t *)field;
	case 4: return *(const uint32_t *)field;
	default: return *(const uint64_t *)field;
	}
}

/* Plain decimal: no sign, no leading zeros (strtoull would read "010" as 8). */
static int parse_decimal_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || (s[0] == '0' && s[1]))
		return -EINVAL;
	return rxb_parse_u64(s, min, max, out);
}

/* Next token of a list separated by blanks and/or commas; NULL at the end. */
static const char *next_token(const char **p, char *tok, size_t size, bool *too_long)
{
	const char *s = *p;
	size_t n;

	s += strspn(s, " \t,");
	if (!*s)
		return NULL;
	n = strcspn(s, " \t,");
	*too_long = n >= size;
	snprintf(tok, size, "%.*s", (int)(n < size ? n : size - 1), s);
	*p = s + n;
	return tok;
}

/* Parse an IPv4/IPv6 literal into @bytes (16 bytes); its width in bits or -EINVAL. */
static int parse_ip(const char *s, uint8_t *bytes, int *family)
{
	memset(bytes, 0, 16);
	if (inet_pton(AF_INET, s, bytes) == 1) {
		*family = AF_INET;
		return 32;
	}
	if (inet_pton(AF_INET6, s, bytes) == 1) {
		*family = AF_INET6;
		return 128;
	}
	return -EINVAL;
}

static int format_cidr(const struct sendsrv_cidr *c, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(c->family, c->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	return snprintf(buf, size, "%s/%u", a, c->prefix_len);
}

/*
 * One network. The control server's parser decides (one definition of an
 * allow-list entry in the daemon); this adds strictness on the prefix
 * ("/08", "/0x8" are refused) and messages that name what was meant.
 */
static int parse_cidr(const char *tok, struct sendsrv_cidr *c, char *why, size_t wlen)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(tok, '/');
	size_t alen = slash ? (size_t)(slash - tok) : strlen(tok);
	struct sendsrv_cidr net;
	uint64_t plen;
	int bits;

	bits = -EINVAL;
	if (alen < sizeof(addr)) {
		memcpy(addr, tok, alen);
		addr[alen] = '\0';
		bits = parse_ip(addr, net.addr, &net.family);
	}
	if (bits < 0) {
		snprintf(why, wlen, "'%s' is not an IPv4 or IPv6 network", tok);
		return -EINVAL;
	}
	plen = (uint64_t)bits;
	if (slash && parse_decimal_u64(slash + 1, 0, (uint64_t)bits, &plen)) {
		snprintf(why, wlen, "'%s': bad prefix length (0..%d)", tok, bits);
		return -EINVAL;
	}
	if (sendsrv_cidr_parse(tok, c, NULL) == 0)
		return 0;
	/* The address and prefix are fine, so host bits are set: show the network. */
	net.prefix_len = (uint8_t)plen;
	for (int i = net.prefix_len; i < bits; i++)
		net.addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	format_cidr(&net, addr, sizeof(addr));
	snprintf(why, wlen, "'%s' has host bits set (the network is %s)", tok, addr);
	return -EINVAL;
}

static int parse_cidr_list(const char *val, struct rxb_cidr_list *out, char *why, size_t wlen)
{
	struct rxb_cidr_list list;
	char tok[2 * INET6_ADDRSTRLEN];
	bool too_long;

	memset(&list, 0, sizeof(list));
	while (next_token(&val, tok, sizeof(tok), &too_long)) {
		struct sendsrv_cidr c;

		if (too_long) {
			snprintf(why, wlen, "'%s...' is not an IPv4 or IPv6 network", tok);
			return -EINVAL;
		}
		if (parse_cidr(tok, &c, why, wlen))
			return -EINVAL;
		for (int i = 0; i < list.n; i++) {
			if (list.cidr[i].prefix_len == c.prefix_len &&
			    list.cidr[i].family == c.family &&
			    memcmp(list.cidr[i].addr, c.addr, sizeof(c.addr)) == 0) {
				snprintf(why, wlen, "'%s' is listed twice", tok);
				return -EINVAL;
			}
		}
		if (list.n == RXB_CONF_MAX_CIDRS) {
			snprintf(why, wlen, "more than %d networks", RXB_CONF_MAX_CIDRS);
			return -ERANGE;
		}
		list.cidr[list.n++] = c;
	}
	*out = list;
	return 0;
}

static int parse_addr_list(const char *val, struct rxb_addr_list *out, char *why, size_t wlen)
{
	struct rxb_addr_list list;
	char tok[INET6_ADDRSTRLEN + 1];
	bool too_long;

	memset(&list, 0, sizeof(list));
	while (next_token(&val, tok, sizeof(tok), &too_long)) {
		uint8_t bytes[16];
		char canon[INET6_ADDRSTRLEN];
		int family;

		if (too_long || parse_ip(tok, bytes, &family) < 0) {
			snprintf(why, wlen, "'%s%s' is not an IPv4 or IPv6 address", tok,
				 too_long ? "..." : "");
			return -EINVAL;
		}
		/* Stored in canonical form, so "::0:1" and "::1" are the same. */
		if (!inet_ntop(family, bytes, canon, sizeof(canon))) {
			snprintf(why, wlen, "'%s': %s", tok, strerror(errno));
			return -EINVAL;
		}
		for (int i = 0; i < list.n; i++) {
			if (strcmp(list.addr[i], canon) == 0) {
				snprintf(why, wlen, "'%s' is listed twice", tok);
				return -EINVAL;
			}
		}
		if (list.n == RXB_CONF_MAX_LISTEN) {
			snprintf(why, wlen, "more than %d addresses", RXB_CONF_MAX_LISTEN);
			return -ERANGE;
		}
		memcpy(list.addr[list.n++], canon, sizeof(canon));
	}
	if (list.n == 0) {
		snprintf(why, wlen, "at least one address is needed");
		return -EINVAL;
	}
	*out = list;
	return 0;
}

static int parse_port_list(const char *val, struct rxb_port_list *out, char *why, size_t wlen)
{
	struct rxb_port_list list;
	char tok[16];
	bool too_long;
	uint64_t v;

	memset(&list, 0, sizeof(list));
	while (next_token(&val, tok, sizeof(tok), &too_long)) {
		if (too_long || parse_decimal_u64(tok, 1, 65535, &v)) {
			snprintf(why, wlen, "'%s%s' is not a port 1..65535", tok,
				 too_long ? "..." : "");
			return -EINVAL;
		}
		for (int i = 0; i < list.n; i++) {
			if (list.port[i] == v) {
				snprintf(why, wlen, "port %s is listed twice", tok);
				return -EINVAL;
			}
		}
		if (list.n == RXB_CONF_MAX_PORTS) {
			snprintf(why, wlen, "more than %d ports", RXB_CONF_MAX_PORTS);
			return -ERANGE;
		}
		list.port[list.n++] = (uint16_t)v;
	}
	*out = list;
	return 0;
}

/* Linux's rules for device names (dev_valid_name), minus the length. */
static bool ifname_valid(const char *s)
{
	if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return false;
	return true;
}

static int parse_ifname_list(const char *val, struct rxb_ifname_list *out,
			     char *why, size_t wlen)
{
	struct rxb_ifname_list list;
	char tok[RXB_IFNAME_LEN];
	bool too_long;

	memset(&list, 0, sizeof(list));
	while (next_token(&val, tok, sizeof(tok), &too_long)) {
		if (too_long || !ifname_valid(tok)) {
			snprintf(why, wlen, "'%s%s' is not a device name", tok,
				 too_long ? "..." : "");
			return -EINVAL;
		}
		for (int i = 0; i < list.n; i++) {
			if (strcmp(list.name[i], tok) == 0) {
				snprintf(why, wlen, "device %s is listed twice", tok);
				return -EINVAL;
			}
		}
		if (list.n == RXB_CONF_MAX_DEVICES) {
			snprintf(why, wlen, "more than %d devices", RXB_CONF_MAX_DEVICES);
			return -ERANGE;
		}
		rxb_strlcpy(list.name[list.n++], tok, RXB_IFNAME_LEN);
	}
	*out = list;
	return 0;
}

static int parse_path(const char *val, char *field, size_t size, char *why, size_t wlen)
{
	size_t len = strlen(val);
	const char *p;

	if (val[0] != '/') {
		snprintf(why, wlen, "'%s' is not an absolute path", val);
		return -EINVAL;
	}
	if (len >= size) {
		snprintf(why, wlen, "path is %zu bytes long", len);
		return -ERANGE;
	}
	/* Legal in file names, but here surely a mistake in a quoted value. */
	if (strchr(val, '\t') || val[len - 1] == ' ') {
		snprintf(why, wlen, "tab or trailing blank in path");
		return -EINVAL;
	}
	/* No "." or ".." components: the path means what it says. */
	for (p = val; p; p = strchr(p + 1, '/')) {
		size_t n = strcspn(p + 1, "/");

		if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.')) {
			snprintf(why, wlen, "'.' and '..' are not allowed in paths");
			return -EINVAL;
		}
	}
	memcpy(field, val, len + 1);
	return 0;
}

static int parse_mode(const char *val, uint32_t *out)
{
	size_t len = strlen(val);
	uint32_t v = 0;

	if (len < 3 || len > 4 || strspn(val, "01234567") != len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		v = v * 8 + (uint32_t)(val[i] - '0');
	if (v > 0777)
		return -ERANGE;
	*out = v;
	return 0;
}

static int lookup_group(const char *name, gid_t *gid)
{
	struct group gr, *res = NULL;
	size_t size = 4096;
	char *buf;
	int err;

	for (;;) {
		buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		err = getgrnam_r(name, &gr, buf, size, &res);
		if (err != ERANGE || size >= (1u << 20))
			break;
		free(buf);
		size *= 4;
	}
	if (!err && res)
		*gid = res->gr_gid;
	free(buf);
	if (err)
		return -err;
	return res ? 0 : -ENOENT;
}

static int parse_group(const char *val, struct rxb_group *out, char *why, size_t wlen)
{
	struct rxb_group g;
	size_t len = strlen(val);
	int err;

	memset(&g, 0, sizeof(g));
	g.gid = (gid_t)-1;
	if (len == 0) {
		*out = g;
		return 0;
	}
	if (len >= sizeof(g.name) || val[0] == '-' ||
	    strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len) {
		snprintf(why, wlen, "'%s' is not a group name", val);
		return -EINVAL;
	}
	err = lookup_group(val, &g.gid);
	if (err == -ENOENT) {
		snprintf(why, wlen, "no group named '%s'", val);
		return -EINVAL;
	}
	if (err) {
		snprintf(why, wlen, "cannot look up group '%s': %s", val, strerror(-err));
		return err;
	}
	memcpy(g.name, val, len + 1);
	*out = g;
	return 0;
}

static int parse_enum(const char *const *names, const char *val, int *out)
{
	for (int i = 0; names[i]; i++) {
		if (strcasecmp(names[i], val) == 0) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_log_level(const char *val, int *out)
{
	char low[16];
	size_t len = strlen(val);
	int lvl;

	if (len >= sizeof(low))
		return -EINVAL;
	for (size_t i = 0; i <= len; i++)
		low[i] = (char)tolower((unsigned char)val[i]);
	lvl = rxb_log_level_parse(low);
	if (lvl < 0)
		return -EINVAL;
	*out = lvl;
	return 0;
}

/*
 * Parse @val for @k into its field of @cfg. 0, or -EINVAL/-ERANGE with the
 * problem in @why (without the "(expected ...)" part).
 */
static int parse_value(const struct config_key *k, const char *val, struct rxb_config *cfg,
		       char *why, size_t wlen)
{
	void *field = (char *)cfg + k->offset;
	char shown[48];
	uint64_t u;
	double d;
	bool b;
	int err, i;

	why[0] = '\0';
	switch (k->type) {
	case CONFIG_UINT:
		err = parse_decimal_u64(val, k->lim.u.min, k->lim.u.max, &u);
		if (!err)
			store_uint(field, k->size, u);
		break;
	case CONFIG_DOUBLE:
		err = rxb_parse_double(val, k->lim.d.min, k->lim.d.max, &d);
		if (!err)
			*(double *)field = d;
		break;
	case CONFIG_SI:
		err = rxb_parse_si(val, k->lim.d.min, k->lim.d.max, &d);
		if (!err && d != floor(d)) {
			snprintf(why, wlen, "'%s' is not a whole number", show(val, shown,
									      sizeof(shown)));
			err = -EINVAL;
		}
		if (!err)
			*(uint64_t *)field = (uint64_t)d;
		break;
	case CONFIG_BOOL:
		err = rxb_parse_bool(val, &b);
		if (!err)
			*(bool *)field = b;
		break;
	case CONFIG_PATH:
		err = parse_path(val, field, k->size, why, wlen);
		break;
	case CONFIG_ENUM:
		err = parse_enum(k->lim.names, val, &i);
		if (!err)
			*(int *)field = i;
		break;
	case CONFIG_PORT_LIST:
		err = parse_port_list(val, field, why, wlen);
		break;
	case CONFIG_CIDR_LIST:
		err = parse_cidr_list(val, field, why, wlen);
		break;
	case CONFIG_IFNAME_LIST:
		err = parse_ifname_list(val, field, why, wlen);
		break;
	case CONFIG_ADDRESS_LIST:
		err = parse_addr_list(val, field, why, wlen);
		break;
	case CONFIG_MODE:
		err = parse_mode(val, field);
		break;
	case CONFIG_GROUP:
		err = parse_group(val, field, why, wlen);
		break;
	case CONFIG_LOG_LEVEL:
		err = parse_log_level(val, &i);
		if (!err)
			*(int *)field = i;
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (err && !why[0]) {
		if (!*val)
			snprintf(why, wlen, "empty value");
		else if (err == -ERANGE)
			snprintf(why, wlen, "'%s' is out of range", show(val, shown, sizeof(shown)));
		else
			snprintf(why, wlen, "'%s' is not valid", show(val, shown, sizeof(shown)));
	}
	return err;
}

/* ---------------------------------------------------- formatting values -- */

/* Canonical quantity: the largest exact decimal suffix, else binary, else none. */
static int format_si(uint64_t v, char *buf, size_t size)
{
	static const struct { const char *sfx; uint64_t mult; } units[] = {
		{ "T", 1000000000000ULL }, { "G", 1000000000ULL }, { "M", 1000000ULL },
		{ "k", 1000ULL }, { "Ti", 1ULL << 40 }, { "Gi", 1ULL << 30 },
		{ "Mi", 1ULL << 20 }, { "Ki", 1ULL << 10 },
	};

	for (size_t i = 0; v && i < RXB_ARRAY_SIZE(units); i++)
		if (v % units[i].mult == 0)
			return snprintf(buf, size, "%llu%s",
					(unsigned long long)(v / units[i].mult), units[i].sfx);
	return snprintf(buf, size, "%llu", (unsigned long long)v);
}

/* Shortest "%g" form that reads back as the same double. */
static int format_double(double v, char *buf, size_t size)
{
	char tmp[64];

	for (int prec = 6; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	return snprintf(buf, size, "%s", tmp);
}

int config_format(const struct config_key *k, const struct rxb_config *cfg,
		  char *buf, size_t size)
{
	const void *field = (const char *)cfg + k->offset;
	const struct rxb_port_list *pl;
	const struct rxb_cidr_list *cl;
	const struct rxb_ifname_list *il;
	const struct rxb_addr_list *al;
	char tmp[INET6_ADDRSTRLEN + 8];
	size_t len = 0;
	int idx;

	if (size)
		buf[0] = '\0';
	switch (k->type) {
	case CONFIG_UINT:
		return snprintf(buf, size, "%llu", (unsigned long long)load_uint(field, k->size));
	case CONFIG_DOUBLE:
		return format_double(*(const double *)field, buf, size);
	case CONFIG_SI:
		return format_si(*(const uint64_t *)field, buf, size);
	case CONFIG_BOOL:
		return snprintf(buf, size, "%s", *(const bool *)field ? "yes" : "no");
	case CONFIG_PATH:
		return snprintf(buf, size, "%s", (const char *)field);
	case CONFIG_ENUM:
		idx = *(const int *)field;
		for (int i = 0; k->lim.names[i]; i++)
			if (i == idx)
				return snprintf(buf, size, "%s", k->lim.names[i]);
		return snprintf(buf, size, "%d", idx);
	case CONFIG_PORT_LIST:
		pl = field;
		for (int i = 0; i < pl->n; i++)
			len += (size_t)snprintf(buf + (len < size ? len : size),
						len < size ? size - len : 0, "%s%u",
						i ? " " : "", pl->port[i]);
		return (int)len;
	case CONFIG_CIDR_LIST:
		cl = field;
		for (int i = 0; i < cl->n; i++) {
			format_cidr(&cl->cidr[i], tmp, sizeof(tmp));
			len += (size_t)snprintf(buf + (len < size ? len : size),
						len < size ? size - len : 0, "%s%s",
						i ? " " : "", tmp);
		}
		return (int)len;
	case CONFIG_IFNAME_LIST:
		il = field;
		for (int i = 0; i < il->n; i++)
			len += (size_t)snprintf(buf + (len < size ? len : size),
						len < size ? size - len : 0, "%s%s",
						i ? " " : "", il->name[i]);
		return (int)len;
	case CONFIG_ADDRESS_LIST:
		al = field;
		for (int i = 0; i < al->n; i++)
			len += (size_t)snprintf(buf + (len < size ? len : size),
						len < size ? size - len : 0, "%s%s",
						i ? " " : "", al->addr[i]);
		return (int)len;
	case CONFIG_MODE:
		return snprintf(buf, size, "%04o", *(const uint32_t *)field);
	case CONFIG_GROUP:
		return snprintf(buf, size, "%s", ((const struct rxb_group *)field)->name);
	case CONFIG_LOG_LEVEL:
		return snprintf(buf, size, "%s", rxb_log_level_name(*(const int *)field));
	}
	return snprintf(buf, size, "?");
}

static void describe(const struct config_key *k, char *buf, size_t size)
{
	char lo[32], hi[32];
	size_t len;

	switch (k->type) {
	case CONFIG_UINT:
		snprintf(buf, size, "a whole number %llu..%llu",
			 (unsigned long long)k->lim.u.min, (unsigned long long)k->lim.u.max);
		break;
	case CONFIG_DOUBLE:
		format_double(k->lim.d.min, lo, sizeof(lo));
		format_double(k->lim.d.max, hi, sizeof(hi));
		snprintf(buf, size, "a number %s..%s", lo, hi);
		break;
	case CONFIG_SI:
		format_si((uint64_t)k->lim.d.min, lo, sizeof(lo));
		format_si((uint64_t)k->lim.d.max, hi, sizeof(hi));
		snprintf(buf, size, "a whole number %s..%s, suffixes k M G T (10^3...) "
			 "or Ki Mi Gi Ti (2^10...)", lo, hi);
		break;
	case CONFIG_BOOL:
		snprintf(buf, size, "yes or no");
		break;
	case CONFIG_PATH:
		snprintf(buf, size, "an absolute path shorter than %zu bytes", k->size);
		break;
	case CONFIG_ENUM:
		len = (size_t)snprintf(buf, size, "one of:");
		for (int i = 0; k->lim.names[i] && len < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s %s", i ? "," : "",
						k->lim.names[i]);
		break;
	case CONFIG_PORT_LIST:
		snprintf(buf, size, "up to %d distinct ports 1..65535, separated by blanks "
			 "or commas", RXB_CONF_MAX_PORTS);
		break;
	case CONFIG_CIDR_LIST:
		snprintf(buf, size, "up to %d networks like 192.0.2.0/24 or 2001:db8::/32 "
			 "without host bits", RXB_CONF_MAX_CIDRS);
		break;
	case CONFIG_IFNAME_LIST:
		snprintf(buf, size, "up to %d distinct device names of at most %d characters",
			 RXB_CONF_MAX_DEVICES, RXB_IFNAME_LEN - 1);
		break;
	case CONFIG_ADDRESS_LIST:
		snprintf(buf, size, "1 to %d IPv4 or IPv6 addresses", RXB_CONF_MAX_LISTEN);
		break;
	case CONFIG_MODE:
		snprintf(buf, size, "octal permission bits 000..0777, like 0660");
		break;
	case CONFIG_GROUP:
		snprintf(buf, size, "an existing group's name, or nothing");
		break;
	case CONFIG_LOG_LEVEL:
		snprintf(buf, size, "one of: err, warning, notice, info, debug");
		break;
	}
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
		if (parse_value(&keys[i], keys[i].def, cfg, why, sizeof(why)))
			rxb_err("config: bad built-in default [%s] %s: %s",
				keys[i].section, keys[i].key, why);
}

int config_parse(const char *text, size_t len, const char *name,
		 struct rxb_config *out, char *err, size_t errlen)
{
	struct load l = { .name = name ? name : "(config)", .err = err, .errlen = errlen };
	struct rxb_config cfg;
	dictionary *dict = NULL;
	char why[160], want[160];
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (len > CONFIG_MAX_FILE)
		return load_error(&l, 0, -EFBIG, "file too large (more than %d bytes)",
				  CONFIG_MAX_FILE);
	ret = prescan(&l, text, len);
	if (ret)
		return ret;
	ret = ini_load(&l, text, len, &dict);
	if (ret)
		return ret;

	config_defaults(&cfg);
	for (size_t i = 0; i < NKEYS && !ret; i++) {
		if (!l.line_of[i])
			continue;
		ret = parse_value(&keys[i], l.value_of[i], &cfg, why, sizeof(why));
		if (ret) {
			describe(&keys[i], want, sizeof(want));
			load_error(&l, l.line_of[i], ret, "[%s] %s: %s (expected %s)",
				   keys[i].section, keys[i].key, why, want);
		}
	}
	iniparser_freedict(dict);	/* l.value_of points into it: done with them */
	if (!ret)
		ret = check_rules(&l, &cfg);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	*out = cfg;
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
	lim->hello_timeout_ns = cfg->control.hello_timeout_s * RXB_NSEC_PER_SEC;
	lim->idle_timeout_ns = cfg->control.idle_timeout_s * RXB_NSEC_PER_SEC;
	lim->max_out_bytes = (uint32_t)cfg->control.output_queue_bytes;	/* <= 64 MiB */
	lim->rate_change_frac = cfg->control.rate_change_fraction;
	lim->rate_refresh_epochs = cfg->control.push_every_epochs;
	lim->epoch_ms = cfg->measure.interval_ms;
	memcpy(lim->allow, cfg->control.allow.cidr, sizeof(lim->allow));
	lim->n_allow = (size_t)cfg->control.allow.n;
}
