// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the sock_diag dump parser (daemon/collect/sockdiag.c):
 * one datagram of a dump's answer, read as a plain socket list and as the
 * memory dump (inet_diag_msg + attributes). The kernel is the peer, but
 * the parser is the daemon's only guard against a short or garbled
 * message. Besides "no crash, no sanitizer report": the sockets counted
 * are the sockets given, no more than the messages that fit, and the
 * result is 1, 0 or a negative errno (-4095..-1).
 */
#include <netinet/in.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/collect/sockdiag.h"

static int given;

static void on_sock(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid, void *arg)
{
	(void)proto, (void)port, (void)inode, (void)uid, (void)arg;
	given++;
}

static void on_mem(const struct sockdiag_sock *s, void *arg)
{
	(void)arg;
	/* every field readable; the drops slot only with the memory */
	if (s->have_drops && !s->have_mem)
		abort();
	given++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Netlink messages are read in place: 8-aligned, as recvmsg() fills. */
	uint64_t *buf = malloc(size / 8 * 8 + 8);
	struct sockdiag_req rq = { .seq = 7, .states = ~0u, .proto = IPPROTO_UDP };
	int r;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (int pass = 0; pass < 2; pass++) {
		rq.fn = pass ? NULL : on_sock;
		rq.mem_fn = pass ? on_mem : NULL;
		rq.count = 0;
		given = 0;
		r = sockdiag_parse(buf, size, &rq);
		/* an error code beyond errno's range is a broken message */
		if (r > 1 || r < -4095 || rq.count != given)
			abort();
		if ((size_t)given > size / NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
			abort();
	}
	free(buf);
	return 0;
}
