// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/serve/notify (sd_notify by hand): the datagrams that
 * arrive at a socket standing in for systemd's, abstract and path
 * addresses, and the watchdog's schedule from WATCHDOG_USEC/WATCHDOG_PID.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/notify.h"
#include "tests/unit/unit_main.h"

/* A datagram socket at @name ("@abstract" or a path) standing in for PID 1. */
static int fake_systemd(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, name, strlen(name));
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	else
		unlink(name);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	return fd;
}

static void expect(int fd, const char *text)
{
	char buf[600];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, text);
}

static void nothing(int fd)
{
	char buf[16];

	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

static void test_no_socket(void **state)
{
	struct notify n;

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(notify_init(&n), 0);
	assert_false(notify_enabled(&n));
	assert_int_equal(notify_send(&n, "READY=1"), 0);
	assert_int_equal(notify_watchdog_due_ns(&n), UINT64_MAX);
	notify_finish(&n);
}

static void test_messages(void **state)
{
	char path[64], abs[64];
	struct notify n;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_notify.%d", (int)getpid());
	fd = fake_systemd(path);
	setenv("NOTIFY_SOCKET", path, 1);
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(notify_init(&n), 0);
	assert_true(notify_enabled(&n));
	assert_int_equal(notify_send(&n, "READY=1\nSTATUS=up"), 0);
	expect(fd, "READY=1\nSTATUS=up");
	assert_int_equal(notify_sendf(&n, "STATUS=epoch %d", 42), 0);
	expect(fd, "STATUS=epoch 42");
	assert_int_equal(notify_watchdog_due_ns(&n), UINT64_MAX);
	notify_finish(&n);
	close(fd);
	unlink(path);

	/* The abstract namespace, "@name". */
	snprintf(abs, sizeof(abs), "@rxbneck-test-notify-%d", (int)getpid());
	fd = fake_systemd(abs);
	setenv("NOTIFY_SOCKET", abs, 1);
	assert_int_equal(notify_init(&n), 0);
	assert_int_equal(notify_send(&n, "STOPPING=1"), 0);
	expect(fd, "STOPPING=1");
	notify_finish(&n);
	close(fd);

	/* Not absolute, not abstract: refused. */
	setenv("NOTIFY_SOCKET", "relative", 1);
	assert_int_equal(notify_init(&n), -EINVAL);
	notify_finish(&n);
	unsetenv("NOTIFY_SOCKET");
}

static void test_watchdog(void **state)
{
	char path[64], pid[16];
	struct notify n;
	uint64_t t0, due;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_notify_wd.%d", (int)getpid());
	fd = fake_systemd(path);
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "200000", 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	t0 = rxb_mono_ns();
	assert_int_equal(notify_init(&n), 0);
	due = notify_watchdog_due_ns(&n);
	/* Half the interval: 100 ms from now. */
	assert_true(due >= t0 + 100 * RXB_NSEC_PER_MSEC);
	assert_true(due <= rxb_mono_ns() + 100 * RXB_NSEC_PER_MSEC);
	notify_watchdog(&n, due - 1);
	nothing(fd);
	notify_watchdog(&n, due);
	expect(fd, "WATCHDOG=1");
	assert_int_equal(notify_watchdog_due_ns(&n), due + 100 * RXB_NSEC_PER_MSEC);
	notify_finish(&n);

	/* Meant for another process: no watchdog. */
	setenv("WATCHDOG_PID", "1", 1);
	assert_int_equal(notify_init(&n), 0);
	assert_int_equal(notify_watchdog_due_ns(&n), UINT64_MAX);
	notify_finish(&n);
	/* Garbage is ignored with a warning. */
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "soon", 1);
	assert_int_equal(notify_init(&n), 0);
	assert_int_equal(notify_watchdog_due_ns(&n), UINT64_MAX);
	notify_finish(&n);
	unsetenv("WATCHDOG_USEC");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(path);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_no_socket),
	cmocka_unit_test(test_messages),
	cmocka_unit_test(test_watchdog),
)
