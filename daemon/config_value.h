/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The values of rxbneckd.conf: each enum config_type's parser, canonical
 * formatter and "(expected ...)" description, working on one field of
 * struct rxb_config as a key's row (config.h) describes it.
 */
#ifndef RXB_DAEMON_CONFIG_VALUE_H
#define RXB_DAEMON_CONFIG_VALUE_H

#include <stddef.h>

#include "daemon/config.h"

/*
 * Parse @val for @k into @field (k->size bytes; untouched on failure).
 * 0, or -EINVAL/-ERANGE (-errno of a failed group lookup) with the problem
 * in @why, without the "(expected ...)" part.
 */
int config_value_parse(const struct config_key *k, const char *val, void *field,
		       char *why, size_t wlen);

/* @field as it would be written in the file; snprintf-style length. */
int config_value_format(const struct config_key *k, const void *field, char *buf,
			size_t size);

/* What @k accepts, for "(expected ...)". */
void config_value_describe(const struct config_key *k, char *buf, size_t size);

#endif
