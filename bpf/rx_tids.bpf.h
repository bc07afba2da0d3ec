/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiver-thread maps that sched.bpf.c and sockq.bpf.c share: each
 * object declares them from here, and the loader makes the two copies one
 * (sockq's are reused from sched's fds, bpf_map__reuse_fd()).
 *
 * rx_tids: the watched sockets' receiver threads, inserted by sockq.bpf.c
 * when a thread dequeues from a watched socket, read by sched.bpf.c on
 * every switch (struct sched_rx_tid in sched.h).
 *
 * rx_gen: how many tids sockq.bpf.c has added to rx_tids, bumped after
 * each insert. A task record in sched.bpf.c caches whether its tid is a
 * receiver and asks rx_tids again only when this has moved: most switches
 * are of other tasks, and this saves them the hash lookup.
 */
#ifndef RXB_BPF_RX_TIDS_BPF_H
#define RXB_BPF_RX_TIDS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHED_MAX_RX_TIDS);
	__type(key, __u32);
	__type(value, struct sched_rx_tid);
} rx_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rx_gen SEC(".maps");

#endif
