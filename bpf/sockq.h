/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Records exchanged between sockq.bpf.c (socket enqueue/dequeue/drop
 * tracepoints: stage B of the receive path, socket to application, in the
 * end-system model of docs/daemon.md) and its user-space reader sockq.c.
 *
 * Only sockets whose local port is watched are counted. The watch map is an
 * array indexed by port holding the port's slot (1-based; 0 = not watched),
 * and everything per port lives in per-CPU arrays indexed by slot: every
 * per-packet lookup is an inlined array access and no cache line is shared
 * between CPUs. Drops by reason are counted host-wide as well. Counters
 * only grow; the reader takes deltas.
 *
 * The queue's length is counted, not read: every packet queued to a
 * watched socket passes sk_data_ready and every packet taken from it
 * sock_recv_length, so its change between two reads is enqueued minus
 * dequeued, exactly, whatever happened between the events. Reading the
 * queues themselves (UDP keeps two, and udp_recvmsg() splices one into the
 * other) needed a probe read, a clock read and another CPU's cache line on
 * most dequeues: more than everything else here.
 */
#ifndef RXB_BPF_SOCKQ_H
#define RXB_BPF_SOCKQ_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SOCKQ_MAX_PORTS		64	/* slots */
#define SOCKQ_PORT_SPACE	65536
#define SOCKQ_MAX_REASONS	1024	/* array-counted reasons (core ones) */
#define SOCKQ_MAX_EXT_REASONS	256	/* subsystem reasons (high bits set) */
#define SOCKQ_MAX_RX_DEQ	4096
/* Per-socket drop reasons: values below this are counted one by one, the
 * rest (subsystem reasons) together in the last bucket. */
#define SOCKQ_SLOT_REASONS	256

/*
 * The per-packet programs (enqueue and dequeue), which can be detached
 * between sampled epochs (sockq_probe_set_sampled()); kfree_skb - one run
 * per dropped packet, not per packet - stays attached so that drops are
 * counted in every epoch. NULL terminated, for probe_obj_mark_sampled().
 */
#define SOCKQ_SAMPLED_TPS	{ "sk_data_ready", "sock_recv_length", NULL }
/*
 * The enqueue program is the costlier of the two and runs on the CPU that
 * delivers the packet (a sender's, over loopback or veth): the collector
 * attaches it only in the sampled epochs that also have stage A, or in
 * which some watched port's arrivals could not be derived without it
 * (sockq_probe_set_enq(); daemon/collect/sampling.h). In the others a
 * port's arrivals follow by conservation from its dequeues, drops and the
 * queue read at the epoch's edges (daemon/collect/collect_net.c).
 */
#define SOCKQ_ENQ_TP		"sk_data_ready"

/* recvmsg flags that do not consume a packet (include/linux/socket.h). */
#define SOCKQ_MSG_PEEK		0x2
#define SOCKQ_MSG_ERRQUEUE	0x2000
/* A read that found the queue empty returns -EAGAIN (== -EWOULDBLOCK). */
#define SOCKQ_EAGAIN		11

/* Per slot (watched port), per CPU. */
struct sockq_slot {
	/* counters */
	__u64 enq;		/* sk_data_ready: packets enqueued */
	__u64 enq_bytes;	/* payload of the packet at the queue's tail */
	__u64 enq_truesize;	/* memory charged for it */
	__u64 deq;		/* sock_recv_length, not peeking: dequeued */
	__u64 deq_bytes;
	__u64 drops;		/* kfree_skb with rx_sk on this port */
	__u64 drops_rcvbuf;	/* ... with reason SOCKET_RCVBUFF */
	/*
	 * sock_recv_length with -EAGAIN, not peeking: reads that found the
	 * queue empty (non-blocking reads; a recvmmsg() that ends short has
	 * one too). A busy-polling receiver makes one per turn of its loop,
	 * which is how its spinning is told from its packets' cost
	 * (daemon/model/cost.c).
	 */
	__u64 empty_reads;
	/*
	 * The socket this CPU last enqueued to: its sk_rcvbuf and IPPROTO_*
	 * (the port's struct sockq_shared holds the latest over the CPUs).
	 */
	__u32 rcvbuf_bytes;
	__u32 rcvbuf_proto;
	__u32 proto;		/* IPPROTO_* of the socket this CPU last dequeued from */
	/* the thread dequeuing on this CPU, counts not yet in rx_deq */
	__u32 cur_tid;
	__u64 cur_pkts;
	__u64 drop_reason[SOCKQ_SLOT_REASONS];	/* drops by reason value */
};

/*
 * What a watched port's CPUs share (one entry per slot), written rarely:
 * its loss episodes (drops are rare next to packets, and an episode's
 * drops can come from more than one CPU) and its receive buffer (when it
 * changes). A SOCKET_RCVBUFF drop less than SOCKQ_EPISODE_GAP_NS after
 * the port's previous one belongs to the same episode; a later one starts
 * a new episode. The gap is long against the packet times of a
 * drop run (microseconds) and against a receiver's turn on its CPU between
 * two off-CPU windows that both overflow (EEVDF slices of a few ms), and
 * short against a round of RBUDP (hundreds of ms): the episodes are the
 * independent clumps of loss that decide whether a round must resend
 * (docs/model.md §3.2). Two CPUs starting the same episode within a few
 * nanoseconds can count it twice; that is not worth an atomic exchange.
 */
#define SOCKQ_EPISODE_GAP_NS	10000000ULL

/*
 * The sizes of the episodes that have ended, in packets, as a histogram
 * with four buckets per power of two: a size n in [2^b, 2^(b+1)) goes to
 * bucket 4 b + floor(4 (n - 2^b) / 2^b) (the layout of the epoch record,
 * RXB_EPISODE_BUCKETS in include/rxb/measure.h). An episode ends when the
 * next one begins: the latest episode is in cur_drops until then.
 */
#define SOCKQ_EPISODE_BUCKETS	128

struct sockq_shared {
	__u64 last_drop_ns;	/* bpf_ktime_get_ns() of the latest rcvbuf drop */
	__u64 episodes;		/* rcvbuf drop episodes begun */
	__u64 cur_drops;	/* drops of the episode under way */
	__u64 size_hist[SOCKQ_EPISODE_BUCKETS];	/* ended episodes by size */
	/* sk_rcvbuf at the latest change seen by an enqueue, 0: none yet */
	__u32 rcvbuf_udp;	/* of a UDP socket of the port */
	__u32 rcvbuf_other;	/* of another protocol's (other_proto) */
	__u32 other_proto;
	__u32 pad;
};

/* The bucket of an episode of @n >= 1 packets. */
static inline __u32 sockq_episode_bucket(__u64 n)
{
	__u64 v = n;
	__u32 b = 0, sh;

	sh = (v > 0xffffffffULL) << 5; v >>= sh; b |= sh;
	sh = (v > 0xffff) << 4; v >>= sh; b |= sh;
	sh = (v > 0xff) << 3; v >>= sh; b |= sh;
	sh = (v > 0xf) << 2; v >>= sh; b |= sh;
	sh = (v > 0x3) << 1; v >>= sh; b |= sh;
	b |= (__u32)(v >> 1);
	/* b = floor(log2 n); the two bits below the leading one. */
	b = 4 * b + (__u32)(((n << 2) >> b) & 3);
	return b < SOCKQ_EPISODE_BUCKETS ? b : SOCKQ_EPISODE_BUCKETS - 1;
}

/* Packets one receiver thread dequeued from one watched port (flushed
 * from a slot when another thread dequeues on that CPU). */
struct sockq_deq_key {
	__u32 tid;
	__u32 port;
};

struct sockq_deq {
	__u64 pkts;
};

#ifndef __bpf__
/* ------------------------------------------------ user-space reader -- */
#include <stdbool.h>
#include <stdint.h>

#include "bpf/probe.h"

struct sockq_snap_port {
	uint16_t port;
	/*
	 * Counters summed over CPUs. rcvbuf_bytes and rcvbuf_proto: the
	 * latest UDP socket's of the port if one was seen, else the other
	 * protocol's; proto: UDP if a CPU's last dequeue was from a UDP
	 * socket, else another CPU's (0: no dequeue).
	 */
	struct sockq_slot v;
	bool have_state;		/* some event moved the queue */
	/*
	 * Enqueued minus dequeued since the port was watched: the queue's
	 * length plus a constant (minus the packets it held then), so the
	 * difference of two reads is the change of its length.
	 */
	int64_t qlen;
	/*
	 * Bytes charged for the packets queued on the port's UDP sockets at
	 * the snapshot, less what UDP has freed but not yet uncharged (the
	 * socket diagnostics' idiag_rqueue; filled by the collector, not by
	 * sockq_probe_snapshot()). have_rqueue: it was read.
	 */
	bool have_rqueue;
	uint64_t rqueue_bytes;
	uint32_t diag_rcvbuf_bytes;	/* sk_rcvbuf read with it (the largest) */
	uint64_t drop_episodes;		/* struct sockq_shared.episodes */
	uint64_t episode_hist[SOCKQ_EPISODE_BUCKETS];	/* .size_hist */
};

struct sockq_snap_deq {
	struct sockq_deq_key k;
	struct sockq_deq v;		/* flushed + pending */
};

struct sockq_snap_reason {
	uint32_t reason;		/* enum skb_drop_reason value */
	uint64_t count;			/* summed over CPUs */
};

struct sockq_snap {
	uint64_t at_ns;
	int nports;
	struct sockq_snap_port ports[SOCKQ_MAX_PORTS];
	int ndeq;
	struct sockq_snap_deq *deq;		/* [SOCKQ_MAX_RX_DEQ] */
	int nreasons;
	struct sockq_snap_reason *reasons;	/* [SOCKQ_MAX_REASONS + EXT] */
	bool have_rx_sk;	/* kfree_skb carries the receiving socket */
};

int sockq_snap_init(struct sockq_snap *s);	/* 0 or -ENOMEM */
void sockq_snap_free(struct sockq_snap *s);

struct sockq_probe;

/*
 * Load and attach in @mode. @rx_tids_fd, @rx_gen_fd: the scheduler probe's
 * receiver map and its generation counter to share (-1: private ones; the
 * counter is shared only with the map). 0 or -errno.
 */
int sockq_probe_open(struct sockq_probe **out, enum probe_mode mode,
		     int rx_tids_fd, int rx_gen_fd);
void sockq_probe_close(struct sockq_probe *sq);
struct probe_obj *sockq_probe_obj(struct sockq_probe *sq);
/* Replace the watched ports (at most SOCKQ_MAX_PORTS). 0 or -errno. */
int sockq_probe_set_ports(struct sockq_probe *sq, const uint16_t *ports, int n);
int sockq_probe_snapshot(struct sockq_probe *sq, struct sockq_snap *s);
/*
 * Attach (@on) or detach the per-packet programs (SOCKQ_SAMPLED_TPS).
 * They are attached when the probe is opened. 0 or -errno (then they are
 * all detached).
 */
int sockq_probe_set_sampled(struct sockq_probe *sq, bool on);
/* Attach (@on) or detach the enqueue program (SOCKQ_ENQ_TP) alone. It is
 * sampled: sockq_probe_set_sampled() attaches and detaches it too. 0 or
 * -errno (then it is detached). */
int sockq_probe_set_enq(struct sockq_probe *sq, bool on);
/* Forget receiver thread @tid (exited or idle): its rx_deq rows and its
 * rx_tids entry. */
void sockq_probe_forget_tid(struct sockq_probe *sq, uint32_t tid);
/* Name of drop reason @value from the kernel's BTF (enum skb_drop_reason,
 * without the SKB_DROP_REASON_ prefix), or NULL. */
const char *sockq_probe_reason_name(struct sockq_probe *sq, uint32_t value);
#endif /* !__bpf__ */

#endif
