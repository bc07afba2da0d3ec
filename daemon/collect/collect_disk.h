/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk's service rate mu_D from two blkio probe snapshots: per disk, the
 * mean time from block_rq_issue (handed to the driver) to block_rq_complete
 * over the requests completed in the epoch; the disk reported is the one
 * with the most completions (the one the I/O-bound tasks keep busy). Fills
 * out->disk except the CPU-burst fields (collect_sched). Pure computation.
 */
#ifndef RXB_DAEMON_COLLECT_DISK_H
#define RXB_DAEMON_COLLECT_DISK_H

#include "bpf/blkio.h"
#include "rxb/measure.h"

void collect_disk_compute(const struct blkio_snap *prev, const struct blkio_snap *cur,
		   struct rxb_disk_meas *out);

#endif
