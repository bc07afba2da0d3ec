/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stream-count advisor's history in the state directory ([daemon]
 * state_dir): streams.state, the samples per peer and stream count
 * (struct advisor_bucket), so that a restarted daemon advises from what
 * earlier runs saw.
 *
 * Format: text, one line per bucket, written by the daemon only:
 *	# comment
 *	peer=192.0.2.7 port=5201 n=4 count=12 weight=12.5 mean=9.5e+08
 *	    m2=1.2e+14 first=1763770000 last=1763770100 from=passive,sender
 * (one line). The file is untrusted input when read: at most
 * STREAMS_HIST_MAX_FILE bytes and STREAMS_HIST_MAX_LINE bytes a line,
 * every field checked (each key once, all required, numbers in range,
 * first <= last); a line that fails is skipped and counted, as are
 * buckets the advisor's bounds leave out (peers, stream counts, age).
 *
 * Writes are atomic: the whole file to streams.state.tmp, fsync, rename
 * over streams.state, fsync of the directory; a daemon killed at any point
 * leaves the old file or the new one, never a mix. Its size is bounded by
 * the advisor's (max_peers x max_points lines), old samples aged out
 * (max_age_s) before they are written.
 */
#ifndef RXB_DAEMON_MODEL_STREAMS_HIST_H
#define RXB_DAEMON_MODEL_STREAMS_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/model/advisor.h"

#define STREAMS_HIST_FILE	"streams.state"
#define STREAMS_HIST_MAX_LINE	320
#define STREAMS_HIST_MAX_FILE	(16 * 1024 * 1024)

struct streams_hist_entry {
	uint8_t addr[16];	/* v4-mapped for IPv4 */
	uint16_t port;
	struct advisor_bucket b;
};

struct streams_hist_stats {
	uint32_t lines;		/* buckets read */
	uint32_t bad;		/* lines that did not parse */
	uint32_t refused;	/* parsed, but out of the advisor's bounds or aged */
};

/* One line (without its newline): 0 or -EINVAL. */
int streams_hist_parse_line(const char *line, struct streams_hist_entry *out);
/* One line with its newline; snprintf-style length. */
int streams_hist_format_line(const struct streams_hist_entry *e, char *buf, size_t size);

/*
 * The file's text (@len bytes, need not be NUL-terminated) into @a, at
 * @now_unix (buckets older than a's max_age_s are refused). 0, or -EFBIG
 * over STREAMS_HIST_MAX_FILE (nothing restored).
 */
int streams_hist_parse(const char *text, size_t len, struct advisor *a, uint64_t now_unix,
		       struct streams_hist_stats *st);

/* streams.state in the directory @dirfd into @a: 0, -ENOENT, or -errno. */
int streams_hist_load(int dirfd, struct advisor *a, uint64_t now_unix,
		      struct streams_hist_stats *st);
/* Every bucket of @a, atomically, into streams.state in @dirfd: 0 or -errno. */
int streams_hist_save(int dirfd, const struct advisor *a);

#endif
