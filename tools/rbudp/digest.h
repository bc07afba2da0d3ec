/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * End-to-end integrity for RBUDP transfers: the file digest is SHA-256
 * (nettle) over the file's bytes in order, the value `sha256sum FILE`
 * prints. The sender computes it before the transfer and announces it in
 * SETUP; a receiver that keeps the file (--output) hashes what it
 * assembled before putting it in place, and anyone can check a stored copy
 * later (rxbneck-recv --verify, or sha256sum).
 *
 * Datagrams are checked one by one (auth.h) for the session's token or,
 * with a pre-shared key, a MAC tag that also fails on any corrupted byte.
 * There is no per-datagram checksum beyond UDP's: data that arrives
 * changed is caught here, at the end (by the tag at once with a key).
 */
#ifndef RBUDP_DIGEST_H
#define RBUDP_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "tools/rbudp/wire.h"

#define RBUDP_DIGEST_HEX_LEN	(2 * RBUDP_DIGEST_LEN)

/* SHA-256 of @len bytes at @data. */
void rbudp_digest_buf(const void *data, uint64_t len, uint8_t out[RBUDP_DIGEST_LEN]);

/* Lower-case hex, NUL-terminated. */
void rbudp_digest_hex(const uint8_t d[RBUDP_DIGEST_LEN], char out[RBUDP_DIGEST_HEX_LEN + 1]);
/* Parse 64 hex digits (either case). 0 or -EINVAL. */
int rbudp_digest_parse(const char *hex, uint8_t out[RBUDP_DIGEST_LEN]);

/*
 * SHA-256 of the file at @path, read sequentially. 0, or -1 with @err
 * naming the file and the failure.
 */
int rbudp_digest_file(const char *path, uint8_t out[RBUDP_DIGEST_LEN], uint64_t *bytes,
		      char *err, size_t err_size);

#endif
