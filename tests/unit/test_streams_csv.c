// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl/streams_csv: the samples file of `rxbneckctl streams --samples`.
 * Repeated n averaged (mean and sample standard deviation against the
 * closed forms), sorted by n; header, comments, blank lines, CRLF and SI
 * suffixes taken; every malformed line refused with its number; the
 * limits (distinct n, line length, size, NUL bytes) enforced.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check_rel.h"
#include "ctl/streams_csv.h"
#include "tests/unit/unit_main.h"

static struct streams_csv c;

static int parse(const char *text, char *err)
{
	return streams_csv_parse(text, strlen(text), &c, err, 160);
}

static void test_averages(void **state)
{
	char err[160];

	(void)state;
	assert_int_equal(parse("# sweep\r\nn,throughput_bps\r\n\r\n4, 180M\r\n1,48e6\n"
			       "4,200M\n1,52000000\n 2 , 9.5e7 \n4,190M", err), 0);
	assert_int_equal(c.m, 3);
	assert_int_equal(c.rows, 6);
	check_rel(c.p[0].n, 1, 0, "sorted");
	check_rel(c.p[0].th, 50e6, 1e-15, "mean of 48M and 52M");
	check_rel(c.sd[0], sqrt(8e12), 1e-12, "sd of 48M, 52M");
	assert_int_equal(c.count[0], 2);
	check_rel(c.p[1].th, 95e6, 1e-15, "one sample");
	assert_true(isnan(c.sd[1]));
	check_rel(c.p[2].n, 4, 0, "n = 4");
	check_rel(c.p[2].th, 190e6, 1e-15, "mean of three");
	check_rel(c.sd[2], 10e6, 1e-12, "sd of three");
}

static void expect_error(const char *text, const char *want)
{
	char err[160];

	err[0] = '\0';
	assert_int_equal(parse(text, err), -EINVAL);
	if (!strstr(err, want)) {
		fprintf(stderr, "'%s': got '%s', want '%s'\n", text, err, want);
		fail();
	}
}

static void test_errors(void **state)
{
	char big[STREAMS_CSV_MAX_LINE + 16], many[64 * 80], err[160];
	size_t len = 0;

	(void)state;
	expect_error("1,10\n2\n", "line 2: expected two fields");
	expect_error("1,10\n2,20,30\n", "line 2: more than two fields");
	expect_error("1,10\n1.5,20\n", "line 2: n is not a whole number");
	expect_error("0,10\n", "line 1: n is not within 1 .. 1024");
	expect_error("1025,10\n", "line 1: n is not within");
	expect_error("1,-10\n", "line 1: the throughput is not a positive number");
	expect_error("1,0\n", "line 1: the throughput");
	expect_error("1,nan\n", "line 1: the throughput");
	expect_error("1,10\nn,throughput_bps\n", "line 2: n is not a whole number");
	expect_error("# nothing\n\n", "no sample");
	expect_error("", "no sample");
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_error(big, "line 1: longer than");
	for (int n = 1; n <= STREAMS_FIT_MAX_POINTS + 1; n++)
		len += (size_t)snprintf(many + len, sizeof(many) - len, "%d,%d\n", n, n * 10);
	expect_error(many, "line 65: more than 64 distinct stream counts");
	assert_int_equal(streams_csv_parse("1,10\n2\0,5\n", 10, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2: a NUL byte"));
	assert_int_equal(streams_csv_parse("1,1", STREAMS_CSV_MAX_BYTES + 1, &c, err,
					   sizeof(err)), -EFBIG);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_averages),
	cmocka_unit_test(test_errors),
)
