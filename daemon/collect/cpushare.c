// SPDX-License-Identifier: GPL-2.0-or-later
/* Effective competing CPU load per CPU. See cpushare.h. */
#include "daemon/collect/cpushare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/collect/procfs.h"

/* The kernel's sched_prio_to_weight[], nice -20 .. 19. */
static const double nice_weight[40] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};

double cpushare_nice_weight(int nice)
{
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	return nice_weight[nice + 20];
}

/*
 * Water-filling: share the free capacity among the uncapped in proportion
 * to weight; every group whose proportional share exceeds its cap gets the
 * cap and leaves; repeat until none does. Freezing all violators at once
 * is exact: the others' shares only grow as capacity is handed back.
 */
double cpushare_rx_share(const struct cpushare_group *g, size_t n, double rx_weight)
{
	double free_frac = 1.0;
	bool *frozen;
	bool changed = true;
	double wsum = rx_weight;

	if (!(rx_weight > 0))
		return 0;
	if (!n)
		return 1;
	frozen = calloc(n, sizeof(*frozen));
	if (!frozen)
		return NAN;
	while (changed) {
		changed = false;
		wsum = rx_weight;
		for (size_t i = 0; i < n; i++)
			if (!frozen[i] && g[i].weight > 0)
				wsum += g[i].weight;
		for (size_t i = 0; i < n; i++) {
			double cap = g[i].cap >= 0 ? g[i].cap : 0;

			if (frozen[i] || !(g[i].weight > 0))
				continue;
			if (cap < free_frac * g[i].weight / wsum) {
				frozen[i] = true;
				changed = true;
			}
		}
		if (changed) {
			free_frac = 1.0;
			for (size_t i = 0; i < n; i++)
				if (frozen[i])
					free_frac -= g[i].cap >= 0 ? g[i].cap : 0;
		}
	}
	free(frozen);
	return free_frac > 0 ? free_frac * rx_weight / wsum : 0;
}

double cpushare_effective(const struct cpushare_group *g, size_t n)
{
	double s = cpushare_rx_share(g, n, CPUSHARE_NICE0_WEIGHT);

	if (!isfinite(s))
		return NAN;
	return s > 0 ? (1 - s) / s : INFINITY;
}

int cpushare_parse_nice(const char *stat_text, int *nice)
{
	const char *p = strrchr(stat_text, ')');
	long v;
	char *end;

	if (!p)
		return -EINVAL;
	p++;
	/* Fields 3 (state) .. 18 (priority) before it. */
	for (int f = 3; f <= 19; f++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -EINVAL;
		if (f == 19)
			break;
		while (*p && *p != ' ')
			p++;
	}
	errno = 0;
	v = strtol(p, &end, 10);
	if (end == p || errno || v < -20 || v > 19 || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	*nice = (int)v;
	return 0;
}

/* Is @list (comma-separated controller names, @n bytes) one with "cpu"? */
static bool has_cpu(const char *list, size_t n)
{
	const char *p = list, *end = list + n;

	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		size_t w = c ? (size_t)(c - p) : (size_t)(end - p);

		if (w == 3 && !strncmp(p, "cpu", 3))
			return true;
		p = c ? c + 1 : end;
	}
	return false;
}

int cpushare_parse_cgroup(const char *text, char *path, size_t len, bool *v1)
{
	const char *p = text, *found = NULL;
	size_t flen = 0;
	bool fv1 = false;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *c1 = memchr(p, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - p)) : NULL;

		if (c2) {
			/* The v1 hierarchy with the cpu controller wins. */
			bool v1cpu = has_cpu(c1 + 1, (size_t)(c2 - c1 - 1));
			bool v2 = c2 == c1 + 1 && c1 - p == 1 && p[0] == '0';

			if (v1cpu || (v2 && !found)) {
				found = c2 + 1;
				flen = n - (size_t)(c2 + 1 - p);
				fv1 = v1cpu;
				if (v1cpu)
					break;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	if (!found || !flen || found[0] != '/' || flen >= len)
		return -EINVAL;
	/* ".." would lead out of the hierarchy's root. */
	if (memmem(found, flen, "/../", 4) || (flen >= 3 && !memcmp(found + flen - 3, "/..", 3)))
		return -EINVAL;
	memcpy(path, found, flen);
	path[flen] = '\0';
	*v1 = fv1;
	return 0;
}

int cpushare_parse_cfs(const char *quota_text, const char *period_text, double *cap,
		       double *period_s)
{
	long long q;
	unsigned long long per;
	char *end;

	errno = 0;
	q = strtoll(quota_text, &end, 10);
	if (end == quota_text || errno || (*end && *end != '\n') || q < -1)
		return -EINVAL;
	errno = 0;
	per = strtoull(period_text, &end, 10);
	if (end == period_text || errno || *period_text == '-' || !per ||
	    (*end && *end != '\n'))
		return -EINVAL;
	*cap = q < 0 ? INFINITY : (double)q / (double)per;
	*period_s = (double)per * 1e-6;
	return 0;
}

int cpushare_parse_cpu_max(const char *text, double *cap, double *period_s)
{
	unsigned long long q = 0, per;
	char *end;
	const char *p = text;

	if (!strncmp(p, "max", 3) && p[3] == ' ') {
		p += 4;
	} else {
		errno = 0;
		q = strtoull(p, &end, 10);
		if (end == p || errno || *end != ' ' || *p == '-')
			return -EINVAL;
		p = end + 1;
	}
	errno = 0;
	per = strtoull(p, &end, 10);
	if (end == p || errno || *p == '-' || !per || (*end && *end != '\n'))
		return -EINVAL;
	*cap = text[0] == 'm' ? INFINITY : (double)q / (double)per;
	*period_s = (double)per * 1e-6;
	return 0;
}

/*
 * The share of an uncapped member of weight @w among the groups @g but the
 * one at @skip, with one more uncapped member of weight @add_w (0: none):
 * water-filling treats every uncapped member alike.
 */
static double share_among(const struct cpushare_group *g, size_t n, size_t skip,
			  double add_w, double w)
{
	struct cpushare_group *o = calloc(n, sizeof(*o));
	size_t m = 0;
	double share;

	if (!o)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (i != skip)
			o[m++] = g[i];
	o[m++] = (struct cpushare_group){ add_w, INFINITY, 0.0 };
	share = cpushare_rx_share(o, m, w);
	free(o);
	return share;
}

bool cpushare_quota_phases(const struct cpushare_group *g, size_t n, double rx_weight,
			   struct cpushare_phases *out)
{
	size_t q = n;
	double s_q;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		/* A cap of 0 never lets the group run: no phases from it. */
		if (!(g[i].cap > 0.0 && g[i].cap < 1.0) || !(g[i].weight > 0) ||
		    !(g[i].period_s > 0))
			continue;
		if (q < n)
			return false;	/* a second one */
		q = i;
	}
	if (q == n)
		return false;
	/* Unthrottled, the group competes by weight with the rest and the receiver. */
	s_q = share_among(g, n, q, rx_weight, g[q].weight);
	if (!(s_q > g[q].cap) || !isfinite(s_q))
		return false;
	out->period_s = g[q].period_s;
	out->slow_s = g[q].cap * g[q].period_s / s_q;
	out->slow_share = share_among(g, n, q, g[q].weight, rx_weight);
	out->fast_share = share_among(g, n, q, 0.0, rx_weight);
	if (!(out->slow_share > 0) || !isfinite(out->fast_share)) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	return true;
}

void cpushare_init(struct cpushare *s, const char *proc_root, const char *cgroup_root)
{
	rxb_strlcpy(s->proc_root, proc_root, sizeof(s->proc_root));
	rxb_strlcpy(s->cgroup_root, cgroup_root, sizeof(s->cgroup_root));
}

/*
 * The cap one cgroup's own files give (inf: none or unreadable), its
 * period into @period_s (0 without a cap).
 */
static double cap_of(const struct cpushare *s, const char *path, bool v1, double *period_s)
{
	char file[2 * CPUSHARE_PATH_LEN + 32];
	char *q = NULL, *per = NULL;
	double cap = INFINITY;

	if (v1) {
		snprintf(file, sizeof(file), "%s/cpu%s/cpu.cfs_quota_us", s->cgroup_root, path);
		if (procfs_read_file(file, &q, NULL) == 0) {
			snprintf(file, sizeof(file), "%s/cpu%s/cpu.cfs_period_us",
				 s->cgroup_root, path);
			if (procfs_read_file(file, &per, NULL) == 0 &&
			    cpushare_parse_cfs(q, per, &cap, period_s) != 0)
				cap = INFINITY;
		}
	} else {
		snprintf(file, sizeof(file), "%s%s/cpu.max", s->cgroup_root, path);
		if (procfs_read_file(file, &q, NULL) == 0 &&
		    cpushare_parse_cpu_max(q, &cap, period_s) != 0)
			cap = INFINITY;
	}
	free(q);
	free(per);
	if (!isfinite(cap))
		*period_s = 0.0;
	return cap;
}

/* The tightest quota from @path up to the root, and whose it is. */
static void quota_of(const struct cpushare *s, char *path, bool v1,
		     struct cpushare_task *out)
{
	for (;;) {
		double period_s = 0.0;
		double cap = cap_of(s, path, v1, &period_s);
		char *slash;

		if (cap < out->cap) {
			out->cap = cap;
			out->period_s = period_s;
			rxb_strlcpy(out->cap_path, path, sizeof(out->cap_path));
		}
		slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
	}
}

void cpushare_task_info(const struct cpushare *s, uint32_t tgid, uint32_t tid,
			struct cpushare_task *out)
{
	char file[CPUSHARE_PATH_LEN + 64], path[CPUSHARE_PATH_LEN];
	char *text = NULL;
	bool v1 = false;
	int nice;

	out->weight = CPUSHARE_NICE0_WEIGHT;
	out->cap = INFINITY;
	out->period_s = 0.0;
	out->cap_path[0] = '\0';
	snprintf(file, sizeof(file), "%s/%u/task/%u/stat", s->proc_root, tgid, tid);
	if (procfs_read_file(file, &text, NULL) == 0 && cpushare_parse_nice(text, &nice) == 0)
		out->weight = cpushare_nice_weight(nice);
	free(text);
	text = NULL;
	snprintf(file, sizeof(file), "%s/%u/task/%u/cgroup", s->proc_root, tgid, tid);
	if (procfs_read_file(file, &text, NULL) == 0 &&
	    cpushare_parse_cgroup(text, path, sizeof(path), &v1) == 0 && strcmp(path, "/"))
		quota_of(s, path, v1, out);
	free(text);
}

/*
 * Add a_i w_i of one task to the groups of a CPU. A task runnable a
 * fraction a_i of the time uses at most a_i of the CPU, whatever its
 * weight: outside a quota's group that is its own cap. It binds only for
 * a weight above nice 0's (where w_i (1 - a_i) exceeds the receiver's and
 * the others' weights): a kworker at nice -20 runnable 9 % of an epoch
 * would otherwise count as eight busy loops.
 */
static size_t add_group(struct cpushare_group *g, const char **key, size_t n,
			const struct cpushare_task *t, double frac)
{
	double cap = t->cap;

	if (isfinite(t->cap)) {
		for (size_t i = 0; i < n; i++) {
			if (key[i] && !strcmp(key[i], t->cap_path)) {
				g[i].weight += frac * t->weight;
				return n;
			}
		}
	}
	if (!isfinite(cap) && frac < 1.0)
		cap = frac;
	g[n] = (struct cpushare_group){ frac * t->weight, cap, t->period_s };
	key[n] = isfinite(t->cap) ? t->cap_path : NULL;
	return n + 1;
}

/*
 * A CPU's quota phases (cpushare_quota_phases()), the tasks not looked up
 * (@extra busy nice-0 equivalents) added as one uncapped group.
 */
static void set_phases(struct cpushare_group *g, size_t n, double extra,
		       struct rxb_cpu_meas *m)
{
	struct cpushare_phases ph;

	if (extra > 0)
		g[n++] = (struct cpushare_group){ extra * CPUSHARE_NICE0_WEIGHT, INFINITY, 0.0 };
	cpushare_quota_phases(g, n, CPUSHARE_NICE0_WEIGHT, &ph);
	m->quota_period_s = ph.period_s;
	m->quota_slow_s = ph.slow_s;
	m->quota_slow_share = ph.slow_share;
	m->quota_fast_share = ph.fast_share;
}

void cpushare_epoch(const struct cpushare *s, const struct collect_sched_report *r,
		    struct rxb_epoch *out)
{
	size_t nt = r->n < CPUSHARE_MAX_TASKS ? r->n : CPUSHARE_MAX_TASKS;
	struct cpushare_task *info = calloc(nt ? nt : 1, sizeof(*info));
	/* One more for set_phases()' tasks not looked up. */
	struct cpushare_group *g = calloc(nt + 1, sizeof(*g));
	const char **key = calloc(nt ? nt : 1, sizeof(*key));

	if (!info || !g || !key) {
		for (int c = 0; c < out->ncpus; c++) {
			out->cpus[c].cpu_bound_eff = NAN;
			out->cpus[c].cpu_bound_eff_valid = false;
			out->cpus[c].quota_period_s = 0.0;
		}
		goto out;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct collect_sched_task_report *t = &r->v[i];

		if (!t->receiver && t->cls != TASK_CLASS_IO)
			cpushare_task_info(s, t->tgid, t->tid, &info[i]);
	}
	for (int c = 0; c < out->ncpus; c++) {
		size_t n = 0;
		double extra = 0;

		for (size_t i = 0; i < r->n; i++) {
			const struct collect_sched_task_report *t = &r->v[i];

			if (t->receiver || t->cls == TASK_CLASS_IO)
				continue;
			for (int k = 0; k < t->nw; k++) {
				if (t->w[k].cpu != c || !(t->w[k].w > 0))
					continue;
				if (i < nt)
					n = add_group(g, key, n, &info[i], t->w[k].w);
				else	/* not looked up: nice 0, no quota */
					extra += t->w[k].w;
			}
		}
		out->cpus[c].cpu_bound_eff = cpushare_effective(g, n) + extra;
		out->cpus[c].cpu_bound_eff_valid = isfinite(out->cpus[c].cpu_bound_eff);
		set_phases(g, n, extra, &out->cpus[c]);
	}
out:
	free(info);
	free(g);
	free(key);
}
