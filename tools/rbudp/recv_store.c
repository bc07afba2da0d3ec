// SPDX-License-Identifier: GPL-2.0-or-later
/* The receiver's file image. See recv_store.h. */
#include "tools/rbudp/recv_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "tools/rbudp/digest.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif

static int make_tmp_file(struct rbudp_store *st, char *err, size_t err_size)
{
	size_t n = strlen(st->path) + sizeof(".rbudp-XXXXXX");
	mode_t mask;

	st->tmp_path = malloc(n);
	if (!st->tmp_path) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	snprintf(st->tmp_path, n, "%s.rbudp-XXXXXX", st->path);
	st->tmp_fd = mkostemp(st->tmp_path, O_CLOEXEC);
	if (st->tmp_fd < 0) {
		snprintf(err, err_size, "cannot create a temporary file next to --output %s: %s",
			 st->path, strerror(errno));
		free(st->tmp_path);
		st->tmp_path = NULL;
		return -1;
	}
	/* mkostemp makes it 0600; give the file the usual umask-based mode. */
	mask = umask(0);
	umask(mask);
	if (fchmod(st->tmp_fd, 0666 & ~mask) < 0)
		rxb_log_errno(RXB_LOG_WARNING, errno, "fchmod %s", st->tmp_path);
	return 0;
}

int rbudp_store_open(struct rbudp_store *st, const char *path, uint64_t file_bytes,
		     bool prefault, char *err, size_t err_size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

	memset(st, 0, sizeof(*st));
	st->tmp_fd = -1;
	st->path = path;
	st->file_bytes = file_bytes;
	st->populate_ok = true;
	if (prefault)
		flags = (flags & ~MAP_NORESERVE) | MAP_POPULATE;
	st->mem = mmap(NULL, file_bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (st->mem == MAP_FAILED) {
		st->mem = NULL;
		snprintf(err, err_size, "cannot map %llu bytes: %s",
			 (unsigned long long)file_bytes, strerror(errno));
		return -1;
	}
	if (prefault)
		st->populated_bytes = file_bytes;
	return make_tmp_file(st, err, err_size);
}

void rbudp_store_finish(struct rbudp_store *st)
{
	if (st->tmp_fd >= 0)
		close(st->tmp_fd);
	if (st->tmp_path) {
		if (unlink(st->tmp_path) < 0)
			rxb_log_errno(RXB_LOG_WARNING, errno, "removing %s", st->tmp_path);
		free(st->tmp_path);
	}
	if (st->mem)
		munmap(st->mem, st->file_bytes);
	memset(st, 0, sizeof(*st));
	st->tmp_fd = -1;
}

bool rbudp_store_ahead(struct rbudp_store *st)
{
	uint64_t n = st->file_bytes - st->populated_bytes;

	if (!st->populate_ok || !n ||
	    st->populated_bytes > 2 * st->stored_bytes + RBUDP_STORE_AHEAD_BYTES)
		return false;
	if (n > RBUDP_STORE_STEP_BYTES)
		n = RBUDP_STORE_STEP_BYTES;
	/* populated_bytes is a multiple of the step (page-aligned) or the end. */
	if (madvise(st->mem + st->populated_bytes, n, MADV_POPULATE_WRITE) < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return true;
		/* Old kernel (EINVAL) or no memory (ENOMEM): pages then fault
		 * in one by one as data is copied. */
		rxb_log_errno(RXB_LOG_DEBUG, errno, "MADV_POPULATE_WRITE");
		st->populate_ok = false;
		return false;
	}
	st->populated_bytes += n;
	return true;
}

void rbudp_store_put(struct rbudp_store *st, uint64_t off, const uint8_t *data, uint32_t len)
{
	memcpy(st->mem + off, data, len);
	st->stored_bytes += len;
}

void rbudp_store_digest(const struct rbudp_store *st, uint8_t out[RBUDP_DIGEST_LEN])
{
	rbudp_digest_buf(st->mem, st->file_bytes, out);
}

int rbudp_store_commit(struct rbudp_store *st)
{
	const uint8_t *p = st->mem;
	uint64_t left = st->file_bytes;

	while (left) {
		ssize_t n = write(st->tmp_fd, p, left > (1u << 30) ? (1u << 30) : (size_t)left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rxb_log_errno(RXB_LOG_ERR, n < 0 ? errno : EIO, "writing %s", st->tmp_path);
			return -1;
		}
		p += n;
		left -= (uint64_t)n;
	}
	if (close(st->tmp_fd) < 0) {
		st->tmp_fd = -1;
		rxb_log_errno(RXB_LOG_ERR, errno, "closing %s", st->tmp_path);
		return -1;
	}
	st->tmp_fd = -1;
	if (rename(st->tmp_path, st->path) < 0) {
		rxb_log_errno(RXB_LOG_ERR, errno, "renaming %s to %s", st->tmp_path, st->path);
		return -1;
	}
	free(st->tmp_path);
	st->tmp_path = NULL;
	return 0;
}
