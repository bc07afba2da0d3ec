// SPDX-License-Identifier: GPL-2.0-or-later
/* Parallel TCP transfers from their connections' counters. See xfers.h. */
#include "daemon/model/xfers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S	1e9

/* The active streams of a transfer in one interval, as a set. */
struct sig {
	uint32_t n;
	uint64_t sum, xor;	/* of their cookies */
};

struct xfers_conn {
	uint64_t cookie;	/* 0: empty slot */
	uint64_t bytes;
	uint64_t delta;		/* this interval, when known */
	uint32_t group;		/* slot in the groups table of the same interval */
	bool known;		/* seen at the last dump too: delta is valid */
	bool active;		/* a stream in this interval */
	bool taken;		/* (last interval's table) seen again */
};

struct xfers_group {
	bool used;
	uint8_t addr[16];
	uint16_t port;
	bool changed;		/* a connection came, went or was not tracked */
	uint64_t max_delta;
	uint64_t sum;		/* the streams' bytes */
	struct sig now, prev;
	uint32_t streak;	/* intervals with the same streams */
};

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t c = 16;

	while (c < n && c < (1u << 30))
		c <<= 1;
	return c;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static uint64_t group_hash(const uint8_t addr[16], uint16_t port)
{
	uint64_t a, b;

	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	return mix(a ^ mix(b ^ port));
}

static bool params_ok(const struct xfers_params *p)
{
	return p->max_conns >= 1 && p->max_conns <= (1u << 24) && p->max_groups >= 1 &&
	       p->max_groups <= (1u << 24) && p->min_stream_bps >= 0 &&
	       p->min_share >= 0 && p->min_share <= 1 && p->settle >= 1 && p->max_n >= 1;
}

static void free_tables(struct xfers *x)
{
	for (int i = 0; i < 2; i++) {
		free(x->conns[i]);
		free(x->groups[i]);
		x->conns[i] = NULL;
		x->groups[i] = NULL;
	}
}

static int alloc_tables(struct xfers *x, const struct xfers_params *p)
{
	uint32_t cc = pow2_at_least(2 * p->max_conns), gc = pow2_at_least(2 * p->max_groups);

	for (int i = 0; i < 2; i++) {
		x->conns[i] = calloc(cc, sizeof(*x->conns[i]));
		x->groups[i] = calloc(gc, sizeof(*x->groups[i]));
		if (!x->conns[i] || !x->groups[i]) {
			free_tables(x);
			return -ENOMEM;
		}
		x->nconns[i] = x->ngroups[i] = 0;
	}
	x->conn_cap = cc;
	x->group_cap = gc;
	return 0;
}

int xfers_init(struct xfers *x, const struct xfers_params *p)
{
	memset(x, 0, sizeof(*x));
	if (!params_ok(p))
		return -EINVAL;
	x->p = *p;
	return alloc_tables(x, p);
}

void xfers_finish(struct xfers *x)
{
	free_tables(x);
}

int xfers_set_params(struct xfers *x, const struct xfers_params *p)
{
	struct xfers fresh;
	int err;

	if (!params_ok(p))
		return -EINVAL;
	if (2 * p->max_conns <= x->conn_cap && 2 * p->max_groups <= x->group_cap) {
		x->p = *p;
		return 0;
	}
	err = xfers_init(&fresh, p);
	if (err)
		return err;
	fresh.st = x->st;
	xfers_finish(x);
	*x = fresh;
	return 0;
}

/* ------------------------------------------------------------ tables -- */

/* @cookie's slot in table @t (its own or the empty one it would take). */
static uint32_t conn_slot(const struct xfers *x, int t, uint64_t cookie)
{
	uint32_t i = (uint32_t)mix(cookie) & (x->conn_cap - 1);

	while (x->conns[t][i].cookie && x->conns[t][i].cookie != cookie)
		i = (i + 1) & (x->conn_cap - 1);
	return i;
}

static uint32_t group_slot(const struct xfers *x, int t, const uint8_t addr[16], uint16_t port)
{
	uint32_t i = (uint32_t)group_hash(addr, port) & (x->group_cap - 1);
	const struct xfers_group *g = x->groups[t];

	while (g[i].used && (g[i].port != port || memcmp(g[i].addr, addr, 16)))
		i = (i + 1) & (x->group_cap - 1);
	return i;
}

static void clear(struct xfers *x, int t)
{
	memset(x->conns[t], 0, x->conn_cap * sizeof(*x->conns[t]));
	memset(x->groups[t], 0, x->group_cap * sizeof(*x->groups[t]));
	x->nconns[t] = x->ngroups[t] = 0;
}

void xfers_begin(struct xfers *x, uint64_t now_ns)
{
	clear(x, x->cur);
	x->now_ns = now_ns;
	x->st.conns_seen = x->st.conns_dropped = 0;
}

void xfers_abort(struct xfers *x)
{
	clear(x, x->cur);
}

/* This interval's group for @addr, @port, carried over from the last; NULL when full. */
static struct xfers_group *group_for(struct xfers *x, const uint8_t addr[16], uint16_t port)
{
	int cur = x->cur, last = !cur;
	uint32_t i = group_slot(x, cur, addr, port), j;
	struct xfers_group *g = &x->groups[cur][i];

	if (g->used)
		return g;
	if (x->ngroups[cur] >= x->p.max_groups)
		return NULL;
	x->ngroups[cur]++;
	g->used = true;
	memcpy(g->addr, addr, 16);
	g->port = port;
	j = group_slot(x, last, addr, port);
	if (x->groups[last][j].used) {
		g->prev = x->groups[last][j].now;
		g->streak = x->groups[last][j].streak;
	}
	return g;
}

void xfers_conn(struct xfers *x, const struct tcpconn *c)
{
	int cur = x->cur, last = !cur;
	struct xfers_group *g;
	struct xfers_conn *e, *old;
	uint32_t i;

	if (!c->cookie || !c->have_bytes)
		return;
	x->st.conns_seen++;
	g = group_for(x, c->raddr, c->lport);
	if (!g || x->nconns[cur] >= x->p.max_conns) {
		x->st.conns_dropped++;
		if (g)
			g->changed = true;
		return;
	}
	i = conn_slot(x, cur, c->cookie);
	e = &x->conns[cur][i];
	if (e->cookie)
		return;		/* the same socket twice in one dump */
	x->nconns[cur]++;
	e->cookie = c->cookie;
	e->bytes = c->bytes_received;
	e->group = (uint32_t)(g - x->groups[cur]);
	old = &x->conns[last][conn_slot(x, last, c->cookie)];
	if (old->cookie && c->bytes_received >= old->bytes && x->prev_ns) {
		old->taken = true;
		e->known = true;
		e->delta = c->bytes_received - old->bytes;
		if (e->delta > g->max_delta)
			g->max_delta = e->delta;
	} else {
		if (old->cookie)
			old->taken = true;
		g->changed = true;	/* new to this transfer: its bytes straddle the dump */
	}
}

/* A stream of the last interval that the dump did not show: its transfer changed. */
static void mark_gone(struct xfers *x)
{
	int cur = x->cur, last = !cur;

	for (uint32_t i = 0; i < x->conn_cap; i++) {
		const struct xfers_conn *o = &x->conns[last][i];
		const struct xfers_group *lg;
		struct xfers_group *g;

		if (!o->cookie || o->taken || !o->active)
			continue;
		lg = &x->groups[last][o->group];
		g = &x->groups[cur][group_slot(x, cur, lg->addr, lg->port)];
		if (g->used)
			g->changed = true;
	}
}

/* Which connections are streams, and each transfer's set of them. */
static void streams(struct xfers *x, double dt_s)
{
	struct xfers_conn *t = x->conns[x->cur];
	uint64_t floor_bytes = (uint64_t)(x->p.min_stream_bps * dt_s / 8);

	for (uint32_t i = 0; i < x->conn_cap; i++) {
		struct xfers_group *g;

		if (!t[i].cookie || !t[i].known)
			continue;
		g = &x->groups[x->cur][t[i].group];
		if (t[i].delta < floor_bytes || (double)t[i].delta < x->p.min_share * g->max_delta ||
		    !t[i].delta)
			continue;
		t[i].active = true;
		g->sum += t[i].delta;
		g->now.n++;
		g->now.sum += t[i].cookie;
		g->now.xor ^= t[i].cookie;
	}
}

int xfers_end(struct xfers *x, xfers_fn fn, void *arg)
{
	double dt_s = x->prev_ns && x->now_ns > x->prev_ns ? (x->now_ns - x->prev_ns) / NS_PER_S : 0;
	struct xfers_group *gs = x->groups[x->cur];
	int made = 0;

	x->st.intervals++;
	if (dt_s > 0) {
		mark_gone(x);
		streams(x, dt_s);
	}
	x->st.groups = 0;
	for (uint32_t i = 0; i < x->group_cap; i++) {
		struct xfers_group *g = &gs[i];
		bool same = g->now.n == g->prev.n && g->now.sum == g->prev.sum &&
			    g->now.xor == g->prev.xor;

		if (!g->used || !g->now.n)
			continue;
		x->st.groups++;
		g->streak = !g->changed && same ? g->streak + 1 : 0;
		if (g->streak < x->p.settle || g->now.n > x->p.max_n) {
			x->st.unsettled++;
			continue;
		}
		struct xfers_sample s = { .port = g->port, .n = g->now.n,
					  .bps = 8.0 * (double)g->sum / dt_s, .dt_s = dt_s };

		memcpy(s.addr, g->addr, 16);
		fn(arg, &s);
		made++;
	}
	x->st.samples += (uint64_t)made;
	x->prev_ns = x->now_ns;
	x->cur = !x->cur;
	return made;
}
