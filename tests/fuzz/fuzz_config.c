// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the configuration loader (daemon/config.c).
 *
 * The input is the file's bytes. Besides "no crash, no sanitizer report"
 * it checks properties:
 *  - the pre-scan and iniparser never disagree (-ENOTRECOVERABLE aborts);
 *  - a rejected file leaves the output untouched and yields one message
 *    that starts with the file name and has no line break;
 *  - an accepted file renders back (config_format of every key) to a file
 *    that loads to the same configuration (config_diff finds nothing).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

#define NAME "fuzz.conf"

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
	if (ret == -ENOTRECOVERABLE) {
		fprintf(stderr, "pre-scan and iniparser disagree: %s\n", err);
		abort();
	}
	if (ret) {
		if (ret > 0 || strncmp(err, NAME ":", strlen(NAME ":")) != 0 ||
		    strchr(err, '\n') || memcmp(&cfg, &before, sizeof(cfg)) != 0)
			abort();
		return 0;
	}
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
