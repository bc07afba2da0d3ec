/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd notification protocol, by hand (sd_notify(3) without
 * libsystemd): datagrams "READY=1", "STATUS=...", "WATCHDOG=1",
 * "RELOADING=1", "STOPPING=1" to the unix socket named by $NOTIFY_SOCKET
 * (a path, or "@name" for the abstract namespace).
 *
 * The watchdog interval comes from $WATCHDOG_USEC (honoured only when
 * $WATCHDOG_PID is unset or names this process); the daemon's loop sends
 * WATCHDOG=1 every half of it, so a stuck loop gets the service restarted.
 *
 * Without $NOTIFY_SOCKET every call is a no-op that succeeds.
 */
#ifndef RXB_DAEMON_NOTIFY_H
#define RXB_DAEMON_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

struct notify {
	int fd;				/* -1 without $NOTIFY_SOCKET */
	struct sockaddr_un addr;
	socklen_t addr_len;
	uint64_t watchdog_ns;		/* 0: no watchdog */
	uint64_t next_watchdog_ns;	/* CLOCK_MONOTONIC */
	uint64_t sent, failed;
};

/* Read the environment, open the socket. 0 or -errno (logged). */
int notify_init(struct notify *n);
void notify_finish(struct notify *n);

bool notify_enabled(const struct notify *n);
/* Send @text (several "KEY=value" lines). 0 or -errno. */
int notify_send(struct notify *n, const char *text);
int notify_sendf(struct notify *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* When the loop must next call notify_watchdog(); UINT64_MAX if never. */
uint64_t notify_watchdog_due_ns(const struct notify *n);
/* WATCHDOG=1 if due at @now_ns. */
void notify_watchdog(struct notify *n, uint64_t now_ns);

#endif
