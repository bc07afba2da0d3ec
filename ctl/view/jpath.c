// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading a parsed JSON document by path. See jpath.h. */
#include "ctl/view/jpath.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>

#define JPATH_MAX_KEY	64

struct json_object *jpath_get(const struct json_object *o, const char *path)
{
	/* json-c takes non-const objects for lookups that do not modify them. */
	struct json_object *cur = (struct json_object *)o;
	char key[JPATH_MAX_KEY];

	if (!path)
		return cur;
	while (cur && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		struct json_object *next = NULL;

		if (!n || n >= sizeof(key) || !json_object_is_type(cur, json_type_object))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (!json_object_object_get_ex(cur, key, &next))
			return NULL;
		cur = next;
		path += n + (dot ? 1 : 0);
	}
	return cur;
}

double jpath_num(const struct json_object *o, const char *path)
{
	struct json_object *v = jpath_get(o, path);
	double d;

	if (!v || !(json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double)))
		return NAN;
	d = json_object_get_double(v);
	return isfinite(d) ? d : NAN;
}

const char *jpath_str(const struct json_object *o, const char *path)
{
	struct json_object *v = jpath_get(o, path);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int jpath_bool(const struct json_object *o, const char *path)
{
	struct json_object *v = jpath_get(o, path);

	if (!v || !json_object_is_type(v, json_type_boolean))
		return -1;
	return json_object_get_boolean(v) ? 1 : 0;
}

struct json_object *jpath_obj(const struct json_object *o, const char *path)
{
	struct json_object *v = jpath_get(o, path);

	return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

size_t jpath_len(const struct json_object *o, const char *path)
{
	struct json_object *v = jpath_get(o, path);

	return v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

struct json_object *jpath_at(const struct json_object *o, const char *path, size_t i)
{
	struct json_object *v = jpath_get(o, path);

	if (!v || !json_object_is_type(v, json_type_array) || i >= json_object_array_length(v))
		return NULL;
	return json_object_array_get_idx(v, i);
}
