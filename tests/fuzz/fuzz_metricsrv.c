// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the metrics endpoint's request path
 * (daemon/serve/metricsrv.c): the bytes after the first go to the endpoint
 * over a loopback TCP connection, as a scraper's would, and the endpoint
 * runs as in the daemon (libmicrohttpd in external epoll mode, the
 * allow-list, the request handler, the limits). Bit 0 of the first byte
 * takes 127.0.0.1 off the allow-list for this input.
 *
 * HTTP parsing is libmicrohttpd's (its own bounds: request line and
 * headers within the connection's memory pool, METRICSRV_REQUEST_BYTES);
 * what is checked here is what the endpoint decides:
 *  - a refused connection gets no byte;
 *  - every answer starts with an HTTP status line;
 *  - 200 only for a GET: a line of the bytes whose method token (up to
 *    the first space) is "GET" as a C string - libmicrohttpd hands the
 *    handler the method as a string, so a NUL right after "GET" ends it
 *    there whatever follows (get_line() below);
 *  - a 200 carries the exposition (what the renderer wrote);
 *  - the endpoint lets go of every connection: one the client resets (when
 *    the endpoint waits for more of a request) is gone within timeout_s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/serve/metricsrv.h"

#define MAX_INPUT	16384
#define QUIET_NS	(20 * RXB_NSEC_PER_MSEC)
/* A connection ends within timeout_s (1 s here) whatever it does. */
#define MAX_WAIT_NS	(1500 * RXB_NSEC_PER_MSEC)

static struct {
	int epfd;
	struct metricsrv *m;
	struct sendsrv_cidr lo, other;
} g;

static int fd_add(void *ctx, int fd, uint32_t ev)
{
	struct epoll_event x = { .events = ev, .data.fd = fd };

	(void)ctx;
	return epoll_ctl(g.epfd, EPOLL_CTL_ADD, fd, &x) ? -errno : 0;
}

static void fd_del(void *ctx, int fd)
{
	(void)ctx;
	epoll_ctl(g.epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void render(void *ctx, struct promtext *w)
{
	struct promtext_label l = { "q", "a\"b\\c\n" };

	(void)ctx;
	promtext_family(w, "fuzz_up", PROMTEXT_GAUGE, "Up.");
	promtext_sample(w, NULL, &l, 1, 1);
}

static void setup(void)
{
	struct metricsrv_opts o = {
		.addr = "127.0.0.1", .max_conns = 4, .max_conns_per_addr = 4, .timeout_s = 1,
		.n_allow = 1,
	};
	struct metricsrv_ops ops = { .fd_add = fd_add, .fd_del = fd_del, .render = render };

	rxb_log_set_level(RXB_LOG_ERR);
	g.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (g.epfd < 0 || sendsrv_cidr_parse("127.0.0.0/8", &g.lo, NULL) ||
	    sendsrv_cidr_parse("10.0.0.0/8", &g.other, NULL))
		abort();
	o.allow[0] = g.lo;
	if (metricsrv_init(&g.m, &o, &ops))
		abort();
}

static void turn(int ms)
{
	struct epoll_event ev[4];

	if (epoll_wait(g.epfd, ev, 4, ms) > 0)
		metricsrv_handle(g.m);
	metricsrv_tick(g.m, rxb_mono_ns());
}

static int connect_client(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(metricsrv_port(g.m)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK))
		abort();
	return fd;
}

/*
 * Send @req and read the answer until the endpoint closes, or until
 * QUIET_NS pass without a byte (it waits for the rest of a request: the
 * client then resets the connection). Returns the bytes read.
 */
static size_t exchange(const uint8_t *req, size_t n, char *out, size_t cap)
{
	int fd = connect_client();
	size_t sent = 0, len = 0;
	bool closed = false;
	uint64_t quiet_until = rxb_mono_ns() + QUIET_NS;
	struct linger rst = { .l_onoff = 1, .l_linger = 0 };

	while (!closed && rxb_mono_ns() < quiet_until) {
		ssize_t k;

		if (sent < n) {
			k = send(fd, req + sent, n - sent, MSG_NOSIGNAL);
			if (k > 0) {
				sent += (size_t)k;
				quiet_until = rxb_mono_ns() + QUIET_NS;
			}
		}
		turn(1);
		k = recv(fd, out + len, cap - 1 - len, 0);
		if (k > 0) {
			len += (size_t)k;
			quiet_until = rxb_mono_ns() + QUIET_NS;
		} else if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			closed = true;
		}
		if (len == cap - 1)
			closed = true;	/* enough to judge */
	}
	out[len] = '\0';
	if (!closed && setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst)))
		abort();
	close(fd);
	return len;
}

/* Whether the line at @p (up to @end) has the method GET as the handler sees it. */
static bool get_line(const uint8_t *p, const uint8_t *end)
{
	if (end - p < 4 || memcmp(p, "GET", 3) || (p[3] != ' ' && p[3] != '\0'))
		return false;
	for (p += 3; p < end && *p != ' ' && *p != '\n'; p++)
		;
	return p < end && *p == ' ';
}

static void check(const uint8_t *req, size_t n, const char *out, size_t len, bool refused)
{
	size_t skip = 0;

	if (refused) {
		if (len)
			abort();
		return;
	}
	if (!len)
		return;		/* closed without an answer (e.g. nothing sent) */
	if (len < 13 || strncmp(out, "HTTP/1.", 7) || out[8] != ' ')
		abort();
	if (strncmp(out + 9, "200", 3) == 0) {
		/* libmicrohttpd skips lines before the request line. */
		while (skip + 4 <= n && !get_line(req + skip, req + n)) {
			const uint8_t *nl = memchr(req + skip, '\n', n - skip);

			skip = nl ? (size_t)(nl - req) + 1 : n;
		}
		if (skip + 4 > n)
			abort();
		if (!strstr(out, "\r\n\r\n# HELP fuzz_up Up.\n"))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[65536];
	struct metricsrv_stats st;
	bool refused;
	size_t len;

	if (!g.m)
		setup();
	if (size < 1 || size > MAX_INPUT)
		return 0;
	refused = data[0] & 1;
	metricsrv_set_allow(g.m, refused ? &g.other : &g.lo, 1);
	len = exchange(data + 1, size - 1, out, sizeof(out));
	check(data + 1, size - 1, out, len, refused);
	/* The endpoint lets go of the connection. */
	for (uint64_t end = rxb_mono_ns() + MAX_WAIT_NS; rxb_mono_ns() < end;) {
		metricsrv_stats(g.m, &st);
		if (!st.conns)
			return 0;
		turn(1);
	}
	abort();
}
