// SPDX-License-Identifier: GPL-2.0-or-later
/* /proc readers and parsers. See procfs.h. */
#include "daemon/collect/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "common/util.h"

#define PF_KTHREAD_FLAG 0x00200000	/* include/linux/sched.h */

int procfs_read_file(const char *path, char **text, size_t *len)
{
	return rxb_read_path(path, SIZE_MAX, text, len);
}

/* The line after @p (or NULL at the end). */
static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

/* Parse up to @max unsigned numbers from one line, in @base. */
static int parse_u64s(const char *p, uint64_t *v, int max, int base)
{
	int n = 0;

	while (n < max) {
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!isxdigit((unsigned char)*p))
			break;
		errno = 0;
		v[n] = strtoull(p, &end, base);
		if (end == p || errno)
			break;
		n++;
		p = end;
	}
	return n;
}

typedef int (*parse_fn)(const char *text, void *out, int max);

static int read_and_parse(const char *path, parse_fn fn, void *out, int max)
{
	char *text;
	int err = procfs_read_file(path, &text, NULL);

	if (err)
		return err;
	err = fn(text, out, max);
	free(text);
	return err;
}

/* ------------------------------------------------------- /proc/stat -- */

int procfs_parse_stat(const char *text, struct procfs_cpu_time *out, int max)
{
	int n = 0;

	for (const char *p = text; p && *p && n < max; p = next_line(p)) {
		uint64_t v[8] = { 0 };
		char *end;
		long cpu;

		if (strncmp(p, "cpu", 3) || !isdigit((unsigned char)p[3]))
			continue;
		cpu = strtol(p + 3, &end, 10);
		if (cpu < 0 || parse_u64s(end, v, 8, 10) < 4)
			continue;
		out[n++] = (struct procfs_cpu_time){
			.cpu = (int)cpu, .user = v[0], .nice = v[1], .system = v[2],
			.idle = v[3], .iowait = v[4], .irq = v[5],
			.softirq = v[6], .steal = v[7],
		};
	}
	return n;
}

int procfs_read_stat(struct procfs_cpu_time *out, int max)
{
	return read_and_parse("/proc/stat", (parse_fn)procfs_parse_stat, out, max);
}

/* ------------------------------------------- /proc/<pid>/task/<tid>/ -- */

int procfs_parse_task_stat(const char *text, struct procfs_task *t)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	uint64_t f[40];
	size_t clen;
	int n;

	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	clen = (size_t)(close - open - 1);
	if (clen >= sizeof(t->comm))
		clen = sizeof(t->comm) - 1;
	memcpy(t->comm, open + 1, clen);
	t->comm[clen] = '\0';
	t->state = close[2];
	if (!t->state || close[3] != ' ')
		return -EINVAL;
	/*
	 * Fields from 4 (ppid) on; numbers may be negative (priority, nice),
	 * which strtoull wraps harmlessly. f[i] is field i + 4.
	 */
	n = 0;
	for (const char *p = close + 4; *p && n < 40;) {
		char *end;

		f[n] = strtoull(p, &end, 10);
		if (end == p)
			break;
		n++;
		p = end;
		while (*p == ' ')
			p++;
	}
	if (n < 36)
		return -EINVAL;
	t->kthread = (f[9 - 4] & PF_KTHREAD_FLAG) != 0;
	t->cpu = (int)f[39 - 4];
	t->blkio_ticks = n > 42 - 4 ? f[42 - 4] : 0;
	return 0;
}

int procfs_parse_schedstat(const char *text, struct procfs_task *t)
{
	uint64_t v[3];

	if (parse_u64s(text, v, 3, 10) != 3)
		return -EINVAL;
	t->sum_exec_ns = v[0];
	t->run_delay_ns = v[1];
	t->pcount = v[2];
	t->have_schedstat = true;
	return 0;
}

int procfs_parse_task_status(const char *text, struct procfs_task *t)
{
	int found = 0;

	for (const char *p = text; p && *p; p = next_line(p)) {
		if (!strncmp(p, "voluntary_ctxt_switches:", 24)) {
			t->nvcsw = strtoull(p + 24, NULL, 10);
			found++;
		} else if (!strncmp(p, "nonvoluntary_ctxt_switches:", 27)) {
			t->nivcsw = strtoull(p + 27, NULL, 10);
			found++;
		}
	}
	return found == 2 ? 0 : -EINVAL;
}

int procfs_read_schedstat(uint32_t tid, uint64_t *sum_exec_ns, uint64_t *run_delay_ns,
			  uint64_t *pcount)
{
	char path[48], buf[128];
	struct procfs_task t;
	ssize_t n;
	int fd, err;

	/* Small and hot (every epoch, several tasks): no growable buffer. */
	snprintf(path, sizeof(path), "/proc/%u/schedstat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	err = procfs_parse_schedstat(buf, &t);
	if (err)
		return err;
	*sum_exec_ns = t.sum_exec_ns;
	*run_delay_ns = t.run_delay_ns;
	*pcount = t.pcount;
	return 0;
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* The file @dir/@name parsed into @t: 0, or the read's or the parser's -errno. */
static int read_parsed(const char *dir, const char *name,
		       int (*parse)(const char *text, struct procfs_task *t), struct procfs_task *t)
{
	char path[128], *text;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = procfs_read_file(path, &text, NULL);
	if (err)
		return err;
	err = parse(text, t);
	free(text);
	return err;
}

static int read_task(const char *dir, uint32_t tgid, uint32_t tid,
		     bool with_status, struct procfs_task *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->tgid = tgid;
	err = read_parsed(dir, "stat", procfs_parse_task_stat, t);
	if (err)
		return err;
	/* Optional: kernels without CONFIG_SCHED_INFO have no schedstat. */
	(void)read_parsed(dir, "schedstat", procfs_parse_schedstat, t);
	if (with_status)
		err = read_parsed(dir, "status", procfs_parse_task_status, t);
	return err;
}

static int walk_threads(uint32_t tgid, bool with_status,
			int (*fn)(void *arg, const struct procfs_task *t),
			void *arg)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", tgid);
	d = opendir(path);
	if (!d)
		return 0;	/* exited meanwhile */
	while ((de = readdir(d))) {
		struct procfs_task t;
		char dir[64];
		uint32_t tid;

		if (!is_number(de->d_name))
			continue;
		tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		snprintf(dir, sizeof(dir), "/proc/%u/task/%u", tgid, tid);
		if (read_task(dir, tgid, tid, with_status, &t))
			continue;
		ret = fn(arg, &t);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

int procfs_for_each_task(bool with_status,
			 int (*fn)(void *arg, const struct procfs_task *t),
			 void *arg)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		ret = walk_threads((uint32_t)strtoul(de->d_name, NULL, 10),
				   with_status, fn, arg);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

/* ------------------------------------------------- /proc/diskstats -- */

int procfs_parse_diskstats(const char *text, struct procfs_disk *out, int max)
{
	int n = 0;

	for (const char *p = text; p && *p && n < max; p = next_line(p)) {
		struct procfs_disk *d = &out[n];
		uint64_t v[11];
		char name[32];
		int off = 0;

		memset(d, 0, sizeof(*d));
		if (sscanf(p, " %u %u %31s%n", &d->major, &d->minor, name, &off) != 3)
			continue;
		/* reads, merged, sectors, ms, writes, merged, sectors, ms,
		 * in flight, io ms, weighted ms */
		if (parse_u64s(p + off, v, 11, 10) != 11)
			continue;
		rxb_strlcpy(d->name, name, sizeof(d->name));
		d->rd_ios = v[0];
		d->rd_ms = v[3];
		d->wr_ios = v[4];
		d->wr_ms = v[7];
		d->in_flight = v[8];
		d->io_ticks_ms = v[9];
		n++;
	}
	return n;
}

int procfs_read_diskstats(struct procfs_disk *out, int max)
{
	return read_and_parse("/proc/diskstats", (parse_fn)procfs_parse_diskstats,
			      out, max);
}

/* ------------------------------------------- /proc/net/udp and udp6 -- */

int procfs_parse_net_udp(const char *text, struct procfs_udp_sock *out, int max)
{
	int n = 0;

	/* The first line is the header. */
	for (const char *p = next_line(text); p && *p && n < max; p = next_line(p)) {
		char local[64], rem[64];
		unsigned long long txq, rxq, inode, drops;
		unsigned st, tr, uid;
		unsigned long long when, retr, timeout, ref;
		char ptr[32];
		const char *colon;

		if (sscanf(p, " %*u: %63s %63s %x %llx:%llx %x:%llx %llx %u %llu %llu %llu %31s %llu",
			   local, rem, &st, &txq, &rxq, &tr, &when, &retr, &uid,
			   &timeout, &inode, &ref, ptr, &drops) != 14)
			continue;
		colon = strrchr(local, ':');
		if (!colon)
			continue;
		out[n++] = (struct procfs_udp_sock){
			.port = (uint16_t)strtoul(colon + 1, NULL, 16),
			.rx_queue_bytes = rxq,
			.drops = drops,
			.inode = inode,
		};
	}
	return n;
}

int procfs_read_net_udp(struct procfs_udp_sock *out, int max)
{
	int n = read_and_parse("/proc/net/udp", (parse_fn)procfs_parse_net_udp,
			       out, max);
	int m;

	if (n < 0)
		return n;
	m = read_and_parse("/proc/net/udp6", (parse_fn)procfs_parse_net_udp,
			   out + n, max - n);
	return m < 0 ? n : n + m;	/* no IPv6 is fine */
}

/* ------------------------------------------ /proc/net/softnet_stat -- */

/* ------------------------------------ /proc/net/snmp and snmp6: UDP -- */

/* Add the value of column @name of the "Udp:" table (@head, @vals) to *@out. */
static int snmp_column(const char *head, const char *vals, const char *name, uint64_t *out)
{
	size_t nlen = strlen(name);
	const char *p = head + 4;	/* past "Udp:" */
	int col = 0, want = -1;

	for (;; col++) {
		size_t len;

		p += strspn(p, " ");
		len = strcspn(p, " \n");
		if (!len)
			break;
		if (len == nlen && !strncmp(p, name, len))
			want = col;
		p += len;
	}
	if (want < 0)
		return 0;
	p = vals + 4;
	for (col = 0;; col++) {
		unsigned long long v;
		char *end;

		p += strspn(p, " ");
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno)
			return -EINVAL;
		if (col == want) {
			*out += v;
			return 1;
		}
		p = end;
	}
}

int procfs_parse_snmp_udp(const char *text, struct procfs_udp_mib *out)
{
	int found = 0;

	for (const char *p = text; p && *p; p = next_line(p)) {
		const char *vals;
		unsigned long long v;
		int a, b;

		if (sscanf(p, "Udp6InDatagrams %llu", &v) == 1) {
			out->in_datagrams += v;
			found = 1;
		} else if (sscanf(p, "Udp6RcvbufErrors %llu", &v) == 1) {
			out->rcvbuf_errors += v;
			found = 1;
		}
		if (strncmp(p, "Udp: ", 5) || !isalpha((unsigned char)p[5]))
			continue;
		vals = next_line(p);
		if (!vals || strncmp(vals, "Udp: ", 5))
			return -EINVAL;
		a = snmp_column(p, vals, "InDatagrams", &out->in_datagrams);
		b = snmp_column(p, vals, "RcvbufErrors", &out->rcvbuf_errors);
		if (a < 0 || b < 0)
			return -EINVAL;
		found |= a;
	}
	return found;
}

int procfs_read_udp_mib(struct procfs_udp_mib *out)
{
	static const char *const files[] = { "/proc/net/snmp", "/proc/net/snmp6" };
	int found = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < RXB_ARRAY_SIZE(files); i++) {
		char *text;
		int err = procfs_read_file(files[i], &text, NULL);

		if (err == -ENOENT && i)
			continue;	/* no IPv6 */
		if (err)
			return err;
		err = procfs_parse_snmp_udp(text, out);
		free(text);
		if (err < 0)
			return err;
		found |= err;
	}
	return found ? 0 : -ENOENT;
}

int procfs_parse_softnet(const char *text, struct procfs_softnet *out, int max)
{
	int n = 0;

	for (const char *p = text; p && *p && n < max; p = next_line(p)) {
		uint64_t v[16];
		int k = parse_u64s(p, v, 16, 16);

		if (k < 3)
			continue;
		/* Since 5.x the 13th column is the CPU; before, the line index. */
		out[n] = (struct procfs_softnet){
			.cpu = k >= 13 ? (int)v[12] : n,
			.processed = v[0], .dropped = v[1], .time_squeeze = v[2],
		};
		n++;
	}
	return n;
}

int procfs_read_softnet(struct procfs_softnet *out, int max)
{
	return read_and_parse("/proc/net/softnet_stat", (parse_fn)procfs_parse_softnet,
			      out, max);
}

/* ------------------------------------------------- /proc/interrupts -- */

/* Number of CPU columns, from the header line. */
static int count_cpu_columns(const char *text)
{
	int n = 0;

	for (const char *p = text; *p && *p != '\n'; p++)
		if (!strncmp(p, "CPU", 3)) {
			n++;
			p += 2;
		}
	return n;
}

int procfs_parse_interrupts(const char *text, struct procfs_irq *out, int max)
{
	int ncpus = count_cpu_columns(text), n = 0;

	for (const char *p = next_line(text); p && *p && n < max; p = next_line(p)) {
		struct procfs_irq *q = &out[n];
		const char *colon = strchr(p, ':'), *eol = strchr(p, '\n');
		const char *s, *name;
		uint64_t sum = 0;
		char id[16];
		size_t idlen;

		if (!colon || (eol && colon > eol))
			continue;
		for (s = p; *s == ' '; s++)
			;
		idlen = (size_t)(colon - s);
		if (idlen == 0 || idlen >= sizeof(id))
			continue;
		memcpy(id, s, idlen);
		id[idlen] = '\0';
		s = colon + 1;
		for (int c = 0; c < ncpus; c++) {
			char *end;
			uint64_t v;

			while (*s == ' ')
				s++;
			v = strtoull(s, &end, 10);
			if (end == s)
				break;
			sum += v;
			s = end;
		}
		/* The action names are the last word(s) of the line. */
		name = eol ? eol : s + strlen(s);
		while (name > s && name[-1] == ' ')
			name--;
		while (name > s && name[-1] != ' ')
			name--;
		memset(q, 0, sizeof(*q));
		q->irq = is_number(id) ? atoi(id) : -1;
		if (q->irq >= 0) {
			size_t l = (size_t)((eol ? eol : name + strlen(name)) - name);

			if (l >= sizeof(q->name))
				l = sizeof(q->name) - 1;
			memcpy(q->name, name, l);
			q->name[l] = '\0';
		} else {
			rxb_strlcpy(q->name, id, sizeof(q->name));
		}
		q->count = sum;
		n++;
	}
	return n;
}

int procfs_read_interrupts(struct procfs_irq *out, int max)
{
	return read_and_parse("/proc/interrupts", (parse_fn)procfs_parse_interrupts,
			      out, max);
}

/* --------------------------------------------------- /proc/softirqs -- */

int procfs_parse_softirqs(const char *text, const char *vec, uint64_t *out,
			  int max)
{
	size_t vlen = strlen(vec);

	for (const char *p = next_line(text); p && *p; p = next_line(p)) {
		while (*p == ' ')
			p++;
		if (strncmp(p, vec, vlen) || p[vlen] != ':')
			continue;
		return parse_u64s(p + vlen + 1, out, max, 10);
	}
	return 0;
}

int procfs_read_softirqs(const char *vec, uint64_t *out, int max)
{
	char *text;
	int err = procfs_read_file("/proc/softirqs", &text, NULL);

	if (err)
		return err;
	err = procfs_parse_softirqs(text, vec, out, max);
	free(text);
	return err;
}

/* --------------------------------------------------- /proc/sys/ -- */

int procfs_parse_sysctl_u32(const char *text, uint32_t *out)
{
	size_t n = strspn(text, "0123456789");
	uint64_t v = 0;

	if (n == 0 || (text[n] && strcmp(text + n, "\n") != 0))
		return -EINVAL;
	if (n > 10)
		return -ERANGE;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(text[i] - '0');
	if (v > UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

uint32_t procfs_read_netdev_max_backlog(void)
{
	uint32_t v = 0;
	char *text;

	if (procfs_read_file("/proc/sys/net/core/netdev_max_backlog", &text, NULL))
		return 0;
	if (procfs_parse_sysctl_u32(text, &v))
		v = 0;
	free(text);
	return v;
}

/* ------------------------------------------ the kernel's configuration -- */

int procfs_parse_kconfig(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = text; *l; ) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);

		if (len > 7 + n && !strncmp(l, "CONFIG_", 7) &&
		    !strncmp(l + 7, name, n) && l[7 + n] == '=')
			return len == 7 + n + 2 && l[8 + n] == 'y';
		if (!end)
			break;
		l = end + 1;
	}
	return 0;
}

static long gz_read(void *src, void *dst, size_t room)
{
	int r = gzread(src, dst, room < INT_MAX ? (unsigned int)room : INT_MAX);

	return r < 0 ? -EIO : r;
}

/*
 * /proc/config.gz, whole, into a NUL-terminated buffer the caller frees;
 * refused past 64 MiB (no kernel config is near that; a bad stream could be).
 */
static int read_config_gz(char **text)
{
	gzFile gz = gzopen("/proc/config.gz", "rb");
	int err;

	*text = NULL;
	if (!gz)
		return errno ? -errno : -ENOMEM;
	err = rxb_read_grow(gz_read, gz, 64u << 20, text, NULL);
	gzclose(gz);
	return err;
}

int procfs_parse_kconfig_u64(const char *text, const char *name, uint64_t *v)
{
	size_t n = strlen(name);

	for (const char *l = text; *l; ) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);

		if (len >= 8 + n && !strncmp(l, "CONFIG_", 7) &&
		    !strncmp(l + 7, name, n) && l[7 + n] == '=') {
			uint64_t x = 0;
			size_t i = 8 + n;

			for (; i < len && l[i] >= '0' && l[i] <= '9'; i++) {
				if (x > (UINT64_MAX - 9) / 10)
					return -ERANGE;
				x = x * 10 + (uint64_t)(l[i] - '0');
			}
			if (i != len || i == 8 + n)
				return -EINVAL;
			*v = x;
			return 0;
		}
		if (!end)
			break;
		l = end + 1;
	}
	return -ENOENT;
}

/* The running kernel's configuration: /boot/config-<release>, else /proc/config.gz. */
static int kconfig_text(char **text)
{
	struct utsname u;
	char path[sizeof(u.release) + 16];
	int err = -ENOENT;

	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		err = procfs_read_file(path, text, NULL);
	}
	if (err)
		err = read_config_gz(text);
	return err ? -ENOENT : 0;
}

int procfs_read_kconfig(const char *name)
{
	char *text = NULL;
	int v;

	if (kconfig_text(&text))
		return -ENOENT;
	v = procfs_parse_kconfig(text, name);
	free(text);
	return v;
}

int procfs_read_kconfig_u64(const char *name, uint64_t *v)
{
	char *text = NULL;
	int err = kconfig_text(&text);

	if (!err)
		err = procfs_parse_kconfig_u64(text, name, v);
	free(text);
	return err;
}
