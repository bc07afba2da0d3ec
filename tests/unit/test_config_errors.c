// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/config's refusals: every type's bad values (the
 * message names the key and the line), syntax errors, unknown and
 * duplicate names, a NUL byte, overlong lines and files; a refused file
 * leaves the output untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/config.h"
#include "tests/unit/config_fixture.h"
#include "tests/unit/unit_main.h"

struct bad_case {
	const char *text;
	int line;		/* expected in "test.conf:LINE:" */
	const char *want[3];	/* substrings of the message */
};

static void check_bad(const struct bad_case *bc)
{
	struct rxb_config c, before;
	char err[512], prefix[32];
	int ret;

	config_defaults(&c);
	c.measure.interval_ms = 4242;	/* a marker: *out must stay untouched */
	before = c;
	ret = parse(bc->text, &c, err, sizeof(err));
	if (ret == 0)
		fail_msg("accepted: %s", bc->text);
	assert_true(ret < 0);
	assert_memory_equal(&c, &before, sizeof(c));
	snprintf(prefix, sizeof(prefix), "test.conf:%d: ", bc->line);
	if (bc->line == 0)
		snprintf(prefix, sizeof(prefix), "test.conf: ");
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("want prefix '%s' in: %s\n  for: %s", prefix, err, bc->text);
	for (int i = 0; i < 3 && bc->want[i]; i++)
		if (!strstr(err, bc->want[i]))
			fail_msg("want '%s' in: %s\n  for: %s", bc->want[i], err, bc->text);
}

static void test_bad_values_every_type(void **state)
{
	static const struct bad_case cases[] = {
		/* CONFIG_UINT */
		{ "[measure]\ninterval_ms = 5\n", 2,
		  { "[measure] interval_ms: '5' is out of range", "(expected a whole number 10..60000)" } },
		{ "[measure]\n\ninterval_ms = 60001\n", 3, { "[measure] interval_ms:", "out of range" } },
		{ "[measure]\ninterval_ms = 1e3\n", 2, { "interval_ms: '1e3' is not valid" } },
		{ "[measure]\ninterval_ms = -100\n", 2, { "interval_ms: '-100' is not valid" } },
		{ "[measure]\ninterval_ms = 0100\n", 2, { "interval_ms: '0100' is not valid" } },
		{ "[measure]\ninterval_ms = 0x100\n", 2, { "interval_ms: '0x100' is not valid" } },
		{ "[measure]\ninterval_ms =\n", 2, { "interval_ms: empty value" } },
		{ "[measure]\ninterval_ms = 99999999999999999999999\n", 2, { "out of range" } },
		{ "[control]\nport = 0\n", 2, { "[control] port: '0' is out of range", "1..65535" } },
		{ "[control]\nport = 65536\n", 2, { "[control] port:", "out of range" } },
		/* CONFIG_DOUBLE */
		{ "[control]\nrate_change_fraction = 1.5\n", 2,
		  { "[control] rate_change_fraction: '1.5' is out of range", "a number 0..1" } },
		{ "[control]\nrate_change_fraction = nan\n", 2, { "rate_change_fraction: 'nan' is not valid" } },
		{ "[model]\ndefault_one_way_delay_ms = -1\n", 2, { "default_one_way_delay_ms:", "out of range" } },
		{ "[model]\ndefault_one_way_delay_ms = 1ms\n", 2, { "'1ms' is not valid" } },
		/* CONFIG_SI */
		{ "[model]\nline_rate_bps = 10Q\n", 2, { "[model] line_rate_bps: '10Q' is not valid", "suffixes" } },
		{ "[model]\nline_rate_bps = 100T\n", 2, { "line_rate_bps: '100T' is out of range", "1k..10T" } },
		{ "[model]\ndefault_file_bytes = 0.5\n", 2, { "default_file_bytes: '0.5' is", "whole number" } },
		{ "[model]\nmin_rate_bps = 1.0000005k\n", 2, { "not a whole number" } },
		/* CONFIG_BOOL */
		{ "[pause]\nenabled = maybe\n", 2, { "[pause] enabled: 'maybe' is not valid", "(expected yes or no)" } },
		/* CONFIG_PATH */
		{ "[daemon]\nstate_dir = var/lib/x\n", 2, { "[daemon] state_dir: 'var/lib/x' is not an absolute path" } },
		{ "[daemon]\nstate_dir = /var/../etc\n", 2, { "state_dir: '.' and '..' are not allowed" } },
		{ "[daemon]\nruntime_dir = /run/./x\n", 2, { "runtime_dir: '.' and '..'" } },
		{ "[daemon]\nctl_socket = /run/rxbneckd/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock\n",
		  2, { "[daemon] ctl_socket: path is", "shorter than 108 bytes" } },
		{ "[daemon]\nstate_dir =\n", 2, { "state_dir: '' is not an absolute path" } },
		{ "[daemon]\nstate_dir = \"/srv/x \"\n", 2, { "state_dir: tab or trailing blank in path" } },
		/* CONFIG_ENUM */
		{ "[measure]\nattach = kprobe\n", 2,
		  { "[measure] attach: 'kprobe' is not valid", "one of: auto, tp_btf, raw_tp, none" } },
		{ "[model]\nbatch_rule = loose\n", 2, { "[model] batch_rule:", "one of: partial, strict" } },
		{ "[model]\ncapacity = drained\n", 2,
		  { "[model] capacity: 'drained' is not valid", "one of: cost, drain" } },
		{ "[model]\ncapacity = cost drain\n", 2, { "[model] capacity: 'cost drain' is not valid" } },
		{ "[model]\ncapacity =\n", 2, { "[model] capacity:" } },
		/* CONFIG_PORT_LIST */
		{ "[measure]\nwatch_ports = 80 http\n", 2, { "[measure] watch_ports: 'http' is not a port 1..65535" } },
		{ "[measure]\nwatch_ports = 80 0\n", 2, { "'0' is not a port" } },
		{ "[measure]\nwatch_ports = 80,80\n", 2, { "port 80 is listed twice" } },
		{ "[measure]\nwatch_ports = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", 2,
		  { "watch_ports: more than 16 ports" } },
		/* CONFIG_CIDR_LIST */
		{ "[control]\nallow = 10.1.2.3/8\n", 2,
		  { "[control] allow: '10.1.2.3/8' has host bits set (the network is 10.0.0.0/8)",
		    "(expected up to 64 networks" } },
		{ "[control]\nallow = 2001:db8::1/32\n", 2, { "has host bits set (the network is 2001:db8::/32)" } },
		{ "[control]\nallow = ::ffff:10.1.0.0/104\n", 2, { "has host bits set (the network is ::ffff:10.0.0.0/104)" } },
		{ "[control]\nallow = 10.0.0.0/0x8\n", 2, { "bad prefix length" } },
		{ "[control]\nallow = 10.0.0.0/33\n", 2, { "'10.0.0.0/33': bad prefix length (0..32)" } },
		{ "[control]\nallow = ::/129\n", 2, { "bad prefix length (0..128)" } },
		{ "[control]\nallow = 10.0.0.0/08\n", 2, { "bad prefix length" } },
		{ "[control]\nallow = 10.0.0.0/\n", 2, { "bad prefix length" } },
		{ "[control]\nallow = 10.0.0/8\n", 2, { "'10.0.0/8' is not an IPv4 or IPv6 network" } },
		{ "[control]\nallow = localhost\n", 2, { "'localhost' is not an IPv4 or IPv6 network" } },
		{ "[control]\nallow = fe80::1%eth0/128\n", 2, { "is not an IPv4 or IPv6 network" } },
		{ "[control]\nallow = 10.0.0.0/8 10.0.0.0/8\n", 2, { "'10.0.0.0/8' is listed twice" } },
		/* CONFIG_IFNAME_LIST */
		{ "[measure]\ndevices = eth0 averyveryverylongname\n", 2,
		  { "[measure] devices: 'averyveryverylo...' is not a device name" } },
		{ "[measure]\ndevices = eth/0\n", 2, { "'eth/0' is not a device name" } },
		{ "[measure]\ndevices = ..\n", 2, { "'..' is not a device name" } },
		{ "[measure]\ndevices = eth0 eth0\n", 2, { "device eth0 is listed twice" } },
		/* CONFIG_ADDRESS */
		/* CONFIG_ADDRESS_LIST */
		{ "[control]\nlisten_address = 127.0.0.1/8\n", 2,
		  { "[control] listen_address: '127.0.0.1/8' is not an IPv4 or IPv6 address",
		    "(expected 1 to 8 IPv4 or IPv6 addresses)" } },
		{ "[control]\nlisten_address = ::1 256.1.1.1\n", 2, { "'256.1.1.1' is not an IPv4 or IPv6" } },
		{ "[control]\nlisten_address =\n", 2, { "listen_address: at least one address is needed" } },
		{ "[control]\nlisten_address = ::1 ::0:1\n", 2, { "'::0:1' is listed twice" } },
		/* CONFIG_MODE */
		{ "[daemon]\nctl_socket_mode = 0668\n", 2,
		  { "[daemon] ctl_socket_mode: '0668' is not valid", "octal permission bits" } },
		{ "[daemon]\nctl_socket_mode = 4755\n", 2, { "ctl_socket_mode: '4755' is out of range" } },
		{ "[daemon]\nctl_socket_mode = 66\n", 2, { "ctl_socket_mode: '66' is not valid" } },
		/* CONFIG_GROUP */
		{ "[daemon]\nctl_group = rxbt-no-such-group\n", 2,
		  { "[daemon] ctl_group: no group named 'rxbt-no-such-group'" } },
		{ "[daemon]\nctl_group = -rf\n", 2, { "ctl_group: '-rf' is not a group name" } },
		/* CONFIG_HOSTPORT */
		{ "[metrics]\nlisten = 127.0.0.1\n", 2,
		  { "[metrics] listen: '127.0.0.1' is not ADDRESS:PORT", "like 127.0.0.1:7441" } },
		{ "[metrics]\nlisten = ::1:7441\n", 2, { "'::1' is not an IPv4 address or an IPv6 address in [ ]" } },
		{ "[metrics]\nlisten = [127.0.0.1]:7441\n", 2, { "is not an IPv4 address or an IPv6" } },
		{ "[metrics]\nlisten = localhost:7441\n", 2, { "'localhost' is not an IPv4 address" } },
		{ "[metrics]\nlisten = 127.0.0.1:0\n", 2, { "port '0' is not 1..65535" } },
		{ "[metrics]\nlisten = 127.0.0.1:65536\n", 2, { "port '65536' is not 1..65535" } },
		{ "[metrics]\nlisten = [::1:7441\n", 2, { "'[::1:7441' is not ADDRESS:PORT" } },
		{ "[metrics]\nlisten = 127.0.0.1:\n", 2, { "port '' is not 1..65535" } },
		{ "[metrics]\nmax_connections = 2\n", 2,
		  { "[metrics] max_connections_per_address (4) must not be above [metrics] max_connections (2)" } },
		/* CONFIG_LOG_LEVEL */
		{ "[daemon]\nlog_level = verbose\n", 2,
		  { "[daemon] log_level: 'verbose' is not valid", "err, warning, notice, info, debug" } },
		/* CONFIG_UID_LIST */
		{ "[buffer]\nallow_users = rxbt-no-such-user\n", 2,
		  { "[buffer] allow_users: 'rxbt-no-such-user' is neither a uid nor a user's name",
		    "(expected up to 16 distinct uids or user names)" } },
		{ "[buffer]\nallow_users = 0 root\n", 2, { "uid root is listed twice" } },
		{ "[buffer]\nallow_users = 4294967295\n", 2, { "'4294967295' is neither a uid" } },
		/* CONFIG_PATH_LIST */
		{ "[buffer]\nallow_exes = bin/x\n", 2,
		  { "[buffer] allow_exes: 'bin/x' is not an absolute path" } },
		{ "[buffer]\nallow_exes = /a/../b\n", 2, { "'.' and '..' are not allowed" } },
		{ "[buffer]\nallow_exes = /a /a\n", 2, { "'/a' is listed twice" } },
		/* rules between keys */
		{ "[buffer]\nceiling_bytes = 1Mi\nfloor_bytes = 2Mi\n", 2,
		  { "[buffer] floor_bytes (2Mi) must not be above [buffer] ceiling_bytes (1Mi)" } },
		{ "[model]\nmin_rate_bps = 20G\n", 2,
		  { "[model] min_rate_bps (20G) must not be above [model] line_rate_bps (10G)" } },
		{ "[model]\nline_rate_bps = 1M\n", 2, { "min_rate_bps (10M) must not be above", "line_rate_bps (1M)" } },
		{ "[pause]\nmax_window_ms = 1\nmin_window_us = 1001\n", 2,
		  { "[pause] min_window_us (1001) must not be longer than [pause] max_window_ms (1)" } },
		{ "[control]\nhello_timeout_s = 61\n", 2, { "hello_timeout_s (61) must not be longer than" } },
		{ "[control]\nmax_frame_bytes = 511\n", 2, { "max_frame_bytes: '511' is out of range", "512..65536" } },
		{ "[control]\noutput_queue_bytes = 1000\n", 2, { "output_queue_bytes: '1000' is out of range", "1Ki..64Mi" } },
		/* a long value is shortened in the message */
		{ "[measure]\nattach = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 2,
		  { "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is not valid" } },
	};

	(void)state;
	for (size_t i = 0; i < RXB_ARRAY_SIZE(cases); i++)
		check_bad(&cases[i]);
}

static void test_bad_structure(void **state)
{
	static const struct bad_case cases[] = {
		{ "[measure]\n[nosuch]\ninterval_ms = 100\n", 2,
		  { "unknown section [nosuch]",
		    "(known: [daemon], [measure], [model], [control], [pause], [metrics], [streams], "
		    "[buffer])" } },
		{ "[measure]\nintervall_ms = 100\n", 2,
		  { "[measure] intervall_ms: unknown key (did you mean interval_ms?)" } },
		{ "[measure]\nfoo = 1\n", 2, { "[measure] foo: unknown key" } },
		{ "[daemon]\nlog_level = info\n\n# again\nLOG_LEVEL = debug\n", 5,
		  { "[daemon] log_level: given twice (first on line 2)" } },
		{ "[pause]\nenabled = yes\n[measure]\n[pause]\n", 4,
		  { "section [pause] given twice (first on line 1)" } },
		{ "interval_ms = 100\n[measure]\n", 1, { "interval_ms: key outside any section" } },
		{ "[measure]\ninterval_ms 100\n", 2, { "syntax error: expected \"key = value\"" } },
		{ "[measure]\n= 100\n", 2, { "syntax error in key: empty name" } },
		{ "[measure]\ninterval ms = 100\n", 2, { "syntax error in key" } },
		{ "[measure\n", 1, { "syntax error: a section header is \"[name]\"" } },
		{ "[measure] ; comment\n", 1, { "syntax error: a section header" } },
		{ "[]\n", 1, { "syntax error in section header: empty name" } },
		{ "[a:b]\n", 1, { "syntax error in section header" } },
		{ "[daemon]\nstate_dir = \"/var/lib\n", 2,
		  { "[daemon] state_dir: syntax error: unterminated quoted value" } },
		{ "[daemon]\nstate_dir = \"/var/lib\" x\n", 2, { "syntax error: text after the closing quote" } },
		{ "[daemon]\nstate_dir = /var/\"lib\"\n", 2, { "syntax error: quote inside an unquoted value" } },
		{ "[daemon]\n# a comment \\\nlog_level = debug\n", 2, { "'\\' at the end of a line" } },
		{ "[daemon]\nstate_dir = /var/lib\\\n", 2, { "'\\' at the end of a line" } },
		{ "[daemon]\nlog_level = in\tfo\x01\n", 2, { "syntax error: control character 0x01" } },
		{ "[daemon]\nstate_dir = /srv/caf\xc3\xa9\n", 2, { "non-ASCII byte outside a comment" } },
		{ "[daemon]\nstate_dir = '/srv/caf\xc3\xa9' # \xc3\xa9\n", 2, { "non-ASCII byte" } },
	};

	(void)state;
	for (size_t i = 0; i < RXB_ARRAY_SIZE(cases); i++)
		check_bad(&cases[i]);
}

static void test_nul_byte_and_limits(void **state)
{
	static const char with_nul[] = "[daemon]\nlog_level = info\0debug\n";
	struct rxb_config c;
	char err[256], *big;
	size_t len;

	(void)state;
	assert_int_equal(config_parse(with_nul, sizeof(with_nul) - 1, "test.conf", &c, err,
				      sizeof(err)), -EINVAL);
	assert_string_equal(err, "test.conf:2: syntax error: NUL byte");

	/* Overlong line: line 3 has CONFIG_MAX_LINE + 1 bytes. */
	big = malloc(CONFIG_MAX_FILE + 2);
	assert_non_null(big);
	len = (size_t)sprintf(big, "[daemon]\n# fine\n");
	memset(big + len, '#', CONFIG_MAX_LINE + 1);
	len += CONFIG_MAX_LINE + 1;
	big[len++] = '\n';
	assert_int_equal(config_parse(big, len, "test.conf", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "test.conf:3: line too long (more than 1000 bytes)");
	/* Exactly the limit is fine. */
	len = (size_t)sprintf(big, "[daemon]\n# fine\n");
	memset(big + len, '#', CONFIG_MAX_LINE);
	len += CONFIG_MAX_LINE;
	assert_int_equal(config_parse(big, len, "test.conf", &c, err, sizeof(err)), 0);

	/* Too large a file, even of comments. */
	memset(big, '\n', CONFIG_MAX_FILE + 1);
	assert_int_equal(config_parse(big, CONFIG_MAX_FILE + 1, "test.conf", &c, err,
				      sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "test.conf: file too large"));
	free(big);

	/* A tiny error buffer truncates, never overflows; NULL is allowed. */
	assert_int_equal(parse("[x]\n", &c, err, 8), -EINVAL);
	assert_int_equal(strlen(err), 7);
	assert_int_equal(parse("[x]\n", &c, NULL, 0), -EINVAL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_bad_values_every_type),
	cmocka_unit_test(test_bad_structure),
	cmocka_unit_test(test_nul_byte_and_limits),
)
