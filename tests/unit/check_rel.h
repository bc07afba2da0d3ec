/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check_rel(): a cmocka failure unless @got is within relative @tol of
 * @want (within @tol absolute when @want is 0; NaN fails), with both
 * printed to 17 digits; check_rel_strict(): the same but relative only,
 * so that at @want 0 only an exact 0 passes; check_abs(): within absolute
 * @tol. Include after <cmocka.h>.
 */
#ifndef RXB_TESTS_CHECK_REL_H
#define RXB_TESTS_CHECK_REL_H

#include <math.h>
#include <stdio.h>

static inline void check_rel(double got, double want, double tol, const char *what)
{
	double rel = want == 0.0 ? fabs(got) : fabs(got - want) / fabs(want);

	if (!(rel <= tol)) {
		fprintf(stderr, "%s: got %.17g want %.17g rel %.3g > %.3g\n",
			what, got, want, rel, tol);
		fail();
	}
}

static inline void check_rel_strict(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fabs(want))) {
		print_error("got %.17g, want %.17g (rel. tol %g)\n", got, want, tol);
		fail();
	}
}

static inline void check_abs(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol)) {
		fprintf(stderr, "%s: got %.12g want %.12g diff %.3g > %.3g\n",
			what, got, want, fabs(got - want), tol);
		fail();
	}
}

#endif
