// SPDX-License-Identifier: GPL-2.0-or-later
#include "daemon/collect/sockdiag.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "daemon/collect/rtattr.h"

/* A dump's datagrams are at most a few pages; anything larger is reported
 * as truncated rather than half-read. */
#define SOCKDIAG_BUF_BYTES	65536

/* A dump the kernel does not finish within this is abandoned: the daemon's
 * loop must not stall on it. */
#define SOCKDIAG_TIMEOUT_MS	1000

struct sockdiag {
	int fd;
	uint32_t seq;
	/* Aligned for the netlink headers read in place. */
	unsigned char buf[SOCKDIAG_BUF_BYTES] __attribute__((aligned(8)));
};

int sockdiag_open(struct sockdiag **out)
{
	struct timeval tv = { .tv_sec = SOCKDIAG_TIMEOUT_MS / 1000,
			      .tv_usec = (SOCKDIAG_TIMEOUT_MS % 1000) * 1000 };
	struct sockdiag *sd;
	int err;

	*out = NULL;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	sd->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (sd->fd < 0) {
		err = -errno;
		free(sd);
		return err;
	}
	if (setsockopt(sd->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		err = -errno;
		close(sd->fd);
		free(sd);
		return err;
	}
	*out = sd;
	return 0;
}

void sockdiag_close(struct sockdiag *sd)
{
	if (!sd)
		return;
	close(sd->fd);
	free(sd);
}

/* A kernel error code as -errno: anything beyond errno's range is a broken message. */
static int errno_of(int err)
{
	if (err < -4095 || err > 4095)
		return -EBADMSG;
	return err > 0 ? -err : err;
}

/* An NLMSG_ERROR's code (an acknowledgement, 0, ends the dump too). */
static int nl_error(const struct nlmsghdr *h, size_t mlen)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);

	if (mlen < NLMSG_LENGTH(sizeof(*e)))
		return -EBADMSG;
	return errno_of(e->error);
}

/* NLMSG_DONE may carry the dump's error as an int. */
static int nl_done(const struct nlmsghdr *h, size_t mlen)
{
	int err;

	if (mlen < NLMSG_LENGTH(sizeof(err)))
		return 0;
	memcpy(&err, NLMSG_DATA(h), sizeof(err));
	return err < 0 ? errno_of(err) : 0;
}

/* An INET_DIAG_SKMEMINFO payload, @len bytes at @p, into @s. */
static void read_meminfo(const unsigned char *p, size_t len, struct sockdiag_sock *s)
{
	uint32_t mi[SK_MEMINFO_VARS] = { 0 };
	size_t n = len / sizeof(uint32_t);

	if (n > SK_MEMINFO_VARS)
		n = SK_MEMINFO_VARS;
	memcpy(mi, p, n * sizeof(uint32_t));
	if (n > SK_MEMINFO_BACKLOG) {
		s->have_mem = true;
		s->rmem_alloc = mi[SK_MEMINFO_RMEM_ALLOC];
		s->rcvbuf = mi[SK_MEMINFO_RCVBUF];
		s->backlog = mi[SK_MEMINFO_BACKLOG];
	}
	if (n > SK_MEMINFO_DROPS) {
		s->drops = mi[SK_MEMINFO_DROPS];
		s->have_drops = true;
	}
}

/*
 * A message's attributes, @alen bytes at @p: SKMEMINFO into @s. A
 * malformed attribute ends them (what was read stays).
 */
static void read_attrs(const unsigned char *p, size_t alen, struct sockdiag_sock *s)
{
	struct rtattr_view a;

	while (rtattr_next(&p, &alen, &a) > 0)
		if (a.type == INET_DIAG_SKMEMINFO)
			read_meminfo(a.data, a.len, s);
}

/* One socket's message, @mlen bytes in all, to rq->mem_fn. */
static void give_mem(const struct nlmsghdr *h, size_t mlen, struct sockdiag_req *rq)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	size_t head = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*m)));
	struct sockdiag_sock s = {
		.proto = rq->proto,
		.family = m->idiag_family,
		.port = ntohs(m->id.idiag_sport),
		.inode = m->idiag_inode,
		.uid = m->idiag_uid,
		.rqueue = m->idiag_rqueue,
		.cookie = (uint64_t)m->id.idiag_cookie[1] << 32 | m->id.idiag_cookie[0],
	};

	if (mlen > head)
		read_attrs((const unsigned char *)h + head, mlen - head, &s);
	rq->mem_fn(&s, rq->arg);
}

int sockdiag_parse(const void *buf, size_t len, struct sockdiag_req *rq)
{
	const unsigned char *p = buf, *end = p + len;

	while ((size_t)(end - p) >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *h = (const void *)p;
		size_t mlen = h->nlmsg_len, step = NLMSG_ALIGN(mlen);

		if (mlen < sizeof(*h) || mlen > (size_t)(end - p))
			return -EBADMSG;
		/* Another dump's leftovers (one abandoned on an error). */
		if (h->nlmsg_seq == rq->seq) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			switch (h->nlmsg_type) {
			case NLMSG_DONE:
				return nl_done(h, mlen);
			case NLMSG_ERROR:
				return nl_error(h, mlen);
			case SOCK_DIAG_BY_FAMILY:
				if (mlen < NLMSG_LENGTH(sizeof(*m)))
					return -EBADMSG;
				if (m->idiag_state >= 32 ||
				    !(rq->states & (1u << m->idiag_state)))
					break;
				if (rq->mem_fn)
					give_mem(h, mlen, rq);
				else
					rq->fn(rq->proto, ntohs(m->id.idiag_sport),
					       m->idiag_inode, m->idiag_uid, rq->arg);
				rq->count++;
				break;
			default:
				break;
			}
		}
		if (step >= (size_t)(end - p))
			break;
		p += step;
	}
	return 1;
}

int sockdiag_dump_raw(struct sockdiag *sd, struct inet_diag_req_v2 *req, uint32_t *seq,
		      int (*parse)(const void *buf, size_t len, void *arg), void *arg)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = ++sd->seq,
		},
		.req = *req,
	};

	*seq = msg.nlh.nlmsg_seq;
	if (sendto(sd->fd, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct iovec iov = { .iov_base = sd->buf, .iov_len = sizeof(sd->buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(sd->fd, &mh, 0);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -EPIPE;
		if (mh.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		r = parse(sd->buf, (size_t)n, arg);
		if (r <= 0)
			return r;
	}
}

static int parse_req(const void *buf, size_t len, void *arg)
{
	return sockdiag_parse(buf, len, arg);
}

/* One family's sockets of @rq->proto in @rq->states. */
static int dump_family(struct sockdiag *sd, uint8_t family,
		       struct sockdiag_req *rq, uint8_t ext)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = family,
		.sdiag_protocol = rq->proto,
		.idiag_states = rq->states,
		.idiag_ext = ext,
	};

	return sockdiag_dump_raw(sd, &req, &rq->seq, parse_req, rq);
}

/* Both families; a kernel without IPv6 answers that dump with an error. */
static int dump(struct sockdiag *sd, struct sockdiag_req *rq, uint8_t ext)
{
	int err;

	err = dump_family(sd, AF_INET, rq, ext);
	if (err)
		return err;
	err = dump_family(sd, AF_INET6, rq, ext);
	if (err && err != -EAFNOSUPPORT && err != -ENOENT)
		return err;
	return rq->count;
}

/* Bound UDP sockets are TCP_CLOSE, connected ones TCP_ESTABLISHED. */
#define UDP_STATES	((1u << TCP_CLOSE) | (1u << TCP_ESTABLISHED))

int sockdiag_udp_sockets(struct sockdiag *sd, sockdiag_fn fn, void *arg)
{
	struct sockdiag_req rq = { .states = UDP_STATES, .proto = IPPROTO_UDP,
				   .fn = fn, .arg = arg };

	return dump(sd, &rq, 0);
}

int sockdiag_tcp_listeners(struct sockdiag *sd, sockdiag_fn fn, void *arg)
{
	struct sockdiag_req rq = { .states = 1u << TCP_LISTEN, .proto = IPPROTO_TCP,
				   .fn = fn, .arg = arg };

	return dump(sd, &rq, 0);
}

int sockdiag_udp_mem(struct sockdiag *sd, sockdiag_mem_fn fn, void *arg)
{
	struct sockdiag_req rq = { .states = UDP_STATES, .proto = IPPROTO_UDP,
				   .mem_fn = fn, .arg = arg };

	return dump(sd, &rq, 1u << (INET_DIAG_SKMEMINFO - 1));
}

/* The sockets of one port and their owners (sockdiag_port_owners()). */
struct owners {
	uint16_t port;
	uint32_t *uids;
	int max, n;
};

static void note_owner(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid,
		       void *arg)
{
	struct owners *o = arg;

	(void)proto;
	(void)inode;
	if (port != o->port)
		return;
	if (o->n < o->max)
		o->uids[o->n] = uid;
	o->n++;
}

int sockdiag_port_owners(struct sockdiag *sd, uint8_t proto, uint16_t port,
			 uint32_t *uids, int max)
{
	struct owners o = { .port = port, .uids = uids, .max = max };
	int err = proto == IPPROTO_TCP ? sockdiag_tcp_listeners(sd, note_owner, &o) :
				       sockdiag_udp_sockets(sd, note_owner, &o);

	return err < 0 ? err : o.n;
}
