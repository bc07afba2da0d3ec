// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for common/: text buffer, JSON writer, strict parsing and the small helpers. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/json.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/unit/json_check.h"
#include "tests/unit/unit_main.h"

static void test_json_nesting_and_escaping(void **state)
{
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_str(&w, "name", "a\"b\\c\n\x01");
	json_arr_begin(&w, "xs");
	json_int(&w, NULL, -3);
	json_uint(&w, NULL, 18446744073709551615ULL);
	json_double(&w, NULL, 0.5);
	json_double(&w, NULL, NAN);
	json_arr_end(&w);
	json_obj_begin(&w, "empty");
	json_obj_end(&w);
	json_bool(&w, "t", true);
	json_null(&w, "n");
	/* A value or null. */
	json_int_opt(&w, "i", true, -7);
	json_int_opt(&w, "i0", false, -7);
	json_uint_opt(&w, "u", true, 42);
	json_uint_opt(&w, "u0", false, 42);
	json_bool_opt(&w, "b", true, false);
	json_bool_opt(&w, "b0", false, true);
	json_str(&w, "s0", NULL);
	/* An object or null: the caller writes its members only when true. */
	if (json_obj_begin_opt(&w, "o", true)) {
		json_int(&w, "x", 1);
		json_obj_end(&w);
	}
	assert_false(json_obj_begin_opt(&w, "o0", false));
	json_obj_end(&w);
	json_check_text(&w,
		"{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"xs\":[-3,18446744073709551615,0.5,null],"
		"\"empty\":{},\"t\":true,\"n\":null,"
		"\"i\":-7,\"i0\":null,\"u\":42,\"u0\":null,\"b\":false,\"b0\":null,\"s0\":null,"
		"\"o\":{\"x\":1},\"o0\":null}");
}

static void test_json_arrays_of_names(void **state)
{
	static const char *const names[] = { "a", "b", "c" };
	const char *const strs[] = { "x", NULL, "y\"" };
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_str_array(&w, "s", strs, 3);
	json_str_array(&w, "s0", strs, 0);
	/* Bits 3 and 31 are past @n: left out. */
	json_flag_names(&w, "f", 0x8000000du, names, 3);
	json_flag_names(&w, "f0", 0, names, 3);
	json_flag_names(&w, "all", 0x7u, names, 3);
	json_obj_end(&w);
	json_check_text(&w,
		"{\"s\":[\"x\",null,\"y\\\"\"],\"s0\":[],"
		"\"f\":[\"a\",\"c\"],\"f0\":[],\"all\":[\"a\",\"b\",\"c\"]}");
}

static void test_json_sparse(void **state)
{
	/* Zero, negative, NaN and infinite entries are left out. */
	const double v[] = { 0, 2.5, -1, NAN, 4, INFINITY, 0, 0.25 };
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_sparse(&w, "v", v, RXB_ARRAY_SIZE(v));
	json_sparse(&w, "first2", v, 1);
	json_obj_end(&w);
	json_check_text(&w, "{\"v\":{\"1\":2.5,\"4\":4,\"7\":0.25},\"first2\":{}}");
}

static void test_json_double_round_trips(void **state)
{
	const double vals[] = { 1e-300, 3.141592653589793, 9.5e8, 1.0 / 3.0 };
	struct json_writer w;

	(void)state;
	json_init(&w, false);
	for (size_t i = 0; i < RXB_ARRAY_SIZE(vals); i++) {
		json_reset(&w);
		json_double(&w, NULL, vals[i]);
		assert_true(strtod(json_text(&w), NULL) == vals[i]);
	}
	json_finish(&w);
}

static void test_json_unbalanced_fails(void **state)
{
	struct json_writer w;

	(void)state;
	json_init(&w, true);
	json_obj_begin(&w, NULL);
	assert_false(json_ok(&w)); /* still open */
	json_arr_end(&w);
	json_arr_end(&w);          /* one too many */
	assert_false(json_ok(&w));
	json_finish(&w);
}

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(rxb_parse_u64("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(rxb_parse_u64("0x10", 0, 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(rxb_parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64("1x", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64("", 0, 100, &v), -EINVAL);
	assert_int_equal(rxb_parse_u64("101", 0, 100, &v), -ERANGE);
	assert_int_equal(rxb_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 16); /* untouched on failure */
}

static void test_parse_double_and_si(void **state)
{
	double d = 0;

	(void)state;
	assert_int_equal(rxb_parse_double("4.6", 0, 1e9, &d), 0);
	assert_true(d == 4.6);
	assert_int_equal(rxb_parse_double("nan", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("inf", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("0x1p3", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("1e400", 0, 1e9, &d), -ERANGE);
	assert_int_equal(rxb_parse_double("-1", 0, 1e9, &d), -ERANGE);
	/* The whole string a number: no suffix, no trailing blank. */
	assert_int_equal(rxb_parse_double("4.6k", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_double("4.6 ", 0, 1e9, &d), -EINVAL);
	assert_int_equal(rxb_parse_si("950M", 0, 1e12, &d), 0);
	assert_true(d == 950e6);
	assert_int_equal(rxb_parse_si("1.5G", 0, 1e12, &d), 0);
	assert_true(d == 1.5e9);
	assert_int_equal(rxb_parse_si("64Ki", 0, 1e12, &d), 0);
	assert_true(d == 65536.0);
	assert_int_equal(rxb_parse_si("1e9", 0, 1e12, &d), 0);
	assert_true(d == 1e9);
	assert_int_equal(rxb_parse_si("5X", 0, 1e12, &d), -EINVAL);
	assert_int_equal(rxb_parse_si("2T", 0, 1e12, &d), -ERANGE);
}

static void test_parse_bool_and_strlcpy(void **state)
{
	char buf[4];
	bool b = false;

	(void)state;
	assert_int_equal(rxb_parse_bool("Yes", &b), 0);
	assert_true(b);
	assert_int_equal(rxb_parse_bool("off", &b), 0);
	assert_false(b);
	assert_int_equal(rxb_parse_bool("maybe", &b), -EINVAL);
	assert_int_equal(rxb_strlcpy(buf, "abcdef", sizeof(buf)), 6);
	assert_string_equal(buf, "abc");
}

/* @ip (IPv4 or IPv6 literal) and @port as a socket address. */
static void sa(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return;
	}
	assert_int_equal(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
}

static void test_sockaddr_str(void **state)
{
	struct sockaddr_storage ss;
	char buf[64];

	(void)state;
	sa(&ss, "192.0.2.7", 40000);
	assert_int_equal(rxb_sockaddr_str(&ss, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "192.0.2.7:40000");
	sa(&ss, "2001:db8::1", 7440);
	rxb_sockaddr_str(&ss, buf, sizeof(buf));
	assert_string_equal(buf, "[2001:db8::1]:7440");
	/* A dual-stack socket's IPv4 peer reads as IPv4. */
	sa(&ss, "::ffff:198.51.100.9", 1);
	rxb_sockaddr_str(&ss, buf, sizeof(buf));
	assert_string_equal(buf, "198.51.100.9:1");
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	rxb_sockaddr_str(&ss, buf, sizeof(buf));
	assert_string_equal(buf, "(family 1)");
	/* Truncated, never overflowing; the length is what it needed. */
	sa(&ss, "192.0.2.7", 40000);
	assert_int_equal(rxb_sockaddr_str(&ss, buf, 8), 15);
	assert_string_equal(buf, "192.0.2");
}

static void test_sub0(void **state)
{
	(void)state;
	assert_true(rxb_sub0(10, 3) == 7);
	assert_true(rxb_sub0(3, 3) == 0);
	assert_true(rxb_sub0(3, 10) == 0);	/* a counter that went back: no wrap */
	assert_true(rxb_sub0(UINT64_MAX, 0) == UINT64_MAX);
	assert_true(rxb_sub0(0, UINT64_MAX) == 0);
	assert_true(rxb_sub0(UINT64_MAX, UINT64_MAX - 1) == 1);
}

static void test_wall_s(void **state)
{
	struct timespec before, after;
	uint64_t t;

	(void)state;
	/*
	 * Bracketed by the same clock read directly, not by time(2): that
	 * reads the coarse clock, which lags the fine one by up to a tick
	 * and so can still show the previous second.
	 */
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &before), 0);
	t = rxb_wall_s();
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &after), 0);
	assert_true(t >= (uint64_t)before.tv_sec && t <= (uint64_t)after.tv_sec);
}

struct drain {
	int fd;
	size_t got;
	unsigned char mismatch;	/* 1 when a byte differs from the pattern */
};

/* Read the pipe slowly, checking every byte against i * 7 mod 251. */
static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	unsigned char buf[1000];
	ssize_t n;

	while ((n = read(d->fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != (unsigned char)((d->got + (size_t)i) * 7 % 251))
				d->mismatch = 1;
		d->got += (size_t)n;
		usleep(20);
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * 4 MiB through a 4 KiB pipe to a slow reader, with a 1 ms timer whose
 * handler interrupts the writer (no SA_RESTART): write(2) then returns
 * short counts and EINTR, and every byte must still arrive, in order.
 */
static void test_write_all(void **state)
{
	const size_t len = 4u << 20;
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct drain d = { 0 };
	unsigned char *buf = malloc(len);
	pthread_t th;
	int p[2];

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7 % 251);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	d.fd = p[0];
	assert_int_equal(pthread_create(&th, NULL, drain_pipe, &d), 0);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	assert_int_equal(rxb_write_all(p[1], buf, len), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);
	assert_true(d.got == len);
	assert_int_equal(d.mismatch, 0);

	/* Errors come back as -errno: a pipe nobody reads, a closed fd. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(rxb_write_all(p[1], buf, 10), -EPIPE);
	close(p[1]);
	assert_int_equal(rxb_write_all(p[1], buf, 10), -EBADF);
	assert_int_equal(rxb_write_all(-1, buf, 0), 0);	/* nothing to write */
	free(buf);
}

/* Growth across the first allocation's size keeps every byte. */
static void test_strbuf_grows(void **state)
{
	struct strbuf b;
	size_t len;
	char *text;

	(void)state;
	strbuf_init(&b, 0);
	assert_string_equal(strbuf_text(&b), "");
	for (int i = 0; i < 10000; i++)
		strbuf_addf(&b, "%d,", i % 10);
	assert_int_equal(strbuf_len(&b), 20000);
	for (size_t i = 0; i < 20000; i += 2)
		assert_int_equal(strbuf_text(&b)[i], '0' + (int)(i / 2 % 10));
	text = strbuf_take(&b, &len);
	assert_non_null(text);
	assert_int_equal(len, 20000);
	assert_int_equal(strlen(text), 20000);
	free(text);
	assert_int_equal(strbuf_len(&b), 0);
	strbuf_finish(&b);
}

/* A formatted text longer than the stack buffer goes straight in. */
static void test_strbuf_long_format(void **state)
{
	char want[1000];
	struct strbuf b;

	(void)state;
	memset(want, 'x', sizeof(want) - 1);
	want[sizeof(want) - 1] = '\0';
	strbuf_init(&b, 0);
	strbuf_adds(&b, "<");
	strbuf_addf(&b, "%s>", want);
	assert_int_equal(strbuf_len(&b), 1 + 999 + 1);
	assert_memory_equal(strbuf_text(&b) + 1, want, 999);
	assert_string_equal(strbuf_text(&b) + 1000, ">");
	strbuf_finish(&b);
}

/* Exactly the cap fits; one byte more fails, sticks, and reads as empty. */
static void test_strbuf_cap(void **state)
{
	struct strbuf b;
	size_t len;

	(void)state;
	strbuf_init(&b, 10);
	strbuf_adds(&b, "12345");
	strbuf_addf(&b, "%d", 67890);
	assert_false(b.failed);
	assert_string_equal(strbuf_text(&b), "1234567890");
	strbuf_adds(&b, "a");
	assert_true(b.failed);
	assert_int_equal(b.len, 10);
	assert_string_equal(strbuf_text(&b), "");
	assert_int_equal(strbuf_len(&b), 0);
	strbuf_adds(&b, "");
	assert_true(b.failed);
	assert_null(strbuf_take(&b, &len));
	assert_int_equal(len, 0);
	/* take leaves it usable, with the same cap. */
	strbuf_adds(&b, "0123456789x");
	assert_true(b.failed);
	strbuf_clear(&b);
	assert_false(b.failed);
	strbuf_adds(&b, "ok");
	assert_string_equal(strbuf_text(&b), "ok");
	strbuf_fail(&b);
	assert_string_equal(strbuf_text(&b), "");
	strbuf_finish(&b);
}

/* The binary search against a linear scan, keys at an offset, duplicates. */
static void test_lower_bound_u32(void **state)
{
	struct row { uint64_t pad; uint32_t tid; uint16_t x; } rows[40];

	(void)state;
	for (size_t i = 0; i < 40; i++)
		rows[i] = (struct row){ i, (uint32_t)(i / 3 * 2 + 5), 0 };
	for (size_t n = 0; n <= 40; n++) {
		for (uint32_t key = 0; key < 40; key++) {
			size_t want = 0;

			while (want < n && rows[want].tid < key)
				want++;
			assert_int_equal(rxb_lower_bound_u32(rows, n, sizeof(rows[0]),
							     offsetof(struct row, tid), key),
					 want);
		}
	}
}

/* rxb_grow: the array only moves when full, doubling from 16; keeps its
 * contents; refuses past UINT32_MAX elements without touching anything. */
static void test_grow(void **state)
{
	uint32_t *a = NULL, cap = 0, n = 0, *v;

	(void)state;
	for (uint32_t i = 0; i < 100; i++) {
		uint32_t before = cap;

		v = rxb_grow(a, n, &cap, sizeof(*a));
		assert_non_null(v);
		if (n < before) {
			assert_ptr_equal(v, a);
			assert_int_equal(cap, before);
		} else {
			assert_int_equal(cap, before ? 2 * before : 16);
		}
		a = v;
		a[n++] = i * 7;
	}
	assert_int_equal(cap, 128);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(a[i], i * 7);
	cap = UINT32_MAX / 2 + 1;
	assert_null(rxb_grow(a, cap, &cap, sizeof(*a)));
	assert_int_equal(cap, UINT32_MAX / 2 + 1);
	free(a);
}

/* rxb_append: each new element zeroed (also where an old one was), counted
 * and returned in place; the array moves as rxb_grow moves it; full, all
 * stays as it was. */
static void test_append(void **state)
{
	struct { uint32_t id; double x; } *a = NULL, *v;
	uint32_t n = 0, cap = 0, full_n, full_cap;

	(void)state;
	for (uint32_t i = 0; i < 40; i++) {
		v = rxb_append((void **)&a, &n, &cap, sizeof(*a));
		assert_non_null(v);
		assert_int_equal(n, i + 1);
		assert_ptr_equal(v, &a[i]);
		assert_int_equal(v->id, 0);
		assert_true(v->x == 0.0);
		memset(v, 0xa5, sizeof(*v));
		v->id = i;
	}
	assert_int_equal(cap, 64);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(a[i].id, i);
	/* The last one dropped: its slot comes back zeroed. */
	n--;
	v = rxb_append((void **)&a, &n, &cap, sizeof(*a));
	assert_ptr_equal(v, &a[39]);
	assert_int_equal(v->id, 0);
	assert_true(v->x == 0.0);
	full_n = full_cap = UINT32_MAX / 2 + 1;
	v = a;
	assert_null(rxb_append((void **)&a, &full_n, &full_cap, sizeof(*a)));
	assert_ptr_equal(a, v);
	assert_int_equal(full_n, UINT32_MAX / 2 + 1);
	assert_int_equal(full_cap, UINT32_MAX / 2 + 1);
	free(a);
}

/* rxb_store_uint / rxb_load_uint: each width truncates and reads back its
 * own bytes only; a size other than 1, 2 or 4 is 8. */
static void test_store_uint(void **state)
{
	struct {
		uint8_t u8, guard8;
		uint16_t u16, guard16;
		uint32_t u32, guard32;
		uint64_t u64;
	} f = { 0 };

	(void)state;
	rxb_store_uint(&f.u8, 1, 0x1ff);
	rxb_store_uint(&f.u16, 2, 0x1ffff);
	rxb_store_uint(&f.u32, 4, 0x1ffffffffULL);
	rxb_store_uint(&f.u64, 8, UINT64_MAX);
	assert_int_equal(f.u8, 0xff);
	assert_int_equal(f.u16, 0xffff);
	assert_int_equal(f.u32, 0xffffffffu);
	assert_true(f.u64 == UINT64_MAX);
	assert_int_equal(f.guard8, 0);
	assert_int_equal(f.guard16, 0);
	assert_int_equal(f.guard32, 0);
	assert_int_equal(rxb_load_uint(&f.u8, 1), 0xff);
	assert_int_equal(rxb_load_uint(&f.u16, 2), 0xffff);
	assert_int_equal(rxb_load_uint(&f.u32, 4), 0xffffffffu);
	assert_true(rxb_load_uint(&f.u64, 0) == UINT64_MAX);
}

/* rxb_parse_error: "line N: " before the text, none for line 0; -EINVAL. */
static void test_parse_error(void **state)
{
	char err[32];

	(void)state;
	assert_int_equal(rxb_parse_error(err, sizeof(err), 7, "bad %s", "key"), -EINVAL);
	assert_string_equal(err, "line 7: bad key");
	assert_int_equal(rxb_parse_error(err, sizeof(err), 0, "empty"), -EINVAL);
	assert_string_equal(err, "empty");
	assert_int_equal(rxb_parse_error(err, 8, 12, "too long to fit"), -EINVAL);
	assert_true(strlen(err) < 8);
}

/* rxb_name: the table's entry; the fallback past its end, in a gap, below 0. */
static void test_name(void **state)
{
	enum color { RED = 1, GREEN, BLUE };
	static const char *const names[] = { [RED] = "red", [BLUE] = "blue" };

	(void)state;
	assert_string_equal(RXB_NAME(names, RED, "?"), "red");
	assert_string_equal(RXB_NAME(names, BLUE, "?"), "blue");
	assert_string_equal(RXB_NAME(names, GREEN, "?"), "?");
	assert_string_equal(RXB_NAME(names, 0, "none"), "none");
	assert_string_equal(RXB_NAME(names, BLUE + 1, "?"), "?");
	assert_string_equal(RXB_NAME(names, -1, "?"), "?");
	assert_string_equal(rxb_name(names, 2, BLUE, "short"), "short");
}

/* A scripted source: @total bytes (i % 251) in chunks of @chunk, -EINTR before each. */
struct script {
	size_t total, pos, chunk;
	long fail;		/* returned once @pos reaches @total, if nonzero */
	int intr;		/* flips each call: every other call is -EINTR */
};

static long script_read(void *src, void *dst, size_t room)
{
	struct script *sc = src;
	size_t n = sc->total - sc->pos;

	sc->intr = !sc->intr;
	if (sc->intr)
		return -EINTR;
	if (n == 0)
		return sc->fail;
	n = n < sc->chunk ? n : sc->chunk;
	n = n < room ? n : room;
	for (size_t i = 0; i < n; i++)
		((char *)dst)[i] = (char)((sc->pos + i) % 251 + 1);
	sc->pos += n;
	return (long)n;
}

/*
 * rxb_read_grow: every byte across several doublings, EINTR retried, NUL
 * after the end; -EFBIG past @max; the reader's error; nothing left to free.
 */
static void test_read_grow(void **state)
{
	struct script sc = { .total = 10000, .chunk = 1000 };
	char *text = (char *)1;
	size_t len = 1;
	int p[2];

	(void)state;
	assert_int_equal(rxb_read_grow(script_read, &sc, SIZE_MAX, &text, &len), 0);
	assert_int_equal(len, 10000);
	for (size_t i = 0; i < len; i++)
		assert_int_equal((unsigned char)text[i], i % 251 + 1);
	assert_int_equal(text[len], '\0');
	free(text);

	sc = (struct script){ .total = 10000, .chunk = 1000 };
	assert_int_equal(rxb_read_grow(script_read, &sc, 10000, &text, NULL), 0);
	free(text);
	sc = (struct script){ .total = 10001, .chunk = 1000 };
	assert_int_equal(rxb_read_grow(script_read, &sc, 10000, &text, &len), -EFBIG);
	assert_null(text);
	assert_int_equal(len, 0);
	sc = (struct script){ .total = 5000, .chunk = 700, .fail = -EIO };
	assert_int_equal(rxb_read_grow(script_read, &sc, SIZE_MAX, &text, &len), -EIO);
	assert_null(text);

	/* An empty source is an empty string; a pipe; a path that is not there. */
	sc = (struct script){ .chunk = 1 };
	assert_int_equal(rxb_read_grow(script_read, &sc, 0, &text, &len), 0);
	assert_string_equal(text, "");
	assert_int_equal(len, 0);
	free(text);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(write(p[1], "cpu 1 2\n", 8), 8);
	close(p[1]);
	assert_int_equal(rxb_read_fd_grow(p[0], SIZE_MAX, &text, &len), 0);
	close(p[0]);
	assert_string_equal(text, "cpu 1 2\n");
	assert_int_equal(len, 8);
	free(text);
	assert_int_equal(rxb_read_path("/nonexistent/rxb", SIZE_MAX, &text, &len), -ENOENT);
	assert_null(text);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_strbuf_grows),
	cmocka_unit_test(test_strbuf_long_format),
	cmocka_unit_test(test_strbuf_cap),
	cmocka_unit_test(test_json_nesting_and_escaping),
	cmocka_unit_test(test_json_arrays_of_names),
	cmocka_unit_test(test_json_sparse),
	cmocka_unit_test(test_json_double_round_trips),
	cmocka_unit_test(test_json_unbalanced_fails),
	cmocka_unit_test(test_parse_u64),
	cmocka_unit_test(test_parse_double_and_si),
	cmocka_unit_test(test_parse_bool_and_strlcpy),
	cmocka_unit_test(test_sockaddr_str),
	cmocka_unit_test(test_sub0),
	cmocka_unit_test(test_lower_bound_u32),
	cmocka_unit_test(test_wall_s),
	cmocka_unit_test(test_write_all),
	cmocka_unit_test(test_grow),
	cmocka_unit_test(test_append),
	cmocka_unit_test(test_store_uint),
	cmocka_unit_test(test_parse_error),
	cmocka_unit_test(test_name),
	cmocka_unit_test(test_read_grow),
)
