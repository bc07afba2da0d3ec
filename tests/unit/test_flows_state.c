// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/model/state: the learned-costs history in the state
 * directory - line format round trip, strict parsing, atomic save and
 * reload, damaged files, the size bound, an unusable directory, a FIFO or
 * a link in the file's place, a failed save and the next one.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/daemon.h"
#include "daemon/model/state.h"
#include "daemon/serve/status.h"
#include "tests/unit/check_rel.h"
#include "tests/unit/unit_main.h"

static void learned(struct learn *l, double ns)
{
	learn_init(l);
	l->origin = VALUE_MEASURED;
	l->cpu_ns_per_pkt = (struct ewma_ratio){ 1000 * ns, 1000, true };
	l->pkts_per_wakeup = (struct ewma_ratio){ 1000, 250, true };
	l->truesize_per_pkt = (struct ewma_ratio){ 1000 * 2304.0, 1000, true };
	l->rcvbuf_bytes = 212992;
	l->ncpus = 2;
	l->cpu[0] = 1;
	l->cpu_share[0] = 0.75;
	l->cpu[1] = 0;
	l->cpu_share[1] = 0.25;
	strcpy(l->napi_dev, "(backlog)");
	l->napi_ns_per_poll = (struct ewma_ratio){ 100 * 2500.0, 100, true };
	l->napi_pkts_per_poll = (struct ewma_ratio){ 200, 100, true };
	l->napi_dgrams_per_skb = (struct ewma_ratio){ 1600, 100, true };
}

static void test_line_round_trip(void **state)
{
	struct state_entry e = { .port = 9000, .saved_unix_s = 1763770000 }, back;
	char line[STATE_MAX_LINE + 1];
	int n;

	(void)state;
	learned(&e.learn, 1523.25);
	n = state_format_line(&e, line, sizeof(line));
	assert_true(n > 0 && n < (int)sizeof(line));
	assert_int_equal(line[n - 1], '\n');
	assert_int_equal(state_parse_line(line, &back), 0);
	assert_int_equal(back.port, 9000);
	assert_int_equal(back.saved_unix_s, 1763770000);
	assert_int_equal(back.learn.origin, VALUE_HISTORY);
	check_rel_strict(ewma_ratio_value(&back.learn.cpu_ns_per_pkt), 1523.25, 1e-8);
	check_rel_strict(ewma_ratio_value(&back.learn.pkts_per_wakeup), 4, 1e-8);
	check_rel_strict(ewma_ratio_value(&back.learn.truesize_per_pkt), 2304, 1e-8);
	check_rel_strict(ewma_ratio_value(&back.learn.napi_ns_per_poll), 2500, 1e-8);
	check_rel_strict(ewma_ratio_value(&back.learn.napi_pkts_per_poll), 2, 1e-8);
	check_rel_strict(ewma_ratio_value(&back.learn.napi_dgrams_per_skb), 16, 1e-8);
	/* Restored as worth the minimum of fresh data, not more. */
	check_rel_strict(back.learn.cpu_ns_per_pkt.den, LEARN_MIN_PKTS, 1e-8);
	assert_int_equal(back.learn.rcvbuf_bytes, 212992);
	assert_int_equal(back.learn.ncpus, 2);
	assert_int_equal(back.learn.cpu[0], 1);
	check_rel_strict(back.learn.cpu_share[1], 0.25, 1e-8);
	assert_string_equal(back.learn.napi_dev, "(backlog)");
	/* Truncated output reports the length it needs. */
	assert_int_equal(state_format_line(&e, line, 10), n);
}

static void test_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		"port=9000",				/* no receiver cost */
		"cpu_ns_per_pkt=100",			/* no port */
		"port=0 cpu_ns_per_pkt=100",
		"port=70000 cpu_ns_per_pkt=100",
		"port=9000 cpu_ns_per_pkt=-1",
		"port=9000 cpu_ns_per_pkt=nan",
		"port=9000 cpu_ns_per_pkt=1e99",
		"port=9000 cpu_ns_per_pkt=100 colour=blue",
		"port=9000 cpu_ns_per_pkt=100 junk",
		"port=9000 cpu_ns_per_pkt=100 cpus=1",
		"port=9000 cpu_ns_per_pkt=100 cpus=1:2",
		"port=9000 cpu_ns_per_pkt=100 cpus=-1:0.5",
		"port=9000 cpu_ns_per_pkt=100 cpus=1:0.5;",
		"port=9000 cpu_ns_per_pkt=100 napi_dev=",
		"port=9000 cpu_ns_per_pkt=100 napi_dev=a-very-long-device-name",
		"port=9000 cpu_ns_per_pkt=100 rcvbuf=0",
		/* a key given twice (found by fuzz_ctl: cpus= lists merged) */
		"port=9000 cpu_ns_per_pkt=100 port=9001",
		"port=9000 cpu_ns_per_pkt=100 cpus=1:0.5 cpus=0:0.5",
		"port=9000 cpu_ns_per_pkt=100 cpu_ns_per_pkt=200",
	};
	struct state_entry e;
	char longline[STATE_MAX_LINE + 10];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (state_parse_line(bad[i], &e) != -EINVAL) {
			print_error("accepted: '%s'\n", bad[i]);
			fail();
		}
	}
	memset(longline, ' ', sizeof(longline));
	memcpy(longline, "port=9000 cpu_ns_per_pkt=100", 28);
	longline[sizeof(longline) - 1] = '\0';
	assert_int_equal(state_parse_line(longline, &e), -EINVAL);
	assert_int_equal(state_parse_line("port=9000 cpu_ns_per_pkt=100", &e), 0);
}

/* A CPU share far below 1e-6 must survive format -> parse (it printed as 0). */
static void test_tiny_share_round_trip(void **state)
{
	struct state_entry e, back;
	char line[STATE_MAX_LINE + 1];

	(void)state;
	assert_int_equal(state_parse_line("port=9000 cpu_ns_per_pkt=761 cpus=1:0.7,0:2.5e-38", &e), 0);
	assert_true(state_format_line(&e, line, sizeof(line)) > 0);
	assert_int_equal(state_parse_line(line, &back), 0);
	assert_int_equal(back.learn.ncpus, 2);
	assert_true(back.learn.cpu_share[1] > 0);
	assert_true(fabs(back.learn.cpu_share[1] - 2.5e-38) <= 1e-8 * 2.5e-38);
}

/*
 * A fresh directory for one test: @dir, the state directory @sub in it
 * (not created), the state file @path and its temporary @tmp there; @s is
 * a zeroed state for the test to open there. The cmocka fixture of the
 * tests below, so that a failed test leaves no directory behind either.
 */
struct sandbox {
	char dir[64], sub[96], path[160], tmp[160];
	struct state *s;
};

static int sandbox_setup(void **state)
{
	struct sandbox *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	b->s = calloc(1, sizeof(*b->s));
	assert_non_null(b->s);
	snprintf(b->dir, sizeof(b->dir), "/tmp/test_state.XXXXXX");
	assert_non_null(mkdtemp(b->dir));
	snprintf(b->sub, sizeof(b->sub), "%s/sub", b->dir);
	snprintf(b->path, sizeof(b->path), "%s/" STATE_FILE, b->sub);
	snprintf(b->tmp, sizeof(b->tmp), "%s/" STATE_FILE ".tmp", b->sub);
	*state = b;
	return 0;
}

static int sandbox_teardown(void **state)
{
	struct sandbox *b = *state;

	unlink(b->path);
	rmdir(b->sub);
	rmdir(b->dir);
	free(b->s);
	free(b);
	return 0;
}

#define SANDBOX_TEST(t) cmocka_unit_test_setup_teardown(t, sandbox_setup, sandbox_teardown)

static void test_save_and_load(void **state)
{
	struct sandbox *b = *state;
	struct state *s = b->s;
	struct learn l, got;
	struct stat st;

	assert_int_equal(state_open(s, b->sub), 0);	/* creates it */
	assert_int_equal(stat(b->sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_false(state_history_get(s, 9000, &got));
	learned(&l, 1500);
	state_history_put(s, 9000, &l);
	learned(&l, 800);
	state_history_put(s, 9001, &l);
	learn_init(&l);
	state_history_put(s, 9002, &l);		/* nothing learned: not kept */
	assert_int_equal(state_save(s), 0);
	state_close(s);

	assert_int_equal(state_open(s, b->sub), 0);
	assert_int_equal(s->n, 2);
	assert_true(state_history_get(s, 9001, &got));
	assert_int_equal(got.origin, VALUE_HISTORY);
	check_rel_strict(ewma_ratio_value(&got.cpu_ns_per_pkt), 800, 1e-8);
	assert_true(got.history_age_s < 60);
	assert_false(state_history_get(s, 9002, &got));
	state_close(s);
	assert_int_equal(access(b->tmp, F_OK), -1);	/* no temporary left */
}

/* A damaged file: the good lines count, the rest is skipped. */
static void test_damaged_file(void **state)
{
	struct sandbox *b = *state;
	struct state *s = b->s;
	struct learn got;
	FILE *f;

	assert_int_equal(mkdir(b->sub, 0700), 0);
	f = fopen(b->path, "w");
	assert_non_null(f);
	fputs("# comment\n\ngarbage\x01\xff\nport=9000 cpu_ns_per_pkt=1200\n"
	      "port=9001 cpu_ns_per_pkt=oops\n", f);
	fclose(f);
	assert_int_equal(state_open(s, b->sub), 0);
	assert_int_equal(s->n, 1);
	assert_true(state_history_get(s, 9000, &got));
	check_rel_strict(ewma_ratio_value(&got.cpu_ns_per_pkt), 1200, 1e-8);
	state_close(s);
	/* Too large: ignored as a whole, the daemon runs on. */
	f = fopen(b->path, "w");
	assert_non_null(f);
	for (int i = 0; i < STATE_MAX_FILE / 10 + 1; i++)
		fputs("#........\n", f);
	fclose(f);
	assert_int_equal(state_open(s, b->sub), 0);
	assert_int_equal(s->n, 0);
	assert_non_null(strstr(s->err, "too large"));
	state_close(s);
}

/* At most STATE_MAX_PORTS ports; the oldest gives way. */
static void test_bound(void **state)
{
	struct sandbox *b = *state;
	struct state *s = b->s;
	struct learn l;

	assert_int_equal(state_open(s, b->sub), 0);
	learned(&l, 1000);
	for (int i = 0; i < STATE_MAX_PORTS + 6; i++)
		state_history_put(s, (uint16_t)(1000 + i), &l);
	assert_int_equal(s->n, STATE_MAX_PORTS);
	assert_int_equal(state_save(s), 0);
	state_close(s);
	assert_int_equal(state_open(s, b->sub), 0);
	assert_int_equal(s->n, STATE_MAX_PORTS);
	state_close(s);
}

/* An unusable directory: an error with the reason, nothing saved. */
static void test_unusable_dir(void **state)
{
	struct sandbox *b = *state;
	struct state *s = b->s;
	char file[96], sub[128];
	int fd;

	snprintf(file, sizeof(file), "%s/file", b->dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(sub, sizeof(sub), "%s/state", file);
	assert_int_equal(state_open(s, sub), -ENOTDIR);
	assert_non_null(strstr(s->err, "creating the state directory"));
	assert_int_equal(state_save(s), 0);	/* nothing to do */
	state_close(s);
	unlink(file);
}

/*
 * A FIFO (or a link) where flows.state should be: reported and ignored at
 * once - opening a FIFO for reading would wait for a writer - and replaced
 * by the next save; a FIFO as the temporary does not stop the save.
 */
static void test_not_a_file(void **state)
{
	struct sandbox *b = *state;
	struct state *s = b->s;
	struct learn l, got;
	struct stat st;

	assert_int_equal(mkdir(b->sub, 0700), 0);
	assert_int_equal(mkfifo(b->path, 0600), 0);
	assert_int_equal(mkfifo(b->tmp, 0600), 0);
	alarm(10);	/* a hang fails the test instead of stopping it */
	assert_int_equal(state_open(s, b->sub), 0);
	assert_int_equal(s->n, 0);
	assert_non_null(strstr(s->err, "is a FIFO, not a regular file"));
	learned(&l, 900);
	state_history_put(s, 9000, &l);
	assert_int_equal(state_save(s), 0);
	alarm(0);
	assert_string_equal(s->err, "");
	assert_int_equal(lstat(b->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(access(b->tmp, F_OK), -1);
	state_close(s);
	/* A symbolic link is not followed. */
	assert_int_equal(unlink(b->path), 0);
	assert_int_equal(symlink("/etc/passwd", b->path), 0);
	assert_int_equal(state_open(s, b->sub), 0);
	assert_int_equal(s->n, 0);
	assert_non_null(strstr(s->err, "symbolic link"));
	assert_false(state_history_get(s, 9000, &got));
	state_close(s);
}

/* Fails the next state_save() of @s with EFBIG (the file-size limit). */
static void save_refused(struct state *s)
{
	struct rlimit was, tiny = { 16, 16 };

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
	tiny.rlim_max = was.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &tiny), 0);
	assert_int_equal(state_save(s), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
}

/*
 * A save that fails (here the file-size limit; a full disk in the field)
 * keeps the state dirty and says why until a save succeeds.
 */
static void test_save_fails_then_recovers(void **state)
{
	struct sandbox *b = *state;
	struct state *s = b->s;
	struct learn l, got;

	assert_int_equal(state_open(s, b->sub), 0);
	learned(&l, 1100);
	state_history_put(s, 9000, &l);
	save_refused(s);
	assert_non_null(strstr(s->err, "writing"));
	assert_non_null(strstr(s->err, "File too large"));
	assert_int_equal(s->save_failures, 1);
	assert_true(s->dirty);
	assert_int_equal(state_save(s), 0);
	assert_string_equal(s->err, "");
	assert_int_equal(s->saves, 1);
	state_close(s);
	assert_int_equal(state_open(s, b->sub), 0);
	assert_true(state_history_get(s, 9000, &got));
	state_close(s);
}

/*
 * The daemon's health: a failed save is a reason of its own (state_save,
 * beside a usable state directory) until a save succeeds.
 */
static void test_save_failure_degrades_health(void **state)
{
	struct sandbox *b = *state;	/* the daemon's own state, not b->s */
	struct daemon *d = calloc(1, sizeof(*d));
	const uint32_t bit = 1u << STATUS_HEALTH_STATE_SAVE;
	struct learn l;

	assert_non_null(d);
	assert_int_equal(state_open(&d->state, b->sub), 0);
	d->state_ok = true;
	assert_false(status_health(d) & bit);
	learned(&l, 1100);
	state_history_put(&d->state, 9000, &l);
	save_refused(&d->state);
	assert_true(status_health(d) & bit);
	assert_false(status_health(d) & (1u << STATUS_HEALTH_STATE_DIR));
	assert_string_equal(status_health_name(STATUS_HEALTH_STATE_SAVE), "state_save");
	assert_int_equal(state_save(&d->state), 0);
	assert_false(status_health(d) & bit);
	state_close(&d->state);
	free(d);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_line_round_trip),
	cmocka_unit_test(test_parse_rejects),
	cmocka_unit_test(test_tiny_share_round_trip),
	SANDBOX_TEST(test_save_and_load),
	SANDBOX_TEST(test_damaged_file),
	SANDBOX_TEST(test_bound),
	SANDBOX_TEST(test_unusable_dir),
	SANDBOX_TEST(test_not_a_file),
	SANDBOX_TEST(test_save_fails_then_recovers),
	SANDBOX_TEST(test_save_failure_degrades_health),
)
