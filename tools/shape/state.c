// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneck-shape's records of what it created. See state.h. */
#include "tools/shape/state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/util.h"
#include "tools/shape/util.h"

#define MAGIC "rxbneck-shape-state 1"

int shape_state_format(const struct shape_state *s, char *buf, size_t size)
{
	size_t len = 0;
	int n;

	n = snprintf(buf, size, MAGIC "\npid %d\nnetns %llu\nifindex %d\ndev %s\nhandle %x\n"
		     "found %s\n", s->pid, (unsigned long long)s->netns_ino, s->ifindex, s->dev,
		     s->handle, s->found_kind[0] ? s->found_kind : "-");
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	len = (size_t)n;
	for (unsigned i = 0; i < s->ncls; i++) {
		const struct shape_state_class *c = &s->cls[i];

		n = snprintf(buf + len, size - len, "class %u %s %u %s\n", c->minor,
			     c->proto == IPPROTO_TCP ? "tcp" : "udp", c->flow_port, c->receiver);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

/* A word of printable non-blank ASCII, copied into @out of @size. */
static int word(const char *s, char *out, size_t size)
{
	size_t n = strlen(s);

	if (n == 0 || n >= size)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return -EINVAL;
	memcpy(out, s, n + 1);
	return 0;
}

static int parse_class(char *args, struct shape_state *s, char *err, size_t el, int ln)
{
	struct shape_state_class *c;
	char *tok[4], *save = NULL;
	uint64_t v;
	int n = 0;

	for (char *t = strtok_r(args, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (n < 4)
			tok[n++] = t;
		else
			return rxb_parse_error(err, el, ln, "class: too many fields");
	if (n != 4)
		return rxb_parse_error(err, el, ln, "class: expected MINOR PROTO PORT RECEIVER");
	if (s->ncls == SHAPE_MAX_RECEIVERS)
		return rxb_parse_error(err, el, ln, "more than %d classes", SHAPE_MAX_RECEIVERS);
	c = &s->cls[s->ncls];
	if (rxb_parse_u64(tok[0], 1, 0xffff, &v))
		return rxb_parse_error(err, el, ln, "class: bad minor '%s'", tok[0]);
	c->minor = (uint16_t)v;
	for (unsigned i = 0; i < s->ncls; i++)
		if (s->cls[i].minor == c->minor)
			return rxb_parse_error(err, el, ln, "class %u twice", c->minor);
	if (strcmp(tok[1], "udp") == 0)
		c->proto = IPPROTO_UDP;
	else if (strcmp(tok[1], "tcp") == 0)
		c->proto = IPPROTO_TCP;
	else
		return rxb_parse_error(err, el, ln, "class: bad protocol '%s'", tok[1]);
	if (rxb_parse_u64(tok[2], 1, 65535, &v))
		return rxb_parse_error(err, el, ln, "class: bad port '%s'", tok[2]);
	c->flow_port = (uint16_t)v;
	if (word(tok[3], c->receiver, sizeof(c->receiver)))
		return rxb_parse_error(err, el, ln, "class: bad receiver name");
	s->ncls++;
	return 0;
}

/* One "key value" line; @seen collects the keys given so far. */
static int parse_line(char *line, int ln, struct shape_state *s, unsigned *seen, char *err,
		      size_t el)
{
	static const char *const names[] = { "pid", "netns", "ifindex", "dev", "handle", "found" };
	char *sp = strchr(line, ' ');
	uint64_t v;
	unsigned k;

	if (!sp || sp == line || !sp[1])
		return rxb_parse_error(err, el, ln, "expected KEY VALUE");
	*sp = '\0';
	if (strcmp(line, "class") == 0)
		return parse_class(sp + 1, s, err, el, ln);
	for (k = 0; k < RXB_ARRAY_SIZE(names) && strcmp(line, names[k]) != 0; k++)
		;
	if (k == RXB_ARRAY_SIZE(names))
		return rxb_parse_error(err, el, ln, "unknown key '%.32s'", line);
	if (*seen & (1u << k))
		return rxb_parse_error(err, el, ln, "%s twice", line);
	*seen |= 1u << k;
	switch (k) {
	case 0:
	case 2:
		if (rxb_parse_u64(sp + 1, 1, INT32_MAX, &v))
			return rxb_parse_error(err, el, ln, "bad %s", names[k]);
		*(k == 0 ? &s->pid : &s->ifindex) = (int)v;
		return 0;
	case 1:
		if (rxb_parse_u64(sp + 1, 1, UINT64_MAX, &v))
			return rxb_parse_error(err, el, ln, "bad netns");
		s->netns_ino = v;
		return 0;
	case 3:
		if (word(sp + 1, s->dev, sizeof(s->dev)) || strchr(s->dev, '/'))
			return rxb_parse_error(err, el, ln, "bad device name");
		return 0;
	case 4:
		if (shape_util_parse_handle(sp + 1, &s->handle))
			return rxb_parse_error(err, el, ln, "bad handle (hex 1..fffe)");
		return 0;
	default:
		if (word(sp + 1, s->found_kind, sizeof(s->found_kind)))
			return rxb_parse_error(err, el, ln, "bad qdisc kind");
		if (strcmp(s->found_kind, "-") == 0)
			s->found_kind[0] = '\0';
		return 0;
	}
}

int shape_state_parse(const char *text, size_t len, struct shape_state *out, char *err,
		      size_t errlen)
{
	struct shape_state s;
	char line[256];
	unsigned seen = 0;
	size_t pos = 0;
	int ln = 0, e;

	memset(&s, 0, sizeof(s));
	if (len > SHAPE_STATE_MAX_FILE)
		return rxb_parse_error(err, errlen, 0, "larger than %d bytes", SHAPE_STATE_MAX_FILE);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		ln++;
		if (n >= sizeof(line))
			return rxb_parse_error(err, errlen, ln, "line too long");
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + (nl ? 1 : 0);
		if (strlen(line) != n)
			return rxb_parse_error(err, errlen, ln, "NUL byte");
		if (ln == 1) {
			if (strcmp(line, MAGIC) != 0)
				return rxb_parse_error(err, errlen, ln, "not a state file (expected '" MAGIC "')");
			continue;
		}
		e = parse_line(line, ln, &s, &seen, err, errlen);
		if (e)
			return e;
	}
	if (ln == 0)
		return rxb_parse_error(err, errlen, 0, "empty");
	if (seen != 0x3f)
		return rxb_parse_error(err, errlen, ln, "incomplete: pid, netns, ifindex, dev, handle and "
			    "found are required");
	*out = s;
	return 0;
}

int shape_state_path(char *buf, size_t size, const char *dir, uint64_t netns_ino,
		     const char *dev, const char *ext)
{
	int n = snprintf(buf, size, "%s/net-%llu-%s.%s", dir, (unsigned long long)netns_ino,
			 dev, ext);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int shape_state_netns(uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st) < 0)
		return -errno;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

static int ensure_dir(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int shape_state_lock(const char *dir, uint64_t netns_ino, const char *dev, int *fd)
{
	char path[SHAPE_PATH_MAX + 64];
	int e, f;

	e = ensure_dir(dir);
	if (!e)
		e = shape_state_path(path, sizeof(path), dir, netns_ino, dev, "lock");
	if (e)
		return e;
	f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (f < 0)
		return -errno;
	if (flock(f, LOCK_EX | LOCK_NB) < 0) {
		e = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(f);
		return e;
	}
	*fd = f;
	return 0;
}

int shape_state_write(const char *dir, const struct shape_state *s)
{
	char path[SHAPE_PATH_MAX + 64], tmp[SHAPE_PATH_MAX + 72], buf[SHAPE_STATE_MAX_FILE];
	int len, fd, e;

	len = shape_state_format(s, buf, sizeof(buf));
	if (len < 0)
		return len;
	e = ensure_dir(dir);
	if (!e)
		e = shape_state_path(path, sizeof(path), dir, s->netns_ino, s->dev, "state");
	if (!e)
		e = shape_state_path(tmp, sizeof(tmp), dir, s->netns_ino, s->dev, "state.tmp");
	if (e)
		return e;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	e = rxb_write_all(fd, buf, (size_t)len);
	if (close(fd) < 0 && !e)
		e = -errno;
	if (!e && rename(tmp, path) < 0)
		e = -errno;
	if (e)
		unlink(tmp);
	return e;
}

int shape_state_read(const char *dir, uint64_t netns_ino, const char *dev,
		     struct shape_state *s, char *err, size_t errlen)
{
	char path[SHAPE_PATH_MAX + 64], buf[SHAPE_STATE_MAX_FILE + 1];
	struct stat st;
	size_t len;
	int fd, e;

	e = shape_state_path(path, sizeof(path), dir, netns_ino, dev, "state");
	if (e)
		return e;
	fd = rxb_open_regular(AT_FDCWD, path, 0, &st);
	if (fd == -EINVAL)
		snprintf(err, errlen, "%s: not a regular file", path);
	if (fd < 0)
		return fd;
	/* One byte more than the parser takes: it then says the file is too large. */
	e = rxb_read_all(fd, buf, sizeof(buf), &len);
	close(fd);
	if (e == -EFBIG)
		len = sizeof(buf);
	else if (e)
		return e;
	return shape_state_parse(buf, len, s, err, errlen);
}

int shape_state_remove(const char *dir, uint64_t netns_ino, const char *dev)
{
	char path[SHAPE_PATH_MAX + 64];
	int e = shape_state_path(path, sizeof(path), dir, netns_ino, dev, "state");

	if (e)
		return e;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int shape_state_list(const char *dir, uint64_t netns_ino, char (*devs)[IF_NAMESIZE],
		     unsigned max)
{
	char prefix[48];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "net-%llu-", (unsigned long long)netns_ino);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		size_t pl = strlen(prefix), len = strlen(de->d_name);
		const char *dev = de->d_name + pl;

		if (len <= pl + 6 || strncmp(de->d_name, prefix, pl) != 0 ||
		    strcmp(de->d_name + len - 6, ".state") != 0)
			continue;
		if (len - pl - 6 >= IF_NAMESIZE)
			continue;
		memcpy(devs[n], dev, len - pl - 6);
		devs[n][len - pl - 6] = '\0';
		n++;
	}
	closedir(d);
	return (int)n;
}
