// SPDX-License-Identifier: GPL-2.0-or-later
/* The watched ports' UDP queues at a snapshot. See collect_queues.h. */
#include "daemon/collect/collect_queues.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/collect/sockdiag.h"

void collect_queues_init(struct collect_queues *q)
{
	struct stat st;

	memset(q, 0, sizeof(*q));
	if (stat("/proc/thread-self/ns/net", &st) == 0)
		q->own_ino = st.st_ino;
}

void collect_queues_finish(struct collect_queues *q)
{
	for (int i = 0; i < q->nns; i++)
		sockdiag_close(q->ns[i].sd);
	q->nns = 0;
}

/* One dump's target: the ports not read by an earlier dump. */
struct fill {
	struct sockq_snap *snap;
	bool done[SOCKQ_MAX_PORTS];	/* read before this dump */
	int found;			/* sockets on ports not done */
};

/* sockdiag_mem_fn: a UDP socket's queue into its port's snapshot. */
static void add_rqueue(const struct sockdiag_sock *k, void *arg)
{
	struct fill *f = arg;

	for (int i = 0; i < f->snap->nports; i++) {
		struct sockq_snap_port *p = &f->snap->ports[i];

		if (p->port != k->port || f->done[i])
			continue;
		p->have_rqueue = true;
		p->rqueue_bytes += k->rqueue;
		if (k->have_mem && k->rcvbuf > p->diag_rcvbuf_bytes)
			p->diag_rcvbuf_bytes = k->rcvbuf;
		f->found++;
		return;
	}
}

/* Dump @sd into the ports not yet read; false when the dump failed (what
 * it added is taken back). */
static bool dump(struct sockdiag *sd, struct fill *f)
{
	int n;

	for (int i = 0; i < f->snap->nports; i++)
		f->done[i] = f->snap->ports[i].have_rqueue;
	f->found = 0;
	n = sockdiag_udp_mem(sd, add_rqueue, f);
	if (n >= 0)
		return true;
	rxb_log_errno(RXB_LOG_DEBUG, -n, "collect: UDP queues of the watched ports");
	for (int i = 0; i < f->snap->nports; i++)
		if (!f->done[i]) {
			f->snap->ports[i].have_rqueue = false;
			f->snap->ports[i].rqueue_bytes = 0;
			f->snap->ports[i].diag_rcvbuf_bytes = 0;
		}
	return false;
}

/* A diagnostics socket opened in the namespace of /proc/@tid/ns/net. */
static struct sockdiag *open_in(struct collect_queues *q, uint32_t tid)
{
	char path[64];
	struct sockdiag *sd = NULL;
	int fd, self, err;

	snprintf(path, sizeof(path), "/proc/%u/ns/net", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		close(fd);
		return NULL;
	}
	if (setns(fd, CLONE_NEWNET)) {
		if (!q->logged)
			rxb_log_errno(RXB_LOG_INFO, errno,
				      "collect: entering receiver %u's network namespace "
				      "(its queues stay unread: the enqueue probe stays "
				      "attached in every sampled epoch)", tid);
		q->logged = true;
	} else {
		err = sockdiag_open(&sd);
		if (err)
			sd = NULL;
		/* Back, or every later socket would be opened there. */
		if (setns(self, CLONE_NEWNET))
			rxb_log_errno(RXB_LOG_ERR, errno,
				      "collect: returning from receiver %u's network namespace",
				      tid);
	}
	close(self);
	close(fd);
	return sd;
}

/* The diagnostics of @tid's namespace (NULL: none), opened when new. */
static struct sockdiag *diag_of(struct collect_queues *q, uint32_t tid, uint64_t *ino)
{
	char path[64];
	struct stat st;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/ns/net", tid);
	if (stat(path, &st))
		return NULL;	/* it exited */
	*ino = st.st_ino;
	for (i = 0; i < q->nns; i++)
		if (q->ns[i].ino == *ino)
			return q->ns[i].sd;
	if (*ino == q->own_ino || q->nns == COLLECT_QUEUES_MAX_NETNS)
		return NULL;
	q->ns[q->nns].ino = *ino;
	q->ns[q->nns].used = false;
	q->ns[q->nns].sd = open_in(q, tid);
	return q->ns[q->nns++].sd;
}

/* Mark namespace @ino used. */
static void mark_used(struct collect_queues *q, uint64_t ino)
{
	for (int i = 0; i < q->nns; i++)
		if (q->ns[i].ino == ino)
			q->ns[i].used = true;
}

/* Close the namespaces that had no watched socket at this read. */
static void forget_unused(struct collect_queues *q)
{
	int n = 0;

	for (int i = 0; i < q->nns; i++) {
		if (!q->ns[i].used) {
			sockdiag_close(q->ns[i].sd);
			continue;
		}
		q->ns[i].used = false;
		q->ns[n++] = q->ns[i];
	}
	q->nns = n;
}

/* Dump @sd (namespace @ino) into the unread ports; note where they were. */
static bool dump_ns(struct sockdiag *sd, uint64_t ino, struct fill *f, uint64_t *where)
{
	bool ok = dump(sd, f);

	for (int i = 0; ok && i < f->snap->nports; i++)
		if (!f->done[i] && f->snap->ports[i].have_rqueue)
			where[i] = ino;
	return ok;
}

/* A port not read yet: through the namespace of a thread that dequeued from it. */
static void read_foreign(struct collect_queues *q, struct fill *f, int i, uint64_t *where)
{
	struct sockq_snap *snap = f->snap;

	for (int d = 0; d < snap->ndeq && !snap->ports[i].have_rqueue; d++) {
		struct sockdiag *sd;
		uint64_t ino = 0;

		if (snap->deq[d].k.port != snap->ports[i].port)
			continue;
		sd = diag_of(q, snap->deq[d].k.tid, &ino);
		if (sd && dump_ns(sd, ino, f, where) && f->found)
			mark_used(q, ino);
		else if (ino)
			mark_used(q, ino);	/* no retry of a failed entry */
	}
}

/* The namespace @port's socket was in at the last read (0: none). */
static uint64_t seen_in(const struct collect_queues *q, uint16_t port)
{
	for (int i = 0; i < q->nseen; i++)
		if (q->seen[i].port == port)
			return q->seen[i].ino;
	return 0;
}

/* Remember where each port's socket is now (@where[i]: ino, 0: nowhere). */
static void note_seen(struct collect_queues *q, const struct sockq_snap *snap,
		      const uint64_t *where)
{
	q->nseen = 0;
	for (int i = 0; i < snap->nports && i < SOCKQ_MAX_PORTS; i++) {
		q->seen[q->nseen].port = snap->ports[i].port;
		q->seen[q->nseen++].ino = where[i];
	}
}

bool collect_queues_read(struct collect_queues *q, struct sockdiag *own,
			 struct sockq_snap *snap)
{
	uint64_t where[SOCKQ_MAX_PORTS] = { 0 }, read_ok[COLLECT_QUEUES_MAX_NETNS + 1];
	struct fill f = { .snap = snap };
	int nok = 0, nns = q->nns;
	bool all = true;

	if (own && dump_ns(own, q->own_ino, &f, where))
		read_ok[nok++] = q->own_ino;
	/* The namespaces known from before, then new ones. */
	for (int n = 0; n < nns; n++)
		if (q->ns[n].sd && dump_ns(q->ns[n].sd, q->ns[n].ino, &f, where)) {
			read_ok[nok++] = q->ns[n].ino;
			if (f.found)
				q->ns[n].used = true;
		}
	for (int i = 0; i < snap->nports; i++)
		if (!snap->ports[i].have_rqueue)
			read_foreign(q, &f, i, where);
	for (int i = 0; i < snap->nports; i++) {
		struct sockq_snap_port *p = &snap->ports[i];
		uint64_t was = seen_in(q, p->port);

		if (p->have_rqueue) {
			where[i] = where[i] ? where[i] : was;
			continue;
		}
		/* Closed since (its namespace read fine without it), or
		 * closed before and no socket found since: an empty queue. */
		for (int k = 0; was && k < nok; k++)
			if (read_ok[k] == was)
				p->have_rqueue = true;
		if (was == COLLECT_QUEUES_CLOSED)
			p->have_rqueue = true;
		if (p->have_rqueue) {
			p->rqueue_bytes = 0;
			where[i] = COLLECT_QUEUES_CLOSED;
		}
		all = all && p->have_rqueue;
	}
	note_seen(q, snap, where);
	forget_unused(q);
	return all && snap->nports > 0;
}
