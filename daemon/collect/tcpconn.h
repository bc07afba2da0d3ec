/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's TCP connections with their byte counters, through the
 * kernel's socket diagnostics (daemon/collect/sockdiag.h): one dump per
 * address family of the connected states, each socket with its tcp_info
 * (INET_DIAG_INFO), whose tcpi_bytes_received counts the bytes it has
 * received in order (what the application can read: goodput). The
 * stream-count advisor's passive samples come from the deltas of these
 * counters between two dumps (daemon/model/xfers.h): no per-packet work
 * in user space, and nothing asked of the senders.
 *
 * A dump walks the established hash: its cost grows with the host's
 * connections (kernel side); the caller bounds how many it looks at
 * (struct tcpconn_req.max_conns), the rest are counted as skipped.
 */
#ifndef RXB_DAEMON_TCPCONN_H
#define RXB_DAEMON_TCPCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sockdiag;

/* One connection. Addresses in network byte order, IPv4 as v4-mapped IPv6. */
struct tcpconn {
	uint64_t cookie;		/* the socket's cookie: its identity */
	uint8_t family;			/* AF_INET or AF_INET6 (as dumped) */
	uint8_t state;			/* the kernel's: 1 ESTABLISHED, 8 CLOSE_WAIT, ... */
	uint16_t lport;			/* local port, host order */
	uint16_t rport;
	uint8_t raddr[16];		/* the peer */
	bool have_info;			/* tcp_info came with it */
	bool have_bytes;		/* ... long enough for tcpi_bytes_received */
	uint64_t bytes_received;	/* tcpi_bytes_received */
	uint32_t rtt_us;		/* tcpi_rtt: smoothed RTT */
	uint32_t rcv_mss;		/* tcpi_rcv_mss */
};

typedef void (*tcpconn_fn)(const struct tcpconn *c, void *arg);

/* One dump's state, for tcpconn_parse(). */
struct tcpconn_req {
	uint32_t seq;			/* the request's sequence number */
	tcpconn_fn fn;
	void *arg;
	uint32_t max_conns;		/* give at most this many to fn */
	uint32_t count;			/* given so far */
	uint32_t skipped;		/* beyond max_conns */
};

/*
 * Every TCP connection in ESTABLISHED, FIN_WAIT1/2, CLOSE_WAIT, LAST_ACK
 * or CLOSING, IPv4 and IPv6, through @rq->fn (@rq->seq is set here). The
 * number given, or -errno (the dump failed: what fn got is incomplete).
 */
int tcpconn_dump(struct sockdiag *sd, struct tcpconn_req *rq);

/*
 * One datagram of the dump's answer, @len bytes: rq->fn for each
 * inet_diag_msg of request rq->seq (others are skipped), its attributes
 * read with bounds checks (a short tcp_info is taken as far as it goes).
 * 1 when more datagrams follow, 0 at NLMSG_DONE, -errno for an
 * NLMSG_ERROR or a malformed message. Exposed for tests and fuzzing.
 */
int tcpconn_parse(const void *buf, size_t len, struct tcpconn_req *rq);

#endif
