// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape's configuration. See conf.h.
 *
 * One key table serves the INI file and the command line: each row names
 * the file key, the long option, where the value goes and how it is
 * parsed. Everything is parsed into a scratch copy that replaces the
 * caller's only on success.
 */
#include "tools/shape/conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <iniparser/iniparser.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "tools/shape/util.h"

/* ------------------------------------------------------------ the table -- */

enum key_type {
	K_PATH,		/* absolute path */
	K_HANDLE,	/* hex 1..fffe */
	K_BYTES,	/* SI quantity of bytes, rounded */
	K_BPS,		/* SI quantity of bits/s, rounded */
	K_SECONDS_MS,	/* seconds (fractions allowed), stored in ms */
	K_MS,		/* integer milliseconds */
	K_FALLBACK,	/* "unshaped" or a rate */
	K_LOGLEVEL,
	K_DAEMON,	/* HOST[:PORT] into host + port */
	K_PORT,		/* 1..65535 */
	K_PROTO,	/* udp | tcp */
	K_IFNAME,
	K_ADDRS,	/* IP literals separated by blanks or commas */
	K_U32,
	K_RTT_MS,	/* milliseconds (fractions allowed), stored in us */
};

struct conf_key {
	const char *key;	/* INI key */
	const char *opt;	/* long option without "--" */
	bool receiver;		/* in [receiver NAME], else in [shape] */
	enum key_type type;
	size_t offset;
	size_t size;
	double min, max;
	const char *arg;	/* what it takes, for --help */
	const char *def;	/* default, for --help */
};

#define G(f) .receiver = false, .offset = offsetof(struct shape_conf, f), \
	     .size = sizeof(((struct shape_conf *)0)->f)
#define R(f) .receiver = true, .offset = offsetof(struct shape_receiver_conf, f), \
	     .size = sizeof(((struct shape_receiver_conf *)0)->f)

static const struct conf_key keys[] = {
	{ "daemon", "receiver", R(host), .type = K_DAEMON, .arg = "HOST[:PORT]",
	  .def = "required; port 7440" },
	{ "flow_port", "flow-port", R(flow_port), .type = K_PORT, .min = 1, .max = 65535,
	  .arg = "PORT", .def = "required" },
	{ "proto", "proto", R(proto), .type = K_PROTO, .arg = "udp|tcp", .def = "udp" },
	{ "dev", "dev", R(dev), .type = K_IFNAME, .arg = "IFACE", .def = "the route's device" },
	{ "data_address", "data-addr", R(addr), .type = K_ADDRS, .arg = "ADDR[,ADDR...]",
	  .def = "the daemon host's addresses" },
	{ "payload_bytes", "payload", R(payload_bytes), .type = K_U32, .min = 1, .max = 65535,
	  .arg = "BYTES", .def = "the device MTU less the headers" },
	{ "rtt_ms", "rtt", R(rtt_us), .type = K_RTT_MS, .min = 0, .max = 60000,
	  .arg = "MS", .def = "0 (unknown)" },
	{ "file_bytes", "file-size", R(file_bytes), .type = K_BYTES, .min = 0, .max = 1e15,
	  .arg = "BYTES", .def = "0 (unknown)" },
	{ "max_rate", "max-rate", R(max_rate_bps), .type = K_BPS, .min = 0, .max = 1e12,
	  .arg = "BPS", .def = "0 (unknown)" },

	{ "hold_s", "hold", G(hold_ms), .type = K_SECONDS_MS, .min = 0, .max = 86400,
	  .arg = "SECONDS", .def = "30" },
	{ "fallback", "fallback", G(fallback_bps), .type = K_FALLBACK, .min = 1e3, .max = 1e12,
	  .arg = "unshaped|BPS", .def = "unshaped" },
	{ "queue_bytes", "queue", G(queue_bytes), .type = K_BYTES, .min = 65536,
	  .max = 1073741824.0, .arg = "BYTES", .def = "16Mi" },
	{ "burst_bytes", "burst", G(burst_bytes), .type = K_BYTES, .min = 0, .max = 67108864.0,
	  .arg = "BYTES", .def = "0 (automatic)" },
	{ "handle", "handle", G(handle), .type = K_HANDLE, .min = 1, .max = 0xfffe,
	  .arg = "HEX", .def = "7862" },
	{ "state_dir", "state-dir", G(state_dir), .type = K_PATH, .arg = "DIR",
	  .def = SHAPE_DEFAULT_STATE_DIR },
	{ "status_interval_s", "status-interval", G(status_interval_ms), .type = K_SECONDS_MS,
	  .min = 0, .max = 86400, .arg = "SECONDS", .def = "10 (0: off)" },
	{ "stats_interval_ms", "stats-interval", G(stats_interval_ms), .type = K_MS, .min = 5,
	  .max = 10000, .arg = "MS", .def = "20" },
	{ "connect_timeout_ms", "connect-timeout", G(connect_timeout_ms), .type = K_MS,
	  .min = 100, .max = 60000, .arg = "MS", .def = "2000" },
	{ "reconnect_max_s", "reconnect-max", G(reconnect_max_ms), .type = K_SECONDS_MS,
	  .min = 0.1, .max = 3600, .arg = "SECONDS", .def = "30" },
	{ "log_level", "log-level", G(log_level), .type = K_LOGLEVEL, .arg = "LEVEL",
	  .def = "info" },
};

#undef G
#undef R

void shape_conf_defaults(struct shape_conf *c)
{
	memset(c, 0, sizeof(*c));
	rxb_strlcpy(c->state_dir, SHAPE_DEFAULT_STATE_DIR, sizeof(c->state_dir));
	c->handle = SHAPE_DEFAULT_HANDLE;
	c->queue_bytes = 16ull << 20;
	c->hold_ms = 30000;
	c->fallback = SHAPE_FALLBACK_UNSHAPED;
	c->status_interval_ms = 10000;
	c->stats_interval_ms = 20;
	c->connect_timeout_ms = 2000;
	c->reconnect_max_ms = 30000;
	c->log_level = RXB_LOG_INFO;
}

static void rx_defaults(struct shape_receiver_conf *r)
{
	memset(r, 0, sizeof(*r));
	r->port = 7440;
	r->proto = IPPROTO_UDP;
}

/* ------------------------------------------------------------ values -- */

#define fail shape_util_fail

int shape_conf_split_hostport(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon, *end;
	size_t n;
	uint64_t v;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || end == s + 1)
			return -EINVAL;
		n = (size_t)(end - s - 1);
		colon = end[1] == ':' ? end + 1 : NULL;
		if (!colon && end[1] != '\0')
			return -EINVAL;
		s++;
	} else {
		colon = strchr(s, ':');
		/* Two colons or more: a bare IPv6 literal, no port. */
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;
		n = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (n == 0 || n >= hostlen)
		return -EINVAL;
	if (colon) {
		if (rxb_parse_u64(colon + 1, 1, 65535, &v))
			return -EINVAL;
		*port = (uint16_t)v;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)host[i] <= ' ' || host[i] == '[' || host[i] == ']' ||
		    host[i] == '/' || (unsigned char)host[i] >= 0x7f)
			return -EINVAL;
	return 0;
}

static bool addr_literal(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int parse_addrs(const char *val, struct shape_receiver_conf *r, char *why, size_t wl)
{
	char tok[SHAPE_ADDR_TEXT_MAX];
	unsigned n = 0;
	const char *p = val;

	while (*p) {
		size_t len = strcspn(p, " \t,");

		if (len == 0) {
			p++;
			continue;
		}
		if (len >= sizeof(tok))
			return fail(why, wl, -EINVAL, "address too long");
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (!addr_literal(tok))
			return fail(why, wl, -EINVAL, "'%s' is not an IPv4 or IPv6 address", tok);
		if (n == SHAPE_MAX_ADDRS)
			return fail(why, wl, -EINVAL, "more than %d addresses", SHAPE_MAX_ADDRS);
		memcpy(r->addr[n++], tok, len + 1);
		p += len;
	}
	if (n == 0)
		return fail(why, wl, -EINVAL, "no address");
	r->naddr = n;
	return 0;
}

static int parse_ifname(const char *val, char *out, char *why, size_t wl)
{
	size_t n = strlen(val);

	if (n == 0 || n >= IF_NAMESIZE)
		return fail(why, wl, -EINVAL, "not a device name (1..%d characters)",
			    IF_NAMESIZE - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)val[i] <= ' ' || val[i] == '/' || val[i] == ':' ||
		    (unsigned char)val[i] >= 0x7f)
			return fail(why, wl, -EINVAL, "not a device name");
	memcpy(out, val, n + 1);
	return 0;
}

static int parse_number(const struct conf_key *k, const char *val, double *v, char *why,
			size_t wl)
{
	int e;

	if (k->type == K_BYTES || k->type == K_BPS || k->type == K_FALLBACK)
		e = rxb_parse_si(val, k->min, k->max, v);
	else
		e = rxb_parse_double(val, k->min, k->max, v);
	if (e)
		return fail(why, wl, e, "%s (expected %g..%g%s)", rxb_parse_strerror(e), k->min,
			    k->max, k->type == K_BYTES || k->type == K_BPS || k->type == K_FALLBACK
			    ? ", suffixes k M G T Ki Mi Gi Ti" : "");
	return 0;
}

/* Parse @val for @k into @c (global keys) or @r (receiver keys). */
static int set_value(const struct conf_key *k, const char *val, struct shape_conf *c,
		     struct shape_receiver_conf *r, char *why, size_t wl)
{
	void *field = (char *)(k->receiver ? (void *)r : (void *)c) + k->offset;
	uint16_t handle;
	double d;
	uint64_t v;
	int e;

	switch (k->type) {
	case K_PATH:
		if (val[0] != '/' || strlen(val) >= k->size)
			return fail(why, wl, -EINVAL, "not an absolute path below %zu bytes",
				    k->size);
		memcpy(field, val, strlen(val) + 1);
		return 0;
	case K_HANDLE:
		if (strncasecmp(val, "0x", 2) == 0)
			val += 2;	/* the configuration may spell it as C does */
		if (shape_util_parse_handle(val, &handle))
			return fail(why, wl, -EINVAL, "not a handle major (hex 1..fffe)");
		rxb_store_uint(field, k->size, handle);
		return 0;
	case K_FALLBACK:
		if (strcmp(val, "unshaped") == 0) {
			c->fallback = SHAPE_FALLBACK_UNSHAPED;
			c->fallback_bps = 0;
			return 0;
		}
		e = parse_number(k, val, &d, why, wl);
		if (e)
			return fail(why, wl, e, "not 'unshaped' or a rate in bit/s (1k..1T)");
		c->fallback = SHAPE_FALLBACK_RATE;
		c->fallback_bps = (uint64_t)llround(d);
		return 0;
	case K_LOGLEVEL:
		e = rxb_log_level_parse(val);
		if (e < 0)
			return fail(why, wl, -EINVAL, "not err, warning, notice, info or debug");
		c->log_level = e;
		return 0;
	case K_DAEMON:
		if (shape_conf_split_hostport(val, r->host, sizeof(r->host), &r->port))
			return fail(why, wl, -EINVAL, "not HOST, HOST:PORT or [IPV6]:PORT");
		return 0;
	case K_PROTO:
		if (strcmp(val, "udp") == 0)
			r->proto = IPPROTO_UDP;
		else if (strcmp(val, "tcp") == 0)
			r->proto = IPPROTO_TCP;
		else
			return fail(why, wl, -EINVAL, "not udp or tcp");
		return 0;
	case K_IFNAME:
		return parse_ifname(val, field, why, wl);
	case K_ADDRS:
		return parse_addrs(val, r, why, wl);
	case K_PORT:
	case K_U32:
	case K_MS:
		e = rxb_parse_u64(val, (uint64_t)k->min, (uint64_t)k->max, &v);
		if (e)
			return fail(why, wl, e, "%s (expected %g..%g)", rxb_parse_strerror(e),
				    k->min, k->max);
		rxb_store_uint(field, k->size, v);
		return 0;
	case K_BYTES:
	case K_BPS:
		e = parse_number(k, val, &d, why, wl);
		if (e)
			return e;
		rxb_store_uint(field, k->size, (uint64_t)llround(d));
		return 0;
	case K_SECONDS_MS:
	case K_RTT_MS:
		e = parse_number(k, val, &d, why, wl);
		if (e)
			return e;
		rxb_store_uint(field, k->size, (uint64_t)llround(d * 1000.0));
		return 0;
	}
	return fail(why, wl, -EINVAL, "internal: key type %d", (int)k->type);
}

static const struct conf_key *find_key(const char *name, bool receiver, bool by_option)
{
	for (size_t i = 0; i < RXB_ARRAY_SIZE(keys); i++) {
		const char *n = by_option ? keys[i].opt : keys[i].key;

		if (n && keys[i].receiver == receiver && strcmp(n, name) == 0)
			return &keys[i];
	}
	return NULL;
}

/* ------------------------------------------------------------ the file -- */

/* iniparser reports syntax errors through a process-wide callback: the
 * first message of a load is kept here, only around the call. */
static char ini_msg[160];

static int ini_errback(const char *fmt, ...)
{
	va_list ap;

	if (ini_msg[0])
		return 0;
	va_start(ap, fmt);
	vsnprintf(ini_msg, sizeof(ini_msg), fmt, ap);
	va_end(ap);
	for (char *p = ini_msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return 0;
}

static int ini_open(const char *text, size_t len, const char *name, dictionary **out,
		    char *err, size_t errlen)
{
	char path[64];
	dictionary *d = NULL;
	int fd, e;

	if (len > SHAPE_CONF_MAX_FILE)
		return fail(err, errlen, -EFBIG, "%s: larger than %d bytes", name,
			    SHAPE_CONF_MAX_FILE);
	if (memchr(text, '\0', len))
		return fail(err, errlen, -EINVAL, "%s: contains a NUL byte", name);
	fd = memfd_create("rxbneck-shape-conf", MFD_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "%s: memfd_create: %s", name, strerror(errno));
	e = rxb_write_all(fd, text, len);
	if (e) {
		close(fd);
		return fail(err, errlen, e, "%s: cannot copy: %s", name, strerror(-e));
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ini_msg[0] = '\0';
	iniparser_set_error_callback(ini_errback);
	d = iniparser_load(path);
	iniparser_set_error_callback(NULL);
	close(fd);
	if (!d || ini_msg[0]) {
		if (d)
			iniparser_freedict(d);
		return fail(err, errlen, -EINVAL, "%s: %s", name,
			    ini_msg[0] ? ini_msg : "not an INI file");
	}
	*out = d;
	return 0;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= SHAPE_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* Which receiver a section is: -1 for [shape], its index otherwise. */
static int section_target(const char *sec, struct shape_conf *c, const char *name,
			  char *err, size_t errlen)
{
	const char *rname;

	if (strcmp(sec, "shape") == 0)
		return -1;
	if (strncmp(sec, "receiver ", 9) != 0)
		return fail(err, errlen, -EINVAL, "%s: [%s]: unknown section (expected [shape] "
			    "or [receiver NAME])", name, sec);
	rname = sec + 9;
	if (!name_ok(rname))
		return fail(err, errlen, -EINVAL, "%s: [%s]: receiver names are 1..%d of a-z 0-9 "
			    "_ . -", name, sec, SHAPE_NAME_MAX - 1);
	for (unsigned i = 0; i < c->nrx; i++)
		if (strcmp(c->rx[i].name, rname) == 0)
			return (int)i;
	if (c->nrx == SHAPE_MAX_RECEIVERS)
		return fail(err, errlen, -E2BIG, "%s: [%s]: more than %d receivers", name, sec,
			    SHAPE_MAX_RECEIVERS);
	rx_defaults(&c->rx[c->nrx]);
	rxb_strlcpy(c->rx[c->nrx].name, rname, SHAPE_NAME_MAX);
	return (int)c->nrx++;
}

/* Apply every entry of the dictionary to @c. */
static int apply_dict(dictionary *d, struct shape_conf *c, const char *name, char *err,
		      size_t errlen)
{
	char why[200];

	for (ssize_t i = 0; i < d->size; i++) {
		const char *full = d->key[i], *colon, *key;
		char sec[SHAPE_NAME_MAX + 16];
		const struct conf_key *k;
		int t;

		if (!full)
			continue;
		colon = strchr(full, ':');
		if (!colon) {		/* a section line */
			if (section_target(full, c, name, err, errlen) < -1)
				return -EINVAL;
			continue;
		}
		key = colon + 1;
		if (colon == full)
			return fail(err, errlen, -EINVAL, "%s: %s: a key outside any section",
				    name, key);
		if ((size_t)(colon - full) >= sizeof(sec))
			return fail(err, errlen, -EINVAL, "%s: [%.*s...]: section name too long",
				    name, 20, full);
		memcpy(sec, full, (size_t)(colon - full));
		sec[colon - full] = '\0';
		t = section_target(sec, c, name, err, errlen);
		if (t < -1)
			return -EINVAL;
		k = find_key(key, t >= 0, false);
		if (!k)
			return fail(err, errlen, -EINVAL, "%s: [%s] %s: unknown key", name, sec, key);
		if (!d->val[i] || !*d->val[i])
			return fail(err, errlen, -EINVAL, "%s: [%s] %s: empty value", name, sec, key);
		if (set_value(k, d->val[i], c, t >= 0 ? &c->rx[t] : NULL, why, sizeof(why)))
			return fail(err, errlen, -EINVAL, "%s: [%s] %s = '%s': %s", name, sec, key,
				    d->val[i], why);
	}
	return 0;
}

int shape_conf_parse_ini(const char *text, size_t len, const char *name,
			 struct shape_conf *c, char *err, size_t errlen)
{
	struct shape_conf *tmp;
	dictionary *d = NULL;
	int e;

	e = ini_open(text, len, name, &d, err, errlen);
	if (e)
		return e;
	tmp = malloc(sizeof(*tmp));
	if (!tmp) {
		iniparser_freedict(d);
		return fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	}
	*tmp = *c;
	e = apply_dict(d, tmp, name, err, errlen);
	iniparser_freedict(d);
	if (!e)
		*c = *tmp;
	free(tmp);
	return e;
}

int shape_conf_load(const char *path, struct shape_conf *c, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	size_t len;
	int fd, e;

	/* Never blocking: a FIFO given as the file is refused below, not waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		e = -errno;
		close(fd);
		return fail(err, errlen, e, "%s: %s", path, strerror(-e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, -EINVAL, "%s: not a regular file", path);
	}
	buf = malloc(SHAPE_CONF_MAX_FILE);
	if (!buf) {
		close(fd);
		return fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	e = rxb_read_all(fd, buf, SHAPE_CONF_MAX_FILE, &len);
	close(fd);
	if (e == -EFBIG)
		e = fail(err, errlen, e, "%s: larger than %d bytes", path, SHAPE_CONF_MAX_FILE);
	else if (e)
		e = fail(err, errlen, e, "%s: %s", path, strerror(-e));
	else
		e = shape_conf_parse_ini(buf, len, path, c, err, errlen);
	free(buf);
	return e;
}

/* ----------------------------------------------------- the command line -- */

enum {
	OPT_CONFIG = 'c', OPT_DRY_RUN = 'n', OPT_JSON = 'j', OPT_HELP = 'h', OPT_VERSION = 'V',
	OPT_CLEANUP = 0x100,
	OPT_KEY = 0x200,	/* + index into keys[] */
};

/* The option table: the fixed options, then one per key. */
static void build_longopts(struct option *o)
{
	static const struct option fixed[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "cleanup", no_argument, NULL, OPT_CLEANUP },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
	};
	size_t n = RXB_ARRAY_SIZE(fixed);

	memcpy(o, fixed, sizeof(fixed));
	for (size_t i = 0; i < RXB_ARRAY_SIZE(keys); i++)
		o[n++] = (struct option){ keys[i].opt, required_argument, NULL,
					  OPT_KEY + (int)i };
	o[n] = (struct option){ 0 };
}

/* A receiver started by --receiver: named HOST/FLOW_PORT once complete. */
static void name_cli_receiver(struct shape_receiver_conf *r)
{
	char name[SHAPE_NAME_MAX];
	int n = snprintf(name, sizeof(name), "%s/%u", r->host, r->flow_port);

	if (n < 0 || (size_t)n >= sizeof(name))	/* a long host name: keep its tail */
		snprintf(name, sizeof(name), "...%s/%u",
			 r->host + strlen(r->host) - (SHAPE_NAME_MAX - 12), r->flow_port);
	rxb_strlcpy(r->name, name, sizeof(r->name));
}

static int cli_key(const struct conf_key *k, const char *arg, struct shape_conf *c,
		   int *cur, char *err, size_t errlen)
{
	char why[200];

	if (k->receiver && k->type == K_DAEMON) {
		if (c->nrx == SHAPE_MAX_RECEIVERS)
			return fail(err, errlen, -E2BIG, "more than %d receivers",
				    SHAPE_MAX_RECEIVERS);
		*cur = (int)c->nrx++;
		rx_defaults(&c->rx[*cur]);
	} else if (k->receiver && *cur < 0) {
		return fail(err, errlen, -EINVAL, "--%s belongs to a receiver: give it after "
			    "--receiver HOST[:PORT]", k->opt);
	}
	if (set_value(k, arg, c, k->receiver ? &c->rx[*cur] : NULL, why, sizeof(why)))
		return fail(err, errlen, -EINVAL, "--%s '%s': %s", k->opt, arg, why);
	return 0;
}

/* First pass: only --config, so that the file comes before the options. */
static int cli_config_path(int argc, char **argv, const struct option *lo,
			   struct shape_cli *cli, char *err, size_t errlen)
{
	int opt;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:njhV", lo, NULL)) != -1) {
		if (opt != OPT_CONFIG)
			continue;
		if (strlen(optarg) >= sizeof(cli->config_path))
			return fail(err, errlen, -ENAMETOOLONG, "--config: path too long");
		rxb_strlcpy(cli->config_path, optarg, sizeof(cli->config_path));
	}
	return 0;
}

int shape_conf_parse_args(int argc, char **argv, struct shape_conf *c,
			  struct shape_cli *cli, char *err, size_t errlen)
{
	struct option lo[RXB_ARRAY_SIZE(keys) + 8];
	struct shape_conf *tmp;
	int opt, cur = -1, e = 0, first_cli_rx;

	memset(cli, 0, sizeof(*cli));
	build_longopts(lo);
	e = cli_config_path(argc, argv, lo, cli, err, errlen);
	if (e)
		return e;
	tmp = malloc(sizeof(*tmp));
	if (!tmp)
		return fail(err, errlen, -ENOMEM, "out of memory");
	*tmp = *c;
	if (cli->config_path[0])
		e = shape_conf_load(cli->config_path, tmp, err, errlen);
	first_cli_rx = (int)tmp->nrx;
	optind = 0;
	opterr = 0;
	while (!e && (opt = getopt_long(argc, argv, ":c:njhV", lo, NULL)) != -1) {
		switch (opt) {
		case OPT_CONFIG: break;
		case OPT_DRY_RUN: cli->dry_run = true; break;
		case OPT_JSON: cli->json = true; break;
		case OPT_CLEANUP: cli->cleanup = true; break;
		case OPT_HELP: cli->help = true; break;
		case OPT_VERSION: cli->version = true; break;
		case ':':
			e = fail(err, errlen, -EINVAL, "option '%s' needs a value", argv[optind - 1]);
			break;
		case '?':
			e = fail(err, errlen, -EINVAL, "unknown option '%s'", argv[optind - 1]);
			break;
		default:
			e = cli_key(&keys[opt - OPT_KEY], optarg, tmp, &cur, err, errlen);
			break;
		}
	}
	if (!e && optind < argc)
		e = fail(err, errlen, -EINVAL, "unexpected argument '%s'", argv[optind]);
	for (int i = first_cli_rx; !e && i < (int)tmp->nrx; i++)
		name_cli_receiver(&tmp->rx[i]);
	if (!e)
		*c = *tmp;
	free(tmp);
	return e;
}

/* ------------------------------------------------------------- checks -- */

static bool same_addr(const char *a, const char *b)
{
	unsigned char x[sizeof(struct in6_addr)], y[sizeof(struct in6_addr)];
	int fa = strchr(a, ':') ? AF_INET6 : AF_INET, fb = strchr(b, ':') ? AF_INET6 : AF_INET;

	if (fa != fb || inet_pton(fa, a, x) != 1 || inet_pton(fb, b, y) != 1)
		return false;
	return memcmp(x, y, fa == AF_INET ? 4 : 16) == 0;
}

int shape_conf_check(const struct shape_conf *c, bool cleanup_only, char *err, size_t errlen)
{
	if (c->nrx == 0 && !cleanup_only)
		return fail(err, errlen, -EINVAL, "no receiver: give --receiver HOST[:PORT] "
			    "--flow-port PORT, or a [receiver NAME] section in --config");
	for (unsigned i = 0; i < c->nrx; i++) {
		const struct shape_receiver_conf *r = &c->rx[i];

		if (!r->host[0])
			return fail(err, errlen, -EINVAL, "receiver %s: no daemon (HOST[:PORT])",
				    r->name);
		if (!r->flow_port)
			return fail(err, errlen, -EINVAL, "receiver %s: no flow port (--flow-port "
				    "PORT, or flow_port in its section)", r->name);
		for (unsigned j = 0; j < i; j++) {
			const struct shape_receiver_conf *o = &c->rx[j];

			if (strcmp(o->name, r->name) == 0)
				return fail(err, errlen, -EINVAL, "two receivers named %s", r->name);
			if (o->flow_port != r->flow_port || o->proto != r->proto)
				continue;
			for (unsigned a = 0; a < r->naddr; a++)
				for (unsigned b = 0; b < o->naddr; b++)
					if (same_addr(r->addr[a], o->addr[b]))
						return fail(err, errlen, -EINVAL,
							    "receivers %s and %s both shape %s "
							    "port %u", o->name, r->name,
							    r->addr[a], r->flow_port);
		}
	}
	if (c->fallback == SHAPE_FALLBACK_RATE && c->fallback_bps == 0)
		return fail(err, errlen, -EINVAL, "fallback rate 0");
	return 0;
}

void shape_conf_describe(char *buf, size_t size, bool receiver_keys)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < RXB_ARRAY_SIZE(keys) && len < size; i++) {
		const struct conf_key *k = &keys[i];
		char lhs[64];
		int n;

		if (k->receiver != receiver_keys)
			continue;
		snprintf(lhs, sizeof(lhs), "--%s %s", k->opt, k->arg);
		n = snprintf(buf + len, size - len, "  %-27s %s = ...; default %s\n", lhs, k->key,
			     k->def);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}
