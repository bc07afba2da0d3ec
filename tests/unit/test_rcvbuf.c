// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/act/rcvbuf: the /proc text it reads, the allow-list, and the
 * real thing on sockets this test holds: its own and a child's, found by
 * inode and resized through pidfd_getfd(), read back by the holder.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/act/rcvbuf.h"
#include "tests/unit/unit_main.h"

static void test_parse_link(void **state)
{
	uint64_t ino = 0;

	(void)state;
	assert_int_equal(rcvbuf_parse_socket_link("socket:[12345]", 14, &ino), 0);
	assert_int_equal(ino, 12345);
	assert_int_equal(rcvbuf_parse_socket_link("socket:[18446744073709551615]", 29, &ino), 0);
	assert_int_equal(ino, UINT64_MAX);
	assert_int_equal(rcvbuf_parse_socket_link("socket:[18446744073709551616]", 29, &ino),
			 -EINVAL);
	assert_int_equal(rcvbuf_parse_socket_link("pipe:[12345]", 12, &ino), -EINVAL);
	assert_int_equal(rcvbuf_parse_socket_link("socket:[]", 9, &ino), -EINVAL);
	assert_int_equal(rcvbuf_parse_socket_link("socket:[12a]", 12, &ino), -EINVAL);
	assert_int_equal(rcvbuf_parse_socket_link("socket:[12", 10, &ino), -EINVAL);
	/* the length counts, not a terminator */
	assert_int_equal(rcvbuf_parse_socket_link("socket:[7]xyz", 10, &ino), 0);
	assert_int_equal(ino, 7);
	assert_int_equal(rcvbuf_parse_socket_link("socket:[7]", 3, &ino), -EINVAL);
}

static void test_parse_uid(void **state)
{
	uint32_t uid = 0;

	(void)state;
	assert_int_equal(rcvbuf_parse_status_uid("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\n",
						 &uid), 0);
	assert_int_equal(uid, 1000);
	assert_int_equal(rcvbuf_parse_status_uid("Name:\tx\n", &uid), -ENOENT);
	assert_int_equal(rcvbuf_parse_status_uid("Uid:\tx\n", &uid), -EINVAL);
	assert_int_equal(rcvbuf_parse_status_uid("Uid:\t99999999999\n", &uid), -EINVAL);
}

static void test_allowed(void **state)
{
	struct rcvbuf_allow a = { .nuids = 1, .uids = { 1000 }, .nexes = 1,
				  .exes = { "/usr/local/bin/rxbneck-recv" } };
	struct rcvbuf_owner o = { .pid = 1, .uid = 1000, .exe = "/bin/x" };
	struct rcvbuf_allow none = { 0 };

	(void)state;
	assert_true(rcvbuf_allowed(&a, &o));
	o.uid = 1001;
	assert_false(rcvbuf_allowed(&a, &o));
	strcpy(o.exe, "/usr/local/bin/rxbneck-recv");
	assert_true(rcvbuf_allowed(&a, &o));
	/* replaced on disk: not the executable allowed */
	strcpy(o.exe, "/usr/local/bin/rxbneck-recv (deleted)");
	assert_false(rcvbuf_allowed(&a, &o));
	o.uid = 1000;
	assert_false(rcvbuf_allowed(&none, &o));
}

static int udp_socket(uint64_t *inode)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct stat st;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(fstat(fd, &st), 0);
	*inode = st.st_ino;
	return fd;
}

static int rcvbuf_of(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len), 0);
	return v;
}

/* Our own socket: found through the hint, resized, read back by us. */
static void test_own_socket(void **state)
{
	struct rcvbuf_owner o;
	struct rcvbuf_allow a = { .nuids = 1, .uids = { (uint32_t)getuid() } };
	struct rcvbuf_cache c = { 0 };
	int32_t me = (int32_t)getpid();
	uint64_t ino, now;
	int fd = udp_socket(&ino);

	(void)state;
	assert_int_equal(rcvbuf_find_owner(ino, &me, 1, &o), 0);
	assert_int_equal(o.pid, me);
	assert_int_equal(o.fd, fd);
	assert_int_equal(o.uid, getuid());
	assert_true(o.exe[0] == '/');
	/* 100000 asked (within rmem_max): the kernel stores 2 x 50000 */
	assert_int_equal(rcvbuf_set(&o, ino, 100000, false, &now), 0);
	assert_int_equal(now, 100000);
	assert_int_equal(rcvbuf_of(fd), 100000);
	/* the wrong socket: refused, nothing changed */
	assert_int_equal(rcvbuf_set(&o, ino + 1, 200000, false, &now), -ESTALE);
	assert_int_equal(rcvbuf_of(fd), 100000);
	/* FORCE above rmem_max takes CAP_NET_ADMIN (root runs the tests) */
	if (geteuid() == 0) {
		assert_int_equal(rcvbuf_set(&o, ino, 64 << 20, true, &now), 0);
		assert_int_equal(now, 64 << 20);
		assert_int_equal(rcvbuf_of(fd), 64 << 20);
	}
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 1, &a, 1), 0);
	assert_true(c.found && c.allowed);
	a.uids[0] = (uint32_t)getuid() + 1;
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 1, &a, 2), 0);
	assert_false(c.allowed);
	close(fd);
	/* closed: nobody holds it */
	assert_int_equal(rcvbuf_find_owner(ino, &me, 1, &o), -ENOENT);
	c.found = false;
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 1, &a, 3), -ENOENT);
	assert_false(c.allowed);
	/* not looked for again within RCVBUF_RETRY_NS: the cached failure */
	fd = udp_socket(&ino);
	c.inode = ino;
	c.err = -ENOENT;
	c.hinted = true;
	c.looked_ns = 10;
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 1, &a, 10 + RCVBUF_RETRY_NS - 1), -ENOENT);
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 1, &a, 10 + RCVBUF_RETRY_NS), 0);
	assert_true(c.found);
	/* a failure without receiver threads to try is repeated once there are */
	memset(&c, 0, sizeof(c));
	c.inode = ino;
	c.err = -ENOENT;
	c.looked_ns = 10;
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 0, &a, 11), -ENOENT);
	assert_int_equal(rcvbuf_lookup(&c, ino, &me, 1, &a, 12), 0);
	assert_true(c.found && c.hinted);
	close(fd);
}

/* A child's socket, found by walking every process, resized from here. */
static void test_child_socket(void **state)
{
	int pipefd[2], back[2];
	uint64_t ino = 0, now;
	struct rcvbuf_owner o;
	pid_t pid;
	int v = 0;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(back), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t i;
		int fd = udp_socket(&i);
		char c;

		if (write(pipefd[1], &i, sizeof(i)) != sizeof(i) ||
		    read(back[0], &c, 1) != 1)
			_exit(2);
		v = rcvbuf_of(fd);
		_exit(v == 300000 ? 0 : 1);
	}
	assert_int_equal(read(pipefd[0], &ino, sizeof(ino)), (ssize_t)sizeof(ino));
	assert_int_equal(rcvbuf_find_owner(ino, NULL, 0, &o), 0);
	assert_int_equal(o.pid, pid);
	assert_int_equal(rcvbuf_set(&o, ino, 300000, false, &now), 0);
	assert_int_equal(now, 300000);
	assert_int_equal(write(back[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &v, 0), pid);
	assert_true(WIFEXITED(v));
	assert_int_equal(WEXITSTATUS(v), 0);	/* the child saw its buffer change */
	close(pipefd[0]);
	close(pipefd[1]);
	close(back[0]);
	close(back[1]);
}

/* Copy /bin/sleep to @to (mode 0755). */
static void copy_sleep(const char *to)
{
	char buf[65536];
	int in = open("/bin/sleep", O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
}

/*
 * The owner of a socket held by /bin/sleep run from @exe (its socket
 * inherited), found and judged against an allow-list of @allowed; the
 * child killed again.
 */
static void owner_of_exe(const char *exe, const char *allowed, struct rcvbuf_owner *o,
			 bool *ok)
{
	struct rcvbuf_allow a = { .nexes = 1 };
	int sync[2], fd, v;
	uint64_t ino;
	char c;
	pid_t pid;

	strcpy(a.exes[0], allowed);
	fd = socket(AF_INET, SOCK_DGRAM, 0);	/* inherited across the exec */
	assert_true(fd >= 0);
	{
		struct stat st;

		assert_int_equal(fstat(fd, &st), 0);
		ino = st.st_ino;
	}
	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(exe, "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &c, 1), 0);	/* closed by the exec */
	close(sync[0]);
	assert_int_equal(rcvbuf_find_owner(ino, &pid, 1, o), 0);
	*ok = rcvbuf_allowed(&a, o);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &v, 0), pid);
	close(fd);
}

/*
 * An executable whose path is longer than an owner's exe holds is left
 * unknown: not cut to its first 255 bytes, which an allowed path of that
 * length would match. A short one is read whole and matches exactly.
 */
static void test_long_exe(void **state)
{
	char top[] = "/tmp/rxbexe.XXXXXX", dir[256], exe[512], prefix[RCVBUF_PATH_LEN];
	struct rcvbuf_owner o;
	bool ok;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(exe, sizeof(exe), "%s/sleep", top);
	copy_sleep(exe);
	owner_of_exe(exe, exe, &o, &ok);
	assert_string_equal(o.exe, exe);
	assert_true(ok);
	assert_int_equal(unlink(exe), 0);

	snprintf(dir, sizeof(dir), "%s/%0200d", top, 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(exe, sizeof(exe), "%s/%0100d", dir, 1);
	assert_true(strlen(exe) > RCVBUF_PATH_LEN);
	copy_sleep(exe);
	memcpy(prefix, exe, sizeof(prefix) - 1);
	prefix[sizeof(prefix) - 1] = '\0';
	owner_of_exe(exe, prefix, &o, &ok);
	assert_string_equal(o.exe, "");
	assert_false(ok);
	assert_int_equal(unlink(exe), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(rmdir(top), 0);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_parse_link),
	cmocka_unit_test(test_parse_uid),
	cmocka_unit_test(test_allowed),
	cmocka_unit_test(test_own_socket),
	cmocka_unit_test(test_child_socket),
	cmocka_unit_test(test_long_exe),
)
