// SPDX-License-Identifier: GPL-2.0-or-later
/* A transfer's first error. See error.h. */
#include "tools/rbudp/error.h"

#include <stdio.h>

#include "common/log.h"

bool rbudp_error_keep(char *error, size_t size, const char *peer, const char *fmt,
		      va_list ap)
{
	if (error[0])
		return false;
	vsnprintf(error, size, fmt, ap);
	if (peer)
		rxb_err("transfer from %s: %s", peer, error);
	else
		rxb_err("%s", error);
	return true;
}
