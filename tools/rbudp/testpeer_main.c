// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbudp-testpeer: a scripted stand-in for rxbneckd's sender side, for
 * testing rxbneck-send --follow. It is the daemon's own server module
 * (daemon/serve/sendsrv) in a small epoll loop that publishes a given sequence of
 * RATE and PAUSE values for one flow, timed from the first sender's HELLO,
 * and logs what it published (CLOCK_MONOTONIC, comparable with the
 * sender's times on the same host) as JSON lines. Not installed.
 *
 *	rbudp-testpeer --port 7440 --flow 9000 --allow 0.0.0.0/0 \
 *		--rate 0:2G --rate 300:1G --pause 100:5000:20000 \
 *		--pause 600:0:2000:10000:20 --cancel 900 --log events.jsonl
 *
 * The options: help[] below (rbudp-testpeer --help).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tools/rbudp/cli.h"

static const char *const prog = "rbudp-testpeer";

#define MAX_EVENTS 256

enum ev_kind { EV_RATE, EV_PAUSE, EV_CANCEL };

struct event {
	enum ev_kind kind;
	uint64_t at_ms;
	struct rxbneck_rate rate;
	struct rxbneck_pause pause;
	bool done;
};

struct peer {
	int epfd;
	struct sendsrv *s;
	uint16_t flow;
	struct event ev[MAX_EVENTS];
	unsigned n_ev;
	uint64_t t0_ns;			/* first HELLO; 0 before */
	uint64_t epoch;
	FILE *log;
	bool goodbye;
};

static int p_add(void *ctx, int fd, uint32_t ev)
{
	struct peer *p = ctx;
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

static int p_mod(void *ctx, int fd, uint32_t ev)
{
	struct peer *p = ctx;
	struct epoll_event e = { .events = ev, .data.fd = fd };

	return epoll_ctl(p->epfd, EPOLL_CTL_MOD, fd, &e) < 0 ? -errno : 0;
}

static void p_del(void *ctx, int fd)
{
	struct peer *p = ctx;

	epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void logf_(struct peer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->log)
		return;
	va_start(ap, fmt);
	vfprintf(p->log, fmt, ap);
	va_end(ap);
	fputc('\n', p->log);
	fflush(p->log);
}

/* Publish every event due at @now_ns. */
static void run_due(struct peer *p, uint64_t now_ns)
{
	for (unsigned i = 0; i < p->n_ev; i++) {
		struct event *e = &p->ev[i];
		int n;

		if (e->done || !p->t0_ns || now_ns < p->t0_ns + e->at_ms * RXB_NSEC_PER_MSEC)
			continue;
		e->done = true;
		if (e->kind == EV_RATE) {
			e->rate.epoch = ++p->epoch;
			n = sendsrv_publish_rate(p->s, &e->rate, NULL);
			logf_(p, "{\"event\":\"rate\",\"t_ns\":%llu,\"rate_bps\":%llu,\"sent_to\":%d}",
			      (unsigned long long)rxb_mono_ns(),
			      (unsigned long long)e->rate.rate_bps, n);
		} else {
			e->pause.epoch = ++p->epoch;
			n = sendsrv_publish_pause(p->s, &e->pause);
			logf_(p, "{\"event\":\"%s\",\"t_ns\":%llu,\"start_in_us\":%llu,"
			      "\"duration_us\":%llu,\"period_us\":%llu,\"repeat\":%u,\"sent_to\":%d}",
			      e->kind == EV_CANCEL ? "cancel" : "pause",
			      (unsigned long long)rxb_mono_ns(),
			      (unsigned long long)e->pause.start_in_us,
			      (unsigned long long)e->pause.duration_us,
			      (unsigned long long)e->pause.period_us, e->pause.repeat_count, n);
		}
	}
}

static int on_hello(void *ctx, const struct sendsrv_peer *sp)
{
	struct peer *p = ctx;

	logf_(p, "{\"event\":\"hello\",\"t_ns\":%llu,\"flow_port\":%u,\"payload_bytes\":%u,"
	      "\"file_bytes\":%llu,\"rtt_us\":%u,\"max_rate_bps\":%llu,\"subscribe\":%u,"
	      "\"name\":\"%s\"}",
	      (unsigned long long)rxb_mono_ns(), sp->hello.flow_port,
	      sp->hello.payload_bytes, (unsigned long long)sp->hello.file_bytes,
	      sp->hello.rtt_us, (unsigned long long)sp->hello.max_rate_bps,
	      sp->hello.subscribe, sp->hello.name);
	if (sp->hello.flow_port != p->flow)
		return RXBNECK_ERR_REFUSED;
	if (!p->t0_ns) {
		p->t0_ns = rxb_mono_ns();
		/* Events at 0 ms go out now, so the rate follows HELLO_ACK. */
		run_due(p, p->t0_ns);
	}
	return 0;
}

static void on_report(void *ctx, const struct sendsrv_peer *sp, const struct rxbneck_report *r)
{
	struct peer *p = ctx;

	(void)sp;
	logf_(p, "{\"event\":\"report\",\"t_ns\":%llu,\"rounds\":%u,\"file_bytes\":%llu,"
	      "\"elapsed_us\":%llu,\"rate_bps\":%llu,\"pkts_sent\":%llu,\"pkts_resent\":%llu,"
	      "\"pkts_lost_first\":%llu,\"flags\":%u}", (unsigned long long)rxb_mono_ns(),
	      r->rounds, (unsigned long long)r->file_bytes, (unsigned long long)r->elapsed_us,
	      (unsigned long long)r->rate_bps, (unsigned long long)r->pkts_sent,
	      (unsigned long long)r->pkts_resent, (unsigned long long)r->pkts_lost_first,
	      r->flags);
}

static void on_goodbye(void *ctx, const struct sendsrv_peer *sp, int why)
{
	struct peer *p = ctx;

	(void)sp;
	logf_(p, "{\"event\":\"goodbye\",\"t_ns\":%llu,\"why\":%d}",
	      (unsigned long long)rxb_mono_ns(), why);
	p->goodbye = true;
}

/* Split "a:b:c" into up to @max unsigned fields (SI suffixes allowed). */
static unsigned fields(const char *opt, const char *arg, uint64_t *v, unsigned max)
{
	char buf[128], *save = NULL, *tok;
	unsigned n = 0;

	if (rxb_strlcpy(buf, arg, sizeof(buf)) >= sizeof(buf))
		rbudp_cli_usage_error(prog, "%s '%s': too long", opt, arg);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (n == max)
			rbudp_cli_usage_error(prog, "%s '%s': too many fields", opt, arg);
		v[n++] = rbudp_cli_si(prog, opt, tok, 0, 1e13);
	}
	return n;
}

static struct event *add_event(struct peer *p, const char *opt)
{
	if (p->n_ev == MAX_EVENTS)
		rbudp_cli_usage_error(prog, "%s: more than %d events", opt, MAX_EVENTS);
	memset(&p->ev[p->n_ev], 0, sizeof(p->ev[0]));
	return &p->ev[p->n_ev++];
}

static volatile sig_atomic_t stop;

static const char help[] =
"Usage: rbudp-testpeer --port PORT --flow PORT [OPTIONS]\n"
"\n"
"A scripted stand-in for rxbneckd's sender side (its own sendsrv module),\n"
"for testing rxbneck-send --follow: publishes the RATE and PAUSE values\n"
"given, timed from the first sender's HELLO, and logs what it published as\n"
"JSON lines (CLOCK_MONOTONIC ns). Not installed.\n"
"\n"
"  --listen ADDR          address to listen on (default 127.0.0.1)\n"
"  --port PORT            the sender protocol's port (required)\n"
"  --flow PORT            the flow's port its messages are about (required)\n"
"  --allow CIDR           senders allowed (repeatable; default the server's)\n"
"  --rate T_MS:BPS        at T ms after the HELLO publish rate BPS\n"
"  --pause T_MS:S_US:D_US[:P_US:N]\n"
"                         at T ms send PAUSE start_in S, duration D, period P,\n"
"                         repeat N (one-shot without P and N)\n"
"  --cancel T_MS          at T ms send a PAUSE CANCEL\n"
"  --log FILE             the JSON lines (default: none)\n"
"  --timeout S            exit after S seconds (default 60)\n"
"  --exit-after-goodbye   exit when the sender leaves\n"
"  --help                 this text\n"
"\n"
"Exit status: 0 ran to its end, 1 could not listen or log, 2 bad usage.\n";

struct testpeer_args {
	const char *listen_addr, *log_path;
	uint64_t port, timeout_s;
	bool exit_after_goodbye;
};

static void add_rate(struct peer *p, const char *arg)
{
	uint64_t v[2];
	struct event *e;

	if (fields("--rate", arg, v, 2) != 2)
		rbudp_cli_usage_error(prog, "--rate expects T_MS:BPS");
	e = add_event(p, "--rate");
	e->kind = EV_RATE;
	e->at_ms = v[0];
	e->rate.rate_bps = v[1];
	e->rate.confidence = 1000;
}

static void add_pause(struct peer *p, const char *arg)
{
	uint64_t v[5];
	unsigned n = fields("--pause", arg, v, 5);
	struct event *e;

	if (n != 3 && n != 5)
		rbudp_cli_usage_error(prog, "--pause expects T_MS:S_US:D_US[:P_US:N]");
	e = add_event(p, "--pause");
	e->kind = EV_PAUSE;
	e->at_ms = v[0];
	e->pause.start_in_us = v[1];
	e->pause.duration_us = v[2];
	e->pause.period_us = n == 5 ? v[3] : 0;
	e->pause.repeat_count = n == 5 ? (uint32_t)v[4] : 1;
	e->pause.confidence = 1000;
}

/* The command line into @a, @p's flow and events and @lim's allow-list. */
static void parse_args(int argc, char **argv, struct testpeer_args *a, struct peer *p,
		       struct sendsrv_limits *lim)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "flow", required_argument, NULL, 'f' },
		{ "allow", required_argument, NULL, 'a' },
		{ "rate", required_argument, NULL, 'r' },
		{ "pause", required_argument, NULL, 'P' },
		{ "cancel", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'L' },
		{ "timeout", required_argument, NULL, 't' },
		{ "exit-after-goodbye", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool allow_set = false;
	struct event *e;
	int opt;

	*a = (struct testpeer_args){ .listen_addr = "127.0.0.1", .timeout_s = 60 };
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h': fputs(help, stdout); exit(0);
		case 'l': a->listen_addr = optarg; break;
		case 'p': a->port = rbudp_cli_u64(prog, "--port", optarg, 1, 65535); break;
		case 'f': p->flow = (uint16_t)rbudp_cli_u64(prog, "--flow", optarg, 1, 65535); break;
		case 'a':
			if (!allow_set)
				lim->n_allow = 0;
			allow_set = true;
			if (lim->n_allow == SENDSRV_MAX_ALLOW ||
			    sendsrv_cidr_parse(optarg, &lim->allow[lim->n_allow], NULL))
				rbudp_cli_usage_error(prog, "--allow '%s': not a CIDR", optarg);
			lim->n_allow++;
			break;
		case 'r': add_rate(p, optarg); break;
		case 'P': add_pause(p, optarg); break;
		case 'c':
			e = add_event(p, "--cancel");
			e->kind = EV_CANCEL;
			e->at_ms = rbudp_cli_u64(prog, "--cancel", optarg, 0, 3600000);
			e->pause.flags = RXBNECK_PAUSE_CANCEL;
			break;
		case 'L': a->log_path = optarg; break;
		case 't': a->timeout_s = rbudp_cli_u64(prog, "--timeout", optarg, 1, 86400); break;
		case 'x': a->exit_after_goodbye = true; break;
		case ':':
			rbudp_cli_usage_error(prog, "%s needs a value", argv[optind - 1]);
		default:
			rbudp_cli_usage_error(prog, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		rbudp_cli_usage_error(prog, "unexpected argument '%s'", argv[optind]);
	if (!a->port || !p->flow)
		rbudp_cli_usage_error(prog, "--port and --flow are required");
	for (unsigned i = 0; i < p->n_ev; i++) {
		p->ev[i].rate.port = p->flow;
		p->ev[i].pause.port = p->flow;
	}
}

int main(int argc, char **argv)
{
	struct sendsrv_ops ops = {
		.fd_add = p_add, .fd_mod = p_mod, .fd_del = p_del,
		.on_hello = on_hello, .on_report = on_report, .on_goodbye = on_goodbye,
	};
	struct sendsrv_limits lim;
	struct peer p = { .epfd = -1 };
	struct testpeer_args a;
	uint64_t end_ns;
	int ret = 1;

	rxb_log_set_ident(prog);
	sendsrv_limits_default(&lim);
	parse_args(argc, argv, &a, &p, &lim);
	rbudp_cli_signals(&stop);
	if (a.log_path) {
		p.log = fopen(a.log_path, "we");
		if (!p.log) {
			rxb_log_errno(RXB_LOG_ERR, errno, "cannot open --log %s", a.log_path);
			return 1;
		}
	}
	p.epfd = epoll_create1(EPOLL_CLOEXEC);
	ops.ctx = &p;
	if (p.epfd < 0 || sendsrv_init(&p.s, &lim, &ops))
		goto out;
	if (sendsrv_listen(p.s, a.listen_addr, (uint16_t)a.port, NULL))
		goto out_srv;
	logf_(&p, "{\"event\":\"listening\",\"t_ns\":%llu}", (unsigned long long)rxb_mono_ns());
	end_ns = rxb_mono_ns() + a.timeout_s * RXB_NSEC_PER_SEC;
	while (!stop && rxb_mono_ns() < end_ns && !(a.exit_after_goodbye && p.goodbye)) {
		struct epoll_event ev[16];
		int n = epoll_wait(p.epfd, ev, 16, 1);

		for (int i = 0; i < n; i++)
			sendsrv_handle(p.s, ev[i].data.fd, ev[i].events);
		run_due(&p, rxb_mono_ns());
		sendsrv_tick(p.s, rxb_mono_ns());
	}
	ret = 0;
out_srv:
	sendsrv_finish(p.s);
out:
	if (p.epfd >= 0)
		close(p.epfd);
	if (p.log)
		fclose(p.log);
	return ret;
}
