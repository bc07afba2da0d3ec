/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fd_add/fd_mod/fd_del callbacks of sendsrv_ops on a test's epoll set,
 * for the tests that pump a sendsrv themselves. @ctx points to a struct
 * whose first member is the epoll fd (an int); each event carries its fd.
 */
#ifndef RXB_TESTS_EPOLL_OPS_H
#define RXB_TESTS_EPOLL_OPS_H

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>

static inline int epoll_ops_ctl(void *ctx, int op, int fd, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(*(int *)ctx, op, fd, &e) < 0 ? -errno : 0;
}

static inline int epoll_ops_add(void *ctx, int fd, uint32_t ev)
{
	return epoll_ops_ctl(ctx, EPOLL_CTL_ADD, fd, ev);
}

static inline int epoll_ops_mod(void *ctx, int fd, uint32_t ev)
{
	return epoll_ops_ctl(ctx, EPOLL_CTL_MOD, fd, ev);
}

static inline void epoll_ops_del(void *ctx, int fd)
{
	epoll_ctl(*(int *)ctx, EPOLL_CTL_DEL, fd, NULL);
}

#endif
