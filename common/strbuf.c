// SPDX-License-Identifier: GPL-2.0-or-later
/* Growable text buffer. See strbuf.h. */
#include "common/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *b, size_t max_bytes)
{
	memset(b, 0, sizeof(*b));
	b->max_bytes = max_bytes ? max_bytes : SIZE_MAX - 1;
}

void strbuf_finish(struct strbuf *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

void strbuf_clear(struct strbuf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->buf)
		b->buf[0] = '\0';
}

void strbuf_fail(struct strbuf *b)
{
	b->failed = true;
}

/* Room for @more bytes and the NUL; doubles, from 4 KiB, up to the cap. */
static bool reserve(struct strbuf *b, size_t more)
{
	size_t need, cap;
	char *nbuf;

	if (b->failed)
		return false;
	if (more > b->max_bytes || b->len > b->max_bytes - more) {
		b->failed = true;
		return false;
	}
	need = b->len + more + 1;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (cap > b->max_bytes + 1)
		cap = b->max_bytes + 1;
	nbuf = realloc(b->buf, cap);
	if (!nbuf) {
		b->failed = true;
		return false;
	}
	b->buf = nbuf;
	b->cap = cap;
	return true;
}

void strbuf_add(struct strbuf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void strbuf_adds(struct strbuf *b, const char *s)
{
	strbuf_add(b, s, strlen(s));
}

void strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		strbuf_add(b, small, (size_t)n);
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

const char *strbuf_text(const struct strbuf *b)
{
	return b->buf && !b->failed ? b->buf : "";
}

size_t strbuf_len(const struct strbuf *b)
{
	return b->failed ? 0 : b->len;
}

char *strbuf_take(struct strbuf *b, size_t *len)
{
	char *text = b->failed ? NULL : b->buf;
	size_t max_bytes = b->max_bytes;

	*len = text ? b->len : 0;
	if (!text)
		free(b->buf);
	memset(b, 0, sizeof(*b));
	b->max_bytes = max_bytes;
	return text;
}
