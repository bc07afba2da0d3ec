/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a librxbneck client delivered to its callbacks, for the tests that
 * drive a client (against a fake receiver or a real sendsrv): how many of
 * each kind and the last one; and the config of such a client.
 */
#ifndef RXB_TESTS_CLIENT_SEEN_H
#define RXB_TESTS_CLIENT_SEEN_H

#include "rxbneck/client.h"

struct client_seen {
	int rates, pauses, buffers, errors;
	struct rxbneck_rate rate;
	struct rxbneck_pause_window pause;
	struct rxbneck_buffer buffer;
	int error_rc;
};

static inline void client_seen_rate(void *u, const struct rxbneck_rate *r)
{
	struct client_seen *s = u;

	s->rates++;
	s->rate = *r;
}

static inline void client_seen_pause(void *u, const struct rxbneck_pause_window *w)
{
	struct client_seen *s = u;

	s->pauses++;
	s->pause = *w;
}

static inline void client_seen_buffer(void *u, const struct rxbneck_buffer *b)
{
	struct client_seen *s = u;

	s->buffers++;
	s->buffer = *b;
}

static inline void client_seen_error(void *u, int rc, const char *msg)
{
	struct client_seen *s = u;

	(void)msg;
	s->errors++;
	s->error_rc = rc;
}

/*
 * @cfg for a client of a receiver on 127.0.0.1:@port sending 8192-byte
 * payloads, whose rate, pause, buffer and error callbacks record into @s;
 * the caller fills in the rest of the hello.
 */
static inline void client_seen_config(struct rxbneck_client_config *cfg, struct client_seen *s,
				      uint16_t port, uint32_t timeout_ms)
{
	rxbneck_client_config_init(cfg);
	cfg->host = "127.0.0.1";
	cfg->port = port;
	cfg->timeout_ms = timeout_ms;
	cfg->hello.payload_bytes = 8192;
	cfg->cb.on_rate = client_seen_rate;
	cfg->cb.on_pause = client_seen_pause;
	cfg->cb.on_buffer = client_seen_buffer;
	cfg->cb.on_error = client_seen_error;
	cfg->user = s;
}

#endif
