// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneck-shape's small shared helpers. See util.h. */
#include "tools/shape/util.h"

#include <stdarg.h>
#include <stdio.h>

int shape_util_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}
