/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who holds a UDP port's socket before any datagram arrives: the receiving
 * process, the thread that reads it, the CPU that thread runs on and the
 * socket's receive buffer. A receiver opens its socket before the data
 * comes, so the model can place the flow on a CPU and size its receive
 * queue from the first HELLO on (docs/daemon.md, "Before traffic, and
 * after it stops").
 *
 * How (all from /proc and two syscalls, as root):
 *  - the socket's inodes: /proc/net/udp and udp6 (procfs.h) of the
 *    daemon's network namespace;
 *  - the process: the first /proc/PID/fd/N whose link is socket:[inode];
 *  - the thread: the one whose /proc/PID/task/TID/syscall shows it blocked
 *    in a call on that descriptor (recvmmsg(fd, ...): the first argument),
 *    else the process's only thread, else its main thread;
 *  - the CPU: the thread's affinity when it is a single CPU (a pinned
 *    receiver), else the CPU it last ran on (/proc/.../stat): a guess for
 *    an unpinned receiver, which the first epoch of traffic replaces;
 *  - the receive buffer: SO_RCVBUF of a duplicate of the descriptor
 *    (pidfd_getfd(2)), closed at once.
 *
 * Limits: a receiver in another network namespace is not found (its
 * sockets are not in this namespace's tables); a socket shared by several
 * processes is attributed to the first found. Walks every process's
 * descriptors: meant for a HELLO, not for every epoch.
 */
#ifndef RXB_DAEMON_SOCKOWNER_H
#define RXB_DAEMON_SOCKOWNER_H

#include <stdbool.h>
#include <stdint.h>

#define SOCKOWNER_MAX_INODES	16	/* sockets of one port looked for */

struct sockowner {
	int32_t pid, tid;	/* the process and the reading thread */
	int fd;			/* the socket's descriptor in that process */
	int cpu;		/* -1: unknown */
	bool pinned;		/* the thread's affinity is that one CPU */
	uint32_t rcvbuf_bytes;	/* SO_RCVBUF, 0 = unknown */
	char comm[16];		/* the thread's name */
	const char *how;	/* how the thread was chosen (static text) */
};

/*
 * The owner of @port's UDP socket into @out: 0, -ENOENT when no socket or
 * no process holding it was found, other -errno when /proc is unreadable.
 */
int sockowner_find(uint16_t port, struct sockowner *out);

/* "socket:[12345]" -> 12345. 0 or -EINVAL. */
int sockowner_parse_fdlink(const char *link, uint64_t *inode);

/*
 * A /proc/PID/task/TID/syscall line ("NR 0xARG0 0xARG1 ... 0xSP 0xPC"):
 * the call number and its first argument. 0, or -EINVAL for "running", a
 * thread not in a call ("-1 ...") or anything else.
 */
int sockowner_parse_syscall(const char *text, long *nr, uint64_t *arg0);

#endif
