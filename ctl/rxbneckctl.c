// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl: the command-line front end. Dispatches to the subcommand
 * table below; adding a command is one ctl/cmd_<name>.c and one row here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"

static const struct ctl_cmd cmds[] = {
	{ "status", NULL, &cmd_status,
	  "the daemon's health, measurements, per-flow model inputs and rates" },
	{ "senders", NULL, &cmd_senders,
	  "the senders connected to the daemon" },
	{ "buffers", NULL, &cmd_buffers,
	  "receive-buffer adaptation: each watched socket's buffer, the size wanted, why" },
	{ "reload", NULL, &cmd_reload,
	  "make the daemon re-read its configuration file" },
	{ "version", NULL, &cmd_version,
	  "this program's version, the daemon's and its control protocol's" },
	{ "model", cmd_model, NULL,
	  "offline what-if: bottleneck rate, loss and transfer time for a given workload (no daemon)" },
	{ "streams", cmd_streams, NULL,
	  "how many parallel TCP streams to use: per peer, or from a samples file (no daemon)" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " CTL_PROG " [--help | --version] [-s PATH] COMMAND [OPTIONS]\n"
		"       " CTL_PROG " help COMMAND\n"
		"\n"
		"Query and steer rxbneckd, the receiver-host bottleneck daemon, or\n"
		"run its model offline.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < RXB_ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\n"
		"  -s, --socket PATH   the daemon's control socket, for every command\n"
		"                      that talks to it (default $" CTL_SOCKET_ENV "\n"
		"                      or " CTL_DEFAULT_SOCKET ")\n"
		"\n"
		"`" CTL_PROG " COMMAND --help` describes a command's options.\n"
		"Exit status: 0 success, 1 the command failed, 2 bad usage.\n");
}

static const struct ctl_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < RXB_ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int run_cmd(const struct ctl_cmd *cmd, int argc, char **argv)
{
	if (cmd->run)
		return cmd->run(argc, argv);
	return ctl_client_daemon_cmd(argc, argv, cmd->daemon);
}

/*
 * "-s PATH" / "--socket PATH" / "--socket=PATH" before the command: the
 * same as $RXBNECKCTL_SOCKET (a command's own -s still wins). Returns how
 * many arguments it took, 0 if none, -1 after a usage error.
 */
static int global_socket(int argc, char **argv)
{
	const char *a = argv[1], *path;
	int used = 2;

	if (!strncmp(a, "--socket=", 9)) {
		path = a + 9;
		used = 1;
	} else if (!strcmp(a, "-s") || !strcmp(a, "--socket")) {
		if (argc < 3) {
			fprintf(stderr, CTL_PROG ": option '%s' needs a value\n", a);
			return -1;
		}
		path = argv[2];
	} else {
		return 0;
	}
	if (!path[0]) {
		fprintf(stderr, CTL_PROG ": %s: empty path\n", a);
		return -1;
	}
	if (setenv(CTL_SOCKET_ENV, path, 1)) {
		perror(CTL_PROG ": setenv");
		return -1;
	}
	return used;
}

int main(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	int used;

	rxb_log_set_ident(CTL_PROG);
	if (argc >= 2) {
		used = global_socket(argc, argv);
		if (used < 0)
			return CTL_EXIT_USAGE;
		argv[used] = argv[0];
		argc -= used;
		argv += used;
	}
	if (argc < 2) {
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CTL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf(CTL_PROG " %s\n", RXB_VERSION);
		return CTL_EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		char help[] = "--help";
		char *sub[3] = { NULL, help, NULL };

		if (argc < 3) {
			usage(stdout);
			return CTL_EXIT_OK;
		}
		cmd = find_cmd(argv[2]);
		if (!cmd) {
			fprintf(stderr, CTL_PROG ": unknown command '%s'\n", argv[2]);
			return CTL_EXIT_USAGE;
		}
		sub[0] = argv[2];
		return run_cmd(cmd, 2, sub);
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, CTL_PROG ": unknown option '%s' (commands come first; try --help)\n",
			argv[1]);
		return CTL_EXIT_USAGE;
	}
	cmd = find_cmd(argv[1]);
	if (!cmd) {
		fprintf(stderr, CTL_PROG ": unknown command '%s' (try --help)\n",
			argv[1]);
		return CTL_EXIT_USAGE;
	}
	return run_cmd(cmd, argc - 1, argv + 1);
}
