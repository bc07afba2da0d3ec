// SPDX-License-Identifier: GPL-2.0-or-later
/* TCP listening sockets. See listen.h. */
#include "daemon/serve/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"

int listen_tcp(const char *who, const char *addr, uint16_t port, int backlog,
	       uint16_t *bound_port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = sizeof(*a4);
	int fd, one = 1, v6only = 1, err;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		v6only = !IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
		len = sizeof(*a6);
	} else {
		rxb_err("%s: listen address '%s' is not an IPv4 or IPv6 literal", who, addr);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		rxb_log_errno(RXB_LOG_ERR, err, "%s: socket for %s", who, addr);
		return -err;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, backlog) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		err = errno;
		rxb_log_errno(RXB_LOG_ERR, err, "%s: listening on %s port %u", who, addr, port);
		close(fd);
		return -err;
	}
	if (bound_port)
		*bound_port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
	return fd;
}
