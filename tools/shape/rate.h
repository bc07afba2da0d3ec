/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * From the daemon's advice to an HTB rate.
 *
 * rxbneckd's RATE counts UDP payload bits per second (docs/PROTOCOL.md §2),
 * what the sending application writes. HTB charges a class for
 * qdisc_pkt_len() of every packet it dequeues: the whole frame as the
 * device's transmit path holds it, link header included (14 bytes on
 * Ethernet and veth), and, for a GSO packet, the headers of every segment
 * it will be cut into. So a class that must pass P payload bits/s of
 * packets with p payload bytes and h header bytes each is given
 *
 *	wire_Bps = P / 8 * (p + h) / p
 *
 * bytes per second. h is link + IP (20 or 40) + transport (UDP 8, TCP 32:
 * 20 and the timestamp option Linux sends by default). p is what the
 * class's counters say: bytes / packets - h (the counters count GSO
 * segments as packets and their header bytes as bytes, so this is the
 * mean segment payload), or, before enough traffic, the configured
 * payload size (default: the device MTU less IP and transport headers).
 */
#ifndef SHAPE_RATE_H
#define SHAPE_RATE_H

#include <stdint.h>

#define SHAPE_RATE_HDR_UDP	8
#define SHAPE_RATE_HDR_TCP	32	/* 20 + 12 (timestamps) */
#define SHAPE_RATE_MIN_BPS	1000ull		/* payload floor: 1 kbit/s */
/* "Unshaped": a class rate no link reaches (1 Tbit/s of payload). */
#define SHAPE_RATE_UNLIMITED_BPS	1000000000000ull
#define SHAPE_RATE_BURST_MIN	98304u	/* a 64 KiB GSO packet and its headers fit */
#define SHAPE_RATE_BURST_NS	1000000u	/* automatic burst: 1 ms at the rate */
#define SHAPE_RATE_BURST_MAX	(16u << 20)	/* ... at most 16 MiB */
/* Packets needed in the counters before the measured payload size is used. */
#define SHAPE_RATE_MIN_PKTS	256u

/* Bytes per packet the class is charged beyond the payload. */
uint32_t shape_rate_hdr_bytes(int family, uint8_t proto, uint32_t link_hdr_bytes);

/* Payload bytes of a full-sized packet on a device of @mtu bytes. */
uint32_t shape_rate_mtu_payload(uint32_t mtu, int family, uint8_t proto);

/*
 * The HTB rate (bytes/s, rounded up) that passes @payload_bps with
 * @payload_bytes of payload and @hdr_bytes of headers per packet.
 * @payload_bps below SHAPE_RATE_MIN_BPS counts as that floor.
 */
uint64_t shape_rate_wire_Bps(uint64_t payload_bps, double payload_bytes, uint32_t hdr_bytes);

/* The payload bits/s a class passes at @wire_Bps (the inverse). */
double shape_rate_payload_bps(double wire_Bps, double payload_bytes, uint32_t hdr_bytes);

/*
 * Mean payload per packet from counter increments: @dbytes / @dpkts -
 * @hdr_bytes, or 0 when fewer than SHAPE_RATE_MIN_PKTS packets went by or
 * the result is below one byte (the counters do not fit the header guess).
 */
double shape_rate_measured_payload(uint64_t dbytes, uint64_t dpkts, uint32_t hdr_bytes);

/*
 * HTB burst (and cburst): @configured, or 1 ms at @wire_Bps within
 * [SHAPE_RATE_BURST_MIN, SHAPE_RATE_BURST_MAX].
 */
uint32_t shape_rate_burst_bytes(uint64_t wire_Bps, uint64_t configured);

#endif
