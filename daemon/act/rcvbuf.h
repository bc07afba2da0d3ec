/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Setting a receiver's socket buffer from outside the receiver
 * (docs/buffer.md, [buffer] mode = apply): find the process that holds
 * the socket, check it against the administrator's allow-list, take a
 * duplicate of its descriptor (pidfd_open + pidfd_getfd) and set
 * SO_RCVBUFFORCE on that: the same socket, so the receiver's buffer
 * changes under it with no cooperation and no restart.
 *
 * What the kernel requires (checked on 6.18):
 *   - pidfd_getfd(): ptrace attach access to the process
 *     (PTRACE_MODE_ATTACH_REALCREDS), which takes CAP_SYS_PTRACE for
 *     processes of other users, and with Yama's ptrace_scope >= 1 for any
 *     process that is not the daemon's descendant; /proc/PID/exe: ptrace
 *     read access;
 *   - SO_RCVBUFFORCE: CAP_NET_ADMIN in the socket's network namespace
 *     (without it SO_RCVBUF, capped at net.core.rmem_max, is used).
 * The descriptor is checked to still be the socket (inode) after the
 * dup: a descriptor number can be closed and reused between the lookup
 * and pidfd_getfd().
 *
 * Owner lookups walk /proc/PID/fd, the receiver threads the probes know
 * first, then every process; the result is kept per socket by the
 * caller (struct rcvbuf_cache). Listing another user's /proc/PID/fd takes
 * CAP_DAC_READ_SEARCH (the directory is mode 0500; only its links are
 * ptrace-checked), which the daemon does not have: for the receiver
 * threads' processes the descriptors are then tried one by one through
 * pidfd_getfd() (ptrace access only), up to the process's FDSize; the
 * walk over every process finds the sockets of processes it may list.
 */
#ifndef RXB_DAEMON_ACT_RCVBUF_H
#define RXB_DAEMON_ACT_RCVBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RCVBUF_MAX_UIDS		16
#define RCVBUF_MAX_FDS		65536	/* descriptors tried in one process */
#define RCVBUF_MAX_EXES		8
#define RCVBUF_PATH_LEN		256

/* Who may have their buffers set: a uid or an executable matches. */
struct rcvbuf_allow {
	int nuids;
	uint32_t uids[RCVBUF_MAX_UIDS];
	int nexes;
	char exes[RCVBUF_MAX_EXES][RCVBUF_PATH_LEN];
};

struct rcvbuf_owner {
	int32_t pid;		/* thread group holding the descriptor */
	int fd;			/* its descriptor number */
	uint32_t uid;		/* the process's real uid */
	char exe[RCVBUF_PATH_LEN];	/* /proc/PID/exe ("" when unreadable) */
};

/* "socket:[N]" (a /proc/PID/fd link's text, @len bytes): N. 0 or -EINVAL. */
int rcvbuf_parse_socket_link(const char *s, size_t len, uint64_t *inode);

/* The real uid from /proc/PID/status text. 0, -ENOENT or -EINVAL. */
int rcvbuf_parse_status_uid(const char *text, uint32_t *uid);

/*
 * The process and descriptor that hold socket @inode: the thread ids in
 * @hints first, then every process. 0, -ENOENT (nobody: closed, or in
 * processes this one may not look into) or -errno.
 */
int rcvbuf_find_owner(uint64_t inode, const int32_t *hints, int nhints,
		      struct rcvbuf_owner *o);

/* Does @o match the allow-list (an empty list allows nobody)? */
bool rcvbuf_allowed(const struct rcvbuf_allow *a, const struct rcvbuf_owner *o);

/*
 * sk_rcvbuf of socket @inode, held by @o, to @bytes: SO_RCVBUFFORCE when
 * @force, else (or when it is refused) SO_RCVBUF, which the kernel caps
 * at rmem_max. The size read back into *@now_bytes. 0 or -errno: -ESTALE
 * when the descriptor is no longer that socket (look the owner up again).
 */
int rcvbuf_set(const struct rcvbuf_owner *o, uint64_t inode, uint64_t bytes,
	       bool force, uint64_t *now_bytes);

/* The owner of one socket as last looked up, and the allow-list's verdict. */
struct rcvbuf_cache {
	uint64_t inode;
	bool found;
	int err;		/* of the lookup, 0 = found */
	uint64_t looked_ns;	/* when (a failed lookup is not repeated sooner
				 * than RCVBUF_RETRY_NS: it walks /proc) */
	bool hinted;		/* it had receiver threads to try first */
	bool allowed;
	struct rcvbuf_owner owner;
};

#define RCVBUF_RETRY_NS		1000000000ULL

/*
 * Look up (or reuse) @c's owner for @inode and judge it; @now_ns on any
 * monotonic clock. 0 or -errno (a recent failure's, without looking again,
 * unless it had no receiver threads to try and now there are: a receiver
 * is known to the probes only once it has read, often just after its
 * socket first overflowed).
 */
int rcvbuf_lookup(struct rcvbuf_cache *c, uint64_t inode, const int32_t *hints,
		  int nhints, const struct rcvbuf_allow *a, uint64_t now_ns);

#endif
