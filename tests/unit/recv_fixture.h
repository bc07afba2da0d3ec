/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiver the model tests measure (test_inputs.c and its siblings
 * through inputs_fixture.h, test_flows.c): one socket on CPU 1 with the
 * default 212992-byte receive buffer and 2304 bytes of truesize per
 * packet (K = 92), as an epoch's record and as costs read back from the
 * state directory.
 */
#ifndef RXB_TESTS_UNIT_RECV_FIXTURE_H
#define RXB_TESTS_UNIT_RECV_FIXTURE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/model/learn.h"
#include "daemon/model/value.h"
#include "rxb/measure.h"

/*
 * A socket of @port in @e whose receiver dequeued @pkts at @ns each and
 * woke @wakeups times, all on CPU 1.
 */
static inline struct rxb_sock_meas *recv_fixture_sock(struct rxb_epoch *e, uint16_t port,
						      uint64_t pkts, double ns, uint64_t wakeups)
{
	struct rxb_sock_meas *s = &e->socks[e->nsocks++];

	s->port = port;
	s->counts_valid = true;
	s->pkts_in = pkts;
	s->pkts_enqueued = pkts;
	s->pkts_out = pkts;
	s->receiver_oncpu_ns = (uint64_t)(ns * (double)pkts);
	s->cpu_ns_per_pkt = ns;
	s->recv_wakeups = wakeups;
	s->pkts_per_wakeup = wakeups ? (double)pkts / (double)wakeups : NAN;
	s->rcvbuf_bytes = 212992;
	s->truesize_per_pkt_bytes = 2304;
	s->ncpus_ran = 1;
	s->ran_on[0].cpu = 1;
	s->ran_on[0].oncpu_ns = s->receiver_oncpu_ns;
	return s;
}

/*
 * The same receiver's costs as the state directory gives them back:
 * @ns_per_pkt per packet, @pkts_per_wakeup per wake-up, on CPU 1 alone.
 */
static inline void recv_fixture_history(struct learn *l, double ns_per_pkt,
					double pkts_per_wakeup)
{
	l->origin = VALUE_HISTORY;
	l->cpu_ns_per_pkt = (struct ewma_ratio){ 64 * ns_per_pkt, 64, true };
	l->pkts_per_wakeup = (struct ewma_ratio){ pkts_per_wakeup, 1, true };
	l->truesize_per_pkt = (struct ewma_ratio){ 64 * 2304.0, 64, true };
	l->rcvbuf_bytes = 212992;
	l->ncpus = 1;
	l->cpu[0] = 1;
	l->cpu_share[0] = 1;
}

#endif
