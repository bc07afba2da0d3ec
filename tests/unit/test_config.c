// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/config: defaults, the table's consistency, good
 * content, files (missing, empty, overlong, permissions), reload
 * semantics, diff, CIDR matching, the limits sendsrv takes. Bad content
 * is test_config_errors.c, the documentation check test_config_docs.c.
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
#include "tests/unit/config_fixture.h"
#include "tests/unit/unit_main.h"

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
	assert_int_equal(c.model.loss_episodes, 2);	/* windows */
	assert_int_equal(c.model.loss, 2);	/* service */
	assert_int_equal(c.model.rate_uncertainty, 0);	/* off */
	assert_true(c.model.drain_floor);
	assert_true(c.model.windows_by_rate);
	assert_true(c.model.time_slack == 0.02);	/* docs/e2e.md §5.1 */
	assert_int_equal(c.model.capacity, CAPACITY_MODE_COST);
	assert_false(c.model.queue_depth_cost);
	assert_true(c.model.quota_phases);
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

/* The size a key of each fixed-size type has in struct rxb_config. */
static const struct {
	enum config_type type;
	size_t size;
} fixed_sizes[] = {
	{ CONFIG_DOUBLE, sizeof(double) },
	{ CONFIG_SI, sizeof(uint64_t) },
	{ CONFIG_BOOL, sizeof(bool) },
	{ CONFIG_ENUM, sizeof(int) },
	{ CONFIG_LOG_LEVEL, sizeof(int) },
	{ CONFIG_MODE, sizeof(uint32_t) },
	{ CONFIG_PORT_LIST, sizeof(struct rxb_port_list) },
	{ CONFIG_CIDR_LIST, sizeof(struct rxb_cidr_list) },
	{ CONFIG_IFNAME_LIST, sizeof(struct rxb_ifname_list) },
	{ CONFIG_ADDRESS_LIST, sizeof(struct rxb_addr_list) },
	{ CONFIG_UID_LIST, sizeof(struct rxb_uid_list) },
	{ CONFIG_PATH_LIST, sizeof(struct rxb_path_list) },
	{ CONFIG_GROUP, sizeof(struct rxb_group) },
	{ CONFIG_HOSTPORT, sizeof(struct rxb_hostport) },
};

/* @k's field has the size of its type, and its limits fit the field. */
static void check_key_size(const struct config_key *k)
{
	switch (k->type) {
	case CONFIG_UINT:
		assert_true(k->size == 1 || k->size == 2 || k->size == 4 || k->size == 8);
		assert_true(k->lim.u.min <= k->lim.u.max);
		if (k->size < 8)
			assert_true(k->lim.u.max < (1ULL << (8 * k->size)));
		return;
	case CONFIG_PATH:
		assert_true(k->size > 1);
		return;
	case CONFIG_SI:
		assert_true(k->lim.d.max <= 1.8e19);
		break;
	default:
		break;
	}
	for (size_t t = 0; t < RXB_ARRAY_SIZE(fixed_sizes); t++)
		if (fixed_sizes[t].type == k->type) {
			assert_int_equal(k->size, fixed_sizes[t].size);
			return;
		}
	fail_msg("[%s] %s: type %d has no size rule", k->section, k->key, (int)k->type);
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
		check_key_size(&k[i]);
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
		"quota_phases = no\n"
		"drain_floor = no\n"
		"windows_by_rate = no\n"
		"time_slack = 0.05\n"
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
	assert_false(c.model.quota_phases);
	assert_false(c.model.drain_floor);
	assert_false(c.model.windows_by_rate);
	assert_true(c.model.time_slack == 0.05);
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

/* loss_episodes has a third value that rate_uncertainty, with the same first two, lacks. */
static void test_loss_episodes_windows(void **state)
{
	struct rxb_config c;
	char err[256];

	(void)state;
	assert_int_equal(parse("[model]\nloss_episodes = windows\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.model.loss_episodes, 2);
	assert_int_not_equal(parse("[model]\nrate_uncertainty = windows\n", &c, err, sizeof(err)),
			     0);
	assert_non_null(strstr(err, "rate_uncertainty"));
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

UNIT_TEST_MAIN(
	cmocka_unit_test(test_defaults),
	cmocka_unit_test(test_table_consistency),
	cmocka_unit_test(test_empty_and_comment_only),
	cmocka_unit_test(test_every_key_set),
	cmocka_unit_test(test_quoting),
	cmocka_unit_test(test_loss_episodes_windows),
	cmocka_unit_test(test_zero_means_never),
	cmocka_unit_test(test_files),
	cmocka_unit_test(test_reload_keeps_running_config),
	cmocka_unit_test(test_diff),
	cmocka_unit_test(test_allow_list_for_sendsrv),
	cmocka_unit_test(test_sendsrv_limits),
)
