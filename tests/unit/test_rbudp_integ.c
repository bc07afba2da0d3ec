// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/rbudp integrity and data: CRC32C against the RFC 3720
 * test vectors, the hardware and table implementations against each other,
 * the file digest and the synthetic data against values computed by an
 * independent Python implementation (docs/rbudp.md has it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/rbudp/integ.h"
#include "tools/rbudp/source.h"

static void test_crc32c_rfc3720_vectors(void **state)
{
	uint8_t buf[32];

	(void)state;
	assert_int_equal(rbudp_crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(rbudp_crc32c_sw(0, "123456789", 9), 0xe3069283);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(rbudp_crc32c(0, buf, 32), 0x8a9136aa);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(rbudp_crc32c(0, buf, 32), 0x62a8ab43);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	assert_int_equal(rbudp_crc32c(0, buf, 32), 0x46dd794e);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	assert_int_equal(rbudp_crc32c_sw(0, buf, 32), 0x113fdb5c);
	assert_int_equal(rbudp_crc32c(0, buf, 0), 0);
}

static void test_crc32c_hw_equals_sw_and_chains(void **state)
{
	uint8_t buf[300];

	(void)state;
	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	/* Every alignment and every length exercises the head/body/tail paths. */
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 7)
			assert_int_equal(rbudp_crc32c(0, buf + off, len),
					 rbudp_crc32c_sw(0, buf + off, len));
	/* CRC of a concatenation continues from the CRC of the first part. */
	assert_int_equal(rbudp_crc32c(rbudp_crc32c(0, buf, 123), buf + 123, 177),
			 rbudp_crc32c(0, buf, 300));
}

static void test_digest_known_value_and_order(void **state)
{
	uint8_t data[100];
	uint64_t sum = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		data[i] = (uint8_t)i;
	/* Python: sum of mix64(seq << 32 | crc32c(chunk)) over 16-byte chunks. */
	assert_true(rbudp_digest_buf(data, 100, 16) == 0xb4fd246eca0f8fafULL);
	/* Adding the packets in any order gives the same digest. */
	for (int seq = 6; seq >= 0; seq--) {
		size_t len = seq == 6 ? 4 : 16;

		sum += rbudp_digest_term((uint32_t)seq, data + 16 * seq, len);
	}
	assert_true(sum == 0xb4fd246eca0f8fafULL);
}

static void test_digest_catches_flip_and_swap(void **state)
{
	uint8_t data[64], swapped[64];
	uint64_t d;

	(void)state;
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(i * 37);
	d = rbudp_digest_buf(data, 64, 16);
	data[40] ^= 0x10;
	assert_true(rbudp_digest_buf(data, 64, 16) != d);
	data[40] ^= 0x10;
	/* Two packets exchanged: same multiset of payloads, wrong offsets. */
	memcpy(swapped, data, 64);
	memcpy(swapped, data + 16, 16);
	memcpy(swapped + 16, data, 16);
	assert_true(rbudp_digest_buf(swapped, 64, 16) != d);
}

static void test_synthetic_data_matches_python(void **state)
{
	static const uint8_t head[16] = {
		0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2,
		0xf4, 0x65, 0xb9, 0xa1, 0x6a, 0x9e, 0x78, 0x6e,
	};
	static const uint8_t wrap[8] = { 0xe7, 0x3c, 0x90, 0x81, 0xaf, 0xcd, 0x1d, 0x7b };
	struct rbudp_source src;
	uint8_t buf[16];
	uint32_t len;

	(void)state;
	rbudp_synth_fill(buf, 0, 16);
	assert_memory_equal(buf, head, 16);
	rbudp_synth_fill(buf, RBUDP_SYNTH_PERIOD - 4, 8);
	assert_memory_equal(buf, wrap, 8);
	rbudp_synth_fill(buf, 3ULL * RBUDP_SYNTH_PERIOD - 4, 8);
	assert_memory_equal(buf, wrap, 8);

	assert_int_equal(rbudp_source_open_synth(&src, 10000, 1000), 0);
	assert_int_equal(src.total_pkts, 10);
	assert_true(rbudp_source_digest(&src) == 0xcaed630f87d710f6ULL);
	rbudp_source_finish(&src);

	/* A packet straddling the period is a contiguous slice all the same. */
	assert_int_equal(rbudp_source_open_synth(&src, 3ULL * RBUDP_SYNTH_PERIOD, 1468), 0);
	for (uint32_t seq = 700; seq < 720; seq++) {
		const uint8_t *p = rbudp_source_pkt(&src, seq, &len);
		uint8_t want[1468];

		rbudp_synth_fill(want, (uint64_t)seq * 1468, len);
		assert_int_equal(len, 1468);
		assert_memory_equal(p, want, len);
	}
	rbudp_source_pkt(&src, src.total_pkts - 1, &len);
	assert_int_equal(len, 3ULL * RBUDP_SYNTH_PERIOD - (uint64_t)(src.total_pkts - 1) * 1468);
	rbudp_source_finish(&src);

	assert_int_equal(rbudp_source_open_synth(&src, 0, 1468), -EFBIG);
	assert_int_equal(rbudp_source_open_synth(&src, 1468ULL * 0x100000000ULL, 1468), -EFBIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_rfc3720_vectors),
		cmocka_unit_test(test_crc32c_hw_equals_sw_and_chains),
		cmocka_unit_test(test_digest_known_value_and_order),
		cmocka_unit_test(test_digest_catches_flip_and_swap),
		cmocka_unit_test(test_synthetic_data_matches_python),
	};

	return cmocka_run_group_tests_name("rbudp_integ", tests, NULL, NULL);
}
