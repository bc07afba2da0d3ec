// SPDX-License-Identifier: GPL-2.0-or-later
/* The state directory and the learned-costs history. See state.h. */
#include "daemon/model/state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"

#define TMP_FILE	STATE_FILE ".tmp"

static void set_err(struct state *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(struct state *s, int err, const char *fmt, ...)
{
	char what[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(s->err, sizeof(s->err), "%s: %s", what, strerror(err));
	rxb_warn("state: %s", s->err);
}

/* ---------------------------------------------------------------- lines -- */

static int parse_value(const char *key, const char *val, struct state_entry *e)
{
	struct learn *l = &e->learn;
	uint64_t u;
	double d;

	if (!strcmp(key, "port")) {
		if (rxb_parse_u64(val, 1, 65535, &u))
			return -EINVAL;
		e->port = (uint16_t)u;
		return 0;
	}
	if (!strcmp(key, "saved"))
		return rxb_parse_u64(val, 0, UINT64_MAX, &e->saved_unix_s) ? -EINVAL : 0;
	if (!strcmp(key, "rcvbuf")) {
		if (rxb_parse_u64(val, 1, UINT32_MAX, &u))
			return -EINVAL;
		l->rcvbuf_bytes = (uint32_t)u;
		return 0;
	}
	if (!strcmp(key, "napi_dev")) {
		if (!val[0] || strlen(val) >= sizeof(l->napi_dev))
			return -EINVAL;
		rxb_strlcpy(l->napi_dev, val, sizeof(l->napi_dev));
		return 0;
	}
	if (!strcmp(key, "cpus")) {
		const char *p = val;

		while (*p && l->ncpus < LEARN_MAX_CPUS) {
			char *end;
			long cpu = strtol(p, &end, 10);

			if (end == p || *end != ':' || cpu < 0 || cpu >= RXB_MAX_CPUS)
				return -EINVAL;
			p = end + 1;
			d = strtod(p, &end);
			if (end == p || !(d > 0 && d <= 1))
				return -EINVAL;
			l->cpu[l->ncpus] = (int)cpu;
			l->cpu_share[l->ncpus++] = d;
			p = end;
			if (*p == ',')
				p++;
			else if (*p)
				return -EINVAL;
		}
		return *p ? -EINVAL : 0;
	}
	if (rxb_parse_double(val, 1e-9, 1e15, &d))
		return -EINVAL;
	if (!strcmp(key, "cpu_ns_per_pkt"))
		ewma_ratio_set(&l->cpu_ns_per_pkt, d, LEARN_MIN_PKTS);
	else if (!strcmp(key, "pkts_per_wakeup"))
		ewma_ratio_set(&l->pkts_per_wakeup, d, 1.0);
	else if (!strcmp(key, "truesize_per_pkt"))
		ewma_ratio_set(&l->truesize_per_pkt, d, LEARN_MIN_PKTS);
	else if (!strcmp(key, "napi_ns_per_poll"))
		ewma_ratio_set(&l->napi_ns_per_poll, d, LEARN_MIN_POLLS);
	else if (!strcmp(key, "napi_pkts_per_poll"))
		ewma_ratio_set(&l->napi_pkts_per_poll, d, LEARN_MIN_POLLS);
	else if (!strcmp(key, "napi_dgrams_per_skb"))
		ewma_ratio_set(&l->napi_dgrams_per_skb, d, LEARN_MIN_PKTS);
	else
		return -EINVAL;
	return 0;
}

/* Index of @key among the keys a line may carry, or -1. */
static int key_index(const char *key)
{
	static const char *const keys[] = {
		"port", "saved", "rcvbuf", "napi_dev", "cpus", "cpu_ns_per_pkt",
		"pkts_per_wakeup", "truesize_per_pkt", "napi_ns_per_poll",
		"napi_pkts_per_poll", "napi_dgrams_per_skb",
	};

	for (size_t i = 0; i < RXB_ARRAY_SIZE(keys); i++)
		if (!strcmp(key, keys[i]))
			return (int)i;
	return -1;
}

int state_parse_line(const char *line, struct state_entry *out)
{
	char buf[STATE_MAX_LINE + 1], *save = NULL, *tok;
	struct state_entry e;
	size_t len = strlen(line);
	unsigned seen = 0;

	if (len > STATE_MAX_LINE)
		return -EINVAL;
	memcpy(buf, line, len + 1);
	memset(&e, 0, sizeof(e));
	learn_init(&e.learn);
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		/* Each key once: a repeated one would merge (cpus) or override. */
		int k = key_index(tok);

		if (k < 0 || (seen & (1u << k)))
			return -EINVAL;
		seen |= 1u << k;
		if (parse_value(tok, eq + 1, &e))
			return -EINVAL;
	}
	/* A port and a receiver cost are the least that is useful. */
	if (!e.port || !e.learn.cpu_ns_per_pkt.ok)
		return -EINVAL;
	e.learn.origin = VALUE_HISTORY;
	*out = e;
	return 0;
}

static int add_ratio(char *buf, size_t size, const char *key, const struct ewma_ratio *r)
{
	double v = ewma_ratio_value(r);

	if (!(v > 0) || !isfinite(v))
		return snprintf(buf, size, "%s", "");
	return snprintf(buf, size, " %s=%.9g", key, v);
}

/*
 * The keys are the load-independent costs only: the off-CPU windows (and
 * everything else that depends on what shares the receiver's CPU) stay
 * out, as the next run's co-runners need not be this run's.
 */
int state_format_line(const struct state_entry *e, char *buf, size_t size)
{
	const struct learn *l = &e->learn;
	size_t len = 0;

#define APPEND(...) do {						\
		int n_ = snprintf(buf + (len < size ? len : size),	\
				  len < size ? size - len : 0, __VA_ARGS__); \
		if (n_ < 0)						\
			return n_;					\
		len += (size_t)n_;					\
	} while (0)
#define APPEND_RATIO(key, r) do {					\
		int n_ = add_ratio(buf + (len < size ? len : size),	\
				   len < size ? size - len : 0, key, r); \
		if (n_ < 0)						\
			return n_;					\
		len += (size_t)n_;					\
	} while (0)

	APPEND("port=%u saved=%llu", e->port, (unsigned long long)e->saved_unix_s);
	APPEND_RATIO("cpu_ns_per_pkt", &l->cpu_ns_per_pkt);
	APPEND_RATIO("pkts_per_wakeup", &l->pkts_per_wakeup);
	APPEND_RATIO("truesize_per_pkt", &l->truesize_per_pkt);
	if (l->rcvbuf_bytes)
		APPEND(" rcvbuf=%u", l->rcvbuf_bytes);
	for (int i = 0; i < l->ncpus && i < LEARN_MAX_CPUS; i++)
		APPEND("%s%d:%.9g", i ? "," : " cpus=", l->cpu[i], l->cpu_share[i]);
	if (l->napi_dev[0]) {
		APPEND(" napi_dev=%s", l->napi_dev);
		APPEND_RATIO("napi_ns_per_poll", &l->napi_ns_per_poll);
		APPEND_RATIO("napi_pkts_per_poll", &l->napi_pkts_per_poll);
		APPEND_RATIO("napi_dgrams_per_skb", &l->napi_dgrams_per_skb);
	}
	APPEND("\n");
#undef APPEND
#undef APPEND_RATIO
	return (int)len;
}

/* ------------------------------------------------------------- the file -- */

/* The slot for @port: its own, a free one, or the oldest one. */
static struct state_entry *slot_for(struct state *s, uint16_t port)
{
	int oldest = 0;

	for (int i = 0; i < s->n; i++)
		if (s->v[i].port == port)
			return &s->v[i];
	if (s->n < STATE_MAX_PORTS)
		return &s->v[s->n++];
	for (int i = 1; i < s->n; i++)
		if (s->v[i].saved_unix_s < s->v[oldest].saved_unix_s)
			oldest = i;
	return &s->v[oldest];
}


static const char *type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "FIFO";
	case S_IFSOCK:
		return "socket";
	case S_IFCHR:
		return "character device";
	case S_IFBLK:
		return "block device";
	case S_IFDIR:
		return "directory";
	case S_IFLNK:
		return "symbolic link";
	}
	return "special file";
}

/*
 * Open @name in the state directory for reading: never a symlink, never
 * blocking (a FIFO put in its place must not hang the daemon), only a
 * regular file of at most STATE_MAX_FILE bytes. The fd, or -errno with
 * the problem in @why.
 */
static int open_regular(struct state *s, const char *name, char *why, size_t wlen)
{
	struct stat st;
	int fd = rxb_open_regular(s->dirfd, name, STATE_MAX_FILE, &st);

	if (fd == -ELOOP)
		snprintf(why, wlen, "%s/%s is a symbolic link: ignored", s->dir, name);
	else if (fd == -EINVAL)
		snprintf(why, wlen, "%s/%s is a %s, not a regular file: ignored (the next save "
			 "replaces it)", s->dir, name, type_name(st.st_mode));
	else if (fd == -EFBIG)
		snprintf(why, wlen, "reading %s/%s: too large (more than %d bytes)", s->dir, name,
			 STATE_MAX_FILE);
	else if (fd < 0)
		snprintf(why, wlen, "reading %s/%s: %s", s->dir, name, strerror(-fd));
	return fd;
}

static int read_file(struct state *s, char **text, size_t *len, char *why, size_t wlen)
{
	int fd = open_regular(s, STATE_FILE, why, wlen);
	int err;

	if (fd < 0)
		return fd;
	/* To the end, not to st_size: another writer may have grown it. */
	err = rxb_read_fd_grow(fd, STATE_MAX_FILE, text, len);
	close(fd);
	if (err == -EFBIG)
		snprintf(why, wlen, "reading %s/%s: too large (more than %d bytes)", s->dir,
			 STATE_FILE, STATE_MAX_FILE);
	else if (err)
		snprintf(why, wlen, "reading %s/%s: %s", s->dir, STATE_FILE, strerror(-err));
	return err;
}

int state_load_text(struct state *s, char *text, size_t len)
{
	char *line, *save = NULL;
	int lineno = 0, bad = 0;

	/* Lines end at '\n'; a NUL ends the text (the file is text). */
	if (memchr(text, '\0', len))
		len = strlen(text);
	text[len] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct state_entry e;

		lineno++;
		if (line[0] == '#' || !line[0])
			continue;
		if (state_parse_line(line, &e) || s->n == STATE_MAX_PORTS) {
			bad++;
			continue;
		}
		*slot_for(s, e.port) = e;
	}
	return bad;
}

static void load(struct state *s)
{
	char *text = NULL, why[STATE_ERR_LEN];
	size_t len = 0;
	int err = read_file(s, &text, &len, why, sizeof(why)), bad;

	if (err == -ENOENT)
		return;
	if (err) {
		rxb_strlcpy(s->err, why, sizeof(s->err));
		rxb_warn("state: %s", s->err);
		return;
	}
	bad = state_load_text(s, text, len);
	if (bad)
		rxb_warn("state: %s/%s: %d lines skipped (unreadable or too many)",
			 s->dir, STATE_FILE, bad);
	rxb_info("state: %d ports with learned costs in %s/%s", s->n, s->dir, STATE_FILE);
	s->dirty = false;
	free(text);
}

int state_open(struct state *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	rxb_strlcpy(s->dir, dir, sizeof(s->dir));
	if (mkdir(dir, 0750) && errno != EEXIST) {
		int err = errno;

		set_err(s, err, "creating the state directory %s", dir);
		return -err;
	}
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		int err = errno;

		set_err(s, err, "opening the state directory %s", dir);
		return -err;
	}
	load(s);
	return 0;
}

void state_close(struct state *s)
{
	if (s->dirfd < 0)
		return;
	state_save(s);
	close(s->dirfd);
	s->dirfd = -1;
}

bool state_history_newest(struct state *s, uint16_t not_port, struct learn *out,
			  uint16_t *port_out)
{
	int best = -1;

	for (int i = 0; i < s->n; i++)
		if (s->v[i].port != not_port &&
		    (best < 0 || s->v[i].saved_unix_s > s->v[best].saved_unix_s))
			best = i;
	if (best < 0)
		return false;
	*port_out = s->v[best].port;
	return state_history_get(s, *port_out, out);
}

bool state_history_get(struct state *s, uint16_t port, struct learn *out)
{
	uint64_t now = rxb_wall_s();

	for (int i = 0; i < s->n; i++) {
		if (s->v[i].port != port)
			continue;
		*out = s->v[i].learn;
		out->origin = VALUE_HISTORY;
		out->history_age_s = now > s->v[i].saved_unix_s ? now - s->v[i].saved_unix_s : 0;
		return true;
	}
	return false;
}

void state_history_put(struct state *s, uint16_t port, const struct learn *l)
{
	struct state_entry *e;

	if (!l->cpu_ns_per_pkt.ok)
		return;		/* nothing worth keeping */
	e = slot_for(s, port);
	e->port = port;
	e->saved_unix_s = rxb_wall_s();
	e->learn = *l;
	s->dirty = true;
}

int state_save(struct state *s)
{
	static const char head[] =
		"# rxbneckd: receive-path costs learned per port (docs/daemon.md).\n"
		"# Written by the daemon; edits are lost.\n";
	char text[sizeof(head) + STATE_MAX_PORTS * (STATE_MAX_LINE + 1)];
	size_t len = sizeof(head) - 1;
	int err;

	if (s->dirfd < 0 || !s->dirty)
		return 0;
	memcpy(text, head, len);
	for (int i = 0; i < s->n; i++) {
		int n = state_format_line(&s->v[i], text + len, STATE_MAX_LINE + 1);

		if (n > 0 && n <= STATE_MAX_LINE)
			len += (size_t)n;
	}
	err = rxb_replace_file(s->dirfd, STATE_FILE, TMP_FILE, text, len, 0640);
	if (err) {
		set_err(s, -err, "writing %s/%s", s->dir, STATE_FILE);
		s->save_failures++;
		return err;
	}
	if (s->err[0])
		rxb_notice("state: %s/%s saved again", s->dir, STATE_FILE);
	s->dirty = false;
	s->saves++;
	s->err[0] = '\0';
	return 0;
}
