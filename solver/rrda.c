// SPDX-License-Identifier: GPL-2.0-or-later
/* RRDA receive-buffer adaptation (Liu et al.). See rrda.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "solver/rrda.h"

int rrda_params_check(const struct rrda_params *p)
{
	if (!(p->dt_s > 0.0) || !isfinite(p->dt_s) ||
	    p->k < 1 || p->k > RRDA_K_MAX ||
	    !(p->omega >= 0.0 && p->omega <= 1.0) ||
	    !(p->beta >= 0.0) || !isfinite(p->beta) ||
	    p->ceiling_bytes < p->floor_bytes ||
	    p->ceiling_bytes > RRDA_SK_RCVBUF_MAX)
		return -EINVAL;
	return 0;
}

static int check_input(const struct rrda_input *in)
{
	if (!(in->recv_bytes >= 0.0) || !isfinite(in->recv_bytes) ||
	    !(in->srv_bytes >= 0.0) || !isfinite(in->srv_bytes) ||
	    !(in->interval_s > 0.0) || !isfinite(in->interval_s) ||
	    !(in->mem_util >= 0.0 && in->mem_util <= 1.0))
		return -EINVAL;
	return 0;
}

const char *rrda_why_name(enum rrda_why w)
{
	switch (w) {
	case RRDA_WARMUP:
		return "warmup";
	case RRDA_STEADY:
		return "steady";
	case RRDA_GROW:
		return "grow";
	case RRDA_SHRINK:
		return "shrink";
	case RRDA_AT_CEILING:
		return "at_ceiling";
	case RRDA_AT_FLOOR:
		return "at_floor";
	case RRDA_PRESSURE:
		return "udp_mem_pressure";
	case RRDA_NO_MEMORY:
		return "no_free_memory";
	case RRDA_NO_SHRINK:
		return "memory_free";
	case RRDA_SMALL:
		return "below_min_step";
	}
	return "?";
}

void rrda_init(struct rrda_state *s)
{
	memset(s, 0, sizeof(*s));
}

/* Eq. (2) over the k values before the current one; 0 until there are k. */
static int decide(const struct rrda_state *s, uint32_t k, bool *warm)
{
	int pos = 0, neg = 0;

	*warm = s->nhist >= k;
	if (!*warm)
		return 0;
	for (uint32_t i = 1; i <= k; i++) {
		double v = s->hist[(s->head + RRDA_K_MAX - i) % RRDA_K_MAX];

		pos += v > 0.0;
		neg += v < 0.0;
	}
	return pos == (int)k ? 1 : neg == (int)k ? -1 : 0;
}

static void remember(struct rrda_state *s, double ema)
{
	s->ema_bytes = ema;
	s->hist[s->head] = ema;
	s->head = (s->head + 1) % RRDA_K_MAX;
	if (s->nhist < RRDA_K_MAX)
		s->nhist++;
	s->steps++;
}

/* The even size nearest @v from below (@up false) or above, as bytes. */
static uint64_t even(double v, bool up)
{
	double h = up ? ceil(v / 2.0) : floor(v / 2.0);

	return h <= 0.0 ? 0 : (uint64_t)h * 2;
}

/* Eq. (4) and the bounds (rrda.h) for decision @f at smoothed @ema. */
static void resize(const struct rrda_params *p, const struct rrda_input *in,
		   struct rrda_decision *d)
{
	double alpha = in->mem_util, mag = p->beta * fabs(d->ema_bytes);
	uint64_t cur = in->cur_bytes;
	uint64_t hi = p->ceiling_bytes < in->kernel_max_bytes ? p->ceiling_bytes
							     : in->kernel_max_bytes;
	uint64_t want;

	hi &= ~1ULL;
	d->target_bytes = cur;
	if (d->f > 0) {
		d->step_bytes = (1.0 - alpha) * mag;
		if (in->mem_pressure) {
			d->why = RRDA_PRESSURE;
			return;
		}
		if (cur >= hi) {
			d->why = RRDA_AT_CEILING;
			return;
		}
		want = even((double)cur + d->step_bytes, true);
		if (want > hi)
			want = hi;
		d->target_bytes = want > cur ? want : cur;
		d->why = want > cur ? RRDA_GROW : RRDA_NO_MEMORY;
	} else if (d->f < 0) {
		d->step_bytes = -alpha * mag;
		if (cur <= p->floor_bytes) {
			d->why = RRDA_AT_FLOOR;
			return;
		}
		want = even(fmax((double)cur + d->step_bytes, 0.0), false);
		d->why = RRDA_NO_SHRINK;
		if (want < p->floor_bytes) {
			want = even((double)p->floor_bytes, true);
			d->why = RRDA_AT_FLOOR;
		}
		if (want < cur) {
			d->target_bytes = want;
			d->why = RRDA_SHRINK;
		}
	} else {
		d->step_bytes = 0.0;
	}
	if (d->target_bytes != cur && p->min_step_bytes &&
	    (d->target_bytes > cur ? d->target_bytes - cur : cur - d->target_bytes) <
	    p->min_step_bytes) {
		d->target_bytes = cur;
		d->why = RRDA_SMALL;
	}
}

int rrda_step(const struct rrda_params *p, struct rrda_state *s,
	      const struct rrda_input *in, struct rrda_decision *out)
{
	double vb, ema;
	bool warm;
	int err = rrda_params_check(p);

	if (!err)
		err = check_input(in);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	/* Per epoch of dt: a sample over a longer interval is scaled down. */
	vb = (in->recv_bytes - in->srv_bytes) * (p->dt_s / in->interval_s);
	ema = p->omega * vb + (1.0 - p->omega) * s->ema_bytes;
	out->vb_bytes = vb;
	out->ema_bytes = ema;
	out->f = decide(s, p->k, &warm);
	out->why = warm ? RRDA_STEADY : RRDA_WARMUP;
	resize(p, in, out);
	remember(s, ema);
	return 0;
}

uint64_t rrda_kernel_max_bytes(uint64_t rmem_max_bytes, bool force)
{
	uint64_t half = INT_MAX / 2;

	if (!force && rmem_max_bytes < half)
		half = rmem_max_bytes;
	return 2 * half;
}

int rrda_sockopt_val(uint64_t rcvbuf_bytes)
{
	uint64_t v = (rcvbuf_bytes + 1) / 2;

	return v > INT_MAX / 2 ? INT_MAX / 2 : (int)v;
}
