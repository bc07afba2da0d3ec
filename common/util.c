// SPDX-License-Identifier: GPL-2.0-or-later
#include "common/util.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

size_t rxb_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

int rxb_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* no progress: do not spin */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
