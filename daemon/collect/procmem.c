// SPDX-License-Identifier: GPL-2.0-or-later
/* Host memory figures for buffer adaptation. See procmem.h. */
#include "daemon/collect/procmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/collect/procfs.h"

#define MAX_KB		(1ULL << 54)	/* 16 EiB in kB: beyond any host */
#define MAX_SYSCTL	(1ULL << 62)

/*
 * Decimal digits at *@p (leading blanks skipped) into *@v, at most @max;
 * *@p moves past them. 0, -EINVAL (no digit) or -ERANGE.
 */
static int take_u64(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (max - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = x;
	return 0;
}

/* The next line, or NULL after the last. */
static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

/* "Key:   N kB" at the start of line @p: the value in bytes. */
static int meminfo_field(const char *p, const char *key, uint64_t *bytes, bool *seen)
{
	size_t kl = strlen(key);
	uint64_t kb;
	int err;

	if (strncmp(p, key, kl) || p[kl] != ':')
		return 0;
	p += kl + 1;
	err = take_u64(&p, MAX_KB, &kb);
	if (err)
		return err;
	*bytes = kb * 1024;
	*seen = true;
	return 0;
}

int procmem_parse_meminfo(const char *text, struct procmem_meminfo *m)
{
	bool total = false, avail = false;
	struct procmem_meminfo v = { 0 };

	for (const char *p = text; p && *p && !(total && avail); p = next_line(p)) {
		int err = meminfo_field(p, "MemTotal", &v.total_bytes, &total);

		if (!err)
			err = meminfo_field(p, "MemAvailable", &v.available_bytes, &avail);
		if (err)
			return err;
	}
	if (!total || !avail)
		return -ENOENT;
	if (!v.total_bytes)
		return -EINVAL;
	*m = v;
	return 0;
}

double procmem_utilisation(const struct procmem_meminfo *m)
{
	double a;

	if (!m->total_bytes)
		return 1.0;
	a = 1.0 - (double)m->available_bytes / (double)m->total_bytes;
	return a < 0.0 ? 0.0 : a > 1.0 ? 1.0 : a;
}

int procmem_parse_sockstat_udp(const char *text, uint64_t *inuse, uint64_t *mem_pages)
{
	static const char tag[] = "UDP:";

	for (const char *p = text; p && *p; p = next_line(p)) {
		uint64_t in = 0, mem = 0;
		bool have_in = false, have_mem = false;

		if (strncmp(p, tag, sizeof(tag) - 1))
			continue;
		p += sizeof(tag) - 1;
		/* "key value" pairs to the end of the line */
		while (*p && *p != '\n') {
			const char *w;
			size_t wl;

			while (*p == ' ' || *p == '\t')
				p++;
			w = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
			wl = (size_t)(p - w);
			if (!wl)
				break;
			if (wl == 5 && !strncmp(w, "inuse", 5))
				have_in = !take_u64(&p, MAX_SYSCTL, &in);
			else if (wl == 3 && !strncmp(w, "mem", 3))
				have_mem = !take_u64(&p, MAX_SYSCTL, &mem);
		}
		if (!have_in || !have_mem)
			return -ENOENT;
		*inuse = in;
		*mem_pages = mem;
		return 0;
	}
	return -ENOENT;
}

int procmem_parse_sysctl(const char *text, uint64_t *v, int n)
{
	const char *p = text;
	uint64_t tmp[3];
	int err;

	if (n < 1 || n > 3)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		err = take_u64(&p, MAX_SYSCTL, &tmp[i]);
		if (err)
			return err;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	memcpy(v, tmp, (size_t)n * sizeof(*v));
	return 0;
}

bool procmem_udp_pressure(const struct procmem_snap *s)
{
	return s->udp_valid && s->udp_limit_pages[1] &&
	       s->udp_mem_pages >= s->udp_limit_pages[1];
}

static int read_text(const char *path, char **text)
{
	return procfs_read_file(path, text, NULL);
}

int procmem_read(struct procmem_snap *s)
{
	char *t = NULL;
	long pg = sysconf(_SC_PAGESIZE);
	int err, first = 0;
	bool stat_ok = false;

	memset(s, 0, sizeof(*s));
	s->page_bytes = pg > 0 ? (uint64_t)pg : 4096;
	err = read_text("/proc/meminfo", &t);
	if (!err)
		err = procmem_parse_meminfo(t, &s->mem);
	s->mem_valid = !err;
	first = err;
	free(t);
	t = NULL;
	err = read_text("/proc/net/sockstat", &t);
	if (!err)
		err = procmem_parse_sockstat_udp(t, &s->udp_inuse, &s->udp_mem_pages);
	stat_ok = !err;
	first = first ? first : err;
	free(t);
	t = NULL;
	/* udp_mem is the initial network namespace's only: absent elsewhere. */
	err = read_text("/proc/sys/net/ipv4/udp_mem", &t);
	if (!err)
		err = procmem_parse_sysctl(t, s->udp_limit_pages, 3);
	s->udp_valid = stat_ok && !err;
	if (err != -ENOENT)
		first = first ? first : err;
	free(t);
	t = NULL;
	err = read_text("/proc/sys/net/core/rmem_max", &t);
	if (!err)
		err = procmem_parse_sysctl(t, &s->rmem_max_bytes, 1);
	if (err)
		s->rmem_max_bytes = 0;
	first = first ? first : err;
	free(t);
	return first;
}
