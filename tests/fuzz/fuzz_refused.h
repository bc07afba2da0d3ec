/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every configuration parser owes the caller when it refuses an input:
 * a negative errno, a one-line message that starts with the file's name
 * (@prefix, as the parser formats it), and its output left as it was, so a
 * refused reload keeps the running configuration.
 */
#ifndef RXB_TESTS_FUZZ_FUZZ_REFUSED_H
#define RXB_TESTS_FUZZ_FUZZ_REFUSED_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Aborts unless refusal @ret, message @err and output @out (as @before, @size bytes) hold. */
static inline void fuzz_check_refused(int ret, const char *err, const char *prefix,
				      const void *out, const void *before, size_t size)
{
	if (ret > 0 || strncmp(err, prefix, strlen(prefix)) != 0 || strchr(err, '\n') ||
	    memcmp(out, before, size) != 0)
		abort();
}

#endif
