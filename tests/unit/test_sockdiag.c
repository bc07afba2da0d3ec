// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/collect/sockdiag: the dump parser against hand-built
 * netlink messages (well-formed, another request's, unwanted states,
 * truncated, errors), and the live dumps against sockets this test opens,
 * whose inodes fstat() gives independently.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "daemon/collect/sockdiag.h"
#include "tests/unit/unit_main.h"

#define SEQ	7

struct seen {
	int n;
	uint8_t proto[8];
	uint16_t port[8];
	uint64_t inode[8];
	uint32_t uid[8];
};

static void note(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		s->proto[s->n] = proto;
		s->port[s->n] = port;
		s->inode[s->n] = inode;
		s->uid[s->n] = uid;
	}
	s->n++;
}

/* A listener dump's request, as dump_family() makes it. */
#define LISTEN_REQ(s) { .seq = SEQ, .states = 1u << TCP_LISTEN, \
			.proto = IPPROTO_TCP, .fn = note, .arg = (s) }

/* A buffer of netlink messages built one after another. */
struct buf {
	union {
		unsigned char b[1024];
		uint64_t align;
	} u;
	size_t len;
};

static struct nlmsghdr *put(struct buf *b, uint16_t type, uint32_t seq,
			    const void *payload, size_t plen)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->u.b + b->len);

	memset(h, 0, NLMSG_SPACE(plen));
	h->nlmsg_len = NLMSG_LENGTH(plen);
	h->nlmsg_type = type;
	h->nlmsg_seq = seq;
	h->nlmsg_flags = NLM_F_MULTI;
	if (plen)
		memcpy(NLMSG_DATA(h), payload, plen);
	b->len += NLMSG_SPACE(plen);
	return h;
}

static void put_sock(struct buf *b, uint32_t seq, uint8_t state, uint16_t port,
		     uint32_t inode)
{
	struct inet_diag_msg m = {
		.idiag_family = AF_INET,
		.idiag_state = state,
		.id.idiag_sport = htons(port),
		.idiag_inode = inode,
		.idiag_uid = inode + 1,
	};

	put(b, SOCK_DIAG_BY_FAMILY, seq, &m, sizeof(m));
}

static void test_parse_dump(void **state)
{
	struct buf b = { .len = 0 };
	struct seen s = { 0 };
	struct sockdiag_req rq = LISTEN_REQ(&s);
	int done = 0;

	(void)state;
	put_sock(&b, SEQ, TCP_LISTEN, 5201, 1001);
	put_sock(&b, SEQ, TCP_ESTABLISHED, 5201, 1002);	/* not a listener */
	put_sock(&b, SEQ - 1, TCP_LISTEN, 22, 1003);	/* another request's */
	put_sock(&b, SEQ, TCP_LISTEN, 443, 1004);
	/* No NLMSG_DONE yet: more datagrams follow. */
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), 1);
	assert_int_equal(rq.count, 2);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.proto[0], IPPROTO_TCP);
	assert_int_equal(s.port[0], 5201);
	assert_int_equal(s.inode[0], 1001);
	assert_int_equal(s.uid[0], 1002);
	assert_int_equal(s.port[1], 443);
	assert_int_equal(s.inode[1], 1004);

	b.len = 0;
	put(&b, NLMSG_DONE, SEQ - 1, &done, sizeof(done));	/* stale: skipped */
	put_sock(&b, SEQ, TCP_LISTEN, 80, 1005);
	put(&b, NLMSG_DONE, SEQ, &done, sizeof(done));
	put_sock(&b, SEQ, TCP_LISTEN, 81, 1006);		/* after the end */
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), 0);
	assert_int_equal(rq.count, 3);
	assert_int_equal(s.port[2], 80);
}

static void test_parse_errors(void **state)
{
	struct buf b = { .len = 0 };
	struct seen s = { 0 };
	struct nlmsgerr e = { .error = -EPERM };
	struct inet_diag_msg m = { .idiag_state = TCP_LISTEN };
	struct sockdiag_req rq = LISTEN_REQ(&s);
	int done = -EINTR;
	struct nlmsghdr *h;

	(void)state;
	put(&b, NLMSG_ERROR, SEQ, &e, sizeof(e));
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), -EPERM);

	/* A dump ended by an error carried in NLMSG_DONE. */
	b.len = 0;
	put(&b, NLMSG_DONE, SEQ, &done, sizeof(done));
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), -EINTR);

	/* A message claiming more bytes than the datagram has. */
	b.len = 0;
	h = put(&b, SOCK_DIAG_BY_FAMILY, SEQ, &m, sizeof(m));
	assert_int_equal(sockdiag_parse(b.u.b, b.len - 8, &rq),
			 -EBADMSG);
	/* Shorter than its header says a header is. */
	h->nlmsg_len = sizeof(*h) - 1;
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), -EBADMSG);
	/* A socket message too short for an inet_diag_msg. */
	h->nlmsg_len = NLMSG_LENGTH(sizeof(m) - 4);
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), -EBADMSG);
	/* An error message too short for its code. */
	b.len = 0;
	h = put(&b, NLMSG_ERROR, SEQ, &e, sizeof(e));
	h->nlmsg_len = NLMSG_LENGTH(2);
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), -EBADMSG);
	/* Less than a header: nothing to read, no error. */
	assert_int_equal(sockdiag_parse(b.u.b, 10, &rq), 1);
	assert_int_equal(rq.count, 0);
	assert_int_equal(s.n, 0);
}

/* The memory dump's callback: the socket of @port only. */
struct mem_seen {
	uint16_t port;
	int n;
	struct sockdiag_sock s;
};

static void note_mem(const struct sockdiag_sock *s, void *arg)
{
	struct mem_seen *m = arg;

	if (m->port && s->port != m->port)
		return;
	m->s = *s;
	m->n++;
}

/* A UDP socket's message with an SKMEMINFO attribute of @nvars values. */
static struct nlmsghdr *put_mem_sock(struct buf *b, uint16_t port, uint32_t inode,
				     uint32_t uid, int nvars)
{
	struct {
		struct inet_diag_msg m;
		struct rtattr a;
		uint32_t mi[SK_MEMINFO_VARS + 2];
	} msg;
	uint32_t cookie[2] = { 0x89abcdef, 0x01234567 };

	memset(&msg, 0, sizeof(msg));
	msg.m.idiag_family = AF_INET6;
	msg.m.idiag_state = TCP_CLOSE;
	msg.m.id.idiag_sport = htons(port);
	msg.m.idiag_inode = inode;
	msg.m.idiag_uid = uid;
	memcpy(msg.m.id.idiag_cookie, cookie, sizeof(cookie));
	msg.a.rta_type = INET_DIAG_SKMEMINFO;
	msg.a.rta_len = (unsigned short)RTA_LENGTH(nvars * sizeof(uint32_t));
	for (int i = 0; i < nvars; i++)
		msg.mi[i] = 1000 + (uint32_t)i;
	return put(b, SOCK_DIAG_BY_FAMILY, SEQ, &msg,
		   sizeof(msg.m) + RTA_LENGTH(nvars * sizeof(uint32_t)));
}

static void test_parse_mem(void **state)
{
	struct buf b = { .len = 0 };
	struct mem_seen ms = { 0 };
	struct sockdiag_req rq = { .seq = SEQ, .proto = IPPROTO_UDP,
				   .states = 1u << TCP_CLOSE, .mem_fn = note_mem,
				   .arg = &ms };
	struct nlmsghdr *h;

	(void)state;
	put_mem_sock(&b, 9000, 42, 1001, SK_MEMINFO_VARS);
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), 1);
	assert_int_equal(ms.n, 1);
	assert_int_equal(ms.s.port, 9000);
	assert_int_equal(ms.s.inode, 42);
	assert_int_equal(ms.s.uid, 1001);
	assert_int_equal(ms.s.family, AF_INET6);
	assert_int_equal(ms.s.cookie, 0x0123456789abcdefULL);
	assert_true(ms.s.have_mem && ms.s.have_drops);
	assert_int_equal(ms.s.rmem_alloc, 1000 + SK_MEMINFO_RMEM_ALLOC);
	assert_int_equal(ms.s.rcvbuf, 1000 + SK_MEMINFO_RCVBUF);
	assert_int_equal(ms.s.backlog, 1000 + SK_MEMINFO_BACKLOG);
	assert_int_equal(ms.s.drops, 1000 + SK_MEMINFO_DROPS);

	/* An older kernel's shorter meminfo: no drops slot. */
	b.len = 0;
	put_mem_sock(&b, 9001, 43, 0, SK_MEMINFO_DROPS);
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), 1);
	assert_true(ms.s.have_mem);
	assert_false(ms.s.have_drops);
	/* A longer one (slots added later): the known ones read. */
	b.len = 0;
	put_mem_sock(&b, 9002, 44, 0, SK_MEMINFO_VARS + 2);
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), 1);
	assert_int_equal(ms.s.drops, 1000 + SK_MEMINFO_DROPS);
	/* An attribute longer than its message: ignored, the socket still given. */
	b.len = 0;
	h = put_mem_sock(&b, 9003, 45, 0, SK_MEMINFO_VARS);
	h->nlmsg_len -= 8;
	assert_int_equal(sockdiag_parse(b.u.b, b.len, &rq), 1);
	assert_int_equal(ms.s.port, 9003);
	assert_false(ms.s.have_mem);
	assert_int_equal(ms.n, 4);
}

/* A socket on 127.0.0.1 (IPv4) or ::1: UDP, TCP listening, or TCP bound
 * only; its port and inode. -1 when it cannot be made. */
static int make_socket(int family, int type, bool listening, uint16_t *port,
		       uint64_t *inode)
{
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in)
					  : sizeof(struct sockaddr_in6);
	struct stat st;
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	if (bind(fd, (struct sockaddr *)&ss, len) ||
	    (listening && listen(fd, 1)) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) || fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	*inode = st.st_ino;
	return fd;
}

static int find(const struct seen *s, uint8_t proto, uint16_t port, uint64_t inode)
{
	int hits = 0;

	for (int i = 0; i < s->n && i < 8; i++)
		hits += s->proto[i] == proto && s->port[i] == port &&
			s->inode[i] == inode;
	return hits;
}

/* Only the sockets on the ports under test, whatever else the host has. */
struct want {
	uint16_t ports[4];
	struct seen s;
};

static void note_wanted(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid, void *arg)
{
	struct want *w = arg;

	for (int i = 0; i < 4; i++)
		if (w->ports[i] == port)
			note(proto, port, inode, uid, &w->s);
}

static void test_live(void **state)
{
	struct sockdiag *sd;
	uint16_t p4, p6, pq, pu;
	uint64_t i4, i6, iq, iu;
	int l4, l6, quiet, udp, n;
	struct want w = { 0 };

	(void)state;
	assert_int_equal(sockdiag_open(&sd), 0);
	l4 = make_socket(AF_INET, SOCK_STREAM, true, &p4, &i4);
	assert_true(l4 >= 0);
	quiet = make_socket(AF_INET, SOCK_STREAM, false, &pq, &iq); /* not listening */
	assert_true(quiet >= 0);
	udp = make_socket(AF_INET, SOCK_DGRAM, false, &pu, &iu);
	assert_true(udp >= 0);
	l6 = make_socket(AF_INET6, SOCK_STREAM, true, &p6, &i6); /* -1 without IPv6 */

	w.ports[0] = p4;
	w.ports[1] = pq;
	w.ports[2] = pu;
	w.ports[3] = l6 >= 0 ? p6 : 0;
	n = sockdiag_tcp_listeners(sd, note_wanted, &w);
	assert_true(n >= (l6 >= 0 ? 2 : 1));
	assert_int_equal(find(&w.s, IPPROTO_TCP, p4, i4), 1);
	if (l6 >= 0)
		assert_int_equal(find(&w.s, IPPROTO_TCP, p6, i6), 1);
	assert_int_equal(w.s.n, l6 >= 0 ? 2 : 1);	/* not quiet, not udp */

	memset(&w.s, 0, sizeof(w.s));
	n = sockdiag_udp_sockets(sd, note_wanted, &w);
	assert_true(n >= 1);
	assert_int_equal(find(&w.s, IPPROTO_UDP, pu, iu), 1);
	for (int i = 0; i < w.s.n && i < 8; i++)
		if (w.s.inode[i] == iu)
			assert_int_equal(w.s.uid[i], geteuid());
	{
		uint32_t uids[4];

		assert_int_equal(sockdiag_port_owners(sd, IPPROTO_UDP, pu, uids, 4), 1);
		assert_int_equal(uids[0], geteuid());
		assert_int_equal(sockdiag_port_owners(sd, IPPROTO_TCP, p4, uids, 4), 1);
		assert_int_equal(sockdiag_port_owners(sd, IPPROTO_TCP, pq, uids, 4), 0);
	}
	/* The TCP sockets are not in it (by inode: another UDP socket of the
	 * host may have the same port number). */
	assert_int_equal(find(&w.s, IPPROTO_UDP, p4, i4) + find(&w.s, IPPROTO_UDP, pq, iq), 0);

	/* Gone once closed; the socket is reused for the next dumps. */
	close(l4);
	close(udp);
	memset(&w.s, 0, sizeof(w.s));
	assert_true(sockdiag_tcp_listeners(sd, note_wanted, &w) >= 0);
	assert_true(sockdiag_udp_sockets(sd, note_wanted, &w) >= 0);
	assert_int_equal(find(&w.s, IPPROTO_TCP, p4, i4), 0);
	assert_int_equal(find(&w.s, IPPROTO_UDP, pu, iu), 0);
	if (l6 >= 0)
		assert_int_equal(find(&w.s, IPPROTO_TCP, p6, i6), 1);

	close(quiet);
	if (l6 >= 0)
		close(l6);
	sockdiag_close(sd);
	sockdiag_close(NULL);
}

/*
 * The memory of a UDP socket this test fills: 64 KiB asked, 128 KiB
 * stored; what it holds after datagrams nobody reads, and the drops once
 * it is full, against the kernel's own SO_MEMINFO.
 */
static void test_live_mem(void **state)
{
	struct sockdiag *sd;
	struct mem_seen ms = { 0 };
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t mlen = sizeof(mi);
	int val = 65536, snd, rcv;
	uint16_t port;
	uint64_t inode;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char pkt[1000] = { 0 };

	(void)state;
	assert_int_equal(sockdiag_open(&sd), 0);
	rcv = make_socket(AF_INET, SOCK_DGRAM, false, &port, &inode);
	assert_true(rcv >= 0);
	assert_int_equal(setsockopt(rcv, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)), 0);
	snd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(snd >= 0);
	to.sin_port = htons(port);
	for (int i = 0; i < 400; i++)	/* far more than 128 KiB holds */
		assert_int_equal(sendto(snd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to,
					sizeof(to)), (ssize_t)sizeof(pkt));
	ms.port = port;
	assert_true(sockdiag_udp_mem(sd, note_mem, &ms) >= 1);
	assert_int_equal(ms.n, 1);
	assert_int_equal(ms.s.inode, inode);
	assert_int_equal(ms.s.uid, getuid());
	assert_true(ms.s.have_mem && ms.s.have_drops);
	assert_int_equal(ms.s.rcvbuf, 131072);
	assert_int_equal(getsockopt(rcv, SOL_SOCKET, SO_MEMINFO, mi, &mlen), 0);
	assert_int_equal(ms.s.rmem_alloc, mi[SK_MEMINFO_RMEM_ALLOC]);
	assert_int_equal(ms.s.drops, mi[SK_MEMINFO_DROPS]);
	assert_true(ms.s.rmem_alloc >= 131072 / 2);
	assert_true(ms.s.drops > 0);
	close(snd);
	close(rcv);
	sockdiag_close(sd);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_parse_dump),
	cmocka_unit_test(test_parse_mem),
	cmocka_unit_test(test_live_mem),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_live),
)
