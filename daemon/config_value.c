// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckd.conf's value types: parse, format, describe. See config_value.h.
 * The lists' own syntax is in config_list.c.
 */
#include "daemon/config_value.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "daemon/config_list.h"

/* A value shown in a message: at most 40 characters, then "...". */
static const char *show(const char *val, char *buf, size_t size)
{
	size_t len = strlen(val);

	if (len < 40 && len < size) {
		memcpy(buf, val, len + 1);
		return buf;
	}
	snprintf(buf, size, "%.37s...", val);
	return buf;
}

/* Plain decimal: no sign, no leading zeros (strtoull would read "010" as 8). */
static int parse_decimal_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!*s || strspn(s, "0123456789") != strlen(s) || (s[0] == '0' && s[1]))
		return -EINVAL;
	return rxb_parse_u64(s, min, max, out);
}

/* Parse an IPv4/IPv6 literal into @bytes (16 bytes); its width in bits or -EINVAL. */
static int parse_ip(const char *s, uint8_t *bytes, int *family)
{
	memset(bytes, 0, 16);
	if (inet_pton(AF_INET, s, bytes) == 1) {
		*family = AF_INET;
		return 32;
	}
	if (inet_pton(AF_INET6, s, bytes) == 1) {
		*family = AF_INET6;
		return 128;
	}
	return -EINVAL;
}

static int format_cidr(const struct sendsrv_cidr *c, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(c->family, c->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	return snprintf(buf, size, "%s/%u", a, c->prefix_len);
}

/*
 * One network. The control server's parser decides (one definition of an
 * allow-list entry in the daemon); this adds strictness on the prefix
 * ("/08", "/0x8" are refused) and messages that name what was meant.
 */
static int parse_cidr(const char *tok, struct sendsrv_cidr *c, char *why, size_t wlen)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(tok, '/');
	size_t alen = slash ? (size_t)(slash - tok) : strlen(tok);
	struct sendsrv_cidr net;
	uint64_t plen;
	int bits;

	bits = -EINVAL;
	if (alen < sizeof(addr)) {
		memcpy(addr, tok, alen);
		addr[alen] = '\0';
		bits = parse_ip(addr, net.addr, &net.family);
	}
	if (bits < 0) {
		snprintf(why, wlen, "'%s' is not an IPv4 or IPv6 network", tok);
		return -EINVAL;
	}
	plen = (uint64_t)bits;
	if (slash && parse_decimal_u64(slash + 1, 0, (uint64_t)bits, &plen)) {
		snprintf(why, wlen, "'%s': bad prefix length (0..%d)", tok, bits);
		return -EINVAL;
	}
	if (sendsrv_cidr_parse(tok, c, NULL) == 0)
		return 0;
	/* The address and prefix are fine, so host bits are set: show the network. */
	net.prefix_len = (uint8_t)plen;
	for (int i = net.prefix_len; i < bits; i++)
		net.addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	format_cidr(&net, addr, sizeof(addr));
	snprintf(why, wlen, "'%s' has host bits set (the network is %s)", tok, addr);
	return -EINVAL;
}

/* Linux's rules for device names (dev_valid_name), minus the length. */
static bool ifname_valid(const char *s)
{
	if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return false;
	return true;
}

/*
 * One item of each list type from its token (@cut: the token was longer
 * than the list's tok_size and is shown shortened), and back to text.
 */
static int item_port(const char *tok, bool cut, void *item, char *why, size_t wlen)
{
	uint64_t v;

	if (cut || parse_decimal_u64(tok, 1, 65535, &v)) {
		snprintf(why, wlen, "'%s%s' is not a port 1..65535", tok, cut ? "..." : "");
		return -EINVAL;
	}
	*(uint16_t *)item = (uint16_t)v;
	return 0;
}

static void show_port(const void *item, char *buf, size_t size)
{
	snprintf(buf, size, "%u", *(const uint16_t *)item);
}

static int item_cidr(const char *tok, bool cut, void *item, char *why, size_t wlen)
{
	if (cut) {
		snprintf(why, wlen, "'%s...' is not an IPv4 or IPv6 network", tok);
		return -EINVAL;
	}
	return parse_cidr(tok, item, why, wlen);
}

static void show_cidr(const void *item, char *buf, size_t size)
{
	format_cidr(item, buf, size);
}

static int item_ifname(const char *tok, bool cut, void *item, char *why, size_t wlen)
{
	if (cut || !ifname_valid(tok)) {
		snprintf(why, wlen, "'%s%s' is not a device name", tok, cut ? "..." : "");
		return -EINVAL;
	}
	rxb_strlcpy(item, tok, RXB_IFNAME_LEN);
	return 0;
}

/* Addresses are kept in canonical form, so "::0:1" and "::1" are the same. */
static int item_addr(const char *tok, bool cut, void *item, char *why, size_t wlen)
{
	uint8_t bytes[16];
	int family;

	if (cut || parse_ip(tok, bytes, &family) < 0) {
		snprintf(why, wlen, "'%s%s' is not an IPv4 or IPv6 address", tok, cut ? "..." : "");
		return -EINVAL;
	}
	if (!inet_ntop(family, bytes, item, INET6_ADDRSTRLEN)) {
		snprintf(why, wlen, "'%s': %s", tok, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

/* "192.0.2.7:7441", "[2001:db8::1]:7441". */
static int parse_hostport(const char *val, struct rxb_hostport *out, char *why, size_t wlen)
{
	char addr[INET6_ADDRSTRLEN + 2], shown[48];
	const char *colon = strrchr(val, ':'), *a = val;
	size_t alen = colon ? (size_t)(colon - val) : 0;
	struct rxb_hostport hp;
	uint64_t port;
	uint8_t bytes[16];
	int family;

	if (val[0] == '[') {
		if (alen < 2 || val[alen - 1] != ']')
			colon = NULL;
		a = val + 1;
		alen -= 2;
	}
	if (!colon || alen == 0 || alen >= sizeof(addr)) {
		snprintf(why, wlen, "'%s' is not ADDRESS:PORT", show(val, shown, sizeof(shown)));
		return -EINVAL;
	}
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (parse_ip(addr, bytes, &family) < 0 || (family == AF_INET6) != (val[0] == '[')) {
		snprintf(why, wlen, "'%s' is not an IPv4 address or an IPv6 address in [ ]",
			 show(addr, shown, sizeof(shown)));
		return -EINVAL;
	}
	if (parse_decimal_u64(colon + 1, 1, 65535, &port)) {
		snprintf(why, wlen, "port '%s' is not 1..65535", show(colon + 1, shown, sizeof(shown)));
		return -EINVAL;
	}
	if (!inet_ntop(family, bytes, hp.addr, sizeof(hp.addr)))
		return -EINVAL;
	hp.port = (uint16_t)port;
	*out = hp;
	return 0;
}

static int format_hostport(const struct rxb_hostport *hp, char *buf, size_t size)
{
	bool v6 = strchr(hp->addr, ':') != NULL;

	return snprintf(buf, size, "%s%s%s:%u", v6 ? "[" : "", hp->addr, v6 ? "]" : "", hp->port);
}

static void show_text(const void *item, char *buf, size_t size)
{
	snprintf(buf, size, "%s", (const char *)item);
}

static int lookup_id(const char *name, bool user, uint32_t *id);

/* A uid, or a user name resolved now: the list holds uids. */
static int item_uid(const char *tok, bool cut, void *item, char *why, size_t wlen)
{
	size_t len = strlen(tok);
	uint64_t v;

	if (!cut && parse_decimal_u64(tok, 0, UINT32_MAX - 1, &v) == 0) {
		*(uint32_t *)item = (uint32_t)v;
		return 0;
	}
	if (cut || tok[0] == '-' || strspn(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789_.-") != len ||
	    lookup_id(tok, true, item)) {
		snprintf(why, wlen, "'%s%s' is neither a uid nor a user's name", tok, cut ? "..." : "");
		return -EINVAL;
	}
	return 0;
}

static void show_uid(const void *item, char *buf, size_t size)
{
	snprintf(buf, size, "%u", *(const uint32_t *)item);
}

static int parse_path(const char *val, char *field, size_t size, char *why, size_t wlen);

static int item_path(const char *tok, bool cut, void *item, char *why, size_t wlen)
{
	if (cut) {
		snprintf(why, wlen, "'%s...' is longer than %d bytes", tok, RXB_CONF_PATH_LEN - 1);
		return -ERANGE;
	}
	return parse_path(tok, item, RXB_CONF_PATH_LEN, why, wlen);
}

/*
 * Each list type's items (config_list.c reads and writes the lists); NULL
 * for a type that is not a list. The one place that knows which types are.
 */
static const struct config_list_kind *list_kind(enum config_type t)
{
	static const struct config_list_kind port = {
		CONFIG_LIST_ITEMS(struct rxb_port_list, port), .max = RXB_CONF_MAX_PORTS,
		.tok_size = 16, .what = "port ", .noun = "ports",
		.item = item_port, .show = show_port,
	}, cidr = {
		CONFIG_LIST_ITEMS(struct rxb_cidr_list, cidr), .max = RXB_CONF_MAX_CIDRS,
		.tok_size = 2 * INET6_ADDRSTRLEN, .what = "", .quote = true, .noun = "networks",
		 .item = item_cidr, .show = show_cidr,
	}, ifname = {
		CONFIG_LIST_ITEMS(struct rxb_ifname_list, name), .max = RXB_CONF_MAX_DEVICES,
		.tok_size = RXB_IFNAME_LEN, .what = "device ", .noun = "devices",
		 .item = item_ifname, .show = show_text,
	}, addr = {
		CONFIG_LIST_ITEMS(struct rxb_addr_list, addr), .max = RXB_CONF_MAX_LISTEN,
		.tok_size = INET6_ADDRSTRLEN + 1, .what = "", .quote = true, .noun = "addresses",
		.none = "at least one address is needed", .item = item_addr, .show = show_text,
	}, uid = {
		CONFIG_LIST_ITEMS(struct rxb_uid_list, uid), .max = RXB_CONF_MAX_UIDS,
		.tok_size = 33, .what = "uid ", .noun = "users",
		.item = item_uid, .show = show_uid,
	}, path = {
		CONFIG_LIST_ITEMS(struct rxb_path_list, path), .max = RXB_CONF_MAX_EXES,
		.tok_size = RXB_CONF_PATH_LEN, .what = "", .quote = true, .noun = "paths",
		.item = item_path, .show = show_text,
	};

	switch (t) {
	case CONFIG_PORT_LIST:
		return &port;
	case CONFIG_CIDR_LIST:
		return &cidr;
	case CONFIG_IFNAME_LIST:
		return &ifname;
	case CONFIG_ADDRESS_LIST:
		return &addr;
	case CONFIG_UID_LIST:
		return &uid;
	case CONFIG_PATH_LIST:
		return &path;
	default:
		return NULL;
	}
}

static int parse_path(const char *val, char *field, size_t size, char *why, size_t wlen)
{
	size_t len = strlen(val);
	const char *p;

	if (val[0] != '/') {
		snprintf(why, wlen, "'%s' is not an absolute path", val);
		return -EINVAL;
	}
	if (len >= size) {
		snprintf(why, wlen, "path is %zu bytes long", len);
		return -ERANGE;
	}
	/* Legal in file names, but here surely a mistake in a quoted value. */
	if (strchr(val, '\t') || val[len - 1] == ' ') {
		snprintf(why, wlen, "tab or trailing blank in path");
		return -EINVAL;
	}
	/* No "." or ".." components: the path means what it says. */
	for (p = val; p; p = strchr(p + 1, '/')) {
		size_t n = strcspn(p + 1, "/");

		if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.')) {
			snprintf(why, wlen, "'.' and '..' are not allowed in paths");
			return -EINVAL;
		}
	}
	memcpy(field, val, len + 1);
	return 0;
}

static int parse_mode(const char *val, uint32_t *out)
{
	size_t len = strlen(val);
	uint32_t v = 0;

	if (len < 3 || len > 4 || strspn(val, "01234567") != len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		v = v * 8 + (uint32_t)(val[i] - '0');
	if (v > 0777)
		return -ERANGE;
	*out = v;
	return 0;
}

/* A user's uid (@user) or a group's gid by name, through NSS. 0, -ENOENT or -errno. */
static int lookup_id(const char *name, bool user, uint32_t *id)
{
	struct passwd pw, *pwr = NULL;
	struct group gr, *grr = NULL;
	size_t size = 4096;
	char *buf;
	int err;

	for (;;) {
		buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		err = user ? getpwnam_r(name, &pw, buf, size, &pwr) :
			     getgrnam_r(name, &gr, buf, size, &grr);
		if (err != ERANGE || size >= (1u << 20))
			break;
		free(buf);
		size *= 4;
	}
	if (!err && pwr)
		*id = (uint32_t)pwr->pw_uid;
	if (!err && grr)
		*id = (uint32_t)grr->gr_gid;
	free(buf);
	if (err)
		return -err;
	return pwr || grr ? 0 : -ENOENT;
}

static int parse_group(const char *val, struct rxb_group *out, char *why, size_t wlen)
{
	struct rxb_group g;
	size_t len = strlen(val);
	int err;

	memset(&g, 0, sizeof(g));
	g.gid = (gid_t)-1;
	if (len == 0) {
		*out = g;
		return 0;
	}
	if (len >= sizeof(g.name) || val[0] == '-' ||
	    strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len) {
		snprintf(why, wlen, "'%s' is not a group name", val);
		return -EINVAL;
	}
	{
		uint32_t gid;

		err = lookup_id(val, false, &gid);
		if (!err)
			g.gid = (gid_t)gid;
	}
	if (err == -ENOENT) {
		snprintf(why, wlen, "no group named '%s'", val);
		return -EINVAL;
	}
	if (err) {
		snprintf(why, wlen, "cannot look up group '%s': %s", val, strerror(-err));
		return err;
	}
	memcpy(g.name, val, len + 1);
	*out = g;
	return 0;
}

static int parse_enum(const char *const *names, const char *val, int *out)
{
	for (int i = 0; names[i]; i++) {
		if (strcasecmp(names[i], val) == 0) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_log_level(const char *val, int *out)
{
	char low[16];
	size_t len = strlen(val);
	int lvl;

	if (len >= sizeof(low))
		return -EINVAL;
	for (size_t i = 0; i <= len; i++)
		low[i] = (char)tolower((unsigned char)val[i]);
	lvl = rxb_log_level_parse(low);
	if (lvl < 0)
		return -EINVAL;
	*out = lvl;
	return 0;
}

/* The numeric types: UINT, DOUBLE, SI. */
static int parse_number(const struct config_key *k, const char *val, void *field,
			char *why, size_t wlen)
{
	char shown[48];
	uint64_t u;
	double d;
	int err;

	switch (k->type) {
	case CONFIG_UINT:
		err = parse_decimal_u64(val, k->lim.u.min, k->lim.u.max, &u);
		if (!err)
			rxb_store_uint(field, k->size, u);
		return err;
	case CONFIG_DOUBLE:
		err = rxb_parse_double(val, k->lim.d.min, k->lim.d.max, &d);
		if (!err)
			*(double *)field = d;
		return err;
	default:	/* CONFIG_SI */
		err = rxb_parse_si(val, k->lim.d.min, k->lim.d.max, &d);
		if (!err && d != floor(d)) {
			snprintf(why, wlen, "'%s' is not a whole number",
				 show(val, shown, sizeof(shown)));
			err = -EINVAL;
		}
		if (!err)
			*(uint64_t *)field = (uint64_t)d;
		return err;
	}
}

/* The types stored as an int or a bool: BOOL, ENUM, LOG_LEVEL. */
static int parse_choice(const struct config_key *k, const char *val, void *field)
{
	bool b;
	int err, i;

	if (k->type == CONFIG_BOOL) {
		err = rxb_parse_bool(val, &b);
		if (!err)
			*(bool *)field = b;
		return err;
	}
	if (k->type == CONFIG_ENUM)
		err = parse_enum(k->lim.names, val, &i);
	else
		err = parse_log_level(val, &i);
	if (!err)
		*(int *)field = i;
	return err;
}

int config_value_parse(const struct config_key *k, const char *val, void *field,
		       char *why, size_t wlen)
{
	const struct config_list_kind *lk;
	char shown[48];
	int err;

	why[0] = '\0';
	switch (k->type) {
	case CONFIG_UINT:
	case CONFIG_DOUBLE:
	case CONFIG_SI:
		err = parse_number(k, val, field, why, wlen);
		break;
	case CONFIG_BOOL:
	case CONFIG_ENUM:
	case CONFIG_LOG_LEVEL:
		err = parse_choice(k, val, field);
		break;
	case CONFIG_PATH:
		err = parse_path(val, field, k->size, why, wlen);
		break;
	case CONFIG_MODE:
		err = parse_mode(val, field);
		break;
	case CONFIG_GROUP:
		err = parse_group(val, field, why, wlen);
		break;
	case CONFIG_HOSTPORT:
		err = parse_hostport(val, field, why, wlen);
		break;
	default:
		lk = list_kind(k->type);
		err = lk ? config_list_parse(lk, val, field, k->size, why, wlen) : -EINVAL;
		break;
	}
	if (err && !why[0]) {
		if (!*val)
			snprintf(why, wlen, "empty value");
		else if (err == -ERANGE)
			snprintf(why, wlen, "'%s' is out of range", show(val, shown, sizeof(shown)));
		else
			snprintf(why, wlen, "'%s' is not valid", show(val, shown, sizeof(shown)));
	}
	return err;
}

/* ---------------------------------------------------- formatting values -- */

/* Canonical quantity: the largest exact decimal suffix, else binary, else none. */
static int format_si(uint64_t v, char *buf, size_t size)
{
	static const struct { const char *sfx; uint64_t mult; } units[] = {
		{ "T", 1000000000000ULL }, { "G", 1000000000ULL }, { "M", 1000000ULL },
		{ "k", 1000ULL }, { "Ti", 1ULL << 40 }, { "Gi", 1ULL << 30 },
		{ "Mi", 1ULL << 20 }, { "Ki", 1ULL << 10 },
	};

	for (size_t i = 0; v && i < RXB_ARRAY_SIZE(units); i++)
		if (v % units[i].mult == 0)
			return snprintf(buf, size, "%llu%s",
					(unsigned long long)(v / units[i].mult), units[i].sfx);
	return snprintf(buf, size, "%llu", (unsigned long long)v);
}

/* Shortest "%g" form that reads back as the same double. */
static int format_double(double v, char *buf, size_t size)
{
	char tmp[64];

	for (int prec = 6; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	return snprintf(buf, size, "%s", tmp);
}

int config_value_format(const struct config_key *k, const void *field, char *buf,
			size_t size)
{
	const struct config_list_kind *lk;
	int idx;

	if (size)
		buf[0] = '\0';
	switch (k->type) {
	case CONFIG_UINT:
		return snprintf(buf, size, "%llu", (unsigned long long)rxb_load_uint(field, k->size));
	case CONFIG_DOUBLE:
		return format_double(*(const double *)field, buf, size);
	case CONFIG_SI:
		return format_si(*(const uint64_t *)field, buf, size);
	case CONFIG_BOOL:
		return snprintf(buf, size, "%s", *(const bool *)field ? "yes" : "no");
	case CONFIG_PATH:
		return snprintf(buf, size, "%s", (const char *)field);
	case CONFIG_ENUM:
		idx = *(const int *)field;
		for (int i = 0; k->lim.names[i]; i++)
			if (i == idx)
				return snprintf(buf, size, "%s", k->lim.names[i]);
		return snprintf(buf, size, "%d", idx);
	case CONFIG_MODE:
		return snprintf(buf, size, "%04o", *(const uint32_t *)field);
	case CONFIG_GROUP:
		return snprintf(buf, size, "%s", ((const struct rxb_group *)field)->name);
	case CONFIG_LOG_LEVEL:
		return snprintf(buf, size, "%s", rxb_log_level_name(*(const int *)field));
	case CONFIG_HOSTPORT:
		return format_hostport(field, buf, size);
	default:
		lk = list_kind(k->type);
		if (lk)
			return config_list_format(lk, field, buf, size);
		break;
	}
	return snprintf(buf, size, "?");
}

/* "one of: a, b, c" from @names, NULL-terminated. */
static void describe_one_of(const char *const *names, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "one of:");

	for (int i = 0; names[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s %s", i ? "," : "", names[i]);
}

void config_value_describe(const struct config_key *k, char *buf, size_t size)
{
	const char *levels[RXB_LOG_DEBUG - RXB_LOG_ERR + 2] = { NULL };
	char lo[32], hi[32];

	switch (k->type) {
	case CONFIG_UINT:
		snprintf(buf, size, "a whole number %llu..%llu",
			 (unsigned long long)k->lim.u.min, (unsigned long long)k->lim.u.max);
		break;
	case CONFIG_DOUBLE:
		format_double(k->lim.d.min, lo, sizeof(lo));
		format_double(k->lim.d.max, hi, sizeof(hi));
		snprintf(buf, size, "a number %s..%s", lo, hi);
		break;
	case CONFIG_SI:
		format_si((uint64_t)k->lim.d.min, lo, sizeof(lo));
		format_si((uint64_t)k->lim.d.max, hi, sizeof(hi));
		snprintf(buf, size, "a whole number %s..%s, suffixes k M G T (10^3...) "
			 "or Ki Mi Gi Ti (2^10...)", lo, hi);
		break;
	case CONFIG_BOOL:
		snprintf(buf, size, "yes or no");
		break;
	case CONFIG_PATH:
		snprintf(buf, size, "an absolute path shorter than %zu bytes", k->size);
		break;
	case CONFIG_ENUM:
		describe_one_of(k->lim.names, buf, size);
		break;
	case CONFIG_PORT_LIST:
		snprintf(buf, size, "up to %d distinct ports 1..65535, separated by blanks "
			 "or commas", RXB_CONF_MAX_PORTS);
		break;
	case CONFIG_CIDR_LIST:
		snprintf(buf, size, "up to %d networks like 192.0.2.0/24 or 2001:db8::/32 "
			 "without host bits", RXB_CONF_MAX_CIDRS);
		break;
	case CONFIG_IFNAME_LIST:
		snprintf(buf, size, "up to %d distinct device names of at most %d characters",
			 RXB_CONF_MAX_DEVICES, RXB_IFNAME_LEN - 1);
		break;
	case CONFIG_ADDRESS_LIST:
		snprintf(buf, size, "1 to %d IPv4 or IPv6 addresses", RXB_CONF_MAX_LISTEN);
		break;
	case CONFIG_MODE:
		snprintf(buf, size, "octal permission bits 000..0777, like 0660");
		break;
	case CONFIG_GROUP:
		snprintf(buf, size, "an existing group's name, or nothing");
		break;
	case CONFIG_LOG_LEVEL:
		/* The logger's own names, so that the list follows its levels. */
		for (int l = RXB_LOG_ERR; l <= RXB_LOG_DEBUG; l++)
			levels[l - RXB_LOG_ERR] = rxb_log_level_name(l);
		describe_one_of(levels, buf, size);
		break;
	case CONFIG_HOSTPORT:
		snprintf(buf, size, "ADDRESS:PORT, like 127.0.0.1:7441 or [::1]:7441");
		break;
	case CONFIG_UID_LIST:
		snprintf(buf, size, "up to %d distinct uids or user names", RXB_CONF_MAX_UIDS);
		break;
	case CONFIG_PATH_LIST:
		snprintf(buf, size, "up to %d distinct absolute paths without blanks or commas, "
			 "each shorter than %d bytes", RXB_CONF_MAX_EXES, RXB_CONF_PATH_LEN);
		break;
	}
}

