// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the ethtool generic-netlink reply rxbneckd parses
 * itself (nic_parse_ethtool, daemon/collect/nic.c, which bounds the
 * message before libnl's genlmsg_parse reads it), copied to aligned memory
 * as the kernel delivers it. The sock_diag dumps have their own target
 * (fuzz_sockdiag); the link counters come from libnl's own rtnl_link
 * parser and are not fuzzed here.
 *
 * Besides "no crash, no sanitizer report": nic_parse_ethtool reports
 * values only for attributes it was asked for, and none after an error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>

#include "daemon/collect/nic.h"

#define MAX_MSG 65536

static uint64_t buf[MAX_MSG / 8];

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
	size_t len = size < MAX_MSG ? size : MAX_MSG;

	memcpy(buf, data, len);
	ethtool(len);
	return 0;
}
