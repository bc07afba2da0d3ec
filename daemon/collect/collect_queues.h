/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watched ports' UDP datagram queues at each probe snapshot, through
 * the socket diagnostics: the edges of a sampled epoch whose arrivals are
 * derived rather than counted (collect_net.h, sampling.h).
 *
 * A diagnostics socket sees the sockets of the network namespace it was
 * opened in, and receivers often live in another (a container, a test's
 * namespace) while the probes see every namespace. So a port whose socket
 * is not in the collector's namespace is looked up in the namespace of a
 * thread that dequeued from it (/proc/TID/ns/net; entering it needs
 * CAP_SYS_ADMIN): a diagnostics socket is opened there once and kept
 * while the namespace has watched sockets, then closed (it holds the
 * namespace alive). A port whose socket is gone from the namespace it was
 * in (read again) has an empty queue; one found nowhere has no reading.
 */
#ifndef RXB_DAEMON_COLLECT_QUEUES_H
#define RXB_DAEMON_COLLECT_QUEUES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/sockq.h"

#define COLLECT_QUEUES_MAX_NETNS	4
#define COLLECT_QUEUES_CLOSED		UINT64_MAX

struct sockdiag;

struct collect_queues {
	uint64_t own_ino;		/* the collector's namespace (0: unknown) */
	int nns;
	struct {
		uint64_t ino;		/* nsfs inode of the namespace */
		struct sockdiag *sd;	/* owned; NULL: could not enter it */
		bool used;		/* had a watched socket at the last read */
	} ns[COLLECT_QUEUES_MAX_NETNS];
	bool logged;			/* a failure to enter was logged */
	/* Where each port's socket was at the last read (ino; 0: nowhere;
	 * COLLECT_QUEUES_CLOSED): a socket gone from a namespace read again
	 * is a closed one, and its port's queue is empty until a socket is
	 * found again (one in an unseen namespace is found through its
	 * first dequeue: one that never reads is taken for empty). */
	int nseen;
	struct {
		uint16_t port;
		uint64_t ino;
	} seen[SOCKQ_MAX_PORTS];
};

void collect_queues_init(struct collect_queues *q);
void collect_queues_finish(struct collect_queues *q);

/*
 * Fill have_rqueue, rqueue_bytes and diag_rcvbuf_bytes of @snap's ports
 * from @own (the collector's diagnostics, NULL: none) and the receivers'
 * namespaces (@snap's dequeue rows name them). True when every port's
 * queue was read.
 */
bool collect_queues_read(struct collect_queues *q, struct sockdiag *own,
			 struct sockq_snap *snap);

#endif
