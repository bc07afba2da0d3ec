/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the tests that pump a sendsrv themselves share: the fd_add/fd_mod/
 * fd_del callbacks of sendsrv_ops on the test's epoll set (@ctx points to a
 * struct whose first member is the epoll fd, an int; each event carries its
 * fd), and sending one frame as a raw sender. Include after <cmocka.h>.
 */
#ifndef RXB_TESTS_SENDSRV_TEST_H
#define RXB_TESTS_SENDSRV_TEST_H

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "proto/codec.h"

static inline int sendsrv_test_ctl(void *ctx, int op, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(*(int *)ctx, op, fd, &e) < 0 ? -errno : 0;
}

static inline int sendsrv_test_fd_add(void *ctx, int fd, uint32_t ev)
{
	return sendsrv_test_ctl(ctx, EPOLL_CTL_ADD, fd, ev);
}

static inline int sendsrv_test_fd_mod(void *ctx, int fd, uint32_t ev)
{
	return sendsrv_test_ctl(ctx, EPOLL_CTL_MOD, fd, ev);
}

static inline void sendsrv_test_fd_del(void *ctx, int fd)
{
	epoll_ctl(*(int *)ctx, EPOLL_CTL_DEL, fd, NULL);
}

/* Encode @m with sequence number @seq and send it whole on @fd. */
static inline void sendsrv_test_send(int fd, struct rxbp_msg *m, uint32_t seq)
{
	uint8_t buf[RXBP_ENCODE_MAX];
	size_t n;

	m->seq = seq;
	n = rxbp_encode(buf, sizeof(buf), m);
	assert_true(n > 0);
	assert_int_equal(send(fd, buf, n, MSG_NOSIGNAL), (ssize_t)n);
}

#endif
