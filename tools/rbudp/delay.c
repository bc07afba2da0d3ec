// SPDX-License-Identifier: GPL-2.0-or-later
/* Delay emulation: the feedback FIFO and an accurate sleep. See delay.h. */
#include "tools/rbudp/delay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"

void rbudp_delay_outq_init(struct rbudp_outq *q)
{
	memset(q, 0, sizeof(*q));
}

void rbudp_delay_outq_finish(struct rbudp_outq *q)
{
	while (q->head)
		rbudp_delay_outq_drop(q);
}

int rbudp_delay_outq_push(struct rbudp_outq *q, const void *data, size_t len,
			  uint64_t release_ns)
{
	struct rbudp_outq_msg *m = malloc(sizeof(*m) + len);

	if (!m)
		return -ENOMEM;
	m->data = (uint8_t *)(m + 1);
	memcpy(m->data, data, len);
	m->len = len;
	m->next = NULL;
	if (q->tail && q->tail->release_ns > release_ns)
		release_ns = q->tail->release_ns;
	m->release_ns = release_ns;
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	q->n_msgs++;
	return 0;
}

uint64_t rbudp_delay_outq_next_ns(const struct rbudp_outq *q)
{
	return q->head ? q->head->release_ns : UINT64_MAX;
}

const struct rbudp_outq_msg *rbudp_delay_outq_peek_due(const struct rbudp_outq *q,
						       uint64_t now_ns)
{
	if (q->head && q->head->release_ns <= now_ns)
		return q->head;
	return NULL;
}

void rbudp_delay_outq_drop(struct rbudp_outq *q)
{
	struct rbudp_outq_msg *m = q->head;

	if (!m)
		return;
	q->head = m->next;
	if (!q->head)
		q->tail = NULL;
	q->n_msgs--;
	free(m);
}

int rbudp_delay_sleep_until(uint64_t t_ns, uint64_t spin_ns)
{
	uint64_t now = rxb_mono_ns();

	if (t_ns > now + spin_ns) {
		uint64_t wake = t_ns - spin_ns;
		struct timespec ts = {
			.tv_sec = (time_t)(wake / RXB_NSEC_PER_SEC),
			.tv_nsec = (long)(wake % RXB_NSEC_PER_SEC),
		};
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (err == EINTR)
			return -EINTR;
	}
	/* No PAUSE instruction in this loop: under a hypervisor with
	 * pause-loop exiting, a PAUSE-heavy loop looks like lock contention and
	 * gets the vCPU descheduled (measured: paced rate fell to 45 %). */
	while (rxb_mono_ns() < t_ns)
		;
	return 0;
}
