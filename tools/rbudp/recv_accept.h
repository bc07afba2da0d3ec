/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who the receiver serves next. One transfer runs at a time; a sender that
 * connects meanwhile is
 *  - queued, while the running session has not yet shown it is a real
 *    transfer (no authenticated datagram yet, or no authenticated
 *    handshake with --key-file): a stranger holding a session open cannot
 *    turn a real sender away, it only delays it until its own session
 *    times out;
 *  - turned away with ERROR busy once the running session carries data.
 * At most RBUDP_RECV_PENDING_MAX connections wait, RBUDP_RECV_PENDING_PER_ADDR
 * from one address; beyond that newcomers are turned away too.
 */
#ifndef RBUDP_RECV_ACCEPT_H
#define RBUDP_RECV_ACCEPT_H

#include <signal.h>
#include <stdbool.h>

struct rbudp_receiver;

#define RBUDP_RECV_PENDING_MAX		8
#define RBUDP_RECV_PENDING_PER_ADDR	2

/*
 * The next connection to serve: the oldest queued one, else the next to
 * arrive. 0 with *fd, or -EINTR when *stop was set first.
 */
int rbudp_recv_accept_next(struct rbudp_receiver *rx, volatile sig_atomic_t *stop, int *fd);

/* A connection is waiting on the listening socket: queue it (@may_queue) or
 * turn it away with ERROR busy saying @busy_text. */
void rbudp_recv_accept_newcomer(struct rbudp_receiver *rx, bool may_queue,
				const char *busy_text);

/* Turn every queued connection away (the running session carries data). */
void rbudp_recv_accept_refuse_queued(struct rbudp_receiver *rx, const char *busy_text);

/* Close the queued connections without a word (shutdown). */
void rbudp_recv_accept_close(struct rbudp_receiver *rx);

#endif
