// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/shape/rate.c: the HTB rate that carries the
 * daemon's payload rate, against
 *  - the closed form P/8 * (p + h)/p computed by hand for the common
 *    cases (Ethernet/veth IPv4 UDP with iperf3's and rxbneck-send's
 *    datagram sizes, IPv6, TCP);
 *  - a second method: a simulation of the kernel's charging, a token
 *    bucket at the wire rate that charges each packet qdisc_pkt_len()
 *    (payload + headers; a GSO packet its segments' headers too), whose
 *    payload throughput over a long run must equal the advice;
 *  - the measured payload size from class counters built the way the
 *    kernel updates them for GSO packets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "tools/shape/rate.h"
#include "tests/unit/unit_main.h"

#define ETH 14

static void test_hdr_bytes(void **state)
{
	(void)state;
	assert_int_equal(shape_rate_hdr_bytes(AF_INET, IPPROTO_UDP, ETH), 14 + 20 + 8);
	assert_int_equal(shape_rate_hdr_bytes(AF_INET6, IPPROTO_UDP, ETH), 14 + 40 + 8);
	assert_int_equal(shape_rate_hdr_bytes(AF_INET, IPPROTO_TCP, ETH), 14 + 20 + 32);
	assert_int_equal(shape_rate_hdr_bytes(AF_INET6, IPPROTO_TCP, 0), 40 + 32);
	/* A 1500-byte MTU: 1472 bytes of UDP payload over IPv4, 1452 over IPv6. */
	assert_int_equal(shape_rate_mtu_payload(1500, AF_INET, IPPROTO_UDP), 1472);
	assert_int_equal(shape_rate_mtu_payload(1500, AF_INET6, IPPROTO_UDP), 1452);
	assert_int_equal(shape_rate_mtu_payload(1500, AF_INET, IPPROTO_TCP), 1448);
	assert_int_equal(shape_rate_mtu_payload(20, AF_INET, IPPROTO_UDP), 1);
}

static void test_wire_closed_form(void **state)
{
	(void)state;
	/* iperf3's 1448-byte datagrams at 1 Gb/s: 1e9/8 * 1490/1448 =
	 * 128625690.6... B/s, rounded up. */
	assert_int_equal(shape_rate_wire_Bps(1000000000, 1448, 42), 128625691);
	/* rxbneck-send's 1472-byte datagrams at 2.5 Gb/s: 312500000 * 1514 /
	 * 1472 = 321416440.2... */
	assert_int_equal(shape_rate_wire_Bps(2500000000ULL, 1472, 42), 321416441);
	/* IPv6 TCP, 1428 bytes per segment at 100 Mb/s: 12500000 * 1514/1428
	 * = 13252801.1... */
	assert_int_equal(shape_rate_wire_Bps(100000000, 1428, 86), 13252802);
	/* No headers: bytes = bits / 8 exactly. */
	assert_int_equal(shape_rate_wire_Bps(8000000, 1000, 0), 1000000);
	/* Below the floor the floor counts; a payload below 1 byte counts as 1. */
	assert_int_equal(shape_rate_wire_Bps(0, 1000, 0), SHAPE_RATE_MIN_BPS / 8);
	assert_int_equal(shape_rate_wire_Bps(8000, 0, 7), 8000);
	/* The inverse. */
	assert_true(fabs(shape_rate_payload_bps(128625691.0, 1448, 42) - 1e9) < 8 * 1490.0 / 1448);
}

/*
 * The kernel side: a class at @wire_Bps dequeues a packet when its tokens
 * (in bytes here) are not negative and charges it qdisc_pkt_len. Packets
 * of @segs segments of @payload bytes each, @hdr header bytes per segment,
 * always queued. Returns the payload bits/s passed over @seconds.
 */
static double simulate(uint64_t wire_Bps, unsigned payload, unsigned hdr, unsigned segs,
		       double seconds)
{
	const double dt = 1e-6;
	double tokens = 0, bits = 0;
	uint64_t len = (uint64_t)segs * (payload + hdr);	/* qdisc_pkt_len() */

	for (long i = 0; i < lround(seconds / dt); i++) {
		tokens += wire_Bps * dt;
		while (tokens >= 0) {
			tokens -= (double)len;
			bits += 8.0 * segs * payload;
		}
	}
	return bits / seconds;
}

static void test_wire_against_kernel_charging(void **state)
{
	static const struct { uint64_t bps; unsigned payload, hdr, segs; } c[] = {
		{ 1000000000ULL, 1448, 42, 1 },		/* iperf3 -u */
		{ 2300000000ULL, 1472, 42, 1 },		/* rxbneck-send, USO off */
		{ 2300000000ULL, 1472, 42, 16 },	/* rxbneck-send's GSO packets */
		{ 400000000ULL, 1452, 62, 1 },		/* IPv6 UDP */
		{ 750000000ULL, 1448, 66, 44 },		/* TCP TSO: 64 KB packets */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t w = shape_rate_wire_Bps(c[i].bps, c[i].payload, c[i].hdr);
		double got = simulate(w, c[i].payload, c[i].hdr, c[i].segs, 2.0);
		/* Within two packets over the run (the bucket starts with one
		 * packet's credit and ends with up to one), plus the rounding
		 * up: about 1e-5 of the rate here. */
		double slack = 2 * 8.0 * c[i].segs * c[i].payload / 2.0 + 8.0;

		assert_true(fabs(got - (double)c[i].bps) <= slack);
	}
}

static void test_measured_payload(void **state)
{
	uint64_t bytes = 0, pkts = 0;

	(void)state;
	/* 100 GSO packets of 16 x 1472 bytes, as the kernel counts them:
	 * bytes += skb->len + (segs - 1) * hdr, packets += segs. */
	for (int i = 0; i < 100; i++) {
		uint64_t skb_len = 42 + 16 * 1472;

		bytes += skb_len + 15 * 42;
		pkts += 16;
	}
	assert_true(fabs(shape_rate_measured_payload(bytes, pkts, 42) - 1472) < 1e-9);
	/* Too few packets: no estimate. */
	assert_true(shape_rate_measured_payload(1490 * 10, 10, 42) == 0);
	/* Counters that do not fit the header guess: no estimate. */
	assert_true(shape_rate_measured_payload(40 * 1000, 1000, 42) == 0);
	/* Mixed sizes: the payload-weighted mean carries the aggregate exactly. */
	bytes = 500 * (1448 + 42) + 500 * (64 + 42);
	assert_true(fabs(shape_rate_measured_payload(bytes, 1000, 42) - 756) < 1e-9);
}

static void test_burst(void **state)
{
	(void)state;
	assert_int_equal(shape_rate_burst_bytes(12500000, 0), SHAPE_RATE_BURST_MIN);
	assert_int_equal(shape_rate_burst_bytes(125000000, 0), 125000);
	assert_int_equal(shape_rate_burst_bytes(1250000000, 0), 1250000);	/* 1 ms at 10 Gb/s */
	assert_int_equal(shape_rate_burst_bytes(SHAPE_RATE_UNLIMITED_BPS / 8, 0),
			 SHAPE_RATE_BURST_MAX);
	assert_int_equal(shape_rate_burst_bytes(1250000000, 200000), 200000);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_hdr_bytes),
	cmocka_unit_test(test_wire_closed_form),
	cmocka_unit_test(test_wire_against_kernel_charging),
	cmocka_unit_test(test_measured_payload),
	cmocka_unit_test(test_burst),
)
