// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * When to attach the per-packet probes (netplan.h).
 */
#include "daemon/collect/netplan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

int netplan_init(struct netplan *np, const struct netplan_params *p)
{
	memset(np, 0, sizeof(*np));
	return netplan_set_params(np, p);
}

void netplan_finish(struct netplan *np)
{
	memset(np, 0, sizeof(*np));
}

int netplan_set_params(struct netplan *np, const struct netplan_params *p)
{
	if (!p->steady_every)
		return -EINVAL;
	np->p = *p;
	return 0;
}

void netplan_learn(struct netplan *np, uint64_t now_ns, const char *why)
{
	np->learn_until_ns = now_ns + np->p.learn_ns;
	np->learn_starts++;
	np->last_change_ns = now_ns;
	rxb_strlcpy(np->why, why, sizeof(np->why));
}

static struct netplan_obs *base_of(struct netplan *np, uint16_t port)
{
	for (int i = 0; i < np->nbase; i++)
		if (np->base[i].port == port)
			return &np->base[i];
	return NULL;
}

/* Moved by NETPLAN_MOVED_TASKS or more; unknown on either side is no move. */
static bool tasks_moved(double now, double then)
{
	return isfinite(now) && isfinite(then) &&
	       !(fabs(now - then) < NETPLAN_MOVED_TASKS);
}

/*
 * How @o differs from what @b was learned with ("" when it does not).
 * Known values fill in unknown ones of the baseline without a change.
 */
static bool path_changed(struct netplan_obs *b, const struct netplan_obs *o,
			 char *why, size_t len)
{
	if (o->cpu >= 0 && b->cpu >= 0 && o->cpu != b->cpu) {
		snprintf(why, len, "port %u: receiver moved from CPU %d to %d",
			 o->port, b->cpu, o->cpu);
		return true;
	}
	if (tasks_moved(o->cpu_bound, b->cpu_bound)) {
		snprintf(why, len, "port %u: #C %.2f -> %.2f", o->port,
			 b->cpu_bound, o->cpu_bound);
		return true;
	}
	if (tasks_moved(o->io_bound, b->io_bound)) {
		snprintf(why, len, "port %u: #I %.2f -> %.2f", o->port,
			 b->io_bound, o->io_bound);
		return true;
	}
	if (b->cpu < 0)
		b->cpu = o->cpu;
	if (!isfinite(b->cpu_bound))
		b->cpu_bound = o->cpu_bound;
	if (!isfinite(b->io_bound))
		b->io_bound = o->io_bound;
	return false;
}

/* The new baseline after a change: what is known now, else what was. */
static void rebase(struct netplan_obs *b, const struct netplan_obs *o)
{
	if (o->cpu >= 0)
		b->cpu = o->cpu;
	if (isfinite(o->cpu_bound))
		b->cpu_bound = o->cpu_bound;
	if (isfinite(o->io_bound))
		b->io_bound = o->io_bound;
}

bool netplan_epoch(struct netplan *np, uint64_t now_ns,
		   const struct netplan_obs *obs, int nobs)
{
	struct netplan_obs next[NETPLAN_MAX_FLOWS];
	char why[NETPLAN_WHY_LEN] = "";
	bool change = false;
	int n = 0;

	if (!np->started) {
		np->started = true;
		change = true;
		rxb_strlcpy(why, "start", sizeof(why));
	}
	for (int i = 0; i < nobs && n < NETPLAN_MAX_FLOWS; i++) {
		struct netplan_obs *b = base_of(np, obs[i].port);
		char w[NETPLAN_WHY_LEN];

		if (!b) {
			next[n++] = obs[i];
			if (!change)
				snprintf(why, sizeof(why), "port %u: new flow", obs[i].port);
			change = true;
			continue;
		}
		next[n] = *b;
		if (path_changed(&next[n], &obs[i], w, sizeof(w))) {
			if (!change)
				rxb_strlcpy(why, w, sizeof(why));
			change = true;
		}
		n++;
	}
	if (change) {
		/* Every flow is learned afresh: rebase them all. */
		for (int i = 0; i < n; i++)
			rebase(&next[i], &obs[i]);
		netplan_learn(np, now_ns, why);
	}
	memcpy(np->base, next, (size_t)n * sizeof(next[0]));
	np->nbase = n;
	return change;
}

bool netplan_learning(const struct netplan *np, uint64_t now_ns)
{
	/* Before the first epoch: learning is where every run starts. */
	return np->p.learn_ns && (!np->started || now_ns < np->learn_until_ns);
}

uint32_t netplan_every(const struct netplan *np, uint64_t now_ns)
{
	return netplan_learning(np, now_ns) ? 1 : np->p.steady_every;
}
