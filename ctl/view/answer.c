// SPDX-License-Identifier: GPL-2.0-or-later
/* The daemon's answer to one control request. See answer.h. */
#include "ctl/view/answer.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "common/vfmt.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

struct json_object *answer_parse_json(const char *buf, size_t len, char *why)
{
	struct json_tokener *tok;
	struct json_object *doc;
	size_t used;

	if (len > ANSWER_MAX_BYTES) {
		snprintf(why, ANSWER_WHY_LEN, "over %d bytes", ANSWER_MAX_BYTES);
		return NULL;
	}
	if (memchr(buf, '\0', len)) {
		snprintf(why, ANSWER_WHY_LEN, "a NUL byte in the JSON document");
		return NULL;
	}
	tok = json_tokener_new_ex(ANSWER_MAX_DEPTH);
	if (!tok) {
		snprintf(why, ANSWER_WHY_LEN, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	doc = json_tokener_parse_ex(tok, buf, (int)len);
	used = tok->char_offset > 0 ? (size_t)tok->char_offset : 0;
	if (!doc) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		snprintf(why, ANSWER_WHY_LEN, "JSON %s at byte %zu",
			 e == json_tokener_continue ? "document cut short" :
			 json_tokener_error_desc(e), used);
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	while (used < len && blank(buf[used]))
		used++;
	if (used < len) {
		snprintf(why, ANSWER_WHY_LEN, "bytes after the JSON document (at byte %zu)", used);
		json_object_put(doc);
		return NULL;
	}
	if (!json_object_is_type(doc, json_type_object)) {
		snprintf(why, ANSWER_WHY_LEN, "the JSON document is not an object");
		json_object_put(doc);
		return NULL;
	}
	return doc;
}

/* "ERR CODE message": the code and message, or -EINVAL. */
static int parse_err(const char *line, size_t n, struct answer *a, char *why)
{
	size_t i = 4, c = 0;
	char msg[ANSWER_MSG_LEN];

	while (i < n && ((line[i] >= 'A' && line[i] <= 'Z') || line[i] == '_')) {
		if (c + 1 >= sizeof(a->code)) {
			snprintf(why, ANSWER_WHY_LEN, "error code too long");
			return -EINVAL;
		}
		a->code[c++] = line[i++];
	}
	a->code[c] = '\0';
	if (!c || (i < n && line[i] != ' ')) {
		snprintf(why, ANSWER_WHY_LEN, "malformed error line");
		return -EINVAL;
	}
	i += i < n;
	n -= i;
	if (n >= sizeof(msg))
		n = sizeof(msg) - 1;
	memcpy(msg, line + i, n);
	msg[n] = '\0';
	vfmt_text(a->message, sizeof(a->message), msg);
	return 0;
}

int answer_parse(const char *buf, size_t len, struct answer *a, char *why)
{
	const char *nl = len ? memchr(buf, '\n', len < 1024 ? len : 1024) : NULL;
	size_t n, body_len;
	const char *body;

	memset(a, 0, sizeof(*a));
	if (len > ANSWER_MAX_BYTES) {
		snprintf(why, ANSWER_WHY_LEN, "answer over %d bytes", ANSWER_MAX_BYTES);
		return -EINVAL;
	}
	if (!nl) {
		snprintf(why, ANSWER_WHY_LEN, len ? "no status line" : "empty answer");
		return -EINVAL;
	}
	n = (size_t)(nl - buf);
	if (n && buf[n - 1] == '\r')
		n--;
	body = nl + 1;
	body_len = len - (size_t)(body - buf);
	if (n == 2 && !memcmp(buf, "OK", 2)) {
		a->ok = true;
	} else if (n > 4 && !memcmp(buf, "ERR ", 4)) {
		if (parse_err(buf, n, a, why))
			return -EINVAL;
	} else {
		snprintf(why, ANSWER_WHY_LEN, "status line is neither OK nor ERR");
		return -EINVAL;
	}
	while (body_len && blank(*body)) {
		body++;
		body_len--;
	}
	if (!body_len) {
		if (!a->ok)
			return 0;
		snprintf(why, ANSWER_WHY_LEN, "OK without a JSON document (a daemon older than "
			 "control protocol 2 answering in text?)");
		return -EINVAL;
	}
	a->doc = answer_parse_json(body, body_len, why);
	return a->doc ? 0 : -EINVAL;
}

void answer_release(struct answer *a)
{
	if (a->doc)
		json_object_put(a->doc);
	a->doc = NULL;
}
