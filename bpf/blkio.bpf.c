// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Disk service time: block_rq_issue (handed to the driver) to
 * block_rq_complete, per disk, aggregated per CPU. Requests without data
 * (flushes) are left out: they are not the I/O-bound tasks' reads.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/core.bpf.h"
#include "bpf/blkio.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Requests in flight. Entries stay after completion (issue_ns = 0) and are
 * reused: blk-mq preallocates its requests, so the keys are a bounded set.
 * An entry whose completion is never seen is swept by the reader after
 * BLKIO_STALE_NS; where the set is larger than the map (many queues of
 * deep devices, requests reallocated), the reader also drops completed
 * entries once the map is three quarters full. (A plain hash: LRU updates
 * cost a microsecond here.)
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLKIO_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct blkio_start);
} inflight SEC(".maps");

/* Issues the inflight map had no room for: not timed, and reported. */
__u64 inflight_full = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, BLKIO_MAX_DISKS);
	__type(key, __u32);
	__type(value, struct blkio_disk);
} disks SEC(".maps");

/*
 * Requests issued per task (key: tid of the task issuing). A fast disk can
 * finish a request before its submitter goes to sleep, so counting the
 * submitter's I/O waits undercounts its disk accesses; the request count
 * does not. Requests dispatched later from a kernel worker count for that
 * worker, which is why the reader takes the larger of the two counts.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLKIO_MAX_ISSUERS);
	__type(key, __u32);
	__type(value, struct blkio_issuer);
} issuers SEC(".maps");

static __always_inline int rq_issue(struct request *rq, bool btf)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct blkio_start s = {}, *old;
	__u64 key = (__u64)rq;
	struct blkio_issuer *v;

	if (!RD(btf, rq, __data_len))
		return 0;
	s.issue_ns = bpf_ktime_get_ns();
	s.tid = tid;
	/* Reuse the request's entry in place: an update would reallocate. */
	old = bpf_map_lookup_elem(&inflight, &key);
	if (old) {
		old->tid = tid;
		old->issue_ns = s.issue_ns;
	} else if (bpf_map_update_elem(&inflight, &key, &s, BPF_ANY)) {
		__sync_fetch_and_add(&inflight_full, 1);
	}
	if (!tid)
		return 0;
	v = bpf_map_lookup_elem(&issuers, &tid);
	if (!v) {
		struct blkio_issuer zero = {};

		bpf_map_update_elem(&issuers, &tid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&issuers, &tid);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->issued, 1);
	return 0;
}

static __always_inline int rq_complete(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq, d;
	struct blkio_start *s = bpf_map_lookup_elem(&inflight, &key);
	struct blkio_issuer *who;
	struct request_queue *q;
	struct gendisk *disk;
	struct blkio_disk *v;
	__u32 dev, major, minor, tid;

	if (!s || !s->issue_ns)
		return 0;
	d = bpf_ktime_get_ns() - s->issue_ns;
	tid = s->tid;
	/*
	 * Mark it done rather than delete it: blk-mq reuses its preallocated
	 * requests, so the next issue overwrites this entry (and a hash
	 * delete costs more than everything else here).
	 */
	s->issue_ns = 0;
	who = tid ? bpf_map_lookup_elem(&issuers, &tid) : NULL;
	if (who) {
		__sync_fetch_and_add(&who->completed, 1);
		__sync_fetch_and_add(&who->service_ns, d);
	}
	q = RD(btf, rq, q);
	disk = q ? RD(btf, q, disk) : NULL;
	major = disk ? RD(btf, disk, major) : 0;
	minor = disk ? RD(btf, disk, first_minor) : 0;
	dev = major << 20 | minor;
	v = bpf_map_lookup_elem(&disks, &dev);
	if (!v) {
		struct blkio_disk init = {};

		init.major = major;
		init.minor = minor;
		if (disk)
			BPF_CORE_READ_STR_INTO(&init.name, disk, disk_name);
		bpf_map_update_elem(&disks, &dev, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&disks, &dev);
		if (!v)
			return 0;
	}
	v->completions++;
	v->service_ns += d;
	return 0;
}

CORE_TP_PROGS(block_rq_issue, block_rq_issue, rq_issue(rq, btf), struct request *rq)

CORE_TP_PROGS(block_rq_complete, block_rq_complete, rq_complete(rq, btf),
	      struct request *rq, blk_status_t error, unsigned int nr_bytes)
