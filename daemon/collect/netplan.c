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

static struct netplan_flow *flow_of(struct netplan *np, uint16_t port)
{
	for (int i = 0; i < np->nbase; i++)
		if (np->base[i].port == port)
			return &np->base[i];
	return NULL;
}

static bool in_obs(const struct netplan_obs *obs, int nobs, uint16_t port)
{
	for (int i = 0; i < nobs; i++)
		if (obs[i].port == port)
			return true;
	return false;
}

/* Forget the flows that are gone (keeping the others' order). */
static void forget_gone(struct netplan *np, const struct netplan_obs *obs, int nobs)
{
	int n = 0;

	for (int i = 0; i < np->nbase; i++)
		if (in_obs(obs, nobs, np->base[i].port))
			np->base[n++] = np->base[i];
	np->nbase = n;
}

/* Does the receiver run on @o's CPU @i: enough of its time, or the most? */
static bool runs_on(const struct netplan_obs *o, int i)
{
	int top = 0;

	if (o->cpus[i].share >= NETPLAN_MIN_SHARE)
		return true;
	for (int k = 1; k < o->ncpus && k < NETPLAN_OBS_CPUS; k++)
		if (o->cpus[k].share > o->cpus[top].share)
			top = k;
	return i == top;
}

static struct netplan_cpu *learned_on(struct netplan_flow *b, int cpu)
{
	for (int k = 0; k < b->ncpus; k++)
		if (b->cpus[k].cpu == cpu)
			return &b->cpus[k];
	return NULL;
}

/* Room for CPU @cpu among the learned ones: a free entry or the least
 * recently used one. */
static struct netplan_cpu *learn_on(struct netplan_flow *b, int cpu)
{
	struct netplan_cpu *l;
	int lru = 0;

	if (b->ncpus < NETPLAN_MAX_CPUS) {
		l = &b->cpus[b->ncpus++];
	} else {
		for (int k = 1; k < b->ncpus; k++)
			if (b->cpus[k].seen_ns < b->cpus[lru].seen_ns)
				lru = k;
		l = &b->cpus[lru];
	}
	*l = (struct netplan_cpu){ .cpu = cpu, .cpu_bound = NAN, .io_bound = NAN };
	return l;
}

/* Moved by NETPLAN_MOVED_TASKS or more; unknown on either side is no move. */
static bool tasks_moved(double now, double then)
{
	return isfinite(now) && isfinite(then) &&
	       !(fabs(now - then) < NETPLAN_MOVED_TASKS);
}

/* Take @x's known loads into @l (all of them when @all, else only where
 * @l's are unknown), and note that the receiver ran there at @now_ns. */
static void note_cpu(struct netplan_cpu *l, const struct netplan_cpu *x, bool all,
		     uint64_t now_ns)
{
	if (isfinite(x->cpu_bound) && (all || !isfinite(l->cpu_bound)))
		l->cpu_bound = x->cpu_bound;
	if (isfinite(x->io_bound) && (all || !isfinite(l->io_bound)))
		l->io_bound = x->io_bound;
	l->seen_ns = now_ns;
}

/* "0,1,3" (as many as fit). */
static void cpu_list(const struct netplan_flow *b, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < b->ncpus && n < len; k++) {
		int w = snprintf(buf + n, len - n, "%s%d", k ? "," : "", b->cpus[k].cpu);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/*
 * How the CPUs @o's receiver runs on differ from what @b learned there
 * (false when they do not). New CPUs join @b without a change while
 * @learning, or when @b knows no CPU yet; known values fill in unknown
 * ones without a change.
 */
static bool flow_changed(struct netplan_flow *b, const struct netplan_obs *o,
			 bool learning, uint64_t now_ns, char *why, size_t len)
{
	for (int i = 0; i < o->ncpus && i < NETPLAN_OBS_CPUS; i++) {
		const struct netplan_cpu *x = &o->cpus[i];
		struct netplan_cpu *l;

		if (!runs_on(o, i))
			continue;
		l = learned_on(b, x->cpu);
		if (!l && !learning && b->ncpus) {
			char cpus[48];

			cpu_list(b, cpus, sizeof(cpus));
			snprintf(why, len, "port %u: receiver on CPU %d (learned on CPU %s)",
				 o->port, x->cpu, cpus);
			return true;
		}
		if (!l) {
			note_cpu(learn_on(b, x->cpu), x, true, now_ns);
			continue;
		}
		if (tasks_moved(x->cpu_bound, l->cpu_bound)) {
			snprintf(why, len, "port %u: #C of CPU %d %.2f -> %.2f", o->port,
				 x->cpu, l->cpu_bound, x->cpu_bound);
			return true;
		}
		if (tasks_moved(x->io_bound, l->io_bound)) {
			snprintf(why, len, "port %u: #I of CPU %d %.2f -> %.2f", o->port,
				 x->cpu, l->io_bound, x->io_bound);
			return true;
		}
		note_cpu(l, x, false, now_ns);
	}
	return false;
}

/* Learned afresh from now: the CPUs the receiver runs on now take their
 * loads of now; the other CPUs learned before keep theirs. */
static void rebase(struct netplan_flow *b, const struct netplan_obs *o, uint64_t now_ns)
{
	for (int i = 0; i < o->ncpus && i < NETPLAN_OBS_CPUS; i++) {
		struct netplan_cpu *l;

		if (!runs_on(o, i))
			continue;
		l = learned_on(b, o->cpus[i].cpu);
		note_cpu(l ? l : learn_on(b, o->cpus[i].cpu), &o->cpus[i], true, now_ns);
	}
}

bool netplan_epoch(struct netplan *np, uint64_t now_ns,
		   const struct netplan_obs *obs, int nobs)
{
	bool learning = netplan_learning(np, now_ns) && np->started;
	char why[NETPLAN_WHY_LEN] = "";
	bool change = false;

	if (!np->started) {
		np->started = true;
		change = true;
		rxb_strlcpy(why, "start", sizeof(why));
	}
	forget_gone(np, obs, nobs);
	for (int i = 0; i < nobs; i++) {
		struct netplan_flow *b = flow_of(np, obs[i].port);
		char w[NETPLAN_WHY_LEN];

		if (!b) {
			if (np->nbase == NETPLAN_MAX_FLOWS)
				continue;
			b = &np->base[np->nbase++];
			*b = (struct netplan_flow){ .port = obs[i].port };
			if (!change)
				snprintf(why, sizeof(why), "port %u: new flow", obs[i].port);
			change = true;
			continue;
		}
		if (flow_changed(b, &obs[i], learning, now_ns, w, sizeof(w))) {
			if (!change)
				rxb_strlcpy(why, w, sizeof(why));
			change = true;
		}
	}
	if (!change)
		return false;
	/* Every flow is learned afresh: rebase them all. */
	for (int i = 0; i < nobs; i++) {
		struct netplan_flow *b = flow_of(np, obs[i].port);

		if (b)
			rebase(b, &obs[i], now_ns);
	}
	netplan_learn(np, now_ns, why);
	return true;
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
