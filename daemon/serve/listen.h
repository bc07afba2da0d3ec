/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TCP listening sockets for the daemon's network servers (the metrics
 * endpoint and the sender server), set up one way: non-blocking,
 * close-on-exec, SO_REUSEADDR so a restart does not wait out TIME_WAIT, and
 * "::" dual-stack while any other IPv6 address listens IPv6 only.
 */
#ifndef RXB_DAEMON_LISTEN_H
#define RXB_DAEMON_LISTEN_H

#include <stdint.h>

/*
 * A listening socket on the literal IPv4 or IPv6 address @addr and @port
 * (0: a free port) with @backlog; the port bound into *bound_port (may be
 * NULL). Returns the fd, or -errno, logged with @who (the server's name),
 * the address and the port.
 */
int listen_tcp(const char *who, const char *addr, uint16_t port, int backlog,
	       uint16_t *bound_port);

#endif
