// SPDX-License-Identifier: GPL-2.0-or-later
/* NIC ring/coalesce parameters (ethtool netlink) and IFLA_STATS64 deltas. See nic.h. */
#include "daemon/collect/nic.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "common/log.h"
#include "common/util.h"

/*
 * Baselines kept for at most this many devices. When full, the entry
 * sampled longest ago is reused, so devices that come and go (containers'
 * veths) cannot grow the table without bound.
 */
#define NIC_MAX_TRACKED 256

/* The kernel's internal "not supported" (524) sometimes leaks from drivers. */
#define NIC_ENOTSUPP_KERNEL 524

struct nic_dev_state {
	char name[RXB_IFNAME_LEN];
	int ifindex;
	uint64_t last_seq;	/* nr->seq at its last successful sample */
	struct nic_counters base;
};

struct nic_reader {
	struct nl_sock *genl;
	struct nl_cb *genl_cb;
	int ethtool_family;	/* -1: no ethtool netlink in this kernel */
	struct nl_sock *rtnl;
	uint64_t seq;
	struct nic_dev_state *devs;
	size_t ndevs;
};

/* ----------------------------------------------------------- pure parts -- */

uint64_t nic_counter_delta(uint64_t prev, uint64_t cur, bool *reset)
{
	if (cur >= prev)
		return cur - prev;
	*reset = true;
	return cur;
}

bool nic_counters_delta(const struct nic_counters *prev, const struct nic_counters *cur,
			struct nic_counters *delta)
{
	bool reset = false;

	delta->rx_packets = nic_counter_delta(prev->rx_packets, cur->rx_packets, &reset);
	delta->rx_missed = nic_counter_delta(prev->rx_missed, cur->rx_missed, &reset);
	delta->rx_fifo = nic_counter_delta(prev->rx_fifo, cur->rx_fifo, &reset);
	delta->rx_dropped = nic_counter_delta(prev->rx_dropped, cur->rx_dropped, &reset);
	delta->rx_over = nic_counter_delta(prev->rx_over, cur->rx_over, &reset);
	return reset;
}

bool nic_err_unsupported(int err)
{
	return err == -EOPNOTSUPP || err == -NIC_ENOTSUPP_KERNEL;
}

enum rxb_param_source nic_choose_param(const struct nic_answer *a, bool have_fb,
				       uint32_t fallback, uint32_t *out)
{
	if (a->err == 0 && a->present) {
		*out = a->value;
		return RXB_SRC_DEVICE;
	}
	if (have_fb) {
		*out = fallback;
		return RXB_SRC_CONFIG;
	}
	*out = 0;
	return RXB_SRC_NONE;
}

static const char *const source_names[] = {
	[RXB_SRC_NONE] = "none",
	[RXB_SRC_DEVICE] = "device",
	[RXB_SRC_CONFIG] = "config",
};

const char *nic_source_name(enum rxb_param_source src)
{
	return RXB_NAME(source_names, src, "none");
}

/* A group is only as good as its weakest member: NONE < CONFIG < DEVICE. */
static enum rxb_param_source source_worst(enum rxb_param_source a, enum rxb_param_source b)
{
	if (a == RXB_SRC_NONE || b == RXB_SRC_NONE)
		return RXB_SRC_NONE;
	if (a == RXB_SRC_CONFIG || b == RXB_SRC_CONFIG)
		return RXB_SRC_CONFIG;
	return RXB_SRC_DEVICE;
}

/* ------------------------------------------------------ libnl plumbing -- */

/* libnl's error codes back to errno, for callers that speak errno. */
static int nlerr_to_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_NODEV:		return -ENODEV;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	case NLE_PERM:		return -EPERM;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_INVAL:		return -EINVAL;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_INTR:		return -EINTR;
	case NLE_BUSY:		return -EBUSY;
	case NLE_RANGE:		return -ERANGE;
	case NLE_MSGSIZE:	return -EMSGSIZE;
	case NLE_AF_NOSUPPORT:	return -EAFNOSUPPORT;
	case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
	case NLE_BAD_SOCK:	return -EBADF;
	default:		return -EIO;
	}
}

/* State of one ethtool request: the attributes we want and how it ended. */
struct genl_req {
	int max_attr;		/* attribute table size - 1 */
	const int *want;	/* attribute types to pick up (u32 each) */
	struct nic_answer *ans;	/* one per @want entry */
	int nwant;
	int err;		/* kernel's -errno from NLMSG_ERROR, or parse error */
	bool done;
};

int nic_parse_ethtool(const void *msg, size_t len, int max_attr, const int *want,
		      struct nic_answer *ans, int nwant)
{
	struct nlmsghdr *h = (struct nlmsghdr *)msg;
	struct nlattr *tb[64];
	int err;

	if (max_attr < 0 || max_attr >= (int)RXB_ARRAY_SIZE(tb))
		return -EOVERFLOW;
	/* libnl reads to nlmsg_len: it must be within what arrived. */
	if (len < NLMSG_HDRLEN || h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len)
		return -EBADMSG;
	err = genlmsg_parse(h, 0, tb, max_attr, NULL);
	if (err < 0)
		return nlerr_to_errno(err);
	for (int i = 0; i < nwant; i++) {
		const struct nlattr *a;

		if (want[i] < 0 || want[i] > max_attr)
			continue;
		a = tb[want[i]];
		/* A malformed attribute is as good as a missing one. */
		if (!a || nla_len(a) < (int)sizeof(uint32_t))
			continue;
		ans[i].present = true;
		ans[i].value = nla_get_u32((struct nlattr *)a);
	}
	return 0;
}

static int genl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct genl_req *req = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	int err = nic_parse_ethtool(h, h->nlmsg_len, req->max_attr, req->want, req->ans,
				    req->nwant);

	if (err < 0) {
		req->err = err;
		return NL_STOP;
	}
	return NL_OK;
}

static int genl_ack_cb(struct nl_msg *msg, void *arg)
{
	struct genl_req *req = arg;

	(void)msg;
	req->done = true;
	return NL_STOP;
}

static int genl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct genl_req *req = arg;

	(void)nla;
	req->err = e->error;	/* already negative */
	req->done = true;
	return NL_STOP;
}

/*
 * Send one ethtool GET for @ifname and collect the @want attributes.
 * Returns 0 or -errno; each answer carries the same err on failure.
 */
static int ethtool_get(struct nic_reader *nr, const char *ifname, uint8_t cmd,
		       int hdr_attr, struct genl_req *req)
{
	struct nl_msg *msg;
	struct nlattr *hdr;
	int err;

	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nr->ethtool_family, 0, 0,
			 cmd, ETHTOOL_GENL_VERSION)) {
		err = -EMSGSIZE;
		goto out;
	}
	hdr = nla_nest_start(msg, hdr_attr);
	if (!hdr || nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, ifname) < 0) {
		err = -EMSGSIZE;
		goto out;
	}
	nla_nest_end(msg, hdr);

	/* The callbacks point at this request only while it runs. */
	nl_cb_set(nr->genl_cb, NL_CB_VALID, NL_CB_CUSTOM, genl_valid_cb, req);
	nl_cb_set(nr->genl_cb, NL_CB_ACK, NL_CB_CUSTOM, genl_ack_cb, req);
	nl_cb_err(nr->genl_cb, NL_CB_CUSTOM, genl_err_cb, req);

	err = nl_send_auto(nr->genl, msg);
	if (err < 0) {
		err = nlerr_to_errno(err);
		goto out;
	}
	/* The reply, then the ACK (or only an error) - read until one of those. */
	while (!req->done) {
		err = nl_recvmsgs(nr->genl, nr->genl_cb);
		if (err < 0 && !req->done) {
			err = nlerr_to_errno(err);
			goto out;
		}
	}
	err = req->err;
out:
	nlmsg_free(msg);
	for (int i = 0; err && i < req->nwant; i++) {
		req->ans[i].err = err;
		req->ans[i].present = false;
	}
	return err;
}

/* Query rings or coalesce; an absent ethtool family answers "not supported". */
static int ethtool_query(struct nic_reader *nr, const char *ifname, uint8_t cmd,
			 int hdr_attr, int max_attr, const int *want,
			 struct nic_answer *ans, int nwant)
{
	struct genl_req req = {
		.max_attr = max_attr, .want = want, .ans = ans, .nwant = nwant,
	};

	memset(ans, 0, sizeof(*ans) * (size_t)nwant);
	if (nr->ethtool_family < 0) {
		for (int i = 0; i < nwant; i++)
			ans[i].err = -EOPNOTSUPP;
		return -EOPNOTSUPP;
	}
	return ethtool_get(nr, ifname, cmd, hdr_attr, &req);
}

/* ------------------------------------------------------------- reader -- */

int nic_reader_init(struct nic_reader **out)
{
	struct nic_reader *nr;
	int err;

	nr = calloc(1, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	nr->ethtool_family = -1;

	nr->rtnl = nl_socket_alloc();
	nr->genl = nl_socket_alloc();
	nr->genl_cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nr->rtnl || !nr->genl || !nr->genl_cb) {
		err = -ENOMEM;
		goto fail;
	}
	err = nl_connect(nr->rtnl, NETLINK_ROUTE);
	if (err < 0) {
		rxb_err("nic: cannot open rtnetlink socket: %s", nl_geterror(err));
		err = nlerr_to_errno(err);
		goto fail;
	}
	err = genl_connect(nr->genl);
	if (err < 0) {
		rxb_err("nic: cannot open generic netlink socket: %s", nl_geterror(err));
		err = nlerr_to_errno(err);
		goto fail;
	}
	err = genl_ctrl_resolve(nr->genl, ETHTOOL_GENL_NAME);
	if (err < 0) {
		/* Kernel without CONFIG_ETHTOOL_NETLINK: every device falls back. */
		rxb_warn("nic: generic netlink family \"%s\" not found (%s): "
			 "ring and coalesce parameters come from the configuration",
			 ETHTOOL_GENL_NAME, nl_geterror(err));
	} else {
		nr->ethtool_family = err;
	}
	*out = nr;
	return 0;
fail:
	nic_reader_finish(nr);
	return err;
}

void nic_reader_finish(struct nic_reader *nr)
{
	if (!nr)
		return;
	nl_cb_put(nr->genl_cb);
	nl_socket_free(nr->genl);
	nl_socket_free(nr->rtnl);
	free(nr->devs);
	free(nr);
}

/* Read the IFLA_STATS64 counters and ifindex of @ifname. 0 or -errno. */
static int read_counters(struct nic_reader *nr, const char *ifname,
			 struct nic_counters *c, int *ifindex)
{
	struct rtnl_link *link = NULL;
	int err;

	err = rtnl_link_get_kernel(nr->rtnl, 0, ifname, &link);
	if (err < 0) {
		if (err != -NLE_NODEV)
			rxb_err("nic: %s: RTM_GETLINK failed: %s", ifname, nl_geterror(err));
		return nlerr_to_errno(err);
	}
	if (!link)
		return -ENODEV;
	/* libnl fills these from IFLA_STATS64 when the kernel sends it (always since 2.6.35). */
	c->rx_packets = rtnl_link_get_stat(link, RTNL_LINK_RX_PACKETS);
	c->rx_missed = rtnl_link_get_stat(link, RTNL_LINK_RX_MISSED_ERR);
	c->rx_fifo = rtnl_link_get_stat(link, RTNL_LINK_RX_FIFO_ERR);
	c->rx_dropped = rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED);
	c->rx_over = rtnl_link_get_stat(link, RTNL_LINK_RX_OVER_ERR);
	*ifindex = rtnl_link_get_ifindex(link);
	rtnl_link_put(link);
	return 0;
}

static struct nic_dev_state *dev_find(struct nic_reader *nr, const char *ifname)
{
	for (size_t i = 0; i < nr->ndevs; i++)
		if (strcmp(nr->devs[i].name, ifname) == 0)
			return &nr->devs[i];
	return NULL;
}

/* A fresh slot for @ifname: grow the table, or reuse its stalest entry. */
static struct nic_dev_state *dev_add(struct nic_reader *nr, const char *ifname)
{
	struct nic_dev_state *d;

	if (nr->ndevs < NIC_MAX_TRACKED) {
		d = realloc(nr->devs, (nr->ndevs + 1) * sizeof(*d));
		if (!d)
			return NULL;
		nr->devs = d;
		d = &nr->devs[nr->ndevs++];
	} else {
		d = &nr->devs[0];
		for (size_t i = 1; i < nr->ndevs; i++)
			if (nr->devs[i].last_seq < d->last_seq)
				d = &nr->devs[i];
	}
	memset(d, 0, sizeof(*d));
	rxb_strlcpy(d->name, ifname, sizeof(d->name));
	return d;
}

static const int ring_attrs[] = { ETHTOOL_A_RINGS_RX, ETHTOOL_A_RINGS_RX_MAX };
static const int coal_attrs[] = { ETHTOOL_A_COALESCE_RX_MAX_FRAMES, ETHTOOL_A_COALESCE_RX_USECS };

/* Append "; <text>" (or just <text> when empty) to the record's note. */
static void note_add(struct rxb_nic_meas *m, const char *text)
{
	size_t len = strlen(m->note);

	snprintf(m->note + len, sizeof(m->note) - len, "%s%s", len ? "; " : "", text);
}

/*
 * Add to @list (", "-separated) what of a group the device did not report:
 * the whole @group when the query was refused, else each attribute left out.
 */
static void list_missing(char *list, size_t size, const char *group,
			 const struct nic_answer *ans, const char *const *names, int n)
{
	size_t len = strlen(list);

	for (int i = 0; i < n && len < size; i++) {
		const char *item = ans[0].err ? group : names[i];

		if (!ans[0].err && ans[i].present)
			continue;
		len += (size_t)snprintf(list + len, size - len, "%s%s", len ? ", " : "", item);
		if (ans[0].err)
			break;
	}
}

/* Rings and coalescing into @m; 0, -ENODEV or -errno for a real failure. */
static int sample_params(struct nic_reader *nr, const char *ifname,
			 const struct nic_fallback *fb, struct rxb_nic_meas *m)
{
	static const char *const ring_names[] = { "rx ring" };
	static const char *const coal_names[] = { "rx-frames", "rx-usecs" };
	struct nic_answer ring[2], coal[2];
	char missing[RXB_NOTE_LEN] = "";
	char text[RXB_NOTE_LEN];
	enum rxb_param_source s1, s2;
	bool have_fb = fb != NULL;
	int err;

	err = ethtool_query(nr, ifname, ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER,
			    ETHTOOL_A_RINGS_MAX, ring_attrs, ring, 2);
	if (err && !nic_err_unsupported(err))
		goto fail_ring;
	err = ethtool_query(nr, ifname, ETHTOOL_MSG_COALESCE_GET, ETHTOOL_A_COALESCE_HEADER,
			    ETHTOOL_A_COALESCE_MAX, coal_attrs, coal, 2);
	if (err && !nic_err_unsupported(err))
		goto fail_coal;

	m->ring_source = nic_choose_param(&ring[0], have_fb, fb ? fb->rx_ring : 0, &m->rx_ring);
	/* The maximum is informative only: no configured stand-in, 0 = unknown. */
	nic_choose_param(&ring[1], false, 0, &m->rx_ring_max);
	if (m->ring_source != RXB_SRC_DEVICE)
		list_missing(missing, sizeof(missing), "rings", ring, ring_names, 1);

	s1 = nic_choose_param(&coal[0], have_fb, fb ? fb->rx_max_frames : 0, &m->rx_max_frames);
	s2 = nic_choose_param(&coal[1], have_fb, fb ? fb->rx_usecs : 0, &m->rx_usecs);
	m->coalesce_source = source_worst(s1, s2);
	if (m->coalesce_source != RXB_SRC_DEVICE)
		list_missing(missing, sizeof(missing), "coalesce", coal, coal_names, 2);
	if (*missing) {
		snprintf(text, sizeof(text), "%s: %s not supported by the device, %s", ifname,
			 missing, have_fb ? "configured values used" : "unknown");
		note_add(m, text);
	}
	return 0;

fail_ring:
	if (err != -ENODEV)
		rxb_log_errno(RXB_LOG_ERR, -err, "nic: %s: ETHTOOL_MSG_RINGS_GET", ifname);
	return err;
fail_coal:
	if (err != -ENODEV)
		rxb_log_errno(RXB_LOG_ERR, -err, "nic: %s: ETHTOOL_MSG_COALESCE_GET", ifname);
	return err;
}

int nic_reader_sample(struct nic_reader *nr, const char *ifname,
		      const struct nic_fallback *fb, struct rxb_nic_meas *out)
{
	struct nic_counters cur, delta;
	struct nic_dev_state *d;
	int ifindex = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!ifname || !*ifname || strlen(ifname) >= RXB_IFNAME_LEN)
		return -ENODEV;
	rxb_strlcpy(out->name, ifname, sizeof(out->name));

	err = sample_params(nr, ifname, fb, out);
	if (err)
		goto fail;
	err = read_counters(nr, ifname, &cur, &ifindex);
	if (err)
		goto fail;
	out->ifindex = ifindex;

	nr->seq++;
	d = dev_find(nr, ifname);
	if (d && d->ifindex != ifindex) {
		/* Same name, new device: its counters started again from zero. */
		note_add(out, "new ifindex (device re-created): new baseline");
		d->ifindex = ifindex;
		d->base = cur;
	} else if (!d) {
		d = dev_add(nr, ifname);
		if (!d) {
			err = -ENOMEM;
			goto fail;
		}
		d->ifindex = ifindex;
		d->base = cur;
	}
	if (nic_counters_delta(&d->base, &cur, &delta)) {
		rxb_notice("nic: %s: receive counters went backwards: treated as reset", ifname);
		note_add(out, "counters reset");
	}
	d->base = cur;
	d->last_seq = nr->seq;

	out->rx_packets = delta.rx_packets;
	out->rx_missed = delta.rx_missed;
	out->rx_fifo = delta.rx_fifo;
	out->rx_dropped = delta.rx_dropped;
	out->rx_over = delta.rx_over;
	return 0;
fail:
	memset(out, 0, sizeof(*out));
	rxb_strlcpy(out->name, ifname, sizeof(out->name));
	return err;
}

int nic_list_devices(struct nic_reader *nr, char (*names)[RXB_IFNAME_LEN], int max)
{
	struct nl_cache *cache = NULL;
	struct nl_object *obj;
	int n = 0, skipped = 0;
	int err;

	if (max < 0)
		return -EINVAL;
	err = rtnl_link_alloc_cache(nr->rtnl, AF_UNSPEC, &cache);
	if (err < 0) {
		rxb_err("nic: listing links (RTM_GETLINK dump) failed: %s", nl_geterror(err));
		return nlerr_to_errno(err);
	}
	for (obj = nl_cache_get_first(cache); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_link *link = (struct rtnl_link *)obj;
		unsigned int flags = rtnl_link_get_flags(link);
		const char *name = rtnl_link_get_name(link);

		if (!(flags & IFF_UP) || (flags & IFF_LOOPBACK) || !name)
			continue;
		if (n >= max) {
			skipped++;
			continue;
		}
		rxb_strlcpy(names[n++], name, RXB_IFNAME_LEN);
	}
	nl_cache_free(cache);
	if (skipped && max > 0)
		rxb_warn("nic: %d more up devices than the %d asked for were left out",
			 skipped, max);
	return n;
}
