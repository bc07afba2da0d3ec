// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the configuration loader (daemon/config.c,
 * config_scan.c, config_value.c).
 *
 * The input is the file's bytes. Besides "no crash, no sanitizer report"
 * it checks properties:
 *  - a rejected file leaves the output untouched and yields one message
 *    that starts with the file name and has no line break;
 *  - an accepted file renders back (config_format of every key) to a file
 *    that loads to the same configuration (config_diff finds nothing);
 *  - an accepted file means the same to iniparser (config_scan.h: the
 *    dialect is a strict subset of iniparser's): iniparser reads the same
 *    sections, the same number of keys in each and the same values. The
 *    daemon does not link iniparser; only this check does.
 */
#include <errno.h>
#include <iniparser/iniparser.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/config.h"
#include "daemon/config_scan.h"
#include "tests/fuzz/fuzz_refused.h"

#define NAME "fuzz.conf"
#define MAX_ENTRIES 256

/* Render @cfg as a config file; returns its length, or 0 if it cannot. */
static size_t render(const struct rxb_config *cfg, char *out, size_t size)
{
	const char *const *secs = config_sections();
	size_t n, len = 0;
	const struct config_key *k = config_keys(&n);
	char val[CONFIG_MAX_LINE + 64];

	for (int s = 0; secs[s]; s++) {
		len += (size_t)snprintf(out + len, size - len, "[%s]\n", secs[s]);
		for (size_t i = 0; i < n; i++) {
			const char *q;
			int w;

			if (strcmp(k[i].section, secs[s]) != 0)
				continue;
			config_format(&k[i], cfg, val, sizeof(val));
			/* Always quoted, with the quote it does not contain (the
			 * loader never yields a value with both). */
			q = strchr(val, '"') ? "'" : "\"";
			w = snprintf(out + len, size - len, "%s=%s%s%s\n", k[i].key, q, val, q);
			/* A canonical form can be longer than what was written. */
			if ((size_t)w - 1 > CONFIG_MAX_LINE || (size_t)w >= size - len)
				return 0;
			len += (size_t)w;
		}
	}
	return len;
}

/* What config_scan() read from an accepted file. */
struct seen {
	int nsec, nent;
	char sec[MAX_ENTRIES][CONFIG_MAX_NAME + 1];
	int nkeys[MAX_ENTRIES];
	char key[MAX_ENTRIES][2 * CONFIG_MAX_NAME + 2];	/* "section:key" */
	char *val[MAX_ENTRIES];
};

static int seen_section(void *ctx, int line, const char *name)
{
	struct seen *s = ctx;

	(void)line;
	if (s->nsec == MAX_ENTRIES)
		abort();	/* an accepted file has at most one header per section */
	snprintf(s->sec[s->nsec++], sizeof(s->sec[0]), "%s", name);
	return 0;
}

static int seen_entry(void *ctx, int line, const char *section, const char *key,
		      const char *value)
{
	struct seen *s = ctx;

	(void)line;
	if (s->nent == MAX_ENTRIES || !s->nsec)
		abort();
	snprintf(s->key[s->nent], sizeof(s->key[0]), "%s:%s", section, key);
	s->val[s->nent] = strdup(value);
	if (!s->val[s->nent])
		abort();
	s->nkeys[s->nsec - 1]++;
	s->nent++;
	return 0;
}

static int ini_quiet(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

/* iniparser 4.1 reads only from a path: give it the bytes through a memfd. */
static dictionary *ini_load(const uint8_t *data, size_t size)
{
	char path[64];
	dictionary *d;
	int fd = memfd_create("fuzz-config", MFD_CLOEXEC);

	if (fd < 0 || rxb_write_all(fd, data, size)) {
		perror("fuzz_config: memfd");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	iniparser_set_error_callback(ini_quiet);
	d = iniparser_load(path);
	close(fd);
	return d;
}

static void compare_with_iniparser(const uint8_t *data, size_t size)
{
	static struct seen s;
	struct config_scan_ops ops = { .ctx = &s, .section = seen_section, .entry = seen_entry };
	char why[256];
	dictionary *d;
	int line;

	memset(&s, 0, sizeof(s));
	if (config_scan((const char *)data, size, &ops, &line, why, sizeof(why)) != 0)
		abort();	/* config_parse() accepted it */
	d = ini_load(data, size);
	if (!d || iniparser_getnsec(d) != s.nsec) {
		fprintf(stderr, "iniparser: %s, %d sections, not %d\n", d ? "loaded" : "failed",
			d ? iniparser_getnsec(d) : 0, s.nsec);
		abort();
	}
	for (int i = 0; i < s.nsec; i++)
		if (iniparser_getsecnkeys(d, s.sec[i]) != s.nkeys[i]) {
			fprintf(stderr, "iniparser: [%s] has %d keys, not %d\n", s.sec[i],
				iniparser_getsecnkeys(d, s.sec[i]), s.nkeys[i]);
			abort();
		}
	for (int i = 0; i < s.nent; i++) {
		const char *v = iniparser_getstring(d, s.key[i], NULL);

		if (!v || strcmp(v, s.val[i]) != 0) {
			fprintf(stderr, "iniparser: %s = '%s', not '%s'\n", s.key[i],
				v ? v : "(none)", s.val[i]);
			abort();
		}
		free(s.val[i]);
	}
	iniparser_freedict(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[CONFIG_MAX_FILE];
	struct rxb_config cfg, before, again;
	char err[512], err2[512];
	size_t len;
	int ret;

	memset(&cfg, 0x5a, sizeof(cfg));
	before = cfg;
	ret = config_parse((const char *)data, size, NAME, &cfg, err, sizeof(err));
	if (ret) {
		fuzz_check_refused(ret, err, NAME ":", &cfg, &before, sizeof(cfg));
		return 0;
	}
	compare_with_iniparser(data, size);
	len = render(&cfg, text, sizeof(text));
	if (!len)
		return 0;
	ret = config_parse(text, len, NAME, &again, err2, sizeof(err2));
	if (ret || config_diff(&cfg, &again, NULL, NULL) != 0) {
		fprintf(stderr, "round trip failed (%d): %s\n%.*s\n", ret, err2, (int)len, text);
		abort();
	}
	return 0;
}
