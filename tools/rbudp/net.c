// SPDX-License-Identifier: GPL-2.0-or-later
/* Address and socket helpers. See net.h. */
#include "tools/rbudp/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/parse.h"
#include "common/util.h"

uint16_t rbudp_net_addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)ss)->sin6_port);
	return 0;
}

void rbudp_net_addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)(void *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)ss)->sin6_port = htons(port);
}

int rbudp_net_resolve(const char *host, uint16_t port, int passive,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	char service[8];
	int err;

	if (passive)
		hints.ai_flags = AI_PASSIVE;
	snprintf(service, sizeof(service), "%u", port);
	err = getaddrinfo(host, service, &hints, &res);
	if (err)
		return err;
	if (res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return EAI_FAMILY;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int rbudp_net_split_hostport(const char *s, char *host, size_t host_size, uint16_t *port,
			     uint16_t dflt_port)
{
	const char *colon, *hend, *hstart = s;
	uint64_t p = dflt_port;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		hstart = s + 1;
		hend = strchr(hstart, ']');
		if (!hend)
			return -EINVAL;
		colon = hend[1] == ':' ? hend + 1 : NULL;
		if (!colon && hend[1] != '\0')
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		/* More than one colon without brackets: a bare IPv6 address. */
		if (colon && strchr(s, ':') != colon)
			colon = NULL;
		hend = colon ? colon : s + strlen(s);
	}
	if (hend == hstart || (size_t)(hend - hstart) >= host_size)
		return -EINVAL;
	if (colon && rxb_parse_u64(colon + 1, 1, 65535, &p) < 0)
		return -EINVAL;
	memcpy(host, hstart, (size_t)(hend - hstart));
	host[hend - hstart] = '\0';
	*port = (uint16_t)p;
	return 0;
}

int rbudp_net_set_bufsize(int fd, int opt, int force_opt, int bytes, int *effective)
{
	socklen_t sl = sizeof(*effective);

	if (setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, opt, effective, &sl) < 0)
		return -errno;
	/* The kernel doubles the request for bookkeeping; below that, the
	 * sysctl maximum capped it. Root may go past with the FORCE option. */
	if (*effective < 2 * bytes && setsockopt(fd, SOL_SOCKET, force_opt, &bytes,
						 sizeof(bytes)) == 0) {
		sl = sizeof(*effective);
		if (getsockopt(fd, SOL_SOCKET, opt, effective, &sl) < 0)
			return -errno;
	}
	return 0;
}

static int drops_in(const char *table, unsigned long ino, uint64_t *drops)
{
	FILE *f = fopen(table, "re");
	char line[512];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	/* Columns: sl local rem st tx:rx tr:when retrnsmt uid timeout inode
	 * ref pointer drops. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long d;
		unsigned long i;

		if (sscanf(line, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu %*s %*s %llu",
			   &i, &d) == 2 && i == ino) {
			*drops = d;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int rbudp_net_udp_drops(int fd, uint64_t *drops)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (drops_in("/proc/net/udp", (unsigned long)st.st_ino, drops) == 0)
		return 0;
	return drops_in("/proc/net/udp6", (unsigned long)st.st_ino, drops);
}
