/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading what a peer wrote as a test's raw end of a connection (the fake
 * daemon of test_client, the raw senders of test_sendsrv): one whole frame,
 * read byte by byte so that a second frame stays in the socket for the
 * next call.
 */
#ifndef RXB_TESTS_FRAME_RECV_H
#define RXB_TESTS_FRAME_RECV_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "proto/codec.h"

/* One frame from @fd within @ms per byte: 0, -1 on EOF/timeout/reset, or
 * the -code rxbp_frame_check / rxbp_decode gave. */
static inline int frame_recv(int fd, struct rxbp_msg *m, int ms)
{
	uint8_t buf[RXBNECK_FRAME_MAX_DEFAULT];
	size_t have = 0;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int n = rxbp_frame_check(buf, have, sizeof(buf), NULL);

		if (n > 0)
			return rxbp_decode(buf, (size_t)n, m);
		if (n < 0)
			return n;
		if (poll(&p, 1, ms) <= 0)
			return -1;
		if (read(fd, buf + have, 1) <= 0)
			return -1;
		have++;
	}
}

#endif
