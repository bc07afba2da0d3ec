/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading a parsed JSON document (json-c) by path, for the views: every
 * lookup tolerates a missing member, a null or a value of the wrong type
 * and says so by its result (NAN, NULL, -1, 0), so a view of a document
 * from an older or newer daemon, or of a garbled one, prints "-" where a
 * value is not what it expects instead of failing.
 *
 * A path is member names separated by dots: "daemon.ctl.clients".
 */
#ifndef RXB_CTL_VIEW_JPATH_H
#define RXB_CTL_VIEW_JPATH_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* The value at @path under @o (NULL @path or "": @o itself), or NULL. */
struct json_object *jpath_get(const struct json_object *o, const char *path);
/* A number (integer or real) that is finite, else NAN. */
double jpath_num(const struct json_object *o, const char *path);
/* A string, else NULL. */
const char *jpath_str(const struct json_object *o, const char *path);
/* 1 true, 0 false, -1 not a boolean. */
int jpath_bool(const struct json_object *o, const char *path);
/* An object (not null), else NULL. */
struct json_object *jpath_obj(const struct json_object *o, const char *path);
/* The length of an array, 0 when it is not one. */
size_t jpath_len(const struct json_object *o, const char *path);
/* Element @i of the array at @path, or NULL. */
struct json_object *jpath_at(const struct json_object *o, const char *path, size_t i);

#endif
