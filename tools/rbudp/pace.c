// SPDX-License-Identifier: GPL-2.0-or-later
/* Pacing schedule arithmetic. See pace.h. */
#include "tools/rbudp/pace.h"

#define NS_BITS 8000000000ULL	/* ns per second x bits per byte */

void rbudp_pace_init(struct rbudp_pace *p, uint64_t rate_bps, uint64_t burst_bytes,
		     uint64_t now_ns)
{
	p->rate_bps = rate_bps ? rate_bps : 1;
	p->burst_bytes = burst_bytes;
	p->origin_ns = now_ns;
	p->sent_bytes = 0;
}

void rbudp_pace_set_rate(struct rbudp_pace *p, uint64_t rate_bps, uint64_t now_ns)
{
	p->rate_bps = rate_bps ? rate_bps : 1;
	p->origin_ns = now_ns;
	p->sent_bytes = 0;
}

void rbudp_pace_restart_at(struct rbudp_pace *p, uint64_t until_ns)
{
	p->origin_ns = until_ns;
	p->sent_bytes = 0;
}

/* Bytes the schedule allows by @dt_ns after the origin. */
static uint64_t allowed_bytes(const struct rbudp_pace *p, uint64_t dt_ns)
{
	unsigned __int128 v = (unsigned __int128)dt_ns * p->rate_bps / NS_BITS;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Time to send @bytes at the rate, rounded up. */
static uint64_t bytes_ns(const struct rbudp_pace *p, uint64_t bytes)
{
	unsigned __int128 v = ((unsigned __int128)bytes * NS_BITS + p->rate_bps - 1) /
			      p->rate_bps;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t rbudp_pace_quota(struct rbudp_pace *p, uint64_t now_ns)
{
	uint64_t allowed, quota;

	if (now_ns <= p->origin_ns)
		return 0;
	allowed = allowed_bytes(p, now_ns - p->origin_ns);
	if (allowed <= p->sent_bytes)
		return 0;
	quota = allowed - p->sent_bytes;
	if (quota > p->burst_bytes) {
		/* Behind schedule: forgive all but one burst by moving the
		 * origin so that exactly burst_bytes are due now. */
		uint64_t back = bytes_ns(p, p->burst_bytes);

		p->origin_ns = now_ns > back ? now_ns - back : 0;
		p->sent_bytes = 0;
		quota = allowed_bytes(p, now_ns - p->origin_ns);
		if (quota > p->burst_bytes)
			quota = p->burst_bytes;
	}
	return quota;
}

uint64_t rbudp_pace_next_ns(const struct rbudp_pace *p, uint64_t len)
{
	uint64_t dt = bytes_ns(p, p->sent_bytes + len);

	return p->origin_ns + dt < p->origin_ns ? UINT64_MAX : p->origin_ns + dt;
}
