// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/collect/tcpconn: the dump parser against hand-built netlink
 * messages (a connection with a whole tcp_info, one whose tcp_info stops
 * before tcpi_bytes_received, another request's, a listener, IPv6, a
 * broken attribute, truncation, DONE and ERROR, the bound on how many are
 * given), and the live dump against a loopback connection this test
 * makes, whose received bytes are what it sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "daemon/collect/sockdiag.h"
#include "daemon/collect/tcpconn.h"
#include "tests/unit/unit_main.h"

#define SEQ	9
#define MAXC	8

struct seen {
	int n;
	uint16_t want;		/* keep only this local port's, 0: all */
	struct tcpconn c[MAXC];
};

static void note(const struct tcpconn *c, void *arg)
{
	struct seen *s = arg;

	if (s->want && c->lport != s->want)
		return;
	if (s->n < MAXC)
		s->c[s->n] = *c;
	s->n++;
}

struct buf {
	union {
		unsigned char b[4096];
		uint64_t align;
	} u;
	size_t len;
};

/* A SOCK_DIAG_BY_FAMILY message of @seq; with @info_len bytes of tcp_info. */
static struct nlmsghdr *put_conn(struct buf *b, uint32_t seq, uint8_t family, uint8_t state,
				 uint16_t lport, uint64_t cookie, size_t info_len, uint64_t bytes)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->u.b + b->len);
	struct inet_diag_msg *m = NLMSG_DATA(h);
	size_t head = NLMSG_ALIGN(sizeof(*m));
	struct rtattr *a = (struct rtattr *)((unsigned char *)m + head);
	struct tcp_info ti;

	memset(h, 0, NLMSG_SPACE(head + RTA_SPACE(sizeof(ti))));
	m->idiag_family = family;
	m->idiag_state = state;
	m->id.idiag_sport = htons(lport);
	m->id.idiag_dport = htons(40000);
	m->id.idiag_cookie[0] = (uint32_t)cookie;
	m->id.idiag_cookie[1] = (uint32_t)(cookie >> 32);
	if (family == AF_INET) {
		uint32_t v4 = htonl(0x0a000002);

		memcpy(m->id.idiag_dst, &v4, 4);
	} else {
		((uint8_t *)m->id.idiag_dst)[15] = 1;
	}
	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	h->nlmsg_seq = seq;
	h->nlmsg_len = NLMSG_LENGTH(head);
	if (info_len) {
		memset(&ti, 0, sizeof(ti));
		ti.tcpi_bytes_received = bytes;
		ti.tcpi_rtt = 50000;
		a->rta_type = INET_DIAG_INFO;
		a->rta_len = RTA_LENGTH(info_len);
		memcpy(RTA_DATA(a), &ti, info_len);
		h->nlmsg_len = NLMSG_LENGTH(head + RTA_SPACE(info_len));
	}
	b->len += NLMSG_ALIGN(h->nlmsg_len);
	return h;
}

static void put_done(struct buf *b, uint32_t seq, uint16_t type, int code)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->u.b + b->len);
	struct nlmsgerr e = { .error = code };

	memset(h, 0, NLMSG_SPACE(sizeof(e)));
	h->nlmsg_type = type;
	h->nlmsg_seq = seq;
	h->nlmsg_len = NLMSG_LENGTH(type == NLMSG_ERROR ? sizeof(e) : sizeof(int));
	if (type == NLMSG_ERROR)
		memcpy(NLMSG_DATA(h), &e, sizeof(e));
	else
		memcpy(NLMSG_DATA(h), &code, sizeof(int));
	b->len += NLMSG_ALIGN(h->nlmsg_len);
}

static void test_parse(void **state)
{
	struct seen s = { 0 };
	struct tcpconn_req rq = { .seq = SEQ, .fn = note, .arg = &s, .max_conns = 100 };
	struct buf b = { .len = 0 };

	(void)state;
	put_conn(&b, SEQ, AF_INET, 1, 5201, 0x100000007ULL, sizeof(struct tcp_info), 123456789);
	put_conn(&b, SEQ + 1, AF_INET, 1, 5202, 8, sizeof(struct tcp_info), 1);	/* another dump's */
	put_conn(&b, SEQ, AF_INET, 10, 5201, 9, sizeof(struct tcp_info), 1);	/* LISTEN */
	/* Older kernel: tcp_info up to tcpi_rcv_mss only. */
	put_conn(&b, SEQ, AF_INET6, 8, 5201, 10,
		 offsetof(struct tcp_info, tcpi_rcv_mss) + sizeof(uint32_t), 5);
	put_conn(&b, SEQ, AF_INET, 1, 5203, 11, 0, 0);		/* no attribute */
	assert_int_equal(tcpconn_parse(b.u.b, b.len, &rq), 1);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.c[0].lport, 5201);
	assert_int_equal(s.c[0].cookie, 0x100000007ULL);
	assert_true(s.c[0].have_bytes && s.c[0].bytes_received == 123456789);
	assert_int_equal(s.c[0].rtt_us, 50000);
	assert_int_equal(s.c[0].raddr[10], 0xff);
	assert_int_equal(s.c[0].raddr[12], 10);
	assert_int_equal(s.c[0].raddr[15], 2);
	assert_true(s.c[1].have_info && !s.c[1].have_bytes);
	assert_int_equal(s.c[1].state, 8);
	assert_int_equal(s.c[1].raddr[15], 1);
	assert_true(!s.c[2].have_info);
	/* The bound: one more given, the rest counted. */
	rq.max_conns = 4;
	b.len = 0;
	put_conn(&b, SEQ, AF_INET, 1, 1, 20, sizeof(struct tcp_info), 1);
	put_conn(&b, SEQ, AF_INET, 1, 2, 21, sizeof(struct tcp_info), 1);
	put_done(&b, SEQ, NLMSG_DONE, 0);
	assert_int_equal(tcpconn_parse(b.u.b, b.len, &rq), 0);
	assert_int_equal(rq.count, 4);
	assert_int_equal(rq.skipped, 1);
	/* An error ends the dump with its code. */
	b.len = 0;
	put_done(&b, SEQ, NLMSG_ERROR, -ENOENT);
	assert_int_equal(tcpconn_parse(b.u.b, b.len, &rq), -ENOENT);
}

static void test_malformed(void **state)
{
	struct seen s = { 0 };
	struct tcpconn_req rq = { .seq = SEQ, .fn = note, .arg = &s, .max_conns = 100 };
	struct buf b = { .len = 0 };
	struct nlmsghdr *h;
	struct rtattr *a;

	(void)state;
	h = put_conn(&b, SEQ, AF_INET, 1, 5201, 7, sizeof(struct tcp_info), 1);
	/* An attribute longer than the message. */
	a = (struct rtattr *)((unsigned char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct inet_diag_msg)));
	a->rta_len = 4000;
	assert_int_equal(tcpconn_parse(b.u.b, b.len, &rq), -EBADMSG);
	/* A message longer than the datagram. */
	b.len = 0;
	h = put_conn(&b, SEQ, AF_INET, 1, 5201, 7, sizeof(struct tcp_info), 1);
	assert_int_equal(tcpconn_parse(b.u.b, b.len - 8, &rq), -EBADMSG);
	/* Shorter than an inet_diag_msg. */
	h->nlmsg_len = NLMSG_LENGTH(8);
	assert_int_equal(tcpconn_parse(b.u.b, b.len, &rq), -EBADMSG);
	assert_int_equal(s.n, 0);
}

/* A loopback connection that received @n bytes: the dump says @n. */
static void test_live(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0), cs = socket(AF_INET, SOCK_STREAM, 0), as;
	static char data[300000], sink[65536];
	struct sockdiag *sd;
	struct seen s = { 0 };
	struct tcpconn_req rq = { .fn = note, .arg = &s, .max_conns = 1u << 30 };
	size_t got = 0;
	int n, found = 0;

	(void)state;
	assert_true(ls >= 0 && cs >= 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
	assert_int_equal(connect(cs, (struct sockaddr *)&sa, sizeof(sa)), 0);
	as = accept(ls, NULL, NULL);
	assert_true(as >= 0);
	assert_int_equal(write(cs, data, sizeof(data)), (ssize_t)sizeof(data));
	while (got < sizeof(data)) {
		ssize_t r = read(as, sink, sizeof(sink));

		assert_true(r > 0);
		got += (size_t)r;
	}
	s.want = ntohs(sa.sin_port);
	if (sockdiag_open(&sd)) {
		skip();
		return;
	}
	n = tcpconn_dump(sd, &rq);
	sockdiag_close(sd);
	if (n == -ENOENT || n == -EOPNOTSUPP) {
		skip();
		return;
	}
	assert_true(n >= 2);
	/* The accepted end (local port = the listener's) received them. */
	for (int i = 0; i < s.n && i < MAXC; i++) {
		assert_true(s.c[i].have_bytes);
		assert_int_equal(s.c[i].bytes_received, sizeof(data));
		assert_int_equal(s.c[i].raddr[12], 127);
		found++;
	}
	assert_int_equal(found, 1);
	close(as);
	close(cs);
	close(ls);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_parse),
	cmocka_unit_test(test_malformed),
	cmocka_unit_test(test_live),
)
