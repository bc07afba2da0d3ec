/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Command-line plumbing shared by rxbneck-send and rxbneck-recv: option
 * values parsed strictly (a bad value names its option and exits 2), the
 * stop flag set by SIGINT/SIGTERM, and the JSON summary's output.
 */
#ifndef RBUDP_CLI_H
#define RBUDP_CLI_H

#include <signal.h>
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

/* SIGINT/SIGTERM set *flag (no SA_RESTART, so blocking calls return EINTR);
 * SIGPIPE is ignored. */
void rbudp_cli_signals(volatile sig_atomic_t *flag);

/* Write the finished JSON document and a newline to stdout; -1 if it failed. */
int rbudp_cli_json_out(struct json_writer *w);

#endif
