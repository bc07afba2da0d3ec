/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Command-line plumbing shared by rxbneck-send and rxbneck-recv: option
 * values parsed strictly (a bad value names its option and exits 2), the
 * stop flag set by SIGINT/SIGTERM, and the JSON summary's output.
 */
#ifndef RBUDP_CLI_H
#define RBUDP_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/json.h"

/* Print "PROG: message" and "Try 'PROG --help'." on stderr; exit(2). */
void rbudp_cli_usage_error(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

uint64_t rbudp_cli_u64(const char *prog, const char *opt, const char *arg,
		       uint64_t min, uint64_t max);
/* A quantity with an SI suffix ("6G", "200Mi"), rounded to an integer. */
uint64_t rbudp_cli_si(const char *prog, const char *opt, const char *arg,
		      double min, double max);
/* Milliseconds (fractions allowed) to nanoseconds. */
uint64_t rbudp_cli_ms(const char *prog, const char *opt, const char *arg, double max_ms);

/*
 * The options both tools take alike. Their getopt_long() codes lie above
 * the tools' own (which start at 256); RBUDP_CLI_LONGOPTS goes into a
 * tool's table before its terminating entry.
 */
enum {
	RBUDP_CLI_OPT_TIMEOUT = 0x10000, RBUDP_CLI_OPT_KEY_FILE, RBUDP_CLI_OPT_JSON,
	RBUDP_CLI_OPT_QUIET, RBUDP_CLI_OPT_LOG, RBUDP_CLI_OPT_HELP, RBUDP_CLI_OPT_VERSION,
};
#define RBUDP_CLI_LONGOPTS \
	{ "timeout", required_argument, NULL, RBUDP_CLI_OPT_TIMEOUT }, \
	{ "key-file", required_argument, NULL, RBUDP_CLI_OPT_KEY_FILE }, \
	{ "json", no_argument, NULL, RBUDP_CLI_OPT_JSON }, \
	{ "quiet", no_argument, NULL, RBUDP_CLI_OPT_QUIET }, \
	{ "log-level", required_argument, NULL, RBUDP_CLI_OPT_LOG }, \
	{ "help", no_argument, NULL, RBUDP_CLI_OPT_HELP }, \
	{ "version", no_argument, NULL, RBUDP_CLI_OPT_VERSION }

struct rbudp_cli_common {
	int timeout_ms;			/* --timeout (given in s); 0: not given */
	const char *key_file;		/* --key-file */
	bool json;			/* --json */
	bool quiet;			/* --quiet */
};

/*
 * For the default case of a tool's getopt_long() loop (optstring ":"):
 * takes @opt if it is a shared option (into @c; --log-level sets the log
 * level, --help calls @help and exits 0, --version prints the version and
 * exits 0); anything else is getopt_long()'s error, a missing value or an
 * unknown option, and exits 2 naming it.
 */
void rbudp_cli_common_opt(const char *prog, int opt, char **argv, void (*help)(void),
			  struct rbudp_cli_common *c);

/*
 * What both tools check once their getopt_long() loop is done: operands
 * are a usage error (exit 2), and --timeout, when given, replaces the
 * tool's *@timeout_ms.
 */
void rbudp_cli_common_end(const char *prog, int argc, char **argv,
			  const struct rbudp_cli_common *c, int *timeout_ms);

/*
 * The pre-shared key of --key-file @path into @psk (RBUDP_PSK_MAX bytes),
 * its length into *psk_len. Returns 0, or -1 with the reason logged.
 */
int rbudp_cli_key(const char *path, uint8_t *psk, size_t *psk_len);

/* SIGINT/SIGTERM set *flag (no SA_RESTART, so blocking calls return EINTR);
 * SIGPIPE is ignored. */
void rbudp_cli_signals(volatile sig_atomic_t *flag);

/*
 * What both transfer tools do once their options are parsed: --quiet's log
 * level, the stop flag *@stop (rbudp_cli_signals()), and a timer slack of
 * 1 ns, so that pacing and polling sleeps end when they were asked to.
 */
void rbudp_cli_start(const struct rbudp_cli_common *c, volatile sig_atomic_t *stop);

/*
 * Start a tool's JSON summary in @w: the object opened, then "tool",
 * "version", "ok" and "error" (@error; null when @ok).
 */
void rbudp_cli_json_begin(struct json_writer *w, const char *prog, bool ok, const char *error);

/* Write the finished JSON document and a newline to stdout; -1 if it failed. */
int rbudp_cli_json_out(struct json_writer *w);

#endif
