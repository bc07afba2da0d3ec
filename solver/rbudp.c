// SPDX-License-Identifier: GPL-2.0-or-later
/* RBUDP transfer time, seed eq. (2)-(3). See rbudp.h. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "solver/rbudp.h"

/*
 * Payload of the resend blasts relative to S: sum_{i=1}^{n} l^i
 * = l (1 - l^n) / (1 - l), written with expm1 so that it stays accurate for
 * l -> 0 and l -> 1 (where it tends to n).
 */
static double resend_fraction(double ln_l, double n)
{
	if (n == 0.0 || ln_l == -INFINITY)
		return 0.0;
	return exp(ln_l) * expm1(n * ln_l) / expm1(ln_l);
}

int rbudp_time(const struct rbudp_params *p, double rate_bytes_per_s,
	       double ln_loss, struct rbudp_time *out)
{
	double S = p->file_bytes, B = rate_bytes_per_s, tp = p->one_way_delay_s;
	double bitmap_s;

	memset(out, 0, sizeof(*out));
	if (!(S > 0.0) || !isfinite(S) || !(p->payload_bytes > 0.0) ||
	    !isfinite(p->payload_bytes) || !(tp >= 0.0) || !isfinite(tp) ||
	    !(B > 0.0) || !isfinite(B) || isnan(ln_loss) || ln_loss > 0.0)
		return -EINVAL;
	out->first_s = tp + S / B;
	bitmap_s = S / (8.0 * p->payload_bytes * B) + tp;
	if (ln_loss == 0.0) {
		/* Everything is lost: the transfer never completes. */
		out->n_resend = INFINITY;
		out->resend_rounds = INFINITY;
		out->resend_s = INFINITY;
		out->bitmap_s = INFINITY;
		out->time_s = INFINITY;
		return 0;
	}
	if (ln_loss == -INFINITY || p->payload_bytes >= S)
		out->n_resend = 0.0;
	else
		out->n_resend = log(p->payload_bytes / S) / ln_loss;
	out->resend_rounds = ceil(out->n_resend);
	out->resend_s = out->n_resend * tp +
			S / B * resend_fraction(ln_loss, out->resend_rounds);
	out->bitmap_s = (out->n_resend + 1.0) * bitmap_s;
	out->time_s = out->first_s + out->resend_s + out->bitmap_s;
	return 0;
}
