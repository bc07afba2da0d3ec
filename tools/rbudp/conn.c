// SPDX-License-Identifier: GPL-2.0-or-later
/* RBUDP control connection I/O. See conn.h. */
#include "tools/rbudp/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/wire.h"

int rbudp_conn_init(struct rbudp_conn *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int flags, one = 1;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	/* Control frames are small and latency matters (they end rounds). */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	c->buf = malloc(RBUDP_FRAME_MAX);
	if (!c->buf)
		return -ENOMEM;
	c->fd = fd;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		rxb_sockaddr_str(&ss, c->peer, sizeof(c->peer));
	else
		rxb_strlcpy(c->peer, "?", sizeof(c->peer));
	return 0;
}

void rbudp_conn_finish(struct rbudp_conn *c)
{
	if (c->fd >= 0 && close(c->fd) < 0)
		rxb_log_errno(RXB_LOG_WARNING, errno, "close of control connection %s", c->peer);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

int rbudp_conn_fill(struct rbudp_conn *c)
{
	ssize_t n;

	if (c->off) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len == RBUDP_FRAME_MAX)
		return 0;	/* a whole frame is waiting to be parsed */
	n = recv(c->fd, c->buf + c->len, RBUDP_FRAME_MAX - c->len, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -errno;
	}
	if (n == 0)
		return -ECONNRESET;
	c->len += (size_t)n;
	return (int)n;
}

int rbudp_conn_next(struct rbudp_conn *c, struct rbudp_frame *f, const char **why)
{
	size_t have = c->len - c->off;
	uint32_t body_len;
	uint16_t t;
	int err;

	if (have < RBUDP_FRAME_HDR)
		return 0;
	err = rbudp_frame_hdr_decode(c->buf + c->off, &t, &body_len, why);
	if (err)
		return err;
	if (have < RBUDP_FRAME_HDR + (size_t)body_len)
		return 0;
	f->type = t;
	f->body = c->buf + c->off + RBUDP_FRAME_HDR;
	f->len = body_len;
	c->off += RBUDP_FRAME_HDR + body_len;
	return 1;
}

int rbudp_conn_wait(struct rbudp_conn *c, int timeout_ms, struct rbudp_frame *f,
		    const char **why)
{
	uint64_t deadline = rxb_mono_ns() + (uint64_t)timeout_ms * RXB_NSEC_PER_MSEC;

	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		uint64_t now;
		int err;

		err = rbudp_conn_next(c, f, why);
		if (err)
			return err;
		err = rbudp_conn_fill(c);
		if (err < 0)
			return err;
		if (err > 0)
			continue;
		now = rxb_mono_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		err = poll(&pfd, 1, (int)((deadline - now + 999999) / RXB_NSEC_PER_MSEC));
		if (err < 0)
			return -errno;
	}
}

int rbudp_conn_send(struct rbudp_conn *c, const void *data, size_t len, int timeout_ms)
{
	uint64_t deadline = rxb_mono_ns() + (uint64_t)timeout_ms * RXB_NSEC_PER_MSEC;
	const uint8_t *p = data;

	while (len) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		uint64_t now;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		now = rxb_mono_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)((deadline - now + 999999) / RXB_NSEC_PER_MSEC)) < 0)
			return -errno;
	}
	return 0;
}

void rbudp_conn_send_error(struct rbudp_conn *c, uint32_t code, const char *text)
{
	uint8_t buf[RBUDP_FRAME_HDR + 4 + RBUDP_ERROR_TEXT_MAX];
	size_t n = rbudp_error_encode(buf, code, text);

	if (c->fd >= 0)
		(void)rbudp_conn_send(c, buf, n, 1000);
}
