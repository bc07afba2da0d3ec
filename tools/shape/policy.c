// SPDX-License-Identifier: GPL-2.0-or-later
/* The rate in force for one receiver. See policy.h. */
#include "tools/shape/policy.h"

void shape_policy_init(struct shape_policy *p, uint64_t hold_ns, uint64_t fallback_bps,
		       uint64_t now_ns)
{
	*p = (struct shape_policy){
		.hold_ns = hold_ns,
		.fallback_bps = fallback_bps,
		.lost_ns = now_ns,
	};
}

static bool hold_over(const struct shape_policy *p, uint64_t now_ns)
{
	return now_ns - p->lost_ns >= p->hold_ns;
}

void shape_policy_connected(struct shape_policy *p, uint64_t now_ns)
{
	if (p->connected)
		return;
	if (p->have_advice && hold_over(p, now_ns))
		p->have_advice = false;
	p->connected = true;
}

void shape_policy_lost(struct shape_policy *p, uint64_t now_ns)
{
	if (!p->connected)
		return;
	p->connected = false;
	p->lost_ns = now_ns;
}

void shape_policy_advice(struct shape_policy *p, uint64_t rate_bps, uint64_t now_ns)
{
	p->have_advice = true;
	p->advice_bps = rate_bps;
	p->advice_ns = now_ns;
}

struct shape_target shape_policy_target(const struct shape_policy *p, uint64_t now_ns)
{
	struct shape_target t = { .until_ns = UINT64_MAX };

	if (p->have_advice && p->connected) {
		t.mode = SHAPE_MODE_ADVICE;
		t.rate_bps = p->advice_bps;
	} else if (p->have_advice && !hold_over(p, now_ns)) {
		t.mode = SHAPE_MODE_HOLD;
		t.rate_bps = p->advice_bps;
		t.until_ns = p->lost_ns + p->hold_ns;
	} else if (p->fallback_bps) {
		t.mode = SHAPE_MODE_FALLBACK;
		t.rate_bps = p->fallback_bps;
	} else {
		t.mode = SHAPE_MODE_UNSHAPED;
	}
	return t;
}

const char *shape_policy_mode_name(enum shape_mode m)
{
	switch (m) {
	case SHAPE_MODE_ADVICE: return "advice";
	case SHAPE_MODE_HOLD: return "hold";
	case SHAPE_MODE_FALLBACK: return "fallback";
	case SHAPE_MODE_UNSHAPED: return "unshaped";
	}
	return "?";
}
