// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape's traffic control over rtnetlink. See tc.h.
 *
 * libnl-route builds and sends every qdisc, class and filter message and
 * waits for the kernel's acknowledgement; only the route lookup, for
 * which libnl has no call, is a message built here with libnl's message
 * API.
 */
#include "tools/shape/tc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/fifo.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/tc.h>
#include <netlink/socket.h>

#include "common/util.h"
#include "tools/shape/util.h"

/* HTB's quantum for our classes: they never borrow (ceil = rate), so it
 * only sets how many bytes one class sends in a row when several are
 * ready; one GSO packet with its headers. */
#define QUANTUM_BYTES 98304u

struct shape_tc {
	struct nl_sock *sk;
	bool dry_run;
	FILE *out;
};

#define fail shape_util_fail

/* libnl's codes to errno values, for callers that test them. */
static int nl_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_EXIST: return -EEXIST;
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_NODEV: return -ENODEV;
	case NLE_PERM: return -EPERM;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_INVAL: return -EINVAL;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	case NLE_BUSY: return -EBUSY;
	case NLE_NOADDR: return -EADDRNOTAVAIL;
	default: return -EIO;
	}
}

int shape_tc_open(struct shape_tc **out, bool dry_run, FILE *print, char *err, size_t errlen)
{
	struct shape_tc *tc = calloc(1, sizeof(*tc));
	int e;

	if (!tc)
		return fail(err, errlen, -ENOMEM, "out of memory");
	tc->dry_run = dry_run;
	tc->out = print ? print : stdout;
	tc->sk = nl_socket_alloc();
	if (!tc->sk) {
		free(tc);
		return fail(err, errlen, -ENOMEM, "nl_socket_alloc: out of memory");
	}
	e = nl_connect(tc->sk, NETLINK_ROUTE);
	if (e < 0) {
		nl_socket_free(tc->sk);
		free(tc);
		return fail(err, errlen, nl_errno(e), "rtnetlink socket: %s", nl_geterror(e));
	}
	*out = tc;
	return 0;
}

void shape_tc_close(struct shape_tc *tc)
{
	if (!tc)
		return;
	nl_socket_free(tc->sk);
	free(tc);
}

bool shape_tc_dry_run(const struct shape_tc *tc)
{
	return tc->dry_run;
}

const char *shape_tc_addr_str(const struct shape_addr *a, char *buf, size_t size)
{
	if (!inet_ntop(a->family, &a->u, buf, (socklen_t)size))
		rxb_strlcpy(buf, "?", size);
	return buf;
}

static void say(struct shape_tc *tc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct shape_tc *tc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("would run: tc ", tc->out);
	vfprintf(tc->out, fmt, ap);
	fputc('\n', tc->out);
	fflush(tc->out);
	va_end(ap);
}

/* ------------------------------------------------------------ devices -- */

int shape_tc_dev_lookup(struct shape_tc *tc, const char *name, struct shape_tc_dev *dev,
			char *err, size_t errlen)
{
	struct rtnl_link *link = NULL;
	unsigned arptype;
	const char *type;
	int e;

	e = rtnl_link_get_kernel(tc->sk, 0, name, &link);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "device %s: %s", name, nl_geterror(e));
	memset(dev, 0, sizeof(*dev));
	dev->ifindex = rtnl_link_get_ifindex(link);
	rxb_strlcpy(dev->name, name, sizeof(dev->name));
	dev->mtu = rtnl_link_get_mtu(link);
	arptype = rtnl_link_get_arptype(link);
	type = rtnl_link_get_type(link);
	/* What the qdisc sees in front of the IP header: the MAC header that
	 * the stack builds before dev_queue_xmit(). */
	if (arptype == ARPHRD_ETHER || arptype == ARPHRD_LOOPBACK)
		dev->link_hdr_bytes = ETH_HLEN + (type && strcmp(type, "vlan") == 0 ? 4 : 0);
	rtnl_link_put(link);
	return 0;
}

struct route_reply {
	int oif;
};

static int route_valid(struct nl_msg *msg, void *arg)
{
	struct route_reply *r = arg;
	struct nlattr *tb[RTA_MAX + 1];

	if (nlmsg_parse(nlmsg_hdr(msg), sizeof(struct rtmsg), tb, RTA_MAX, NULL) < 0)
		return NL_SKIP;
	if (tb[RTA_OIF])
		r->oif = (int)nla_get_u32(tb[RTA_OIF]);
	return NL_OK;
}

int shape_tc_route_dev(struct shape_tc *tc, const struct shape_addr *a,
		       char name[IF_NAMESIZE], char *err, size_t errlen)
{
	struct rtmsg rtm = { .rtm_family = (unsigned char)a->family };
	struct route_reply r = { 0 };
	struct nl_msg *msg;
	struct nl_cb *cb;
	char as[INET6_ADDRSTRLEN];
	int alen = a->family == AF_INET ? 4 : 16, e;

	shape_tc_addr_str(a, as, sizeof(as));
	rtm.rtm_dst_len = (unsigned char)(alen * 8);
	msg = nlmsg_alloc_simple(RTM_GETROUTE, 0);
	cb = nl_cb_clone(nl_socket_get_cb(tc->sk));
	if (!msg || !cb || nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO) < 0 ||
	    nla_put(msg, RTA_DST, alen, &a->u) < 0) {
		nlmsg_free(msg);
		nl_cb_put(cb);
		return fail(err, errlen, -ENOMEM, "route lookup of %s: out of memory", as);
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, route_valid, &r);
	e = nl_send_auto(tc->sk, msg);
	nlmsg_free(msg);
	if (e >= 0)
		e = nl_recvmsgs(tc->sk, cb);
	/* The reply and the acknowledgement come in two reads. */
	if (e >= 0)
		e = nl_wait_for_ack(tc->sk);
	nl_cb_put(cb);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "no route to %s: %s", as, nl_geterror(e));
	if (r.oif <= 0 || !if_indextoname((unsigned)r.oif, name))
		return fail(err, errlen, -ENETUNREACH, "the route to %s names no device", as);
	return 0;
}

/* --------------------------------------------------------- root qdisc -- */

int shape_tc_root(struct shape_tc *tc, int ifindex, char kind[SHAPE_STATE_KIND_MAX],
		  uint16_t *major, char *err, size_t errlen)
{
	struct nl_cache *cache = NULL;
	struct rtnl_qdisc *q;
	const char *k;
	int e;

	e = rtnl_qdisc_alloc_cache(tc->sk, &cache);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "listing qdiscs: %s", nl_geterror(e));
	q = rtnl_qdisc_get_by_parent(cache, ifindex, TC_H_ROOT);
	if (!q) {
		nl_cache_free(cache);
		return fail(err, errlen, -ENOENT, "device %d has no root qdisc", ifindex);
	}
	k = rtnl_tc_get_kind(TC_CAST(q));
	rxb_strlcpy(kind, k ? k : "?", SHAPE_STATE_KIND_MAX);
	*major = (uint16_t)(TC_H_MAJ(rtnl_tc_get_handle(TC_CAST(q))) >> 16);
	rtnl_qdisc_put(q);
	nl_cache_free(cache);
	return 0;
}

int shape_tc_install(struct shape_tc *tc, const struct shape_tc_dev *dev, uint16_t major,
		     char *err, size_t errlen)
{
	struct rtnl_qdisc *q;
	int e;

	if (tc->dry_run) {
		say(tc, "qdisc add dev %s root handle %x: htb default 0", dev->name, major);
		return 0;
	}
	q = rtnl_qdisc_alloc();
	if (!q)
		return fail(err, errlen, -ENOMEM, "out of memory");
	rtnl_tc_set_ifindex(TC_CAST(q), dev->ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
	rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(major, 0));
	e = rtnl_tc_set_kind(TC_CAST(q), "htb");
	if (!e)
		e = rtnl_htb_set_defcls(q, 0);
	if (!e)
		e = rtnl_qdisc_add(tc->sk, q, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_qdisc_put(q);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "dev %s: adding root qdisc htb %x: : %s",
			    dev->name, major, nl_geterror(e));
	return 0;
}

int shape_tc_remove(struct shape_tc *tc, int ifindex, const char *devname, uint16_t major,
		    bool installed_in_dry_run, char *err, size_t errlen)
{
	char kind[SHAPE_STATE_KIND_MAX];
	struct rtnl_qdisc *q;
	uint16_t root;
	int e;

	if (tc->dry_run && installed_in_dry_run) {
		say(tc, "qdisc del dev %s root handle %x:", devname, major);
		return 0;
	}
	e = shape_tc_root(tc, ifindex, kind, &root, err, errlen);
	if (e == -ENOENT)
		return 1;
	if (e)
		return e;
	if (root != major || strcmp(kind, "htb") != 0)
		return 1;
	if (tc->dry_run) {
		say(tc, "qdisc del dev %s root handle %x:", devname, major);
		return 0;
	}
	q = rtnl_qdisc_alloc();
	if (!q)
		return fail(err, errlen, -ENOMEM, "out of memory");
	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
	/* With the handle the kernel deletes only a root that still has it. */
	rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(major, 0));
	e = rtnl_qdisc_delete(tc->sk, q);
	rtnl_qdisc_put(q);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "dev %s: deleting root qdisc %x: : %s",
			    devname, major, nl_geterror(e));
	return 0;
}

/* ------------------------------------------------------------ classes -- */

static int htb_params(struct rtnl_class *c, const struct shape_tc_dev *dev, uint64_t wire_Bps,
		      uint32_t burst)
{
	int e;

	rtnl_tc_set_mtu(TC_CAST(c), dev->mtu + dev->link_hdr_bytes);
	e = rtnl_htb_set_rate64(c, wire_Bps);
	if (!e)
		e = rtnl_htb_set_ceil64(c, wire_Bps);
	if (!e)
		e = rtnl_htb_set_rbuffer(c, burst);
	if (!e)
		e = rtnl_htb_set_cbuffer(c, burst);
	if (!e)
		e = rtnl_htb_set_quantum(c, QUANTUM_BYTES);
	return e;
}

static int class_msg(struct shape_tc *tc, const struct shape_tc_dev *dev, uint16_t major,
		     uint16_t minor, uint64_t wire_Bps, uint32_t burst, int flags)
{
	struct rtnl_class *c = rtnl_class_alloc();
	int e;

	if (!c)
		return -NLE_NOMEM;
	rtnl_tc_set_ifindex(TC_CAST(c), dev->ifindex);
	rtnl_tc_set_parent(TC_CAST(c), TC_HANDLE(major, 0));
	rtnl_tc_set_handle(TC_CAST(c), TC_HANDLE(major, minor));
	e = rtnl_tc_set_kind(TC_CAST(c), "htb");
	if (!e)
		e = htb_params(c, dev, wire_Bps, burst);
	if (!e)
		e = rtnl_class_add(tc->sk, c, flags);
	rtnl_class_put(c);
	return e;
}

static int fifo_add(struct shape_tc *tc, const struct shape_tc_dev *dev, uint32_t classid,
		    uint64_t limit)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int e;

	if (!q)
		return -NLE_NOMEM;
	rtnl_tc_set_ifindex(TC_CAST(q), dev->ifindex);
	rtnl_tc_set_parent(TC_CAST(q), classid);
	e = rtnl_tc_set_kind(TC_CAST(q), "bfifo");
	if (!e)
		e = rtnl_qdisc_fifo_set_limit(q, (int)limit);
	if (!e)
		e = rtnl_qdisc_add(tc->sk, q, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_qdisc_put(q);
	return e;
}

/* The u32 keys of one (address, protocol, port): value, mask, offset. */
struct u32_key {
	uint32_t val, mask;
	int off;
};

static unsigned u32_keys(const struct shape_addr *a, uint8_t proto, uint16_t port,
			 struct u32_key *k)
{
	unsigned n = 0;

	if (a->family == AF_INET) {
		k[n++] = (struct u32_key){ 0x05000000, 0x0f000000, 0 };	/* IHL 5 */
		k[n++] = (struct u32_key){ 0, 0x00001fff, 4 };		/* fragment offset 0 */
		k[n++] = (struct u32_key){ (uint32_t)proto << 16, 0x00ff0000, 8 };
		k[n++] = (struct u32_key){ ntohl(a->u.v4.s_addr), 0xffffffff, 16 };
		k[n++] = (struct u32_key){ port, 0x0000ffff, 20 };	/* destination port */
	} else {
		k[n++] = (struct u32_key){ (uint32_t)proto << 8, 0x0000ff00, 4 };	/* next header */
		for (int w = 0; w < 4; w++) {
			uint32_t word;

			memcpy(&word, &a->u.v6.s6_addr[4 * w], 4);
			k[n++] = (struct u32_key){ ntohl(word), 0xffffffff, 24 + 4 * w };
		}
		k[n++] = (struct u32_key){ port, 0x0000ffff, 40 };
	}
	return n;
}

static int filter_add(struct shape_tc *tc, const struct shape_tc_dev *dev,
		      const struct shape_tc_class *cl, const struct shape_addr *a)
{
	struct u32_key k[8];
	unsigned nk = u32_keys(a, cl->proto, cl->flow_port, k);
	uint16_t prio = shape_state_prio(cl->minor, a->family);
	struct rtnl_cls *f;
	int e;

	if (tc->dry_run) {
		char line[512];
		size_t len = 0;

		for (unsigned i = 0; i < nk && len < sizeof(line); i++)
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" match u32 0x%08x 0x%08x at %d", k[i].val,
						k[i].mask, k[i].off);
		say(tc, "filter add dev %s parent %x: prio %u protocol %s u32%s flowid %x:%x",
		    dev->name, cl->major, prio, a->family == AF_INET ? "ip" : "ipv6", line,
		    cl->major, cl->minor);
		return 0;
	}
	f = rtnl_cls_alloc();
	if (!f)
		return -NLE_NOMEM;
	rtnl_tc_set_ifindex(TC_CAST(f), dev->ifindex);
	rtnl_tc_set_parent(TC_CAST(f), TC_HANDLE(cl->major, 0));
	e = rtnl_tc_set_kind(TC_CAST(f), "u32");
	rtnl_cls_set_prio(f, prio);
	rtnl_cls_set_protocol(f, a->family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
	if (!e)
		e = rtnl_u32_set_classid(f, TC_HANDLE(cl->major, cl->minor));
	if (!e)
		e = rtnl_u32_set_cls_terminal(f);
	for (unsigned i = 0; !e && i < nk; i++)
		e = rtnl_u32_add_key_uint32(f, k[i].val, k[i].mask, k[i].off, 0);
	if (!e)
		e = rtnl_cls_add(tc->sk, f, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_cls_put(f);
	return e;
}

int shape_tc_class_add(struct shape_tc *tc, const struct shape_tc_dev *dev,
		       const struct shape_tc_class *cl, uint64_t wire_Bps, uint32_t burst_bytes,
		       char *err, size_t errlen)
{
	uint32_t classid = TC_HANDLE(cl->major, cl->minor);
	char as[INET6_ADDRSTRLEN];
	int e;

	if (tc->dry_run) {
		say(tc, "class add dev %s parent %x: classid %x:%x htb rate %llubit ceil %llubit "
		    "burst %ub cburst %ub quantum %u", dev->name, cl->major, cl->major, cl->minor,
		    (unsigned long long)wire_Bps * 8, (unsigned long long)wire_Bps * 8,
		    burst_bytes, burst_bytes, QUANTUM_BYTES);
		say(tc, "qdisc add dev %s parent %x:%x bfifo limit %llu", dev->name, cl->major,
		    cl->minor, (unsigned long long)cl->queue_bytes);
	} else {
		e = class_msg(tc, dev, cl->major, cl->minor, wire_Bps, burst_bytes,
			      NLM_F_CREATE | NLM_F_EXCL);
		if (e < 0)
			return fail(err, errlen, nl_errno(e), "dev %s: adding class %x:%x: %s",
				    dev->name, cl->major, cl->minor, nl_geterror(e));
		e = fifo_add(tc, dev, classid, cl->queue_bytes);
		if (e < 0)
			return fail(err, errlen, nl_errno(e), "dev %s: adding the FIFO of class "
				    "%x:%x: %s", dev->name, cl->major, cl->minor, nl_geterror(e));
	}
	for (unsigned i = 0; i < cl->naddr; i++) {
		e = filter_add(tc, dev, cl, &cl->addrs[i]);
		if (e < 0)
			return fail(err, errlen, nl_errno(e), "dev %s: adding the filter of class "
				    "%x:%x for %s: %s", dev->name, cl->major, cl->minor,
				    shape_tc_addr_str(&cl->addrs[i], as, sizeof(as)),
				    nl_geterror(e));
	}
	return 0;
}

int shape_tc_class_rate(struct shape_tc *tc, const struct shape_tc_dev *dev, uint16_t major,
			uint16_t minor, uint64_t wire_Bps, uint32_t burst_bytes, char *err,
			size_t errlen)
{
	int e;

	if (tc->dry_run) {
		say(tc, "class change dev %s parent %x: classid %x:%x htb rate %llubit ceil %llubit"
		    " burst %ub cburst %ub quantum %u", dev->name, major, major, minor,
		    (unsigned long long)wire_Bps * 8, (unsigned long long)wire_Bps * 8,
		    burst_bytes, burst_bytes, QUANTUM_BYTES);
		return 0;
	}
	e = class_msg(tc, dev, major, minor, wire_Bps, burst_bytes, 0);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "dev %s: changing class %x:%x: %s",
			    dev->name, major, minor, nl_geterror(e));
	return 0;
}

int shape_tc_class_stats(struct shape_tc *tc, int ifindex, uint16_t major,
			 const uint16_t *minors, unsigned n, struct shape_tc_stats *st,
			 char *err, size_t errlen)
{
	struct nl_cache *cache = NULL;
	int e, ret = 0;

	if (tc->dry_run)
		return -EOPNOTSUPP;
	e = rtnl_class_alloc_cache(tc->sk, ifindex, &cache);
	if (e < 0)
		return fail(err, errlen, nl_errno(e), "listing the classes of device %d: %s",
			    ifindex, nl_geterror(e));
	for (unsigned i = 0; i < n; i++) {
		struct rtnl_class *c = rtnl_class_get(cache, ifindex, TC_HANDLE(major, minors[i]));
		struct rtnl_tc *t = TC_CAST(c);

		if (!c) {
			ret = fail(err, errlen, -ENOENT, "class %x:%x is gone", major, minors[i]);
			continue;
		}
		st[i] = (struct shape_tc_stats){
			.bytes = rtnl_tc_get_stat(t, RTNL_TC_BYTES),
			.packets = rtnl_tc_get_stat(t, RTNL_TC_PACKETS),
			.drops = rtnl_tc_get_stat(t, RTNL_TC_DROPS),
			.overlimits = rtnl_tc_get_stat(t, RTNL_TC_OVERLIMITS),
			.backlog_bytes = rtnl_tc_get_stat(t, RTNL_TC_BACKLOG),
			.qlen = rtnl_tc_get_stat(t, RTNL_TC_QLEN),
		};
		rtnl_class_put(c);
	}
	nl_cache_free(cache);
	return ret;
}

/* ----------------------------------------------------------------- fq -- */

/* 'y', 'm' or 0 for CONFIG_NET_SCH_FQ in a kernel configuration (plain
 * or gzip: zlib reads both); -1 when the file cannot be read. */
static int config_fq(const char *path)
{
	char line[256];
	gzFile f = gzopen(path, "rb");
	int v = 0;

	if (!f)
		return -1;
	while (gzgets(f, line, sizeof(line)))
		if (strncmp(line, "CONFIG_NET_SCH_FQ=", 18) == 0)
			v = line[18] == 'y' || line[18] == 'm' ? line[18] : 0;
	gzclose(f);
	return v;
}

int shape_tc_fq_available(void)
{
	static const char *const ko[] = { "sch_fq.ko", "sch_fq.ko.xz", "sch_fq.ko.zst",
					  "sch_fq.ko.gz" };
	struct utsname u;
	char path[512];
	int v;

	if (access("/sys/module/sch_fq", F_OK) == 0)
		return 1;			/* loaded */
	if (uname(&u) < 0)
		return -1;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	v = config_fq(path);
	if (v < 0)
		v = config_fq("/proc/config.gz");
	if (v < 0)
		return -1;
	if (v != 'm')
		return v == 'y';
	for (size_t i = 0; i < RXB_ARRAY_SIZE(ko); i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/kernel/net/sched/%s", u.release,
			 ko[i]);
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
}
