/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RBUDP file-transfer time as a function of the sending rate and the loss
 * probability (seed 000/002 eq. (2)-(3), as read in DESIGN §5.3):
 *
 *	T = [T_prop + S/B]                                     first blast
 *	  + [N_resend T_prop + sum_{i=1}^{ceil(N_resend)} S l^i / B]   resends
 *	  + [(N_resend + 1) (S / (8 S_pkt B) + T_prop)]         loss bitmaps
 *
 *	N_resend = ln(S_pkt / S) / ln(l)
 *
 * B in payload bytes per second, S = file bytes, S_pkt = payload bytes per
 * packet, T_prop = one-way delay. N_resend stays real-valued where it
 * multiplies (as the seed writes it), so T is continuous in l; only the
 * number of resend blasts in the sum is rounded up. Limits: l = 0 gives
 * N_resend = 0 (one blast, one bitmap); l -> 1 gives T -> infinity;
 * S <= S_pkt (one packet) gives N_resend = 0. The loss is passed as its
 * logarithm as well, because T depends on ln l for l far below 1e-300.
 */
#ifndef RXB_SOLVER_RBUDP_H
#define RXB_SOLVER_RBUDP_H

struct rbudp_params {
	double file_bytes;	/* S_total */
	double payload_bytes;	/* S_pkt */
	double one_way_delay_s;	/* T_prop */
};

struct rbudp_time {
	double time_s;		/* T; +inf when l = 1 */
	double n_resend;	/* N_resend, real-valued */
	double resend_rounds;	/* ceil(N_resend) */
	double first_s;		/* the three bracketed terms of eq. (2) */
	double resend_s;
	double bitmap_s;
};

/*
 * @rate_bytes_per_s = B > 0; @ln_loss = ln l in [-inf, 0]. Returns 0 or
 * -EINVAL for out-of-range arguments.
 */
int rbudp_time(const struct rbudp_params *p, double rate_bytes_per_s,
	       double ln_loss, struct rbudp_time *out);

#endif
