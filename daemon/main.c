// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckd: the receiver-host bottleneck daemon. Parses the command line
 * and hands over to daemon/daemon.c (the loop) or, for --measure-only, to
 * daemon/collect/measure_cli.c. See rxbneckd(8) and docs/daemon.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/collect/measure_cli.h"

#define PROG			"rxbneckd"
#define DEFAULT_CONFIG		"/etc/rxbneckd/rxbneckd.conf"

enum { EXIT_USAGE = 2 };

struct cli {
	const char *config;
	bool foreground;
	bool check;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [-f] [-c FILE]\n"
"       " PROG " -t [-c FILE]\n"
"       " PROG " --measure-only [OPTIONS]     (see --measure-only --help)\n"
"\n"
"rxbneckd measures, with eBPF, how fast this receiving host can take data,\n"
"models it (stochastic reward net -> CTMC, M/M[N]/1/K loss per receive\n"
"queue, RBUDP transfer time) and tells the senders connected to it the\n"
"rate to send at (the effective bottleneck rate) over the rxbneck sender\n"
"control protocol. rxbneckctl(8) queries it over a unix socket.\n"
"\n"
"Each epoch ([measure] interval_ms) it reads the kernel counters of the\n"
"watched flows' receive paths, updates each flow's model inputs (stage A:\n"
"NIC -> stack; stage B: socket -> receiving thread, with the task classes\n"
"of the CPU the thread runs on), solves the model and pushes RATE frames\n"
"to subscribed senders.\n"
"\n"
"Options:\n"
"  -c, --config FILE   configuration file (rxbneckd.conf(5)); default\n"
"                      " DEFAULT_CONFIG ".\n"
"  -f, --foreground    stay in the foreground (what systemd runs). Without\n"
"                      it the daemon detaches, and the command returns once\n"
"                      the daemon is ready (status 0) or has failed\n"
"                      (status 1); its log still goes to standard error.\n"
"  -t, --check-config  read and check the configuration file, print what is\n"
"                      wrong (FILE:LINE: [section] key: problem) and exit.\n"
"      --measure-only  run the measurement collector only and print its\n"
"                      records; every other option is then its own.\n"
"  -h, --help          this text.\n"
"      --version       print the version.\n"
"\n"
"Signals: SIGTERM and SIGINT stop the daemon cleanly (senders get BYE, the\n"
"learned state is saved); SIGHUP re-reads the configuration file - if it\n"
"is bad, the running configuration stays and the log says why.\n"
"\n"
"Logging goes to standard error with a level (err, warning, notice, info,\n"
"debug; [daemon] log_level); under systemd the lines carry journald\n"
"priority prefixes. The daemon writes files only in [daemon] state_dir\n"
"(learned receive-path costs, stream-count history) and creates its\n"
"control socket.\n"
"\n"
"Exit status: 0 stopped by a signal, or -t found no problem; 1 start-up\n"
"failed (bad configuration, a socket could not be opened, ...); 2 bad\n"
"command line.\n"
"\n"
"Needs: CAP_BPF and CAP_PERFMON for the tracepoint probes (without them it\n"
"runs degraded on /proc and netlink and says so), CAP_SYS_PTRACE and\n"
"CAP_NET_ADMIN for [buffer] mode = apply, CAP_SYS_ADMIN only for the\n"
"probes' run-time statistics ([measure] bpf_stats).\n"
"\n"
"See also: rxbneckctl(8), rxbneckd.conf(5), docs/daemon.md, docs/CONTROL.md,\n"
"docs/PROTOCOL.md.\n");
}

/* 0: run; 1: exit 0 (help, version); -1: usage error (reported). */
static int parse_args(int argc, char **argv, struct cli *cli)
{
	enum { OPT_VERSION = 256 };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:fth", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!optarg[0]) {
				fprintf(stderr, PROG ": --config: empty file name\n");
				return -1;
			}
			cli->config = optarg;
			break;
		case 'f':
			cli->foreground = true;
			break;
		case 't':
			cli->check = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_VERSION:
			printf(PROG " %s\n", RXB_VERSION);
			return 1;
		case ':':
			fprintf(stderr, PROG ": option '%s' needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, PROG ": unknown option '%s' (try --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (try --help)\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int check_config(const char *path)
{
	struct rxb_config cfg;
	char err[DAEMON_RELOAD_MSG_LEN];

	if (config_load(path, &cfg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%s: ok\n", path);
	return 0;
}

/*
 * Detach: the command's process waits on a pipe until the daemon says it
 * is ready (one byte) or fails (the pipe closes), and exits accordingly.
 * Returns the write end for the daemon, or -1 after an error.
 */
static int detach(void)
{
	int p[2], fd;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC)) {
		rxb_log_errno(RXB_LOG_ERR, errno, "pipe");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		rxb_log_errno(RXB_LOG_ERR, errno, "fork");
		return -1;
	}
	if (pid > 0) {
		ssize_t n;

		close(p[1]);
		while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
			;
		waitpid(pid, NULL, 0);	/* the intermediate child */
		_exit(n == 1 ? 0 : 1);
	}
	close(p[0]);
	if (setsid() < 0)
		rxb_log_errno(RXB_LOG_WARNING, errno, "setsid");
	pid = fork();		/* not a session leader: no controlling tty */
	if (pid < 0) {
		rxb_log_errno(RXB_LOG_ERR, errno, "fork");
		_exit(1);
	}
	if (pid > 0)
		_exit(0);
	if (chdir("/"))
		rxb_log_errno(RXB_LOG_WARNING, errno, "chdir /");
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		/* Standard error stays: it carries the log. */
		if (dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0)
			rxb_log_errno(RXB_LOG_WARNING, errno, "redirecting stdin/stdout");
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return p[1];
}

static void tell_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		rxb_log_errno(RXB_LOG_WARNING, errno, "telling the parent we are ready");
	close(fd);
}

int main(int argc, char **argv)
{
	struct cli cli = { .config = DEFAULT_CONFIG };
	struct daemon *d;
	int r, ready_fd = -1;

	rxb_log_set_ident(PROG);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--measure-only"))
			return measure_cli_main(argc, argv);
	r = parse_args(argc, argv, &cli);
	if (r)
		return r > 0 ? 0 : EXIT_USAGE;
	if (cli.check)
		return check_config(cli.config);
	if (!cli.foreground) {
		ready_fd = detach();
		if (ready_fd < 0)
			return 1;
	}
	d = malloc(sizeof(*d));
	if (!d) {
		rxb_err("out of memory");
		return 1;
	}
	r = daemon_init(d, cli.config);
	if (r) {
		free(d);
		return 1;	/* the pipe closes: the waiting parent exits 1 */
	}
	tell_ready(ready_fd);
	r = daemon_run(d);
	daemon_finish(d);
	free(d);
	if (!r)
		rxb_notice("stopped");
	return r ? 1 : 0;
}
