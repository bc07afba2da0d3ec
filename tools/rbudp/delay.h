/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Emulated propagation delay, as Banerjee, Mukherjee and Ghosal did it in
 * their validation experiment (§IV; docs/references.md): "delay the start of
 * each UDP burst from the sender by the propagation delay, and similarly
 * delay the feedback from the receiver".
 *
 * The sender waits one one-way delay before each blast. The receiver puts
 * each feedback message (MISSING segments, COMPLETE, VERIFIED) into a
 * FIFO with a release time one one-way delay after it was produced, and
 * keeps receiving datagrams while it waits, as a real receiver whose
 * feedback is on the wire would. Messages leave in order: a later message
 * never overtakes an earlier one (a fixed-delay path does not reorder).
 */
#ifndef RBUDP_DELAY_H
#define RBUDP_DELAY_H

#include <stddef.h>
#include <stdint.h>

/* @t_ns + @delay_ns, saturating. */
static inline uint64_t rbudp_delay_release_ns(uint64_t t_ns, uint64_t delay_ns)
{
	return t_ns + delay_ns < t_ns ? UINT64_MAX : t_ns + delay_ns;
}

struct rbudp_outq_msg {
	uint64_t release_ns;
	size_t len;
	uint8_t *data;
	struct rbudp_outq_msg *next;
};

struct rbudp_outq {
	struct rbudp_outq_msg *head, *tail;
	size_t n_msgs;
};

void rbudp_delay_outq_init(struct rbudp_outq *q);
/* Frees every queued message. */
void rbudp_delay_outq_finish(struct rbudp_outq *q);

/*
 * Queue a copy of @len bytes for release at @release_ns (raised to the
 * release time of the message before it, to keep FIFO order). -ENOMEM.
 */
int rbudp_delay_outq_push(struct rbudp_outq *q, const void *data, size_t len,
			  uint64_t release_ns);

/* Release time of the head; UINT64_MAX when empty. */
uint64_t rbudp_delay_outq_next_ns(const struct rbudp_outq *q);

/* The head if it is due at @now_ns, else NULL. Free it with rbudp_delay_outq_drop(). */
const struct rbudp_outq_msg *rbudp_delay_outq_peek_due(const struct rbudp_outq *q,
						       uint64_t now_ns);
/* Remove and free the head. */
void rbudp_delay_outq_drop(struct rbudp_outq *q);

/*
 * Sleep until CLOCK_MONOTONIC reaches @t_ns: clock_nanosleep for most of
 * it, then spin the last @spin_ns for precision. Returns -EINTR if a
 * signal interrupted the sleep, else 0.
 */
int rbudp_delay_sleep_until(uint64_t t_ns, uint64_t spin_ns);

#endif
