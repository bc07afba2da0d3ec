// SPDX-License-Identifier: GPL-2.0-or-later
/* Disk service rate from blkio snapshots. See collect_disk.h. */
#include "daemon/collect/collect_disk.h"

#include <math.h>
#include <string.h>

#include "common/util.h"

void collect_disk_compute(const struct blkio_snap *prev, const struct blkio_snap *cur,
		   struct rxb_disk_meas *out)
{
	uint64_t best = 0, best_ns = 0;
	const char *name = NULL;

	for (int i = 0; i < cur->ndisks; i++) {
		const struct blkio_disk *c = &cur->disks[i].v;
		uint64_t n = c->completions, ns = c->service_ns;

		for (int j = 0; j < prev->ndisks; j++) {
			if (prev->disks[j].dev != cur->disks[i].dev)
				continue;
			n = rxb_sub0(n, prev->disks[j].v.completions);
			ns = rxb_sub0(ns, prev->disks[j].v.service_ns);
		}
		if (n > best) {
			best = n;
			best_ns = ns;
			name = c->name;
		}
	}
	out->valid = best > 0;
	out->completions = best;
	out->device[0] = '\0';
	if (name)
		rxb_strlcpy(out->device, name, sizeof(out->device));
	out->mean_service_ns = best ? (double)best_ns / (double)best : NAN;
	out->service_rate_per_s = best && best_ns ? 1e9 / out->mean_service_ns : NAN;
}
