/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctlsrv: rxbneckd's command server for rxbneckctl on a unix stream
 * socket (docs/CONTROL.md).
 *
 * One request per connection: the client sends one line
 *	VERB [ARG ...] "\n"		(at most CTLSRV_MAX_REQUEST bytes)
 * the daemon answers
 *	"OK\n" BODY			or
 *	"ERR " CODE " " MESSAGE "\n" [BODY]
 * and closes. The body is one JSON document; an error on a request that
 * parsed also has the body {"error": {"code": ..., "message": ...}}.
 *
 * Event-loop agnostic like sendsrv: the daemon watches the fds it is
 * given through ops->fd_add/fd_mod/fd_del and calls ctlsrv_handle() when
 * one is ready and ctlsrv_tick() at ctlsrv_next_deadline_ns(). Nothing
 * blocks: reads and writes are non-blocking, a client gets
 * CTLSRV_TIMEOUT_NS for the whole exchange, at most CTLSRV_MAX_CLIENTS are
 * served at a time (a new client beyond that takes the slot of the oldest
 * one still sending its request after CTLSRV_EVICT_NS, or gets ERR BUSY).
 *
 * Memory: client slots are allocated at init; a response is allocated when
 * rendered and at most CTLSRV_MAX_RESPONSE bytes, so the bound is
 * ctlsrv_memory_bound().
 */
#ifndef RXB_DAEMON_CTLSRV_H
#define RXB_DAEMON_CTLSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/strbuf.h"

#define CTLSRV_MAX_CLIENTS	64
#define CTLSRV_MAX_REQUEST	512		/* bytes, newline included */
#define CTLSRV_MAX_ARGS		8		/* words after the verb */
#define CTLSRV_MAX_RESPONSE	(1024 * 1024)	/* bytes */
#define CTLSRV_TIMEOUT_NS	5000000000ULL	/* whole exchange */
#define CTLSRV_EVICT_NS		100000000ULL	/* a silent client may be evicted */
#define CTLSRV_ACCEPT_BATCH	16
#define CTLSRV_BACKLOG		128

/* Error codes of the "ERR" line (docs/CONTROL.md). */
enum ctl_err {
	CTL_OK = 0,
	CTL_ERR_BAD_REQUEST,	/* not a request line */
	CTL_ERR_UNKNOWN,	/* unknown verb */
	CTL_ERR_BAD_ARGUMENT,	/* the verb does not take this argument */
	CTL_ERR_TOO_LONG,	/* request over CTLSRV_MAX_REQUEST */
	CTL_ERR_TIMEOUT,	/* no complete request in time */
	CTL_ERR_BUSY,		/* too many clients */
	CTL_ERR_FAILED,		/* the command ran and failed (e.g. reload) */
	CTL_ERR_INTERNAL,	/* out of memory, response too large */
};

const char *ctlsrv_err_name(enum ctl_err e);

/* A growable, bounded output buffer. Errors latch (failed). */
struct ctl_request {
	const char *verb;
	int argc;
	const char *argv[CTLSRV_MAX_ARGS];
	bool json;		/* "json" among the arguments (what clients of
				 * control protocol 1 send) */
	pid_t pid;		/* peer credentials (SO_PEERCRED) */
	uid_t uid;
	gid_t gid;
};

/* What a request handler answers. */
struct ctl_reply {
	enum ctl_err err;	/* CTL_OK: body is the answer */
	char msg[256];		/* for an error: one line, no newline */
	struct strbuf body;
};

struct ctlsrv_ops {
	void *ctx;
	int (*fd_add)(void *ctx, int fd, uint32_t events);	/* EPOLLIN/OUT */
	int (*fd_mod)(void *ctx, int fd, uint32_t events);
	void (*fd_del)(void *ctx, int fd);
	/* Required: answer @req into @rep (its body is empty on entry). */
	void (*request)(void *ctx, const struct ctl_request *req, struct ctl_reply *rep);
};

struct ctlsrv_opts {
	const char *path;	/* socket path */
	uint32_t mode;		/* permission bits */
	gid_t gid;		/* group, (gid_t)-1 = leave */
};

struct ctlsrv_stats {
	uint64_t accepted, requests, errors, busy, evicted, timeouts;
	uint32_t clients;
	size_t mem_bytes;	/* response buffers now */
};

struct ctlsrv;

/*
 * Create the socket at o->path (a stale socket there is replaced; one a
 * live daemon answers on is not: -EADDRINUSE), set its mode and group,
 * listen. 0 or -errno (logged).
 */
int ctlsrv_init(struct ctlsrv **out, const struct ctlsrv_opts *o,
		const struct ctlsrv_ops *ops);
/* Close every client and the socket, remove the socket file. */
void ctlsrv_finish(struct ctlsrv *c);

bool ctlsrv_owns_fd(const struct ctlsrv *c, int fd);
void ctlsrv_handle(struct ctlsrv *c, int fd, uint32_t events);
void ctlsrv_tick(struct ctlsrv *c, uint64_t now_ns);
uint64_t ctlsrv_next_deadline_ns(const struct ctlsrv *c);
void ctlsrv_stats(const struct ctlsrv *c, struct ctlsrv_stats *st);
size_t ctlsrv_memory_bound(void);

/*
 * Split a request line (without its newline) into @req. Returns CTL_OK or
 * CTL_ERR_BAD_REQUEST (@why says what is wrong). @line is modified.
 */
enum ctl_err ctlsrv_parse_request(char *line, struct ctl_request *req, const char **why);

#endif
