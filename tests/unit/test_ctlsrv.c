// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/serve/ctlsrv, the rxbneckctl command server, over a real
 * unix socket in a temporary directory, driven by a single-threaded epoll
 * loop in the test (as rxbneckd drives it).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/ctlsrv.h"
#include "tests/unit/unit_main.h"

struct h {
	int epfd;
	struct ctlsrv *cs;
	char dir[64];
	char path[96];
	size_t big;		/* "big" answers this many bytes */
	int requests;
	struct ctl_request last;
	char last_verb[32];
};

static int h_add(void *ctx, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(((struct h *)ctx)->epfd, EPOLL_CTL_ADD, fd, &e) ? -errno : 0;
}

static int h_mod(void *ctx, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(((struct h *)ctx)->epfd, EPOLL_CTL_MOD, fd, &e) ? -errno : 0;
}

static void h_del(void *ctx, int fd)
{
	epoll_ctl(((struct h *)ctx)->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* The handler: "echo ARGS" answers them; "big" a large body; else unknown. */
static void h_request(void *ctx, const struct ctl_request *req, struct ctl_reply *rep)
{
	struct h *h = ctx;

	h->requests++;
	h->last = *req;
	rxb_strlcpy(h->last_verb, req->verb, sizeof(h->last_verb));
	if (!strcmp(req->verb, "echo")) {
		strbuf_addf(&rep->body, "echo");
		for (int i = 0; i < req->argc; i++)
			strbuf_addf(&rep->body, " %s", req->argv[i]);
		strbuf_adds(&rep->body, "\n");
	} else if (!strcmp(req->verb, "big")) {
		for (size_t i = 0; i < h->big; i++)
			strbuf_add(&rep->body, i % 64 == 63 ? "\n" : "x", 1);
	} else if (!strcmp(req->verb, "fail")) {
		rep->err = CTL_ERR_FAILED;
		rxb_strlcpy(rep->msg, "it failed", sizeof(rep->msg));
	} else {
		rep->err = CTL_ERR_UNKNOWN;
		snprintf(rep->msg, sizeof(rep->msg), "unknown command '%s'", req->verb);
	}
}

static void start(struct h *h, uint32_t mode)
{
	struct ctlsrv_opts o = { .mode = mode, .gid = (gid_t)-1 };
	struct ctlsrv_ops ops = {
		.ctx = h, .fd_add = h_add, .fd_mod = h_mod, .fd_del = h_del,
		.request = h_request,
	};

	memset(h, 0, sizeof(*h));
	snprintf(h->dir, sizeof(h->dir), "/tmp/test_ctlsrv.XXXXXX");
	assert_non_null(mkdtemp(h->dir));
	snprintf(h->path, sizeof(h->path), "%s/ctl.sock", h->dir);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(h->epfd >= 0);
	o.path = h->path;
	assert_int_equal(ctlsrv_init(&h->cs, &o, &ops), 0);
}

static void stop(struct h *h)
{
	struct stat st;

	ctlsrv_finish(h->cs);
	assert_int_equal(stat(h->path, &st), -1);	/* the socket file is gone */
	close(h->epfd);
	rmdir(h->dir);
}

/* Run the loop for about @ms. */
static void pump(struct h *h, int ms)
{
	uint64_t end = rxb_mono_ns() + (uint64_t)ms * RXB_NSEC_PER_MSEC;

	do {
		struct epoll_event ev[16];
		int n = epoll_wait(h->epfd, ev, 16, 5);

		for (int i = 0; i < n; i++)
			ctlsrv_handle(h->cs, ev[i].data.fd, ev[i].events);
		ctlsrv_tick(h->cs, rxb_mono_ns());
	} while (rxb_mono_ns() < end);
}

/*
 * Run the loop until the server holds @want clients, for at most 5 s: a
 * fixed few milliseconds were not enough once on a VM whose vCPU the host
 * had stopped (31 closed clients still held after pump(20)).
 */
static void pump_clients(struct h *h, uint32_t want)
{
	uint64_t end = rxb_mono_ns() + 5000 * RXB_NSEC_PER_MSEC;
	struct ctlsrv_stats st;

	for (;;) {
		pump(h, 5);
		ctlsrv_stats(h->cs, &st);
		if (st.clients == want || rxb_mono_ns() >= end)
			break;
	}
	assert_int_equal(st.clients, want);
}

static int client(struct h *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	rxb_strlcpy(sa.sun_path, h->path, sizeof(sa.sun_path));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void put(int fd, const char *s, size_t n)
{
	assert_int_equal(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Part of a request, read by the server before the test goes on. */
static void put_part(struct h *h, int fd, const char *part)
{
	put(fd, part, strlen(part));
	pump(h, 20);
}

/* Pump while reading @fd until EOF; returns the malloc'd answer. */
static char *answer(struct h *h, int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	uint64_t end = rxb_mono_ns() + 5 * RXB_NSEC_PER_SEC;

	assert_non_null(buf);
	for (;;) {
		ssize_t r = recv(fd, buf + n, cap - n - 1, MSG_DONTWAIT);

		if (r == 0)
			break;
		if (r > 0) {
			n += (size_t)r;
			if (n + 1 == cap) {
				cap *= 2;
				buf = realloc(buf, cap);
				assert_non_null(buf);
			}
			continue;
		}
		assert_true(errno == EAGAIN);
		assert_true(rxb_mono_ns() < end);
		pump(h, 2);
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	close(fd);
	return buf;
}

static char *ask(struct h *h, const char *req)
{
	int fd = client(h);

	put(fd, req, strlen(req));
	return answer(h, fd, NULL);
}

static void test_requests(void **state)
{
	struct h h;
	char *a;
	struct stat st;

	(void)state;
	start(&h, 0640);
	assert_int_equal(stat(h.path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0640);

	a = ask(&h, "echo a b\n");
	assert_string_equal(a, "OK\necho a b\n");
	free(a);
	/* CRLF, tabs, and the json flag. */
	a = ask(&h, "echo\tjson  x\r\n");
	assert_string_equal(a, "OK\necho json x\n");
	assert_true(h.last.json);
	free(a);
	/* An error on a request that parsed: the line and the JSON body,
	 * asked for "json" or not (control protocol 2). */
	a = ask(&h, "nosuch\n");
	assert_string_equal(a, "ERR UNKNOWN_COMMAND unknown command 'nosuch'\n"
			    "{\"error\":{\"code\":\"UNKNOWN_COMMAND\","
			    "\"message\":\"unknown command 'nosuch'\"}}\n");
	free(a);
	a = ask(&h, "fail json\n");
	assert_string_equal(a, "ERR FAILED it failed\n"
			    "{\"error\":{\"code\":\"FAILED\",\"message\":\"it failed\"}}\n");
	free(a);
	/* The peer's credentials reach the handler. */
	assert_int_equal(h.last.pid, getpid());
	assert_int_equal(h.last.uid, getuid());
	stop(&h);
}

static void test_framing(void **state)
{
	struct h h;
	char big[CTLSRV_MAX_REQUEST + 100];
	char *a;
	int fd;

	(void)state;
	start(&h, 0600);
	/* A request split over several writes. */
	fd = client(&h);
	put_part(&h, fd, "ec");
	put_part(&h, fd, "ho sp");
	put(fd, "lit\n", 4);
	a = answer(&h, fd, NULL);
	assert_string_equal(a, "OK\necho split\n");
	free(a);
	/* EOF ends a request without its newline. */
	fd = client(&h);
	put(fd, "echo eof", 8);
	shutdown(fd, SHUT_WR);
	a = answer(&h, fd, NULL);
	assert_string_equal(a, "OK\necho eof\n");
	free(a);
	/* Too long. */
	memset(big, 'a', sizeof(big));
	fd = client(&h);
	put(fd, big, sizeof(big));
	a = answer(&h, fd, NULL);
	assert_non_null(strstr(a, "ERR TOO_LONG"));
	free(a);
	/* Not printable ASCII, NUL, empty, bad verb, too many words. */
	a = ask(&h, "echo \x01\n");
	assert_non_null(strstr(a, "ERR BAD_REQUEST"));
	free(a);
	fd = client(&h);
	put(fd, "echo\0x\n", 7);
	a = answer(&h, fd, NULL);
	assert_non_null(strstr(a, "ERR BAD_REQUEST"));
	free(a);
	a = ask(&h, "\n");
	assert_string_equal(a, "ERR BAD_REQUEST empty request\n");
	free(a);
	a = ask(&h, "Echo\n");
	assert_non_null(strstr(a, "ERR BAD_REQUEST"));
	free(a);
	a = ask(&h, "echo 1 2 3 4 5 6 7 8 9\n");
	assert_string_equal(a, "ERR BAD_REQUEST too many arguments\n");
	free(a);
	/* A client that connects and leaves costs nothing. */
	fd = client(&h);
	close(fd);
	pump(&h, 20);
	assert_int_equal(h.requests, 2);	/* split and eof: bad ones never reach it */
	stop(&h);
}

/* Large answers go out in pieces to a slow reader; too large is an error. */
static void test_large_answer(void **state)
{
	struct h h;
	size_t len;
	char *a;
	int fd;

	(void)state;
	start(&h, 0600);
	h.big = 900 * 1024;
	fd = client(&h);
	put(fd, "big\n", 4);
	pump(&h, 50);	/* the socket buffer fills; the rest waits for EPOLLOUT */
	a = answer(&h, fd, &len);
	assert_int_equal(len, 3 + h.big);
	assert_memory_equal(a, "OK\n", 3);
	free(a);
	h.big = CTLSRV_MAX_RESPONSE + 1;
	a = ask(&h, "big\n");
	assert_non_null(strstr(a, "ERR INTERNAL"));
	free(a);
	stop(&h);
}

/* Full: BUSY at once, eviction of a silent client after CTLSRV_EVICT_NS. */
static void test_busy_and_evict(void **state)
{
	struct h h;
	int fds[CTLSRV_MAX_CLIENTS], extra, late;
	struct ctlsrv_stats st;
	char *a;

	(void)state;
	start(&h, 0600);
	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		fds[i] = client(&h);
	pump_clients(&h, CTLSRV_MAX_CLIENTS);
	extra = client(&h);
	a = answer(&h, extra, NULL);
	assert_non_null(strstr(a, "ERR BUSY"));
	free(a);
	/* After the eviction delay a newcomer takes the oldest silent slot. */
	pump(&h, (int)(CTLSRV_EVICT_NS / RXB_NSEC_PER_MSEC) + 20);
	late = client(&h);
	put(late, "echo late\n", 10);
	a = answer(&h, late, NULL);
	assert_string_equal(a, "OK\necho late\n");
	free(a);
	a = answer(&h, fds[0], NULL);	/* the evicted one was told */
	assert_non_null(strstr(a, "ERR BUSY"));
	free(a);
	ctlsrv_stats(h.cs, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.busy, 1);
	for (int i = 1; i < CTLSRV_MAX_CLIENTS; i++)
		close(fds[i]);
	pump_clients(&h, 0);
	stop(&h);
}

/* A client that never finishes its request is dropped at the deadline. */
static void test_timeout(void **state)
{
	struct h h;
	struct ctlsrv_stats st;
	char buf[128];
	ssize_t n;
	int fd;

	(void)state;
	start(&h, 0600);
	fd = client(&h);
	put_part(&h, fd, "ech");
	assert_true(ctlsrv_next_deadline_ns(h.cs) != UINT64_MAX);
	ctlsrv_tick(h.cs, rxb_mono_ns() + CTLSRV_TIMEOUT_NS + 1);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "ERR TIMEOUT no complete request in time\n");
	assert_int_equal(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);
	ctlsrv_stats(h.cs, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.clients, 0);
	assert_int_equal(ctlsrv_next_deadline_ns(h.cs), UINT64_MAX);
	stop(&h);
}

/* A stale socket is replaced, a live one or a non-socket is not. */
static void test_socket_file(void **state)
{
	struct h h, h2;
	struct ctlsrv *other;
	struct ctlsrv_opts o = { .mode = 0600, .gid = (gid_t)-1 };
	struct ctlsrv_ops ops = {
		.ctx = &h2, .fd_add = h_add, .fd_mod = h_mod, .fd_del = h_del,
		.request = h_request,
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char file[128];
	int fd;

	(void)state;
	start(&h, 0600);
	memset(&h2, 0, sizeof(h2));
	h2.epfd = epoll_create1(EPOLL_CLOEXEC);
	o.path = h.path;
	assert_int_equal(ctlsrv_init(&other, &o, &ops), -EADDRINUSE);
	/* A socket nobody listens on (a crashed daemon's) is replaced. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stale.sock", h.dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	o.path = sa.sun_path;
	assert_int_equal(ctlsrv_init(&other, &o, &ops), 0);
	ctlsrv_finish(other);
	/* A regular file is never removed. */
	snprintf(file, sizeof(file), "%s/file", h.dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	o.path = file;
	assert_int_equal(ctlsrv_init(&other, &o, &ops), -EEXIST);
	unlink(file);
	o.path = "relative.sock";
	assert_int_equal(ctlsrv_init(&other, &o, &ops), -EINVAL);
	close(h2.epfd);
	stop(&h);
}

static void test_ctl_out(void **state)
{
	struct strbuf o;
	char line[] = "status json text";
	struct ctl_request r;
	const char *why = NULL;

	(void)state;
	strbuf_init(&o, 10);
	strbuf_adds(&o, "12345");
	strbuf_addf(&o, "%d", 6789);
	assert_false(o.failed);
	assert_string_equal(o.buf, "123456789");
	strbuf_adds(&o, "ab");		/* 11 > 10 */
	assert_true(o.failed);
	assert_int_equal(o.len, 9);
	strbuf_finish(&o);
	assert_int_equal(ctlsrv_parse_request(line, &r, &why), CTL_OK);
	assert_string_equal(r.verb, "status");
	assert_int_equal(r.argc, 2);
	assert_true(r.json);
	assert_string_equal(ctlsrv_err_name(CTL_ERR_BUSY), "BUSY");
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_requests),
	cmocka_unit_test(test_framing),
	cmocka_unit_test(test_large_answer),
	cmocka_unit_test(test_busy_and_evict),
	cmocka_unit_test(test_timeout),
	cmocka_unit_test(test_socket_file),
	cmocka_unit_test(test_ctl_out),
)
