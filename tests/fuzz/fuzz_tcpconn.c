// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the TCP connection dump parser
 * (daemon/collect/tcpconn.c): the input is one datagram of a
 * SOCK_DIAG_BY_FAMILY answer to request 1 (with INET_DIAG_INFO). Besides
 * "no crash, no sanitizer report": the result is 1, 0 or a negative errno;
 * at most max_conns connections are given, each with a local port, an
 * address family the dump asked for, and bytes only with tcp_info; and the
 * same datagram parsed again gives the same connections (no state kept).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/collect/tcpconn.h"

#define MAXC	64

struct seen {
	uint32_t n;
	uint64_t sum;
};

static void note(const struct tcpconn *c, void *arg)
{
	struct seen *s = arg;

	if ((c->family != AF_INET && c->family != AF_INET6) || (c->have_bytes && !c->have_info))
		abort();
	s->n++;
	s->sum += c->cookie ^ c->bytes_received ^ c->lport ^ ((uint64_t)c->rtt_us << 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen a = { 0 }, b = { 0 };
	struct tcpconn_req ra = { .seq = 1, .fn = note, .arg = &a, .max_conns = 3 };
	struct tcpconn_req rb = { .seq = 1, .fn = note, .arg = &b, .max_conns = 3 };
	/* The parser reads netlink headers in place: give it aligned memory. */
	uint64_t *buf = malloc(size + 8);
	int r1, r2;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	r1 = tcpconn_parse(buf, size, &ra);
	r2 = tcpconn_parse(buf, size, &rb);
	if (r1 > 1 || r1 != r2 || a.n != b.n || a.sum != b.sum || a.n > ra.max_conns ||
	    a.n != ra.count)
		abort();
	free(buf);
	return 0;
}
