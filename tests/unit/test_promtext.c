// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of the Prometheus text format writer (daemon/serve/promtext.c)
 * against the format's definition (Prometheus "Exposition formats", text
 * format 0.0.4): escaping of label values and help text, HELP and TYPE
 * before the samples, number formats, and histograms - checked by
 * counting the observations at or below each bound here, and by the rules
 * that buckets are cumulative and the +Inf bucket is the count.
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

#include "common/util.h"
#include "daemon/serve/promtext.h"
#include "tests/unit/unit_main.h"

static void test_escaping(void **state)
{
	struct promtext w;
	struct promtext_label l[2] = {
		{ "path", "C:\\dir\\\"x\"\nend" },
		{ "plain", "a b,c=d}{" },
	};

	(void)state;
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "x_total", PROMTEXT_COUNTER, "Help with \\ and \"quotes\"\nand a line.");
	promtext_sample_u64(&w, NULL, l, 2, 7);
	assert_true(promtext_ok(&w));
	assert_string_equal(promtext_text(&w),
		"# HELP x_total Help with \\\\ and \"quotes\"\\nand a line.\n"
		"# TYPE x_total counter\n"
		"x_total{path=\"C:\\\\dir\\\\\\\"x\\\"\\nend\",plain=\"a b,c=d}{\"} 7\n");
	promtext_finish(&w);
}

static void test_help_type_and_names(void **state)
{
	struct promtext w;
	struct promtext_label bad = { "le-x", "1" }, colon = { "a:b", "1" };

	(void)state;
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "g", PROMTEXT_GAUGE, NULL);
	promtext_sample(&w, NULL, NULL, 0, 1.5);
	promtext_family(&w, "ns:sub_h", PROMTEXT_HISTOGRAM, "h");
	assert_true(promtext_ok(&w));
	assert_string_equal(promtext_text(&w), "# HELP g \n# TYPE g gauge\ng 1.5\n"
			    "# HELP ns:sub_h h\n# TYPE ns:sub_h histogram\n");
	promtext_finish(&w);

	/* A sample before any family, bad names: the writer latches failure. */
	promtext_init(&w, 1 << 16);
	promtext_sample(&w, NULL, NULL, 0, 1);
	assert_false(promtext_ok(&w));
	assert_string_equal(promtext_text(&w), "");
	promtext_finish(&w);
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "9lives", PROMTEXT_GAUGE, "x");
	assert_false(promtext_ok(&w));
	promtext_finish(&w);
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "ok", PROMTEXT_GAUGE, "x");
	promtext_sample(&w, NULL, &bad, 1, 1);
	assert_false(promtext_ok(&w));
	promtext_finish(&w);
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "ok", PROMTEXT_GAUGE, "x");
	promtext_sample(&w, NULL, &colon, 1, 1);	/* ':' is for metric names only */
	assert_false(promtext_ok(&w));
	promtext_finish(&w);
}

static void test_numbers(void **state)
{
	struct promtext w;

	(void)state;
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "n", PROMTEXT_GAUGE, "n");
	promtext_sample(&w, NULL, NULL, 0, NAN);
	promtext_sample(&w, NULL, NULL, 0, INFINITY);
	promtext_sample(&w, NULL, NULL, 0, -INFINITY);
	promtext_sample(&w, NULL, NULL, 0, 0.1);
	promtext_sample(&w, NULL, NULL, 0, 1e-9);
	promtext_sample(&w, NULL, NULL, 0, 1.0 / 3);	/* the shortest that reads back */
	promtext_sample_u64(&w, NULL, NULL, 0, UINT64_MAX);
	assert_true(promtext_ok(&w));
	assert_string_equal(strchr(promtext_text(&w), '\n') + 1 + strlen("# TYPE n gauge\n"),
			    "n NaN\nn +Inf\nn -Inf\nn 0.1\nn 1e-09\n"
			    "n 0.3333333333333333\nn 18446744073709551615\n");
	promtext_finish(&w);
}

/* The writer's text for one histogram must say what was observed. */
static void test_histogram(void **state)
{
	static const double bounds[] = { 0.001, 0.01, 0.1, 1 };
	double obs[200], sum = 0;
	struct promtext_hist h;
	struct promtext_label l = { "port", "5001" };
	struct promtext w;
	uint64_t prev = 0, count = 0;
	int nb = 0;

	(void)state;
	assert_int_equal(promtext_hist_init(&h, bounds, 4), 0);
	srand(7);
	for (int i = 0; i < 200; i++) {
		/* Exactly on a bound now and then: "le" is inclusive. */
		obs[i] = i % 17 == 0 ? bounds[i % 4] : pow(10, -4 + 5.0 * rand() / RAND_MAX);
		promtext_hist_observe(&h, obs[i]);
		sum += obs[i];
	}
	promtext_hist_observe(&h, NAN);		/* not an observation */
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "t_seconds", PROMTEXT_HISTOGRAM, "t");
	promtext_histogram(&w, &l, 1, &h);
	assert_true(promtext_ok(&w));
	for (const char *p = promtext_text(&w); (p = strstr(p, "t_seconds_")); p++) {
		char le[32];
		unsigned long long v;
		double s;

		if (sscanf(p, "t_seconds_bucket{port=\"5001\",le=\"%31[^\"]\"} %llu", le, &v) == 2) {
			double b = strcmp(le, "+Inf") ? strtod(le, NULL) : INFINITY;
			uint64_t want = 0;

			for (int i = 0; i < 200; i++)
				want += obs[i] <= b;
			assert_int_equal(v, want);
			assert_true(v >= prev);		/* cumulative */
			prev = v;
			if (isinf(b))
				assert_int_equal(v, 200);	/* +Inf = _count */
			else
				assert_true(b == bounds[nb++]);
		} else if (sscanf(p, "t_seconds_sum{port=\"5001\"} %lf", &s) == 1) {
			assert_true(fabs(s - sum) <= 1e-12 * sum);
		} else if (sscanf(p, "t_seconds_count{port=\"5001\"} %llu", &v) == 1) {
			count = v;
		}
	}
	assert_int_equal(nb, 4);
	assert_int_equal(count, 200);
	promtext_finish(&w);
	/* Without labels: "le" alone. */
	promtext_init(&w, 1 << 16);
	promtext_family(&w, "u", PROMTEXT_HISTOGRAM, "u");
	promtext_histogram(&w, NULL, 0, &h);
	assert_true(promtext_ok(&w));
	assert_non_null(strstr(promtext_text(&w), "\nu_bucket{le=\"+Inf\"} 200\nu_sum "));
	promtext_finish(&w);
	/* Bounds must ascend. */
	assert_int_equal(promtext_hist_init(&h, (const double[]){ 1, 1 }, 2), -EINVAL);
	assert_int_equal(promtext_hist_init(&h, (const double[]){ 1, INFINITY }, 2), -EINVAL);
}

static void test_cap_and_take(void **state)
{
	struct promtext w;
	size_t len;
	char *text;

	(void)state;
	promtext_init(&w, 100);
	promtext_family(&w, "a", PROMTEXT_GAUGE, "short");
	for (int i = 0; i < 20; i++)
		promtext_sample(&w, NULL, NULL, 0, i);
	assert_false(promtext_ok(&w));		/* more than 100 bytes */
	assert_null(promtext_take(&w, &len));
	assert_int_equal(len, 0);
	promtext_finish(&w);

	promtext_init(&w, 100);
	promtext_family(&w, "a", PROMTEXT_GAUGE, "short");
	text = promtext_take(&w, &len);
	assert_non_null(text);
	assert_int_equal(len, strlen("# HELP a short\n# TYPE a gauge\n"));
	assert_int_equal(strlen(text), len);
	free(text);
	promtext_finish(&w);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_escaping),
	cmocka_unit_test(test_help_type_and_names),
	cmocka_unit_test(test_numbers),
	cmocka_unit_test(test_histogram),
	cmocka_unit_test(test_cap_and_take),
)
