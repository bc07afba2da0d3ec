// SPDX-License-Identifier: GPL-2.0-or-later
/* `rxbneckd --measure-only`. See measure_cli.h. */
#include "daemon/collect/measure_cli.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "ctl/view/view_measure.h"
#include "daemon/collect/collect.h"
#include "daemon/collect/collect_json.h"

struct cli {
	uint64_t epochs;
	uint64_t interval_ms;
	bool json;
	uint16_t ports[RXB_MAX_SOCKS];
	int nports;
	char devices[COLLECT_MAX_DEVICES][RXB_IFNAME_LEN];
	int ndevices;
	struct collect_opts opts;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rxbneckd --measure-only [options]\n"
		"  --epochs N               epochs to print, then exit (default 5)\n"
		"  --interval-ms M          epoch length in ms (default 1000)\n"
		"  --watch-port P           local UDP/TCP port to watch (repeatable, up to %d)\n"
		"  --json                   one JSON object per epoch and line (without it:\n"
		"                           the same record as text, '-' where not measured)\n"
		"  --attach MODE            auto|tp_btf|raw_tp|none (default auto)\n"
		"  --probes LIST            probe groups to load: sched,netrx,sockq,blkio\n"
		"                           (default all)\n"
		"  --net-probe-every N      attach the per-packet probes (NET_RX softirq,\n"
		"                           napi_poll, socket enqueue/dequeue) for one epoch\n"
		"                           in N only (default 1: every epoch; the daemon's\n"
		"                           is [measure] net_probe_every)\n"
		"  --stage-a-every N        within those epochs, attach stage A's (NET_RX\n"
		"                           softirq, napi_poll) in one in N at most\n"
		"                           (default 1: in each; the daemon uses %d)\n"
		"  --device DEV             NIC to report (repeatable; default: all up,\n"
		"                           non-loopback devices)\n"
		"  --fallback-rx-ring N     RX ring for devices that do not report one\n"
		"                           (default 0: net.core.netdev_max_backlog)\n"
		"  --fallback-rx-max-frames N  coalescing frames for such devices (default %d)\n"
		"  --fallback-rx-usecs N    coalescing usecs for such devices (default %d)\n"
		"  --no-bpf-stats           do not enable kernel.bpf_stats_enabled\n"
		"  --no-seed                do not seed task baselines from /proc\n"
		"  --tasks                  also list the classified tasks of each epoch\n"
		"  --log-level LEVEL        err|warning|notice|info|debug (default warning)\n",
		RXB_MAX_SOCKS, COLLECT_STAGE_A_EVERY, COLLECT_DEFAULT_RX_MAX_FRAMES,
		COLLECT_DEFAULT_RX_USECS);
}

enum {
	OPT_MEASURE_ONLY = 256, OPT_EPOCHS, OPT_INTERVAL, OPT_PORT, OPT_JSON,
	OPT_ATTACH, OPT_DEVICE, OPT_FB_RING, OPT_FB_FRAMES, OPT_FB_USECS,
	OPT_NO_STATS, OPT_NO_SEED, OPT_TASKS, OPT_PROBES, OPT_LOG_LEVEL, OPT_HELP,
	OPT_NET_EVERY,
	OPT_STAGE_A_EVERY,
};

static const struct option long_opts[] = {
	{ "measure-only", no_argument, NULL, OPT_MEASURE_ONLY },
	{ "epochs", required_argument, NULL, OPT_EPOCHS },
	{ "interval-ms", required_argument, NULL, OPT_INTERVAL },
	{ "watch-port", required_argument, NULL, OPT_PORT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "fallback-rx-ring", required_argument, NULL, OPT_FB_RING },
	{ "fallback-rx-max-frames", required_argument, NULL, OPT_FB_FRAMES },
	{ "fallback-rx-usecs", required_argument, NULL, OPT_FB_USECS },
	{ "no-bpf-stats", no_argument, NULL, OPT_NO_STATS },
	{ "no-seed", no_argument, NULL, OPT_NO_SEED },
	{ "tasks", no_argument, NULL, OPT_TASKS },
	{ "probes", required_argument, NULL, OPT_PROBES },
	{ "net-probe-every", required_argument, NULL, OPT_NET_EVERY },
	{ "stage-a-every", required_argument, NULL, OPT_STAGE_A_EVERY },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* A bounded unsigned option; prints the error and returns -1 when bad. */
static int opt_u64(const char *name, const char *arg, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	int err = rxb_parse_u64(arg, min, max, out);

	if (err) {
		fprintf(stderr, "rxbneckd: --%s %s: %s (%llu..%llu)\n", name, arg,
			rxb_parse_strerror(err), (unsigned long long)min,
			(unsigned long long)max);
		return -1;
	}
	return 0;
}

/* The options that set one bounded uint32_t field of struct collect_opts. */
static const struct u32_opt {
	int opt;
	const char *name;
	uint32_t min, max;
	size_t offset;
} u32_opts[] = {
	{ OPT_FB_RING, "fallback-rx-ring", 0, UINT32_MAX,
	  offsetof(struct collect_opts, fallback_rx_ring) },
	{ OPT_FB_FRAMES, "fallback-rx-max-frames", 0, UINT32_MAX,
	  offsetof(struct collect_opts, fallback_rx_max_frames) },
	{ OPT_FB_USECS, "fallback-rx-usecs", 0, UINT32_MAX,
	  offsetof(struct collect_opts, fallback_rx_usecs) },
	{ OPT_NET_EVERY, "net-probe-every", 1, COLLECT_MAX_NET_PROBE_EVERY,
	  offsetof(struct collect_opts, net_probe_every) },
	{ OPT_STAGE_A_EVERY, "stage-a-every", 1, COLLECT_MAX_NET_PROBE_EVERY,
	  offsetof(struct collect_opts, net_stage_a_every) },
};

/* Sets the uint32_t option @opt; 1 when @opt is not one, -1 when @arg is bad. */
static int parse_u32_opt(struct collect_opts *o, int opt, const char *arg)
{
	uint64_t v;

	for (size_t i = 0; i < RXB_ARRAY_SIZE(u32_opts); i++) {
		const struct u32_opt *u = &u32_opts[i];

		if (u->opt != opt)
			continue;
		if (opt_u64(u->name, arg, u->min, u->max, &v))
			return -1;
		*(uint32_t *)((char *)o + u->offset) = (uint32_t)v;
		return 0;
	}
	return 1;
}

static int parse_one(struct cli *cli, int opt, const char *arg)
{
	uint64_t v;
	int level, mode, err;

	err = parse_u32_opt(&cli->opts, opt, arg);
	if (err <= 0)
		return err;
	switch (opt) {
	case OPT_MEASURE_ONLY:
		return 0;
	case OPT_EPOCHS:
		return opt_u64("epochs", arg, 1, 1000000, &cli->epochs);
	case OPT_INTERVAL:
		return opt_u64("interval-ms", arg, 10, 3600 * 1000, &cli->interval_ms);
	case OPT_PORT:
		if (cli->nports == RXB_MAX_SOCKS) {
			fprintf(stderr, "rxbneckd: at most %d --watch-port\n", RXB_MAX_SOCKS);
			return -1;
		}
		if (opt_u64("watch-port", arg, 1, 65535, &v))
			return -1;
		cli->ports[cli->nports++] = (uint16_t)v;
		return 0;
	case OPT_JSON:
		cli->json = true;
		return 0;
	case OPT_ATTACH:
		mode = collect_attach_parse(arg);
		if (mode < 0) {
			fprintf(stderr, "rxbneckd: --attach %s: not auto|tp_btf|raw_tp|none\n", arg);
			return -1;
		}
		cli->opts.attach = mode;
		return 0;
	case OPT_DEVICE:
		if (cli->ndevices == COLLECT_MAX_DEVICES || !arg[0] ||
		    strlen(arg) >= RXB_IFNAME_LEN) {
			fprintf(stderr, "rxbneckd: --device %s: bad name or too many\n", arg);
			return -1;
		}
		rxb_strlcpy(cli->devices[cli->ndevices++], arg, RXB_IFNAME_LEN);
		return 0;
	case OPT_NO_STATS:
		cli->opts.bpf_stats = false;
		return 0;
	case OPT_NO_SEED:
		cli->opts.seed_from_proc = false;
		return 0;
	case OPT_TASKS:
		cli->opts.report_tasks = true;
		return 0;
	case OPT_PROBES:
		mode = collect_groups_parse(arg);
		if (mode < 0) {
			fprintf(stderr, "rxbneckd: --probes %s: not a list of "
				"sched,netrx,sockq,blkio (or all)\n", arg);
			return -1;
		}
		cli->opts.groups = (unsigned)mode;
		return 0;
	case OPT_LOG_LEVEL:
		level = rxb_log_level_parse(arg);
		if (level < 0) {
			fprintf(stderr, "rxbneckd: --log-level %s: unknown level\n", arg);
			return -1;
		}
		rxb_log_set_level(level);
		return 0;
	}
	return -1;
}

/* 0 ok, 1 asked for help, -1 usage error. */
static int parse_args(struct cli *cli, int argc, char **argv)
{
	int opt;

	optind = 1;
	opterr = 0;	/* the messages below, in the daemon's own form */
	while ((opt = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		if (opt == OPT_HELP) {
			usage(stdout);
			return 1;
		}
		if (opt == ':') {
			fprintf(stderr, "rxbneckd: option '%s' needs a value\n", argv[optind - 1]);
			return -1;
		}
		if (opt == '?') {
			fprintf(stderr, "rxbneckd: unknown option '%s'\n", argv[optind - 1]);
			return -1;
		}
		if (parse_one(cli, opt, optarg))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "rxbneckd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	cli->opts.ports = cli->ports;
	cli->opts.nports = cli->nports;
	cli->opts.devices = (const char (*)[RXB_IFNAME_LEN])cli->devices;
	cli->opts.ndevices = cli->ndevices;
	return 0;
}

static int install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the sleep returns early so we stop promptly. */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		rxb_log_errno(RXB_LOG_ERR, errno, "installing signal handlers");
		return -1;
	}
	return 0;
}

/* Sleep until @deadline_ns (CLOCK_MONOTONIC) unless a signal asks to stop. */
static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / RXB_NSEC_PER_SEC),
		.tv_nsec = (long)(deadline_ns % RXB_NSEC_PER_SEC),
	};

	while (!stop_requested &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * One record: as JSON, and for people the text the same view makes of it
 * that rxbneckctl uses (ctl/view/view_measure.h), so the record is written
 * once.
 */
static int print_epoch(const struct cli *cli, struct json_writer *w, const struct rxb_epoch *e,
		       const struct collect_sched_report *tasks)
{
	json_reset(w);
	collect_json_epoch(w, NULL, e, cli->opts.report_tasks ? tasks : NULL);
	if (!json_ok(w)) {
		rxb_err("measure: formatting epoch %llu as JSON failed",
			(unsigned long long)e->seq);
		return -1;
	}
	if (cli->json) {
		fputs(json_text(w), stdout);
		fputc('\n', stdout);
	} else if (view_measure_text(stdout, json_text(w), json_len(w))) {
		return -1;
	}
	if (fflush(stdout)) {
		rxb_log_errno(RXB_LOG_ERR, errno, "measure: writing stdout");
		return -1;
	}
	return 0;
}

static int run(const struct cli *cli)
{
	struct rxb_epoch *e = malloc(sizeof(*e));
	struct collect *c = NULL;
	uint64_t next;
	struct json_writer w;
	int err, status = 0;

	if (!e) {
		rxb_err("measure: out of memory");
		return 1;
	}
	json_init(&w, false);
	err = collect_init(&c, &cli->opts);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "measure: starting the collector");
		free(e);
		json_finish(&w);
		return 1;
	}
	next = rxb_mono_ns();
	for (uint64_t i = 0; i < cli->epochs && !stop_requested; i++) {
		next += cli->interval_ms * RXB_NSEC_PER_MSEC;
		/* Between epochs the collector may look for new receivers;
		 * each look moves its next one on (else: wait for the epoch). */
		for (uint64_t p = collect_poll_due_ns(c), q; p < next && !stop_requested;
		     p = q) {
			sleep_until(p);
			collect_poll(c, rxb_mono_ns());
			q = collect_poll_due_ns(c);
			if (q <= p)
				break;
		}
		sleep_until(next);
		if (stop_requested)
			break;
		collect_epoch(c, e);
		if (print_epoch(cli, &w, e, collect_task_report(c))) {
			status = 1;
			break;
		}
	}
	collect_finish(c);
	json_finish(&w);
	free(e);
	return status;
}

int measure_cli_main(int argc, char **argv)
{
	struct cli cli = {
		.epochs = 5,
		.interval_ms = 1000,
		.opts = COLLECT_OPTS_DEFAULT,
	};
	int r;

	rxb_log_set_ident("rxbneckd");
	rxb_log_set_level(RXB_LOG_WARNING);
	r = parse_args(&cli, argc, argv);
	if (r) {
		if (r < 0)
			fputs("Try 'rxbneckd --measure-only --help'.\n", stderr);
		return r > 0 ? 0 : 2;
	}
	if (install_signals())
		return 1;
	return run(&cli);
}
