/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rxbneck-shape created, so that it (or its next start, or
 * `rxbneck-shape --cleanup`) can remove exactly that.
 *
 * Handles. On each device it shapes, rxbneck-shape owns one thing: the
 * root qdisc, an HTB with handle MAJOR: (default 7862:, "xb"), which it
 * installs only in place of the kernel's default root qdisc (handle 0:).
 * Everything else it makes lives under that qdisc and goes with it:
 * class MAJOR:m for the m-th receiver on the device (m = 1, 2, ...), a
 * byte FIFO under each class (handle chosen by the kernel), and u32
 * filters on MAJOR: at priority 2m (IPv4) and 2m + 1 (IPv6). Deleting
 * the root qdisc by its handle therefore removes all of it and nothing
 * else, and the kernel puts its default root qdisc back.
 *
 * Records. Per (network namespace, device) a state file
 * DIR/net-INO-DEV.state (INO: the namespace's inode number, so that
 * instances in different namespaces with equally named devices stay
 * apart) says what the running instance created, and a lock file
 * DIR/net-INO-DEV.lock is held (flock) as long as it runs. A state file
 * whose lock is free was left by an instance that died without cleaning
 * up: the next start removes its qdisc (if the device's root still has
 * that handle and is an HTB) and the file.
 *
 * The state file is text, one "key value" per line; the parser takes it
 * as untrusted input (bounded, strict).
 */
#ifndef SHAPE_STATE_H
#define SHAPE_STATE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tools/shape/conf.h"

#define SHAPE_STATE_MAX_FILE	16384
#define SHAPE_STATE_KIND_MAX	16	/* qdisc kind, terminator included */

struct shape_state_class {
	uint16_t minor;
	uint8_t proto;
	uint16_t flow_port;
	char receiver[SHAPE_NAME_MAX];
};

struct shape_state {
	int pid;
	uint64_t netns_ino;
	int ifindex;
	char dev[IF_NAMESIZE];
	uint16_t handle;
	char found_kind[SHAPE_STATE_KIND_MAX];	/* root qdisc kind before us */
	struct shape_state_class cls[SHAPE_MAX_RECEIVERS];
	unsigned ncls;
};

/* Class id MAJOR:MINOR as the kernel writes it (major in the high half). */
static inline uint32_t shape_state_classid(uint16_t handle, uint16_t minor)
{
	return (uint32_t)handle << 16 | minor;
}

/* u32 filter priority of class @minor's filter for @family. */
static inline uint16_t shape_state_prio(uint16_t minor, int family)
{
	return (uint16_t)(2 * minor + (family == AF_INET6));
}

/* Text of @s into @buf; its length, or -ENOSPC. */
int shape_state_format(const struct shape_state *s, char *buf, size_t size);
/* Parse a state file; 0, or -EINVAL with a message naming the line. */
int shape_state_parse(const char *text, size_t len, struct shape_state *s, char *err,
		      size_t errlen);

/* DIR/net-INO-DEV.EXT; -ENAMETOOLONG if it does not fit. */
int shape_state_path(char *buf, size_t size, const char *dir, uint64_t netns_ino,
		     const char *dev, const char *ext);

/* The inode number of this process's network namespace. */
int shape_state_netns(uint64_t *ino);

/*
 * Take the lock of (@netns_ino, @dev): *fd holds it until closed. -EBUSY
 * when another process holds it (its state file then names it).
 */
int shape_state_lock(const char *dir, uint64_t netns_ino, const char *dev, int *fd);

/* Write atomically (a temporary file renamed over the old one). */
int shape_state_write(const char *dir, const struct shape_state *s);
/*
 * -ENOENT when there is none; -EINVAL (and @err) when it does not parse or is
 * not a regular file (never waits on a FIFO).
 */
int shape_state_read(const char *dir, uint64_t netns_ino, const char *dev,
		     struct shape_state *s, char *err, size_t errlen);
int shape_state_remove(const char *dir, uint64_t netns_ino, const char *dev);

/*
 * The devices with a state file of namespace @netns_ino in @dir: up to
 * @max names into @devs; returns how many, or a negative errno
 * (a missing directory is 0).
 */
int shape_state_list(const char *dir, uint64_t netns_ino, char (*devs)[IF_NAMESIZE],
		     unsigned max);

#endif
