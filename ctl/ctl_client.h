/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl's side of the command protocol (docs/CONTROL.md): connect to
 * rxbneckd's unix socket, send one request line, copy the answer's body to
 * standard output. The daemon renders text and JSON itself, so nothing is
 * parsed here but the status line ("OK" or "ERR CODE message").
 */
#ifndef RXB_CTL_CTL_CLIENT_H
#define RXB_CTL_CTL_CLIENT_H

#include <stdbool.h>

#define CTL_DEFAULT_SOCKET	"/run/rxbneckd/rxbneckd.sock"
#define CTL_SOCKET_ENV		"RXBNECKCTL_SOCKET"
#define CTL_DEFAULT_TIMEOUT_S	10
#define CTL_MAX_ANSWER		(2 * 1024 * 1024)	/* bytes accepted */

/* The socket to use: @opt (-s), else $RXBNECKCTL_SOCKET, else the default. */
const char *ctl_client_socket_path(const char *opt);

/*
 * Send "@verb[ json]\n" to the daemon at @path and print the body. Returns
 * CTL_EXIT_OK, or CTL_EXIT_FAIL after printing why on stderr (the daemon's
 * error, or that it could not be reached) - with @json the daemon's JSON
 * error body is still printed on stdout.
 */
int ctl_client_call(const char *cmd, const char *path, const char *verb, bool json,
	     unsigned timeout_s);

/*
 * A whole subcommand that only talks to the daemon: parses -s/--socket,
 * -j/--json, -t/--timeout, -h/--help (printing @help), then ctl_client_call().
 */
int ctl_client_daemon_cmd(int argc, char **argv, const char *verb, const char *help);

#endif
