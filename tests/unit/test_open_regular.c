// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * common/util: rxb_open_regular() on what can lie in a state file's place -
 * a regular file under, at and over the size bound, a symbolic link to one,
 * a FIFO with no writer (opening it must not block), a directory, nothing -
 * each made here, so the kind and size it must report are known.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "tests/unit/unit_main.h"

struct tdir {
	char path[PATH_MAX];
	int fd;
};

/* A fresh directory holding "file" (10 bytes), "link" -> file, "fifo", "dir". */
static void tdir_make(struct tdir *t)
{
	int fd;

	snprintf(t->path, sizeof(t->path), "/tmp/rxb-open-regular.XXXXXX");
	assert_non_null(mkdtemp(t->path));
	t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t->fd >= 0);
	fd = openat(t->fd, "file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(rxb_write_all(fd, "0123456789", 10), 0);
	close(fd);
	assert_int_equal(symlinkat("file", t->fd, "link"), 0);
	assert_int_equal(mkfifoat(t->fd, "fifo", 0600), 0);
	assert_int_equal(mkdirat(t->fd, "dir", 0700), 0);
}

static void tdir_remove(struct tdir *t)
{
	static const char *const names[] = { "file", "link", "fifo" };

	for (size_t i = 0; i < RXB_ARRAY_SIZE(names); i++)
		assert_int_equal(unlinkat(t->fd, names[i], 0), 0);
	assert_int_equal(unlinkat(t->fd, "dir", AT_REMOVEDIR), 0);
	close(t->fd);
	assert_int_equal(rmdir(t->path), 0);
}

/* The fd of a regular file of 10 bytes, read to its end. */
static void check_file(int fd, const struct stat *st)
{
	char buf[16];
	size_t len = 0;

	assert_true(fd >= 0);
	assert_true(S_ISREG(st->st_mode));
	assert_int_equal(st->st_size, 10);
	assert_int_equal(rxb_read_all(fd, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(close(fd), 0);
}

static void test_kinds(void **state)
{
	struct tdir t;
	struct stat st;
	char path[PATH_MAX + 16];

	(void)state;
	tdir_make(&t);
	check_file(rxb_open_regular(t.fd, "file", 0, &st), &st);
	check_file(rxb_open_regular(t.fd, "file", 10, &st), &st);
	assert_int_equal(rxb_open_regular(t.fd, "file", 9, &st), -EFBIG);
	/* By path too (AT_FDCWD), as the tools name their files. */
	snprintf(path, sizeof(path), "%s/file", t.path);
	check_file(rxb_open_regular(AT_FDCWD, path, 0, &st), &st);
	assert_int_equal(rxb_open_regular(t.fd, "link", 0, &st), -ELOOP);
	/* No writer: a blocking open would wait here for ever. */
	memset(&st, 0, sizeof(st));
	assert_int_equal(rxb_open_regular(t.fd, "fifo", 0, &st), -EINVAL);
	assert_true(S_ISFIFO(st.st_mode));
	memset(&st, 0, sizeof(st));
	assert_int_equal(rxb_open_regular(t.fd, "dir", 0, &st), -EINVAL);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(rxb_open_regular(t.fd, "none", 0, &st), -ENOENT);
	tdir_remove(&t);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_kinds),
)
