/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by rxbneck-shape's modules: error messages, whole-file I/O, rates in text. */
#ifndef SHAPE_UTIL_H
#define SHAPE_UTIL_H

#include <stddef.h>

/* Format the message into @err (@errlen bytes) and return @ret. */
int shape_util_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Read all of @fd into @buf (@size bytes): *@len the bytes read. -EFBIG
 * when there is more than @size, -errno on a read error.
 */
int shape_util_read_all(int fd, char *buf, size_t size, size_t *len);

#endif
