/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Walking the route attributes after a netlink message's fixed part (an
 * inet_diag reply's INET_DIAG_* attributes), bounds-checked: the bytes
 * come from the kernel but are parsed as untrusted input (and fuzzed).
 */
#ifndef RXB_DAEMON_COLLECT_RTATTR_H
#define RXB_DAEMON_COLLECT_RTATTR_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/rtnetlink.h>

/* One attribute: its type and its payload, @len bytes at @data. */
struct rtattr_view {
	unsigned int type;
	const unsigned char *data;
	size_t len;
};

/*
 * The next attribute of the *@alen bytes at *@p into @a, and *@p, *@alen
 * moved past it (to its aligned end): 1; 0 at the end (fewer bytes left
 * than an attribute header); -EBADMSG for a length that does not fit,
 * after which nothing more can be found.
 */
static inline int rtattr_next(const unsigned char **p, size_t *alen, struct rtattr_view *a)
{
	struct rtattr h;
	size_t step;

	if (*alen < sizeof(h))
		return 0;
	memcpy(&h, *p, sizeof(h));
	if (h.rta_len < sizeof(h) || h.rta_len > *alen)
		return -EBADMSG;
	a->type = h.rta_type;
	a->data = *p + RTA_LENGTH(0);
	a->len = h.rta_len - RTA_LENGTH(0);
	step = RTA_ALIGN(h.rta_len);
	if (step >= *alen) {
		*alen = 0;	/* the last one, perhaps without its padding */
		return 1;
	}
	*p += step;
	*alen -= step;
	return 1;
}

#endif
