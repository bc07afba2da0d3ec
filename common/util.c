// SPDX-License-Identifier: GPL-2.0-or-later
#include "common/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

void rxb_store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)field = (uint8_t)v; break;
	case 2: *(uint16_t *)field = (uint16_t)v; break;
	case 4: *(uint32_t *)field = (uint32_t)v; break;
	default: *(uint64_t *)field = v; break;
	}
}

uint64_t rxb_load_uint(const void *field, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)field;
	case 2: return *(const uint16_t *)field;
	case 4: return *(const uint32_t *)field;
	default: return *(const uint64_t *)field;
	}
}

void *rxb_grow(void *arr, uint32_t n, uint32_t *cap, size_t size)
{
	uint32_t want;
	void *v;

	if (n < *cap)
		return arr;
	if (*cap > UINT32_MAX / 2 || size == 0)
		return NULL;
	want = *cap ? 2 * *cap : 16;
	if ((size_t)want > SIZE_MAX / size)
		return NULL;
	v = realloc(arr, (size_t)want * size);
	if (v)
		*cap = want;
	return v;
}

void *rxb_append(void **arr, uint32_t *n, uint32_t *cap, size_t size)
{
	char *v = rxb_grow(*arr, *n, cap, size);

	if (!v)
		return NULL;
	*arr = v;
	v += (size_t)(*n)++ * size;
	memset(v, 0, size);
	return v;
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

int rxb_read_all(int fd, void *buf, size_t size, size_t *len)
{
	char *p = buf, probe;
	ssize_t n;

	*len = 0;
	while (*len < size) {
		n = read(fd, p + *len, size - *len);
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

int rxb_read_grow(rxb_read_fn rd, void *src, size_t max, char **text, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	long r;

	*text = NULL;
	if (len)
		*len = 0;
	for (;;) {
		if (n + 1 >= cap) {
			char *p = cap <= SIZE_MAX / 2 ? realloc(buf, cap ? 2 * cap : 4096) : NULL;

			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap = cap ? 2 * cap : 4096;
		}
		r = rd(src, buf + n, cap - n - 1);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n > max) {
			r = -EFBIG;
			break;
		}
	}
	if (r < 0) {
		free(buf);
		return (int)r;
	}
	buf[n] = '\0';
	*text = buf;
	if (len)
		*len = n;
	return 0;
}

static long fd_read(void *src, void *dst, size_t room)
{
	ssize_t r = read(*(int *)src, dst, room);

	return r < 0 ? -errno : r;
}

int rxb_read_fd_grow(int fd, size_t max, char **text, size_t *len)
{
	return rxb_read_grow(fd_read, &fd, max, text, len);
}

int rxb_read_path(const char *path, size_t max, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*text = NULL;
	if (len)
		*len = 0;
	if (fd < 0)
		return -errno;
	err = rxb_read_fd_grow(fd, max, text, len);
	close(fd);
	return err;
}

int rxb_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		return snprintf(buf, size, "%s:%u", a, ntohs(in->sin_port));
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;
		bool v4 = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr);

		if (v4)
			inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, a, sizeof(a));
		else
			inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		return snprintf(buf, size, v4 ? "%s:%u" : "[%s]:%u", a, ntohs(in6->sin6_port));
	}
	return snprintf(buf, size, "(family %d)", ss->ss_family);
}

size_t rxb_lower_bound_u32(const void *base, size_t n, size_t size, size_t key_off,
			   uint32_t key)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t k;

		memcpy(&k, p + mid * size + key_off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rxb_open_regular(int dirfd, const char *name, size_t max_bytes, struct stat *st)
{
	int fd, err;

	memset(st, 0, sizeof(*st));
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st))
		err = -errno;
	else if (!S_ISREG(st->st_mode))
		err = -EINVAL;
	else if (max_bytes && (uintmax_t)st->st_size > max_bytes)
		err = -EFBIG;
	else
		return fd;
	close(fd);
	return err;
}

int rxb_replace_file(int dirfd, const char *name, const char *tmp, const void *data,
		     size_t len, unsigned int mode)
{
	int fd, err;

	/* Made afresh (O_EXCL after removing any left over), so nothing else -
	 * a FIFO, a link - can be in the temporary's place. */
	if (unlinkat(dirfd, tmp, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
		    O_NOCTTY, mode);
	if (fd < 0)
		return -errno;
	err = rxb_write_all(fd, data, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name))
		err = -errno;
	if (!err && fsync(dirfd))
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}
