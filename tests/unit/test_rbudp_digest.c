// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/rbudp integrity and data: the SHA-256 file digest
 * against the FIPS 180-2 examples, in memory and read from a file; the
 * synthetic data against values computed by an independent Python
 * implementation (docs/rbudp.md has it), and its digest against SHA-256 of
 * the same bytes written out.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tools/rbudp/digest.h"
#include "tools/rbudp/source.h"
#include "tests/unit/unit_main.h"

static void expect_hex(const uint8_t d[RBUDP_DIGEST_LEN], const char *want)
{
	char hex[RBUDP_DIGEST_HEX_LEN + 1];

	rbudp_digest_hex(d, hex);
	assert_string_equal(hex, want);
}

static void test_sha256_fips_vectors(void **state)
{
	static const char two_blocks[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	uint8_t d[RBUDP_DIGEST_LEN];

	(void)state;
	rbudp_digest_buf("abc", 3, d);
	expect_hex(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	rbudp_digest_buf("", 0, d);
	expect_hex(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	rbudp_digest_buf(two_blocks, strlen(two_blocks), d);
	expect_hex(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_digest_hex_and_file(void **state)
{
	uint8_t d[RBUDP_DIGEST_LEN], back[RBUDP_DIGEST_LEN], f[RBUDP_DIGEST_LEN];
	char hex[RBUDP_DIGEST_HEX_LEN + 1], path[] = "/tmp/rbudp-digest-XXXXXX", err[200];
	static uint8_t data[3000000];
	uint64_t bytes;
	FILE *fp;
	int fd;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + (i >> 9));
	rbudp_digest_buf(data, sizeof(data), d);
	rbudp_digest_hex(d, hex);
	assert_int_equal(rbudp_digest_parse(hex, back), 0);
	assert_memory_equal(d, back, sizeof(d));
	hex[5] = 'G';
	assert_int_equal(rbudp_digest_parse(hex, back), -EINVAL);
	assert_int_equal(rbudp_digest_parse("abc", back), -EINVAL);
	/* The file read in 1 MiB pieces gives the same digest as the buffer. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, sizeof(data), fp), sizeof(data));
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(rbudp_digest_file(path, f, &bytes, err, sizeof(err)), 0);
	assert_true(bytes == sizeof(data));
	assert_memory_equal(f, d, sizeof(d));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rbudp_digest_file(path, f, &bytes, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
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
	rbudp_source_synth_fill(buf, 0, 16);
	assert_memory_equal(buf, head, 16);
	rbudp_source_synth_fill(buf, RBUDP_SYNTH_PERIOD - 4, 8);
	assert_memory_equal(buf, wrap, 8);
	rbudp_source_synth_fill(buf, 3ULL * RBUDP_SYNTH_PERIOD - 4, 8);
	assert_memory_equal(buf, wrap, 8);

	assert_int_equal(rbudp_source_open_synth(&src, 10000, 1000), 0);
	assert_int_equal(src.total_pkts, 10);
	rbudp_source_finish(&src);
	/* The digest of synthetic data, fed period by period, equals SHA-256
	 * of the same bytes written out (a file crossing the period twice). */
	{
		uint64_t n = 2ULL * RBUDP_SYNTH_PERIOD + 12345;
		uint8_t *all = malloc(n), a[RBUDP_DIGEST_LEN], b[RBUDP_DIGEST_LEN];

		assert_non_null(all);
		rbudp_source_synth_fill(all, 0, n);
		rbudp_digest_buf(all, n, a);
		assert_int_equal(rbudp_source_open_synth(&src, n, 1456), 0);
		rbudp_source_digest(&src, b);
		assert_memory_equal(a, b, sizeof(a));
		rbudp_source_finish(&src);
		free(all);
	}

	/* A packet straddling the period is a contiguous slice all the same. */
	assert_int_equal(rbudp_source_open_synth(&src, 3ULL * RBUDP_SYNTH_PERIOD, 1468), 0);
	for (uint32_t seq = 700; seq < 720; seq++) {
		const uint8_t *p = rbudp_source_pkt(&src, seq, &len);
		uint8_t want[1468];

		rbudp_source_synth_fill(want, (uint64_t)seq * 1468, len);
		assert_int_equal(len, 1468);
		assert_memory_equal(p, want, len);
	}
	rbudp_source_pkt(&src, src.total_pkts - 1, &len);
	assert_int_equal(len, 3ULL * RBUDP_SYNTH_PERIOD - (uint64_t)(src.total_pkts - 1) * 1468);
	rbudp_source_finish(&src);

	assert_int_equal(rbudp_source_open_synth(&src, 0, 1468), -EFBIG);
	assert_int_equal(rbudp_source_open_synth(&src, 1468ULL * 0x100000000ULL, 1468), -EFBIG);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_sha256_fips_vectors),
	cmocka_unit_test(test_digest_hex_and_file),
	cmocka_unit_test(test_synthetic_data_matches_python),
)
