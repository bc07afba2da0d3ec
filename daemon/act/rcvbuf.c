// SPDX-License-Identifier: GPL-2.0-or-later
/* Setting a receiver's socket buffer through pidfd_getfd(). See rcvbuf.h. */
#include "daemon/act/rcvbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/collect/procfs.h"

#ifndef SO_RCVBUFFORCE
#define SO_RCVBUFFORCE	33
#endif

int rcvbuf_parse_socket_link(const char *s, size_t len, uint64_t *inode)
{
	static const char pre[] = "socket:[";
	size_t i = sizeof(pre) - 1;
	uint64_t v = 0;

	if (len < i + 2 || memcmp(s, pre, i) || s[len - 1] != ']')
		return -EINVAL;
	for (; i < len - 1; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == sizeof(pre) - 1)
		return -EINVAL;
	*inode = v;
	return 0;
}

int rcvbuf_parse_status_uid(const char *text, uint32_t *uid)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		uint64_t v = 0;
		const char *q;

		if (strncmp(p, "Uid:", 4))
			continue;
		q = p + 4;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q < '0' || *q > '9')
			return -EINVAL;
		for (; *q >= '0' && *q <= '9'; q++) {
			v = v * 10 + (uint64_t)(*q - '0');
			if (v > UINT32_MAX)
				return -EINVAL;
		}
		*uid = (uint32_t)v;
		return 0;
	}
	return -ENOENT;
}

/* The size of @pid's descriptor table (/proc/PID/status FDSize), 0 if unknown. */
static int fd_table_size(int32_t pid)
{
	char path[64], *text = NULL;
	long n = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (procfs_read_file(path, &text, NULL) == 0) {
		const char *p = strstr(text, "\nFDSize:");

		if (p)
			n = strtol(p + 8, NULL, 10);
	}
	free(text);
	return n > 0 && n <= RCVBUF_MAX_FDS ? (int)n : n > 0 ? RCVBUF_MAX_FDS : 0;
}

/*
 * Without CAP_DAC_READ_SEARCH another user's /proc/PID/fd cannot be
 * listed (its mode is 0500; only the links are ptrace-checked), but
 * pidfd_getfd() needs ptrace access alone: try each descriptor number
 * of the table, keeping none (a duplicate closed at once changes nothing
 * for the process: it holds the file itself).
 */
static int probe_fds(int32_t pid, uint64_t inode, int *fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), n, err = -ENOENT;

	if (pidfd < 0)
		return -errno;
	n = fd_table_size(pid);
	for (int i = 0; i < n && err == -ENOENT; i++) {
		int d = (int)syscall(SYS_pidfd_getfd, pidfd, i, 0);
		struct stat st;

		if (d < 0) {
			if (errno == EBADF)
				continue;
			err = -errno;	/* EPERM: no ptrace access */
			break;
		}
		if (fstat(d, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == inode) {
			*fd = i;
			err = 0;
		}
		close(d);
	}
	close(pidfd);
	return err;
}

/* The descriptor of @pid that is socket @inode: 0 with *@fd, or -ENOENT. */
static int scan_fds(int32_t pid, uint64_t inode, int *fd)
{
	char path[64], link[64];
	struct dirent *de;
	DIR *d;
	int dfd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		uint64_t ino;
		ssize_t n;
		char *end;
		long v;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		n = readlinkat(dfd, de->d_name, link, sizeof(link));
		if (n <= 0 || (size_t)n >= sizeof(link) ||
		    rcvbuf_parse_socket_link(link, (size_t)n, &ino) || ino != inode)
			continue;
		v = strtol(de->d_name, &end, 10);
		if (*end || v < 0 || v > INT_MAX)
			continue;
		*fd = (int)v;
		err = 0;
		break;
	}
	closedir(d);
	return err;
}

/* The thread group of @tid (a process's own id is its tgid). */
static int32_t tgid_of(int32_t tid)
{
	char path[64], *text = NULL;
	int32_t tgid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (procfs_read_file(path, &text, NULL) == 0) {
		const char *p = strstr(text, "\nTgid:");

		if (p)
			tgid = (int32_t)strtol(p + 6, NULL, 10);
	}
	free(text);
	return tgid > 0 ? tgid : tid;
}

static void fill_owner(struct rcvbuf_owner *o, int32_t pid, int fd)
{
	char path[64], exe[sizeof(o->exe) + 1], *text = NULL;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	o->pid = pid;
	o->fd = fd;
	o->uid = UINT32_MAX;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (procfs_read_file(path, &text, NULL) == 0)
		rcvbuf_parse_status_uid(text, &o->uid);
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	/*
	 * A byte more than o->exe holds: a longer path is left unknown, not cut
	 * to one that might match an allowed shorter one (rcvbuf_allowed()).
	 */
	n = readlink(path, exe, sizeof(exe));
	if (n > 0 && (size_t)n < sizeof(o->exe)) {
		memcpy(o->exe, exe, (size_t)n);
		o->exe[n] = '\0';
	}
}

int rcvbuf_find_owner(uint64_t inode, const int32_t *hints, int nhints,
		      struct rcvbuf_owner *o)
{
	struct dirent *de;
	DIR *d;
	int fd, err = -ENOENT;

	for (int i = 0; i < nhints; i++) {
		int32_t pid;

		if (hints[i] <= 0)
			continue;
		pid = tgid_of(hints[i]);
		if (scan_fds(pid, inode, &fd) == 0 || probe_fds(pid, inode, &fd) == 0) {
			fill_owner(o, pid, fd);
			return 0;
		}
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX)
			continue;
		if (scan_fds((int32_t)pid, inode, &fd) == 0) {
			fill_owner(o, (int32_t)pid, fd);
			err = 0;
			break;
		}
	}
	closedir(d);
	return err;
}

bool rcvbuf_allowed(const struct rcvbuf_allow *a, const struct rcvbuf_owner *o)
{
	for (int i = 0; i < a->nuids && i < RCVBUF_MAX_UIDS; i++)
		if (a->uids[i] == o->uid)
			return true;
	for (int i = 0; i < a->nexes && i < RCVBUF_MAX_EXES; i++)
		if (o->exe[0] && !strcmp(a->exes[i], o->exe))
			return true;
	return false;
}

/* A duplicate of @o's descriptor, checked to be socket @inode. */
static int dup_socket(const struct rcvbuf_owner *o, uint64_t inode)
{
	struct stat st;
	int pidfd, fd, err;

	pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
	if (pidfd < 0)
		return -errno;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, o->fd, 0);
	err = fd < 0 ? -errno : 0;
	close(pidfd);
	if (err)
		return err == -EBADF ? -ESTALE : err;
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) || st.st_ino != inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int rcvbuf_set(const struct rcvbuf_owner *o, uint64_t inode, uint64_t bytes,
	       bool force, uint64_t *now_bytes)
{
	/* the kernel stores twice the value (solver/rrda.h) */
	uint64_t half = (bytes + 1) / 2;
	int val = half > INT_MAX / 2 ? INT_MAX / 2 : (int)half, got = 0;
	socklen_t len = sizeof(got);
	int fd = dup_socket(o, inode), err = 0;

	*now_bytes = 0;
	if (fd < 0)
		return fd;
	if (!force || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &val, sizeof(val))) {
		if (force && errno != EPERM)
			err = -errno;
		else if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)))
			err = -errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0 && got > 0)
		*now_bytes = (uint64_t)got;
	else if (!err)
		err = -errno;
	close(fd);
	return err;
}

int rcvbuf_lookup(struct rcvbuf_cache *c, uint64_t inode, const int32_t *hints,
		  int nhints, const struct rcvbuf_allow *a, uint64_t now_ns)
{
	if (c->inode == inode && c->found) {
		c->allowed = rcvbuf_allowed(a, &c->owner);
		return 0;
	}
	if (c->inode == inode && c->err && now_ns - c->looked_ns < RCVBUF_RETRY_NS &&
	    (c->hinted || nhints <= 0))
		return c->err;
	memset(c, 0, sizeof(*c));
	c->inode = inode;
	c->looked_ns = now_ns;
	c->hinted = nhints > 0;
	c->err = rcvbuf_find_owner(inode, hints, nhints, &c->owner);
	c->found = !c->err;
	c->allowed = c->found && rcvbuf_allowed(a, &c->owner);
	return c->err;
}
