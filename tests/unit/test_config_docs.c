// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/config's documentation: every key of the table
 * appears with its default in conf/rxbneckd.conf and docs/config.md, each
 * marked restart-only exactly when a reload does not apply it, and
 * neither names a key the table lacks. Run from the source tree, or with
 * RXB_SRC naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/config.h"
#include "tests/unit/unit_main.h"

static char *slurp(const char *rel)
{
	const char *src = getenv("RXB_SRC");
	char path[512];
	char *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (run from the source tree or set RXB_SRC)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* Keys the documentation tests can track: above the table's size. */
#define MAX_KEYS	128

/* Next line of *p into buf (without '\n'); false at the end. */
static bool next_line(const char **p, char *buf, size_t size)
{
	size_t n;

	if (!**p)
		return false;
	n = strcspn(*p, "\n");
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), *p);
	*p += n + ((*p)[n] == '\n');
	return true;
}

/*
 * conf/rxbneckd.conf: under "[section]", a line "key = DEFAULT" (may be
 * commented out with '#' or ';'), and no key lines that are not in the table;
 * the comment above a key says "(restart)" exactly for restart-only keys.
 */
static void test_conf_file_documents_every_key(void **state)
{
	char *text = slurp("conf/rxbneckd.conf");
	size_t n;
	const struct config_key *k = config_keys(&n);
	bool found[MAX_KEYS] = { false };
	char line[1024], section[64] = "", key[64], val[512];
	const char *p = text;
	bool block_restart = false;
	struct rxb_config c;
	char err[512];

	(void)state;
	assert_true(n <= MAX_KEYS);
	/* The shipped file itself loads, from disk too (mode, size, ...). */
	assert_int_equal(config_parse(text, strlen(text), "conf/rxbneckd.conf", &c, err,
				      sizeof(err)), 0);
	{
		const char *src = getenv("RXB_SRC");
		char path[512];

		snprintf(path, sizeof(path), "%s/conf/rxbneckd.conf", src ? src : ".");
		if (config_load(path, &c, err, sizeof(err)) != 0)
			fail_msg("%s", err);
	}
	while (next_line(&p, line, sizeof(line))) {
		const char *s = line;
		const struct config_key *hit = NULL;
		int m;

		/* A key's comment block runs from the last blank line or header. */
		if (!line[0])
			block_restart = false;
		if (strstr(line, "(restart)"))
			block_restart = true;
		if (sscanf(s, "[%63[^]]]", section) == 1) {
			block_restart = false;
			continue;
		}
		if (*s == '#' || *s == ';')
			s++;
		/* "key = value" or "key =" (empty default); prose lines don't match. */
		m = sscanf(s, "%63[a-z0-9_] = %511[^\n]", key, val);
		if (m < 1 || !strstr(s, "="))
			continue;
		if (m == 1)
			val[0] = '\0';
		for (size_t i = 0; i < n; i++)
			if (strcmp(k[i].section, section) == 0 && strcmp(k[i].key, key) == 0)
				hit = &k[i];
		if (!hit)
			fail_msg("conf/rxbneckd.conf: [%s] %s is not a known key", section, key);
		if (strcmp(val, hit->def) == 0)
			found[hit - k] = true;
		/* "(restart)" in its comment exactly when a reload does not apply it. */
		if (block_restart != (hit->reload == CONFIG_RELOAD_RESTART))
			fail_msg("conf/rxbneckd.conf: [%s] %s is %s, its comment %s \"(restart)\"",
				 section, key, block_restart ? "applied on reload" : "restart-only",
				 block_restart ? "says" : "lacks");
	}
	for (size_t i = 0; i < n; i++)
		if (!found[i])
			fail_msg("conf/rxbneckd.conf lacks \"%s = %s\" under [%s]",
				 k[i].key, k[i].def, k[i].section);
	free(text);
}

/*
 * docs/config.md: under "## [section]", a heading "### `key`" whose text
 * says "Default: `DEFAULT`" (or "Default: empty"), and "Applies at restart."
 * exactly for restart-only keys; no headings for keys that do not exist.
 */
static void test_docs_document_every_key(void **state)
{
	char *text = slurp("docs/config.md");
	size_t n;
	const struct config_key *k = config_keys(&n);
	bool found[MAX_KEYS] = { false }, restart[MAX_KEYS] = { false };
	char line[1024], section[64] = "", key[64] = "";
	const struct config_key *cur = NULL;
	const char *p = text;

	(void)state;
	assert_true(n <= MAX_KEYS);
	while (next_line(&p, line, sizeof(line))) {
		char want[600];

		if (sscanf(line, "## [%63[^]]]", section) == 1) {
			cur = NULL;
			continue;
		}
		if (strncmp(line, "## ", 3) == 0) {
			section[0] = '\0';
			cur = NULL;
			continue;
		}
		if (sscanf(line, "### `%63[^`]`", key) == 1) {
			cur = NULL;
			for (size_t i = 0; i < n; i++)
				if (strcmp(k[i].section, section) == 0 &&
				    strcmp(k[i].key, key) == 0)
					cur = &k[i];
			if (!cur)
				fail_msg("docs/config.md documents [%s] %s, which is not a key",
					 section, key);
			continue;
		}
		if (!cur)
			continue;
		if (cur->def[0])
			snprintf(want, sizeof(want), "Default: `%s`", cur->def);
		else
			snprintf(want, sizeof(want), "Default: empty");
		if (strstr(line, want))
			found[cur - k] = true;
		if (strstr(line, "Applies at restart."))
			restart[cur - k] = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!found[i])
			fail_msg("docs/config.md lacks [%s] %s with \"Default: `%s`\"",
				 k[i].section, k[i].key, k[i].def);
		if (restart[i] != (k[i].reload == CONFIG_RELOAD_RESTART))
			fail_msg("docs/config.md: [%s] %s is %s, its text %s \"Applies at restart.\"",
				 k[i].section, k[i].key,
				 restart[i] ? "applied on reload" : "restart-only",
				 restart[i] ? "says" : "lacks");
	}
	free(text);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_conf_file_documents_every_key),
	cmocka_unit_test(test_docs_document_every_key),
)
