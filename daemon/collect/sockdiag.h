/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sockets a receiver opens on a port, through the kernel's socket
 * diagnostics (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY): UDP sockets, and
 * TCP sockets in LISTEN.
 *
 * Why not /proc/net/udp and /proc/net/tcp: those are text, each read() of
 * them walks the protocol's whole hash table again (16384 buckets for UDP
 * on a 2-CPU VM, two reads per file), and /proc/net/tcp lists established
 * and TIME_WAIT sockets too. A dump walks each table once, and one asking
 * for TCP listeners only walks just the listening hash, so its cost does
 * not grow with the host's connections. Measured here: 77 us for both UDP
 * dumps against 220 us for /proc/net/udp and udp6. The collector looks
 * every 100 ms while the per-packet probes are detached (collect.c,
 * net_new_sockets()): a new socket on a watched port is a new receiver.
 *
 * One socket, opened by sockdiag_open() and reused; it works on the network
 * namespace the process was in then. Not thread-safe.
 */
#ifndef RXB_DAEMON_SOCKDIAG_H
#define RXB_DAEMON_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sockdiag;

/* Called once per socket: IPPROTO_UDP or IPPROTO_TCP, local port (host
 * order), inode, owner's uid. */
typedef void (*sockdiag_fn)(uint8_t proto, uint16_t port, uint64_t inode,
			    uint32_t uid, void *arg);

int sockdiag_open(struct sockdiag **out);	/* 0 or -errno */
void sockdiag_close(struct sockdiag *sd);

/*
 * Every UDP socket, and every TCP socket in LISTEN, IPv4 and IPv6, through
 * @fn. The number of sockets, or -errno (a dump failed: what @fn was given
 * is incomplete; -ENOENT or -EOPNOTSUPP when the kernel lacks a diag
 * module and cannot load it).
 */
int sockdiag_udp_sockets(struct sockdiag *sd, sockdiag_fn fn, void *arg);
int sockdiag_tcp_listeners(struct sockdiag *sd, sockdiag_fn fn, void *arg);

/*
 * The owners (uids) of the sockets bound to local @port: UDP sockets for
 * @proto IPPROTO_UDP, TCP listeners for IPPROTO_TCP. Up to @max in @uids;
 * returns the number of such sockets, or -errno.
 */
int sockdiag_port_owners(struct sockdiag *sd, uint8_t proto, uint16_t port,
			 uint32_t *uids, int max);

struct inet_diag_req_v2;

/*
 * One dump of @req (family, protocol, states, extensions): the request is
 * sent with a new sequence number (into @seq, for the parser to match),
 * and every datagram of the answer goes to @parse until it returns 0 (the
 * dump is done) or an error, which is returned. For other dumps than the
 * two above (daemon/collect/tcpconn.c).
 */
int sockdiag_dump_raw(struct sockdiag *sd, struct inet_diag_req_v2 *req, uint32_t *seq,
		      int (*parse)(const void *buf, size_t len, void *arg), void *arg);

/*
 * A UDP socket with its memory (INET_DIAG_SKMEMINFO, the kernel's
 * sk_meminfo: bytes charged, not packets), for receive-buffer adaptation
 * (docs/buffer.md). Counters are the kernel's, cumulative.
 */
struct sockdiag_sock {
	uint8_t proto;		/* IPPROTO_UDP */
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint16_t port;		/* local, host order */
	uint64_t inode;
	uint64_t cookie;	/* the socket's cookie (SO_COOKIE) */
	uint32_t uid;		/* sk_uid: who created it */
	/*
	 * idiag_rqueue: for UDP the bytes charged for the queued packets
	 * (rmem_alloc less what was freed but not yet uncharged: UDP
	 * uncharges dequeued packets in batches). Always present.
	 */
	uint32_t rqueue;
	bool have_mem;		/* the fields below came with it */
	uint32_t rmem_alloc;	/* bytes charged for queued packets */
	uint32_t rcvbuf;	/* sk_rcvbuf: the limit on rmem_alloc */
	uint32_t backlog;	/* bytes in the socket backlog */
	uint32_t drops;		/* sk_drops (32 bits: wraps) */
	bool have_drops;	/* the kernel's meminfo has the drops slot */
};

typedef void (*sockdiag_mem_fn)(const struct sockdiag_sock *s, void *arg);

/* Every UDP socket, IPv4 and IPv6, with its memory, through @fn; the
 * number of sockets or -errno (as sockdiag_udp_sockets()). */
int sockdiag_udp_mem(struct sockdiag *sd, sockdiag_mem_fn fn, void *arg);

/* One dump request's state, for sockdiag_parse(). */
struct sockdiag_req {
	uint32_t seq;		/* the request's sequence number */
	uint32_t states;	/* 1 << TCP_* of the sockets wanted */
	uint8_t proto;		/* given to fn */
	sockdiag_fn fn;
	sockdiag_mem_fn mem_fn;	/* instead of fn: the message's attributes too */
	void *arg;
	int count;		/* sockets given to fn so far */
};

/*
 * One datagram of a dump's answer, @len bytes: @rq->fn (or @rq->mem_fn
 * with the attributes read) for each inet_diag_msg of request @rq->seq in
 * a wanted state (messages of other requests are skipped),
 * bounds-checked. Returns 1 when more datagrams
 * follow, 0 at NLMSG_DONE, -errno for an NLMSG_ERROR or a malformed
 * message. Exposed for tests.
 */
int sockdiag_parse(const void *buf, size_t len, struct sockdiag_req *rq);

#endif
