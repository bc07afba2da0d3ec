// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for rxbneck-shape's configuration file
 * (tools/shape/conf.c). The input is the file's bytes. Beyond "no crash,
 * no sanitizer report" it checks:
 *  - a rejected file leaves the configuration untouched and yields one
 *    line that starts with the file name;
 *  - an accepted file yields a configuration within the documented
 *    bounds (receiver count, names, ports, protocols, address counts,
 *    strings terminated), and the cross-key check runs on it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_refused.h"
#include "tools/shape/conf.h"

#define NAME "fuzz.conf"

static void check_accepted(const struct shape_conf *c)
{
	char err[512];

	if (c->nrx > SHAPE_MAX_RECEIVERS || c->handle < 1 || c->handle > 0xfffe ||
	    c->state_dir[0] != '/' || !memchr(c->state_dir, 0, sizeof(c->state_dir)) ||
	    c->queue_bytes < 65536)
		abort();
	for (unsigned i = 0; i < c->nrx; i++) {
		const struct shape_receiver_conf *r = &c->rx[i];

		if (!memchr(r->name, 0, sizeof(r->name)) || !r->name[0] ||
		    !memchr(r->host, 0, sizeof(r->host)) || !memchr(r->dev, 0, sizeof(r->dev)) ||
		    r->naddr > SHAPE_MAX_ADDRS || r->port == 0 ||
		    (r->proto != IPPROTO_UDP && r->proto != IPPROTO_TCP))
			abort();
		for (unsigned a = 0; a < r->naddr; a++)
			if (!memchr(r->addr[a], 0, sizeof(r->addr[a])) || !r->addr[a][0])
				abort();
	}
	shape_conf_check(c, false, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shape_conf c, before;
	char err[512];
	int ret;

	shape_conf_defaults(&c);
	before = c;
	ret = shape_conf_parse_ini((const char *)data, size, NAME, &c, err, sizeof(err));
	if (ret) {
		fuzz_check_refused(ret, err, NAME ": ", &c, &before, sizeof(c));
		return 0;
	}
	check_accepted(&c);
	return 0;
}
