// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * overhead_nop: the reference of bench/overhead.sh's cost per event.
 *
 * Attaches a BPF program that does nothing to each tracepoint named on the
 * command line, turns BPF run-time statistics on, and waits until its
 * standard input is closed (or SIGINT/SIGTERM). Then it prints one JSON
 * object: per tracepoint the program's run_cnt and run_time_ns.
 *
 * A program's run_time_ns includes what the statistics themselves cost
 * (a clock read before and after each run) and the call into the program;
 * on a VM that is 40-90 ns per run, as much as a small program's body.
 * Attached beside the probes on the same tracepoints, in the same seconds
 * of the same traffic, this program measures exactly that part, so that
 * (probe's ns per run - this program's) is the probe's own work.
 *
 * usage: overhead_nop TRACEPOINT...   (root)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/probe.h"
#include "common/log.h"

#define NOP_MAX_TPS 32

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Until stdin is closed or a signal comes. */
static void wait_for_end(void)
{
	char buf[256];

	while (!stop) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

		if (n == 0 || (n < 0 && errno != EINTR))
			return;
	}
}

static int print_stats(char **tps, const int *prog_fd, int n)
{
	printf("{");
	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(prog_fd[i], &info, &len)) {
			fprintf(stderr, "overhead_nop: %s: reading its statistics: %s\n", tps[i],
				strerror(errno));
			return 1;
		}
		printf("%s\"%s\": {\"run_cnt\": %llu, \"run_time_ns\": %llu}", i ? ", " : "",
		       tps[i], (unsigned long long)info.run_cnt,
		       (unsigned long long)info.run_time_ns);
	}
	printf("}\n");
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	int prog_fd[NOP_MAX_TPS], link_fd[NOP_MAX_TPS], n = argc - 1, stats_fd, rc;
	struct sigaction sa = { .sa_handler = on_signal };

	if (n < 1 || n > NOP_MAX_TPS || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: overhead_nop TRACEPOINT... (1 to %d; root)\n"
			"Attaches a do-nothing BPF program to each tracepoint until stdin\n"
			"closes, then prints their run_cnt and run_time_ns as JSON.\n",
			NOP_MAX_TPS);
		return n < 1 || n > NOP_MAX_TPS ? 2 : 0;
	}
	rxb_log_set_ident("overhead_nop");
	rxb_log_set_level(RXB_LOG_WARNING);
	probe_route_libbpf_log();
	for (int i = 0; i < n; i++) {
		link_fd[i] = probe_nop_attach(argv[i + 1], &prog_fd[i]);
		if (link_fd[i] < 0) {
			fprintf(stderr, "overhead_nop: tracepoint %s: %s\n", argv[i + 1],
				strerror(-link_fd[i]));
			return 1;
		}
	}
	stats_fd = probe_enable_stats();
	if (stats_fd < 0) {
		fprintf(stderr, "overhead_nop: BPF run-time statistics: %s\n",
			strerror(-stats_fd));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	wait_for_end();
	rc = print_stats(argv + 1, prog_fd, n);
	close(stats_fd);
	for (int i = 0; i < n; i++) {
		close(link_fd[i]);
		close(prog_fd[i]);
	}
	return rc;
}
