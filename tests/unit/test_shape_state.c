// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/shape/state.c: the state file round-trips with a
 * full class table, every malformed variant is rejected with its line,
 * the lock is exclusive between open files (what a second instance sees),
 * files land where the names say and are listed per namespace only; and
 * the handle arithmetic: class ids and filter priorities never collide.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/shape/state.h"
#include "tests/unit/unit_main.h"

static void fill(struct shape_state *s, unsigned ncls)
{
	memset(s, 0, sizeof(*s));
	s->pid = 4242;
	s->netns_ino = 4026531840ULL;
	s->ifindex = 7;
	snprintf(s->dev, sizeof(s->dev), "veth-shape0");
	s->handle = 0x7862;
	snprintf(s->found_kind, sizeof(s->found_kind), "noqueue");
	for (unsigned i = 0; i < ncls; i++) {
		s->cls[i].minor = (uint16_t)(i + 1);
		s->cls[i].proto = i % 2 ? IPPROTO_TCP : IPPROTO_UDP;
		s->cls[i].flow_port = (uint16_t)(9000 + i);
		snprintf(s->cls[i].receiver, sizeof(s->cls[i].receiver), "fd00::%x/%u", i, 9000 + i);
	}
	s->ncls = ncls;
}

static void test_round_trip(void **state)
{
	struct shape_state a, b;
	char buf[SHAPE_STATE_MAX_FILE], err[128];
	int len;

	(void)state;
	fill(&a, SHAPE_MAX_RECEIVERS);
	len = shape_state_format(&a, buf, sizeof(buf));
	assert_true(len > 0);
	memset(&b, 0x55, sizeof(b));
	assert_int_equal(shape_state_parse(buf, (size_t)len, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* No kind recorded: written as "-", read back as "". */
	fill(&a, 0);
	memset(a.found_kind, 0, sizeof(a.found_kind));
	len = shape_state_format(&a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "found -\n"));
	assert_int_equal(shape_state_parse(buf, (size_t)len, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Too small a buffer. */
	assert_int_equal(shape_state_format(&a, buf, 20), -ENOSPC);
}

static void reject(const char *text, const char *why)
{
	struct shape_state s;
	char err[160];

	memset(&s, 0x33, sizeof(s));
	assert_int_equal(shape_state_parse(text, strlen(text), &s, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why)) {
		print_error("'%s': got '%s', expected '%s'\n", text, err, why);
		fail();
	}
}

#define HEAD "rxbneck-shape-state 1\n"
#define BODY "pid 1\nnetns 2\nifindex 3\ndev eth0\nhandle 7862\nfound noqueue\n"

static void test_rejects(void **state)
{
	char big[300];

	(void)state;
	reject("", "empty");
	reject("rxbneck-shape-state 2\n" BODY, "line 1: not a state file");
	reject(HEAD "pid 1\n", "incomplete");
	reject(HEAD BODY "pid 2\n", "line 8: pid twice");
	reject(HEAD BODY "color blue\n", "unknown key");
	reject(HEAD BODY "class 1 udp 9000\n", "expected MINOR");
	reject(HEAD BODY "class 1 udp 9000 a b\n", "too many fields");
	reject(HEAD BODY "class 0 udp 9000 a\n", "bad minor");
	reject(HEAD BODY "class 1 sctp 9000 a\n", "bad protocol");
	reject(HEAD BODY "class 1 udp 0 a\n", "bad port");
	reject(HEAD BODY "class 1 udp 9 a\nclass 1 tcp 8 b\n", "class 1 twice");
	reject(HEAD "pid 1\nnetns 2\nifindex 3\ndev eth0\nhandle ffff\nfound x\n", "bad handle");
	reject(HEAD "pid 1\nnetns 2\nifindex 3\ndev ../x\nhandle 1\nfound x\n", "bad device");
	reject(HEAD "pid -1\n", "bad pid");
	reject(HEAD "dev a b\n", "bad device");
	reject(HEAD "pid\n", "expected KEY VALUE");
	reject(HEAD "pid 1\0\n", "incomplete");	/* strlen stops at the NUL: "pid 1" */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, HEAD, strlen(HEAD));
	reject(big, "line too long");
	{
		struct shape_state s;
		char err[64];
		const char nul[] = HEAD "pid 1\0x\n";

		assert_int_equal(shape_state_parse(nul, sizeof(nul) - 1, &s, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "NUL"));
	}
}

static void test_files_and_lock(void **state)
{
	char dir[] = "/tmp/rxbneck-shape-test.XXXXXX", path[512], err[128];
	char devs[4][IF_NAMESIZE];
	struct shape_state a, b;
	int fd1, fd2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fill(&a, 3);
	assert_int_equal(shape_state_read(dir, a.netns_ino, a.dev, &b, err, sizeof(err)), -ENOENT);
	assert_int_equal(shape_state_write(dir, &a), 0);
	assert_int_equal(shape_state_read(dir, a.netns_ino, a.dev, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(shape_state_path(path, sizeof(path), dir, a.netns_ino, a.dev, "state"), 0);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(shape_state_path(path, 10, dir, a.netns_ino, a.dev, "state"),
			 -ENAMETOOLONG);
	/* Another namespace's file is not listed. */
	a.netns_ino++;
	assert_int_equal(shape_state_write(dir, &a), 0);
	a.netns_ino--;
	assert_int_equal(shape_state_list(dir, a.netns_ino, devs, 4), 1);
	assert_string_equal(devs[0], "veth-shape0");
	/* The lock: exclusive between two open files, free again once closed. */
	assert_int_equal(shape_state_lock(dir, a.netns_ino, a.dev, &fd1), 0);
	assert_int_equal(shape_state_lock(dir, a.netns_ino, a.dev, &fd2), -EBUSY);
	close(fd1);
	assert_int_equal(shape_state_lock(dir, a.netns_ino, a.dev, &fd2), 0);
	close(fd2);
	assert_int_equal(shape_state_remove(dir, a.netns_ino, a.dev), 0);
	assert_int_equal(shape_state_remove(dir, a.netns_ino, a.dev), 0);
	assert_int_equal(shape_state_list(dir, a.netns_ino, devs, 4), 0);
	assert_int_equal(shape_state_list("/nonexistent-rxbneck", 1, devs, 4), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

static void test_handles(void **state)
{
	uint16_t seen[2 * SHAPE_MAX_RECEIVERS + 4] = { 0 };

	(void)state;
	assert_int_equal(shape_state_classid(0x7862, 1), 0x78620001);
	assert_int_equal(shape_state_classid(0xfffe, 0xffff), 0xfffeffff);
	/* Priorities: one per (class, family), all distinct, never 0. */
	for (uint16_t m = 1; m <= SHAPE_MAX_RECEIVERS; m++) {
		uint16_t p4 = shape_state_prio(m, AF_INET), p6 = shape_state_prio(m, AF_INET6);

		assert_true(p4 > 0 && p6 == p4 + 1);
		assert_true(p6 < sizeof(seen) / sizeof(seen[0]));
		assert_int_equal(seen[p4]++, 0);
		assert_int_equal(seen[p6]++, 0);
	}
}

/* A FIFO in the state file's place: refused at once, not waited on. */
static void test_fifo(void **state)
{
	char dir[] = "/tmp/rxbneck-shape-test.XXXXXX", path[512], err[128];
	struct shape_state a, b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fill(&a, 1);
	assert_int_equal(shape_state_path(path, sizeof(path), dir, a.netns_ino, a.dev, "state"), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);	/* a blocking open would hang: fail instead */
	assert_int_equal(shape_state_read(dir, a.netns_ino, a.dev, &b, err, sizeof(err)), -EINVAL);
	alarm(0);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(shape_state_remove(dir, a.netns_ino, a.dev), 0);
	assert_int_equal(rmdir(dir), 0);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_round_trip),
	cmocka_unit_test(test_rejects),
	cmocka_unit_test(test_files_and_lock),
	cmocka_unit_test(test_handles),
	cmocka_unit_test(test_fifo),
)
