/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RBUDP control connection: a non-blocking TCP socket, an input buffer
 * that assembles frames (wire.h) and bounded, timed writes.
 */
#ifndef RBUDP_CONN_H
#define RBUDP_CONN_H

#include <stddef.h>
#include <stdint.h>

struct rbudp_conn {
	int fd;
	uint8_t *buf;		/* RBUDP_FRAME_MAX bytes */
	size_t len;		/* bytes held */
	size_t off;		/* start of the next unparsed frame */
	char peer[80];		/* "addr:port", for messages */
};

/*
 * A frame as read: its type and body, which points into the connection's
 * buffer right after the frame's header (valid until the next
 * rbudp_conn_fill()).
 */
struct rbudp_frame {
	uint16_t type;
	uint32_t len;		/* body bytes */
	const uint8_t *body;
};

/* Take ownership of connected socket @fd (made non-blocking). -ENOMEM, -errno. */
int rbudp_conn_init(struct rbudp_conn *c, int fd);
/* Close the socket and free the buffer. */
void rbudp_conn_finish(struct rbudp_conn *c);

/*
 * Read what the socket has. Returns the number of bytes read (0 when
 * nothing was waiting), -ECONNRESET when the peer closed, or -errno.
 */
int rbudp_conn_fill(struct rbudp_conn *c);

/*
 * The next complete frame, if any: returns 1 with it in *@f; 0 when more
 * bytes are needed; -EBADMSG with *why for a malformed header.
 */
int rbudp_conn_next(struct rbudp_conn *c, struct rbudp_frame *f, const char **why);

/*
 * Wait up to @timeout_ms for the next frame (reading as needed). Returns 1
 * with the frame, -ETIMEDOUT, -EINTR, -ECONNRESET, -EBADMSG or -errno.
 */
int rbudp_conn_wait(struct rbudp_conn *c, int timeout_ms, struct rbudp_frame *f,
		    const char **why);

/* Write all of @data within @timeout_ms. 0, -ETIMEDOUT, -EPIPE, -EINTR, -errno. */
int rbudp_conn_send(struct rbudp_conn *c, const void *data, size_t len, int timeout_ms);

/* Best effort: send an ERROR frame (short timeout, errors ignored). */
void rbudp_conn_send_error(struct rbudp_conn *c, uint32_t code, const char *text);

#endif
