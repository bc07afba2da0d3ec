// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * common/util: rxb_read_all() over pipes holding known byte counts - less
 * than, exactly and more than the buffer, and nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "tests/unit/unit_main.h"

/* A pipe holding @n bytes 0, 1, 2, ... (mod 251), its write end closed. */
static int pipe_with(size_t n)
{
	char data[4096];
	int fd[2];

	assert_true(n <= sizeof(data));
	for (size_t i = 0; i < n; i++)
		data[i] = (char)(i % 251);
	assert_int_equal(pipe(fd), 0);
	assert_int_equal(rxb_write_all(fd[1], data, n), 0);
	close(fd[1]);
	return fd[0];
}

static void check(size_t in_pipe, size_t size, int want_err, size_t want_len)
{
	char buf[4096];
	size_t len = 12345;
	int fd = pipe_with(in_pipe);

	assert_int_equal(rxb_read_all(fd, buf, size, &len), want_err);
	assert_int_equal(len, want_len);
	for (size_t i = 0; i < len; i++)
		assert_int_equal((unsigned char)buf[i], i % 251);
	close(fd);
}

static void test_sizes(void **state)
{
	(void)state;
	check(0, 100, 0, 0);
	check(99, 100, 0, 99);
	check(100, 100, 0, 100);		/* full, then end of file: not too big */
	check(101, 100, -EFBIG, 100);
	check(4000, 1, -EFBIG, 1);
	check(3000, 4096, 0, 3000);
}

static void test_read_error(void **state)
{
	char buf[8];
	size_t len;
	int fd[2];

	(void)state;
	assert_int_equal(pipe(fd), 0);
	/* The write end reads nothing: EBADF. */
	assert_int_equal(rxb_read_all(fd[1], buf, sizeof(buf), &len), -EBADF);
	close(fd[0]);
	close(fd[1]);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_sizes),
	cmocka_unit_test(test_read_error),
)
