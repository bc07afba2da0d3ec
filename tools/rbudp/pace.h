/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rate pacing schedule for the blast (pure arithmetic, no clock reads).
 *
 * The schedule lets cumulative payload bytes since its origin reach
 * rate_bps/8 x (now - origin): a packet of L bytes may go once the bytes
 * sent before it plus L fit. The sender asks for the quota, sends as many
 * whole packets as fit (a sendmmsg batch), reports them, and when the quota
 * is spent sleeps until rbudp_pace_next_ns().
 *
 * Unused quota is capped at burst_bytes: a sender that fell behind (it was
 * descheduled, a syscall was slow) catches up by at most one burst, never
 * by blasting the whole backlog at line rate, so the receiver never sees
 * more than rate plus one burst. The time lost shows up as achieved rate
 * below requested, which the tools report.
 *
 * All times are CLOCK_MONOTONIC nanoseconds; rates count the bytes the
 * caller reports (the sender: UDP payload, header included), as B_send in
 * Banerjee et al.'s eq. (2) (docs/references.md).
 */
#ifndef RBUDP_PACE_H
#define RBUDP_PACE_H

#include <stdint.h>

struct rbudp_pace {
	uint64_t rate_bps;
	uint64_t burst_bytes;
	uint64_t origin_ns;
	uint64_t sent_bytes;	/* since origin */
};

/* Start a schedule at @now_ns; @rate_bps > 0. */
void rbudp_pace_init(struct rbudp_pace *p, uint64_t rate_bps, uint64_t burst_bytes,
		     uint64_t now_ns);

/* Restart from @now_ns with a new rate, without credit from the old one. */
void rbudp_pace_set_rate(struct rbudp_pace *p, uint64_t rate_bps, uint64_t now_ns);

/* Restart at @until_ns (the end of a pause): nothing may go before it. */
void rbudp_pace_restart_at(struct rbudp_pace *p, uint64_t until_ns);

/* Bytes that may be sent at @now_ns (applies the burst cap). */
uint64_t rbudp_pace_quota(struct rbudp_pace *p, uint64_t now_ns);

static inline void rbudp_pace_sent(struct rbudp_pace *p, uint64_t bytes)
{
	p->sent_bytes += bytes;
}

/* Earliest time a packet of @len bytes fits the schedule. */
uint64_t rbudp_pace_next_ns(const struct rbudp_pace *p, uint64_t len);

#endif
