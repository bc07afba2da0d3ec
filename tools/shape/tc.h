/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneck-shape's traffic control, over rtnetlink with libnl-route.
 *
 * Per device: an HTB root qdisc MAJOR: in place of the kernel's default
 * root qdisc, with "default 0" so that every packet no filter claims is
 * sent through HTB's direct queue: first in, first out, never shaped, and
 * dequeued before any class (other traffic keeps the device's speed; it
 * loses the default qdisc's priority bands, and on a multi-queue device
 * the per-queue qdiscs, see docs/shape.md). Per receiver: a class
 * MAJOR:m with rate = ceil = the advice on the wire, a byte FIFO under it
 * large enough that the senders' own send buffers fill (and block them)
 * before it drops, and u32 filters that send the receiver's flow to it:
 *
 *   IPv4: header length 5, not a later fragment, protocol, destination
 *         address, destination port (u32 at offsets 0, 4, 8, 16, 20);
 *   IPv6: next header = protocol (no extension headers), destination
 *         address, destination port (offsets 4, 24..36, 40).
 *
 * Packets with IPv4 options, IPv6 extension headers, or later IPv4
 * fragments (which carry no port) are not matched and pass unshaped.
 *
 * Dry run: nothing is changed; every change is printed as the tc command
 * that would make it. Reads (devices, routes, the root qdisc) still run.
 */
#ifndef SHAPE_TC_H
#define SHAPE_TC_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/shape/conf.h"
#include "tools/shape/state.h"

struct shape_tc;

struct shape_addr {
	int family;			/* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} u;
};

struct shape_tc_dev {
	int ifindex;
	char name[IF_NAMESIZE];
	uint32_t mtu;
	uint32_t link_hdr_bytes;	/* 14 on Ethernet (and veth, loopback), 0 else */
};

/* What the kernel counts for a class. */
struct shape_tc_stats {
	uint64_t bytes;			/* qdisc_pkt_len() of what was sent */
	uint64_t packets;		/* GSO segments count one each */
	uint64_t drops;
	uint64_t overlimits;
	uint64_t backlog_bytes;		/* queued now */
	uint64_t qlen;
};

/* Open a netlink socket; with @dry_run changes are printed to @out. */
int shape_tc_open(struct shape_tc **tc, bool dry_run, FILE *out, char *err, size_t errlen);
void shape_tc_close(struct shape_tc *tc);
bool shape_tc_dry_run(const struct shape_tc *tc);

int shape_tc_dev_lookup(struct shape_tc *tc, const char *name, struct shape_tc_dev *dev,
			char *err, size_t errlen);
/* The device the kernel routes @a through (a route lookup, as `ip route get`). */
int shape_tc_route_dev(struct shape_tc *tc, const struct shape_addr *a,
		       char name[IF_NAMESIZE], char *err, size_t errlen);

/*
 * The device's root qdisc: its kind ("noqueue", "pfifo_fast", "mq",
 * "htb", ...) and handle major (0 for the kernel's default). -ENOENT if
 * the device has none.
 */
int shape_tc_root(struct shape_tc *tc, int ifindex, char kind[SHAPE_STATE_KIND_MAX],
		  uint16_t *major, char *err, size_t errlen);

/*
 * Install the HTB root MAJOR: (exclusive create: the kernel refuses, and
 * so does this, when the root is not the default one).
 */
int shape_tc_install(struct shape_tc *tc, const struct shape_tc_dev *dev, uint16_t major,
		     char *err, size_t errlen);
/*
 * Delete the root qdisc if it is the HTB MAJOR:, with everything under
 * it. 0 when deleted, 1 when there was nothing of ours to delete. In a
 * dry run, @installed_in_dry_run says that the dry run's own (printed)
 * install is what is to be deleted.
 */
int shape_tc_remove(struct shape_tc *tc, int ifindex, const char *devname, uint16_t major,
		    bool installed_in_dry_run, char *err, size_t errlen);

/* The class MAJOR:@minor at @wire_Bps, its FIFO and its filters. */
struct shape_tc_class {
	uint16_t major, minor;
	uint8_t proto;
	uint16_t flow_port;
	const struct shape_addr *addrs;
	unsigned naddr;
	uint64_t queue_bytes;
};

int shape_tc_class_add(struct shape_tc *tc, const struct shape_tc_dev *dev,
		       const struct shape_tc_class *cl, uint64_t wire_Bps, uint32_t burst_bytes,
		       char *err, size_t errlen);
/* Change the class's rate (rate = ceil) and burst. */
int shape_tc_class_rate(struct shape_tc *tc, const struct shape_tc_dev *dev, uint16_t major,
			uint16_t minor, uint64_t wire_Bps, uint32_t burst_bytes, char *err,
			size_t errlen);
/*
 * Counters of classes MAJOR:minors[i] on the device into @st[i]; a class
 * not found is -ENOENT. In a dry run: -EOPNOTSUPP.
 */
int shape_tc_class_stats(struct shape_tc *tc, int ifindex, uint16_t major,
			 const uint16_t *minors, unsigned n, struct shape_tc_stats *st,
			 char *err, size_t errlen);

/*
 * Whether the kernel offers the fq qdisc (for per-socket pacing), from
 * the kernel configuration and modules, without creating anything:
 * 1 yes, 0 no, -1 cannot tell.
 */
int shape_tc_fq_available(void);

/* "10.0.0.2" / "fd00::2". */
const char *shape_tc_addr_str(const struct shape_addr *a, char *buf, size_t size);

#endif
