/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Address resolution and socket helpers shared by the RBUDP tools. */
#ifndef RBUDP_NET_H
#define RBUDP_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Port of an AF_INET/AF_INET6 address. */
uint16_t rbudp_net_addr_port(const struct sockaddr_storage *ss);
void rbudp_net_addr_set_port(struct sockaddr_storage *ss, uint16_t port);

/*
 * Resolve @host (name or literal; NULL means the wildcard, for binding) and
 * @port to the first address getaddrinfo gives. Returns 0 or a nonzero
 * EAI_* code for gai_strerror(); callers name the option in their message.
 */
int rbudp_net_resolve(const char *host, uint16_t port, int passive,
		      struct sockaddr_storage *ss, socklen_t *len);

/*
 * Split "HOST[:PORT]" / "[V6]:PORT" into @host (NUL-terminated) and *port
 * (@dflt_port when absent). Returns 0 or -EINVAL.
 */
int rbudp_net_split_hostport(const char *s, char *host, size_t host_size, uint16_t *port,
			     uint16_t dflt_port);

/* Socket buffer size: try @opt, then the *FORCE variant (root may exceed
 * the sysctl maximum). Returns the effective value getsockopt reports. */
int rbudp_net_set_bufsize(int fd, int opt, int force_opt, int bytes, int *effective);

/*
 * The kernel's count of datagrams dropped on UDP socket @fd (full receive
 * buffer, bad checksum), from the "drops" column of /proc/net/udp{,6}.
 * 0 or a negative errno (-ENOENT if the socket is not listed).
 */
int rbudp_net_udp_drops(int fd, uint64_t *drops);

#endif
