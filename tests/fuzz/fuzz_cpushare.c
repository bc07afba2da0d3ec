// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the files daemon/collect/cpushare.c reads:
 * /proc/<pid>/task/<tid>/stat (nice), /proc/<tid>/cgroup, cgroup v2
 * cpu.max and v1 cpu.cfs_quota_us/cpu.cfs_period_us. The input is the
 * file's text (for the v1 pair: split at its first newline). Besides "no
 * crash, no sanitizer report": a parser that fails leaves its outputs
 * alone, a nice level is in -20..19, a cap is >= 0 and a period > 0, a
 * path starts with '/' and never climbs out with "..". The water-filling
 * share is checked on groups made from the input's bytes: always within
 * [0, 1]; and their quota phases, where there are any: a slow phase within
 * the period, the receiver's shares within (0, 1], the slow one at most
 * the fast one.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/collect/cpushare.h"

static void check_share(const uint8_t *data, size_t size)
{
	struct cpushare_group g[8];
	struct cpushare_phases ph;
	size_t n = 0;
	double s;

	for (size_t i = 0; i + 1 < size && n < 8; i += 2, n++) {
		g[n].weight = cpushare_nice_weight((int)(data[i] % 40) - 20) * (data[i] & 1);
		g[n].cap = data[i + 1] == 255 ? INFINITY : data[i + 1] / 200.0;
	}
	s = cpushare_rx_share(g, n, CPUSHARE_NICE0_WEIGHT);
	if (!(s >= 0 && s <= 1 + 1e-12))
		abort();
	for (size_t i = 0; i < n; i++)
		g[i].period_s = isfinite(g[i].cap) ? 0.001 * (1 + data[2 * i] % 200) : 0.0;
	if (cpushare_quota_phases(g, n, CPUSHARE_NICE0_WEIGHT, &ph)) {
		if (!(ph.slow_s > 0 && ph.slow_s <= ph.period_s * (1 + 1e-12)) ||
		    !(ph.slow_share > 0 && ph.slow_share <= ph.fast_share * (1 + 1e-12)) ||
		    !(ph.fast_share <= 1 + 1e-12))
			abort();
	} else if (ph.period_s != 0) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), path[64] = "untouched";
	double cap = -7, period_s = -7;
	bool v1 = true;
	int nice = 99;
	char *nl;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (cpushare_parse_nice(text, &nice) == 0) {
		if (nice < -20 || nice > 19)
			abort();
	} else if (nice != 99) {
		abort();
	}
	if (cpushare_parse_cgroup(text, path, sizeof(path), &v1) == 0) {
		if (path[0] != '/' || strstr(path, "/../") || strlen(path) >= sizeof(path))
			abort();
	} else if (strcmp(path, "untouched") || !v1) {
		abort();
	}
	if (cpushare_parse_cpu_max(text, &cap, &period_s) == 0) {
		if (!(cap >= 0) || !(period_s > 0))
			abort();
		cap = -7;
		period_s = -7;
	} else if (cap != -7 || period_s != -7) {
		abort();
	}
	nl = strchr(text, '\n');
	if (nl) {
		*nl = '\0';
		if (cpushare_parse_cfs(text, nl + 1, &cap, &period_s) == 0) {
			if (!(cap >= 0) || !(period_s > 0))
				abort();
		} else if (cap != -7 || period_s != -7) {
			abort();
		}
	}
	check_share(data, size);
	free(text);
	return 0;
}
