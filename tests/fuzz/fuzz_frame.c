// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the frame codec (proto/codec.c).
 *
 * The input is a byte stream as a peer would send it. Frames are cut with
 * rxbp_frame_check() and decoded with rxbp_decode(), as daemon and client do.
 * Besides "no crash, no sanitizer report" it checks properties:
 *  - a header verdict never changes as more bytes arrive: every prefix of a
 *    complete frame says "need more", every prefix that shows an error
 *    shows the same error as the whole input;
 *  - whatever decodes re-encodes, and the re-encoding decodes to the same
 *    message (unknown TLVs are dropped, nothing else changes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"

#define MAXF RXBNECK_FRAME_MAX_DEFAULT

static void check_prefixes(const uint8_t *d, size_t n, int verdict)
{
	size_t upto = verdict > 0 ? (size_t)verdict : n;

	if (upto > RXBNECK_HDR_BYTES + 1)
		upto = RXBNECK_HDR_BYTES + 1;
	for (size_t k = 0; k < upto; k++) {
		int r = rxbp_frame_check(d, k, MAXF, NULL);

		if (r != 0 && (verdict > 0 || r != verdict))
			abort();
	}
}

static void check_reencode(const struct rxbp_msg *m)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	struct rxbp_msg again;
	size_t n = rxbp_encode(buf, sizeof(buf), m);

	if (n == 0 || rxbp_decode(buf, n, &again) != 0)
		abort();
	if (memcmp(m, &again, sizeof(again)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct rxbp_msg m;
		int n = rxbp_frame_check(data + off, size - off, MAXF, NULL);

		check_prefixes(data + off, size - off, n);
		if (n <= 0)
			break;
		if (rxbp_decode(data + off, (size_t)n, &m) == 0)
			check_reencode(&m);
		off += (size_t)n;
	}
	return 0;
}
