// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a PAUSE schedule stands at a given local time.
 *
 * Windows k = 0, 1, ... start at first_stop_ns + k * period and last
 * duration; a one-shot schedule (period 0) has only k = 0, a periodic one
 * repeat_count windows (0 = unbounded).
 */
#include <stdbool.h>

#include "rxbneck/client.h"

#define NS_PER_US 1000ULL

static int answer(int paused, uint64_t t, uint64_t *until_ns)
{
	if (until_ns)
		*until_ns = t;
	return paused;
}

int rxbneck_pause_window_state(const struct rxbneck_pause_window *w,
			       uint64_t now_ns, uint64_t *until_ns)
{
	const struct rxbneck_pause *p = &w->pause;
	uint64_t dur = p->duration_us * NS_PER_US;
	uint64_t period = p->period_us * NS_PER_US;
	uint64_t k, start;

	if (p->flags & RXBNECK_PAUSE_CANCEL || dur == 0)
		return answer(0, UINT64_MAX, until_ns);
	if (now_ns < w->first_stop_ns)
		return answer(0, w->first_stop_ns, until_ns);
	if (period == 0) {
		if (now_ns < w->first_stop_ns + dur)
			return answer(1, w->first_stop_ns + dur, until_ns);
		return answer(0, UINT64_MAX, until_ns);
	}
	k = (now_ns - w->first_stop_ns) / period;
	if (p->repeat_count && k >= p->repeat_count)
		return answer(0, UINT64_MAX, until_ns);
	start = w->first_stop_ns + k * period;
	if (now_ns < start + dur)
		return answer(1, start + dur, until_ns);
	if (p->repeat_count && k + 1 >= p->repeat_count)
		return answer(0, UINT64_MAX, until_ns);
	return answer(0, start + period, until_ns);
}
