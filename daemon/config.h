/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckd's configuration: conf/rxbneckd.conf, documented in docs/config.md.
 *
 * One table (config_keys()) describes every key: section, name, type and
 * bounds, default, what a reload does with it, where it lives in struct
 * rxb_config, and a one-line doc. Defaults, parsing, error messages,
 * config_diff(), the daemon's reload and the checks in tests/unit/
 * (test_config.c: the docs; test_daemon_reload.c: that the daemon really
 * applies each live key) are all driven by it. daemon/config.c says how to
 * add a key or a section.
 *
 * struct rxb_config is plain data: no pointers, no heap memory, no
 * finish call; it may be copied by assignment. That is what makes reloads
 * simple and safe:
 *
 *	struct rxb_config next;
 *	char err[512];
 *
 *	if (config_load(path, &next, err, sizeof(err)) < 0) {
 *		rxb_err("reload failed, keeping the running configuration: %s", err);
 *		return;
 *	}
 *	config_diff(&running, &next, log_change, NULL);	// say what changed
 *	running = next;					// swap on success only
 *
 * config_load() never changes *out unless the whole file is valid: a bad
 * reload cannot leave a half-applied configuration. Keys whose row says
 * CONFIG_RELOAD_RESTART (sockets, directories, probe attachment) are read
 * on a reload but take effect only at the next start; config_diff()'s
 * callback gets the key's row, its reload class included, to say so.
 *
 * File format (a strict subset of what iniparser accepts; config_scan.h
 * says why the daemon reads it with its own scanner): "[section]" lines,
 * "key = value" lines, comment lines starting with '#' or ';', blank
 * lines. Names are case-insensitive. A value ends at a '#' or ';' (inline
 * comment) unless it is quoted with "..." or '...'. Lines are at most
 * CONFIG_MAX_LINE bytes, the file at most CONFIG_MAX_FILE bytes. Not
 * allowed: keys outside a section, unknown sections or keys, a key or a
 * section given twice, '\' line continuations, control characters.
 */
#ifndef RXB_DAEMON_CONFIG_H
#define RXB_DAEMON_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/serve/sendsrv.h"
#include "rxb/measure.h"

#define CONFIG_MAX_FILE		(64 * 1024)	/* bytes */
#define CONFIG_MAX_LINE		1000		/* bytes, without the newline */
#define CONFIG_MAX_NAME		32		/* section and key names */

#define RXB_CONF_PATH_LEN	256	/* directories, with the NUL */
#define RXB_CONF_SOCK_LEN	108	/* sizeof(sockaddr_un.sun_path) */
#define RXB_CONF_GROUP_LEN	33	/* group names, with the NUL */
#define RXB_CONF_MAX_PORTS	RXB_MAX_SOCKS
#define RXB_CONF_MAX_DEVICES	RXB_MAX_NICS
#define RXB_CONF_MAX_CIDRS	SENDSRV_MAX_ALLOW
#define RXB_CONF_MAX_LISTEN	SENDSRV_MAX_LISTEN

/* [measure] attach: how the BPF programs attach to their tracepoints. */
enum rxb_attach_mode {
	RXB_ATTACH_AUTO = 0,	/* tp_btf when the kernel supports it, else raw_tp */
	RXB_ATTACH_TP_BTF,
	RXB_ATTACH_RAW_TP,
	RXB_ATTACH_NONE,	/* no BPF: /proc and netlink only (degraded) */
};

/* Addresses to listen on, canonical text ("127.0.0.1", "::1"): sendsrv_listen(). */
struct rxb_addr_list {
	int n;
	char addr[RXB_CONF_MAX_LISTEN][INET6_ADDRSTRLEN];
};

/* The allow-list in the control server's own form: sendsrv_limits.allow. */
struct rxb_cidr_list {
	int n;
	struct sendsrv_cidr cidr[RXB_CONF_MAX_CIDRS];
};

/* One address and port, "127.0.0.1:7441" or "[::1]:7441" in the file. */
struct rxb_hostport {
	char addr[INET6_ADDRSTRLEN];	/* canonical text */
	uint16_t port;
};

struct rxb_port_list {
	int n;
	uint16_t port[RXB_CONF_MAX_PORTS];
};

struct rxb_ifname_list {
	int n;
	char name[RXB_CONF_MAX_DEVICES][RXB_IFNAME_LEN];
};

/* Users as uids (names resolved at load): [buffer] allow_users, [control]
 * flow_owner_uids. */
#define RXB_CONF_MAX_UIDS	16
struct rxb_uid_list {
	int n;
	uint32_t uid[RXB_CONF_MAX_UIDS];
};

/* Executables whose sockets [buffer] may resize: absolute paths. */
#define RXB_CONF_MAX_EXES	8
struct rxb_path_list {
	int n;
	char path[RXB_CONF_MAX_EXES][RXB_CONF_PATH_LEN];
};

/* A group name resolved at load time; empty = the daemon's own group. */
struct rxb_group {
	char name[RXB_CONF_GROUP_LEN];
	gid_t gid;		/* (gid_t)-1 when name is empty */
};

struct rxb_config {
	struct {
		char state_dir[RXB_CONF_PATH_LEN];
		char runtime_dir[RXB_CONF_PATH_LEN];
		char ctl_socket[RXB_CONF_SOCK_LEN];
		uint32_t ctl_socket_mode;	/* permission bits, <= 0777 */
		struct rxb_group ctl_group;
		int log_level;			/* enum rxb_log_level */
	} daemon;
	struct {
		uint32_t interval_ms;
		uint32_t net_probe_every;	/* per-packet probes 1 epoch in N
						 * once learned (daemon/collect/netplan.h) */
		uint32_t net_probe_learn_s;	/* every epoch this long after a
						 * change of the receive path */
		struct rxb_port_list watch_ports;
		uint32_t flow_linger_s;		/* an unwatched port after its last sender */
		enum rxb_attach_mode attach;
		bool bpf_stats;
		struct rxb_ifname_list devices;	/* empty: all up, non-loopback */
		uint32_t fallback_rx_ring;
		uint32_t fallback_rx_max_frames;
		uint32_t fallback_rx_usecs;
	} measure;
	struct {
		uint32_t payload_bytes;
		uint64_t default_file_bytes;
		double default_one_way_delay_ms;
		uint64_t line_rate_bps;
		uint64_t min_rate_bps;
		uint32_t sweep_points;
		enum rxb_batch_rule batch_rule;
		int rounds;	/* enum bneck_rounds: 0 burst, 1 seed */
		int loss;	/* 0 queue, 1 windows, 2 service */
		bool queue_depth_cost;
		bool quota_phases;
		bool drain_floor;
		bool windows_by_rate;
		double time_slack;	/* fraction of the least T */
		int loss_episodes;	/* 0 off, 1 measured, 2 windows */
		int rate_uncertainty;	/* 0 off, 1 measured */
		int capacity;		/* enum capacity_mode: 0 cost, 1 drain */
	} model;
	struct {
		struct rxb_addr_list listen_address;	/* at least one */
		uint16_t port;
		struct rxb_cidr_list allow;		/* empty: nobody */
		uint32_t max_connections;
		uint32_t max_connections_per_address;	/* IPv6: per /64 */
		uint32_t max_flows_per_address;		/* unwatched ports held */
		struct rxb_uid_list flow_owner_uids;	/* empty: any */
		uint32_t max_frame_bytes;
		uint64_t output_queue_bytes;
		uint32_t idle_timeout_s;		/* 0: never */
		uint32_t hello_timeout_s;
		double rate_change_fraction;
		uint32_t push_every_epochs;		/* 0: never */
	} control;
	struct {
		bool enabled;
		uint32_t min_window_us;
		uint32_t max_window_ms;
	} pause;
	struct {
		bool enabled;
		struct rxb_hostport listen;
		struct rxb_cidr_list allow;		/* empty: nobody */
		uint32_t max_connections;
		uint32_t max_connections_per_address;
		uint32_t timeout_s;
	} metrics;
	struct {
		bool enabled;
		struct rxb_port_list ports;	/* empty: every listening port */
		uint32_t max_peers;
		uint32_t max_points;
		uint32_t max_conns;
		uint32_t max_n;
		double tolerance;
		double rise;
		uint64_t min_stream_bps;
		double min_share;
		uint32_t settle;
		uint32_t sample_memory_s;
		double min_sample_s;
		uint32_t max_age_h;		/* 0: never */
		uint32_t save_s;
		uint32_t fits_per_epoch;
	} streams;
	struct {
		int mode;		/* enum buffer_mode: off, advise, apply */
		int policy;		/* enum buffer_policy: rrda, model */
		uint32_t dt_ms;
		uint32_t k;
		double beta;
		double omega;
		uint64_t floor_bytes;	/* 0: each socket's own size */
		uint64_t ceiling_bytes;
		double loss_target;
		double time_slack;
		struct rxb_uid_list allow_users;
		struct rxb_path_list allow_exes;
	} buffer;
};

/* ------------------------------------------------------------ the table -- */

enum config_type {
	CONFIG_UINT,		/* decimal unsigned integer in [min, max] */
	CONFIG_DOUBLE,		/* decimal number in [min, max] */
	CONFIG_SI,		/* whole quantity with optional SI suffix, in [min, max] */
	CONFIG_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	CONFIG_PATH,		/* absolute path, no "." or ".." components */
	CONFIG_ENUM,		/* one of names[]; stored as its index (an int) */
	CONFIG_PORT_LIST,	/* TCP/UDP ports 1..65535, no duplicates */
	CONFIG_CIDR_LIST,	/* IPv4/IPv6 networks, no host bits set */
	CONFIG_IFNAME_LIST,	/* network interface names */
	CONFIG_ADDRESS_LIST,	/* one or more IPv4/IPv6 addresses */
	CONFIG_MODE,		/* octal permission bits, e.g. 0660 */
	CONFIG_GROUP,		/* existing group name, or empty */
	CONFIG_LOG_LEVEL,	/* err, warning, notice, info, debug */
	CONFIG_HOSTPORT,	/* IPv4:port or [IPv6]:port */
	CONFIG_UID_LIST,	/* user names or uids, resolved to uids at load */
	CONFIG_PATH_LIST,	/* absolute paths */
};

/*
 * What a reload does with a key's new value. Every row says one or the
 * other (0 is neither, and the table test refuses it): the daemon applies
 * every CONFIG_RELOAD_LIVE key while running, and lists the changed
 * CONFIG_RELOAD_RESTART keys as needing a restart (sockets, directories,
 * how probes attach: what is made once at start-up).
 */
enum config_reload {
	CONFIG_RELOAD_LIVE = 1,
	CONFIG_RELOAD_RESTART,
};

struct config_key {
	const char *section;
	const char *key;
	enum config_type type;
	size_t offset;		/* into struct rxb_config */
	size_t size;		/* of the field there */
	const char *def;	/* the default, as it is written in the file */
	const char *doc;	/* one line */
	union {
		struct { uint64_t min, max; } u;	/* CONFIG_UINT */
		struct { double min, max; } d;		/* CONFIG_DOUBLE, CONFIG_SI */
		const char *const *names;		/* CONFIG_ENUM, NULL-terminated */
	} lim;
	enum config_reload reload;
};

/* The table, in documentation order; *n receives its length. */
const struct config_key *config_keys(size_t *n);
/* The known sections, NULL-terminated, in documentation order. */
const char *const *config_sections(void);

/* ---------------------------------------------------------------- API -- */

/* Every key at its default. */
void config_defaults(struct rxb_config *cfg);

/*
 * Defaults, then the file at @path. 0 on success. On failure returns
 * -errno (-ENOENT, -EACCES, -EFBIG, ... for the file; -EINVAL for its
 * content), writes one message to @err ("FILE:LINE: [section] key: problem
 * (expected ...)" or "FILE: problem") and leaves *@out untouched.
 */
int config_load(const char *path, struct rxb_config *out, char *err, size_t errlen);

/*
 * The same for text in memory; @name stands for the file in messages.
 * @text need not be NUL-terminated. Used by config_load(), tests and the
 * fuzzer.
 */
int config_parse(const char *text, size_t len, const char *name,
		 struct rxb_config *out, char *err, size_t errlen);

/*
 * @key's value in @cfg as it would be written in the file (canonical form:
 * parsing it gives back the same value). Returns snprintf-style length.
 */
int config_format(const struct config_key *key, const struct rxb_config *cfg,
		  char *buf, size_t size);

/* Called by config_diff() for each key whose value differs. */
typedef void (*config_change_fn)(void *ctx, const struct config_key *key,
				 const char *old_val, const char *new_val);

/* Report every key that differs between @old and @new; returns their count. */
int config_diff(const struct rxb_config *old, const struct rxb_config *new,
		config_change_fn fn, void *ctx);

/*
 * The [control] limits in the control server's units (and epoch_ms from
 * [measure] interval_ms); listen addresses and port are passed to
 * sendsrv_listen() separately.
 */
void config_sendsrv_limits(const struct rxb_config *cfg, struct sendsrv_limits *lim);
/* The other way: the keys config_sendsrv_limits() reads, from @lim. */
void config_from_sendsrv_limits(const struct sendsrv_limits *lim, struct rxb_config *cfg);

#endif
