// SPDX-License-Identifier: GPL-2.0-or-later
/* The file digest: SHA-256 from nettle. See digest.h. */
#include "tools/rbudp/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>

_Static_assert(SHA256_DIGEST_SIZE == RBUDP_DIGEST_LEN, "digest is SHA-256");

void rbudp_digest_buf(const void *data, uint64_t len, uint8_t out[RBUDP_DIGEST_LEN])
{
	const uint8_t *p = data;
	struct sha256_ctx c;

	sha256_init(&c);
	/* nettle takes a size_t; feed 1 GiB at a time anyway. */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : (size_t)len;

		sha256_update(&c, n, p);
		p += n;
		len -= n;
	}
	sha256_digest(&c, RBUDP_DIGEST_LEN, out);
}

void rbudp_digest_hex(const uint8_t d[RBUDP_DIGEST_LEN], char out[RBUDP_DIGEST_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < RBUDP_DIGEST_LEN; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[RBUDP_DIGEST_HEX_LEN] = '\0';
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rbudp_digest_parse(const char *hex, uint8_t out[RBUDP_DIGEST_LEN])
{
	if (strlen(hex) != RBUDP_DIGEST_HEX_LEN)
		return -EINVAL;
	for (int i = 0; i < RBUDP_DIGEST_LEN; i++) {
		int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int rbudp_digest_file(const char *path, uint8_t out[RBUDP_DIGEST_LEN], uint64_t *bytes,
		      char *err, size_t err_size)
{
	enum { CHUNK = 1 << 20 };
	struct sha256_ctx c;
	uint8_t *buf;
	int fd;

	*bytes = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	buf = malloc(CHUNK);
	if (!buf) {
		snprintf(err, err_size, "out of memory reading %s", path);
		close(fd);
		return -1;
	}
	sha256_init(&c);
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, err_size, "reading %s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		sha256_update(&c, (size_t)n, buf);
		*bytes += (uint64_t)n;
	}
	free(buf);
	close(fd);
	sha256_digest(&c, RBUDP_DIGEST_LEN, out);
	return 0;
}
