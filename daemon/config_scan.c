// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckd.conf's syntax: lines into sections and entries. See config_scan.h. */
#include "daemon/config_scan.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config.h"

struct scan {
	const struct config_scan_ops *ops;
	char section[CONFIG_MAX_NAME + 1];	/* "" before the first header */
	char *why;
	size_t wlen;
};

static int syntax(struct scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int syntax(struct scan *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, s->wlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_name_char(char c, bool dash_ok)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (dash_ok && c == '-');
}

/* Trim blanks at both ends of s[0..*len) in place; returns the new start. */
static char *trim(char *s, size_t *len)
{
	while (*len && is_blank(s[*len - 1]))
		(*len)--;
	s[*len] = '\0';
	while (*len && is_blank(*s)) {
		s++;
		(*len)--;
	}
	return s;
}

/* Check and lowercase a section or key name; NULL or the problem. */
static const char *check_name(char *name, bool dash_ok)
{
	size_t len = strlen(name);

	if (len == 0)
		return "empty name";
	if (len > CONFIG_MAX_NAME)
		return "name too long";
	for (size_t i = 0; i < len; i++) {
		if (!is_name_char(name[i], dash_ok))
			return dash_ok ? "names may only contain letters, digits, '_' and '-'"
				       : "names may only contain letters, digits and '_'";
		name[i] = (char)tolower((unsigned char)name[i]);
	}
	return NULL;
}

/*
 * Split the part after '=' into the value. Returns NULL or the problem.
 * Quoted values keep everything between the quotes; after the closing
 * quote only blanks and a comment may follow. Unquoted values end at '#'
 * or ';' and lose surrounding blanks, as iniparser does.
 */
static const char *split_value(char *rest, char **value)
{
	size_t len;

	while (is_blank(*rest))
		rest++;
	if (*rest == '"' || *rest == '\'') {
		char quote = *rest;
		char *end = strchr(rest + 1, quote);

		if (!end)
			return "unterminated quoted value";
		*end = '\0';
		*value = rest + 1;
		for (end++; is_blank(*end); end++)
			;
		if (*end && *end != '#' && *end != ';')
			return "text after the closing quote";
		return NULL;
	}
	len = strcspn(rest, "#;");
	rest[len] = '\0';
	*value = trim(rest, &len);
	if (strpbrk(*value, "\"'"))
		return "quote inside an unquoted value";
	return NULL;
}

/* Bytes a line may hold: printable ASCII and tab; others only in comments. */
static int check_bytes(struct scan *s, const char *p, size_t len, bool *high)
{
	*high = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\0')
			return syntax(s, "syntax error: NUL byte");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return syntax(s, "syntax error: control character 0x%02x", c);
		if (c >= 0x80)
			*high = true;
	}
	return 0;
}

/* Non-ASCII bytes may stand in inline comments, not in names or values. */
static int check_high(struct scan *s, const char *p, size_t len)
{
	size_t code = p[0] == '[' ? len : strcspn(p, "#;");
	const char *q = strpbrk(p, "\"'");

	if (q && (size_t)(q - p) < code)
		code = len;	/* quoted values may hold '#' or ';' */
	for (size_t i = 0; i < code; i++)
		if ((unsigned char)p[i] >= 0x80)
			return syntax(s, "syntax error: non-ASCII byte outside a comment");
	return 0;
}

static int scan_section(struct scan *s, int lineno, char *p, size_t len)
{
	const char *why;
	size_t nlen;
	char *name;

	if (len < 2 || p[len - 1] != ']')
		return syntax(s, "syntax error: a section header is \"[name]\" alone on its line");
	nlen = len - 2;
	name = trim(p + 1, &nlen);
	why = check_name(name, true);
	if (why)
		return syntax(s, "syntax error in section header: %s", why);
	memcpy(s->section, name, nlen + 1);
	return s->ops->section(s->ops->ctx, lineno, s->section);
}

static int scan_entry(struct scan *s, int lineno, char *p)
{
	char *eq = strchr(p, '=');
	char *key, *value;
	const char *why;
	size_t klen;

	if (!eq)
		return syntax(s, "syntax error: expected \"key = value\", \"[section]\" or a "
			      "comment");
	*eq = '\0';
	klen = (size_t)(eq - p);
	key = trim(p, &klen);
	why = check_name(key, false);
	if (why)
		return syntax(s, "syntax error in key: %s", why);
	if (!s->section[0])
		return syntax(s, "%s: key outside any section (put it under [section])", key);
	why = split_value(eq + 1, &value);
	if (why)
		return syntax(s, "[%s] %s: syntax error: %s", s->section, key, why);
	return s->ops->entry(s->ops->ctx, lineno, s->section, key, value);
}

/* One physical line without its '\n'. */
static int scan_line(struct scan *s, int lineno, const char *raw, size_t len)
{
	char buf[CONFIG_MAX_LINE + 1];
	bool high;
	char *p;
	int err;

	if (len && raw[len - 1] == '\r')
		len--;		/* CRLF */
	if (len > CONFIG_MAX_LINE)
		return syntax(s, "line too long (more than %d bytes)", CONFIG_MAX_LINE);
	err = check_bytes(s, raw, len, &high);
	if (err)
		return err;
	memcpy(buf, raw, len);
	p = trim(buf, &len);
	/* iniparser would join the next line to this one, even to a comment. */
	if (len && p[len - 1] == '\\')
		return syntax(s, "syntax error: '\\' at the end of a line (continuation "
			      "lines are not supported)");
	if (len == 0 || p[0] == '#' || p[0] == ';')
		return 0;
	if (high) {
		err = check_high(s, p, len);
		if (err)
			return err;
	}
	if (p[0] == '[')
		return scan_section(s, lineno, p, len);
	return scan_entry(s, lineno, p);
}

int config_scan(const char *text, size_t len, const struct config_scan_ops *ops,
		int *line, char *why, size_t wlen)
{
	struct scan s = { .ops = ops, .why = why, .wlen = wlen };
	size_t pos = 0;
	int lineno = 0, err;

	*line = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		lineno++;
		err = scan_line(&s, lineno, text + pos, end - pos);
		if (err) {
			*line = lineno;
			return err;
		}
		pos = end + 1;
	}
	return 0;
}
