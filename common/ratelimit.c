// SPDX-License-Identifier: GPL-2.0-or-later
/* A message rate limit. See ratelimit.h. */
#include "common/ratelimit.h"

void ratelimit_init(struct ratelimit *r, uint64_t window_ns, uint32_t burst, uint64_t now_ns)
{
	*r = (struct ratelimit){ .window_ns = window_ns, .burst = burst, .start_ns = now_ns };
}

bool ratelimit_ok(struct ratelimit *r, uint64_t now_ns, uint64_t *dropped)
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
