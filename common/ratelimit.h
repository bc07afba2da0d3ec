/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A message rate limit: at most a burst of messages per window, the rest
 * counted and owned up to once, when the next window opens. It reads no
 * clock itself: the caller passes the time, so tests can drive it. Inline,
 * so that a server's fuzz target needs no more sources for it.
 */
#ifndef RXB_COMMON_RATELIMIT_H
#define RXB_COMMON_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct ratelimit {
	uint64_t window_ns;
	uint32_t burst;		/* messages allowed per window */
	uint64_t start_ns;	/* when the current window opened */
	uint32_t count;		/* messages allowed in it so far */
	uint64_t dropped;	/* messages held back in it */
};

/* @burst messages per @window_ns; the first window opens at @now_ns. */
static inline void ratelimit_init(struct ratelimit *r, uint64_t window_ns, uint32_t burst,
				  uint64_t now_ns)
{
	*r = (struct ratelimit){ .window_ns = window_ns, .burst = burst, .start_ns = now_ns };
}

/*
 * Whether one more message may go out at @now_ns (it is counted either
 * way). *dropped is how many were held back in the window that closed
 * with this call (0 if none, or if none closed): the caller says so once.
 */
static inline bool ratelimit_ok(struct ratelimit *r, uint64_t now_ns, uint64_t *dropped)
{
	*dropped = 0;
	if (now_ns - r->start_ns >= r->window_ns) {
		*dropped = r->dropped;
		r->start_ns = now_ns;
		r->count = 0;
		r->dropped = 0;
	}
	if (r->count >= r->burst) {
		r->dropped++;
		return false;
	}
	r->count++;
	return true;
}

#endif
