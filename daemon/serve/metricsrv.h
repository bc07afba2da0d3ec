/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metricsrv: rxbneckd's HTTP endpoint for Prometheus ([metrics],
 * docs/metrics.md): GET /metrics answers the text exposition format; any
 * other method gets 405, any other path 404.
 *
 * HTTP is libmicrohttpd's, run in its external-polling epoll mode: it
 * starts no thread; it has one epoll descriptor of its own, which the
 * daemon puts in its loop (ops->fd_add), and the daemon calls
 *
 *	metricsrv_handle(m)		when that descriptor is readable;
 *	metricsrv_tick(m, now_ns)	every turn of the loop (timeouts);
 *	metricsrv_next_deadline_ns(m)	to bound its epoll_wait.
 *
 * The exposition is written by ops->render, synchronously, in the
 * daemon's thread, once per request.
 *
 * Bounds, and who enforces each:
 *  - who may connect: the allow-list (sendsrv_cidr_match(), the same
 *    entries as the sender port's), checked by the accept policy
 *    callback before libmicrohttpd reads a byte; refused: closed at once;
 *  - connections: at most max_conns at a time (MHD_OPTION_CONNECTION_LIMIT)
 *    and max_conns_per_addr from one address
 *    (MHD_OPTION_PER_IP_CONNECTION_LIMIT); beyond: closed at once;
 *  - request size: request line and headers within METRICSRV_REQUEST_BYTES
 *    (MHD_OPTION_CONNECTION_MEMORY_LIMIT: the connection's whole memory
 *    pool), else libmicrohttpd answers 414/431 and closes; a body is
 *    never read (the answer goes before it, and the connection closes);
 *  - time: timeout_s without progress (MHD_OPTION_CONNECTION_TIMEOUT),
 *    and timeout_s after the accept whatever the connection does (here:
 *    its socket is shut down, which libmicrohttpd sees as the peer gone),
 *    so a slow client that trickles bytes is cut too;
 *  - the answer: at most METRICSRV_BODY_MAX bytes (else 500).
 * Memory: at most max_conns x (METRICSRV_REQUEST_BYTES + the answer).
 */
#ifndef RXB_DAEMON_METRICSRV_H
#define RXB_DAEMON_METRICSRV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/serve/promtext.h"
#include "daemon/serve/sendsrv.h"

#define METRICSRV_REQUEST_BYTES	8192		/* per connection, headers included */
#define METRICSRV_BODY_MAX	(4u << 20)	/* the exposition's size cap */
#define METRICSRV_MAX_CONNS	1024		/* max_conns cap */

struct metricsrv_opts {
	char addr[INET6_ADDRSTRLEN];	/* literal IPv4/IPv6 address; "::" = dual stack */
	uint16_t port;			/* 0: the kernel picks (metricsrv_port()) */
	uint32_t max_conns;		/* 1..METRICSRV_MAX_CONNS */
	uint32_t max_conns_per_addr;	/* 1..max_conns */
	uint32_t timeout_s;		/* >= 1 */
	struct sendsrv_cidr allow[SENDSRV_MAX_ALLOW];
	size_t n_allow;			/* 0: nobody */
};

struct metricsrv_ops {
	void *ctx;
	/* Required: watch @fd for input (EPOLLIN) / stop watching it. */
	int (*fd_add)(void *ctx, int fd, uint32_t events);
	void (*fd_del)(void *ctx, int fd);
	/* Required: the exposition, into @w. */
	void (*render)(void *ctx, struct promtext *w);
};

struct metricsrv_stats {
	uint32_t conns;			/* open now */
	uint64_t accepted;		/* passed the allow-list */
	uint64_t refused_allow;		/* not in the allow-list */
	uint64_t cut;			/* shut down at timeout_s after the accept */
	uint64_t ok;			/* 200 */
	uint64_t not_found;		/* 404 */
	uint64_t bad_method;		/* 405 */
	uint64_t failed;		/* 500: the exposition could not be written */
	uint64_t render_ns;		/* time spent writing expositions */
};

struct metricsrv;

/* Listen and start; 0 or -errno (logged, naming the address). */
int metricsrv_init(struct metricsrv **out, const struct metricsrv_opts *o,
		   const struct metricsrv_ops *ops);
/* Close every connection and the listener; @m may be NULL. */
void metricsrv_finish(struct metricsrv *m);

void metricsrv_handle(struct metricsrv *m);
void metricsrv_tick(struct metricsrv *m, uint64_t now_ns);
/* CLOCK_MONOTONIC ns; UINT64_MAX when nothing is due (or @m is NULL). */
uint64_t metricsrv_next_deadline_ns(const struct metricsrv *m);

/* A reload: the allow-list in force from the next accept. */
void metricsrv_set_allow(struct metricsrv *m, const struct sendsrv_cidr *allow, size_t n);
/* The allow-list in force; returns its length. */
size_t metricsrv_allow(const struct metricsrv *m, struct sendsrv_cidr *out, size_t max);

uint16_t metricsrv_port(const struct metricsrv *m);
void metricsrv_stats(const struct metricsrv *m, struct metricsrv_stats *st);

#endif
