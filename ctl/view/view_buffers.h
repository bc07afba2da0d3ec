/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receive-buffer adaptation's document as text (docs/CONTROL.md):
 * `rxbneckctl buffers`, and its section in `rxbneckctl status`.
 */
#ifndef RXB_CTL_VIEW_BUFFERS_H
#define RXB_CTL_VIEW_BUFFERS_H

#include <stdio.h>

struct json_object;

/* The "buffers" object {"mode", ..., "sockets": [...]}; VIEW_VERBOSE adds
 * the memory figures and the controller's cost. */
void view_buffers(FILE *f, const struct json_object *b, unsigned flags);

/* The same from the document's text (@len bytes): 0, or -EINVAL when it
 * is not a JSON object (said on stderr). */
int view_buffers_text(FILE *f, const char *json, size_t len, unsigned flags);

#endif
