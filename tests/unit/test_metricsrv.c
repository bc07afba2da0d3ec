// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of the metrics endpoint (daemon/serve/metricsrv.c) over real
 * loopback TCP, driven by a small epoll loop like the daemon's: GET
 * /metrics answers the renderer's text with the exposition's content type;
 * other methods get 405 with "Allow: GET", other paths 404, junk a 4xx
 * from libmicrohttpd, headers beyond the request bound no 200; the
 * allow-list refuses before anything is read, and a reload of it applies
 * to the next connection; connections beyond the per-address limit are
 * closed; a client that trickles bytes is cut at timeout_s; a renderer
 * that fails gives 500.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/metricsrv.h"
#include "tests/unit/unit_main.h"

struct env {
	int epfd;
	struct metricsrv *m;
	bool fail_render;
	int renders;
};

static int fd_add(void *ctx, int fd, uint32_t ev)
{
	struct env *e = ctx;
	struct epoll_event x = { .events = ev, .data.fd = fd };

	return epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &x) ? -errno : 0;
}

static void fd_del(void *ctx, int fd)
{
	struct env *e = ctx;

	epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void render(void *ctx, struct promtext *w)
{
	struct env *e = ctx;

	e->renders++;
	promtext_family(w, e->fail_render ? "bad name" : "t_up", PROMTEXT_GAUGE, "Up.");
	promtext_sample(w, NULL, NULL, 0, 1);
}

/* One turn of the loop, waiting at most @ms. */
static void turn(struct env *e, int ms)
{
	struct epoll_event ev[8];
	uint64_t now = rxb_mono_ns(), due = metricsrv_next_deadline_ns(e->m);
	int n;

	if (due != UINT64_MAX && (due <= now || (int)((due - now) / 1000000) < ms))
		ms = due <= now ? 0 : (int)((due - now) / 1000000) + 1;
	n = epoll_wait(e->epfd, ev, 8, ms);
	if (n > 0)
		metricsrv_handle(e->m);
	metricsrv_tick(e->m, rxb_mono_ns());
}

static void start(struct env *e, const char *allow, uint32_t per_addr, uint32_t timeout_s)
{
	struct metricsrv_opts o = {
		.addr = "127.0.0.1", .max_conns = 8, .max_conns_per_addr = per_addr,
		.timeout_s = timeout_s, .n_allow = 1,
	};
	struct metricsrv_ops ops = { .ctx = e, .fd_add = fd_add, .fd_del = fd_del,
				     .render = render };

	memset(e, 0, sizeof(*e));
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(e->epfd >= 0);
	assert_int_equal(sendsrv_cidr_parse(allow, &o.allow[0], NULL), 0);
	assert_int_equal(metricsrv_init(&e->m, &o, &ops), 0);
	assert_true(metricsrv_port(e->m) > 0);
}

static void stop(struct env *e)
{
	metricsrv_finish(e->m);
	close(e->epfd);
}

static int connect_to(struct env *e)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(metricsrv_port(e->m)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

/*
 * Read what the server sends on @fd until it closes or @ms pass, turning
 * the loop meanwhile. Returns the bytes read; *closed says whether it
 * closed.
 */
static size_t drain(struct env *e, int fd, char *buf, size_t cap, int ms, bool *closed)
{
	uint64_t end = rxb_mono_ns() + (uint64_t)ms * 1000000;
	size_t len = 0;

	*closed = false;
	buf[0] = '\0';
	while (rxb_mono_ns() < end) {
		ssize_t n;

		turn(e, 5);
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n > 0) {
			len += (size_t)n;
			buf[len] = '\0';
		} else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			*closed = true;
			break;
		}
	}
	return len;
}

/* @req on a new connection; the answer (the server closes after it). */
static void ask(struct env *e, const char *req, size_t req_len, char *out, size_t cap)
{
	int fd = connect_to(e);
	bool closed;

	assert_int_equal(send(fd, req, req_len, MSG_NOSIGNAL), (ssize_t)req_len);
	drain(e, fd, out, cap, 2000, &closed);
	if (!closed)
		fail_msg("not closed after %.30s: got '%.60s'", req, out);
	close(fd);
}

#define ASK(e, req, out) ask(e, req, strlen(req), out, sizeof(out))

static void test_answers(void **state)
{
	struct env e;
	char out[8192];

	(void)state;
	start(&e, "127.0.0.0/8", 4, 5);
	ASK(&e, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 200 ", 13) == 0);
	assert_non_null(strstr(out, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(out, "\r\n\r\n# HELP t_up Up.\n# TYPE t_up gauge\nt_up 1\n"));
	ASK(&e, "GET /metrics?x=1 HTTP/1.0\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.0 200 ", 13) == 0 || strncmp(out, "HTTP/1.1 200 ", 13) == 0);
	ASK(&e, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", out);
	assert_true(strncmp(out, "HTTP/1.1 405 ", 13) == 0);
	assert_non_null(strstr(out, "\r\nAllow: GET\r\n"));
	ASK(&e, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 405 ", 13) == 0);
	ASK(&e, "GET /metrics/x HTTP/1.1\r\nHost: x\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 404 ", 13) == 0);
	ASK(&e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 404 ", 13) == 0);
	ASK(&e, "\x16\x03\x01\x02\x05\x01\xfc\x03\x03 junk\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 400 ", 13) == 0);
	assert_int_equal(e.renders, 2);
	e.fail_render = true;
	ASK(&e, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 500 ", 13) == 0);
	{
		struct metricsrv_stats st;

		metricsrv_stats(e.m, &st);
		assert_int_equal(st.ok, 2);
		assert_int_equal(st.bad_method, 2);
		assert_int_equal(st.not_found, 2);
		assert_int_equal(st.failed, 1);
		assert_int_equal(st.conns, 0);
	}
	stop(&e);
}

static void test_request_bound(void **state)
{
	struct env e;
	size_t n = METRICSRV_REQUEST_BYTES * 2;
	char *req = malloc(n + 64), out[4096];

	(void)state;
	assert_non_null(req);
	start(&e, "127.0.0.0/8", 4, 5);
	strcpy(req, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(req + strlen(req), 'a', n);
	strcpy(req + strlen(req) - 1, "\r\n\r\n");
	ask(&e, req, strlen(req), out, sizeof(out));
	/* libmicrohttpd answers 431 (or closes): never the metrics. */
	assert_null(strstr(out, " 200 "));
	assert_int_equal(e.renders, 0);
	free(req);
	stop(&e);
}

static void test_allow_list(void **state)
{
	struct env e;
	struct sendsrv_cidr c;
	struct metricsrv_stats st;
	char out[4096];

	(void)state;
	start(&e, "10.0.0.0/8", 4, 5);
	ASK(&e, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", out);
	assert_string_equal(out, "");		/* closed before a byte */
	metricsrv_stats(e.m, &st);
	assert_int_equal(st.refused_allow, 1);
	assert_int_equal(e.renders, 0);
	/* A reload: the next connection is admitted. */
	assert_int_equal(sendsrv_cidr_parse("127.0.0.1", &c, NULL), 0);
	metricsrv_set_allow(e.m, &c, 1);
	ASK(&e, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", out);
	assert_true(strncmp(out, "HTTP/1.1 200 ", 13) == 0);
	stop(&e);
}

/* Two idle connections from 127.0.0.1 fill the per-address limit. */
static void test_per_address_limit(void **state)
{
	struct env e;
	struct metricsrv_stats st;
	int a, b, c;
	bool closed;
	char out[256];

	(void)state;
	start(&e, "127.0.0.0/8", 2, 5);
	a = connect_to(&e);
	b = connect_to(&e);
	drain(&e, a, out, sizeof(out), 100, &closed);
	assert_false(closed);
	metricsrv_stats(e.m, &st);
	assert_int_equal(st.conns, 2);
	c = connect_to(&e);
	drain(&e, c, out, sizeof(out), 500, &closed);
	assert_true(closed);
	assert_string_equal(out, "");
	metricsrv_stats(e.m, &st);
	assert_int_equal(st.conns, 2);
	close(a);
	close(b);
	close(c);
	drain(&e, a, out, sizeof(out), 0, &closed);
	stop(&e);
}

/* A byte every 200 ms: never idle for timeout_s, cut at timeout_s all the same. */
static void test_lifetime_cut(void **state)
{
	struct env e;
	struct metricsrv_stats st;
	const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	uint64_t t0;
	int fd;
	bool closed = false;
	char out[256];

	(void)state;
	start(&e, "127.0.0.0/8", 2, 1);
	fd = connect_to(&e);
	t0 = rxb_mono_ns();
	for (int i = 0; i < 25 && !closed; i++) {
		if (send(fd, req + (i % strlen(req)), 1, MSG_NOSIGNAL) != 1)
			break;
		drain(&e, fd, out, sizeof(out), 200, &closed);
	}
	if (!closed)
		drain(&e, fd, out, sizeof(out), 1000, &closed);
	assert_true(closed);
	assert_true(rxb_mono_ns() - t0 < 2500 * RXB_NSEC_PER_MSEC);
	assert_true(rxb_mono_ns() - t0 >= 900 * RXB_NSEC_PER_MSEC);
	metricsrv_stats(e.m, &st);
	assert_int_equal(st.cut, 1);
	assert_int_equal(st.conns, 0);
	assert_int_equal(e.renders, 0);
	close(fd);
	stop(&e);
}

static void test_bad_options(void **state)
{
	struct metricsrv_opts o = { .addr = "127.0.0.1", .max_conns = 4, .max_conns_per_addr = 8,
				    .timeout_s = 1 };
	struct metricsrv_ops ops = { .fd_add = fd_add, .fd_del = fd_del, .render = render };
	struct metricsrv *m;

	(void)state;
	assert_int_equal(metricsrv_init(&m, &o, &ops), -EINVAL);	/* per address > all */
	o.max_conns_per_addr = 1;
	snprintf(o.addr, sizeof(o.addr), "localhost");
	assert_int_equal(metricsrv_init(&m, &o, &ops), -EINVAL);
	assert_null(m);
	assert_int_equal(metricsrv_next_deadline_ns(NULL), UINT64_MAX);
	metricsrv_finish(NULL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_answers),
	cmocka_unit_test(test_request_bound),
	cmocka_unit_test(test_allow_list),
	cmocka_unit_test(test_per_address_limit),
	cmocka_unit_test(test_lifetime_cut),
	cmocka_unit_test(test_bad_options),
)
