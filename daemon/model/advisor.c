// SPDX-License-Identifier: GPL-2.0-or-later
/* The stream-count advisor's samples, fits and advice. See advisor.h. */
#include "daemon/model/advisor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rxbneck/proto.h"

static bool params_ok(const struct advisor_params *p)
{
	return p->max_peers >= 1 && p->max_peers <= (1u << 20) && p->max_points >= 1 &&
	       p->max_points <= STREAMS_FIT_MAX_POINTS && p->max_weight_s > 0 &&
	       isfinite(p->max_weight_s) && p->min_weight_s >= 0 &&
	       p->min_weight_s <= p->max_weight_s && p->max_n >= 1 &&
	       p->max_n <= STREAMS_N_LIMIT && p->tolerance >= 0 && p->tolerance < 1 &&
	       p->rise >= 0 && isfinite(p->rise) && p->fits_per_epoch >= 1;
}

int advisor_init(struct advisor *a, const struct advisor_params *p)
{
	memset(a, 0, sizeof(*a));
	if (!params_ok(p))
		return -EINVAL;
	a->peers = calloc(p->max_peers, sizeof(*a->peers));
	if (!a->peers)
		return -ENOMEM;
	a->cap = p->max_peers;
	a->p = *p;
	return 0;
}

void advisor_finish(struct advisor *a)
{
	free(a->peers);
	a->peers = NULL;
	a->npeers = a->cap = 0;
}

/* The peer heard from longest ago, of those in use. */
static struct advisor_peer *oldest_peer(struct advisor *a)
{
	struct advisor_peer *o = NULL;

	for (uint32_t i = 0; i < a->cap; i++)
		if (a->peers[i].used && (!o || a->peers[i].last_unix < o->last_unix))
			o = &a->peers[i];
	return o;
}

static void drop_bucket(struct advisor_peer *p, int i)
{
	memmove(&p->b[i], &p->b[i + 1], (size_t)(p->nb - i - 1) * sizeof(p->b[0]));
	p->nb--;
	p->dirty = true;
}

/* Keep at most @max buckets, the most recently heard. */
static uint64_t trim_buckets(struct advisor_peer *p, uint32_t max)
{
	uint64_t dropped = 0;

	while ((uint32_t)p->nb > max) {
		int o = 0;

		for (int i = 1; i < p->nb; i++)
			if (p->b[i].last_unix < p->b[o].last_unix)
				o = i;
		drop_bucket(p, o);
		dropped++;
	}
	return dropped;
}

int advisor_set_params(struct advisor *a, const struct advisor_params *p)
{
	uint32_t j = 0;

	if (!params_ok(p))
		return -EINVAL;
	if (p->max_peers > a->cap) {
		struct advisor_peer *np = calloc(p->max_peers, sizeof(*np));

		if (!np)
			return -ENOMEM;
		memcpy(np, a->peers, a->cap * sizeof(*np));
		free(a->peers);
		a->peers = np;
		a->cap = p->max_peers;
	}
	/* Fewer peers: those heard from longest ago go. Then all to the front. */
	while (a->npeers > p->max_peers) {
		oldest_peer(a)->used = false;
		a->npeers--;
		a->st.peers_evicted++;
	}
	for (uint32_t i = 0; i < a->cap; i++) {
		if (!a->peers[i].used)
			continue;
		if (i != j) {
			a->peers[j] = a->peers[i];
			a->peers[i].used = false;
		}
		a->st.buckets_evicted += trim_buckets(&a->peers[j], p->max_points);
		a->peers[j++].dirty = true;
	}
	a->p = *p;
	return 0;
}

static struct advisor_peer *find(const struct advisor *a, const uint8_t addr[16], uint16_t port)
{
	for (uint32_t i = 0; i < a->p.max_peers; i++)
		if (a->peers[i].used && a->peers[i].port == port &&
		    !memcmp(a->peers[i].addr, addr, 16))
			return &a->peers[i];
	return NULL;
}

const struct advisor_peer *advisor_find(const struct advisor *a, const uint8_t addr[16],
					uint16_t port)
{
	return find(a, addr, port);
}

/* The peer, made (evicting the one heard from longest ago) if new. */
static struct advisor_peer *peer_for(struct advisor *a, const uint8_t addr[16], uint16_t port)
{
	struct advisor_peer *p = find(a, addr, port);

	if (p)
		return p;
	for (uint32_t i = 0; i < a->p.max_peers && !p; i++)
		if (!a->peers[i].used)
			p = &a->peers[i];
	if (!p) {
		p = oldest_peer(a);
		a->st.peers_evicted++;
		a->npeers--;
	}
	memset(p, 0, sizeof(*p));
	p->used = true;
	memcpy(p->addr, addr, 16);
	p->port = port;
	p->cap_bps = NAN;
	a->npeers++;
	return p;
}

/* The bucket of @n, made (evicting the oldest when full) if new. */
static struct advisor_bucket *bucket_for(struct advisor *a, struct advisor_peer *p, uint32_t n)
{
	int i;

	for (i = 0; i < p->nb; i++)
		if (p->b[i].n == n)
			return &p->b[i];
	if ((uint32_t)p->nb >= a->p.max_points)
		a->st.buckets_evicted += trim_buckets(p, a->p.max_points - 1);
	/* Kept sorted by n: the fit takes them in that order. */
	for (i = p->nb; i > 0 && p->b[i - 1].n > n; i--)
		p->b[i] = p->b[i - 1];
	memset(&p->b[i], 0, sizeof(p->b[i]));
	p->b[i].n = n;
	p->nb++;
	return &p->b[i];
}

/* Fold @x of weight @w into @b, which remembers at most @wmax. */
static void fold(struct advisor_bucket *b, double x, double w, double wmax)
{
	double d;

	if (w > wmax)
		w = wmax;
	if (b->weight_s + w > wmax) {
		double f = (wmax - w) / b->weight_s;

		b->weight_s *= f;
		b->m2 *= f;
	}
	if (!(b->weight_s > 0)) {
		/* Nothing left of the old samples (or none yet). */
		b->weight_s = w;
		b->mean_bps = x;
		b->m2 = 0;
		return;
	}
	b->weight_s += w;
	d = x - b->mean_bps;
	b->mean_bps += w / b->weight_s * d;
	/* d (x - new mean) >= 0 in exact arithmetic; rounding can make it -0.x ulp. */
	b->m2 = fmax(0, b->m2 + w * d * (x - b->mean_bps));
}

int advisor_add(struct advisor *a, const uint8_t addr[16], uint16_t port, uint32_t n,
		double bps, double dt_s, uint8_t origin, uint64_t now_unix)
{
	struct advisor_peer *p;
	struct advisor_bucket *b;

	if (n < 1 || n > a->p.max_n || !(bps > 0) || !isfinite(bps) || !(dt_s > 0) ||
	    !isfinite(dt_s)) {
		a->st.refused++;
		return -EINVAL;
	}
	p = peer_for(a, addr, port);
	b = bucket_for(a, p, n);
	fold(b, bps, dt_s, a->p.max_weight_s);
	if (!b->count)
		b->first_unix = now_unix;
	if (b->count < UINT32_MAX)
		b->count++;
	b->last_unix = now_unix;
	b->origins |= origin;
	p->last_unix = now_unix;
	p->samples++;
	p->dirty = true;
	if (origin & ADVISOR_SENDER)
		a->st.samples_sender++;
	else
		a->st.samples_passive++;
	return 0;
}

int advisor_restore(struct advisor *a, const uint8_t addr[16], uint16_t port,
		    const struct advisor_bucket *src)
{
	struct advisor_peer *p;
	struct advisor_bucket *b;

	if (src->n < 1 || src->n > a->p.max_n || !(src->mean_bps > 0) ||
	    !isfinite(src->mean_bps) || !(src->weight_s > 0) || !isfinite(src->weight_s) ||
	    !(src->m2 >= 0) || !isfinite(src->m2) || !src->count ||
	    src->first_unix > src->last_unix)
		return -EINVAL;
	p = peer_for(a, addr, port);
	b = bucket_for(a, p, src->n);
	if (!b->count) {
		*b = *src;
		if (b->weight_s > a->p.max_weight_s) {
			b->m2 *= a->p.max_weight_s / b->weight_s;
			b->weight_s = a->p.max_weight_s;
		}
	} else {
		/* Weights add: the restored mean folds in as one sample of its weight. */
		fold(b, src->mean_bps, src->weight_s, a->p.max_weight_s);
		b->count = src->count > UINT32_MAX - b->count ? UINT32_MAX : b->count + src->count;
		b->origins |= src->origins;
		if (src->first_unix < b->first_unix)
			b->first_unix = src->first_unix;
		if (src->last_unix > b->last_unix)
			b->last_unix = src->last_unix;
	}
	if (b->last_unix > p->last_unix)
		p->last_unix = b->last_unix;
	p->dirty = true;
	return 0;
}

double advisor_bucket_sd(const struct advisor_bucket *b)
{
	return b->count > 1 && b->weight_s > 0 ? sqrt(b->m2 / b->weight_s) : NAN;
}

/* ---------------------------------------------------------- advice -- */

/* Buckets older than max_age_s go. */
static void age(struct advisor *a, struct advisor_peer *p, uint64_t now_unix)
{
	if (!a->p.max_age_s)
		return;
	for (int i = p->nb - 1; i >= 0; i--)
		if (p->b[i].last_unix + a->p.max_age_s < now_unix) {
			drop_bucket(p, i);
			a->st.buckets_aged++;
		}
}

/*
 * The exponential sampling goes on while it is not done and the fit does
 * not already show a peak inside the samples' range.
 */
static bool exploring(const struct advisor_peer *p)
{
	if (!p->explore_next)
		return false;
	if (p->m < 4 || p->res.model == STREAMS_NONE)
		return true;
	return !(p->res.n_peak < p->pts[p->m - 1].n);
}

static void advise(struct advisor_peer *p, uint64_t epoch)
{
	struct advisor_advice *ad = &p->adv;
	const struct streams_fit_result *r = &p->res;

	memset(ad, 0, sizeof(*ad));
	ad->epoch = epoch;
	ad->points = (uint32_t)p->m;
	ad->model = (uint8_t)r->model;
	if (!p->m)
		return;
	ad->valid = true;
	if (exploring(p)) {
		ad->streams = p->explore_next;
		ad->flags = RXBNECK_STREAMS_EXPLORE;
		if (p->fitted && r->model != STREAMS_NONE)
			ad->predicted_bps = streams_eval(&r->best.coef, p->explore_next);
		if (!(ad->predicted_bps > 0) || !isfinite(ad->predicted_bps))
			ad->predicted_bps = 0;
		return;
	}
	ad->streams = r->n_opt;
	ad->predicted_bps = r->th_opt;
	ad->confidence = (uint16_t)lround(1000 * r->confidence);
	if (r->capped)
		ad->flags |= RXBNECK_STREAMS_CAPPED;
	if (r->model == STREAMS_NONE)
		ad->flags |= RXBNECK_STREAMS_MEASURED;
	else if (r->rising)
		ad->flags |= RXBNECK_STREAMS_RISING;
}

static void fit_peer(struct advisor *a, struct advisor_peer *p, uint64_t epoch,
		     advisor_cap_fn cap, void *ctx)
{
	p->m = 0;
	for (int i = 0; i < p->nb; i++)
		if (p->b[i].weight_s >= a->p.min_weight_s && p->b[i].n <= a->p.max_n)
			p->pts[p->m++] = (struct streams_point){ p->b[i].n, p->b[i].mean_bps };
	p->cap_why[0] = '\0';
	p->cap_bps = cap ? cap(ctx, p->port, p->cap_why, sizeof(p->cap_why)) : NAN;
	p->opts = (struct streams_fit_opts){
		.n_max = a->p.max_n, .tolerance = a->p.tolerance,
		.cap = p->cap_bps > 0 && isfinite(p->cap_bps) ? p->cap_bps : 0,
	};
	p->fitted = p->m > 0 && streams_fit_best(p->pts, p->m, &p->opts, &p->res) == 0;
	if (!p->fitted)
		memset(&p->res, 0, sizeof(p->res));
	p->explore_next = streams_fit_expo_next(p->pts, p->m, a->p.rise, a->p.max_n);
	p->dirty = false;
	p->fit_epoch = epoch;
	advise(p, epoch);
	a->st.fits++;
}

/* The receiver cap moved by more than this share: the advice is refitted. */
#define CAP_MOVED	0.05

/* Whether @now and @was (NaN: none) differ enough to refit. */
static bool cap_moved(double now, double was)
{
	if (isnan(now) || isnan(was))
		return isnan(now) != isnan(was);
	return fabs(now - was) > CAP_MOVED * was;
}

int advisor_epoch(struct advisor *a, uint64_t epoch, uint64_t now_unix, advisor_cap_fn cap,
		  void *ctx)
{
	int done = 0;

	for (uint32_t i = 0; i < a->p.max_peers; i++) {
		struct advisor_peer *p = &a->peers[i];
		char why[ADVISOR_WHY_LEN];

		if (!p->used)
			continue;
		age(a, p, now_unix);
		if (!p->nb) {
			p->used = false;
			a->npeers--;
			continue;
		}
		if (!p->dirty && cap && cap_moved(cap(ctx, p->port, why, sizeof(why)), p->cap_bps))
			p->dirty = true;
	}
	/* The dirty peers, longest unfitted first, within the epoch's budget. */
	while ((uint32_t)done < a->p.fits_per_epoch) {
		struct advisor_peer *o = NULL;

		for (uint32_t i = 0; i < a->p.max_peers; i++)
			if (a->peers[i].used && a->peers[i].dirty &&
			    (!o || a->peers[i].fit_epoch < o->fit_epoch))
				o = &a->peers[i];
		if (!o)
			break;
		fit_peer(a, o, epoch, cap, ctx);
		done++;
	}
	return done;
}

void advisor_addr_text(const uint8_t addr[16], char *buf, size_t len)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(addr, v4mapped, 12))
		inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
}

int advisor_addr_parse(const char *s, uint8_t out[16])
{
	struct in_addr v4;

	if (inet_pton(AF_INET, s, &v4) == 1) {
		memset(out, 0, 16);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -EINVAL;
}
