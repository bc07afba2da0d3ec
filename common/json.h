/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small streaming JSON writer into a growable buffer.
 *
 * Every call takes a @key: the member name inside an object, NULL inside an
 * array or at top level. Commas, escaping and nesting are handled here.
 * Non-finite doubles are written as null (JSON has no NaN/Inf). An allocation
 * failure or a nesting error latches: later calls do nothing and jw_ok()
 * returns false, so callers check once at the end.
 *
 *	struct jw w;
 *	jw_init(&w, false);
 *	jw_obj_begin(&w, NULL);
 *	jw_double(&w, "rate_bps", 9.5e8);
 *	jw_obj_end(&w);
 *	if (jw_ok(&w)) fputs(jw_text(&w), stdout);
 *	jw_finish(&w);
 */
#ifndef RXB_COMMON_JSON_H
#define RXB_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JW_MAX_DEPTH 32

struct jw {
	char *buf;
	size_t len;
	size_t cap;
	unsigned depth;
	bool need_comma[JW_MAX_DEPTH + 1];
	bool pretty;
	bool failed;
};

void jw_init(struct jw *w, bool pretty);
void jw_finish(struct jw *w);
/* Forget the text, keep the buffer: for writing the next document. */
void jw_reset(struct jw *w);

void jw_obj_begin(struct jw *w, const char *key);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);

void jw_str(struct jw *w, const char *key, const char *val);
void jw_int(struct jw *w, const char *key, int64_t val);
void jw_uint(struct jw *w, const char *key, uint64_t val);
void jw_double(struct jw *w, const char *key, double val);
void jw_bool(struct jw *w, const char *key, bool val);
void jw_null(struct jw *w, const char *key);

/* True when the document is complete (depth 0) and nothing failed. */
bool jw_ok(const struct jw *w);
/* NUL-terminated text so far ("" when empty or failed to allocate). */
const char *jw_text(const struct jw *w);
size_t jw_len(const struct jw *w);

#endif
