// SPDX-License-Identifier: GPL-2.0-or-later
/* Levelled logging to stderr, journald-aware. See log.h. */
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static struct {
	enum rxb_log_level level;
	const char *ident;
	int journal;		/* -1: not probed yet */
} log_cfg = { RXB_LOG_INFO, NULL, -1 };

static const char *const level_names[] = {
	[RXB_LOG_ERR] = "err",
	[RXB_LOG_WARNING] = "warning",
	[RXB_LOG_NOTICE] = "notice",
	[RXB_LOG_INFO] = "info",
	[RXB_LOG_DEBUG] = "debug",
};

void rxb_log_set_level(enum rxb_log_level level)
{
	log_cfg.level = level;
}

enum rxb_log_level rxb_log_get_level(void)
{
	return log_cfg.level;
}

int rxb_log_level_parse(const char *name)
{
	for (int l = RXB_LOG_ERR; l <= RXB_LOG_DEBUG; l++)
		if (strcmp(name, level_names[l]) == 0)
			return l;
	if (strcmp(name, "error") == 0)
		return RXB_LOG_ERR;
	if (strcmp(name, "warn") == 0)
		return RXB_LOG_WARNING;
	return -1;
}

const char *rxb_log_level_name(enum rxb_log_level level)
{
	return RXB_NAME(level_names, level, "?");
}

void rxb_log_set_ident(const char *ident)
{
	log_cfg.ident = ident;
}

void rxb_vlog(enum rxb_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int saved_errno = errno;

	if (level > log_cfg.level)
		return;
	if (log_cfg.journal < 0)
		log_cfg.journal = getenv("JOURNAL_STREAM") != NULL;

	vsnprintf(line, sizeof(line), fmt, ap);
	/* One fprintf per line so concurrent writers do not interleave mid-line. */
	if (log_cfg.journal)
		fprintf(stderr, "<%d>%s\n", (int)level, line);
	else if (log_cfg.ident)
		fprintf(stderr, "%s: %s: %s\n", log_cfg.ident,
			rxb_log_level_name(level), line);
	else
		fprintf(stderr, "%s: %s\n", rxb_log_level_name(level), line);
	errno = saved_errno;
}

void rxb_log(enum rxb_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rxb_vlog(level, fmt, ap);
	va_end(ap);
}

void rxb_log_errno(enum rxb_log_level level, int err, const char *fmt, ...)
{
	char msg[896];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rxb_log(level, "%s: %s", msg, strerror(err));
}
