/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's fidelity record: each finished transfer a sender reported
 * (REPORT, PROTOCOL.md §5.11) set against what the model told that sender
 * when its transfer started - the first RATE of its connection (rate,
 * predicted loss at that rate, predicted transfer time for its file size
 * and RTT) - kept per flow in a bounded ring, with the running error over
 * the ring:
 *
 *   time ratio   measured T / predicted T: median, range and mean
 *   loss error   |measured - predicted first-round loss|, in percentage
 *                points, mean
 *
 * Measured T is the REPORT's elapsed_us, measured first-round loss its
 * pkts_lost_first / (pkts_sent - pkts_resent). A RATE with confidence 0
 * (nothing modelled, PROTOCOL.md §6.1) predicts nothing: its entry is kept
 * with the predictions NaN and left out of the statistics; so is a
 * predicted T of 0 ("not computed"). ABORTED reports are counted, not kept.
 *
 * Pure: no I/O, no allocation.
 */
#ifndef RXB_DAEMON_MODEL_OUTCOME_H
#define RXB_DAEMON_MODEL_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>

#include "rxbneck/proto.h"

#define OUTCOME_MAX	16	/* transfers kept per flow */

struct outcome_entry {
	uint64_t at_ns;			/* when the REPORT came (caller's clock) */
	uint64_t file_bytes;
	uint64_t rtt_us;		/* the sender's HELLO, 0 = unknown */
	double pred_rate_bps;		/* the RATE in force at the start, NaN = none */
	uint16_t pred_confidence;
	double sent_rate_bps;		/* REPORT: its first round's rate */
	double pred_time_s;		/* NaN = not predicted */
	double meas_time_s;
	double pred_loss;		/* fraction, NaN = not predicted */
	double meas_loss;		/* fraction, NaN = no first-round datagrams */
	uint32_t rounds;
};

struct outcome {
	uint32_t n;			/* entries kept, <= OUTCOME_MAX */
	uint32_t next;			/* where the next one goes */
	uint64_t total;			/* kept since init (the oldest overwritten) */
	uint64_t aborted;		/* ABORTED reports, not kept */
	struct outcome_entry e[OUTCOME_MAX];
};

/* Error over the ring; NaN where there is nothing to compute it from. */
struct outcome_stats {
	uint32_t n;			/* entries */
	uint32_t n_time;		/* with both T: the ratio's sample */
	double time_ratio_median;	/* measured / predicted */
	double time_ratio_min, time_ratio_max, time_ratio_mean;
	uint32_t n_loss;		/* with both losses */
	double loss_err_pp_mean;	/* mean |measured - predicted|, percentage points */
	double loss_bias_pp_mean;	/* mean measured - predicted (signed) */
};

void outcome_init(struct outcome *o);

/*
 * A REPORT @r at @at_ns, from a sender whose transfer started on the RATE
 * @pred (NULL: none was sent) with @rtt_us. Returns 1 when kept, 0 when
 * only counted (ABORTED).
 */
int outcome_add(struct outcome *o, uint64_t at_ns, const struct rxbneck_rate *pred,
		uint64_t rtt_us, const struct rxbneck_report *r);

/* The @i-th entry, oldest first (i < o->n). */
const struct outcome_entry *outcome_at(const struct outcome *o, uint32_t i);

void outcome_stats(const struct outcome *o, struct outcome_stats *s);

#endif
