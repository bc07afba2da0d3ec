// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage B of the receive path, for sockets whose local port is watched:
 * packets enqueued (sock:sk_data_ready), dequeued by the application
 * (sock:sock_recv_length) and dropped (skb:kfree_skb with the receiving
 * socket, 6.11+), the receive buffer, and which threads dequeue (the
 * receiver threads, shared with sched.bpf.c). Drops are also counted by
 * reason host-wide. Nothing per packet leaves the kernel; the per-packet
 * path touches only this CPU's slot and lines of the socket and packet
 * the kernel has just touched itself (no clock, no probe read, no hash).
 * The queue's length is not read: its change over an epoch is what was
 * enqueued minus what was dequeued (sockq.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/core.bpf.h"
#include "bpf/sched.h"
#include "bpf/sockq.h"

char LICENSE[] SEC("license") = "GPL";

#define IPPROTO_UDP_NUM	17
#define UDP_HDR_LEN	8

/* port -> slot + 1 (0: not watched). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SOCKQ_PORT_SPACE);
	__type(key, __u32);
	__type(value, __u32);
} watch_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SOCKQ_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct sockq_slot);
} slots SEC(".maps");

/* Per slot, shared by the CPUs (see sockq.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SOCKQ_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct sockq_shared);
} shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SOCKQ_MAX_RX_DEQ);
	__type(key, struct sockq_deq_key);
	__type(value, struct sockq_deq);
} rx_deq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SOCKQ_MAX_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} drop_reasons SEC(".maps");

/* Reasons of subsystems (the high 16 bits set) are rare: a hash is fine. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SOCKQ_MAX_EXT_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} drop_reasons_ext SEC(".maps");

/* rx_tids and rx_gen: the same maps as sched.bpf.c's, made one by the loader. */
#include "bpf/rx_tids.bpf.h"

/* Source of a new rx_tids entry (too big for the stack). */
const struct sched_rx_tid rx_tid_zero = {};

/* The slot of @sk's local port (its index in @slot) when watched, else NULL. */
static __always_inline struct sockq_slot *slot_of(const struct sock *sk, __u16 *port,
						   __u32 *slot, bool btf)
{
	__u32 key, *idx;

	if (!sk)
		return NULL;
	key = RD(btf, sk, __sk_common.skc_num);
	idx = bpf_map_lookup_elem(&watch_ports, &key);
	if (!idx || !*idx)
		return NULL;
	*port = key;
	*slot = *idx - 1;
	return bpf_map_lookup_elem(&slots, slot);
}

/*
 * A rcvbuf drop on slot @key: it begins an episode when the previous drop
 * is SOCKQ_EPISODE_GAP_NS old, which ends the one before (sockq.h).
 */
static __always_inline void note_episode(__u32 key)
{
	struct sockq_shared *e = bpf_map_lookup_elem(&shared, &key);
	__u64 now, last, ended;

	if (!e)
		return;
	now = bpf_ktime_get_ns();
	last = e->last_drop_ns;
	/* Signed: another CPU may have noted a drop a little "later". */
	if ((__s64)(now - last) >= (__s64)SOCKQ_EPISODE_GAP_NS) {
		ended = e->cur_drops;
		e->cur_drops = 0;
		if (ended)
			__sync_fetch_and_add(&e->size_hist[sockq_episode_bucket(ended)], 1);
		__sync_fetch_and_add(&e->episodes, 1);
	}
	__sync_fetch_and_add(&e->cur_drops, 1);
	if ((__s64)(now - last) > 0)
		e->last_drop_ns = now;
}

/*
 * The receive buffer of the socket this CPU enqueues to. Written to the
 * port's shared entry only when it differs from what this CPU saw last (a
 * setsockopt(SO_RCVBUF), or another socket on the port): the per-packet
 * path only compares. UDP's and other protocols' buffers are kept apart:
 * a port can have a UDP and a TCP socket (RBUDP's data and control), and
 * the model wants the datagram queue's.
 */
static __always_inline void note_rcvbuf(struct sockq_slot *s, __u32 slot,
					const struct sock *sk, __u32 proto, bool btf)
{
	__u32 rcvbuf = RD(btf, sk, sk_rcvbuf);
	struct sockq_shared *sh;

	if (rcvbuf == s->rcvbuf_bytes && proto == s->rcvbuf_proto)
		return;
	s->rcvbuf_bytes = rcvbuf;
	s->rcvbuf_proto = proto;
	sh = bpf_map_lookup_elem(&shared, &slot);
	if (!sh)
		return;
	if (proto == IPPROTO_UDP_NUM) {
		sh->rcvbuf_udp = rcvbuf;
	} else {
		sh->rcvbuf_other = rcvbuf;
		sh->other_proto = proto;
	}
}

static __always_inline int data_ready(const struct sock *sk, bool btf)
{
	struct sockq_slot *s;
	struct sk_buff *tail;
	__u32 proto, slot;
	__u16 port;

	s = slot_of(sk, &port, &slot, btf);
	if (!s)
		return 0;
	s->enq++;
	proto = RD(btf, sk, sk_protocol);
	/* UDP calls sk_data_ready right after queueing at the tail. */
	tail = RD(btf, sk, sk_receive_queue.prev);
	if (tail && (void *)tail != (void *)&sk->sk_receive_queue) {
		__u32 len = RD(btf, tail, len);

		/* skb->data is at the UDP header while queued. */
		if (proto == IPPROTO_UDP_NUM && len >= UDP_HDR_LEN)
			len -= UDP_HDR_LEN;
		s->enq_bytes += len;
		s->enq_truesize += RD(btf, tail, truesize);
	}
	note_rcvbuf(s, slot, sk, proto, btf);
	return 0;
}

/*
 * Count the packet for the thread dequeuing. The slot caches the current
 * thread on this CPU; only when another thread dequeues are the cached
 * counts flushed to the (tid, port) hash - receivers rarely change, so the
 * per-packet path has no hash operation.
 */
static __always_inline void note_receiver(struct sockq_slot *s, __u16 port)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sched_rx_tid *rx;

	if (s->cur_tid != tid) {
		if (s->cur_tid && s->cur_pkts) {
			struct sockq_deq_key k = { .tid = s->cur_tid, .port = port };
			struct sockq_deq *d = bpf_map_lookup_elem(&rx_deq, &k);

			if (!d) {
				struct sockq_deq zero = {};

				bpf_map_update_elem(&rx_deq, &k, &zero, BPF_NOEXIST);
				d = bpf_map_lookup_elem(&rx_deq, &k);
			}
			if (d)
				__sync_fetch_and_add(&d->pkts, s->cur_pkts);
		}
		s->cur_tid = tid;
		s->cur_pkts = 0;
		/* A new receiver for the scheduler probe to follow; the
		 * generation moves after the insert, so a switch-out that sees
		 * it moved finds the entry. */
		rx = bpf_map_lookup_elem(&rx_tids, &tid);
		if (!rx && !bpf_map_update_elem(&rx_tids, &tid, &rx_tid_zero,
						BPF_NOEXIST)) {
			__u32 zero = 0;
			__u64 *gen = bpf_map_lookup_elem(&rx_gen, &zero);

			if (gen)
				__sync_fetch_and_add(gen, 1);
			rx = bpf_map_lookup_elem(&rx_tids, &tid);
		}
		/* Its preemption events name the port (sched_rx_event), so
		 * user space can tell a new receiver's flow within an epoch. */
		if (rx)
			rx->port = port;
	}
	s->cur_pkts++;
}

static __always_inline int recv_length(struct sock *sk, int ret, int flags,
				       bool btf)
{
	struct sockq_slot *s;
	__u32 slot;
	__u16 port;

	if (flags & (SOCKQ_MSG_PEEK | SOCKQ_MSG_ERRQUEUE))
		return 0;
	if (ret < 0) {
		/* An empty read: a polling receiver spinning (see empty_reads
		 * in sockq.h). Other errors are not counted. */
		if (ret != -SOCKQ_EAGAIN)
			return 0;
		s = slot_of(sk, &port, &slot, btf);
		if (s)
			s->empty_reads++;
		return 0;
	}
	s = slot_of(sk, &port, &slot, btf);
	if (!s)
		return 0;
	s->deq++;
	s->deq_bytes += ret;
	s->proto = RD(btf, sk, sk_protocol);
	note_receiver(s, port);
	return 0;
}

static __always_inline void count_reason(__u32 r)
{
	__u64 *cnt, one = 1;

	if (r < SOCKQ_MAX_REASONS) {
		cnt = bpf_map_lookup_elem(&drop_reasons, &r);
		if (cnt)
			(*cnt)++;
		return;
	}
	cnt = bpf_map_lookup_elem(&drop_reasons_ext, &r);
	if (cnt)
		(*cnt)++;
	else
		bpf_map_update_elem(&drop_reasons_ext, &r, &one, BPF_NOEXIST);
}

static __always_inline int free_skb(__u32 reason, const struct sock *rx_sk,
				    bool btf)
{
	struct sockq_slot *s;
	__u32 slot;
	__u16 port;

	/* Not a drop: the kernel frees consumed packets through here too. */
	if (CORE_IS_DROP_REASON(reason, SKB_CONSUMED))
		return 0;
	count_reason(reason);
	s = slot_of(rx_sk, &port, &slot, btf);
	if (!s)
		return 0;
	s->drops++;
	s->drop_reason[reason < SOCKQ_SLOT_REASONS - 1 ? reason : SOCKQ_SLOT_REASONS - 1]++;
	if (CORE_IS_DROP_REASON(reason, SKB_DROP_REASON_SOCKET_RCVBUFF)) {
		s->drops_rcvbuf++;
		note_episode(slot);
	}
	/* A drop leaves the queue as it was: no need to look at it. */
	return 0;
}

CORE_TP_PROGS(sk_data_ready, sk_data_ready, data_ready(sk, btf), const struct sock *sk)

CORE_TP_PROGS(sock_recv_length, sock_recv_length, recv_length(sk, ret, flags, btf),
	      struct sock *sk, int ret, int flags)

CORE_TP_PROGS(kfree_skb, kfree_skb, free_skb(reason, core_kfree_skb_rx_sk(ctx), btf),
	      struct sk_buff *skb, void *location, enum skb_drop_reason reason)
