/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NIC parameters and link drop counters over netlink (stage A
 * of docs/measurement.md).
 *
 * Ring sizes and interrupt coalescing come from the kernel's ethtool
 * generic-netlink family (ETHTOOL_MSG_RINGS_GET, ETHTOOL_MSG_COALESCE_GET);
 * receive counters come from rtnetlink (RTM_GETLINK, IFLA_STATS64, parsed by
 * libnl-route). Both sockets are opened once by nic_reader_init() and reused
 * for every sample, so the per-epoch cost is two genl round trips and one
 * rtnetlink round trip per device.
 *
 * Parameters a device cannot report (the family answers EOPNOTSUPP, as veth
 * does, or leaves the attribute out, which `ethtool` shows as "n/a") are
 * taken from the configured struct nic_fallback; the record then says
 * RXB_SRC_CONFIG and its note names the device and what was missing.
 *
 * Counters are reported as deltas since the previous sample of the same
 * device. The first sample of a device, and the first after its ifindex
 * changed (it was deleted and re-created), reports zero deltas and takes the
 * baseline. A counter that went backwards is treated as reset: see
 * nic_counter_delta().
 *
 * A reader is not thread-safe: one thread (the epoch loop) uses it. It works
 * on the network namespace the process was in when nic_reader_init() ran.
 */
#ifndef RXB_DAEMON_NIC_H
#define RXB_DAEMON_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "rxb/measure.h"

/* Configured values for devices that do not report them ([measure] fallback_*). */
struct nic_fallback {
	uint32_t rx_ring;
	uint32_t rx_max_frames;
	uint32_t rx_usecs;
};

struct nic_reader;

/* Open and bind the netlink sockets, resolve the ethtool family. 0 or -errno. */
int nic_reader_init(struct nic_reader **out);
/* Close the sockets and free the per-device baselines. NULL is allowed. */
void nic_reader_finish(struct nic_reader *nr);

/*
 * Fill @out for @ifname: ring/coalesce params (source RXB_SRC_DEVICE, or
 * RXB_SRC_CONFIG from @fb with a note when the device says "not supported")
 * and IFLA_STATS64 counters as deltas since the previous call for that device
 * (first call: zero deltas, baseline taken). 0, -ENODEV, or -errno.
 *
 * @fb may be NULL: unsupported parameters are then 0 with RXB_SRC_NONE.
 * rx_ring_max is 0 when the device does not report it. On error @out is
 * left zeroed (name set) and the device's baseline is not changed.
 */
int nic_reader_sample(struct nic_reader *nr, const char *ifname,
		      const struct nic_fallback *fb, struct rxb_nic_meas *out);

/*
 * Up, non-loopback devices of the current netns; returns count or -errno.
 * At most @max names are written (in the kernel's dump order); when there are more,
 * the rest are left out with a warning and @max is returned.
 */
int nic_list_devices(struct nic_reader *nr, char (*names)[RXB_IFNAME_LEN], int max);

/* ------------------------------------------------ pure helpers (tested) -- */

/* The receive counters the reader tracks, all from IFLA_STATS64. */
struct nic_counters {
	uint64_t rx_packets;
	uint64_t rx_missed;	/* rx_missed_errors: the NIC had no ring slot */
	uint64_t rx_fifo;	/* rx_fifo_errors */
	uint64_t rx_dropped;	/* dropped by the stack/driver */
	uint64_t rx_over;	/* rx_over_errors */
};

/*
 * Increase of a counter from @prev to @cur. The kernel's counters are
 * 64-bit and do not wrap in practice (2^64 packets at 10^9 packets/s is
 * 584 years), so a decrease means the counter was reset (driver reset,
 * device re-created) or a driver keeps 32-bit counters that wrapped. Both
 * are handled as a reset: the delta is @cur, the count since the reset, and
 * *@reset is set. That undercounts by at most what was counted between the
 * previous sample and the reset/wrap - less than one epoch - whereas
 * guessing "32-bit wrap" on a real reset would invent up to 2^32 packets.
 */
uint64_t nic_counter_delta(uint64_t prev, uint64_t cur, bool *reset);

/* Per-field nic_counter_delta(); returns true when any counter was reset. */
bool nic_counters_delta(const struct nic_counters *prev, const struct nic_counters *cur,
			struct nic_counters *delta);

/* One parameter as the device answered it. */
struct nic_answer {
	int err;	/* 0, or the query's -errno (e.g. -EOPNOTSUPP) */
	bool present;	/* the reply carried the attribute */
	uint32_t value;
};

/*
 * Choose the value of one parameter: the device's when it answered with the
 * attribute (RXB_SRC_DEVICE), else @fallback (RXB_SRC_CONFIG) when @have_fb,
 * else 0 (RXB_SRC_NONE). Only call with err 0 or "not supported"
 * (nic_err_unsupported()); other query errors are the caller's to report.
 */
enum rxb_param_source nic_choose_param(const struct nic_answer *a, bool have_fb,
				       uint32_t fallback, uint32_t *out);

/* True for the errno values that mean "the device does not do this". */
bool nic_err_unsupported(int err);

/*
 * One ethtool generic-netlink reply of @len bytes at @msg (a struct
 * nlmsghdr): for each attribute type in @want[0..@nwant) that it carries as
 * at least a u32, ans[i].present and value; attribute types above
 * @max_attr (at most 63) are ignored. 0, or -errno when the message is
 * shorter than its headers or its attributes are broken. For the reader
 * and the fuzzer (link counters come from libnl's rtnl_link).
 */
int nic_parse_ethtool(const void *msg, size_t len, int max_attr, const int *want,
		      struct nic_answer *ans, int nwant);

const char *nic_source_name(enum rxb_param_source src);

#endif
