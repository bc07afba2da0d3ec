// SPDX-License-Identifier: GPL-2.0-or-later
/* Allow-list entries (parse, match) and connection sources. See sendsrv.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "daemon/serve/sendsrv.h"
#include "common/parse.h"
#include "common/util.h"

static int cidr_fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -EINVAL;
}

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool host_bits_zero(const uint8_t *a, unsigned int len, unsigned int bits)
{
	for (unsigned int i = bits; i < len * 8; i++)
		if (a[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

int sendsrv_cidr_parse(const char *text, struct sendsrv_cidr *out, const char **why)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char buf[INET6_ADDRSTRLEN + 8];
	struct sendsrv_cidr c;
	char *slash;
	uint64_t plen = 0;
	unsigned int max;

	if (rxb_strlcpy(buf, text, sizeof(buf)) >= sizeof(buf))
		return cidr_fail(why, "too long");
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(&c, 0, sizeof(c));
	if (inet_pton(AF_INET, buf, c.addr) == 1) {
		c.family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, c.addr) == 1) {
		c.family = AF_INET6;
		max = 128;
	} else {
		return cidr_fail(why, "not an IPv4 or IPv6 address");
	}
	plen = max;
	if (slash && rxb_parse_u64(slash + 1, 0, max, &plen) != 0)
		return cidr_fail(why, "bad prefix length");
	c.prefix_len = (uint8_t)plen;
	/* ::ffff:a.b.c.d/96+n is the IPv4 prefix a.b.c.d/n. */
	if (c.family == AF_INET6 && c.prefix_len >= 96 &&
	    memcmp(c.addr, v4mapped, sizeof(v4mapped)) == 0) {
		memmove(c.addr, c.addr + 12, 4);
		memset(c.addr + 4, 0, 12);
		c.family = AF_INET;
		c.prefix_len -= 96;
	}
	if (!host_bits_zero(c.addr, c.family == AF_INET ? 4 : 16, c.prefix_len))
		return cidr_fail(why, "host bits set after the prefix");
	*out = c;
	return 0;
}

/* The address bytes of @sa (a v4-mapped IPv6 one as IPv4), NULL if not IP. */
static const uint8_t *ip_of(const struct sockaddr *sa, int *family)
{
	if (sa->sa_family == AF_INET) {
		*family = AF_INET;
		return (const uint8_t *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a6 =
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			*family = AF_INET;
			return a6->s6_addr + 12;
		}
		*family = AF_INET6;
		return a6->s6_addr;
	}
	return NULL;
}

bool sendsrv_cidr_match(const struct sendsrv_cidr *c, const struct sockaddr *sa)
{
	int family;
	const uint8_t *a = ip_of(sa, &family);

	return a && family == c->family && prefix_equal(a, c->addr, c->prefix_len);
}

void sendsrv_source_of(const struct sockaddr_storage *ss, struct sendsrv_source *out)
{
	int family = 0;
	const uint8_t *a = ip_of((const struct sockaddr *)ss, &family);

	memset(out, 0, sizeof(*out));
	out->b[0] = (uint8_t)family;
	if (a)
		memcpy(out->b + 1, a, family == AF_INET ? 4 : SENDSRV_V6_SOURCE_BITS / 8);
}

bool sendsrv_same_source(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	struct sendsrv_source x, y;

	sendsrv_source_of(a, &x);
	sendsrv_source_of(b, &y);
	return memcmp(&x, &y, sizeof(x)) == 0;
}
