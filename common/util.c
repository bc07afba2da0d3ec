// SPDX-License-Identifier: GPL-2.0-or-later
#include "common/util.h"

#include <string.h>

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
