// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage B of the receive path, for sockets whose local port is watched:
 * packets enqueued (sock:sk_data_ready), dequeued by the application
 * (sock:sock_recv_length) and dropped (skb:kfree_skb with the receiving
 * socket, 6.11+), the queue length as the last event saw it, and which
 * threads dequeue (the receiver threads, shared with sched.bpf.c). Drops
 * are also counted by reason host-wide. Nothing per packet leaves the kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/sched.h"
#include "bpf/sockq.h"

char LICENSE[] SEC("license") = "GPL";

#define IPPROTO_UDP_NUM	17

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SOCKQ_MAX_PORTS);
	__type(key, __u16);
	__type(value, __u32);
} watch_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SOCKQ_MAX_PORTS);
	__type(key, __u16);
	__type(value, struct sockq_stats);
} port_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SOCKQ_MAX_PORTS);
	__type(key, __u16);
	__type(value, struct sockq_state);
} port_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SOCKQ_MAX_RX_DEQ);
	__type(key, struct sockq_deq_key);
	__type(value, struct sockq_deq);
} rx_deq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SOCKQ_MAX_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} drop_reasons SEC(".maps");

/* The same map as in sched.bpf.c: the loader makes them one. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHED_MAX_RX_TIDS);
	__type(key, __u32);
	__type(value, struct sched_rx_tid);
} rx_tids SEC(".maps");

/* Source of a new rx_tids entry (too big for the stack). */
const struct sched_rx_tid rx_tid_zero = {};

/* The local port of @sk when it is watched, else 0. */
static __always_inline __u16 watched_port(const struct sock *sk)
{
	__u16 port;

	if (!sk)
		return 0;
	port = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (!port || !bpf_map_lookup_elem(&watch_ports, &port))
		return 0;
	return port;
}

static __always_inline struct sockq_stats *stats_of(__u16 port)
{
	struct sockq_stats *st = bpf_map_lookup_elem(&port_stats, &port);

	if (!st) {
		struct sockq_stats zero = {};

		bpf_map_update_elem(&port_stats, &port, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&port_stats, &port);
	}
	return st;
}

/* Packets queued on @sk now: for UDP the receive queue plus the reader
 * queue udp_recvmsg() splices it into. */
static __always_inline void note_queue(const struct sock *sk, __u16 port)
{
	struct sockq_state s = {};

	s.at_ns = bpf_ktime_get_ns();
	s.proto = BPF_CORE_READ(sk, sk_protocol);
	s.qlen = BPF_CORE_READ(sk, sk_receive_queue.qlen);
	if (s.proto == IPPROTO_UDP_NUM)
		s.qlen += BPF_CORE_READ((struct udp_sock *)sk, reader_queue.qlen);
	s.rmem_bytes = BPF_CORE_READ(sk, sk_backlog.rmem_alloc.counter);
	s.rcvbuf_bytes = BPF_CORE_READ(sk, sk_rcvbuf);
	bpf_map_update_elem(&port_state, &port, &s, BPF_ANY);
}

static __always_inline int data_ready(const struct sock *sk)
{
	__u16 port = watched_port(sk);
	struct sockq_stats *st;
	struct sk_buff *tail;

	if (!port)
		return 0;
	st = stats_of(port);
	if (!st)
		return 0;
	st->enq++;
	/* UDP calls sk_data_ready right after queueing at the tail. */
	tail = BPF_CORE_READ(sk, sk_receive_queue.prev);
	if (tail && (void *)tail != (void *)&sk->sk_receive_queue) {
		__u32 len = BPF_CORE_READ(tail, len);

		/* skb->data is at the UDP header when queued. */
		if (BPF_CORE_READ(sk, sk_protocol) == IPPROTO_UDP_NUM && len >= 8)
			len -= 8;
		st->enq_bytes += len;
		st->enq_truesize += BPF_CORE_READ(tail, truesize);
	}
	note_queue(sk, port);
	return 0;
}

static __always_inline void note_receiver(__u16 port, int bytes)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sockq_deq_key k = { .tid = tid, .port = port };
	struct sched_rx_tid *rx;
	struct sockq_deq *d;

	rx = bpf_map_lookup_elem(&rx_tids, &tid);
	if (!rx) {
		bpf_map_update_elem(&rx_tids, &tid, &rx_tid_zero, BPF_NOEXIST);
		rx = bpf_map_lookup_elem(&rx_tids, &tid);
	}
	if (rx)
		rx->port = port;
	d = bpf_map_lookup_elem(&rx_deq, &k);
	if (!d) {
		struct sockq_deq zero = {};

		bpf_map_update_elem(&rx_deq, &k, &zero, BPF_NOEXIST);
		d = bpf_map_lookup_elem(&rx_deq, &k);
		if (!d)
			return;
	}
	d->pkts++;
	d->bytes += bytes;
	d->last_ns = bpf_ktime_get_ns();
}

static __always_inline int recv_length(struct sock *sk, int ret, int flags)
{
	__u16 port;
	struct sockq_stats *st;

	if (ret < 0 || (flags & (SOCKQ_MSG_PEEK | SOCKQ_MSG_ERRQUEUE)))
		return 0;
	port = watched_port(sk);
	if (!port)
		return 0;
	st = stats_of(port);
	if (!st)
		return 0;
	st->deq++;
	st->deq_bytes += ret;
	note_receiver(port, ret);
	note_queue(sk, port);
	return 0;
}

static __always_inline int free_skb(enum skb_drop_reason reason,
				    const struct sock *rx_sk)
{
	__u32 r = reason;
	__u64 *cnt, one = 1;
	__u16 port;

	/* Not a drop: the kernel frees consumed packets through here too. */
	if (bpf_core_enum_value_exists(enum skb_drop_reason, SKB_CONSUMED) &&
	    r == bpf_core_enum_value(enum skb_drop_reason, SKB_CONSUMED))
		return 0;
	cnt = bpf_map_lookup_elem(&drop_reasons, &r);
	if (cnt)
		(*cnt)++;
	else
		bpf_map_update_elem(&drop_reasons, &r, &one, BPF_NOEXIST);

	port = watched_port(rx_sk);
	if (port) {
		struct sockq_stats *st = stats_of(port);

		if (!st)
			return 0;
		st->drops++;
		if (bpf_core_enum_value_exists(enum skb_drop_reason,
					       SKB_DROP_REASON_SOCKET_RCVBUFF) &&
		    r == bpf_core_enum_value(enum skb_drop_reason,
					     SKB_DROP_REASON_SOCKET_RCVBUFF))
			st->drops_rcvbuf++;
		note_queue(rx_sk, port);
	}
	return 0;
}

/* kfree_skb has carried the receiving socket since 6.11. */
#define HAVE_RX_SK \
	bpf_core_field_exists(((struct trace_event_raw_kfree_skb *)0)->rx_sk)

SEC("tp_btf/sk_data_ready")
int BPF_PROG(sk_data_ready_btf, const struct sock *sk)
{
	return data_ready(sk);
}

SEC("raw_tp/sk_data_ready")
int BPF_PROG(sk_data_ready_raw, const struct sock *sk)
{
	return data_ready(sk);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sock_recv_length_btf, struct sock *sk, int ret, int flags)
{
	return recv_length(sk, ret, flags);
}

SEC("raw_tp/sock_recv_length")
int BPF_PROG(sock_recv_length_raw, struct sock *sk, int ret, int flags)
{
	return recv_length(sk, ret, flags);
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(kfree_skb_btf, struct sk_buff *skb, void *location,
	     enum skb_drop_reason reason)
{
	const struct sock *rx_sk = NULL;

	if (HAVE_RX_SK)
		rx_sk = (const struct sock *)ctx[3];
	return free_skb(reason, rx_sk);
}

SEC("raw_tp/kfree_skb")
int BPF_PROG(kfree_skb_raw, struct sk_buff *skb, void *location,
	     enum skb_drop_reason reason)
{
	const struct sock *rx_sk = NULL;

	if (HAVE_RX_SK)
		rx_sk = (const struct sock *)ctx[3];
	return free_skb(reason, rx_sk);
}
