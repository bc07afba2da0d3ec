// SPDX-License-Identifier: GPL-2.0-or-later
/* Streaming JSON writer. See json.h. */
#include "common/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(struct json_writer *w, bool pretty)
{
	memset(w, 0, sizeof(*w));
	strbuf_init(&w->out, 0);
	w->pretty = pretty;
}

void json_finish(struct json_writer *w)
{
	strbuf_finish(&w->out);
	memset(w, 0, sizeof(*w));
}

void json_reset(struct json_writer *w)
{
	strbuf_clear(&w->out);
	w->depth = 0;
	memset(w->need_comma, 0, sizeof(w->need_comma));
}

static void put(struct json_writer *w, const char *s, size_t n)
{
	strbuf_add(&w->out, s, n);
}

static void putf(struct json_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void putf(struct json_writer *w, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		strbuf_fail(&w->out);
		return;
	}
	put(w, tmp, (size_t)n);
}

static void put_string(struct json_writer *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(w, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[6] = { '\\', 'u', '0', '0', 0, 0 };

		switch (*p) {
		case '"':  put(w, "\\\"", 2); break;
		case '\\': put(w, "\\\\", 2); break;
		case '\n': put(w, "\\n", 2); break;
		case '\r': put(w, "\\r", 2); break;
		case '\t': put(w, "\\t", 2); break;
		default:
			if (*p < 0x20) {
				esc[4] = hex[*p >> 4];
				esc[5] = hex[*p & 0xf];
				put(w, esc, 6);
			} else {
				put(w, (const char *)p, 1);
			}
		}
	}
	put(w, "\"", 1);
}

static void indent(struct json_writer *w)
{
	put(w, "\n", 1);
	for (unsigned i = 0; i < w->depth; i++)
		put(w, "  ", 2);
}

/* Separator, indentation and "key": before any value. */
static void begin_value(struct json_writer *w, const char *key)
{
	if (w->out.failed)
		return;
	if (w->need_comma[w->depth])
		put(w, ",", 1);
	if (w->pretty && w->depth > 0)
		indent(w);
	w->need_comma[w->depth] = true;
	if (key) {
		put_string(w, key);
		put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
	}
}

static void open_scope(struct json_writer *w, const char *key, char c)
{
	begin_value(w, key);
	if (w->depth >= JSON_MAX_DEPTH) {
		strbuf_fail(&w->out);
		return;
	}
	put(w, &c, 1);
	w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_scope(struct json_writer *w, char c)
{
	bool had_members;

	if (w->out.failed)
		return;
	if (w->depth == 0) {
		strbuf_fail(&w->out);
		return;
	}
	had_members = w->need_comma[w->depth];
	w->depth--;
	if (w->pretty && had_members)
		indent(w);
	put(w, &c, 1);
}

void json_obj_begin(struct json_writer *w, const char *key) { open_scope(w, key, '{'); }
void json_obj_end(struct json_writer *w) { close_scope(w, '}'); }
void json_arr_begin(struct json_writer *w, const char *key) { open_scope(w, key, '['); }
void json_arr_end(struct json_writer *w) { close_scope(w, ']'); }

void json_str(struct json_writer *w, const char *key, const char *val)
{
	begin_value(w, key);
	if (val)
		put_string(w, val);
	else
		put(w, "null", 4);
}

void json_int(struct json_writer *w, const char *key, int64_t val)
{
	begin_value(w, key);
	putf(w, "%" PRId64, val);
}

void json_uint(struct json_writer *w, const char *key, uint64_t val)
{
	begin_value(w, key);
	putf(w, "%" PRIu64, val);
}

void json_double(struct json_writer *w, const char *key, double val)
{
	begin_value(w, key);
	if (!isfinite(val))
		put(w, "null", 4);
	else
		putf(w, "%.17g", val); /* round-trips exactly */
}

void json_bool(struct json_writer *w, const char *key, bool val)
{
	begin_value(w, key);
	if (val)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void json_null(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	put(w, "null", 4);
}

bool json_obj_begin_opt(struct json_writer *w, const char *key, bool have)
{
	if (have)
		json_obj_begin(w, key);
	else
		json_null(w, key);
	return have;
}

void json_int_opt(struct json_writer *w, const char *key, bool have, int64_t val)
{
	if (have)
		json_int(w, key, val);
	else
		json_null(w, key);
}

void json_uint_opt(struct json_writer *w, const char *key, bool have, uint64_t val)
{
	if (have)
		json_uint(w, key, val);
	else
		json_null(w, key);
}

void json_bool_opt(struct json_writer *w, const char *key, bool have, bool val)
{
	if (have)
		json_bool(w, key, val);
	else
		json_null(w, key);
}

void json_str_array(struct json_writer *w, const char *key, const char *const *v, size_t n)
{
	json_arr_begin(w, key);
	for (size_t i = 0; i < n; i++)
		json_str(w, NULL, v[i]);
	json_arr_end(w);
}

void json_sparse(struct json_writer *w, const char *key, const double *v, size_t n)
{
	char index[24];

	json_obj_begin(w, key);
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0) || !isfinite(v[i]))
			continue;
		snprintf(index, sizeof(index), "%zu", i);
		json_double(w, index, v[i]);
	}
	json_obj_end(w);
}

void json_flag_names(struct json_writer *w, const char *key, uint32_t bits,
		     const char *const *names, size_t n)
{
	json_arr_begin(w, key);
	for (size_t i = 0; i < n && i < 32; i++)
		if (bits & (1u << i))
			json_str(w, NULL, names[i]);
	json_arr_end(w);
}

bool json_ok(const struct json_writer *w)
{
	return !w->out.failed && w->depth == 0;
}

const char *json_text(const struct json_writer *w)
{
	return strbuf_text(&w->out);
}

size_t json_len(const struct json_writer *w)
{
	return strbuf_len(&w->out);
}
