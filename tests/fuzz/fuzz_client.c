// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target for librxbneck's input from the daemon: its buffering
 * of the byte stream into frames and what it does with each (the HELLO_ACK
 * handshake, RATE, PAUSE, PING, ERROR, BYE, unknown types, broken
 * frames). The library's source is included so that the target can hand
 * the client one end of a socketpair as if it had connected; the input is
 * written to the other end in chunks of the sizes its first byte picks,
 * the client reads and parses after each, and whatever it answers (PONG,
 * ERROR) is drained.
 *
 * Properties besides "no crash, no sanitizer report": the input buffer
 * never holds more than its size; a connection the client dropped stays
 * dropped (fd -1, nothing buffered); a RATE or PAUSE the callbacks get
 * passed the codec's checks (port != 0, loss in [0, 1]).
 */
#include "client/client.c"

#include <fcntl.h>

static void on_rate(void *user, const struct rxbneck_rate *r)
{
	(void)user;
	if (!r->port || !(r->loss >= 0 && r->loss <= 1))
		abort();
}

static void on_pause(void *user, const struct rxbneck_pause_window *w)
{
	(void)user;
	(void)w;
}

static void drain(int fd)
{
	char junk[4096];

	while (read(fd, junk, sizeof(junk)) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[] = { 1, 3, 16, 17, 64, 509, 4096, 8192 };
	struct rxbneck_client_config cfg;
	struct rxbneck_client *c;
	size_t off = 1, step;
	int sv[2];

	if (size < 1)
		return 0;
	rxbneck_client_config_init(&cfg);
	cfg.cb.on_rate = on_rate;
	cfg.cb.on_pause = on_pause;
	cfg.hello.flow_port = 9000;
	c = rxbneck_client_new(&cfg);
	if (!c)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv)) {
		rxbneck_client_close(c);
		return 0;
	}
	c->fd = sv[0];
	step = chunks[data[0] % (sizeof(chunks) / sizeof(chunks[0]))];
	while (off < size && c->fd >= 0) {
		size_t n = size - off < step ? size - off : step;
		ssize_t w = write(sv[1], data + off, n);

		if (w <= 0)
			break;
		off += (size_t)w;
		if (!c->acked) {
			/* The handshake's part of rxbneck_client_connect(). */
			int rc = client_read_some(c);

			if (rc > 0)
				rc = client_parse_input(c);
			if (rc < 0)
				drop(c);
		} else {
			rxbneck_client_process(c);
		}
		if (c->in_len > sizeof(c->in))
			abort();
		if (c->fd < 0 && (c->in_len || c->acked))
			abort();
		drain(sv[1]);
	}
	rxbneck_client_close(c);
	close(sv[1]);
	return 0;
}
