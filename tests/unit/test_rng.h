/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit tests' pseudo-random numbers: small, seeded, the same on every
 * machine, so a test's random instances are the same on every run.
 */
#ifndef RXB_TEST_RNG_H
#define RXB_TEST_RNG_H

#include <stdint.h>

/*
 * Uniform in [0, 1) from the top 53 bits of Knuth's MMIX linear
 * congruential generator, whose state is *@st.
 */
static inline double test_uniform(uint64_t *st)
{
	*st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*st >> 11) * 0x1p-53;
}

/*
 * Uniform in (0, 1) from xorshift64* (Vigna), whose state *@st must not be
 * 0: never 0, so its logarithm is finite.
 */
static inline double test_uniform_open(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return ((double)((*st * 0x2545F4914F6CDD1DULL) >> 11) + 0.5) * 0x1p-53;
}

#endif
