/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One fuzz target over two parsers: the input's first byte picks which
 * (odd: @odd, even: @even) gets the rest, so that one corpus covers both.
 */
#ifndef RXB_TESTS_FUZZ_FUZZ_PICK_H
#define RXB_TESTS_FUZZ_FUZZ_PICK_H

#include <stddef.h>
#include <stdint.h>

typedef void (*fuzz_pick_fn)(const uint8_t *data, size_t size);

static inline int fuzz_pick(const uint8_t *data, size_t size, fuzz_pick_fn odd,
			    fuzz_pick_fn even)
{
	if (!size)
		return 0;
	(data[0] & 1 ? odd : even)(data + 1, size - 1);
	return 0;
}

#endif
