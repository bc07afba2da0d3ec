/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receive-buffer adaptation as rxbneckctl sees it (docs/CONTROL.md,
 * docs/buffer.md): `rxbneckctl buffers` and the "buffers" member of the
 * status document. Per watched socket: its size now, the memory it holds,
 * the policy's size, the last decision and its values, the changes made
 * or refused; for the daemon: mode, policy, the host's memory figures and
 * what the controller costs.
 */
#ifndef RXB_DAEMON_STATUS_BUFFER_H
#define RXB_DAEMON_STATUS_BUFFER_H

#include <stdint.h>

#include "common/json.h"

struct daemon;

/* The object {"mode", ..., "sockets": [...]} as member @key (NULL: a value). */
void status_buffer_json(struct json_writer *w, const char *key, const struct daemon *d,
			uint64_t now_ns);

#endif
