// SPDX-License-Identifier: GPL-2.0-or-later
/* /proc/meminfo, /proc/net/sockstat and sysctl parsing (procmem.h). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "daemon/collect/procmem.h"
#include "tests/unit/unit_main.h"

/* The head of this host's /proc/meminfo (6.18). */
static const char meminfo[] =
	"MemTotal:       24684092 kB\n"
	"MemFree:        20345084 kB\n"
	"MemAvailable:   21831700 kB\n"
	"Buffers:           10548 kB\n"
	"Cached:          1542632 kB\n";

static void test_meminfo(void **state)
{
	struct procmem_meminfo m = { 0 };

	(void)state;
	assert_int_equal(procmem_parse_meminfo(meminfo, &m), 0);
	assert_int_equal(m.total_bytes, 24684092ULL * 1024);
	assert_int_equal(m.available_bytes, 21831700ULL * 1024);
	/* 1 - 21831700 / 24684092 */
	assert_true(fabs(procmem_utilisation(&m) - 0.1155558811) < 1e-9);
	/* MemFree is not MemAvailable; order does not matter */
	assert_int_equal(procmem_parse_meminfo("MemAvailable: 5 kB\nMemTotal: 10 kB\n", &m), 0);
	assert_true(procmem_utilisation(&m) == 0.5);
	assert_int_equal(procmem_parse_meminfo("MemTotal: 10 kB\nMemFree: 5 kB\n", &m),
			 -ENOENT);
	assert_int_equal(procmem_parse_meminfo("MemTotal: 0 kB\nMemAvailable: 0 kB\n", &m),
			 -EINVAL);
	assert_int_equal(procmem_parse_meminfo("MemTotal: x kB\nMemAvailable: 0 kB\n", &m),
			 -EINVAL);
	assert_int_equal(procmem_parse_meminfo("MemTotal: 99999999999999999999 kB\n", &m),
			 -ERANGE);
	assert_int_equal(procmem_parse_meminfo("MemTotalX: 1 kB\nMemAvailable: 1 kB\n", &m),
			 -ENOENT);
	assert_int_equal(procmem_parse_meminfo("", &m), -ENOENT);
	/* a failed parse leaves *m alone */
	assert_true(procmem_utilisation(&m) == 0.5);
	/* more available than total (a racing read): clamped */
	m.available_bytes = 3 * m.total_bytes;
	assert_true(procmem_utilisation(&m) == 0.0);
}

static void test_sockstat(void **state)
{
	static const char s[] =
		"sockets: used 17\n"
		"TCP: inuse 1 orphan 0 tw 1 alloc 4 mem 398\n"
		"UDP: inuse 3 mem 212\n"
		"UDPLITE: inuse 0\n";
	uint64_t in = 0, mem = 0;

	(void)state;
	assert_int_equal(procmem_parse_sockstat_udp(s, &in, &mem), 0);
	assert_int_equal(in, 3);
	assert_int_equal(mem, 212);	/* not TCP's 398 */
	assert_int_equal(procmem_parse_sockstat_udp("UDPLITE: inuse 0\n", &in, &mem),
			 -ENOENT);
	assert_int_equal(procmem_parse_sockstat_udp("UDP: inuse 3\n", &in, &mem), -ENOENT);
	assert_int_equal(procmem_parse_sockstat_udp("UDP: mem 7 inuse 2", &in, &mem), 0);
	assert_int_equal(mem, 7);
	assert_int_equal(in, 2);
}

static void test_sysctl(void **state)
{
	uint64_t v[3] = { 0 };

	(void)state;
	assert_int_equal(procmem_parse_sysctl("575802\t767736\t1151604\n", v, 3), 0);
	assert_int_equal(v[0], 575802);
	assert_int_equal(v[1], 767736);
	assert_int_equal(v[2], 1151604);
	assert_int_equal(procmem_parse_sysctl("4194304\n", v, 1), 0);
	assert_int_equal(v[0], 4194304);
	assert_int_equal(procmem_parse_sysctl("4194304", v, 1), 0);
	assert_int_equal(procmem_parse_sysctl("1 2\n", v, 3), -EINVAL);
	assert_int_equal(procmem_parse_sysctl("1 2 3 4\n", v, 3), -EINVAL);
	assert_int_equal(procmem_parse_sysctl("1\n\n", v, 1), -EINVAL);
	assert_int_equal(procmem_parse_sysctl("-1\n", v, 1), -EINVAL);
	assert_int_equal(procmem_parse_sysctl("99999999999999999999\n", v, 1), -ERANGE);
	assert_int_equal(procmem_parse_sysctl("1", v, 4), -EINVAL);
}

static void test_pressure(void **state)
{
	struct procmem_snap s = {
		.udp_valid = true, .udp_mem_pages = 100,
		.udp_limit_pages = { 50, 100, 200 },
	};

	(void)state;
	assert_true(procmem_udp_pressure(&s));
	s.udp_mem_pages = 99;
	assert_false(procmem_udp_pressure(&s));
	s.udp_mem_pages = 1000;
	s.udp_valid = false;
	assert_false(procmem_udp_pressure(&s));
}

/* This host's files parse. */
static void test_read(void **state)
{
	struct procmem_snap s;

	(void)state;
	assert_int_equal(procmem_read(&s), 0);
	assert_true(s.mem_valid);
	assert_true(s.mem.total_bytes > 0);
	assert_true(s.udp_valid);
	assert_true(s.udp_limit_pages[0] <= s.udp_limit_pages[1]);
	assert_true(s.rmem_max_bytes > 0);
	assert_true(s.page_bytes >= 4096);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_meminfo),
	cmocka_unit_test(test_sockstat),
	cmocka_unit_test(test_sysctl),
	cmocka_unit_test(test_pressure),
	cmocka_unit_test(test_read),
)
