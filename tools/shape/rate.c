// SPDX-License-Identifier: GPL-2.0-or-later
/* Advice to HTB rate conversions. See rate.h. */
#include "tools/shape/rate.h"

#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>

uint32_t shape_rate_hdr_bytes(int family, uint8_t proto, uint32_t link_hdr_bytes)
{
	uint32_t ip = family == AF_INET6 ? 40 : 20;
	uint32_t l4 = proto == IPPROTO_TCP ? SHAPE_RATE_HDR_TCP : SHAPE_RATE_HDR_UDP;

	return link_hdr_bytes + ip + l4;
}

uint32_t shape_rate_mtu_payload(uint32_t mtu, int family, uint8_t proto)
{
	uint32_t h = shape_rate_hdr_bytes(family, proto, 0);

	return mtu > h ? mtu - h : 1;
}

uint64_t shape_rate_wire_Bps(uint64_t payload_bps, double payload_bytes, uint32_t hdr_bytes)
{
	double p = payload_bytes >= 1 ? payload_bytes : 1;
	double bps = payload_bps < SHAPE_RATE_MIN_BPS ? (double)SHAPE_RATE_MIN_BPS
						      : (double)payload_bps;

	return (uint64_t)ceil(bps / 8.0 * (p + hdr_bytes) / p);
}

double shape_rate_payload_bps(double wire_Bps, double payload_bytes, uint32_t hdr_bytes)
{
	double p = payload_bytes >= 1 ? payload_bytes : 1;

	return wire_Bps * 8.0 * p / (p + hdr_bytes);
}

double shape_rate_measured_payload(uint64_t dbytes, uint64_t dpkts, uint32_t hdr_bytes)
{
	double p;

	if (dpkts < SHAPE_RATE_MIN_PKTS)
		return 0;
	p = (double)dbytes / (double)dpkts - hdr_bytes;
	return p >= 1 ? p : 0;
}

uint32_t shape_rate_burst_bytes(uint64_t wire_Bps, uint64_t configured)
{
	uint64_t b;

	if (configured)
		return configured > UINT32_MAX ? UINT32_MAX : (uint32_t)configured;
	b = wire_Bps / (1000000000u / SHAPE_RATE_BURST_NS);
	if (b < SHAPE_RATE_BURST_MIN)
		b = SHAPE_RATE_BURST_MIN;
	return b > SHAPE_RATE_BURST_MAX ? SHAPE_RATE_BURST_MAX : (uint32_t)b;
}
