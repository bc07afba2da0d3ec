/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small streaming JSON writer into a growable buffer.
 *
 * Every call takes a @key: the member name inside an object, NULL inside an
 * array or at top level. Commas, escaping and nesting are handled here.
 * Non-finite doubles are written as null (JSON has no NaN/Inf). An allocation
 * failure or a nesting error latches: later calls do nothing and json_ok()
 * returns false, so callers check once at the end.
 *
 *	struct json_writer w;
 *	json_init(&w, false);
 *	json_obj_begin(&w, NULL);
 *	json_double(&w, "rate_bps", 9.5e8);
 *	json_obj_end(&w);
 *	if (json_ok(&w)) fputs(json_text(&w), stdout);
 *	json_finish(&w);
 */
#ifndef RXB_COMMON_JSON_H
#define RXB_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

#define JSON_MAX_DEPTH 32

struct json_writer {
	struct strbuf out;
	unsigned depth;
	bool need_comma[JSON_MAX_DEPTH + 1];
	bool pretty;
};

void json_init(struct json_writer *w, bool pretty);
void json_finish(struct json_writer *w);
/* Forget the text, keep the buffer: for writing the next document. */
void json_reset(struct json_writer *w);

void json_obj_begin(struct json_writer *w, const char *key);
void json_obj_end(struct json_writer *w);
void json_arr_begin(struct json_writer *w, const char *key);
void json_arr_end(struct json_writer *w);

void json_str(struct json_writer *w, const char *key, const char *val);
void json_int(struct json_writer *w, const char *key, int64_t val);
void json_uint(struct json_writer *w, const char *key, uint64_t val);
void json_double(struct json_writer *w, const char *key, double val);
void json_bool(struct json_writer *w, const char *key, bool val);
void json_null(struct json_writer *w, const char *key);
/*
 * A value the document may not have: @val when @have, else null. (A string
 * is null when json_str() gets NULL, a double when json_double() gets NaN.)
 */
void json_int_opt(struct json_writer *w, const char *key, bool have, int64_t val);
void json_uint_opt(struct json_writer *w, const char *key, bool have, uint64_t val);
void json_bool_opt(struct json_writer *w, const char *key, bool have, bool val);
/*
 * An object the document may not have: when @have, begins it and returns
 * true (the caller writes its members and ends it); else writes null and
 * returns false.
 */
bool json_obj_begin_opt(struct json_writer *w, const char *key, bool have);

/* An array of the @n strings of @v (a NULL one as null). */
void json_str_array(struct json_writer *w, const char *key, const char *const *v, size_t n);
/*
 * An object of @v's positive finite entries keyed by their index ("3": v[3]),
 * as a histogram's non-empty slots.
 */
void json_sparse(struct json_writer *w, const char *key, const double *v, size_t n);
/*
 * An array of the names of the bits set in @bits: @names[i] for bit i, in
 * bit order; bits at or above @n are left out.
 */
void json_flag_names(struct json_writer *w, const char *key, uint32_t bits,
		     const char *const *names, size_t n);

/* True when the document is complete (depth 0) and nothing failed. */
bool json_ok(const struct json_writer *w);
/* NUL-terminated text so far ("" when empty or failed to allocate). */
const char *json_text(const struct json_writer *w);
size_t json_len(const struct json_writer *w);

#endif
