/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckd's state directory ([daemon] state_dir): the only place the
 * daemon writes files (the control socket aside).
 *
 * It holds flows.state, the receive-path costs each watched port learned
 * (struct learn: receiver CPU ns per packet, packets per wake-up,
 * truesize per packet, rcvbuf, the receiver's CPUs, the NAPI path's
 * costs). These are load-independent properties of the receiving
 * application and host, so a restarted daemon (or a port that comes back)
 * can model a flow before its first packet, flagged "history" with the
 * age (docs/daemon.md).
 *
 * Format: text, one line per port, written by the daemon only:
 *	# comment
 *	port=9000 saved=1763770000 cpu_ns_per_pkt=1523.4 ...
 * Values are restored as worth the minimum weight of fresh data
 * (LEARN_MIN_PKTS packets, ...), so the first epochs of real traffic replace
 * them quickly. A line that does not parse is skipped with a warning; the
 * file is at most STATE_MAX_FILE bytes and STATE_MAX_PORTS lines.
 *
 * The file is opened without following links and without blocking, and
 * read only when it is a regular file: a FIFO or device in its place is
 * reported and ignored (the next save replaces it). Writes are atomic (a
 * fresh temporary file, fsync, rename, fsync of the directory). Problems
 * are logged and kept in s->err until a save succeeds (status: health
 * degraded, with the reason); the daemon runs on meanwhile.
 */
#ifndef RXB_DAEMON_STATE_H
#define RXB_DAEMON_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/model/learn.h"

#define STATE_FILE		"flows.state"
#define STATE_MAX_PORTS		64
#define STATE_MAX_FILE		(64 * 1024)
#define STATE_MAX_LINE		512
#define STATE_ERR_LEN		512

struct state_entry {
	uint16_t port;
	uint64_t saved_unix_s;
	struct learn learn;
};

struct state {
	char dir[256];
	int dirfd;			/* -1: unusable (see err) */
	int n;
	struct state_entry v[STATE_MAX_PORTS];
	bool dirty;
	uint64_t saves, save_failures;
	char err[STATE_ERR_LEN];	/* problem since the last save, "" if none */
};

/*
 * Create @dir (mode 0750) if missing, open it, load flows.state. Returns 0,
 * or -errno when the directory is unusable (the state is then empty and
 * state_save() does nothing; the reason is in s->err).
 */
int state_open(struct state *s, const char *dir);
/* Save if dirty, close. */
void state_close(struct state *s);

/* What @port learned in an earlier run (origin VALUE_HISTORY, its age). */
bool state_history_get(struct state *s, uint16_t port, struct learn *out);
/*
 * The most recently saved costs of a port other than @not_port (another
 * flow on this host, for prior.h): into @out and @port_out, or false.
 */
bool state_history_newest(struct state *s, uint16_t not_port, struct learn *out,
			  uint16_t *port_out);
/* Remember @l for @port (measured in this run); marks the state dirty. */
void state_history_put(struct state *s, uint16_t port, const struct learn *l);

/* Write flows.state if dirty. 0 or -errno (logged, kept in s->err). */
int state_save(struct state *s);

/*
 * The entries of a flows.state file's text (@len bytes; text[len] must be
 * writable, it is cut there): returns the lines skipped as unreadable or
 * beyond STATE_MAX_PORTS. For load and the fuzzer.
 */
int state_load_text(struct state *s, char *text, size_t len);
/* Parse one line of flows.state (tests, fuzzing): 0 or -EINVAL. */
int state_parse_line(const char *line, struct state_entry *out);
/* Format one entry as a line (with '\n'); snprintf-style length. */
int state_format_line(const struct state_entry *e, char *buf, size_t size);

#endif
