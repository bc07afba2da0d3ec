/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A flow's receive-path costs before its first packet: what the model
 * uses from the first HELLO on, so that the first RATE is a modelled one
 * (PROTOCOL.md §6.1, flags PROVISIONAL and DEFAULT_COST).
 *
 * In order of preference:
 *  1. this port's own costs from an earlier run (the state directory:
 *     flows.c loads them, origin VALUE_HISTORY, prior LEARN_PRIOR_NONE);
 *  2. another flow's costs learned on this host, in this run or an
 *     earlier one (prior_from(): LEARN_PRIOR_HOST) - the receiving
 *     application is often the same one on another port;
 *  3. the defaults below (prior_default(): LEARN_PRIOR_DEFAULT).
 * In every case the receiver's placement and receive buffer are the
 * socket's now when its owner is found (prior_place(), daemon side:
 * daemon/collect/sockowner.h), and the task classes of that CPU are the
 * last epoch's: the rate follows the load on the receiver's CPU before
 * any datagram arrives.
 *
 * The defaults are deliberately rough (confidence 100 of 1000):
 *  - the receiver's CPU time per datagram: the kernel's receive path
 *    measured by the daemon on the receiver's CPU (daemon/collect/
 *    recvcost.h, prior_default_calibrated()), a floor: the receiving
 *    application's own work per datagram is not in it. Without that
 *    measurement, PRIOR_NS_PER_PKT plus PRIOR_NS_PER_BYTE per payload
 *    byte (1.86 us at 1456 bytes): rxbneck-recv, which authenticates and
 *    tallies each datagram, measured 1.2 us at 1456 bytes on the 2-vCPU
 *    test VM, and later versions less;
 *  - one datagram per wake-up (a receiver woken per arrival): a receiver
 *    on a shared CPU takes more per wake-up (the queue fills while it is
 *    off the CPU), by how many is not predictable before its traffic, and
 *    the model's rate then is somewhat lower than with the measured N;
 *  - the memory the kernel charges per queued datagram: a linear skb as
 *    loopback and veth build it (prior_truesize_bytes()); drivers that
 *    receive into page fragments charge 2 or 4 KiB per frame instead.
 * The first epoch of the flow's own traffic replaces all of them: they
 * weigh as little as the least fresh data does (LEARN_MIN_PKTS).
 *
 * Pure computation: no I/O, no allocation, no globals.
 */
#ifndef RXB_DAEMON_MODEL_PRIOR_H
#define RXB_DAEMON_MODEL_PRIOR_H

#include <stdint.h>

#include "daemon/model/learn.h"

#define PRIOR_NS_PER_PKT	1500.0	/* receiver CPU ns per datagram ... */
#define PRIOR_NS_PER_BYTE	0.25	/* ... plus this per payload byte */
#define PRIOR_PKTS_PER_WAKEUP	1.0

/*
 * The kernel's truesize of a datagram of @payload_bytes received as one
 * linear skb: headers (UDP 8, IPv6 40, Ethernet 14) and NET_SKB_PAD (64)
 * in front, aligned to 64 bytes, struct skb_shared_info (320) behind,
 * rounded up to the power-of-two slab it comes from, plus struct sk_buff
 * (256 aligned). 2304 for 1456 bytes.
 */
double prior_truesize_bytes(double payload_bytes);

/* The defaults for datagrams of @payload_bytes into @l (no placement). */
void prior_default(struct learn *l, double payload_bytes);

/*
 * The defaults, with the receiver's CPU time per datagram replaced by
 * @recv_ns_per_pkt when it is a positive number: the kernel's receive
 * path measured on this host (daemon/collect/recvcost.h). Still
 * LEARN_PRIOR_DEFAULT (flag DEFAULT_COST): nothing was learned from a
 * receiver.
 */
void prior_default_calibrated(struct learn *l, double payload_bytes, double recv_ns_per_pkt);

/*
 * @other's load-independent costs (a flow of port @other_port on this
 * host) into @l: its cost per packet and the fits and busy epochs behind
 * it (with the packets per wake-up where its socket overflowed, at which
 * the fit's wake-up cost is shared), its saturated drain (drain.h: used only at the load and within the
 * age it was measured at, so a new port's capacity = drain is the
 * settled flow's), packets per wake-up, truesize, the NAPI path's costs. Not its
 * placement, receive buffer, loss episodes or traffic times: those are
 * @l's own port's.
 */
void prior_from(struct learn *l, const struct learn *other, uint16_t other_port);

/*
 * The receiver's socket now: it runs on @cpu (-1: unknown) with a receive
 * buffer of @rcvbuf_bytes (0: unknown). A known CPU replaces the learned
 * placement; an unknown one clears it when the costs are not this port's
 * own (another flow ran elsewhere: its CPU says nothing about this one).
 */
void prior_place(struct learn *l, int cpu, uint32_t rcvbuf_bytes);

#endif
