/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckd.conf's list values ("80, 443", "10.0.0.0/8 192.0.2.0/24"):
 * items separated by blanks and/or commas, distinct, at most a kind's
 * number of them, and back to text. What one item is, and how it reads
 * and shows, comes from the list's kind (config_value.c has one a type).
 */
#ifndef RXB_DAEMON_CONFIG_LIST_H
#define RXB_DAEMON_CONFIG_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct config_list_kind {
	size_t items_off, item_size;	/* the item array in its struct */
	int max;			/* items */
	size_t tok_size;		/* a longer token is shown cut */
	const char *what;		/* "port " in "port 80 is listed twice" */
	bool quote;			/* "'10.0.0.0/8' is listed twice" */
	const char *noun;		/* "more than %d <noun>" */
	const char *none;		/* the message when none is not allowed */
	/* One item from its token (@cut: the token was longer than tok_size
	 * and is shown shortened); 0 or -errno with the problem in @why. */
	int (*item)(const char *tok, bool cut, void *item, char *why, size_t wlen);
	/* One item as text: equal items show the same. */
	void (*show)(const void *item, char *buf, size_t size);
};

/* The item array of a list struct (which starts with its int count n). */
#define CONFIG_LIST_ITEMS(type, member) \
	.items_off = offsetof(type, member), .item_size = sizeof(((type *)0)->member[0])

/*
 * Parse @val into the list struct @field (@field_size bytes; untouched on
 * failure). 0, or -EINVAL/-ERANGE with the problem in @why.
 */
int config_list_parse(const struct config_list_kind *lk, const char *val, void *field,
		      size_t field_size, char *why, size_t wlen);

/* The list in @field as text, items separated by one blank; snprintf-style. */
int config_list_format(const struct config_list_kind *lk, const void *field, char *buf,
		       size_t size);

#endif
