// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the effective competing count (daemon/collect/cpushare):
 * the water-filling share against the closed forms of weighted sharing
 * (CFS/EEVDF: w_i / sum w) and of a CPU quota, and against a second method,
 * a slot-by-slot simulation of a weighted fair scheduler with per-period
 * quotas, and of a task above nice 0 runnable part of the time; the
 * parsers on kernel text; the file lookups on a fake tree.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/collect/cpushare.h"
#include "tests/unit/unit_main.h"

#define W0 CPUSHARE_NICE0_WEIGHT

static void test_nice_weights(void **state)
{
	(void)state;
	assert_true(cpushare_nice_weight(0) == 1024);
	assert_true(cpushare_nice_weight(19) == 15);
	assert_true(cpushare_nice_weight(-20) == 88761);
	assert_true(cpushare_nice_weight(40) == 15);
	/* The kernel's rule: each nice level is about 1.25 x the next. */
	for (int n = -20; n <= 19; n++) {
		double closed = 1024.0 / pow(1.25, n);

		assert_true(fabs(cpushare_nice_weight(n) / closed - 1) < 0.05);
	}
}

static double eff(const struct cpushare_group *g, size_t n)
{
	return cpushare_effective(g, n);
}

/* Without caps: C_eff = sum a_i w_i / 1024, the CFS share formula. */
static void test_weighted_closed_form(void **state)
{
	struct cpushare_group g[4];

	(void)state;
	assert_true(eff(NULL, 0) == 0);
	for (int k = 1; k <= 3; k++) {
		for (int i = 0; i < k; i++)
			g[i] = (struct cpushare_group){ W0, INFINITY, 0.0 };
		assert_true(fabs(eff(g, (size_t)k) - k) < 1e-12);
		for (int i = 0; i < k; i++)
			g[i].weight = cpushare_nice_weight(19);
		/* The receiver's share 1024 / (1024 + 15 k). */
		assert_true(fabs(cpushare_rx_share(g, (size_t)k, W0) - 1024.0 / (1024 + 15.0 * k)) <
			    1e-12);
		assert_true(fabs(eff(g, (size_t)k) - 15.0 * k / 1024) < 1e-12);
	}
	/* Part-time: a hog runnable half the time at nice 10. */
	g[0] = (struct cpushare_group){ 0.5 * 110, INFINITY, 0.0 };
	assert_true(fabs(eff(g, 1) - 0.5 * 110 / 1024) < 1e-12);
	/* A receiver at nice 19 against one at nice 0. */
	g[0] = (struct cpushare_group){ W0, INFINITY, 0.0 };
	assert_true(fabs(cpushare_rx_share(g, 1, 15) - 15.0 / 1039) < 1e-12);
}

/* Caps: a group held to q of the CPU. */
static void test_quota_closed_form(void **state)
{
	struct cpushare_group g[3];

	(void)state;
	for (double q = 0.05; q < 1.0; q += 0.05) {
		g[0] = (struct cpushare_group){ W0, q, 0.0 };
		/* Alone with the receiver: min(q, 1/2). */
		double x = q < 0.5 ? q : 0.5;

		assert_true(fabs(eff(g, 1) - x / (1 - x)) < 1e-9);
		/* Three hogs in one capped group: min(q, 3/4). */
		g[0].weight = 3 * W0;
		x = q < 0.75 ? q : 0.75;
		assert_true(fabs(eff(g, 1) - x / (1 - x)) < 1e-9);
	}
	/* A capped group beside an uncapped hog: the cap's spare goes to both. */
	g[0] = (struct cpushare_group){ W0, 0.1, 0.0 };
	g[1] = (struct cpushare_group){ W0, INFINITY, 0.0 };
	assert_true(fabs(cpushare_rx_share(g, 2, W0) - 0.45) < 1e-12);
	/* Cap 0: the group takes nothing. */
	g[0].cap = 0;
	assert_true(fabs(cpushare_rx_share(g, 2, W0) - 0.5) < 1e-12);
}

/*
 * A second method: run a weighted fair scheduler slot by slot. Every slot
 * goes to the runnable entity with the least virtual time (advanced by
 * slot x 1024 / weight); a capped group runs at most cap x period in each
 * period and then waits throttled for the next. The receiver is always
 * runnable.
 */
struct slot_sched {
	const struct cpushare_group *g;
	int n;
	double rx_w;
	double vt[8], used[8], rx_vt;
	bool held[8];
};

/* Slot @s of a period of @period slots: who ran (-1 the receiver). */
static int slot_run(struct slot_sched *k, int s, int period)
{
	int best = -1;
	double bv = k->rx_vt;

	if (s % period == 0)
		memset(k->used, 0, sizeof(k->used));
	for (int i = 0; i < k->n; i++) {
		if (k->used[i] + 1 > k->g[i].cap * period + 1e-9) {
			k->held[i] = true;	/* throttled */
			continue;
		}
		/* Back from throttling: placed at the receiver's virtual time. */
		if (k->held[i] && k->vt[i] < k->rx_vt)
			k->vt[i] = k->rx_vt;
		k->held[i] = false;
		if (k->vt[i] < bv) {
			bv = k->vt[i];
			best = i;
		}
	}
	if (best < 0) {
		k->rx_vt += 1024.0 / k->rx_w;
	} else {
		k->vt[best] += 1024.0 / k->g[best].weight;
		k->used[best] += 1;
	}
	return best;
}

/* The receiver's share of the slots. */
static double simulate(const struct cpushare_group *g, int n, double rx_w)
{
	const int slots = 400000, period = 1000;	/* 0.1 ms slots, 100 ms */
	struct slot_sched k = { .g = g, .n = n, .rx_w = rx_w };
	long rx = 0;

	for (int s = 0; s < slots; s++)
		rx += slot_run(&k, s, period) < 0;
	return (double)rx / slots;
}

static void test_against_simulation(void **state)
{
	struct cpushare_group g[4];
	unsigned seed = 12345;

	(void)state;
	for (int trial = 0; trial < 40; trial++) {
		int n = 1 + (int)(rand_r(&seed) % 4);

		for (int i = 0; i < n; i++) {
			int nice = (int)(rand_r(&seed) % 30) - 5;
			int capped = rand_r(&seed) % 2;

			g[i].weight = cpushare_nice_weight(nice);
			g[i].cap = capped ? 0.05 + 0.05 * (rand_r(&seed) % 12) : INFINITY;
		}
		double want = simulate(g, n, W0);
		double got = cpushare_rx_share(g, (size_t)n, W0);

		if (fabs(got - want) > 0.01)
			fail_msg("trial %d: water-filling %.4f, simulation %.4f (n %d: w %.0f cap %.2f, "
				 "w %.0f cap %.2f, w %.0f cap %.2f, w %.0f cap %.2f)", trial, got, want, n,
				 g[0].weight, g[0].cap, g[1].weight, g[1].cap, g[2].weight, g[2].cap,
				 g[3].weight, g[3].cap);
	}
}

static void test_parse_nice(void **state)
{
	const char *stat =
		"4242 (a (b) c) R 1 4242 4242 0 -1 4194304 100 0 0 0 500 10 0 0 39 19 1 0 "
		"123 1000000 200 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	const char *neg =
		"7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 10 -10 1 0 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 "
		"17 0 0 0 0 0 0\n";
	int nice = 99;

	(void)state;
	assert_int_equal(cpushare_parse_nice(stat, &nice), 0);
	assert_int_equal(nice, 19);
	assert_int_equal(cpushare_parse_nice(neg, &nice), 0);
	assert_int_equal(nice, -10);
	assert_int_equal(cpushare_parse_nice("1 (x) R 1 2 3", &nice), -EINVAL);
	assert_int_equal(cpushare_parse_nice("no paren", &nice), -EINVAL);
	assert_int_equal(cpushare_parse_nice("1 (x) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 25 1",
					     &nice), -EINVAL);
}

static void test_parse_cgroup(void **state)
{
	char path[64];
	bool v1 = true;

	(void)state;
	assert_int_equal(cpushare_parse_cgroup("0::/system.slice/x.service\n", path,
					       sizeof(path), &v1), 0);
	assert_string_equal(path, "/system.slice/x.service");
	assert_false(v1);
	/* Hybrid: the v1 cpu hierarchy wins, wherever its line is. */
	assert_int_equal(cpushare_parse_cgroup("12:pids:/a\n0::/u\n3:cpu,cpuacct:/grp/h\n"
					       "2:cpuacct:/z\n",
					       path, sizeof(path), &v1), 0);
	assert_string_equal(path, "/grp/h");
	assert_true(v1);
	assert_int_equal(cpushare_parse_cgroup("1:cpuset:/a\n", path, sizeof(path), &v1),
			 -EINVAL);
	assert_int_equal(cpushare_parse_cgroup("0::/a/../../etc\n", path, sizeof(path), &v1),
			 -EINVAL);
	assert_int_equal(cpushare_parse_cgroup("0::relative\n", path, sizeof(path), &v1),
			 -EINVAL);
	assert_int_equal(cpushare_parse_cgroup("0::/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
					       path, sizeof(path), &v1), -EINVAL);
}

static void test_parse_quota(void **state)
{
	double cap = 0, per = 0;

	(void)state;
	assert_int_equal(cpushare_parse_cpu_max("max 100000\n", &cap, &per), 0);
	assert_true(isinf(cap));
	assert_int_equal(cpushare_parse_cpu_max("25000 100000\n", &cap, &per), 0);
	assert_true(fabs(cap - 0.25) < 1e-12);
	assert_true(fabs(per - 0.1) < 1e-15);
	assert_int_equal(cpushare_parse_cpu_max("25000 0\n", &cap, &per), -EINVAL);
	assert_int_equal(cpushare_parse_cpu_max("-5 100000\n", &cap, &per), -EINVAL);
	assert_int_equal(cpushare_parse_cpu_max("25000\n", &cap, &per), -EINVAL);
	assert_int_equal(cpushare_parse_cfs("-1\n", "100000\n", &cap, &per), 0);
	assert_true(isinf(cap));
	assert_int_equal(cpushare_parse_cfs("150000\n", "250000\n", &cap, &per), 0);
	assert_true(fabs(cap - 0.6) < 1e-12);
	assert_true(fabs(per - 0.25) < 1e-15);
	assert_int_equal(cpushare_parse_cfs("x\n", "100000\n", &cap, &per), -EINVAL);
	assert_int_equal(cpushare_parse_cfs("1000\n", "0\n", &cap, &per), -EINVAL);
}

/*
 * The scheduler of simulate() with one capped group (g[0]): per period,
 * the slots until the group has used its quota (the slow phase) and the
 * receiver's share of the slots then and after, over the periods after
 * the first.
 */
static void simulate_phases(const struct cpushare_group *g, int n, double rx_w,
			    double *slow_frac, double *slow_share, double *fast_share)
{
	const int periods = 60, period = 1000;
	struct slot_sched k = { .g = g, .n = n, .rx_w = rx_w };
	long rx_slow = 0, rx_fast = 0, slow = 0;

	for (int s = 0; s < periods * period; s++) {
		/* Before the slot runs: has the group quota left? */
		bool in_slow = s % period == 0 || k.used[0] + 1 <= g[0].cap * period + 1e-9;
		bool rx = slot_run(&k, s, period) < 0;

		if (s < period)
			continue;
		slow += in_slow;
		if (rx)
			*(in_slow ? &rx_slow : &rx_fast) += 1;
	}
	*slow_frac = (double)slow / ((periods - 1) * period);
	*slow_share = (double)rx_slow / slow;
	*fast_share = (double)rx_fast / ((periods - 1) * period - slow);
}

static void test_quota_phases(void **state)
{
	struct cpushare_group g[3] = {
		{ 2 * W0, 0.25, 0.1 },		/* two loops held to 25 % */
	};
	struct cpushare_phases ph;
	unsigned seed = 777;
	double f, s_slow, s_fast;
	int checked = 0;

	(void)state;
	/* Closed form: 1/3 each while the group runs, 25 ms of CPU in 37.5. */
	assert_true(cpushare_quota_phases(g, 1, W0, &ph));
	assert_true(fabs(ph.period_s - 0.1) < 1e-15);
	assert_true(fabs(ph.slow_s - 0.0375) < 1e-12);
	assert_true(fabs(ph.slow_share - 1.0 / 3) < 1e-12);
	assert_true(ph.fast_share == 1.0);
	/* A busy loop beside them: 1/4 each, 50 ms; then 1/2. */
	g[1] = (struct cpushare_group){ W0, INFINITY, 0.0 };
	assert_true(cpushare_quota_phases(g, 2, W0, &ph));
	assert_true(fabs(ph.slow_s - 0.05) < 1e-12);
	assert_true(fabs(ph.slow_share - 0.25) < 1e-12);
	assert_true(fabs(ph.fast_share - 0.5) < 1e-12);
	/* Never throttled (its share is below its cap), none, or two: no phases. */
	g[0].cap = 0.6;
	assert_false(cpushare_quota_phases(g, 2, W0, &ph));
	assert_true(ph.period_s == 0);
	assert_false(cpushare_quota_phases(g + 1, 1, W0, &ph));
	/* A cap of 0 (the group never runs): none either. */
	g[0].cap = 0.0;
	assert_false(cpushare_quota_phases(g, 1, W0, &ph));
	g[0].cap = 0.2;
	g[1].cap = 0.1;
	g[1].period_s = 0.1;
	assert_false(cpushare_quota_phases(g, 2, W0, &ph));
	/* Against the slot scheduler: random weights, caps and a free co-runner. */
	for (int trial = 0; trial < 20; trial++) {
		int n = 1 + (int)(rand_r(&seed) % 3);

		g[0].weight = cpushare_nice_weight((int)(rand_r(&seed) % 20) - 5) *
			      (1 + (int)(rand_r(&seed) % 3));
		g[0].cap = 0.05 + 0.05 * (rand_r(&seed) % 8);
		g[0].period_s = 0.1;
		for (int i = 1; i < n; i++)
			g[i] = (struct cpushare_group){
				cpushare_nice_weight((int)(rand_r(&seed) % 30) - 5), INFINITY, 0.0 };
		if (!cpushare_quota_phases(g, (size_t)n, W0, &ph))
			continue;
		simulate_phases(g, n, W0, &f, &s_slow, &s_fast);
		if (fabs(ph.slow_s / ph.period_s - f) > 0.01 || fabs(ph.slow_share - s_slow) > 0.01 ||
		    fabs(ph.fast_share - s_fast) > 0.01)
			fail_msg("trial %d: slow %.4f/%.4f of the period, shares %.4f/%.4f and "
				 "%.4f/%.4f (closed form/simulation; n %d, w %.0f cap %.2f)", trial,
				 ph.slow_s / ph.period_s, f, ph.slow_share, s_slow, ph.fast_share,
				 s_fast, n, g[0].weight, g[0].cap);
		checked++;
	}
	assert_true(checked >= 10);
}

static void put(const char *root, const char *rel, const char *text)
{
	char p[512], dir[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(s - p), p);
		mkdir(dir, 0700);
	}
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_task_info_tree(void **state)
{
	char root[] = "/tmp/rxbt-cpushare.XXXXXX", proc[128], cg[128], cmd[192];
	const char *stat19 = "10 (hog) R 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 39 19 1 0 1 1 1 1 0 0 0 0 "
			     "0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	const char *stat0 = "11 (hog) R 1 11 11 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 0 0 0 0 "
			    "0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	struct cpushare s;
	struct cpushare_task t;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cg, sizeof(cg), "%s/cg", root);
	/* v2: nice 19, quota on the parent (30 %) tighter than its own (50 %). */
	put(root, "proc/10/task/10/stat", stat19);
	put(root, "proc/10/task/10/cgroup", "0::/lim/job\n");
	put(root, "cg/lim/cpu.max", "30000 100000\n");
	put(root, "cg/lim/job/cpu.max", "50000 100000\n");
	/* v1 hybrid: nice 0, cfs quota 20 %. */
	put(root, "proc/11/task/11/stat", stat0);
	put(root, "proc/11/task/11/cgroup", "4:cpu,cpuacct:/q\n0::/\n");
	put(root, "cg/cpu/q/cpu.cfs_quota_us", "20000\n");
	put(root, "cg/cpu/q/cpu.cfs_period_us", "100000\n");
	cpushare_init(&s, proc, cg);
	cpushare_task_info(&s, 10, 10, &t);
	assert_true(t.weight == 15);
	assert_true(fabs(t.cap - 0.3) < 1e-12);
	assert_true(fabs(t.period_s - 0.1) < 1e-15);
	assert_string_equal(t.cap_path, "/lim");
	cpushare_task_info(&s, 11, 11, &t);
	assert_true(t.weight == 1024);
	assert_true(fabs(t.cap - 0.2) < 1e-12);
	/* Gone: nice 0, no quota. */
	cpushare_task_info(&s, 12, 12, &t);
	assert_true(t.weight == 1024 && isinf(t.cap) && t.period_s == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/*
 * A second method for a part-time task: slot by slot, a weighted fair
 * scheduler with the receiver (always runnable), @loops busy loops at nice
 * 0 and one task of weight @w that wants @demand slots at the start of
 * every period of @period slots (placed at the receiver's virtual time
 * when it wakes). *@runnable gets its runnable share of the slots; the
 * receiver's share of them is returned.
 */
static double simulate_part_time(double w, int demand, int period, int loops, double *runnable)
{
	const int slots = 200 * period;
	double vt[4] = { 0 }, rx_vt = 0;	/* vt[0] the task, 1.. the loops */
	long rx = 0, up = 0;
	int left = 0;

	for (int s = 0; s < slots; s++) {
		int best = -1;
		double bv = rx_vt;

		if (s % period == 0) {
			left = demand;
			if (vt[0] < rx_vt)
				vt[0] = rx_vt;
		}
		up += left > 0;
		for (int i = left > 0 ? 0 : 1; i <= loops; i++) {
			if (vt[i] < bv) {
				bv = vt[i];
				best = i;
			}
		}
		if (best < 0) {
			rx_vt += 1.0;
			rx++;
		} else if (best == 0) {
			vt[0] += W0 / w;
			left--;
		} else {
			vt[best] += 1.0;
		}
	}
	*runnable = (double)up / slots;
	return (double)rx / slots;
}

/*
 * A task above nice 0 that is runnable part of the time (a kworker at
 * nice -20, a daemon at -10) takes what it needs and no more: its a_i w_i
 * alone would count it as many busy loops. Against the simulation, with
 * and without a busy loop beside it: the receiver's share from the
 * effective count is never above the simulated one, and below it by at
 * most what the cap a_i leaves out (the task's waits while runnable:
 * a_i x (1 - w / (w + the others' weights)), the others counting whole).
 */
static void test_part_time_weights(void **state)
{
	static const struct { int nice, demand, loops; } cases[] = {
		{ -20, 90, 0 }, { -20, 90, 1 }, { -20, 300, 1 }, { -10, 200, 0 },
		{ -10, 50, 1 }, { -5, 100, 0 }, { 0, 400, 0 }, { 0, 400, 1 },
	};
	struct collect_sched_task_report v[2];
	struct rxb_epoch *e = calloc(1, sizeof(*e));
	char root[] = "/tmp/rxbt-cpushare.XXXXXX", proc[128], stat[160], cmd[192];
	struct cpushare s;

	(void)state;
	assert_non_null(e);
	assert_non_null(mkdtemp(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	cpushare_init(&s, proc, "/nonexistent-cg");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		double w = cpushare_nice_weight(cases[c].nice), a, want, got, slack;
		int loops = cases[c].loops;
		struct collect_sched_report r = { .v = v, .n = 1 + (size_t)loops };

		snprintf(stat, sizeof(stat), "30 (kw) S 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 %d %d 1 0 1 1 1 "
			 "1 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n", 20 + cases[c].nice, cases[c].nice);
		put(root, "proc/30/task/30/stat", stat);
		want = simulate_part_time(w, cases[c].demand, 1000, loops, &a);
		v[0] = (struct collect_sched_task_report){ .tid = 30, .tgid = 30, .cls = TASK_CLASS_NONE,
							   .nw = 1, .w = { { 1, a } } };
		v[1] = (struct collect_sched_task_report){ .tid = 31, .tgid = 31, .cls = TASK_CLASS_CPU,
							   .nw = 1, .w = { { 1, 1.0 } } };
		memset(e, 0, sizeof(*e));
		e->ncpus = 2;
		cpushare_epoch(&s, &r, e);
		got = 1.0 / (1.0 + e->cpus[1].cpu_bound_eff);
		slack = a * (1.0 - w / (w + W0 * (1 + loops)));
		print_message("nice %3d, %d of 1000 slots, %d loop(s): runnable %.3f, receiver %.4f "
			      "simulated, %.4f from C_eff %.3f (a w / 1024 alone: %.2f)\n",
			      cases[c].nice, cases[c].demand, loops, a, want, got,
			      e->cpus[1].cpu_bound_eff, a * w / W0 + loops);
		assert_true(got <= want + 0.005);
		assert_true(want - got <= slack + 0.005);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	free(e);
}

/* The epoch: per CPU, from a task report. */
static void test_epoch(void **state)
{
	struct collect_sched_task_report v[3] = {
		/* A busy loop at nice 0 on CPU 1 (no files: defaults). */
		{ .tid = 1, .tgid = 1, .cls = TASK_CLASS_CPU, .nw = 1, .w = { { 1, 1.0 } } },
		/* An unclassified task runnable 40 % of the time on CPU 1. */
		{ .tid = 2, .tgid = 2, .cls = TASK_CLASS_NONE, .nw = 1, .w = { { 1, 0.4 } } },
		/* I/O-bound and a receiver: left to the model's #I and tag. */
		{ .tid = 3, .tgid = 3, .cls = TASK_CLASS_IO, .nw = 1, .w = { { 1, 1.0 } } },
	};
	struct collect_sched_report r = { .v = v, .n = 3, .with_runnable = true };
	struct rxb_epoch *e = calloc(1, sizeof(*e));
	struct cpushare s;

	(void)state;
	assert_non_null(e);
	e->ncpus = 2;
	cpushare_init(&s, "/nonexistent-proc", "/nonexistent-cg");
	cpushare_epoch(&s, &r, e);
	assert_true(fabs(e->cpus[1].cpu_bound_eff - 1.4) < 1e-12);
	assert_true(e->cpus[0].cpu_bound_eff == 0);
	assert_true(e->cpus[0].cpu_bound_eff_valid && e->cpus[1].cpu_bound_eff_valid);
	free(e);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_nice_weights),
	cmocka_unit_test(test_weighted_closed_form),
	cmocka_unit_test(test_quota_closed_form),
	cmocka_unit_test(test_against_simulation),
	cmocka_unit_test(test_parse_nice),
	cmocka_unit_test(test_parse_cgroup),
	cmocka_unit_test(test_parse_quota),
	cmocka_unit_test(test_quota_phases),
	cmocka_unit_test(test_task_info_tree),
	cmocka_unit_test(test_part_time_weights),
	cmocka_unit_test(test_epoch),
)
