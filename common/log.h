/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Levelled logging to stderr.
 *
 * Levels are syslog's. When stderr is connected to the journal
 * ($JOURNAL_STREAM set, as systemd does for services), each line is prefixed
 * with "<N>" so journald records the priority; otherwise lines carry a short
 * level tag. The logger's configuration is the only process-wide state in
 * the project: it is set once at start-up by the program's main().
 */
#ifndef RXB_COMMON_LOG_H
#define RXB_COMMON_LOG_H

#include <stdarg.h>

enum rxb_log_level {
	RXB_LOG_ERR = 3,
	RXB_LOG_WARNING = 4,
	RXB_LOG_NOTICE = 5,
	RXB_LOG_INFO = 6,
	RXB_LOG_DEBUG = 7,
};

/* Messages above @level are dropped. Default: RXB_LOG_INFO. */
void rxb_log_set_level(enum rxb_log_level level);
enum rxb_log_level rxb_log_get_level(void);

/* Parse "err", "warning", "notice", "info", "debug"; -1 if unknown. */
int rxb_log_level_parse(const char *name);
const char *rxb_log_level_name(enum rxb_log_level level);

/* Program name shown in front of each line when not under journald. */
void rxb_log_set_ident(const char *ident);

void rxb_log(enum rxb_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rxb_vlog(enum rxb_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Like rxb_log(), with ": <strerror(err)>" appended; @err is a positive errno. */
void rxb_log_errno(enum rxb_log_level level, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define rxb_err(...)     rxb_log(RXB_LOG_ERR, __VA_ARGS__)
#define rxb_warn(...)    rxb_log(RXB_LOG_WARNING, __VA_ARGS__)
#define rxb_notice(...)  rxb_log(RXB_LOG_NOTICE, __VA_ARGS__)
#define rxb_info(...)    rxb_log(RXB_LOG_INFO, __VA_ARGS__)
#define rxb_debug(...)   rxb_log(RXB_LOG_DEBUG, __VA_ARGS__)

#endif
