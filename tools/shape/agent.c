// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape's set-up and tear-down: receivers to addresses and
 * devices, leftovers of earlier instances, the root qdiscs, the records.
 * See agent.h.
 */
#include "tools/shape/agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/shape/util.h"
#include "tools/shape/rate.h"

#define fail shape_util_fail

/* ---------------------------------------------------------- resolving -- */

static bool addr_equal(const struct shape_addr *a, const struct shape_addr *b)
{
	return a->family == b->family &&
	       memcmp(&a->u, &b->u, a->family == AF_INET ? 4 : 16) == 0;
}

static int add_addr(struct shape_rx *rx, const struct shape_addr *a)
{
	for (unsigned i = 0; i < rx->naddr; i++)
		if (addr_equal(&rx->addrs[i], a))
			return 0;
	if (rx->naddr == SHAPE_MAX_ADDRS)
		return 0;	/* a host with more addresses: the first ones */
	rx->addrs[rx->naddr++] = *a;
	return 0;
}

static int parse_literal(const char *s, struct shape_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->u.v4) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, s, &a->u.v6) == 1)
		a->family = AF_INET6;
	else
		return -EINVAL;
	return 0;
}

/* The data addresses: the configured literals, or what the host resolves to. */
static int resolve_addrs(struct shape_rx *rx, char *err, size_t errlen)
{
	const struct shape_receiver_conf *c = rx->conf;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res, *ai;
	struct shape_addr a;
	int e;

	for (unsigned i = 0; i < c->naddr; i++) {
		if (parse_literal(c->addr[i], &a))
			return fail(err, errlen, -EINVAL, "receiver %s: bad address %s", c->name,
				    c->addr[i]);
		add_addr(rx, &a);
	}
	if (rx->naddr)
		return 0;
	e = getaddrinfo(c->host, NULL, &hints, &res);
	if (e)
		return fail(err, errlen, -EHOSTUNREACH, "receiver %s: cannot resolve %s: %s",
			    c->name, c->host, gai_strerror(e));
	for (ai = res; ai; ai = ai->ai_next) {
		memset(&a, 0, sizeof(a));
		a.family = ai->ai_family;
		if (ai->ai_family == AF_INET)
			a.u.v4 = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		else if (ai->ai_family == AF_INET6)
			a.u.v6 = ((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		else
			continue;
		add_addr(rx, &a);
	}
	freeaddrinfo(res);
	if (!rx->naddr)
		return fail(err, errlen, -EHOSTUNREACH, "receiver %s: %s has no IP address",
			    c->name, c->host);
	return 0;
}

static struct shape_dev *find_dev(struct shape_agent *a, const char *name)
{
	for (unsigned i = 0; i < a->ndev; i++)
		if (strcmp(a->dev[i].tc.name, name) == 0)
			return &a->dev[i];
	return NULL;
}

/* The receiver's device: configured, or the one every address routes through. */
static int resolve_dev(struct shape_agent *a, struct shape_rx *rx, char *err, size_t errlen)
{
	char name[IF_NAMESIZE], other[IF_NAMESIZE], as[INET6_ADDRSTRLEN];
	struct shape_dev *d;
	int e;

	if (rx->conf->dev[0]) {
		rxb_strlcpy(name, rx->conf->dev, sizeof(name));
	} else {
		e = shape_tc_route_dev(a->tc, &rx->addrs[0], name, err, errlen);
		if (e)
			return e;
		for (unsigned i = 1; i < rx->naddr; i++) {
			e = shape_tc_route_dev(a->tc, &rx->addrs[i], other, err, errlen);
			if (e)
				return e;
			if (strcmp(name, other) != 0)
				return fail(err, errlen, -EINVAL, "receiver %s: %s routes through "
					    "%s, not %s: give the device (--dev) or the data "
					    "address (--data-addr)", rx->conf->name,
					    shape_tc_addr_str(&rx->addrs[i], as, sizeof(as)), other,
					    name);
		}
	}
	d = find_dev(a, name);
	if (!d) {
		d = &a->dev[a->ndev];
		memset(d, 0, sizeof(*d));
		d->lock_fd = -1;
		e = shape_tc_dev_lookup(a->tc, name, &d->tc, err, errlen);
		if (e)
			return e;
		a->ndev++;
	}
	rx->dev = d;
	d->rx[d->nrx++] = rx;
	rx->minor = (uint16_t)d->nrx;
	return 0;
}

static int init_rx(struct shape_agent *a, struct shape_rx *rx,
		   const struct shape_receiver_conf *rc, uint64_t now, char *err, size_t errlen)
{
	const struct shape_conf *c = a->conf;
	int e, fam;

	memset(rx, 0, sizeof(*rx));
	rx->conf = rc;
	e = resolve_addrs(rx, err, errlen);
	if (!e)
		e = resolve_dev(a, rx, err, errlen);
	if (e)
		return e;
	fam = rx->addrs[0].family;
	rx->hdr_bytes = shape_rate_hdr_bytes(fam, rc->proto, rx->dev->tc.link_hdr_bytes);
	rx->hello_payload_bytes = rc->payload_bytes ? rc->payload_bytes
				  : shape_rate_mtu_payload(rx->dev->tc.mtu, fam, rc->proto);
	rx->payload_bytes = rx->hello_payload_bytes;
	rx->backoff_ms = SHAPE_BACKOFF_MIN_MS;
	rx->next_attempt_ns = now;
	shape_policy_init(&rx->policy, c->hold_ms * RXB_NSEC_PER_MSEC,
			  c->fallback == SHAPE_FALLBACK_RATE ? c->fallback_bps : 0, now);
	rx->mode = SHAPE_MODE_UNSHAPED;
	return 0;
}

int shape_agent_init(struct shape_agent *a, const struct shape_conf *c, bool dry_run,
		     bool json, FILE *out, char *err, size_t errlen)
{
	uint64_t now = rxb_mono_ns();
	int e;

	memset(a, 0, sizeof(*a));
	a->conf = c;
	a->dry_run = dry_run;
	a->json = json;
	a->out = out;
	a->start_ns = now;
	a->fq = shape_tc_fq_available();
	e = shape_state_netns(&a->netns_ino);
	if (e)
		return fail(err, errlen, e, "reading this process's network namespace: %s",
			    strerror(-e));
	e = shape_tc_open(&a->tc, dry_run, json ? stderr : out, err, errlen);
	if (e)
		return e;
	for (unsigned i = 0; i < c->nrx; i++) {
		e = init_rx(a, &a->rx[i], &c->rx[i], now, err, errlen);
		if (e)
			return e;
		a->nrx++;
	}
	a->next_stats_ns = now;
	a->next_status_ns = now + c->status_interval_ms * RXB_NSEC_PER_MSEC;
	return 0;
}

void shape_agent_finish(struct shape_agent *a)
{
	for (unsigned i = 0; i < a->nrx; i++)
		shape_peer_close(&a->rx[i]);
	for (unsigned i = 0; i < a->ndev; i++)
		if (a->dev[i].lock_fd >= 0) {
			close(a->dev[i].lock_fd);
			a->dev[i].lock_fd = -1;
		}
	shape_tc_close(a->tc);
	a->tc = NULL;
}

/* ------------------------------------------------------------ cleanup -- */

/* Remove what an earlier instance left on device @name; @lock_fd keeps the
 * lock for a configured device (else it is released). */
static int cleanup_dev(struct shape_agent *a, const char *name, int *lock_fd, char *err,
		       size_t errlen)
{
	const char *dir = a->conf->state_dir;
	struct shape_state s;
	struct shape_tc_dev d;
	char serr[160];
	uint16_t handles[2] = { a->conf->handle, 0 };
	int e, fd = -1;

	if (!a->dry_run) {
		e = shape_state_lock(dir, a->netns_ino, name, &fd);
		if (e == -EBUSY && !lock_fd)
			return 0;	/* another live instance's device, not ours to touch */
		if (e == -EBUSY) {
			e = shape_state_read(dir, a->netns_ino, name, &s, serr, sizeof(serr));
			return fail(err, errlen, -EBUSY, "device %s is shaped by another "
				    "rxbneck-shape (pid %d)", name, e ? 0 : s.pid);
		}
		if (e)
			return fail(err, errlen, e, "locking %s in %s: %s", name, dir, strerror(-e));
	}
	e = shape_state_read(dir, a->netns_ino, name, &s, serr, sizeof(serr));
	if (e == -EINVAL)
		rxb_warn("%s: state file of %s unreadable (%s): removing only handle %x:", dir,
			 name, serr, a->conf->handle);
	if (!e && s.handle != handles[0])
		handles[1] = s.handle;
	if (shape_tc_dev_lookup(a->tc, name, &d, serr, sizeof(serr)) == 0) {
		for (int i = 0; i < 2 && handles[i]; i++) {
			e = shape_tc_remove(a->tc, d.ifindex, name, handles[i], false, err, errlen);
			if (e < 0)
				goto out;
			if (e == 0)
				rxb_notice("%s: removed the qdisc htb %x: an earlier rxbneck-shape%s "
					   "left (it had found %s)", name, handles[i],
					   s.pid && handles[i] == s.handle ? "" : " (no record)",
					   s.found_kind[0] && handles[i] == s.handle ? s.found_kind
					   : "?");
		}
	}
	e = 0;
	if (!a->dry_run)
		e = shape_state_remove(dir, a->netns_ino, name);
out:
	if (lock_fd && !e)
		*lock_fd = fd;
	else if (fd >= 0)
		close(fd);
	return e;
}

int shape_agent_cleanup(struct shape_agent *a, char *err, size_t errlen)
{
	char devs[SHAPE_MAX_RECEIVERS][IF_NAMESIZE];
	int n, e;

	for (unsigned i = 0; i < a->ndev; i++) {
		e = cleanup_dev(a, a->dev[i].tc.name, &a->dev[i].lock_fd, err, errlen);
		if (e)
			return e;
	}
	n = shape_state_list(a->conf->state_dir, a->netns_ino, devs, SHAPE_MAX_RECEIVERS);
	if (n < 0)
		return fail(err, errlen, n, "listing %s: %s", a->conf->state_dir, strerror(-n));
	for (int i = 0; i < n; i++) {
		if (find_dev(a, devs[i]))
			continue;
		e = cleanup_dev(a, devs[i], NULL, err, errlen);
		if (e)
			return e;
	}
	return 0;
}

/* ------------------------------------------------------- install/remove -- */

static int record(struct shape_agent *a, struct shape_dev *d)
{
	struct shape_state s = {
		.pid = getpid(),
		.netns_ino = a->netns_ino,
		.ifindex = d->tc.ifindex,
		.handle = a->conf->handle,
	};

	if (a->dry_run)
		return 0;
	rxb_strlcpy(s.dev, d->tc.name, sizeof(s.dev));
	rxb_strlcpy(s.found_kind, d->found_kind, sizeof(s.found_kind));
	for (unsigned i = 0; i < d->nrx; i++) {
		struct shape_state_class *c = &s.cls[s.ncls++];

		c->minor = d->rx[i]->minor;
		c->proto = d->rx[i]->conf->proto;
		c->flow_port = d->rx[i]->conf->flow_port;
		rxb_strlcpy(c->receiver, d->rx[i]->conf->name, sizeof(c->receiver));
	}
	return shape_state_write(a->conf->state_dir, &s);
}

static int install_dev(struct shape_agent *a, struct shape_dev *d, char *err, size_t errlen)
{
	uint16_t major;
	int e;

	e = shape_tc_root(a->tc, d->tc.ifindex, d->found_kind, &major, err, errlen);
	if (e == -ENOENT) {
		d->found_kind[0] = '\0';
		major = 0;
	} else if (e) {
		return e;
	}
	if (major != 0)
		return fail(err, errlen, -EEXIST, "device %s has a root qdisc %s %x: that "
			    "rxbneck-shape did not install; it only replaces the kernel's default "
			    "root qdisc (handle 0:). Remove it (tc qdisc del dev %s root) or "
			    "shape another device", d->tc.name, d->found_kind, major, d->tc.name);
	e = shape_tc_install(a->tc, &d->tc, a->conf->handle, err, errlen);
	if (e)
		return e;
	d->installed = true;
	e = record(a, d);
	if (e)
		return fail(err, errlen, e, "writing the state of %s in %s: %s", d->tc.name,
			    a->conf->state_dir, strerror(-e));
	rxb_info("%s: root qdisc htb %x: %s (the kernel's %s before)", d->tc.name,
		 a->conf->handle, a->dry_run ? "would be installed (dry run: nothing changed)"
		 : "installed", d->found_kind[0] ? d->found_kind : "none");
	return 0;
}

int shape_agent_start(struct shape_agent *a, char *err, size_t errlen)
{
	uint64_t now = rxb_mono_ns();
	int e = 0;

	for (unsigned i = 0; !e && i < a->ndev; i++)
		e = install_dev(a, &a->dev[i], err, errlen);
	for (unsigned i = 0; !e && i < a->nrx; i++) {
		shape_peer_apply(a, &a->rx[i], now);
		if (a->fatal)
			e = fail(err, errlen, a->fatal, "%s", a->fatal_msg);
	}
	if (e) {
		shape_agent_restore(a);
		return e;
	}
	for (unsigned i = 0; i < a->nrx; i++)
		shape_peer_connect(a, &a->rx[i], rxb_mono_ns());
	return 0;
}

void shape_agent_restore(struct shape_agent *a)
{
	char err[320], kind[SHAPE_STATE_KIND_MAX];
	uint16_t major;

	for (unsigned i = 0; i < a->ndev; i++) {
		struct shape_dev *d = &a->dev[i];
		int e;

		if (!d->installed)
			continue;
		e = shape_tc_remove(a->tc, d->tc.ifindex, d->tc.name, a->conf->handle, true, err,
				    sizeof(err));
		if (e < 0)
			rxb_err("%s: %s", d->tc.name, err);
		else if (e == 1)
			rxb_warn("%s: the root qdisc is no longer htb %x: (someone replaced it): "
				 "nothing of ours to remove", d->tc.name, a->conf->handle);
		d->installed = false;
		for (unsigned j = 0; j < d->nrx; j++)
			d->rx[j]->installed = false;
		if (a->dry_run)
			continue;
		if (shape_tc_root(a->tc, d->tc.ifindex, kind, &major, err, sizeof(err)) == 0) {
			if (strcmp(kind, d->found_kind) == 0 && major == 0)
				rxb_info("%s: root qdisc back to the kernel's %s", d->tc.name, kind);
			else
				rxb_warn("%s: the root qdisc is now %s %x:, not the %s found at "
					 "start-up", d->tc.name, kind, major, d->found_kind);
		}
		e = shape_state_remove(a->conf->state_dir, a->netns_ino, d->tc.name);
		if (e)
			rxb_warn("%s: removing its state file: %s", d->tc.name, strerror(-e));
	}
}

/* --------------------------------------------------------------- time -- */

void shape_agent_tick(struct shape_agent *a, uint64_t now)
{
	const struct shape_conf *c = a->conf;

	for (unsigned i = 0; i < a->nrx && !a->fatal; i++) {
		struct shape_rx *rx = &a->rx[i];

		if (rx->connected)
			shape_peer_process(a, rx, now);
		else if (now >= rx->next_attempt_ns)
			shape_peer_connect(a, rx, now);
		shape_peer_apply(a, rx, now);
	}
	if (now >= a->next_stats_ns && !a->fatal) {
		shape_peer_stats(a, now);
		a->next_stats_ns = now + c->stats_interval_ms * RXB_NSEC_PER_MSEC;
	}
	if (c->status_interval_ms && now >= a->next_status_ns) {
		shape_status_print(a, now, "status");
		a->next_status_ns = now + c->status_interval_ms * RXB_NSEC_PER_MSEC;
	}
}

uint64_t shape_agent_next_ns(const struct shape_agent *a, uint64_t now)
{
	uint64_t next = a->next_stats_ns;

	if (a->conf->status_interval_ms && a->next_status_ns < next)
		next = a->next_status_ns;
	for (unsigned i = 0; i < a->nrx; i++) {
		const struct shape_rx *rx = &a->rx[i];
		struct shape_target t = shape_policy_target(&rx->policy, now);

		if (t.until_ns < next)
			next = t.until_ns;
		if (rx->connected) {
			int ms = rxbneck_client_timeout_ms(rx->client);

			if (ms >= 0 && now + (uint64_t)ms * RXB_NSEC_PER_MSEC < next)
				next = now + (uint64_t)ms * RXB_NSEC_PER_MSEC;
		} else if (rx->next_attempt_ns < next) {
			next = rx->next_attempt_ns;
		}
	}
	return next;
}
