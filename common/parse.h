/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict parsing of numbers from untrusted text (command lines, config).
 *
 * The whole string must be consumed (surrounding blanks are not allowed),
 * the value must be finite and within [min, max]. Functions return 0 or a
 * negative errno: -EINVAL for malformed text, -ERANGE for out of bounds.
 * *out is written only on success.
 */
#ifndef RXB_COMMON_PARSE_H
#define RXB_COMMON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int rxb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int rxb_parse_double(const char *s, double min, double max, double *out);

/*
 * A quantity with an optional SI suffix: k/K = 1e3, M = 1e6, G = 1e9,
 * T = 1e12, and binary Ki = 2^10, Mi = 2^20, Gi = 2^30, Ti = 2^40.
 * "1.5G", "950M", "1e9", "64Ki" are accepted. Used for rates (bits/s) and
 * sizes (bytes).
 */
int rxb_parse_si(const char *s, double min, double max, double *out);

/* "yes/no/true/false/on/off/1/0". */
int rxb_parse_bool(const char *s, bool *out);

/* Human text for the errno returned above, e.g. "not a number". */
const char *rxb_parse_strerror(int err);

/*
 * A parser's message for its caller: "line @line: " (none for line 0) and
 * the formatted text into @err (@errlen bytes, truncated). Returns -EINVAL,
 * so that a parser can `return rxb_parse_error(...)`.
 */
int rxb_parse_error(char *err, size_t errlen, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
