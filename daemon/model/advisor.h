/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stream-count advisor's memory and answers: per peer (a remote
 * address and the local port it sends to), the (n, throughput) samples -
 * passive ones from the transfers the host saw arrive (xfers.h), and
 * senders' STREAMS_SAMPLE frames - kept as one bucket per stream count;
 * the fit of the buckets (solver/streams_fit.h); and the advice sent in
 * STREAMS frames (docs/PROTOCOL.md §5.10).
 *
 * A bucket holds the time-weighted mean and spread of its samples, each
 * weighing its interval's length in seconds, and remembers at most
 * max_weight_s of them: beyond that older samples fade in proportion, so
 * a path that changed takes over within that much transfer time. A bucket
 * whose last sample is older than max_age_s is dropped; a peer holds at
 * most max_points buckets (the one with the oldest last sample goes to
 * make room) and the advisor at most max_peers peers (the one heard from
 * longest ago goes).
 *
 * The advice, refitted when a peer's samples changed (at most
 * fits_per_epoch peers an epoch, oldest fit first):
 *  - the fit uses the buckets holding at least min_weight_s;
 *  - the exponential sampling (1, 2, 4, ... until the throughput stops
 *    rising, Yildirim et al. §6.3) goes on while it is not done and the
 *    fit does not already show the peak inside the sampled range: the
 *    advice is then its next n, flagged EXPLORE;
 *  - else the fit's advice (flags CAPPED, RISING), or with no model that
 *    fits, the best measured n (MEASURED).
 * The receiver cap comes from the caller (advisor_cap_fn) per local port.
 *
 * Pure: no I/O; peers are allocated by advisor_init() and
 * advisor_set_params() only.
 */
#ifndef RXB_DAEMON_MODEL_ADVISOR_H
#define RXB_DAEMON_MODEL_ADVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solver/streams_fit.h"

/* Where a bucket's samples came from (bits). */
#define ADVISOR_PASSIVE		0x1	/* the host saw the transfer */
#define ADVISOR_SENDER		0x2	/* a sender's STREAMS_SAMPLE */

#define ADVISOR_WHY_LEN		120

struct advisor_params {
	uint32_t max_peers;	/* >= 1 */
	uint32_t max_points;	/* stream counts per peer, 1 .. STREAMS_FIT_MAX_POINTS */
	double max_weight_s;	/* a bucket remembers this much sampled time */
	uint64_t max_age_s;	/* a bucket unheard of this long is dropped; 0: never */
	double min_weight_s;	/* a bucket enters the fit with this much */
	uint32_t max_n;		/* samples above are refused; the curve's range */
	double tolerance;	/* streams_fit_opts.tolerance */
	double rise;		/* the exponential sampling stops below this gain */
	uint32_t fits_per_epoch;	/* >= 1 */
};

struct advisor_bucket {
	uint32_t n;
	uint32_t count;		/* samples folded in */
	double weight_s;	/* their time, at most max_weight_s */
	double mean_bps;
	double m2;		/* weighted squared deviations: sd = sqrt(m2 / weight_s) */
	uint64_t first_unix, last_unix;
	uint8_t origins;	/* ADVISOR_* */
};

/* STREAMS frame flags (rxbneck/proto.h RXBNECK_STREAMS_*). */
struct advisor_advice {
	bool valid;
	uint32_t streams;
	double predicted_bps;	/* 0 = not known (exploring without a fit) */
	uint16_t confidence;	/* per mille */
	uint8_t model;		/* enum streams_model */
	uint16_t flags;		/* RXBNECK_STREAMS_* */
	uint32_t points;	/* stream counts the fit had */
	uint64_t epoch;		/* when it was computed */
};

struct advisor_peer {
	bool used;
	uint8_t addr[16];	/* v4-mapped for IPv4 */
	uint16_t port;		/* local */
	int nb;
	struct advisor_bucket b[STREAMS_FIT_MAX_POINTS];
	uint64_t last_unix;	/* newest sample */
	uint64_t samples;	/* samples taken since the advisor started */
	bool dirty;		/* samples since the last fit */
	uint64_t fit_epoch;	/* the last fit's, 0 = never */
	/* The last fit: its points, options, result; the advice from it. */
	int m;
	struct streams_point pts[STREAMS_FIT_MAX_POINTS];
	struct streams_fit_opts opts;
	struct streams_fit_result res;
	bool fitted;		/* res holds a fit (m >= 1) */
	uint32_t explore_next;	/* the exponential sampling's next n, 0 = done */
	double cap_bps;		/* the receiver cap used, NaN none */
	char cap_why[ADVISOR_WHY_LEN];
	struct advisor_advice adv;
};

struct advisor_stats {
	uint64_t samples_passive, samples_sender;
	uint64_t refused;		/* bad n or throughput */
	uint64_t peers_evicted, buckets_evicted, buckets_aged;
	uint64_t fits;
};

struct advisor {
	struct advisor_params p;
	struct advisor_peer *peers;	/* cap, the used ones in [0, p.max_peers) */
	uint32_t cap;			/* the most max_peers has been */
	uint32_t npeers;
	struct advisor_stats st;
};

/*
 * The receiver's drain capacity for traffic to local @port in bits/s, or
 * NaN with the reason in @why (@len bytes) when it is not known.
 */
typedef double (*advisor_cap_fn)(void *ctx, uint16_t port, char *why, size_t len);

int advisor_init(struct advisor *a, const struct advisor_params *p);	/* 0, -EINVAL, -ENOMEM */
void advisor_finish(struct advisor *a);
/*
 * New parameters: peers beyond a smaller max_peers (those heard from
 * longest ago) and buckets beyond max_points go; every peer is refitted.
 * Allocates only when max_peers exceeds every value it has had, so going
 * back to earlier parameters cannot fail. 0 or -errno (nothing changed).
 */
int advisor_set_params(struct advisor *a, const struct advisor_params *p);

/*
 * A sample: @n streams from @addr to local @port carried @bps for @dt_s
 * seconds, from @origin (ADVISOR_*), at @now_unix. 0, or -EINVAL when n is
 * not in 1 .. max_n or bps, dt_s not positive and finite (counted as refused).
 */
int advisor_add(struct advisor *a, const uint8_t addr[16], uint16_t port, uint32_t n,
		double bps, double dt_s, uint8_t origin, uint64_t now_unix);

/*
 * A bucket as history holds it (streams_hist.h): merged into the peer's
 * bucket of the same n if there is one (weights add), else added. 0 or
 * -EINVAL for a bucket out of bounds.
 */
int advisor_restore(struct advisor *a, const uint8_t addr[16], uint16_t port,
		    const struct advisor_bucket *b);

/*
 * Once per epoch: drop aged buckets, refit up to fits_per_epoch peers
 * whose samples changed, with the cap @cap gives. Returns the number of
 * peers refitted.
 */
int advisor_epoch(struct advisor *a, uint64_t epoch, uint64_t now_unix, advisor_cap_fn cap,
		  void *ctx);

/* The peer of @addr and local @port, or NULL. */
const struct advisor_peer *advisor_find(const struct advisor *a, const uint8_t addr[16],
					uint16_t port);

/* Weighted standard deviation of a bucket's samples, NaN below two. */
double advisor_bucket_sd(const struct advisor_bucket *b);

/* A peer's address as text: dotted IPv4 for a v4-mapped one, else IPv6. */
void advisor_addr_text(const uint8_t addr[16], char *buf, size_t len);

/* "192.0.2.7" (stored v4-mapped) or "2001:db8::1" into @out; 0 or -EINVAL. */
int advisor_addr_parse(const char *s, uint8_t out[16]);

#endif
