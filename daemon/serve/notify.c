// SPDX-License-Identifier: GPL-2.0-or-later
/* sd_notify by hand. See notify.h. */
#include "daemon/serve/notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"

static void read_watchdog(struct notify *n)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	uint64_t us, p;

	if (!usec)
		return;
	if (pid && (rxb_parse_u64(pid, 1, INT32_MAX, &p) || p != (uint64_t)getpid()))
		return;		/* meant for another process */
	if (rxb_parse_u64(usec, 1, UINT64_MAX / 1000, &us)) {
		rxb_warn("notify: ignoring WATCHDOG_USEC='%s': not a positive number", usec);
		return;
	}
	n->watchdog_ns = us * 1000;
	n->next_watchdog_ns = rxb_mono_ns() + n->watchdog_ns / 2;
	rxb_info("notify: systemd watchdog every %llu ms, pinged every %llu ms",
		 (unsigned long long)(us / 1000), (unsigned long long)(us / 2000));
}

int notify_init(struct notify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	if (!path || !path[0])
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
		rxb_err("notify: NOTIFY_SOCKET='%s' is not an absolute or abstract socket name",
			path);
		return -EINVAL;
	}
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, path, len);
	if (path[0] == '@')
		n->addr.sun_path[0] = '\0';	/* abstract namespace */
	n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0) {
		int err = errno;

		rxb_log_errno(RXB_LOG_ERR, err, "notify: socket for NOTIFY_SOCKET %s", path);
		return -err;
	}
	read_watchdog(n);
	return 0;
}

void notify_finish(struct notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

bool notify_enabled(const struct notify *n)
{
	return n->fd >= 0;
}

int notify_send(struct notify *n, const char *text)
{
	ssize_t r;

	if (n->fd < 0)
		return 0;
	r = sendto(n->fd, text, strlen(text), MSG_NOSIGNAL,
		   (const struct sockaddr *)&n->addr, n->addr_len);
	if (r < 0) {
		int err = errno;

		/* Once per kind of failure is enough in the log. */
		if (!n->failed++)
			rxb_log_errno(RXB_LOG_WARNING, err, "notify: sending '%.20s...'", text);
		return -err;
	}
	n->sent++;
	return 0;
}

int notify_sendf(struct notify *n, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (n->fd < 0)
		return 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return notify_send(n, buf);
}

uint64_t notify_watchdog_due_ns(const struct notify *n)
{
	return n->fd >= 0 && n->watchdog_ns ? n->next_watchdog_ns : UINT64_MAX;
}

void notify_watchdog(struct notify *n, uint64_t now_ns)
{
	if (n->fd < 0 || !n->watchdog_ns || now_ns < n->next_watchdog_ns)
		return;
	notify_send(n, "WATCHDOG=1");
	n->next_watchdog_ns = now_ns + n->watchdog_ns / 2;
}
