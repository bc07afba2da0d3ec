// SPDX-License-Identifier: GPL-2.0-or-later
/* The receiver's connection queue. See recv_accept.h. */
#include "tools/rbudp/recv_accept.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/conn.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/receiver.h"
#include "tools/rbudp/wire.h"

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return false;
}

static void turn_away(int fd, const char *text)
{
	struct rbudp_conn c;

	if (rbudp_conn_init(&c, fd)) {
		close(fd);
		return;
	}
	rxb_warn("turned away %s: %s", c.peer, text);
	rbudp_conn_send_error(&c, RBUDP_ERR_BUSY, text);
	rbudp_conn_finish(&c);
}

int rbudp_recv_accept_next(struct rbudp_receiver *rx, volatile sig_atomic_t *stop, int *fd)
{
	if (rx->n_pending) {
		*fd = rx->pending[0];
		rx->n_pending--;
		memmove(rx->pending, rx->pending + 1, rx->n_pending * sizeof(rx->pending[0]));
		memmove(rx->pending_addr, rx->pending_addr + 1,
			rx->n_pending * sizeof(rx->pending_addr[0]));
		return 0;
	}
	for (;;) {
		struct pollfd pfd = { .fd = rx->listen_fd, .events = POLLIN };

		if (stop && *stop)
			return -EINTR;
		if (poll(&pfd, 1, 500) < 0 && errno != EINTR) {
			rxb_log_errno(RXB_LOG_ERR, errno, "poll on %s", rx->local);
			return -errno;
		}
		*fd = accept4(rx->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (*fd >= 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED)
			rxb_log_errno(RXB_LOG_WARNING, errno, "accept on %s", rx->local);
	}
}

void rbudp_recv_accept_newcomer(struct rbudp_receiver *rx, bool may_queue,
				const char *busy_text)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned same = 0;
	char who[80];
	int fd;

	fd = accept4(rx->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (unsigned i = 0; i < rx->n_pending; i++)
		same += same_host(&rx->pending_addr[i], &ss);
	if (!may_queue || rx->n_pending == RBUDP_RECV_PENDING_MAX ||
	    same >= RBUDP_RECV_PENDING_PER_ADDR) {
		rx->turned_away++;
		turn_away(fd, busy_text);
		return;
	}
	rx->pending[rx->n_pending] = fd;
	rx->pending_addr[rx->n_pending++] = ss;
	rx->queued++;
	rxb_sockaddr_str(&ss, who, sizeof(who));
	rxb_info("%s waits: the running session has not sent data yet", who);
}

void rbudp_recv_accept_refuse_queued(struct rbudp_receiver *rx, const char *busy_text)
{
	for (unsigned i = 0; i < rx->n_pending; i++) {
		rx->turned_away++;
		turn_away(rx->pending[i], busy_text);
	}
	rx->n_pending = 0;
}

void rbudp_recv_accept_close(struct rbudp_receiver *rx)
{
	for (unsigned i = 0; i < rx->n_pending; i++)
		close(rx->pending[i]);
	rx->n_pending = 0;
}
