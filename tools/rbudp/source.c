// SPDX-License-Identifier: GPL-2.0-or-later
/* Sender data sources: mapped file or synthetic pattern. See source.h. */
#include "tools/rbudp/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "common/log.h"
#include "tools/rbudp/digest.h"
#include "tools/rbudp/wire.h"

static uint8_t synth_byte(uint64_t i)
{
	uint64_t w = rbudp_mix64((i / 8 + 1) * 0x9e3779b97f4a7c15ULL);

	return (uint8_t)(w >> (8 * (i % 8)));
}

void rbudp_source_synth_fill(uint8_t *buf, uint64_t off, size_t len)
{
	uint64_t i = off % RBUDP_SYNTH_PERIOD;

	for (size_t k = 0; k < len; k++) {
		buf[k] = synth_byte(i);
		if (++i == RBUDP_SYNTH_PERIOD)
			i = 0;
	}
}

static int set_geometry(struct rbudp_source *s, uint64_t file_bytes, uint32_t payload_bytes)
{
	uint64_t pkts = rbudp_pkts_for(file_bytes, payload_bytes);

	if (file_bytes == 0 || pkts == 0)
		return -EFBIG;
	s->file_bytes = file_bytes;
	s->payload_bytes = payload_bytes;
	s->total_pkts = (uint32_t)pkts;
	return 0;
}

int rbudp_source_open_file(struct rbudp_source *s, const char *path,
			   uint32_t payload_bytes)
{
	struct stat st;
	void *map;
	int fd, err;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		rxb_log_errno(RXB_LOG_ERR, err, "cannot open --file %s", path);
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		rxb_log_errno(RXB_LOG_ERR, err, "cannot stat --file %s", path);
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		rxb_err("--file %s is not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_size == 0) {
		rxb_err("--file %s is empty: nothing to transfer", path);
		close(fd);
		return -EINVAL;
	}
	if (set_geometry(s, (uint64_t)st.st_size, payload_bytes) < 0) {
		rxb_err("--file %s: %lld bytes need more than 2^32-1 packets of %u bytes",
			path, (long long)st.st_size, payload_bytes);
		close(fd);
		return -EFBIG;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = errno;
	close(fd);
	if (map == MAP_FAILED) {
		rxb_log_errno(RXB_LOG_ERR, err, "cannot map --file %s (%lld bytes)",
			      path, (long long)st.st_size);
		return -err;
	}
	/* Read ahead: the blast walks the file in order. */
	if (madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL) < 0)
		rxb_log_errno(RXB_LOG_DEBUG, errno, "madvise(MADV_SEQUENTIAL) on %s", path);
	s->base = map;
	s->map_len = (size_t)st.st_size;
	return 0;
}

int rbudp_source_open_synth(struct rbudp_source *s, uint64_t file_bytes,
			    uint32_t payload_bytes)
{
	uint8_t *pat;
	size_t len = RBUDP_SYNTH_PERIOD + payload_bytes;

	memset(s, 0, sizeof(*s));
	if (set_geometry(s, file_bytes, payload_bytes) < 0)
		return -EFBIG;
	pat = malloc(len);
	if (!pat)
		return -ENOMEM;
	rbudp_source_synth_fill(pat, 0, len);
	s->base = pat;
	s->map_len = len;
	s->synthetic = 1;
	return 0;
}

void rbudp_source_finish(struct rbudp_source *s)
{
	if (s->synthetic)
		free((void *)s->base);
	else if (s->base && munmap((void *)s->base, s->map_len) < 0)
		rxb_log_errno(RXB_LOG_WARNING, errno, "munmap of the sent file");
	memset(s, 0, sizeof(*s));
}

void rbudp_source_digest(const struct rbudp_source *s, uint8_t out[RBUDP_DIGEST_LEN])
{
	struct sha256_ctx c;
	uint64_t left = s->file_bytes;

	if (!s->synthetic) {
		rbudp_digest_buf(s->base, s->file_bytes, out);
		return;
	}
	/* The data repeats the pattern with period RBUDP_SYNTH_PERIOD. */
	sha256_init(&c);
	while (left) {
		size_t n = left < RBUDP_SYNTH_PERIOD ? (size_t)left : RBUDP_SYNTH_PERIOD;

		sha256_update(&c, n, s->base);
		left -= n;
	}
	sha256_digest(&c, RBUDP_DIGEST_LEN, out);
}
