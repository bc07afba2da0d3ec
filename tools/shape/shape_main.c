// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape: apply rxbneckd's RATE to senders that do not speak the
 * protocol, with the kernel's traffic control on the sending host.
 * Options, the event loop, signals; the work is in agent.c and peer.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/shape/agent.h"
#include "tools/shape/conf.h"

static const char *const prog = "rxbneck-shape";

static void help(void)
{
	char g[4096], r[4096];

	shape_conf_describe(g, sizeof(g), false);
	shape_conf_describe(r, sizeof(r), true);
	printf(
"Usage: rxbneck-shape --receiver HOST[:PORT] --flow-port PORT [RECEIVER OPTIONS]\n"
"                     [--receiver ...] [OPTIONS]\n"
"       rxbneck-shape --config FILE [OPTIONS]\n"
"       rxbneck-shape --cleanup [--config FILE | --receiver ...] [--state-dir DIR]\n"
"\n"
"On a sending host, ask each receiver's rxbneckd (as a sender of its flow) for\n"
"the rate to send at, and hold the host's traffic to that flow to it with an HTB\n"
"class on the egress device: any sender, unmodified. While a daemon is\n"
"unreachable the last rate is kept for --hold seconds, then --fallback applies.\n"
"On exit (SIGTERM, SIGINT, an error) the device gets its own root qdisc back.\n"
"\n"
"Receiver options (after the --receiver they belong to; in a config file, keys\n"
"of a [receiver NAME] section):\n%s"
"\n"
"Options (config file: keys of the [shape] section):\n%s"
"  -c, --config FILE           read receivers and settings from FILE first\n"
"  -n, --dry-run               change nothing: print the tc commands instead\n"
"  -j, --json                  status reports as JSON lines on stdout\n"
"      --cleanup               remove what earlier instances left, then exit\n"
"  -h, --help                  this text;  -V, --version\n"
"\n"
"Status: a line per receiver every --status-interval seconds and on SIGUSR1\n"
"(rate in force and why, the daemon's advice, bytes and packets sent, drops, the\n"
"queue's peak). PAUSE is not applied: see rxbneck-shape(8).\n"
"\n"
"Example:\n"
"  rxbneck-shape --receiver recv1.example.org --flow-port 9000 --dev eth0\n", r, g);
}

/* SIGINT/SIGTERM/SIGHUP/SIGUSR1 through a signalfd, so that a signal
 * interrupts nothing half-done. */
static int signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Returns the signal that ends the loop, 0 if none. */
static int read_signals(int sfd, struct shape_agent *a)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGUSR1:
			shape_status_print(a, rxb_mono_ns(), "status");
			break;
		case SIGHUP:
			rxb_notice("SIGHUP: the configuration is read at start-up only; restart "
				   "to change it");
			break;
		default:
			return (int)si.ssi_signo;
		}
	}
	return 0;
}

static int run(struct shape_agent *a, int sfd)
{
	struct pollfd pfd[SHAPE_MAX_RECEIVERS + 1];
	struct shape_rx *who[SHAPE_MAX_RECEIVERS + 1];
	int sig = 0;

	while (!sig && !a->fatal) {
		uint64_t now = rxb_mono_ns(), next = shape_agent_next_ns(a, now);
		int timeout = next <= now ? 0 : (int)((next - now + 999999) / 1000000);
		unsigned n = 1;

		if (timeout > 1000)
			timeout = 1000;
		pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (unsigned i = 0; i < a->nrx; i++) {
			struct shape_rx *rx = &a->rx[i];

			if (!rx->connected)
				continue;
			pfd[n] = (struct pollfd){ .fd = rxbneck_client_fd(rx->client),
						  .events = rxbneck_client_poll_events(rx->client) };
			who[n++] = rx;
		}
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			rxb_log_errno(RXB_LOG_ERR, errno, "poll");
			return -1;
		}
		if (pfd[0].revents)
			sig = read_signals(sfd, a);
		for (unsigned i = 1; i < n && !sig; i++)
			if (pfd[i].revents)
				shape_peer_process(a, who[i], rxb_mono_ns());
		if (!sig)
			shape_agent_tick(a, rxb_mono_ns());
	}
	if (sig)
		rxb_notice("%s: stopping, restoring the devices", strsignal(sig));
	return a->fatal ? -1 : 0;
}

int main(int argc, char **argv)
{
	static struct shape_conf conf;
	static struct shape_agent agent;
	struct shape_cli cli;
	char err[512];
	int sfd, e, rc = 0;

	rxb_log_set_ident(prog);
	shape_conf_defaults(&conf);
	e = shape_conf_parse_args(argc, argv, &conf, &cli, err, sizeof(err));
	if (e) {
		fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog, err, prog);
		return 2;
	}
	if (cli.help) {
		help();
		return 0;
	}
	if (cli.version) {
		printf("%s %s\n", prog, RXB_VERSION);
		return 0;
	}
	e = shape_conf_check(&conf, cli.cleanup, err, sizeof(err));
	if (e) {
		fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog, err, prog);
		return 2;
	}
	rxb_log_set_level(conf.log_level);
	sfd = signals_fd();
	if (sfd < 0) {
		rxb_log_errno(RXB_LOG_ERR, errno, "signalfd");
		return 1;
	}
	e = shape_agent_init(&agent, &conf, cli.dry_run, cli.json, stdout, err, sizeof(err));
	if (!e)
		e = shape_agent_cleanup(&agent, err, sizeof(err));
	if (!e && !cli.cleanup) {
		if (agent.fq == 1)
			rxb_info("the fq qdisc is available, but per-socket pacing is not "
				 "implemented: shaping with HTB");
		rxb_info("%s", shape_status_pause_note);
		e = shape_agent_start(&agent, err, sizeof(err));
		if (!e) {
			rc = run(&agent, sfd);
			shape_status_print(&agent, rxb_mono_ns(), "final");
			if (agent.fatal)
				rxb_err("%s", agent.fatal_msg);
			shape_agent_restore(&agent);
		}
	}
	if (e) {
		rxb_err("%s", err);
		rc = -1;
	}
	shape_agent_finish(&agent);
	close(sfd);
	return rc ? 1 : 0;
}
