// SPDX-License-Identifier: GPL-2.0-or-later
/* Command-line helpers for the RBUDP tools. See cli.h. */
#include "tools/rbudp/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "common/log.h"
#include "common/parse.h"
#include "tools/rbudp/auth.h"

void rbudp_cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(2);
}

uint64_t rbudp_cli_u64(const char *prog, const char *opt, const char *arg,
		       uint64_t min, uint64_t max)
{
	uint64_t v;
	int err = rxb_parse_u64(arg, min, max, &v);

	if (err)
		rbudp_cli_usage_error(prog, "%s '%s': %s (expected %llu..%llu)", opt, arg,
				      rxb_parse_strerror(err), (unsigned long long)min,
				      (unsigned long long)max);
	return v;
}

uint64_t rbudp_cli_si(const char *prog, const char *opt, const char *arg,
		      double min, double max)
{
	double v;
	int err = rxb_parse_si(arg, min, max, &v);

	if (err)
		rbudp_cli_usage_error(prog, "%s '%s': %s (expected %g..%g, suffixes k M G T "
				      "Ki Mi Gi Ti allowed)", opt, arg, rxb_parse_strerror(err),
				      min, max);
	return (uint64_t)llround(v);
}

uint64_t rbudp_cli_ms(const char *prog, const char *opt, const char *arg, double max_ms)
{
	double v;
	int err = rxb_parse_double(arg, 0, max_ms, &v);

	if (err)
		rbudp_cli_usage_error(prog, "%s '%s': %s (expected 0..%g milliseconds)", opt,
				      arg, rxb_parse_strerror(err), max_ms);
	return (uint64_t)llround(v * 1e6);
}

static volatile sig_atomic_t *stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	if (stop_flag)
		*stop_flag = 1;
}

void rbudp_cli_signals(volatile sig_atomic_t *flag)
{
	struct sigaction sa;

	stop_flag = flag;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

void rbudp_cli_start(const struct rbudp_cli_common *c, volatile sig_atomic_t *stop)
{
	if (c->quiet)
		rxb_log_set_level(RXB_LOG_WARNING);
	rbudp_cli_signals(stop);
	/* The default timer slack (50 us) would blur the pacing sleeps and
	 * stretch the --poll-us naps. */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) < 0)
		rxb_log_errno(RXB_LOG_DEBUG, errno, "PR_SET_TIMERSLACK");
}

void rbudp_cli_json_begin(struct json_writer *w, const char *prog, bool ok, const char *error)
{
	json_init(w, false);
	json_obj_begin(w, NULL);
	json_str(w, "tool", prog);
	json_str(w, "version", RXB_VERSION);
	json_bool(w, "ok", ok);
	json_str(w, "error", ok ? NULL : error);
}

int rbudp_cli_json_out(struct json_writer *w)
{
	if (!json_ok(w)) {
		fprintf(stderr, "JSON summary could not be built (out of memory?)\n");
		return -1;
	}
	if (fputs(json_text(w), stdout) == EOF || fputc('\n', stdout) == EOF ||
	    fflush(stdout) == EOF) {
		perror("writing the JSON summary");
		return -1;
	}
	return 0;
}

void rbudp_cli_common_opt(const char *prog, int opt, char **argv, void (*help)(void),
			  struct rbudp_cli_common *c)
{
	int level;

	switch (opt) {
	case RBUDP_CLI_OPT_TIMEOUT:
		c->timeout_ms = (int)rbudp_cli_u64(prog, "--timeout", optarg, 1, 86400) * 1000;
		return;
	case RBUDP_CLI_OPT_KEY_FILE:	c->key_file = optarg; return;
	case RBUDP_CLI_OPT_JSON:	c->json = true; return;
	case RBUDP_CLI_OPT_QUIET:	c->quiet = true; return;
	case RBUDP_CLI_OPT_LOG:
		level = rxb_log_level_parse(optarg);
		if (level < 0)
			rbudp_cli_usage_error(prog, "--log-level '%s': expected err, warning, "
					      "notice, info or debug", optarg);
		rxb_log_set_level((enum rxb_log_level)level);
		return;
	case RBUDP_CLI_OPT_HELP:
		help();
		exit(0);
	case RBUDP_CLI_OPT_VERSION:
		printf("%s %s\n", prog, RXB_VERSION);
		exit(0);
	case ':':
		rbudp_cli_usage_error(prog, "option '%s' needs a value", argv[optind - 1]);
	default:
		rbudp_cli_usage_error(prog, "unknown option '%s'", argv[optind - 1]);
	}
}

void rbudp_cli_common_end(const char *prog, int argc, char **argv,
			  const struct rbudp_cli_common *c, int *timeout_ms)
{
	if (optind < argc)
		rbudp_cli_usage_error(prog, "unexpected argument '%s'", argv[optind]);
	if (c->timeout_ms)
		*timeout_ms = c->timeout_ms;
}

int rbudp_cli_key(const char *path, uint8_t *psk, size_t *psk_len)
{
	char msg[300];
	int n = rbudp_auth_psk_load(path, psk, msg, sizeof(msg));

	if (n < 0) {
		rxb_err("%s", msg);
		return -1;
	}
	*psk_len = (size_t)n;
	return 0;
}
