/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which rate is in force for one receiver: the daemon's advice while it is
 * reachable, the last advice for a while after it is lost, then the
 * configured fallback (a rate, or no shaping). Pure: the caller reports
 * what happened and when, and asks for the target.
 *
 *	connected, advice known         -> ADVICE    the latest RATE
 *	lost, advice younger than hold  -> HOLD      the last RATE until lost + hold
 *	no advice, or hold ran out      -> FALLBACK  the fallback rate
 *	                                   UNSHAPED  (fallback = unshaped)
 *
 * The hold counts from the moment the connection was lost, not from the
 * last RATE: a connected daemon that sends no new RATE still stands by its
 * last one (PROTOCOL.md §6.1 sends RATE only on change or refresh). An
 * advice older than the hold when the connection comes back is forgotten,
 * so the fallback stays until the daemon's first RATE on the new
 * connection.
 */
#ifndef SHAPE_POLICY_H
#define SHAPE_POLICY_H

#include <stdbool.h>
#include <stdint.h>

enum shape_mode {
	SHAPE_MODE_ADVICE,
	SHAPE_MODE_HOLD,
	SHAPE_MODE_FALLBACK,
	SHAPE_MODE_UNSHAPED,
};

struct shape_policy {
	uint64_t hold_ns;
	uint64_t fallback_bps;		/* 0: unshaped */
	bool connected;
	bool have_advice;
	uint64_t advice_bps;
	uint64_t advice_ns;		/* when the advice arrived */
	uint64_t lost_ns;		/* disconnected since (start-up at first) */
};

struct shape_target {
	enum shape_mode mode;
	uint64_t rate_bps;		/* payload bits/s; 0 when unshaped */
	uint64_t until_ns;		/* the target changes by itself then; UINT64_MAX: not */
};

void shape_policy_init(struct shape_policy *p, uint64_t hold_ns, uint64_t fallback_bps,
		       uint64_t now_ns);
void shape_policy_connected(struct shape_policy *p, uint64_t now_ns);
void shape_policy_lost(struct shape_policy *p, uint64_t now_ns);
void shape_policy_advice(struct shape_policy *p, uint64_t rate_bps, uint64_t now_ns);
struct shape_target shape_policy_target(const struct shape_policy *p, uint64_t now_ns);

/* "advice", "hold", "fallback", "unshaped". */
const char *shape_policy_mode_name(enum shape_mode m);

#endif
