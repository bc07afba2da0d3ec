/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by daemon/config's tests: parse @text as a file named
 * "test.conf", the name the tests' expected messages carry.
 */
#ifndef RXB_TESTS_UNIT_CONFIG_FIXTURE_H
#define RXB_TESTS_UNIT_CONFIG_FIXTURE_H

#include <stddef.h>
#include <string.h>

#include "daemon/config.h"

static inline int parse(const char *text, struct rxb_config *cfg, char *err, size_t errlen)
{
	return config_parse(text, strlen(text), "test.conf", cfg, err, errlen);
}

#endif
