/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl's side of the command protocol (docs/CONTROL.md): connect to
 * rxbneckd's unix socket, send one request line, read the answer, check it
 * (ctl/view/answer.h) and show it: the JSON body as it came with --json,
 * else the text a view (ctl/view/) makes of it. The daemon answers in JSON
 * only; every word a person reads is written here.
 */
#ifndef RXB_CTL_CTL_CLIENT_H
#define RXB_CTL_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ctl/view/answer.h"

#define CTL_DEFAULT_SOCKET	"/run/rxbneckd/rxbneckd.sock"
#define CTL_SOCKET_ENV		"RXBNECKCTL_SOCKET"
#define CTL_DEFAULT_TIMEOUT_S	10
#define CTL_MAX_ANSWER		ANSWER_MAX_BYTES	/* bytes accepted */

/* "rxbneckctl @cmd: <message>" on stderr; CTL_EXIT_FAIL. */
int ctl_client_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with "(try 'rxbneckctl @cmd --help')"; CTL_EXIT_USAGE. */
int ctl_client_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The socket to use: @opt (-s), else $RXBNECKCTL_SOCKET, else the default. */
const char *ctl_client_socket_path(const char *opt);

/* An answer as read (raw, len) and as parsed (a). */
struct ctl_client_answer {
	char *raw;
	size_t len;
	struct answer a;
};

/*
 * Send "@verb json\n" to the daemon at @path and read and check the answer
 * into @out (release with ctl_client_answer_release()). Returns
 * CTL_EXIT_OK, or CTL_EXIT_FAIL after printing why on stderr (the daemon
 * could not be reached, did not answer in time, or answered something that
 * is not a valid answer). @cmd names the command in messages.
 */
int ctl_client_ask(const char *cmd, const char *path, const char *verb, unsigned timeout_s,
		   struct ctl_client_answer *out);
void ctl_client_answer_release(struct ctl_client_answer *a);

/* A view: the document as text (ctl/view/view.h, VIEW_* @flags). */
typedef void (*ctl_client_view_fn)(FILE *f, const struct json_object *doc, unsigned flags);

/*
 * Show @a: an ERR on stderr (and its JSON body on stdout with @json),
 * exit CTL_EXIT_FAIL; an OK as its JSON body with @json, else through
 * @view.
 */
int ctl_client_show(const char *cmd, const struct ctl_client_answer *a, bool json,
		    ctl_client_view_fn view, unsigned flags);

/* What the options every command that asks the daemon takes set. */
struct ctl_client_opts {
	const char *socket;		/* -s; NULL: ctl_client_socket_path()'s */
	unsigned timeout_s;		/* -t; start at CTL_DEFAULT_TIMEOUT_S */
	unsigned flags;			/* VIEW_VERBOSE with -v */
	bool json;			/* -j */
};

/* Their getopt_long() entries (short codes 's', 'j', 'v', 't'), for a
 * command's table before its terminating entry. */
#define CTL_CLIENT_LONGOPTS \
	{ "socket", required_argument, NULL, 's' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "timeout", required_argument, NULL, 't' }

/*
 * For a command's getopt_long() loop: takes option @c with value @arg into
 * @o if it is one of CTL_CLIENT_LONGOPTS. Returns 0 when taken,
 * CTL_EXIT_USAGE after saying why @arg is bad, -1 when @c is not one of them.
 */
int ctl_client_opt(const char *cmd, int c, const char *arg, struct ctl_client_opts *o);

/* A subcommand that only asks the daemon one verb. */
/* The options every command that asks the daemon takes, for its --help. */
#define CTL_CLIENT_OPTIONS_HELP \
	"  -s, --socket PATH   the daemon's control socket; default\n" \
	"                      $" CTL_SOCKET_ENV " or " CTL_DEFAULT_SOCKET ".\n" \
	"  -t, --timeout S     give up after S seconds (default 10).\n" \
	"  -h, --help          this text.\n"

struct ctl_client_cmd {
	const char *verb;
	const char *help;		/* --help */
	ctl_client_view_fn view;
	bool verbose;			/* takes -v/--verbose (VIEW_VERBOSE) */
	bool legend;			/* --help ends with view_legend() */
};

/*
 * The whole subcommand: parses -s/--socket, -j/--json, -t/--timeout,
 * -h/--help (and -v/--verbose when @dc->verbose), then asks and shows.
 */
int ctl_client_daemon_cmd(int argc, char **argv, const struct ctl_client_cmd *dc);

#endif
