// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/model/streams_hist: the advisor's history file. Saved and loaded
 * back bucket for bucket (IPv4 and IPv6 peers, every field exact); every
 * malformed line refused; aged buckets not restored; and a writer killed
 * with SIGKILL at random moments of its saves, in a loop, always leaves a
 * file that is one whole save or the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/model/streams_hist.h"
#include "tests/unit/unit_main.h"

static const struct advisor_params params = {
	.max_peers = 64, .max_points = 32, .max_weight_s = 600, .max_age_s = 86400 * 7,
	.min_weight_s = 2, .max_n = 64, .tolerance = 0.02, .rise = 0.05, .fits_per_epoch = 4,
};

#define NOW	1763770000ULL

static int tmpdir(char *path)
{
	strcpy(path, "/tmp/rxbhist.XXXXXX");
	assert_non_null(mkdtemp(path));
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void rmdir_all(int dirfd, const char *path)
{
	unlinkat(dirfd, STREAMS_HIST_FILE, 0);
	unlinkat(dirfd, STREAMS_HIST_FILE ".tmp", 0);
	close(dirfd);
	rmdir(path);
}

/* @peers peers with @points buckets each, values from @seed. */
static void fill(struct advisor *a, int peers, int points, double seed)
{
	uint8_t addr[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 0 };

	assert_int_equal(advisor_init(a, &params), 0);
	for (int p = 0; p < peers; p++) {
		if (p % 2) {
			memset(addr, 0, 16);
			addr[0] = 0x20;
			addr[1] = 0x01;
		}
		addr[15] = (uint8_t)(p + 1);
		for (int n = 1; n <= points; n++)
			for (int k = 0; k < 3; k++)
				advisor_add(a, addr, (uint16_t)(5000 + p), (uint32_t)n,
					    seed * n * (1 + 0.01 * k) / 3.0, 1.0 + k,
					    k ? ADVISOR_SENDER : ADVISOR_PASSIVE, NOW - 100 + (uint64_t)k);
	}
}

static int buckets(const struct advisor *a)
{
	int n = 0;

	for (uint32_t i = 0; i < a->p.max_peers; i++)
		n += a->peers[i].used ? a->peers[i].nb : 0;
	return n;
}

/* Every bucket of @x is in @y, bit for bit. */
static bool same(const struct advisor *x, const struct advisor *y)
{
	if (buckets(x) != buckets(y))
		return false;
	for (uint32_t i = 0; i < x->p.max_peers; i++) {
		const struct advisor_peer *p = &x->peers[i], *q;

		if (!p->used)
			continue;
		q = advisor_find(y, p->addr, p->port);
		if (!q || q->nb != p->nb)
			return false;
		for (int k = 0; k < p->nb; k++)
			if (p->b[k].n != q->b[k].n || p->b[k].count != q->b[k].count ||
			    p->b[k].weight_s != q->b[k].weight_s ||
			    p->b[k].mean_bps != q->b[k].mean_bps || p->b[k].m2 != q->b[k].m2 ||
			    p->b[k].first_unix != q->b[k].first_unix ||
			    p->b[k].last_unix != q->b[k].last_unix ||
			    p->b[k].origins != q->b[k].origins)
				return false;
	}
	return true;
}

static void test_roundtrip(void **state)
{
	struct advisor a, b;
	struct streams_hist_stats st;
	char path[64];
	int dirfd = tmpdir(path);

	(void)state;
	fill(&a, 5, 7, 3e8);
	assert_int_equal(streams_hist_save(dirfd, &a), 0);
	assert_int_equal(advisor_init(&b, &params), 0);
	assert_int_equal(streams_hist_load(dirfd, &b, NOW, &st), 0);
	assert_int_equal(st.lines, 35);
	assert_int_equal(st.bad, 0);
	assert_int_equal(st.refused, 0);
	assert_true(same(&a, &b));
	advisor_finish(&b);
	/* A week and a day later every bucket is too old. */
	assert_int_equal(advisor_init(&b, &params), 0);
	assert_int_equal(streams_hist_load(dirfd, &b, NOW + 8 * 86400, &st), 0);
	assert_int_equal(st.refused, 35);
	assert_int_equal(b.npeers, 0);
	advisor_finish(&b);
	advisor_finish(&a);
	rmdir_all(dirfd, path);
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=passive n=2",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=passive x=1",
		"peer=192.0.2.999 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=passive",
		"peer=192.0.2.1 port=0 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=passive",
		"peer=192.0.2.1 port=1 n=0 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=passive",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=nan mean=1e6 m2=0 first=1 last=2 from=passive",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=-1 m2=0 first=1 last=2 from=passive",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=3 last=2 from=passive",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=bogus",
		"peer=192.0.2.1 port=1 n=1 count=1 weight=1 mean=1e6 m2=0 first=1 last=2 from=",
		"port",
	};
	char text[4096];
	struct streams_hist_entry e;
	struct streams_hist_stats st;
	struct advisor a;
	size_t len = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(streams_hist_parse_line(bad[i], &e), -EINVAL);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n", bad[i]);
	}
	/* And one good IPv6 line among them, and a NUL in one more. */
	len += (size_t)snprintf(text + len, sizeof(text) - len, "peer=2001:db8::7 port=9 n=3 "
				"count=2 weight=2 mean=5e8 m2=1e10 first=%llu last=%llu from=sender\n",
				NOW, NOW);
	memcpy(text + len, "n=1\0x\n", 6);
	len += 6;
	assert_int_equal(advisor_init(&a, &params), 0);
	assert_int_equal(streams_hist_parse(text, len, &a, NOW, &st), 0);
	assert_int_equal(st.bad, sizeof(bad) / sizeof(bad[0]) + 1);
	assert_int_equal(buckets(&a), 1);
	assert_int_equal(a.peers[0].b[0].n, 3);
	assert_int_equal(a.peers[0].addr[15], 7);
	assert_int_equal(streams_hist_parse(text, STREAMS_HIST_MAX_FILE + 1, &a, NOW, &st), -EFBIG);
	advisor_finish(&a);
}

/*
 * A child saves two different histories in turn, for ever; the parent
 * kills it with SIGKILL after a random time, then loads the file: every
 * line parses, and it is one of the two, whole.
 */
static void test_kill_mid_write(void **state)
{
	struct advisor a, b, got;
	struct streams_hist_stats st;
	char path[64];
	int dirfd = tmpdir(path), as_a = 0, as_b = 0;
	struct timespec seed;

	(void)state;
	fill(&a, 20, 30, 2e8);
	fill(&b, 33, 17, 7e8);
	assert_int_equal(streams_hist_save(dirfd, &a), 0);
	clock_gettime(CLOCK_MONOTONIC, &seed);
	srandom((unsigned)seed.tv_nsec);
	for (int i = 0; i < 40; i++) {
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0) {
			for (;;) {
				if (streams_hist_save(dirfd, &b) || streams_hist_save(dirfd, &a))
					_exit(1);
			}
		}
		usleep((useconds_t)(random() % 30000));
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(advisor_init(&got, &params), 0);
		assert_int_equal(streams_hist_load(dirfd, &got, NOW, &st), 0);
		assert_int_equal(st.bad, 0);
		if (same(&got, &a))
			as_a++;
		else if (same(&got, &b))
			as_b++;
		else
			fail_msg("kill %d: the file is neither save (%d buckets)", i, buckets(&got));
		advisor_finish(&got);
	}
	fprintf(stderr, "killed 40 times: %d files of the first save, %d of the second\n",
		as_a, as_b);
	advisor_finish(&a);
	advisor_finish(&b);
	rmdir_all(dirfd, path);
}

/*
 * A FIFO or a directory in the file's place: refused at once (a blocking
 * open of a FIFO would hang the daemon's start; the alarm fails the test
 * instead of hanging it), the advisor left empty.
 */
static void test_not_regular(void **state)
{
	struct advisor a;
	struct streams_hist_stats st;
	char path[64];
	int dirfd = tmpdir(path);

	(void)state;
	assert_int_equal(mkfifoat(dirfd, STREAMS_HIST_FILE, 0600), 0);
	assert_int_equal(advisor_init(&a, &params), 0);
	alarm(10);
	assert_int_equal(streams_hist_load(dirfd, &a, NOW, &st), -EINVAL);
	alarm(0);
	assert_int_equal(a.npeers, 0);
	assert_int_equal(unlinkat(dirfd, STREAMS_HIST_FILE, 0), 0);
	assert_int_equal(mkdirat(dirfd, STREAMS_HIST_FILE, 0700), 0);
	assert_int_equal(streams_hist_load(dirfd, &a, NOW, &st), -EINVAL);
	assert_int_equal(unlinkat(dirfd, STREAMS_HIST_FILE, AT_REMOVEDIR), 0);
	advisor_finish(&a);
	rmdir_all(dirfd, path);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_roundtrip),
	cmocka_unit_test(test_not_regular),
	cmocka_unit_test(test_bad_lines),
	cmocka_unit_test(test_kill_mid_write),
)
