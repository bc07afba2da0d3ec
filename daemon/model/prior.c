// SPDX-License-Identifier: GPL-2.0-or-later
/* A flow's costs before its first packet. See prior.h. */
#include "daemon/model/prior.h"

#include <math.h>
#include <string.h>

#include "common/util.h"

#define SKB_HEADERS_BYTES	(8 + 40 + 14)	/* UDP, IPv6 (the larger), Ethernet */
#define SKB_PAD_BYTES		64		/* NET_SKB_PAD */
#define SKB_ALIGN_BYTES		64		/* SMP_CACHE_BYTES */
#define SKB_SHINFO_BYTES	320		/* struct skb_shared_info, aligned */
#define SKB_STRUCT_BYTES	256		/* struct sk_buff, aligned */

double prior_truesize_bytes(double payload_bytes)
{
	double head = ceil((payload_bytes + SKB_HEADERS_BYTES + SKB_PAD_BYTES) / SKB_ALIGN_BYTES) *
		      SKB_ALIGN_BYTES + SKB_SHINFO_BYTES;
	double slab = 64;

	while (slab < head)
		slab *= 2;
	return slab + SKB_STRUCT_BYTES;
}

void prior_default(struct learn *l, double payload_bytes)
{
	if (!(payload_bytes >= 1) || !isfinite(payload_bytes))
		payload_bytes = 1;
	learn_init(l);
	ewma_ratio_set(&l->cpu_ns_per_pkt, PRIOR_NS_PER_PKT + PRIOR_NS_PER_BYTE * payload_bytes,
		       LEARN_MIN_PKTS);
	ewma_ratio_set(&l->pkts_per_wakeup, PRIOR_PKTS_PER_WAKEUP, 1.0);
	ewma_ratio_set(&l->truesize_per_pkt, prior_truesize_bytes(payload_bytes), LEARN_MIN_PKTS);
	l->origin = VALUE_HISTORY;
	l->prior = LEARN_PRIOR_DEFAULT;
}

void prior_default_calibrated(struct learn *l, double payload_bytes, double recv_ns_per_pkt)
{
	prior_default(l, payload_bytes);
	if (recv_ns_per_pkt > 0 && isfinite(recv_ns_per_pkt))
		ewma_ratio_set(&l->cpu_ns_per_pkt, recv_ns_per_pkt, LEARN_MIN_PKTS);
}

void prior_from(struct learn *l, const struct learn *other, uint16_t other_port)
{
	uint32_t rcvbuf = l->rcvbuf_bytes;
	bool udp = l->rcvbuf_udp;

	learn_init(l);
	l->cpu_ns_per_pkt = other->cpu_ns_per_pkt;
	l->cost = other->cost;
	l->busy = other->busy;
	l->drain = other->drain;
	l->pkts_per_wakeup = other->pkts_per_wakeup;
	/* The fit's wake-up share goes with the fit (cost.c): without it a
	 * port that borrows the costs would price its packets at b alone,
	 * below what the flow it borrows from pays where it overflows. */
	l->pkts_per_wakeup_ovf = other->pkts_per_wakeup_ovf;
	l->truesize_per_pkt = other->truesize_per_pkt;
	l->irq_ns_per_pkt = other->irq_ns_per_pkt;
	l->napi_ns_per_poll = other->napi_ns_per_poll;
	l->napi_pkts_per_poll = other->napi_pkts_per_poll;
	l->napi_dgrams_per_skb = other->napi_dgrams_per_skb;
	memcpy(l->napi_dev, other->napi_dev, sizeof(l->napi_dev));
	l->rcvbuf_bytes = rcvbuf;
	l->rcvbuf_udp = udp;
	l->origin = VALUE_HISTORY;
	l->prior = LEARN_PRIOR_HOST;
	l->prior_port = other_port;
}

void prior_place(struct learn *l, int cpu, uint32_t rcvbuf_bytes)
{
	if (cpu >= 0 && cpu < RXB_MAX_CPUS) {
		l->ncpus = 1;
		l->cpu[0] = cpu;
		l->cpu_share[0] = 1;
	} else if (l->prior != LEARN_PRIOR_NONE) {
		l->ncpus = 0;
	}
	if (rcvbuf_bytes) {
		l->rcvbuf_bytes = rcvbuf_bytes;
		l->rcvbuf_udp = true;
	}
}
