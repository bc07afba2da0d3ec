// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/config: defaults, every type's bad values (message
 * names the key and the line), syntax errors, unknown/duplicate names,
 * files (missing, empty, overlong, permissions), reload semantics, diff,
 * CIDR matching, and the documentation check: every key of the table
 * appears with its default in conf/rxbneckd.conf and docs/config.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/config.h"
#include "daemon/model/capacity.h"
#include "solver/bneck.h"
#include "tests/unit/unit_main.h"

static int parse(const char *text, struct rxb_config *cfg, char *err, size_t errlen)
{
	return config_parse(text, strlen(text), "test.conf", cfg, err, errlen);
}

static const struct config_key *key_by_name(const char *section, const char *key)
{
	size_t n;
	const struct config_key *k = config_keys(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(k[i].section, section) == 0 && strcmp(k[i].key, key) == 0)
			return &k[i];
	fail_msg("no key [%s] %s", section, key);
	return NULL;
}

/* ------------------------------------------------------------ defaults -- */

static void test_defaults(void **state)
{
	struct rxb_config c;
	struct in_addr lo;

	(void)state;
	config_defaults(&c);
	/* The numbers of the schema in the project's issue #4. */
	assert_string_equal(c.daemon.state_dir, "/var/lib/rxbneckd");
	assert_string_equal(c.daemon.runtime_dir, "/run/rxbneckd");
	assert_string_equal(c.daemon.ctl_socket, "/run/rxbneckd/rxbneckd.sock");
	assert_int_equal(c.daemon.ctl_socket_mode, 0660);
	assert_string_equal(c.daemon.ctl_group.name, "");
	assert_int_equal(c.daemon.ctl_group.gid, (gid_t)-1);
	assert_int_equal(c.daemon.log_level, RXB_LOG_INFO);
	assert_int_equal(c.measure.interval_ms, 1000);
	assert_int_equal(c.measure.watch_ports.n, 0);
	assert_int_equal(c.measure.attach, RXB_ATTACH_AUTO);
	assert_true(c.measure.bpf_stats);
	assert_int_equal(c.measure.devices.n, 0);
	assert_int_equal(c.measure.fallback_rx_ring, 256);
	assert_int_equal(c.measure.fallback_rx_max_frames, 1);
	assert_int_equal(c.measure.fallback_rx_usecs, 0);
	assert_int_equal(c.model.payload_bytes, 1468);
	assert_true(c.model.default_file_bytes == 1000000000ULL);
	assert_true(c.model.default_one_way_delay_ms == 0.1);
	assert_true(c.model.line_rate_bps == 10000000000ULL);
	assert_true(c.model.min_rate_bps == 10000000ULL);
	assert_int_equal(c.model.sweep_points, 200);
	assert_int_equal(c.model.batch_rule, RXB_BATCH_PARTIAL);
	assert_int_equal(c.model.rounds, BNECK_ROUNDS_BURST);
	assert_int_equal(c.model.loss_episodes, 1);
	assert_int_equal(c.model.rate_uncertainty, 0);
	assert_int_equal(c.model.capacity, CAPACITY_MODE_COST);
	assert_false(c.model.queue_depth_cost);
	/* docs/PROTOCOL.md §1, §9 (and sendsrv_limits_default()). */
	assert_int_equal(c.control.listen_address.n, 2);
	assert_string_equal(c.control.listen_address.addr[0], "127.0.0.1");
	assert_string_equal(c.control.listen_address.addr[1], "::1");
	assert_int_equal(c.control.port, 7440);
	assert_int_equal(c.control.allow.n, 2);
	assert_int_equal(c.control.allow.cidr[0].family, AF_INET);
	assert_int_equal(c.control.allow.cidr[0].prefix_len, 8);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.0", &lo), 1);
	assert_memory_equal(c.control.allow.cidr[0].addr, &lo, sizeof(lo));
	assert_int_equal(c.control.allow.cidr[1].family, AF_INET6);
	assert_int_equal(c.control.allow.cidr[1].prefix_len, 128);
	assert_true(IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)c.control.allow.cidr[1].addr));
	assert_int_equal(c.control.max_connections, 1024);
	assert_int_equal(c.control.max_frame_bytes, 4096);
	assert_true(c.control.output_queue_bytes == 16384);
	assert_int_equal(c.control.idle_timeout_s, 60);
	assert_int_equal(c.control.hello_timeout_s, 5);
	assert_true(c.control.rate_change_fraction == 0.05);
	assert_int_equal(c.control.push_every_epochs, 10);
	assert_true(c.pause.enabled);
	assert_int_equal(c.pause.min_window_us, 200);
	assert_int_equal(c.pause.max_window_ms, 100);
	assert_true(c.streams.enabled);
	assert_int_equal(c.streams.ports.n, 0);
	assert_int_equal(c.streams.max_peers, 256);
	assert_true(c.streams.min_stream_bps == 100000);
	assert_true(c.streams.tolerance == 0.02);
	assert_int_equal(c.streams.max_age_h, 168);
}

/* Every row is well-formed, and its default is in canonical form. */
static void test_table_consistency(void **state)
{
	const char *const *secs = config_sections();
	size_t n;
	const struct config_key *k = config_keys(&n);
	struct rxb_config c;
	char buf[512];

	(void)state;
	config_defaults(&c);
	assert_true(n >= 30);
	for (size_t i = 0; i < n; i++) {
		bool sec_ok = false;

		for (int s = 0; secs[s]; s++)
			sec_ok |= strcmp(secs[s], k[i].section) == 0;
		assert_true(sec_ok);
		assert_true(strlen(k[i].key) <= CONFIG_MAX_NAME);
		assert_true(strspn(k[i].key, "abcdefghijklmnopqrstuvwxyz0123456789_") ==
			    strlen(k[i].key));
		assert_non_null(k[i].doc);
		assert_true(strlen(k[i].doc) > 10);
		assert_true(k[i].offset + k[i].size <= sizeof(struct rxb_config));
		/* Every key is applied by a reload or waits for a restart. */
		if (k[i].reload != CONFIG_RELOAD_LIVE && k[i].reload != CONFIG_RELOAD_RESTART)
			fail_msg("[%s] %s: reload class %d is neither live nor restart",
				 k[i].section, k[i].key, (int)k[i].reload);
		for (size_t j = 0; j < i; j++)
			assert_false(strcmp(k[i].section, k[j].section) == 0 &&
				     strcmp(k[i].key, k[j].key) == 0);
		switch (k[i].type) {
		case CONFIG_UINT:
			assert_true(k[i].size == 1 || k[i].size == 2 || k[i].size == 4 ||
				    k[i].size == 8);
			assert_true(k[i].lim.u.min <= k[i].lim.u.max);
			if (k[i].size < 8)
				assert_true(k[i].lim.u.max < (1ULL << (8 * k[i].size)));
			break;
		case CONFIG_DOUBLE:
			assert_int_equal(k[i].size, sizeof(double));
			break;
		case CONFIG_SI:
			assert_int_equal(k[i].size, sizeof(uint64_t));
			assert_true(k[i].lim.d.max <= 1.8e19);
			break;
		case CONFIG_BOOL:
			assert_int_equal(k[i].size, sizeof(bool));
			break;
		case CONFIG_ENUM:
		case CONFIG_LOG_LEVEL:
			assert_int_equal(k[i].size, sizeof(int));
			break;
		case CONFIG_MODE:
			assert_int_equal(k[i].size, sizeof(uint32_t));
			break;
		case CONFIG_PORT_LIST:
			assert_int_equal(k[i].size, sizeof(struct rxb_port_list));
			break;
		case CONFIG_CIDR_LIST:
			assert_int_equal(k[i].size, sizeof(struct rxb_cidr_list));
			break;
		case CONFIG_IFNAME_LIST:
			assert_int_equal(k[i].size, sizeof(struct rxb_ifname_list));
			break;
		case CONFIG_ADDRESS_LIST:
			assert_int_equal(k[i].size, sizeof(struct rxb_addr_list));
			break;
		case CONFIG_UID_LIST:
			assert_int_equal(k[i].size, sizeof(struct rxb_uid_list));
			break;
		case CONFIG_PATH_LIST:
			assert_int_equal(k[i].size, sizeof(struct rxb_path_list));
			break;
		case CONFIG_GROUP:
			assert_int_equal(k[i].size, sizeof(struct rxb_group));
			break;
		case CONFIG_HOSTPORT:
			assert_int_equal(k[i].size, sizeof(struct rxb_hostport));
			break;
		case CONFIG_PATH:
			assert_true(k[i].size > 1);
			break;
		}
		/* Canonical default: formatting the parsed default gives it back. */
		config_format(&k[i], &c, buf, sizeof(buf));
		if (strcmp(buf, k[i].def) != 0)
			fail_msg("[%s] %s: default '%s' formats as '%s'",
				 k[i].section, k[i].key, k[i].def, buf);
	}
}

/* ------------------------------------------------------- good content -- */

static void test_empty_and_comment_only(void **state)
{
	struct rxb_config def, c;
	char err[256];

	(void)state;
	config_defaults(&def);
	memset(&c, 0xab, sizeof(c));
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_int_equal(config_diff(&def, &c, NULL, NULL), 0);
	assert_int_equal(parse("# nothing\n; still nothing\n\n   \n\t\n[measure]\n", &c, err,
			       sizeof(err)), 0);
	assert_int_equal(config_diff(&def, &c, NULL, NULL), 0);
	/* Comments may be non-ASCII (UTF-8). */
	assert_int_equal(parse("# caf\xc3\xa9 \xe2\x80\x94 notes\n[daemon]\n"
			       "log_level = debug ; \xc3\xa9\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.daemon.log_level, RXB_LOG_DEBUG);
}

static void test_every_key_set(void **state)
{
	static const char text[] =
		"; every key, none at its default\r\n"
		"[daemon]\n"
		"state_dir = /srv/rxb/state\n"
		"runtime_dir = /run/rxb\n"
		"ctl_socket = \"/run/rxb/ctl.sock\"\n"
		"ctl_socket_mode = 600\n"
		"ctl_group = root\n"
		"log_level = Warning\n"
		"[ MEASURE ]\n"
		"Interval_MS = 250\n"
		"net_probe_every = 4\n"
		"net_probe_learn_s = 0\n"
		"watch_ports = 5001, 5002 7000\n"
		"flow_linger_s = 5\n"
		"attach = raw_tp\n"
		"bpf_stats = off\n"
		"devices = eth0,ens1f0np0 weird.name\n"
		"fallback_rx_ring = 4096\n"
		"fallback_rx_max_frames = 64\n"
		"fallback_rx_usecs = 50\n"
		"[model]\n"
		"payload_bytes = 8972\n"
		"default_file_bytes = 200Mi\n"
		"default_one_way_delay_ms = 100\n"
		"line_rate_bps = 100G\n"
		"min_rate_bps = 1.5G\n"
		"sweep_points = 1000\n"
		"batch_rule = strict\n"
		"rounds = seed\n"
		"queue_depth_cost = yes\n"
		"loss_episodes = off\n"
		"rate_uncertainty = measured\n"
		"loss = windows\n"
		"capacity = drain\n"
		"[control]\n"
		"listen_address = ::\n"
		"port = 7000\n"
		"allow = 10.0.0.0/8, 192.0.2.7 2001:db8::/32 # site networks\n"
		"max_connections = 8\n"
		"max_connections_per_address = 2\n"
		"max_flows_per_address = 16\n"
		"flow_owner_uids = 0, 1000 4294967294\n"
		"max_frame_bytes = 65536\n"
		"output_queue_bytes = 1Mi\n"
		"idle_timeout_s = 600\n"
		"hello_timeout_s = 30\n"
		"rate_change_fraction = 0.2\n"
		"push_every_epochs = 1\n"
		"[pause]\n"
		"enabled = no\n"
		"min_window_us = 500\n"
		"max_window_ms = 20\n"
		"[metrics]\n"
		"enabled = yes\n"
		"listen = [0:0::1]:9100\n"
		"allow = 192.0.2.0/24\n"
		"max_connections = 64\n"
		"max_connections_per_address = 64\n"
		"timeout_s = 3\n"
		"[streams]\n"
		"enabled = no\n"
		"ports = 2811 5201\n"
		"max_peers = 16\n"
		"max_points = 8\n"
		"max_conns = 100\n"
		"max_n = 40\n"
		"tolerance = 0.05\n"
		"rise = 0.1\n"
		"min_stream_bps = 1M\n"
		"min_share = 0.1\n"
		"settle = 2\n"
		"sample_memory_s = 60\n"
		"min_sample_s = 1.5\n"
		"max_age_h = 0\n"
		"save_s = 5\n"
		"fits_per_epoch = 2\n"
		"[buffer]\n"
		"mode = apply\n"
		"policy = model\n"
		"dt_ms = 50\n"
		"k = 4\n"
		"beta = 8\n"
		"omega = 0.25\n"
		"floor_bytes = 256Ki\n"
		"ceiling_bytes = 1Gi\n"
		"loss_target = 1e-6\n"
		"time_slack = 0.02\n"
		"allow_users = root 1000\n"
		"allow_exes = /usr/local/bin/rxbneck-recv /opt/x/recv\n";
	struct rxb_config def, c;
	char err[256];
	size_t n;

	(void)state;
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	config_defaults(&def);
	config_keys(&n);
	/* Every key differs from its default: all were read. */
	assert_int_equal(config_diff(&def, &c, NULL, NULL), (int)n);

	assert_string_equal(c.daemon.state_dir, "/srv/rxb/state");
	assert_string_equal(c.daemon.ctl_socket, "/run/rxb/ctl.sock");
	assert_int_equal(c.daemon.ctl_socket_mode, 0600);
	assert_string_equal(c.daemon.ctl_group.name, "root");
	assert_int_equal(c.daemon.ctl_group.gid, 0);
	assert_int_equal(c.daemon.log_level, RXB_LOG_WARNING);
	assert_int_equal(c.measure.interval_ms, 250);
	assert_int_equal(c.measure.net_probe_every, 4);
	assert_int_equal(c.measure.net_probe_learn_s, 0);
	assert_int_equal(c.measure.watch_ports.n, 3);
	assert_int_equal(c.measure.watch_ports.port[0], 5001);
	assert_int_equal(c.measure.watch_ports.port[2], 7000);
	assert_int_equal(c.measure.attach, RXB_ATTACH_RAW_TP);
	assert_false(c.measure.bpf_stats);
	assert_int_equal(c.measure.devices.n, 3);
	assert_string_equal(c.measure.devices.name[1], "ens1f0np0");
	assert_string_equal(c.measure.devices.name[2], "weird.name");
	assert_true(c.model.default_file_bytes == 200ULL * 1048576);
	assert_true(c.model.default_one_way_delay_ms == 100.0);
	assert_true(c.model.line_rate_bps == 100000000000ULL);
	assert_true(c.model.min_rate_bps == 1500000000ULL);
	assert_int_equal(c.model.batch_rule, RXB_BATCH_STRICT);
	assert_int_equal(c.model.rounds, BNECK_ROUNDS_SEED);
	assert_int_equal(c.model.loss_episodes, 0);
	assert_int_equal(c.model.rate_uncertainty, 1);
	assert_int_equal(c.model.loss, 1);
	assert_int_equal(c.model.capacity, CAPACITY_MODE_DRAIN);
	assert_true(c.model.queue_depth_cost);
	assert_int_equal(c.control.listen_address.n, 1);
	assert_string_equal(c.control.listen_address.addr[0], "::");
	assert_true(c.control.output_queue_bytes == 1048576);
	assert_int_equal(c.control.port, 7000);
	assert_int_equal(c.control.allow.n, 3);
	assert_int_equal(c.control.allow.cidr[1].prefix_len, 32);	/* bare host */
	assert_true(c.control.rate_change_fraction == 0.2);
	assert_int_equal(c.control.max_connections_per_address, 2);
	assert_int_equal(c.control.max_flows_per_address, 16);
	assert_int_equal(c.control.flow_owner_uids.n, 3);
	assert_int_equal(c.control.flow_owner_uids.uid[2], 4294967294U);
	assert_false(c.pause.enabled);
	assert_int_equal(c.pause.max_window_ms, 20);
	assert_true(c.metrics.enabled);
	assert_string_equal(c.metrics.listen.addr, "::1");
	assert_int_equal(c.metrics.listen.port, 9100);
	assert_int_equal(c.metrics.allow.n, 1);
	assert_int_equal(c.metrics.max_connections_per_address, 64);
	assert_int_equal(c.metrics.timeout_s, 3);
	assert_false(c.streams.enabled);
	assert_int_equal(c.streams.ports.n, 2);
	assert_int_equal(c.streams.ports.port[1], 5201);
	assert_true(c.streams.min_stream_bps == 1000000);
	assert_true(c.streams.min_sample_s == 1.5);
	assert_int_equal(c.streams.max_age_h, 0);
	assert_int_equal(c.buffer.mode, 2);
	assert_int_equal(c.buffer.policy, 1);
	assert_true(c.buffer.floor_bytes == 256 * 1024 && c.buffer.ceiling_bytes == 1ULL << 30);
	assert_true(c.buffer.loss_target == 1e-6);
	assert_int_equal(c.buffer.allow_users.n, 2);
	assert_int_equal(c.buffer.allow_users.uid[0], 0);	/* root, resolved */
	assert_int_equal(c.buffer.allow_users.uid[1], 1000);
	assert_int_equal(c.buffer.allow_exes.n, 2);
	assert_string_equal(c.buffer.allow_exes.path[1], "/opt/x/recv");
	/* (uid_t)-1 is nobody; a user's name is resolved. */
	assert_int_equal(parse("[control]\nflow_owner_uids = 4294967295\n", &c, err,
			       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "neither a uid"));
	assert_int_equal(parse("[control]\nflow_owner_uids = root\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.control.flow_owner_uids.n, 1);
	assert_int_equal(c.control.flow_owner_uids.uid[0], 0);
	assert_int_equal(parse("[control]\nflow_owner_uids = 5 5\n", &c, err,
			       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "uid 5 is listed twice"));
}

/* Quoting: iniparser's rules, which config_scan() follows. */
static void test_quoting(void **state)
{
	struct rxb_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse("[daemon]\nstate_dir = '/srv/a;b#c'  ; comment\n", &c, err,
			       sizeof(err)), 0);
	assert_string_equal(c.daemon.state_dir, "/srv/a;b#c");
	assert_int_equal(parse("[daemon]\nctl_group = \"\"\n", &c, err, sizeof(err)), 0);
	assert_string_equal(c.daemon.ctl_group.name, "");
	assert_int_equal(parse("[measure]\nwatch_ports =\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.measure.watch_ports.n, 0);
	assert_int_equal(parse("[measure]\nwatch_ports = ; none\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.measure.watch_ports.n, 0);
	assert_int_equal(parse("[measure]\ndevices = \"eth0 eth1\" # two\n", &c, err,
			       sizeof(err)), 0);
	assert_int_equal(c.measure.devices.n, 2);
}

/* "0 = never" keys, and the hello/idle rule that only applies with a timeout. */
static void test_zero_means_never(void **state)
{
	struct rxb_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse("[control]\nidle_timeout_s = 0\nhello_timeout_s = 3600\n"
			       "push_every_epochs = 0\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.control.idle_timeout_s, 0);
	assert_int_equal(c.control.hello_timeout_s, 3600);
	assert_int_equal(c.control.push_every_epochs, 0);
	assert_int_equal(parse("[control]\nallow =\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.control.allow.n, 0);
}

/* ------------------------------------------------------------- errors -- */

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
		{ "[control]\nallow = 10.0.0.0/8 10.0.0.0/8\n", 2, { "'10.0.0.0/8' is listed twice" } },
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

/* -------------------------------------------------------------- files -- */

static char *write_temp(const char *text, mode_t mode)
{
	char *path = strdup("/tmp/rxbt-config-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void test_files(void **state)
{
	struct rxb_config c;
	char err[512], want[600];
	char *path;

	(void)state;
	/* Missing file. */
	assert_int_equal(config_load("/nonexistent/rxbneckd.conf", &c, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/rxbneckd.conf: cannot open: No such file or directory");

	/* A directory. */
	assert_int_equal(config_load("/tmp", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/tmp: not a regular file");

	/* Empty file: defaults. */
	path = write_temp("", 0644);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), 0);
	assert_int_equal(c.measure.interval_ms, 1000);
	unlink(path);
	free(path);

	/* Errors carry the real path and line. */
	path = write_temp("[measure]\n\ninterval_ms = 7\n", 0600);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), -ERANGE);
	snprintf(want, sizeof(want), "%s:3: [measure] interval_ms: '7' is out of range "
		 "(expected a whole number 10..60000)", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	/* World-writable: refused. */
	path = write_temp("[measure]\ninterval_ms = 100\n", 0666);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by everyone"));
	unlink(path);
	free(path);
}

/* The reload pattern of config.h: a bad second load leaves the first intact. */
static void test_reload_keeps_running_config(void **state)
{
	struct rxb_config running, next, saved;
	char err[512];
	char *good, *bad;

	(void)state;
	good = write_temp("[measure]\ninterval_ms = 250\n[control]\nport = 7000\n", 0644);
	bad = write_temp("[measure]\ninterval_ms = 500\n[control]\nport = 70000\n", 0644);
	assert_int_equal(config_load(good, &running, err, sizeof(err)), 0);
	saved = running;

	/* Loading straight into the running struct: untouched on failure. */
	assert_int_equal(config_load(bad, &running, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, ":4: [control] port: '70000' is out of range"));
	assert_memory_equal(&running, &saved, sizeof(running));
	assert_int_equal(running.measure.interval_ms, 250);	/* line 2 was fine, not applied */

	/* Missing file on reload: same. */
	assert_int_equal(config_load("/nonexistent/x.conf", &running, err, sizeof(err)), -ENOENT);
	assert_memory_equal(&running, &saved, sizeof(running));

	/* A good reload replaces it. */
	assert_int_equal(config_load(good, &next, err, sizeof(err)), 0);
	assert_int_equal(config_diff(&running, &next, NULL, NULL), 0);
	unlink(good);
	unlink(bad);
	free(good);
	free(bad);
}

struct diff_log {
	int n;
	char lines[8][160];
	enum config_reload reload[8];
};

static void diff_cb(void *ctx, const struct config_key *k, const char *old_val,
		    const char *new_val)
{
	struct diff_log *d = ctx;

	assert_true(d->n < 8);
	d->reload[d->n] = k->reload;
	snprintf(d->lines[d->n++], sizeof(d->lines[0]), "[%s] %s: %s -> %s",
		 k->section, k->key, old_val, new_val);
}

static void test_diff(void **state)
{
	struct rxb_config a, b;
	struct diff_log d = { 0 };
	char err[256];

	(void)state;
	config_defaults(&a);
	assert_int_equal(parse("[control]\nport = 7000\nallow = 10.0.0.0/8\n"
			       "[model]\nline_rate_bps = 100000000000\n", &b, err, sizeof(err)), 0);
	assert_int_equal(config_diff(&a, &b, diff_cb, &d), 3);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.lines[0], "[model] line_rate_bps: 10G -> 100G");
	assert_string_equal(d.lines[1], "[control] port: 7440 -> 7000");
	assert_true(d.reload[1] == CONFIG_RELOAD_RESTART);
	assert_string_equal(d.lines[2], "[control] allow: 127.0.0.0/8 ::1/128 -> 10.0.0.0/8");
	assert_true(d.reload[2] == CONFIG_RELOAD_LIVE);
	assert_int_equal(config_diff(&b, &b, diff_cb, &d), 0);
	/* Same value written differently is no change. */
	assert_int_equal(parse("[model]\nline_rate_bps = 10000M\n", &b, err, sizeof(err)), 0);
	assert_int_equal(config_diff(&a, &b, NULL, NULL), 0);
	assert_int_equal(config_format(key_by_name("daemon", "ctl_socket_mode"), &a, err,
				       sizeof(err)), 4);
	assert_string_equal(err, "0660");
}

/* Does @text (an address) pass the allow-list of @c, as sendsrv checks it? */
static bool allowed(const struct rxb_config *c, const char *text)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
	} else {
		assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
		in6->sin6_family = AF_INET6;
	}
	for (int i = 0; i < c->control.allow.n; i++)
		if (sendsrv_cidr_match(&c->control.allow.cidr[i], (struct sockaddr *)&ss))
			return true;
	return false;
}

/* The allow-list is stored the way the control server matches it. */
static void test_allow_list_for_sendsrv(void **state)
{
	struct rxb_config c;
	char err[256], buf[256];

	(void)state;
	assert_int_equal(parse("[control]\nallow = 10.0.0.0/8 192.0.2.128/25 2001:db8::/32 "
			       "::ffff:198.51.100.0/120\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.control.allow.n, 4);
	assert_true(allowed(&c, "10.255.1.2"));
	assert_false(allowed(&c, "11.0.0.1"));
	assert_true(allowed(&c, "192.0.2.200"));
	assert_false(allowed(&c, "192.0.2.127"));
	assert_true(allowed(&c, "2001:db8:ffff::1"));
	assert_false(allowed(&c, "2001:db9::1"));
	/* Dual-stack sockets show IPv4 peers as ::ffff:a.b.c.d. */
	assert_true(allowed(&c, "::ffff:10.1.2.3"));
	assert_false(allowed(&c, "::ffff:11.1.2.3"));
	/* A v4-mapped prefix is stored as the IPv4 network it means. */
	assert_true(allowed(&c, "198.51.100.7"));
	config_format(key_by_name("control", "allow"), &c, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.0/8 192.0.2.128/25 2001:db8::/32 198.51.100.0/24");

	/* Defaults: loopback only. */
	config_defaults(&c);
	assert_true(allowed(&c, "127.3.4.5"));
	assert_true(allowed(&c, "::1"));
	assert_false(allowed(&c, "192.168.1.1"));
	/* Empty list: nobody. */
	assert_int_equal(parse("[control]\nallow =\n", &c, err, sizeof(err)), 0);
	assert_false(allowed(&c, "127.0.0.1"));
}

static int fd_stub(void *ctx, int fd, uint32_t events)
{
	(void)ctx;
	(void)fd;
	(void)events;
	return 0;
}

static void fd_del_stub(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
}

static void check_sendsrv_accepts(const struct rxb_config *c)
{
	struct sendsrv_ops ops = { .fd_add = fd_stub, .fd_mod = fd_stub, .fd_del = fd_del_stub };
	struct sendsrv_limits lim;
	struct sendsrv *srv = NULL;

	config_sendsrv_limits(c, &lim);
	assert_int_equal(sendsrv_init(&srv, &lim, &ops), 0);
	sendsrv_finish(srv);
}

/* The config's control defaults are the server's, and its bounds fit the server's. */
static void test_sendsrv_limits(void **state)
{
	struct sendsrv_limits mine, theirs;
	struct rxb_config c;
	char err[256];

	(void)state;
	config_defaults(&c);
	config_sendsrv_limits(&c, &mine);
	sendsrv_limits_default(&theirs);
	assert_int_equal(mine.max_frame_bytes, theirs.max_frame_bytes);
	assert_int_equal(mine.max_conns, theirs.max_conns);
	assert_true(mine.hello_timeout_ns == theirs.hello_timeout_ns);
	assert_true(mine.idle_timeout_ns == theirs.idle_timeout_ns);
	assert_int_equal(mine.max_out_bytes, theirs.max_out_bytes);
	assert_true(mine.rate_change_frac == theirs.rate_change_frac);
	assert_int_equal(mine.rate_refresh_epochs, theirs.rate_refresh_epochs);
	assert_int_equal(mine.epoch_ms, theirs.epoch_ms);
	assert_int_equal(mine.n_allow, theirs.n_allow);
	assert_memory_equal(mine.allow, theirs.allow, theirs.n_allow * sizeof(theirs.allow[0]));
	check_sendsrv_accepts(&c);

	/* The ends of every [control] range are accepted by sendsrv_init() too. */
	assert_int_equal(parse("[control]\nmax_connections = 1\nmax_frame_bytes = 512\n"
			       "output_queue_bytes = 1Ki\nidle_timeout_s = 0\n"
			       "hello_timeout_s = 1\nrate_change_fraction = 0\n"
			       "push_every_epochs = 0\nallow =\n", &c, err, sizeof(err)), 0);
	check_sendsrv_accepts(&c);
	assert_int_equal(parse("[control]\nmax_connections = 65536\nmax_frame_bytes = 65536\n"
			       "output_queue_bytes = 64Mi\nidle_timeout_s = 86400\n"
			       "hello_timeout_s = 3600\nrate_change_fraction = 1\n"
			       "push_every_epochs = 3600\n[measure]\ninterval_ms = 60000\n",
			       &c, err, sizeof(err)), 0);
	check_sendsrv_accepts(&c);
}

/* ----------------------------------------------- documentation drift -- */

static char *slurp(const char *rel)
{
	const char *src = getenv("RXB_SRC");
	char path[512];
	char *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (run from the source tree or set RXB_SRC)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* Keys the documentation tests can track: above the table's size. */
#define MAX_KEYS	128

/* Next line of *p into buf (without '\n'); false at the end. */
static bool next_line(const char **p, char *buf, size_t size)
{
	size_t n;

	if (!**p)
		return false;
	n = strcspn(*p, "\n");
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), *p);
	*p += n + ((*p)[n] == '\n');
	return true;
}

/*
 * conf/rxbneckd.conf: under "[section]", a line "key = DEFAULT" (may be
 * commented out with '#' or ';'), and no key lines that are not in the table;
 * the comment above a key says "(restart)" exactly for restart-only keys.
 */
static void test_conf_file_documents_every_key(void **state)
{
	char *text = slurp("conf/rxbneckd.conf");
	size_t n;
	const struct config_key *k = config_keys(&n);
	bool found[MAX_KEYS] = { false };
	char line[1024], section[64] = "", key[64], val[512];
	const char *p = text;
	bool block_restart = false;
	struct rxb_config c;
	char err[512];

	(void)state;
	assert_true(n <= MAX_KEYS);
	/* The shipped file itself loads, from disk too (mode, size, ...). */
	assert_int_equal(config_parse(text, strlen(text), "conf/rxbneckd.conf", &c, err,
				      sizeof(err)), 0);
	{
		const char *src = getenv("RXB_SRC");
		char path[512];

		snprintf(path, sizeof(path), "%s/conf/rxbneckd.conf", src ? src : ".");
		if (config_load(path, &c, err, sizeof(err)) != 0)
			fail_msg("%s", err);
	}
	while (next_line(&p, line, sizeof(line))) {
		const char *s = line;
		const struct config_key *hit = NULL;
		int m;

		/* A key's comment block runs from the last blank line or header. */
		if (!line[0])
			block_restart = false;
		if (strstr(line, "(restart)"))
			block_restart = true;
		if (sscanf(s, "[%63[^]]]", section) == 1) {
			block_restart = false;
			continue;
		}
		if (*s == '#' || *s == ';')
			s++;
		/* "key = value" or "key =" (empty default); prose lines don't match. */
		m = sscanf(s, "%63[a-z0-9_] = %511[^\n]", key, val);
		if (m < 1 || !strstr(s, "="))
			continue;
		if (m == 1)
			val[0] = '\0';
		for (size_t i = 0; i < n; i++)
			if (strcmp(k[i].section, section) == 0 && strcmp(k[i].key, key) == 0)
				hit = &k[i];
		if (!hit)
			fail_msg("conf/rxbneckd.conf: [%s] %s is not a known key", section, key);
		if (strcmp(val, hit->def) == 0)
			found[hit - k] = true;
		/* "(restart)" in its comment exactly when a reload does not apply it. */
		if (block_restart != (hit->reload == CONFIG_RELOAD_RESTART))
			fail_msg("conf/rxbneckd.conf: [%s] %s is %s, its comment %s \"(restart)\"",
				 section, key, block_restart ? "applied on reload" : "restart-only",
				 block_restart ? "says" : "lacks");
	}
	for (size_t i = 0; i < n; i++)
		if (!found[i])
			fail_msg("conf/rxbneckd.conf lacks \"%s = %s\" under [%s]",
				 k[i].key, k[i].def, k[i].section);
	free(text);
}

/*
 * docs/config.md: under "## [section]", a heading "### `key`" whose text
 * says "Default: `DEFAULT`" (or "Default: empty"), and "Applies at restart."
 * exactly for restart-only keys; no headings for keys that do not exist.
 */
static void test_docs_document_every_key(void **state)
{
	char *text = slurp("docs/config.md");
	size_t n;
	const struct config_key *k = config_keys(&n);
	bool found[MAX_KEYS] = { false }, restart[MAX_KEYS] = { false };
	char line[1024], section[64] = "", key[64] = "";
	const struct config_key *cur = NULL;
	const char *p = text;

	(void)state;
	assert_true(n <= MAX_KEYS);
	while (next_line(&p, line, sizeof(line))) {
		char want[600];

		if (sscanf(line, "## [%63[^]]]", section) == 1) {
			cur = NULL;
			continue;
		}
		if (strncmp(line, "## ", 3) == 0) {
			section[0] = '\0';
			cur = NULL;
			continue;
		}
		if (sscanf(line, "### `%63[^`]`", key) == 1) {
			cur = NULL;
			for (size_t i = 0; i < n; i++)
				if (strcmp(k[i].section, section) == 0 &&
				    strcmp(k[i].key, key) == 0)
					cur = &k[i];
			if (!cur)
				fail_msg("docs/config.md documents [%s] %s, which is not a key",
					 section, key);
			continue;
		}
		if (!cur)
			continue;
		if (cur->def[0])
			snprintf(want, sizeof(want), "Default: `%s`", cur->def);
		else
			snprintf(want, sizeof(want), "Default: empty");
		if (strstr(line, want))
			found[cur - k] = true;
		if (strstr(line, "Applies at restart."))
			restart[cur - k] = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!found[i])
			fail_msg("docs/config.md lacks [%s] %s with \"Default: `%s`\"",
				 k[i].section, k[i].key, k[i].def);
		if (restart[i] != (k[i].reload == CONFIG_RELOAD_RESTART))
			fail_msg("docs/config.md: [%s] %s is %s, its text %s \"Applies at restart.\"",
				 k[i].section, k[i].key,
				 restart[i] ? "applied on reload" : "restart-only",
				 restart[i] ? "says" : "lacks");
	}
	free(text);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_defaults),
	cmocka_unit_test(test_table_consistency),
	cmocka_unit_test(test_empty_and_comment_only),
	cmocka_unit_test(test_every_key_set),
	cmocka_unit_test(test_quoting),
	cmocka_unit_test(test_zero_means_never),
	cmocka_unit_test(test_bad_values_every_type),
	cmocka_unit_test(test_bad_structure),
	cmocka_unit_test(test_nul_byte_and_limits),
	cmocka_unit_test(test_files),
	cmocka_unit_test(test_reload_keeps_running_config),
	cmocka_unit_test(test_diff),
	cmocka_unit_test(test_allow_list_for_sendsrv),
	cmocka_unit_test(test_sendsrv_limits),
	cmocka_unit_test(test_conf_file_documents_every_key),
	cmocka_unit_test(test_docs_document_every_key),
)
