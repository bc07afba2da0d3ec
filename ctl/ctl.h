/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl subcommands. Each lives in ctl/cmd_<name>.c and is one row of
 * the table in ctl/rxbneckctl.c. A handler gets argv with argv[0] = its own
 * name, parses its options (getopt_long), and returns an exit code:
 * CTL_EXIT_OK, CTL_EXIT_FAIL (the work failed), CTL_EXIT_USAGE (bad
 * command line: the message names the offending option).
 */
#ifndef RXB_CTL_CTL_H
#define RXB_CTL_CTL_H

#define CTL_PROG	"rxbneckctl"

enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAIL = 1,
	CTL_EXIT_USAGE = 2,
};

struct ctl_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;	/* one line for `rxbneckctl --help` */
};

int cmd_model(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_senders(int argc, char **argv);
int cmd_buffers(int argc, char **argv);
int cmd_reload(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_streams(int argc, char **argv);

#endif
