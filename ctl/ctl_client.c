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
#include "ctl/view/view.h"

const char *ctl_client_socket_path(const char *opt)
{
	const char *env = getenv(CTL_SOCKET_ENV);

	if (opt)
		return opt;
	if (env && env[0])
		return env;
	return CTL_DEFAULT_SOCKET;
}

/* "rxbneckctl CMD: " and the message on stderr, without the line's end. */
static void say(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, CTL_PROG " %s: ", cmd);
	vfprintf(stderr, fmt, ap);
}

int ctl_client_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CTL_EXIT_FAIL;
}

static int connect_to(const char *cmd, const char *path, int *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return ctl_client_fail(cmd, "socket path too long: %s", path);
	rxb_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ctl_client_fail(cmd, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		return ctl_client_fail(cmd, "cannot connect to %s: %s%s", path, strerror(err),
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

int ctl_client_ask(const char *cmd, const char *path, const char *verb, unsigned timeout_s,
		   struct ctl_client_answer *out)
{
	uint64_t deadline = rxb_mono_ns() + (uint64_t)timeout_s * RXB_NSEC_PER_SEC;
	char line[192], why[ANSWER_WHY_LEN];
	int fd = -1, err, rc;

	memset(out, 0, sizeof(*out));
	/* "json" also makes a daemon of control protocol 1 answer in JSON. */
	snprintf(line, sizeof(line), "%s json\n", verb);
	rc = connect_to(cmd, path, &fd);
	if (rc)
		return rc;
	err = send_request(fd, line, deadline);
	if (!err)
		err = read_answer(fd, deadline, &out->raw, &out->len);
	close(fd);
	if (err == -ETIMEDOUT)
		return ctl_client_fail(cmd, "no answer from %s within %u s", path, timeout_s);
	if (err == -EFBIG)
		return ctl_client_fail(cmd, "answer from %s over %d bytes", path, CTL_MAX_ANSWER);
	if (err)
		return ctl_client_fail(cmd, "talking to %s: %s", path, strerror(-err));
	if (answer_parse(out->raw, out->len, &out->a, why)) {
		ctl_client_answer_release(out);
		return ctl_client_fail(cmd, "the answer from %s is not valid: %s", path, why);
	}
	return CTL_EXIT_OK;
}

void ctl_client_answer_release(struct ctl_client_answer *a)
{
	answer_release(&a->a);
	free(a->raw);
	a->raw = NULL;
}

/* The body exactly as the daemon sent it (after the status line). */
static int print_body(const char *cmd, const struct ctl_client_answer *a)
{
	const char *nl = memchr(a->raw, '\n', a->len);
	size_t off = nl ? (size_t)(nl + 1 - a->raw) : a->len;

	if (fwrite(a->raw + off, 1, a->len - off, stdout) != a->len - off || fflush(stdout))
		return ctl_client_fail(cmd, "writing the answer: %s", strerror(errno));
	return CTL_EXIT_OK;
}

int ctl_client_show(const char *cmd, const struct ctl_client_answer *a, bool json,
		    ctl_client_view_fn view, unsigned flags)
{
	if (!a->a.ok) {
		fprintf(stderr, CTL_PROG " %s: %s %s\n", cmd, a->a.code, a->a.message);
		if (json && a->a.doc)
			print_body(cmd, a);
		return CTL_EXIT_FAIL;
	}
	if (json)
		return print_body(cmd, a);
	view(stdout, a->a.doc, flags);
	if (fflush(stdout) || ferror(stdout))
		return ctl_client_fail(cmd, "writing the answer: %s", strerror(errno));
	return CTL_EXIT_OK;
}

int ctl_client_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try '" CTL_PROG " %s --help')\n", cmd);
	return CTL_EXIT_USAGE;
}

int ctl_client_opt(const char *cmd, int c, const char *arg, struct ctl_client_opts *o)
{
	uint64_t u;

	switch (c) {
	case 's':
		if (!arg[0])
			return ctl_client_usage(cmd, "--socket: empty path");
		o->socket = arg;
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case 'v':
		o->flags |= VIEW_VERBOSE;
		return 0;
	case 't':
		if (rxb_parse_u64(arg, 1, 3600, &u))
			return ctl_client_usage(cmd, "--timeout: '%s' is not a whole number "
						"of seconds in 1..3600", arg);
		o->timeout_s = (unsigned)u;
		return 0;
	}
	return -1;
}

int ctl_client_daemon_cmd(int argc, char **argv, const struct ctl_client_cmd *dc)
{
	static const struct option opts[] = {
		CTL_CLIENT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_client_opts o = { .timeout_s = CTL_DEFAULT_TIMEOUT_S };
	const char *verb = dc->verb;
	struct ctl_client_answer a;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:jvt:h", opts, NULL)) != -1) {
		if (c == 'v' && !dc->verbose)
			return ctl_client_usage(verb, "unknown option '%s'", argv[optind - 1]);
		rc = ctl_client_opt(verb, c, optarg, &o);
		if (rc >= 0) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'h':
			fputs(dc->help, stdout);
			if (dc->legend) {
				fputc('\n', stdout);
				view_legend(stdout);
			}
			return CTL_EXIT_OK;
		case ':':
			return ctl_client_usage(verb, "option '%s' needs a value", argv[optind - 1]);
		default:
			return ctl_client_usage(verb, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ctl_client_usage(verb, "unexpected argument '%s'", argv[optind]);
	rc = ctl_client_ask(verb, ctl_client_socket_path(o.socket), verb, o.timeout_s, &a);
	if (rc)
		return rc;
	rc = ctl_client_show(verb, &a, o.json, dc->view, o.flags);
	ctl_client_answer_release(&a);
	return rc;
}
