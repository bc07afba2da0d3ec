/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl subcommands. Each lives in ctl/cmd_<name>.c and is one row of
 * the table in ctl/rxbneckctl.c. A handler gets argv with argv[0] = its own
 * name, parses its options (getopt_long), and returns an exit code:
 * CTL_EXIT_OK, CTL_EXIT_FAIL (the work failed), CTL_EXIT_USAGE (bad
 * command line: the message names the offending option). A command that
 * only asks the daemon one verb has no handler of its own: its row names
 * its struct ctl_client_cmd, which ctl_client_daemon_cmd() runs.
 */
#ifndef RXB_CTL_CTL_H
#define RXB_CTL_CTL_H

#define CTL_PROG	"rxbneckctl"

enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAIL = 1,
	CTL_EXIT_USAGE = 2,
};

struct ctl_client_cmd;

struct ctl_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* NULL: @daemon's */
	const struct ctl_client_cmd *daemon;
	const char *summary;	/* one line for `rxbneckctl --help` */
};

int cmd_model(int argc, char **argv);
int cmd_streams(int argc, char **argv);

extern const struct ctl_client_cmd cmd_status, cmd_senders, cmd_buffers, cmd_reload,
	cmd_version;

#endif
