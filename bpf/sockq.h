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
	 * The queue as the last events on this CPU saw it. UDP queues packets
	 * on sk_receive_queue and udp_recvmsg() splices them into its
	 * reader_queue; each side records only the queue whose cache line it
	 * has just touched (reading the other CPU's line on every packet
	 * costs more than the rest of these programs), and the reader adds
	 * the latest of each: exact whenever the socket is quiet.
	 */
	__u64 rq_at_ns;		/* sk_receive_queue: at enqueue, or at a splice */
	__u32 rq_qlen;
	__u32 rcvbuf_bytes;	/* sk_rcvbuf */
	__u64 rd_at_ns;		/* UDP reader_queue: at dequeue (see note_rd()
				 * in sockq.bpf.c: a run of one thread's
				 * dequeues keeps its first one's stamp) */
	__u64 rd_mig;		/* that thread's nr_migrations at the stamp */
	__u32 rd_gen;		/* attach_gen at the stamp */
	__u32 rd_qlen;
	__u32 proto;		/* IPPROTO_* of the socket last dequeued from */
	/* the thread dequeuing on this CPU, counts not yet in rx_deq */
	__u32 cur_tid;
	/*
	 * IPPROTO_* of the socket rcvbuf_bytes was read from. A port can have
	 * a UDP and a TCP socket (RBUDP's data and control), and enqueues of
	 * either note the queue: proto (set at dequeues) need not be the
	 * protocol of the buffer size noted last.
	 */
	__u32 rcvbuf_proto;
	__u64 cur_pkts;
	__u64 drop_reason[SOCKQ_SLOT_REASONS];	/* drops by reason value */
};

/*
 * Loss episodes of a watched port (one entry per slot, shared by the CPUs:
 * drops are rare next to packets, and an episode's drops can come from
 * more than one CPU). A SOCKET_RCVBUFF drop less than SOCKQ_EPISODE_GAP_NS
 * after the port's previous one belongs to the same episode; a later one
 * starts a new episode. The gap is long against the packet times of a
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

struct sockq_episodes {
	__u64 last_drop_ns;	/* bpf_ktime_get_ns() of the latest rcvbuf drop */
	__u64 episodes;		/* rcvbuf drop episodes begun */
	__u64 cur_drops;	/* drops of the episode under way */
	__u64 size_hist[SOCKQ_EPISODE_BUCKETS];	/* ended episodes by size */
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
	struct sockq_slot v;		/* counters summed over CPUs; queue
					 * fields from the latest CPU */
	bool have_state;		/* some event saw the queue */
	uint32_t qlen;			/* packets queued, both queues */
	uint64_t drop_episodes;		/* struct sockq_episodes.episodes */
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
	/* When the per-packet programs were last attached again after a
	 * detach (CLOCK_MONOTONIC; 0: attached since the probe was opened).
	 * A queue note older than this may be stale: events between were
	 * not seen. */
	uint64_t attached_ns;
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
/* Forget receiver thread @tid (exited or idle): its rx_deq rows and its
 * rx_tids entry. */
void sockq_probe_forget_tid(struct sockq_probe *sq, uint32_t tid);
/* Name of drop reason @value from the kernel's BTF (enum skb_drop_reason,
 * without the SKB_DROP_REASON_ prefix), or NULL. */
const char *sockq_probe_reason_name(struct sockq_probe *sq, uint32_t value);
#endif /* !__bpf__ */

#endif
