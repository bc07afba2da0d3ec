/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A growable, NUL-terminated text buffer with a size cap and a sticky
 * failure: once an allocation fails or the text would pass the cap, every
 * later write is a no-op and the buffer reads as empty. Writers (JSON,
 * Prometheus text, control replies) check once, at the end.
 */
#ifndef RXB_COMMON_STRBUF_H
#define RXB_COMMON_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len, cap;
	size_t max_bytes;	/* the text never grows beyond this */
	bool failed;
};

/* @max_bytes 0: no cap but the address space. */
void strbuf_init(struct strbuf *b, size_t max_bytes);
void strbuf_finish(struct strbuf *b);
/* Forget the text and a failure, keep the memory. */
void strbuf_clear(struct strbuf *b);

void strbuf_add(struct strbuf *b, const void *p, size_t n);
void strbuf_adds(struct strbuf *b, const char *s);
void strbuf_addf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Mark the text failed (a writer found its input unusable). */
void strbuf_fail(struct strbuf *b);

/* The text so far, "" when empty or failed; its length, 0 when failed. */
const char *strbuf_text(const struct strbuf *b);
size_t strbuf_len(const struct strbuf *b);
/*
 * Hand the text to the caller (free() it), or NULL when failed; the
 * buffer is left empty, as after strbuf_init() with the same cap.
 */
char *strbuf_take(struct strbuf *b, size_t *len);

#endif
