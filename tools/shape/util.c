// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneck-shape's small shared helpers. See util.h. */
#include "tools/shape/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int shape_util_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

int shape_util_read_all(int fd, char *buf, size_t size, size_t *len)
{
	char probe;
	ssize_t n;

	*len = 0;
	while (*len < size) {
		n = read(fd, buf + *len, size - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		*len += (size_t)n;
	}
	/* Full: is there more? */
	do
		n = read(fd, &probe, 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? -EFBIG : 0;
}
