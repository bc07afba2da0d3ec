// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneck-shape's small shared helpers. See util.h. */
#include "tools/shape/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shape_util_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

int shape_util_parse_handle(const char *hex, uint16_t *handle)
{
	unsigned long h;

	if (!*hex || strlen(hex) > 4 || strspn(hex, "0123456789abcdefABCDEF") != strlen(hex))
		return -EINVAL;
	h = strtoul(hex, NULL, 16);
	if (h < 1 || h > 0xfffe)
		return -ERANGE;
	*handle = (uint16_t)h;
	return 0;
}
