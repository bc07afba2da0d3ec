/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Records exchanged between blkio.bpf.c (block_rq_issue/complete: the disk's
 * service time, mu_D) and its user-space reader blkio.c.
 */
#ifndef RXB_BPF_BLKIO_H
#define RXB_BPF_BLKIO_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define BLKIO_MAX_INFLIGHT	16384
#define BLKIO_MAX_DISKS		64
#define BLKIO_MAX_ISSUERS	16384	/* exited tasks are swept by the reader */
#define BLKIO_STALE_NS		(30ULL * 1000000000ULL)	/* lost completions */
#define BLKIO_SWEEP_DONE_AT	(BLKIO_MAX_INFLIGHT / 4 * 3)	/* entries */

/* A request between issue and completion (key: struct request *). */
struct blkio_start {
	__u64 issue_ns;
	__u32 tid;		/* the task that issued it */
	__u32 pad;
};

/* Per task that issued requests (key: tid). */
struct blkio_issuer {
	__u64 issued;
	__u64 completed;
	__u64 service_ns;	/* issue -> complete of those completed */
};

/* Per disk (key: MAJOR << 20 | first minor), per CPU. */
struct blkio_disk {
	__u64 completions;	/* requests with data, issue seen */
	__u64 service_ns;	/* sum of issue -> complete */
	__u32 major;
	__u32 minor;
	char name[32];
};

#ifndef __bpf__
/* ------------------------------------------------ user-space reader -- */
#include <stdbool.h>
#include <stdint.h>

#include "bpf/probe.h"

struct blkio_snap_disk {
	uint32_t dev;
	struct blkio_disk v;	/* summed over CPUs */
};

/* Requests one task had issued (cumulative): its disk accesses, and the
 * disk's service time as that task saw it. */
struct blkio_snap_issuer {
	uint32_t tid;
	struct blkio_issuer v;
};

struct blkio_snap {
	uint64_t at_ns;
	int ndisks;
	struct blkio_snap_disk disks[BLKIO_MAX_DISKS];
	int nissuers;
	struct blkio_snap_issuer *issuers;	/* [BLKIO_MAX_ISSUERS], by tid */
	uint64_t inflight_full;			/* issues not timed: no room */
};

int blkio_snap_init(struct blkio_snap *s);	/* 0 or -ENOMEM */
void blkio_snap_free(struct blkio_snap *s);

struct blkio_probe;

int blkio_probe_open(struct blkio_probe **out, enum probe_mode mode);
void blkio_probe_close(struct blkio_probe *bp);
struct probe_obj *blkio_probe_obj(struct blkio_probe *bp);
int blkio_probe_snapshot(struct blkio_probe *bp, struct blkio_snap *s);
/*
 * Drop what can no longer change: requests in flight for longer than
 * BLKIO_STALE_NS (their completion was not seen), completed requests' entries
 * once the map is BLKIO_SWEEP_DONE_AT full, and the issuers of
 * @prev that did not change by @cur and for which @gone(tid) says the
 * task has exited.
 */
void blkio_probe_sweep(struct blkio_probe *bp, const struct blkio_snap *prev,
		       const struct blkio_snap *cur, bool (*gone)(uint32_t tid));
#endif /* !__bpf__ */

#endif
