// SPDX-License-Identifier: GPL-2.0-or-later
/* TCP connections and their tcp_info. See tcpconn.h. */
#include "daemon/collect/tcpconn.h"

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "daemon/collect/rtattr.h"
#include "daemon/collect/sockdiag.h"

/*
 * The kernel's TCP states (include/net/tcp_states.h, ABI of sock_diag):
 * glibc's <netinet/tcp.h> has them, but its struct tcp_info stops before
 * tcpi_bytes_received, and it cannot be included with <linux/tcp.h>.
 */
enum {
	ST_ESTABLISHED = 1,
	ST_FIN_WAIT1 = 4,
	ST_FIN_WAIT2 = 5,
	ST_CLOSE_WAIT = 8,
	ST_LAST_ACK = 9,
	ST_CLOSING = 11,
};

#define CONN_STATES	((1u << ST_ESTABLISHED) | (1u << ST_FIN_WAIT1) | \
			 (1u << ST_FIN_WAIT2) | (1u << ST_CLOSE_WAIT) | \
			 (1u << ST_LAST_ACK) | (1u << ST_CLOSING))

/* How much of tcp_info must be there for a field. */
#define HAS(len, field) \
	((len) >= offsetof(struct tcp_info, field) + sizeof(((struct tcp_info *)0)->field))

static void read_info(const unsigned char *v, size_t len, struct tcpconn *c)
{
	struct tcp_info ti;

	memset(&ti, 0, sizeof(ti));
	memcpy(&ti, v, len < sizeof(ti) ? len : sizeof(ti));
	c->have_info = true;
	if (HAS(len, tcpi_rtt))
		c->rtt_us = ti.tcpi_rtt;
	if (HAS(len, tcpi_rcv_mss))
		c->rcv_mss = ti.tcpi_rcv_mss;
	if (HAS(len, tcpi_bytes_received)) {
		c->bytes_received = ti.tcpi_bytes_received;
		c->have_bytes = true;
	}
}

/* The attributes after the inet_diag_msg, @alen bytes at @p. */
static int read_attrs(const unsigned char *p, size_t alen, struct tcpconn *c)
{
	struct rtattr_view a;
	int r;

	while ((r = rtattr_next(&p, &alen, &a)) > 0)
		if (a.type == INET_DIAG_INFO)
			read_info(a.data, a.len, c);
	return r;
}

/* The peer's address as v4-mapped IPv6 or IPv6. */
static void peer_addr(const struct inet_diag_msg *m, uint8_t out[16])
{
	memset(out, 0, 16);
	if (m->idiag_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, m->id.idiag_dst, 4);
	} else {
		memcpy(out, m->id.idiag_dst, 16);
	}
}

static int give(const struct nlmsghdr *h, size_t mlen, struct tcpconn_req *rq)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	size_t head = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*m)));
	struct tcpconn c;

	if (mlen < NLMSG_LENGTH(sizeof(*m)))
		return -EBADMSG;
	if (m->idiag_state >= 32 || !(CONN_STATES & (1u << m->idiag_state)) ||
	    (m->idiag_family != AF_INET && m->idiag_family != AF_INET6))
		return 0;
	if (rq->count >= rq->max_conns) {
		rq->skipped++;
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.cookie = (uint64_t)m->id.idiag_cookie[1] << 32 | m->id.idiag_cookie[0];
	c.family = m->idiag_family;
	c.state = m->idiag_state;
	c.lport = ntohs(m->id.idiag_sport);
	c.rport = ntohs(m->id.idiag_dport);
	peer_addr(m, c.raddr);
	if (mlen > head && read_attrs((const unsigned char *)h + head, mlen - head, &c))
		return -EBADMSG;
	rq->count++;
	rq->fn(&c, rq->arg);
	return 0;
}

/* An NLMSG_ERROR's code, NLMSG_DONE's optional one. */
static int nl_code(const struct nlmsghdr *h, size_t mlen)
{
	int err;

	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		if (mlen < NLMSG_LENGTH(sizeof(*e)))
			return -EBADMSG;
		return e->error > 0 ? -e->error : e->error;
	}
	if (mlen < NLMSG_LENGTH(sizeof(err)))
		return 0;
	memcpy(&err, NLMSG_DATA(h), sizeof(err));
	return err < 0 ? err : 0;
}

int tcpconn_parse(const void *buf, size_t len, struct tcpconn_req *rq)
{
	const unsigned char *p = buf, *end = p + len;

	while ((size_t)(end - p) >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr h;
		size_t mlen, step;
		int err;

		memcpy(&h, p, sizeof(h));
		mlen = h.nlmsg_len;
		step = NLMSG_ALIGN(mlen);
		if (mlen < sizeof(h) || mlen > (size_t)(end - p))
			return -EBADMSG;
		if (h.nlmsg_seq == rq->seq) {
			if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR)
				return nl_code((const struct nlmsghdr *)p, mlen);
			if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
				err = give((const struct nlmsghdr *)p, mlen, rq);
				if (err)
					return err;
			}
		}
		if (step >= (size_t)(end - p))
			break;
		p += step;
	}
	return 1;
}

static int parse_cb(const void *buf, size_t len, void *arg)
{
	return tcpconn_parse(buf, len, arg);
}

int tcpconn_dump(struct sockdiag *sd, struct tcpconn_req *rq)
{
	static const uint8_t families[] = { AF_INET, AF_INET6 };

	rq->count = rq->skipped = 0;
	for (size_t i = 0; i < sizeof(families); i++) {
		struct inet_diag_req_v2 req = {
			.sdiag_family = families[i],
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = CONN_STATES,
			.idiag_ext = 1u << (INET_DIAG_INFO - 1),
		};
		int err = sockdiag_dump_raw(sd, &req, &rq->seq, parse_cb, rq);

		/* A kernel without IPv6 answers that dump with an error. */
		if (err && !(i && (err == -EAFNOSUPPORT || err == -ENOENT)))
			return err;
	}
	return (int)rq->count;
}
