// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl <-> rxbneckd over the control socket. See ctl_client.h. */
#include "ctl/ctl_client.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/util.h"
#include "ctl/ctl.h"

const char *ctl_client_socket_path(const char *opt)
{
	const char *env = getenv(CTL_SOCKET_ENV);

	if (opt)
		return opt;
	if (env && env[0])
		return env;
	return CTL_DEFAULT_SOCKET;
}

static int fail(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, CTL_PROG " %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CTL_EXIT_FAIL;
}

static int connect_to(const char *cmd, const char *path, int *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(cmd, "socket path too long: %s", path);
	rxb_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(cmd, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		return fail(cmd, "cannot connect to %s: %s%s", path, strerror(err),
			    err == ENOENT || err == ECONNREFUSED ?
			    " (is rxbneckd running? -s selects another socket)" :
			    err == EACCES ? " (not in the socket's group?)" : "");
	}
	*out = fd;
	return CTL_EXIT_OK;
}

/* Wait until @fd is ready for @events or the deadline passes. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now = rxb_mono_ns();
	int r;

	if (now >= deadline_ns)
		return -ETIMEDOUT;
	r = poll(&p, 1, (int)((deadline_ns - now) / RXB_NSEC_PER_MSEC) + 1);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

static int send_request(int fd, const char *line, uint64_t deadline_ns)
{
	size_t len = strlen(line), off = 0;

	while (off < len) {
		ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			int err = wait_fd(fd, POLLOUT, deadline_ns);

			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* Read until EOF into a malloc'd, NUL-terminated buffer. */
static int read_answer(int fd, uint64_t deadline_ns, char **out, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			char *p;

			if (cap >= CTL_MAX_ANSWER) {
				free(buf);
				return -EFBIG;
			}
			p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
		r = recv(fd, buf + n, cap - n - 1, MSG_DONTWAIT);
		if (r == 0)
			break;
		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			int err = wait_fd(fd, POLLIN, deadline_ns);

			if (err) {
				free(buf);
				return err;
			}
			continue;
		}
		if (r < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int print_answer(const char *cmd, const char *ans, size_t len, bool json)
{
	const char *nl = memchr(ans, '\n', len);
	const char *body = nl ? nl + 1 : ans + len;
	size_t blen = len - (size_t)(body - ans);

	if (!nl)
		return fail(cmd, "the daemon's answer has no status line");
	if (nl - ans == 2 && !strncmp(ans, "OK", 2)) {
		if (fwrite(body, 1, blen, stdout) != blen || fflush(stdout))
			return fail(cmd, "writing the answer: %s", strerror(errno));
		return CTL_EXIT_OK;
	}
	if (!strncmp(ans, "ERR ", 4)) {
		fprintf(stderr, CTL_PROG " %s: %.*s\n", cmd, (int)(nl - ans - 4), ans + 4);
		if (json && blen)
			fwrite(body, 1, blen, stdout);
		return CTL_EXIT_FAIL;
	}
	return fail(cmd, "unexpected answer from the daemon: %.*s", (int)(nl - ans), ans);
}

int ctl_client_call(const char *cmd, const char *path, const char *verb, bool json,
	     unsigned timeout_s)
{
	uint64_t deadline = rxb_mono_ns() + (uint64_t)timeout_s * RXB_NSEC_PER_SEC;
	char line[64], *ans = NULL;
	size_t len = 0;
	int fd = -1, err, rc;

	snprintf(line, sizeof(line), "%s%s\n", verb, json ? " json" : "");
	rc = connect_to(cmd, path, &fd);
	if (rc)
		return rc;
	err = send_request(fd, line, deadline);
	if (!err)
		err = read_answer(fd, deadline, &ans, &len);
	close(fd);
	if (err == -ETIMEDOUT)
		return fail(cmd, "no answer from %s within %u s", path, timeout_s);
	if (err == -EFBIG)
		return fail(cmd, "answer from %s over %d bytes", path, CTL_MAX_ANSWER);
	if (err)
		return fail(cmd, "talking to %s: %s", path, strerror(-err));
	rc = print_answer(cmd, ans, len, json);
	free(ans);
	return rc;
}

static int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, CTL_PROG " %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try '" CTL_PROG " %s --help')\n", cmd);
	return CTL_EXIT_USAGE;
}

int ctl_client_daemon_cmd(int argc, char **argv, const char *verb, const char *help)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL;
	uint64_t timeout = CTL_DEFAULT_TIMEOUT_S;
	bool json = false;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:jt:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!optarg[0])
				return usage_error(verb, "--socket: empty path");
			sock = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			if (rxb_parse_u64(optarg, 1, 3600, &timeout))
				return usage_error(verb, "--timeout: '%s' is not a whole number "
						   "of seconds in 1..3600", optarg);
			break;
		case 'h':
			fputs(help, stdout);
			return CTL_EXIT_OK;
		case ':':
			return usage_error(verb, "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error(verb, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(verb, "unexpected argument '%s'", argv[optind]);
	return ctl_client_call(verb, ctl_client_socket_path(sock), verb, json, (unsigned)timeout);
}
