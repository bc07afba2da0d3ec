/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiver's copy of the file (--output): an anonymous mapping the
 * datagrams are copied into at their offsets, hashed once complete, then
 * written to PATH.rbudp-XXXXXX next to PATH and renamed to PATH.
 *
 * Memory is committed as data arrives, not when a sender claims a size:
 * the mapping is reserved only (MAP_NORESERVE). The receiver faults pages
 * in ahead of the data in steps of RBUDP_STORE_STEP_BYTES when its socket
 * is empty (MADV_POPULATE_WRITE: one call, not a fault per page, and never
 * while datagrams wait), as long as the populated part stays within twice
 * the bytes stored plus RBUDP_STORE_AHEAD_BYTES. Data that lands beyond
 * it faults its page in as it is copied. A sender scattering single
 * datagrams over a huge claimed file thus commits one page per datagram it
 * sends, no more. A session keyed by a pre-shared key is trusted: its
 * whole file is faulted in at once, before the transfer.
 */
#ifndef RBUDP_RECV_STORE_H
#define RBUDP_RECV_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/rbudp/wire.h"

#define RBUDP_STORE_STEP_BYTES	(512u << 10)
#define RBUDP_STORE_AHEAD_BYTES	(8u << 20)

struct rbudp_store {
	uint8_t *mem;			/* file_bytes, reserved */
	uint64_t file_bytes;
	uint64_t populated_bytes;	/* [0, populated) faulted in ahead */
	uint64_t stored_bytes;		/* payload bytes copied in */
	bool populate_ok;		/* MADV_POPULATE_WRITE works here */
	const char *path;		/* final name */
	char *tmp_path;			/* temporary file, until renamed */
	int tmp_fd;
};

/*
 * Reserve the image of a @file_bytes file for @path and create its
 * temporary file; @prefault: fault all of it in now. 0, or -1 with @err.
 */
int rbudp_store_open(struct rbudp_store *st, const char *path, uint64_t file_bytes,
		     bool prefault, char *err, size_t err_size);
/* Remove the temporary file (unless renamed) and unmap. Idempotent. */
void rbudp_store_finish(struct rbudp_store *st);

/* Copy @len bytes of payload to offset @off (bounds checked by the caller). */
void rbudp_store_put(struct rbudp_store *st, uint64_t off, const uint8_t *data, uint32_t len);

/* Fault in the next step ahead if the budget allows. True when it did. */
bool rbudp_store_ahead(struct rbudp_store *st);

/* SHA-256 of the whole image. */
void rbudp_store_digest(const struct rbudp_store *st, uint8_t out[RBUDP_DIGEST_LEN]);

/* Write the image to the temporary file and rename it to the path. 0 or -1 (logged). */
int rbudp_store_commit(struct rbudp_store *st);

#endif
