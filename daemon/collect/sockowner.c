// SPDX-License-Identifier: GPL-2.0-or-later
/* Who holds a UDP port's socket. See sockowner.h. */
#include "daemon/collect/sockowner.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/collect/procfs.h"

#define MAX_UDP_SOCKS	4096	/* /proc/net/udp{,6} lines read */

int sockowner_parse_fdlink(const char *link, uint64_t *inode)
{
	static const char pre[] = "socket:[";
	char *end;
	unsigned long long v;

	if (strncmp(link, pre, sizeof(pre) - 1))
		return -EINVAL;
	link += sizeof(pre) - 1;
	/* The kernel writes the inode in decimal without leading zeros. */
	if (!isdigit((unsigned char)*link) || *link == '0')
		return -EINVAL;
	errno = 0;
	v = strtoull(link, &end, 10);
	if (errno || end[0] != ']' || end[1] != '\0' || !v)
		return -EINVAL;
	*inode = v;
	return 0;
}

int sockowner_parse_syscall(const char *text, long *nr, uint64_t *arg0)
{
	char *end;
	long n;
	unsigned long long a;

	if (!isdigit((unsigned char)text[0]) || (text[0] == '0' && text[1] != ' '))
		return -EINVAL;	/* "running", "-1 ..." (not in a call) */
	errno = 0;
	n = strtol(text, &end, 10);
	if (errno || *end != ' ' || n < 0)
		return -EINVAL;
	text = end + 1;
	if (strncmp(text, "0x", 2) || !isxdigit((unsigned char)text[2]))
		return -EINVAL;
	a = strtoull(text + 2, &end, 16);
	if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*nr = n;
	*arg0 = a;
	return 0;
}

/* The inodes of @port's UDP sockets (IPv4 and IPv6). Their number or -errno. */
static int port_inodes(uint16_t port, uint64_t *inodes)
{
	struct procfs_udp_sock *s = calloc(MAX_UDP_SOCKS, sizeof(*s));
	int n, k = 0;

	if (!s)
		return -ENOMEM;
	n = procfs_read_net_udp(s, MAX_UDP_SOCKS);
	for (int i = 0; i < n && k < SOCKOWNER_MAX_INODES; i++)
		if (s[i].port == port && s[i].inode)
			inodes[k++] = s[i].inode;
	free(s);
	return n < 0 ? n : k;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Does one of @pid's descriptors refer to one of the @n inodes? Its number, or -1. */
static int fd_of(int procfd, const char *pid, const uint64_t *inodes, int n)
{
	char path[NAME_MAX + 8], link[64];
	struct dirent *de;
	int dfd, found = -1;
	DIR *d;

	snprintf(path, sizeof(path), "%s/fd", pid);
	dfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;	/* gone, or a kernel thread */
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -1;
	}
	while (found < 0 && (de = readdir(d))) {
		ssize_t len;
		uint64_t ino;

		if (!all_digits(de->d_name))
			continue;
		len = readlinkat(dfd, de->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sockowner_parse_fdlink(link, &ino))
			continue;
		for (int i = 0; i < n; i++)
			if (inodes[i] == ino)
				found = atoi(de->d_name);
	}
	closedir(d);
	return found;
}

/* Is thread @tid of @pid in a call on descriptor @fd? */
static bool blocked_on(int32_t pid, int32_t tid, int fd)
{
	char path[96], *text = NULL;
	uint64_t arg0;
	long nr;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%" PRId32 "/task/%" PRId32 "/syscall", pid, tid);
	if (procfs_read_file(path, &text, NULL))
		return false;
	yes = !sockowner_parse_syscall(text, &nr, &arg0) && arg0 == (uint64_t)fd;
	free(text);
	return yes;
}

/* The thread that reads @o->fd (see sockowner.h). */
static void pick_thread(struct sockowner *o)
{
	char path[64];
	struct dirent *de;
	int nthreads = 0;
	int32_t only = 0;
	DIR *d;

	o->tid = o->pid;
	o->how = "the process's main thread";
	snprintf(path, sizeof(path), "/proc/%" PRId32 "/task", o->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int32_t tid;

		if (!all_digits(de->d_name))
			continue;
		tid = (int32_t)atoi(de->d_name);
		nthreads++;
		only = tid;
		if (blocked_on(o->pid, tid, o->fd)) {
			o->tid = tid;
			o->how = "the thread blocked reading the socket";
			closedir(d);
			return;
		}
	}
	closedir(d);
	if (nthreads == 1) {
		o->tid = only;
		o->how = "the process's only thread";
	}
}

/* The thread's CPU: its affinity when that is one CPU, else where it last ran. */
static void pick_cpu(struct sockowner *o)
{
	char path[96], *text = NULL;
	struct procfs_task t;
	cpu_set_t set;

	o->cpu = -1;
	if (sched_getaffinity(o->tid, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1) {
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				o->cpu = c;
				o->pinned = true;
				break;
			}
	}
	snprintf(path, sizeof(path), "/proc/%" PRId32 "/task/%" PRId32 "/stat", o->pid, o->tid);
	if (procfs_read_file(path, &text, NULL))
		return;
	memset(&t, 0, sizeof(t));
	if (!procfs_parse_task_stat(text, &t)) {
		rxb_strlcpy(o->comm, t.comm, sizeof(o->comm));
		if (o->cpu < 0 && t.cpu >= 0)
			o->cpu = t.cpu;
	}
	free(text);
}

/* SO_RCVBUF of the socket, through a duplicate of the owner's descriptor. */
static void read_rcvbuf(struct sockowner *o)
{
	int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)o->pid, 0);
	int sfd, v = 0;
	socklen_t len = sizeof(v);

	if (pidfd < 0)
		return;
	sfd = (int)syscall(SYS_pidfd_getfd, pidfd, o->fd, 0);
	close(pidfd);
	if (sfd < 0)
		return;
	if (getsockopt(sfd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 && v > 0)
		o->rcvbuf_bytes = (uint32_t)v;
	close(sfd);
}

int sockowner_find(uint16_t port, struct sockowner *out)
{
	uint64_t inodes[SOCKOWNER_MAX_INODES];
	int n = port_inodes(port, inodes), procfd, err = -ENOENT;
	struct dirent *de;
	DIR *d;

	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	out->fd = -1;
	if (n <= 0)
		return n < 0 ? n : -ENOENT;
	d = opendir("/proc");
	if (!d)
		return -errno;
	procfd = dirfd(d);
	while ((de = readdir(d))) {
		int fd;

		if (!all_digits(de->d_name))
			continue;
		fd = fd_of(procfd, de->d_name, inodes, n);
		if (fd < 0)
			continue;
		out->pid = (int32_t)atoi(de->d_name);
		out->fd = fd;
		err = 0;
		break;
	}
	closedir(d);
	if (err)
		return err;
	pick_thread(out);
	pick_cpu(out);
	read_rcvbuf(out);
	return 0;
}
