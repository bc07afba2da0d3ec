// SPDX-License-Identifier: GPL-2.0-or-later
/* A model input: value, source, why. See value.h. */
#include "daemon/model/value.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/util.h"

static const char *const src_names[] = {
	[VALUE_MISSING] = "missing",
	[VALUE_MEASURED] = "measured",
	[VALUE_LEARNED] = "learned",
	[VALUE_HISTORY] = "history",
	[VALUE_CONFIG] = "config",
	[VALUE_DEVICE] = "device",
	[VALUE_SYSCTL] = "sysctl",
	[VALUE_DEFAULT] = "default",
};

const char *value_src_name(enum value_src s)
{
	if ((unsigned)s >= RXB_ARRAY_SIZE(src_names))
		return "?";
	return src_names[s];
}

void value_missing(struct value *v, const char *fmt, ...)
{
	va_list ap;

	v->v = NAN;
	v->src = VALUE_MISSING;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

void value_set(struct value *v, double val, enum value_src src)
{
	v->v = val;
	v->src = src;
	v->why[0] = '\0';
}
