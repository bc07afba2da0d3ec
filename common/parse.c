// SPDX-License-Identifier: GPL-2.0-or-later
/* Strict number parsing. See parse.h. */
#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool starts_clean(const char *s)
{
	return s && *s && !isspace((unsigned char)*s);
}

int rxb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts "-1" and wraps it: refuse any sign up front. */
	if (!starts_clean(s) || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* strtod, but only decimal forms: no hex floats, "inf" or "nan". */
static int parse_decimal(const char *s, double *val, const char **rest)
{
	const char *p = s;
	char *end;

	if (!starts_clean(s))
		return -EINVAL;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return -EINVAL;
	errno = 0;
	*val = strtod(s, &end);
	if (end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(*val))
		return -ERANGE;
	*rest = end;
	return 0;
}

struct unit {
	const char *sfx;
	double mult;
};

/* A decimal number, then one of the @n suffixes of @units: the number times its mult. */
static int parse_scaled(const char *s, const struct unit *units, size_t n,
			double min, double max, double *out)
{
	const char *rest;
	double v;
	int err;

	err = parse_decimal(s, &v, &rest);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rest, units[i].sfx) != 0)
			continue;
		v *= units[i].mult;
		if (!isfinite(v))
			return -ERANGE;
		if (v < min || v > max)
			return -ERANGE;
		*out = v;
		return 0;
	}
	return -EINVAL;
}

int rxb_parse_double(const char *s, double min, double max, double *out)
{
	static const struct unit none[] = { { "", 1.0 } };	/* nothing may follow */

	return parse_scaled(s, none, 1, min, max, out);
}

int rxb_parse_si(const char *s, double min, double max, double *out)
{
	static const struct unit units[] = {
		{ "Ki", 1024.0 }, { "Mi", 1048576.0 },
		{ "Gi", 1073741824.0 }, { "Ti", 1099511627776.0 },
		{ "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 },
		{ "", 1.0 },
	};

	return parse_scaled(s, units, sizeof(units) / sizeof(units[0]), min, max, out);
}

int rxb_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

const char *rxb_parse_strerror(int err)
{
	switch (err) {
	case -EINVAL: return "not a valid number";
	case -ERANGE: return "out of range";
	default:      return "invalid value";
	}
}

int rxb_parse_error(char *err, size_t errlen, int line, const char *fmt, ...)
{
	va_list ap;
	int n = line ? snprintf(err, errlen, "line %d: ", line) : 0;

	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
