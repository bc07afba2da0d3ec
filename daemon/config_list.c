// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckd.conf's list values: parse and format. See config_list.h. */
#include "daemon/config_list.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config.h"
#include "daemon/serve/sendsrv.h"

/* Every list struct starts with its count. */
_Static_assert(offsetof(struct rxb_port_list, n) == 0 && offsetof(struct rxb_cidr_list, n) == 0 &&
	       offsetof(struct rxb_ifname_list, n) == 0 && offsetof(struct rxb_addr_list, n) == 0 &&
	       offsetof(struct rxb_uid_list, n) == 0 && offsetof(struct rxb_path_list, n) == 0,
	       "list structs start with n");

union any_list {
	struct rxb_port_list port;
	struct rxb_cidr_list cidr;
	struct rxb_ifname_list ifname;
	struct rxb_addr_list addr;
	struct rxb_uid_list uid;
	struct rxb_path_list path;
};

/* Room for one token of any list: the longest is a path. */
#define LIST_TOK_MAX	RXB_CONF_PATH_LEN

/* Next token of a list separated by blanks and/or commas; NULL at the end. */
static const char *next_token(const char **p, char *tok, size_t size, bool *too_long)
{
	const char *s = *p;
	size_t n;

	s += strspn(s, " \t,");
	if (!*s)
		return NULL;
	n = strcspn(s, " \t,");
	*too_long = n >= size;
	snprintf(tok, size, "%.*s", (int)(n < size ? n : size - 1), s);
	*p = s + n;
	return tok;
}

int config_list_parse(const struct config_list_kind *lk, const char *val, void *field,
		      size_t field_size, char *why, size_t wlen)
{
	char tok[LIST_TOK_MAX], a[LIST_TOK_MAX], b[LIST_TOK_MAX];
	union {
		struct sendsrv_cidr cidr;
		char text[RXB_CONF_PATH_LEN];
		uint16_t port;
		uint32_t uid;
	} one;
	union any_list list;
	char *items = (char *)&list + lk->items_off;
	int *n = (int *)&list;
	bool cut;

	memset(&list, 0, sizeof(list));
	while (next_token(&val, tok, lk->tok_size, &cut)) {
		memset(&one, 0, sizeof(one));
		if (lk->item(tok, cut, &one, why, wlen))
			return -EINVAL;
		/* Equal items have equal canonical text. */
		lk->show(&one, a, sizeof(a));
		for (int i = 0; i < *n; i++) {
			lk->show(items + (size_t)i * lk->item_size, b, sizeof(b));
			if (strcmp(a, b) == 0) {
				snprintf(why, wlen, "%s%s%s%s is listed twice", lk->what,
					 lk->quote ? "'" : "", tok, lk->quote ? "'" : "");
				return -EINVAL;
			}
		}
		if (*n == lk->max) {
			snprintf(why, wlen, "more than %d %s", lk->max, lk->noun);
			return -ERANGE;
		}
		memcpy(items + (size_t)(*n)++ * lk->item_size, &one, lk->item_size);
	}
	if (*n == 0 && lk->none) {
		snprintf(why, wlen, "%s", lk->none);
		return -EINVAL;
	}
	memcpy(field, &list, field_size);
	return 0;
}

int config_list_format(const struct config_list_kind *lk, const void *field, char *buf,
		       size_t size)
{
	const char *items = (const char *)field + lk->items_off;
	char tmp[LIST_TOK_MAX];
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (int i = 0; i < *(const int *)field; i++) {
		lk->show(items + (size_t)i * lk->item_size, tmp, sizeof(tmp));
		len += (size_t)snprintf(buf + (len < size ? len : size), len < size ? size - len : 0,
					"%s%s", i ? " " : "", tmp);
	}
	return (int)len;
}
