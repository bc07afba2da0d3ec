// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for probe_batch_read() (bpf/probe.c): real BPF hash maps made
 * by this test (bpf_map_create, no program), filled with known elements and
 * read back whole: by batch lookups in chunks smaller than the map, in
 * chunks so small that buckets overflow them (ENOSPC: the chunk grows), by
 * the element-by-element walk, and with torn-looking elements (odd seq),
 * which the stable read must leave out. Needs CAP_BPF (root); skipped
 * without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "bpf/probe.h"
#include "common/util.h"

struct rec {
	uint32_t seq;
	uint32_t tid;
	uint64_t value;
};

#define NELEMS	1000u

/*
 * @b reads struct rec values under u32 keys, @chunk elements a call;
 * @stable: checked by their seq (odd while a writer is inside one).
 */
static void rec_batch_init(struct probe_batch *b, uint32_t chunk, bool stable)
{
	assert_int_equal(probe_batch_init(b, sizeof(uint32_t), sizeof(struct rec), chunk,
					  stable, offsetof(struct rec, seq)), 0);
}

struct seen {
	uint32_t n;
	uint8_t hits[NELEMS];
	bool bad;
};

static int note(void *arg, const void *key, const void *val)
{
	struct seen *s = arg;
	uint32_t k = *(const uint32_t *)key;
	const struct rec *r = val;

	/* Keys are 1..NELEMS; each value names its key. */
	if (k < 1 || k > NELEMS || r->tid != k || r->value != (uint64_t)k * 1000003u)
		s->bad = true;
	else
		s->hits[k - 1]++;
	s->n++;
	return 0;
}

static int make_map(uint32_t max_entries)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "rxb_test_batch", sizeof(uint32_t),
				sizeof(struct rec), max_entries, NULL);

	return fd < 0 ? -errno : fd;
}

static int fill(int fd, uint32_t n, uint32_t odd_every)
{
	for (uint32_t k = 1; k <= n; k++) {
		struct rec r = { .seq = odd_every && k % odd_every == 0 ? 3 : 2,
				 .tid = k, .value = (uint64_t)k * 1000003u };

		if (bpf_map_update_elem(fd, &k, &r, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The group's map, or -errno when this process may not make one. */
static int setup(void **state)
{
	*state = (void *)(intptr_t)make_map(NELEMS);
	return 0;
}

static int teardown(void **state)
{
	int fd = (int)(intptr_t)*state;

	if (fd >= 0)
		close(fd);
	return 0;
}

static int map_or_skip(void **state)
{
	int fd = (int)(intptr_t)*state;

	if (fd < 0) {
		print_message("  no BPF maps here (%s): skipped\n", strerror(-fd));
		skip();
	}
	return fd;
}

/* The group's map with NELEMS records, every @odd_every-th torn (0: none). */
static int filled_map(void **state, uint32_t odd_every)
{
	int fd = map_or_skip(state);

	assert_int_equal(fill(fd, NELEMS, odd_every), 0);
	return fd;
}

static void check_all(const struct seen *s, uint32_t n, uint32_t odd_every)
{
	uint32_t want = 0;

	assert_false(s->bad);
	for (uint32_t k = 1; k <= n; k++) {
		bool odd = odd_every && k % odd_every == 0;

		assert_int_equal(s->hits[k - 1], odd ? 0 : 1);
		want += !odd;
	}
	assert_int_equal(s->n, want);
}

static void test_chunks(void **state)
{
	int fd = filled_map(state, 0);
	const uint32_t chunks[] = { 1, 7, 64, 256, 4096 };

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		for (int stable = 0; stable <= 1; stable++) {
			struct probe_batch b;
			struct seen s = { 0 };

			rec_batch_init(&b, chunks[i], stable);
			assert_int_equal(probe_batch_read(&b, fd, note, &s), 0);
			check_all(&s, NELEMS, 0);
			/* Chunk 1 overflows in any bucket of two: it grew. */
			if (chunks[i] == 1 && !b.unsupported)
				assert_true(b.chunk > 1);
			print_message("  chunk %u%s: %u elements, %s, chunk now %u\n",
				      chunks[i], stable ? " stable" : "", s.n,
				      b.unsupported ? "walked" : "batched", b.chunk);
			probe_batch_finish(&b);
		}
	}
}

static void test_walk_and_torn(void **state)
{
	/* Every 10th element looks as if a writer were inside it. */
	int fd = filled_map(state, 10);
	struct probe_batch b;
	struct seen s = { 0 };

	rec_batch_init(&b, 128, true);
	assert_int_equal(probe_batch_read(&b, fd, note, &s), 0);
	check_all(&s, NELEMS, 10);
	/* The walk, as on a kernel without batch lookups: the same. */
	b.unsupported = true;
	memset(&s, 0, sizeof(s));
	assert_int_equal(probe_batch_read(&b, fd, note, &s), 0);
	check_all(&s, NELEMS, 10);
	probe_batch_finish(&b);
	/* Not stable: every element, odd seq or not. */
	rec_batch_init(&b, 128, false);
	memset(&s, 0, sizeof(s));
	assert_int_equal(probe_batch_read(&b, fd, note, &s), 0);
	check_all(&s, NELEMS, 0);
	probe_batch_finish(&b);
}

struct timed {
	const struct probe_batch *b;
	uint64_t start_ns, last_read_ns;
	uint32_t n, distinct;
	bool bad;
};

/* Slow callback: 200 us per element, as a stalled reader. */
static int note_time(void *arg, const void *key, const void *val)
{
	struct timed *t = arg;
	uint64_t now = rxb_mono_ns(), r = t->b->read_ns;
	struct timespec ts = { 0, 200000 };

	(void)key;
	(void)val;
	if (r < t->start_ns || r > now || r < t->last_read_ns)
		t->bad = true;
	if (r != t->last_read_ns)
		t->distinct++;
	t->last_read_ns = r;
	t->n++;
	nanosleep(&ts, NULL);
	return 0;
}

/*
 * read_ns is when the element was read - once per chunk - not when the
 * callback runs: with 64 per chunk, far fewer distinct times than
 * elements (the walk reads one element at a time: one each).
 */
static void test_read_time(void **state)
{
	int fd = filled_map(state, 0);
	struct probe_batch b;
	struct timed t = { 0 };

	rec_batch_init(&b, 64, true);
	t.b = &b;
	t.start_ns = rxb_mono_ns();
	assert_int_equal(probe_batch_read(&b, fd, note_time, &t), 0);
	assert_false(t.bad);
	assert_int_equal(t.n, NELEMS);
	print_message("  %u elements, %u read times (%s)\n", t.n, t.distinct,
		      b.unsupported ? "walked" : "batched");
	if (b.unsupported)
		assert_int_equal(t.distinct, NELEMS);
	else
		assert_true(t.distinct <= NELEMS / 8);
	probe_batch_finish(&b);
}

static int stop_at_five(void *arg, const void *key, const void *val)
{
	uint32_t *n = arg;

	(void)key;
	(void)val;
	return ++*n == 5 ? -ECANCELED : 0;
}

static void test_empty_stop_and_args(void **state)
{
	struct probe_batch b;
	struct seen s = { 0 };
	uint32_t n = 0;
	int fd;

	map_or_skip(state);
	fd = make_map(16);
	assert_true(fd >= 0);
	rec_batch_init(&b, 4, true);
	/* An empty map: nothing, and no error. */
	assert_int_equal(probe_batch_read(&b, fd, note, &s), 0);
	assert_int_equal(s.n, 0);
	/* The callback's error stops the read and is returned. */
	assert_int_equal(fill(fd, 16, 0), 0);
	assert_int_equal(probe_batch_read(&b, fd, stop_at_five, &n), -ECANCELED);
	assert_int_equal(n, 5);
	/* Not a map. */
	assert_true(probe_batch_read(&b, STDIN_FILENO, note, &s) < 0);
	probe_batch_finish(&b);
	close(fd);
	/* Bad sizes, and a seq outside the value. */
	assert_int_equal(probe_batch_init(&b, 0, 8, 4, false, 0), -EINVAL);
	assert_int_equal(probe_batch_init(&b, 4, 8, 0, false, 0), -EINVAL);
	assert_int_equal(probe_batch_init(&b, 4, 8, 4, true, 6), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_walk_and_torn),
		cmocka_unit_test(test_read_time),
		cmocka_unit_test(test_empty_stop_and_args),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
