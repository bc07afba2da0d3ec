// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the netlink answers rxbneckd parses itself: a
 * sock_diag dump datagram (sockdiag_parse, daemon/collect/sockdiag.c) and
 * an ethtool generic-netlink reply (nic_parse_ethtool, daemon/collect/
 * nic.c, which bounds the message before libnl's genlmsg_parse reads it).
 * The link counters come from libnl's own rtnl_link parser and are not
 * fuzzed here. The first byte picks the parser; the rest is the message,
 * copied to aligned memory as the kernel delivers it.
 *
 * Properties besides "no crash, no sanitizer report":
 *  - sockdiag_parse returns 1, 0 or -errno, and the sockets it reports
 *    are in the requested states and no more than the messages that fit;
 *  - nic_parse_ethtool reports values only for attributes it was asked
 *    for, and none after an error.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>

#include "daemon/collect/nic.h"
#include "daemon/collect/sockdiag.h"

#define MAX_MSG 65536

static uint64_t buf[MAX_MSG / 8];

static void note(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid, void *arg)
{
	int *n = arg;

	(void)port;
	(void)inode;
	(void)uid;
	if (proto != IPPROTO_TCP)
		abort();
	(*n)++;
}

static void dump(size_t len)
{
	int seen = 0;
	struct sockdiag_req rq = { .seq = 7, .states = 1u << TCP_LISTEN, .proto = IPPROTO_TCP,
				   .fn = note, .arg = &seen };
	int r = sockdiag_parse(buf, len, &rq);

	if (r > 1 || r < -4095 || rq.count != seen)
		abort();
	if ((size_t)seen > len / NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		abort();
}

static void ethtool(size_t len)
{
	static const int want[] = { ETHTOOL_A_RINGS_RX, ETHTOOL_A_RINGS_RX_MAX, 70, -1 };
	struct nic_answer ans[4];
	int r;

	memset(ans, 0, sizeof(ans));
	r = nic_parse_ethtool(buf, len, ETHTOOL_A_RINGS_MAX, want, ans, 4);
	if (r > 0 || (r < 0 && (ans[0].present || ans[1].present)))
		abort();
	if (ans[2].present || ans[3].present)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;

	if (size < 1)
		return 0;
	len = size - 1 < MAX_MSG ? size - 1 : MAX_MSG;
	memcpy(buf, data + 1, len);
	if (data[0] & 1)
		ethtool(len);
	else
		dump(len);
	return 0;
}
