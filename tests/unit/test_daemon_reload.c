// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test for rxbneckd's reload, driven by the key table: a real daemon
 * (daemon_init() with probes off, in a temporary directory, on a free
 * loopback port) is reloaded once per key of config_keys() with that key,
 * and only that key, changed to another valid value taken from the key's
 * type and bounds. After each reload the configuration read back from the
 * daemon's parts (daemon_reload_effective(): the logger, the epoch timer,
 * netplan, the flows, the collector's settings, the sender server's
 * limits) must be the file's for every live key and the start-up value for
 * every restart-only key, and the reload must list exactly the changed key
 * as needing a restart when, and only when, the table says so.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "tests/unit/unit_main.h"

struct env {
	char dir[64];
	char path[96];
	char other_path[96];	/* a path value no key has */
	uint16_t port;
	struct rxb_config base;	/* the file the daemon starts with */
};

static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* @cfg as a file in which every key is set; @k (if not NULL) set to @val. */
static void write_conf(const struct env *e, const struct rxb_config *cfg,
		       const struct config_key *k, const char *val)
{
	const char *const *secs = config_sections();
	size_t n;
	const struct config_key *keys = config_keys(&n);
	char buf[1100];
	FILE *f = fopen(e->path, "w");

	assert_non_null(f);
	for (int s = 0; secs[s]; s++) {
		fprintf(f, "[%s]\n", secs[s]);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(keys[i].section, secs[s]) != 0)
				continue;
			if (&keys[i] == k)
				snprintf(buf, sizeof(buf), "%s", val);
			else
				config_format(&keys[i], cfg, buf, sizeof(buf));
			fprintf(f, "%s = \"%s\"\n", keys[i].key, buf);
		}
	}
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(e->path, 0600), 0);
}

/* Values of @k's type to try: its bounds, its names, a sample of each list. */
static int candidates(const struct env *e, const struct config_key *k, char out[][128])
{
	static const char *const lists[][3] = {
		[CONFIG_PORT_LIST] = { "5001", "5001 5002" },
		[CONFIG_CIDR_LIST] = { "10.0.0.0/8", "" },
		[CONFIG_IFNAME_LIST] = { "lo" },
		[CONFIG_ADDRESS_LIST] = { "::1", "127.0.0.1" },
		[CONFIG_MODE] = { "0600", "0640" },
		[CONFIG_GROUP] = { "root", "" },
		[CONFIG_BOOL] = { "yes", "no" },
		[CONFIG_LOG_LEVEL] = { "err", "debug" },
		[CONFIG_HOSTPORT] = { "127.0.0.1:1", "[::1]:7441" },
		[CONFIG_UID_LIST] = { "0", "0 65534" },
		[CONFIG_PATH_LIST] = { "/bin/true", "" },
	};
	int n = 0;

	switch (k->type) {
	case CONFIG_UINT:
		snprintf(out[n++], 128, "%llu", (unsigned long long)k->lim.u.min);
		snprintf(out[n++], 128, "%llu", (unsigned long long)k->lim.u.max);
		snprintf(out[n++], 128, "%llu", (unsigned long long)k->lim.u.min + 1);
		snprintf(out[n++], 128, "%llu", (unsigned long long)k->lim.u.max - 1);
		break;
	case CONFIG_DOUBLE:
	case CONFIG_SI:
		snprintf(out[n++], 128, "%.0f", k->lim.d.min);
		snprintf(out[n++], 128, "%.0f", k->lim.d.max);
		snprintf(out[n++], 128, "%.0f", k->lim.d.min + 1);
		break;
	case CONFIG_ENUM:
		for (int i = 0; k->lim.names[i] && n < 8; i++)
			snprintf(out[n++], 128, "%s", k->lim.names[i]);
		break;
	case CONFIG_PATH:
		snprintf(out[n++], 128, "%s", e->other_path);
		break;
	default:
		for (int i = 0; i < 3 && lists[k->type][i]; i++)
			snprintf(out[n++], 128, "%s", lists[k->type][i]);
		break;
	}
	return n;
}

/*
 * A file that differs from the base in @k alone, written to e->path, and
 * what it loads to in *next; fails the test when no candidate does.
 */
static void change_one(const struct env *e, const struct config_key *k,
		       struct rxb_config *next)
{
	char vals[8][128], err[512];

	for (int i = 0, n = candidates(e, k, vals); i < n; i++) {
		write_conf(e, &e->base, k, vals[i]);
		if (config_load(e->path, next, err, sizeof(err)) == 0 &&
		    config_diff(&e->base, next, NULL, NULL) == 1)
			return;
	}
	fail_msg("[%s] %s: no other valid value found", k->section, k->key);
}

static void show_diff(void *ctx, const struct config_key *k, const char *a, const char *b)
{
	(void)ctx;
	print_error("  [%s] %s: running '%s', expected '%s'\n", k->section, k->key, a, b);
}

/* The daemon runs what @file says, restart-only keys as it started. */
static void check_effective(const struct daemon *d, const struct rxb_config *file,
			    const char *after)
{
	size_t n;
	const struct config_key *k = config_keys(&n);
	struct rxb_config want = *file, got;

	for (size_t i = 0; i < n; i++)
		if (k[i].reload == CONFIG_RELOAD_RESTART)
			memcpy((char *)&want + k[i].offset, (const char *)&d->started + k[i].offset,
			       k[i].size);
	daemon_reload_effective(d, &got);
	if (config_diff(&got, &want, show_diff, NULL) != 0)
		fail_msg("after %s: the daemon does not run what the file says", after);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void test_reload_every_key(void **state)
{
	size_t n;
	const struct config_key *k = config_keys(&n);
	struct env e;
	struct daemon *d = calloc(1, sizeof(*d));
	char text[512], err[512], want[80];
	int live = 0, restart = 0;

	(void)state;
	assert_non_null(d);
	unsetenv("NOTIFY_SOCKET");
	snprintf(e.dir, sizeof(e.dir), "/tmp/rxbt-reload-XXXXXX");
	assert_non_null(mkdtemp(e.dir));
	snprintf(e.path, sizeof(e.path), "%s/rxbneckd.conf", e.dir);
	snprintf(e.other_path, sizeof(e.other_path), "%s/other", e.dir);
	e.port = free_port();
	snprintf(text, sizeof(text),
		 "[daemon]\nstate_dir = %s/state\nruntime_dir = %s/run\n"
		 "ctl_socket = %s/run/ctl.sock\nlog_level = %s\n"
		 "[measure]\nattach = none\nbpf_stats = no\n"
		 "[control]\nlisten_address = 127.0.0.1\nport = %u\n"
		 "[metrics]\nenabled = yes\nlisten = 127.0.0.1:%u\n",
		 e.dir, e.dir, e.dir, rxb_log_level_name(rxb_log_get_level()), e.port,
		 free_port());
	assert_int_equal(config_parse(text, strlen(text), "base", &e.base, err, sizeof(err)), 0);
	write_conf(&e, &e.base, NULL, NULL);
	assert_int_equal(daemon_init(d, e.path), 0);
	check_effective(d, &e.base, "start-up");

	for (size_t i = 0; i < n; i++) {
		struct rxb_config next;

		change_one(&e, &k[i], &next);
		if (daemon_reload(d) != 0)
			fail_msg("[%s] %s: reload failed: %s", k[i].section, k[i].key,
				 d->reload.msg);
		assert_true(d->reload.ok);
		assert_int_equal(config_diff(&d->cfg, &next, NULL, NULL), 0);
		snprintf(want, sizeof(want), "[%s] %s", k[i].section, k[i].key);
		check_effective(d, &next, want);
		if (k[i].reload == CONFIG_RELOAD_RESTART) {
			assert_int_equal(d->reload.nrestart, 1);
			assert_string_equal(d->reload.restart[0], want);
			restart++;
		} else {
			if (d->reload.nrestart)
				fail_msg("[%s] %s: applied live, but the reload says %s needs a "
					 "restart", k[i].section, k[i].key, d->reload.restart[0]);
			live++;
		}
	}
	/* Back to the start: nothing needs a restart any more. */
	write_conf(&e, &e.base, NULL, NULL);
	assert_int_equal(daemon_reload(d), 0);
	assert_int_equal(d->reload.nrestart, 0);
	check_effective(d, &e.base, "the last reload");
	print_message("  %d live keys applied, %d restart-only keys listed\n", live, restart);
	assert_int_equal(live + restart, (int)n);

	daemon_finish(d);
	free(d);
	rxb_log_set_level(e.base.daemon.log_level);
	assert_int_equal(nftw(e.dir, rm_one, 8, FTW_DEPTH | FTW_PHYS), 0);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_reload_every_key),
)
