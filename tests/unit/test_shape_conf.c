// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/shape/conf.c: defaults; the INI file (every key,
 * sections, errors that name file, section and key, nothing applied on
 * error); the command line (receiver options bound to the preceding
 * --receiver, globals, --config read before the options, errors naming
 * the option); HOST[:PORT] splitting; the rules across receivers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "tools/shape/conf.h"
#include "tests/unit/unit_main.h"

static int ini(const char *text, struct shape_conf *c, char *err)
{
	return shape_conf_parse_ini(text, strlen(text), "t.conf", c, err, 256);
}

static void test_defaults(void **state)
{
	struct shape_conf c;

	(void)state;
	shape_conf_defaults(&c);
	assert_int_equal(c.nrx, 0);
	assert_string_equal(c.state_dir, "/run/rxbneck-shape");
	assert_int_equal(c.handle, 0x7862);
	assert_int_equal(c.queue_bytes, 16 << 20);
	assert_int_equal(c.hold_ms, 30000);
	assert_int_equal(c.fallback, SHAPE_FALLBACK_UNSHAPED);
	assert_int_equal(c.status_interval_ms, 10000);
	assert_int_equal(c.log_level, RXB_LOG_INFO);
}

static void test_ini_full(void **state)
{
	struct shape_conf c;
	char err[256];

	(void)state;
	shape_conf_defaults(&c);
	assert_int_equal(ini("; comment\n[shape]\nhold_s = 2.5\nfallback = 750M\n"
			     "queue_bytes = 4Mi\nburst_bytes = 200k\nhandle = 0xbeef\n"
			     "state_dir = /tmp/x\nstatus_interval_s = 0\nstats_interval_ms = 50\n"
			     "connect_timeout_ms = 500\nreconnect_max_s = 5\nlog_level = debug\n"
			     "[receiver lab1]\ndaemon = [fd00::2]:7441\nflow_port = 9000\n"
			     "proto = tcp\ndev = eth1\ndata_address = 10.0.0.2, fd00::2\n"
			     "payload_bytes = 1400\nrtt_ms = 0.5\nfile_bytes = 200M\n"
			     "max_rate = 10G\n"
			     "[receiver lab2]\ndaemon = recv2.example.org\nflow_port = 9001\n",
			     &c, err), 0);
	assert_int_equal(c.hold_ms, 2500);
	assert_int_equal(c.fallback, SHAPE_FALLBACK_RATE);
	assert_int_equal(c.fallback_bps, 750000000);
	assert_int_equal(c.queue_bytes, 4 << 20);
	assert_int_equal(c.burst_bytes, 200000);
	assert_int_equal(c.handle, 0xbeef);
	assert_string_equal(c.state_dir, "/tmp/x");
	assert_int_equal(c.status_interval_ms, 0);
	assert_int_equal(c.stats_interval_ms, 50);
	assert_int_equal(c.connect_timeout_ms, 500);
	assert_int_equal(c.reconnect_max_ms, 5000);
	assert_int_equal(c.log_level, RXB_LOG_DEBUG);
	assert_int_equal(c.nrx, 2);
	/* iniparser returns sections in file order. */
	assert_string_equal(c.rx[0].name, "lab1");
	assert_string_equal(c.rx[0].host, "fd00::2");
	assert_int_equal(c.rx[0].port, 7441);
	assert_int_equal(c.rx[0].flow_port, 9000);
	assert_int_equal(c.rx[0].proto, IPPROTO_TCP);
	assert_string_equal(c.rx[0].dev, "eth1");
	assert_int_equal(c.rx[0].naddr, 2);
	assert_string_equal(c.rx[0].addr[1], "fd00::2");
	assert_int_equal(c.rx[0].payload_bytes, 1400);
	assert_int_equal(c.rx[0].rtt_us, 500);
	assert_int_equal(c.rx[0].file_bytes, 200000000);
	assert_int_equal(c.rx[0].max_rate_bps, 10000000000ULL);
	assert_string_equal(c.rx[1].host, "recv2.example.org");
	assert_int_equal(c.rx[1].port, 7440);
	assert_int_equal(c.rx[1].proto, IPPROTO_UDP);
	assert_int_equal(c.rx[1].naddr, 0);
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), 0);
	/* fallback back to unshaped */
	assert_int_equal(ini("[shape]\nfallback = unshaped\n", &c, err), 0);
	assert_int_equal(c.fallback, SHAPE_FALLBACK_UNSHAPED);
}

static void ini_rejects(const char *text, const char *why)
{
	struct shape_conf c, before;
	char err[256];

	shape_conf_defaults(&c);
	before = c;
	assert_true(ini(text, &c, err) < 0);
	if (!strstr(err, why) || strncmp(err, "t.conf: ", 8) != 0 || strchr(err, '\n')) {
		print_error("'%s': got '%s', expected '%s'\n", text, err, why);
		fail();
	}
	assert_memory_equal(&c, &before, sizeof(c));
}

static void test_ini_errors(void **state)
{
	(void)state;
	ini_rejects("[shape]\nhold = 3\n", "[shape] hold: unknown key");
	ini_rejects("[receiver a]\nhold_s = 3\n", "[receiver a] hold_s: unknown key");
	ini_rejects("[shape]\nflow_port = 3\n", "[shape] flow_port: unknown key");
	ini_rejects("[sender x]\nflow_port = 3\n", "[sender x]: unknown section");
	ini_rejects("[receiver]\nflow_port = 3\n", "[receiver]: unknown section");
	ini_rejects("[receiver a/b]\nflow_port = 3\n", "receiver names are");
	ini_rejects("[receiver a]\nflow_port = 0\n",
		    "[receiver a] flow_port = '0': out of range (expected 1..65535)");
	ini_rejects("[receiver a]\nflow_port = 9x\n", "not a valid number");
	ini_rejects("[receiver a]\nproto = sctp\n", "not udp or tcp");
	ini_rejects("[receiver a]\ndata_address = 10.0.0.300\n", "is not an IPv4 or IPv6");
	ini_rejects("[receiver a]\ndaemon = h:0\n", "not HOST, HOST:PORT");
	ini_rejects("[receiver a]\ndev = a/b\n", "not a device name");
	ini_rejects("[shape]\nfallback = fast\n", "not 'unshaped' or a rate");
	ini_rejects("[shape]\nqueue_bytes = 1k\n", "out of range");
	ini_rejects("[shape]\nhandle = ffff\n", "not a handle major");
	ini_rejects("[shape]\nstate_dir = run\n", "not an absolute path");
	ini_rejects("[shape]\nlog_level = loud\n", "not err, warning");
	ini_rejects("[shape]\nhold_s =\n", "empty value");
	ini_rejects("hold_s = 3\n", "a key outside any section");
	ini_rejects("[shape]\nthis is not a key line\n", "syntax error");
	ini_rejects("[receiver a]\nflow_port = 1\n[receiver a]\nproto = udx\n", "not udp or tcp");
}

static void test_ini_limits(void **state)
{
	struct shape_conf c;
	char err[256], *text;
	size_t len = 0;

	(void)state;
	text = malloc(SHAPE_CONF_MAX_FILE + 2);
	assert_non_null(text);
	/* As many receivers as allowed, then one more. */
	for (int i = 0; i <= SHAPE_MAX_RECEIVERS; i++)
		len += (size_t)sprintf(text + len, "[receiver r%d]\nflow_port = %d\n", i, 1000 + i);
	shape_conf_defaults(&c);
	assert_true(shape_conf_parse_ini(text, len, "t.conf", &c, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "more than 64 receivers"));
	assert_int_equal(c.nrx, 0);
	/* A NUL byte, and a file over the size limit. */
	assert_int_equal(shape_conf_parse_ini("[shape]\0", 8, "t.conf", &c, err, sizeof(err)),
			 -EINVAL);
	memset(text, '\n', SHAPE_CONF_MAX_FILE + 1);
	assert_int_equal(shape_conf_parse_ini(text, SHAPE_CONF_MAX_FILE + 1, "t.conf", &c, err,
					      sizeof(err)), -EFBIG);
	free(text);
}

static int args(struct shape_conf *c, struct shape_cli *cli, char *err, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;

	argv[argc++] = (char *)"rxbneck-shape";
	va_start(ap, err);
	for (char *a = va_arg(ap, char *); a; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	return shape_conf_parse_args(argc, argv, c, cli, err, 256);
}

static void test_cli(void **state)
{
	struct shape_conf c;
	struct shape_cli cli;
	char err[256];

	(void)state;
	shape_conf_defaults(&c);
	assert_int_equal(args(&c, &cli, err, "--receiver", "10.1.0.2", "--flow-port", "9000",
			      "--dev", "veth0", "--hold", "5", "--receiver", "[::1]:7000",
			      "--flow-port", "5201", "--proto", "tcp", "--fallback", "1G",
			      "--dry-run", "--json", NULL), 0);
	assert_true(cli.dry_run && cli.json && !cli.cleanup && !cli.help);
	assert_int_equal(c.nrx, 2);
	assert_string_equal(c.rx[0].name, "10.1.0.2/9000");
	assert_string_equal(c.rx[0].dev, "veth0");
	assert_int_equal(c.rx[0].port, 7440);
	assert_string_equal(c.rx[1].name, "::1/5201");
	assert_int_equal(c.rx[1].port, 7000);
	assert_int_equal(c.rx[1].proto, IPPROTO_TCP);
	assert_string_equal(c.rx[1].dev, "");
	assert_int_equal(c.hold_ms, 5000);
	assert_int_equal(c.fallback_bps, 1000000000);
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), 0);

	shape_conf_defaults(&c);
	assert_int_equal(args(&c, &cli, err, "--flow-port", "9000", NULL), -EINVAL);
	assert_non_null(strstr(err, "--flow-port belongs to a receiver"));
	assert_int_equal(c.nrx, 0);
	assert_int_equal(args(&c, &cli, err, "--receiver", "h", "--flow-port", "70000", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "--flow-port '70000': out of range"));
	assert_int_equal(c.nrx, 0);
	assert_int_equal(args(&c, &cli, err, "--bogus", NULL), -EINVAL);
	assert_non_null(strstr(err, "unknown option '--bogus'"));
	assert_int_equal(args(&c, &cli, err, "--receiver", NULL), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(args(&c, &cli, err, "stray", NULL), -EINVAL);
	assert_non_null(strstr(err, "unexpected argument 'stray'"));
	assert_int_equal(args(&c, &cli, err, "--help", NULL), 0);
	assert_true(cli.help);
	assert_int_equal(args(&c, &cli, err, "--cleanup", NULL), 0);
	assert_true(cli.cleanup);
	assert_int_equal(shape_conf_check(&c, true, err, sizeof(err)), 0);
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no receiver"));
}

static void test_cli_with_file(void **state)
{
	char path[] = "/tmp/rxbneck-shape-conf.XXXXXX", err[256];
	struct shape_conf c;
	struct shape_cli cli;
	int fd;
	const char *text = "[shape]\nhold_s = 7\n[receiver f]\ndaemon = 10.2.0.2\n"
			   "flow_port = 9000\n";

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	shape_conf_defaults(&c);
	/* The file is read first, wherever --config is: --hold overrides it. */
	assert_int_equal(args(&c, &cli, err, "--hold", "1", "--receiver", "10.2.0.3",
			      "--flow-port", "9001", "-c", path, NULL), 0);
	assert_string_equal(cli.config_path, path);
	assert_int_equal(c.hold_ms, 1000);
	assert_int_equal(c.nrx, 2);
	assert_string_equal(c.rx[0].name, "f");
	assert_string_equal(c.rx[1].name, "10.2.0.3/9001");
	shape_conf_defaults(&c);
	assert_int_equal(args(&c, &cli, err, "--config", "/nonexistent/x.conf", NULL), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.conf: No such file"));
	unlink(path);
	/* A directory opens but is no configuration file: -EINVAL, whatever
	 * errno was before. */
	shape_conf_defaults(&c);
	errno = EPERM;
	assert_int_equal(shape_conf_load("/tmp", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/tmp: not a regular file");
}

static void test_hostport(void **state)
{
	/* In order: without a port, the port stays what it was. */
	static const struct {
		const char *in, *host;
		uint16_t port;
	} good[] = {
		{ "example.org", "example.org", 1 }, { "10.0.0.1:7441", "10.0.0.1", 7441 },
		{ "fd00::1", "fd00::1", 7441 }, { "[fd00::1]:80", "fd00::1", 80 },
		{ "[fd00::1]", "fd00::1", 80 },
	};
	char h[64];
	uint16_t p = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(shape_conf_split_hostport(good[i].in, h, sizeof(h), &p), 0);
		assert_string_equal(h, good[i].host);
		assert_int_equal(p, good[i].port);
	}
	static const char *const bad[] = { "", ":80", "h:", "h:0", "h:65536", "[]:1", "[::1",
					   "[::1]x", "a b", "h/1", "h:80x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(shape_conf_split_hostport(bad[i], h, sizeof(h), &p), -EINVAL);
	assert_int_equal(shape_conf_split_hostport("abcdef", h, 4, &p), -EINVAL);
}

static void test_check(void **state)
{
	struct shape_conf c;
	char err[256];

	(void)state;
	shape_conf_defaults(&c);
	assert_int_equal(ini("[receiver a]\ndaemon = h\nflow_port = 9000\ndata_address = 10.0.0.1\n"
			     "[receiver b]\ndaemon = h\nflow_port = 9000\n"
			     "data_address = 10.0.0.2 10.0.0.001\n", &c, err), -EINVAL);
	/* "10.0.0.001" is not a literal inet_pton takes. */
	assert_non_null(strstr(err, "10.0.0.001"));
	assert_int_equal(ini("[receiver a]\ndaemon = h\nflow_port = 9000\ndata_address = fd00::1\n"
			     "[receiver b]\ndaemon = h\nflow_port = 9000\n"
			     "data_address = 10.0.0.2 fd00:0::1\n", &c, err), 0);
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "receivers a and b both shape fd00:0::1 port 9000"));
	/* Another protocol or port is another flow. */
	c.rx[1].proto = IPPROTO_TCP;
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), 0);
	/* Required keys. */
	c.rx[1].host[0] = '\0';
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "receiver b: no daemon"));
	shape_conf_defaults(&c);
	assert_int_equal(ini("[receiver a]\ndaemon = h\n", &c, err), 0);
	assert_int_equal(shape_conf_check(&c, false, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "receiver a: no flow port"));
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_defaults),
	cmocka_unit_test(test_ini_full),
	cmocka_unit_test(test_ini_errors),
	cmocka_unit_test(test_ini_limits),
	cmocka_unit_test(test_cli),
	cmocka_unit_test(test_cli_with_file),
	cmocka_unit_test(test_hostport),
	cmocka_unit_test(test_check),
)
