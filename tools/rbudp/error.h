/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A transfer's error for its summary. The sender and the receiver keep only
 * the first one - later ones are usually its consequences - and log it as
 * they keep it.
 */
#ifndef RBUDP_ERROR_H
#define RBUDP_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Unless @error (@size bytes) holds an error already, format @fmt into it
 * and log it, as "transfer from @peer: ..." when @peer is not NULL.
 * Returns true when this error is the one kept.
 */
bool rbudp_error_keep(char *error, size_t size, const char *peer, const char *fmt,
		      va_list ap) __attribute__((format(printf, 4, 0)));

#endif
