/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syntax of rxbneckd.conf (config.h describes it): one bounded pass over
 * the text, line by line, that splits it into "[section]" headers and
 * "key = value" entries and hands each to a callback with its line number.
 * It knows nothing of which sections and keys exist; config.c does.
 *
 * Why a parser of our own rather than iniparser (Debian's libiniparser1,
 * 4.1 in Debian 12): every error must name FILE:LINE, and a key or section
 * given twice and a key before the first section must be errors. iniparser
 * 4.1 keeps no line numbers for entries, silently lets a later key replace
 * an earlier one and merges repeated sections, files keys before the first
 * section under "" (":key"), and reads only from a path (no buffer, no
 * FILE *). Getting those messages from it takes a scan of the text like
 * this one anyway, and once that scan exists it has read every value too.
 * The dialect accepted here is a strict subset of iniparser's, so a file
 * rxbneckd accepts means the same to tools that read it with iniparser.
 */
#ifndef RXB_DAEMON_CONFIG_SCAN_H
#define RXB_DAEMON_CONFIG_SCAN_H

#include <stddef.h>

struct config_scan_ops {
	void *ctx;
	/*
	 * A section header; @name is checked (letters, digits, '_', '-', at
	 * most CONFIG_MAX_NAME) and lowercased. 0 to go on, or a negative
	 * error that stops the scan and is returned as it is.
	 */
	int (*section)(void *ctx, int line, const char *name);
	/*
	 * An entry under @section: @key checked like a section name (no '-')
	 * and lowercased, @value without its quotes, blanks and inline comment.
	 * 0 or a negative error, as above.
	 */
	int (*entry)(void *ctx, int line, const char *section, const char *key,
		     const char *value);
};

/*
 * Scan @len bytes of @text (need not be NUL-terminated). 0 when every line
 * was read; a callback's error; or -EINVAL for a syntax error, with its line
 * in *@line (0 for the file as a whole) and what is wrong in @why.
 */
int config_scan(const char *text, size_t len, const struct config_scan_ops *ops,
		int *line, char *why, size_t wlen);

#endif
