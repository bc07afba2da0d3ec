/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by rxbneck-shape's modules: error messages, handles. */
#ifndef SHAPE_UTIL_H
#define SHAPE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Format the message into @err (@errlen bytes) and return @ret. */
int shape_util_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A tc handle major as the configuration and the state file spell it: 1 to
 * 4 hex digits (no "0x"), 1..fffe (0 is "none" to tc and ffff its root).
 * 0, -EINVAL (not such digits) or -ERANGE.
 */
int shape_util_parse_handle(const char *hex, uint16_t *handle);

#endif
