/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneck-shape's configuration: the receivers to shape for and the global
 * settings, from a small INI file, the command line, or both.
 *
 *	[shape]				; optional, global settings
 *	hold_s = 30
 *	fallback = unshaped		; or a rate, e.g. 500M
 *
 *	[receiver lab1]			; one section per receiver
 *	daemon = recv1.example.org	; its rxbneckd, HOST[:PORT]
 *	flow_port = 9000		; the receive port of the flow
 *	proto = udp
 *	dev = eth0			; default: the route's device
 *
 * The command line gives the same keys as options (--hold, --fallback, ...;
 * `--receiver HOST[:PORT]` starts a receiver and --flow-port, --proto,
 * --dev, ... that follow it belong to it); with --config the file is read
 * first and the command line adds receivers and overrides global keys.
 * Unknown keys, bad values and missing required keys are errors that name
 * the key and, for files, the section; nothing is half-applied: the output
 * is written only when everything parsed.
 *
 * Only the parsing lives here (no I/O but reading the file); resolving
 * names and devices is the tc side's business.
 */
#ifndef SHAPE_CONF_H
#define SHAPE_CONF_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHAPE_MAX_RECEIVERS	64
#define SHAPE_MAX_ADDRS		8	/* data addresses per receiver */
#define SHAPE_NAME_MAX		64	/* receiver name, terminator included */
#define SHAPE_HOST_MAX		256
#define SHAPE_PATH_MAX		256
#define SHAPE_ADDR_TEXT_MAX	64	/* one address literal, terminator included */
#define SHAPE_CONF_MAX_FILE	(1 << 20)

#define SHAPE_DEFAULT_HANDLE	0x7862	/* "xb": the qdisc handle major */
#define SHAPE_DEFAULT_STATE_DIR	"/run/rxbneck-shape"

enum shape_fallback {
	SHAPE_FALLBACK_UNSHAPED = 0,	/* no shaping without advice */
	SHAPE_FALLBACK_RATE = 1,	/* the configured fallback rate */
};

struct shape_receiver_conf {
	char name[SHAPE_NAME_MAX];	/* section name, or HOST/FLOW_PORT */
	char host[SHAPE_HOST_MAX];	/* rxbneckd host */
	uint16_t port;			/* rxbneckd port */
	uint16_t flow_port;		/* receive port of the flow (required) */
	uint8_t proto;			/* IPPROTO_UDP or IPPROTO_TCP */
	char dev[IF_NAMESIZE];		/* egress device, "" = the route's */
	/* Destination addresses of the data, literals; none = host's. */
	char addr[SHAPE_MAX_ADDRS][SHAPE_ADDR_TEXT_MAX];
	unsigned naddr;
	uint32_t payload_bytes;		/* per packet; 0 = from the device MTU */
	uint32_t rtt_us;		/* told to the daemon; 0 = unknown */
	uint64_t file_bytes;		/* told to the daemon; 0 = unknown */
	uint64_t max_rate_bps;		/* told to the daemon; 0 = unknown */
};

struct shape_conf {
	struct shape_receiver_conf rx[SHAPE_MAX_RECEIVERS];
	unsigned nrx;
	char state_dir[SHAPE_PATH_MAX];
	uint16_t handle;		/* major of the root qdisc's handle */
	uint64_t queue_bytes;		/* each class's FIFO limit */
	uint64_t burst_bytes;		/* HTB burst; 0 = automatic */
	uint64_t hold_ms;		/* keep the last advice this long */
	enum shape_fallback fallback;
	uint64_t fallback_bps;		/* payload bits/s, with SHAPE_FALLBACK_RATE */
	uint64_t status_interval_ms;	/* 0 = no periodic status */
	uint32_t stats_interval_ms;	/* class counters polled this often */
	uint32_t connect_timeout_ms;
	uint64_t reconnect_max_ms;	/* back-off ceiling between attempts */
	int log_level;			/* enum rxb_log_level */
};

/* What the command line asks for besides the configuration. */
struct shape_cli {
	bool help;
	bool version;
	bool dry_run;
	bool json;
	bool cleanup;			/* remove leftovers and exit */
	char config_path[SHAPE_PATH_MAX];	/* "" = none */
};

void shape_conf_defaults(struct shape_conf *c);

/*
 * Parse an INI text (@len bytes, NULs not allowed) named @name in messages
 * into @c, which holds the defaults or earlier settings. 0 on success;
 * a negative errno and a one-line message "NAME: [section] key: why" in
 * @err otherwise, with @c untouched.
 */
int shape_conf_parse_ini(const char *text, size_t len, const char *name,
			 struct shape_conf *c, char *err, size_t errlen);
/* Read the file at @path (at most SHAPE_CONF_MAX_FILE bytes) and parse it. */
int shape_conf_load(const char *path, struct shape_conf *c, char *err, size_t errlen);

/*
 * Parse the command line. --config is loaded first (wherever it appears),
 * then the options in order. 0 on success (check cli->help/version), a
 * negative errno and a message naming the option otherwise; @c is then
 * left as it was. Uses getopt_long (resets optind).
 */
int shape_conf_parse_args(int argc, char **argv, struct shape_conf *c,
			  struct shape_cli *cli, char *err, size_t errlen);

/*
 * Rules across keys: at least one receiver (unless @cleanup_only), every
 * receiver with a daemon and a flow port, names unique, no two receivers
 * with the same literal data address, protocol and flow port.
 */
int shape_conf_check(const struct shape_conf *c, bool cleanup_only, char *err, size_t errlen);

/*
 * Split "HOST", "HOST:PORT", "[V6]", "[V6]:PORT" or a bare IPv6 literal
 * into @host and *@port (left alone when absent). 0 or -EINVAL.
 */
int shape_conf_split_hostport(const char *s, char *host, size_t hostlen, uint16_t *port);

/* One line per key: name, option, what it takes, default. For --help. */
void shape_conf_describe(char *buf, size_t size, bool receiver_keys);

#endif
