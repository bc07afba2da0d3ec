/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by rxbneck-shape's modules: error messages. */
#ifndef SHAPE_UTIL_H
#define SHAPE_UTIL_H

#include <stddef.h>

/* Format the message into @err (@errlen bytes) and return @ret. */
int shape_util_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
