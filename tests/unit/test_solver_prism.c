// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PRISM explicit export: the files parse back into the same chain, states
 * are in PRISM's lexicographic order, labels and rewards mark the right
 * states, and the mean time to absorption of the re-imported chain from
 * its single initial state is 1/q + E[R].
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

#include "solver/prism.h"
#include "solver/tagged.h"
#include "tests/unit/unit_main.h"

struct sbuf {
	char *s;
	size_t len, cap;
	int fail_after;	/* fail the n-th write (0: never) */
	int writes;
};

static int sbuf_write(void *ctx, const char *buf, size_t len)
{
	struct sbuf *b = ctx;

	if (b->fail_after && ++b->writes >= b->fail_after)
		return -EIO;
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	memcpy(b->s + b->len, buf, len);
	b->len += len;
	b->s[b->len] = '\0';
	return 0;
}

static void test_export_roundtrip(void **state)
{
	const struct tagged_rates r = { 4600.0, 1010.0, 41600.0 };
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result res;
	struct prism_export e;
	struct prism_order ord;
	struct sbuf tra = { 0 }, sta = { 0 }, lab = { 0 }, srew = { 0 };
	const double q = 1e6;
	unsigned n, ntr, nrew, nalpha = 0;
	double *a, mean, *alpha;
	struct ctmc chain;
	struct ctmc_stat st;
	char *line, *save;
	int off;

	(void)state;
	assert_int_equal(tagged_seed_init(&m, 1, 2, &r), 0);
	assert_int_equal(tagged_analyze(&m, NULL, &ch, &res), 0);
	e.net = &m.net;
	e.sp = &ch.tag;
	e.alpha = ch.alpha;
	e.start_rate_per_s = q;
	assert_int_equal(prism_prepare(&e, &ord), 0);
	assert_int_equal(prism_write(&e, &ord, PRISM_TRA, sbuf_write, &tra), 0);
	assert_int_equal(prism_write(&e, &ord, PRISM_STA, sbuf_write, &sta), 0);
	assert_int_equal(prism_write(&e, &ord, PRISM_LAB, sbuf_write, &lab), 0);
	assert_int_equal(prism_write(&e, &ord, PRISM_SREW, sbuf_write, &srew), 0);
	assert_string_equal(prism_file_ext(PRISM_TRA), "tra");
	assert_string_equal(prism_file_ext(PRISM_SREW), "srew");
	assert_int_equal(prism_write(&e, &ord, PRISM_FILES, sbuf_write, &tra), -EINVAL);

	/* .tra: "n m" and exactly m lines, parsed into a dense matrix. */
	assert_int_equal(sscanf(tra.s, "%u %u%n", &n, &ntr, &off), 2);
	assert_int_equal(n, ch.tag.nstates + 1);
	for (uint32_t i = 0; i < ch.bg.nstates; i++)
		nalpha += ch.alpha[i] > 0.0;
	assert_int_equal(ntr, ch.tag.chain.nnz + nalpha);
	a = calloc((size_t)n * n, sizeof(*a));
	for (unsigned k = 0, i, j, got; k < ntr; k++) {
		double rate;
		int more;

		got = sscanf(tra.s + off, "%u %u %lf%n", &i, &j, &rate, &more);
		assert_int_equal(got, 3);
		off += more;
		assert_true(i < n && j < n && rate > 0.0);
		a[(size_t)i * n + j] += rate;
	}
	assert_int_equal(sscanf(tra.s + off, "%*s"), EOF);	/* nothing more */

	/* Mean time from the start state = 1/q + E[R]. */
	assert_int_equal(ctmc_from_dense(&chain, n, a), 0);
	alpha = calloc(n, sizeof(*alpha));
	alpha[0] = 1.0;
	assert_int_equal(ctmc_absorb_mean(&chain, alpha, NULL, &mean, NULL, &st), 0);
	assert_true(fabs(mean - 1.0 / q - res.mean_response_s) <
		    1e-12 * res.mean_response_s);

	/* .sta: header, the start state first, lexicographic order. */
	line = strtok_r(sta.s, "\n", &save);
	assert_string_equal(line, "(start,cpu_bound,io_cpu,io_disk,tag,done)");
	line = strtok_r(NULL, "\n", &save);
	assert_string_equal(line, "0:(0,0,0,0,0,0)");
	{
		int prev[6] = { 0 }, cur[6];
		unsigned idx, count = 1;

		while ((line = strtok_r(NULL, "\n", &save))) {
			assert_int_equal(sscanf(line, "%u:(%d,%d,%d,%d,%d,%d)", &idx,
						&cur[0], &cur[1], &cur[2], &cur[3],
						&cur[4], &cur[5]), 7);
			assert_int_equal(idx, count++);
			/* strictly increasing as tuples */
			for (int v = 0; v < 6; v++) {
				if (cur[v] != prev[v]) {
					assert_true(cur[v] > prev[v]);
					break;
				}
				assert_true(v < 5);	/* not equal */
			}
			/* The absorbing marking: labelled, no transitions out. */
			if (cur[5] == 1) {
				char want[32];

				snprintf(want, sizeof(want), "\n%u: 1 2\n", idx);
				assert_non_null(strstr(lab.s, want));
				assert_true(chain.exit_rate[idx] == 0.0);
			}
			memcpy(prev, cur, sizeof(cur));
		}
		assert_int_equal(count, n);
	}
	/* .lab: init is the start state; .srew: 1 on every transient state. */
	assert_non_null(strstr(lab.s, "0=\"init\" 1=\"deadlock\" 2=\"absorbed\"\n0: 0\n"));
	assert_int_equal(sscanf(srew.s, "%u %u", &n, &nrew), 2);
	assert_int_equal(nrew, ch.tag.nstates - 1);
	assert_null(strstr(srew.s, "\n0 1\n"));	/* not the start state */

	/* Writer errors come back. */
	{
		struct sbuf bad = { .fail_after = 3 };

		assert_int_equal(prism_write(&e, &ord, PRISM_TRA, sbuf_write, &bad), -EIO);
		free(bad.s);
	}
	ctmc_finish(&chain);
	free(alpha);
	free(a);
	free(tra.s);
	free(sta.s);
	free(lab.s);
	free(srew.s);
	prism_finish(&ord);
	tagged_chain_finish(&ch);
	tagged_model_finish(&m);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_export_roundtrip),
)
