/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's answer to one control request (docs/CONTROL.md §3), as
 * rxbneckctl reads it: a status line, "OK" or "ERR CODE message", then one
 * JSON document. The answer is untrusted input (another program may own
 * the socket, or a daemon may be killed mid-answer): answer_parse() checks
 * every byte it relies on, bounds the JSON's nesting, and says what was
 * wrong rather than failing later in a view.
 */
#ifndef RXB_CTL_VIEW_ANSWER_H
#define RXB_CTL_VIEW_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#define ANSWER_MAX_BYTES	(2 * 1024 * 1024)	/* more is refused */
#define ANSWER_MAX_DEPTH	32			/* JSON nesting */
#define ANSWER_CODE_LEN		32
#define ANSWER_MSG_LEN		512
#define ANSWER_WHY_LEN		160

struct json_object;

struct answer {
	bool ok;			/* "OK" */
	char code[ANSWER_CODE_LEN];	/* "ERR": the code (A-Z and '_') */
	char message[ANSWER_MSG_LEN];	/* "ERR": the message, made printable */
	struct json_object *doc;	/* the body: an object; NULL for an ERR without one */
};

/*
 * Parse @len bytes at @buf (need not be NUL-terminated). 0 and @a filled
 * (release with answer_release()), or -EINVAL with @why (of
 * ANSWER_WHY_LEN bytes) saying what is wrong: a missing or malformed status
 * line, an OK without a JSON object, bytes after the document, a document
 * nested deeper than ANSWER_MAX_DEPTH, more than ANSWER_MAX_BYTES.
 */
int answer_parse(const char *buf, size_t len, struct answer *a, char *why);
void answer_release(struct answer *a);

/*
 * Parse one JSON object of @len bytes (the body alone: what
 * `rxbneckd --measure-only --json` prints per line). NULL with @why on error.
 */
struct json_object *answer_parse_json(const char *buf, size_t len, char *why);

#endif
