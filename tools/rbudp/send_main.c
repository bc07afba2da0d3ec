// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-send: the reference Reliable Blast UDP sender.
 * Parses options, opens the data, runs the sender engine, prints a summary.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "rxbneck/client.h"
#include "tools/rbudp/auth.h"
#include "tools/rbudp/cli.h"
#include "tools/rbudp/follow.h"
#include "tools/rbudp/digest.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/sender.h"
#include "tools/rbudp/source.h"
#include "tools/rbudp/wire.h"

static const char *const prog = "rxbneck-send";

static void help(void)
{
	printf(
"Usage: rxbneck-send --to HOST --port PORT (--file PATH | --size BYTES)\n"
"                    (--rate BPS | --follow HOST[:PORT]) [OPTIONS]\n"
"       rxbneck-send --digest-only (--file PATH | --size BYTES)\n"
"\n"
"Send a file to rxbneck-recv with Reliable Blast UDP (He et al., IEEE Cluster\n"
"2002): blast every packet over UDP at a paced rate, learn over a TCP control\n"
"connection which packets the receiver is missing, blast those again, until\n"
"the receiver has them all and has checked the file's digest.\n"
"\n"
"The receiver drops datagrams nobody in the session sent, and checks the\n"
"file's SHA-256 (what sha256sum prints) before it keeps it. Without\n"
"--key-file every datagram carries the session's random token: the session\n"
"secret crosses the TCP connection in the clear, so this stops off-path\n"
"spoofers only, and changes made on the way are caught by the digest at the\n"
"end. With --key-file every datagram carries a tag (UMAC-64) and every\n"
"control frame one (HMAC-SHA256) under keys derived from the pre-shared\n"
"key: on-path attackers cannot forge either. Nothing is encrypted\n"
"(docs/rbudp.md, section 4).\n"
"\n"
"Where to send\n"
"  --to HOST             receiver host name or address\n"
"  --port PORT           receiver port; the same number is used for TCP\n"
"                        (control) and UDP (data)\n"
"\n"
"What to send (exactly one)\n"
"  --file PATH           a regular file (mapped read-only; it must not change\n"
"                        during the transfer)\n"
"  --size BYTES          synthetic data of this size, computed from the file\n"
"                        offset (see docs/rbudp.md), so large transfers need no\n"
"                        disk; suffixes k M G T (10^3..) and Ki Mi Gi Ti (2^10..)\n"
"\n"
"How fast (exactly one)\n"
"  --rate BPS            fixed sending rate in UDP payload bits per second (the\n"
"                        16-byte datagram header and the file data: the unit of\n"
"                        rxbneckd's RATE and the B_send of Banerjee et al.'s\n"
"                        eq. 2), e.g. 950M, 4G\n"
"  --follow HOST[:PORT]  take the rate from rxbneckd on the receiving host (port\n"
"                        7440 by default) and obey its PAUSE windows: start at\n"
"                        its current RATE, re-pace within a blast when a new one\n"
"                        arrives, stop sending during pauses (PROTOCOL.md §6.2).\n"
"                        The flow is named by --port; the RTT in the HELLO is\n"
"                        --rtt-ms\n"
"  --max-rate BPS        with --follow: the sender's own ceiling, announced to\n"
"                        rxbneckd (HELLO max_rate_bps, which bounds its rate\n"
"                        search) and applied to every RATE it sends\n"
"  --no-pause            with --follow: follow RATE only, never pause (RBUDP\n"
"                        without the + of Datta et al.'s RBUDP+)\n"
"  --follow-wait SECONDS with --follow: how long to wait for the first RATE\n"
"                        before giving up (default 10)\n"
"  --rtt-ms MS           RTT estimate sent to rxbneckd; it also sets the lead by\n"
"                        which pauses start early (default 2 x --one-way-delay-ms)\n"
"  --pause-lead-ms MS    start pauses this much before the window opens at the\n"
"                        receiver. Default: the RTT when --rtt-ms is given (a\n"
"                        real path, PROTOCOL.md §6.2); 0 otherwise, because the\n"
"                        emulated delay does not delay datagrams or PAUSE frames\n"
"  --payload BYTES       file bytes per datagram (default 1456: with the 16-byte\n"
"                        header (sequence, round, token or tag), a 1472-byte UDP\n"
"                        payload fills a 1500-byte MTU over IPv4). 16..65491\n"
"  --batch N             datagrams handed to the kernel per sendmmsg() call, at\n"
"                        most (default 64)\n"
"  --burst N             most datagrams sent back to back to catch up after the\n"
"                        sender fell behind its schedule (default: --batch)\n"
"  --gso N               UDP GSO: up to N datagrams per send (UDP_SEGMENT; at\n"
"                        most 64 and 64 KiB). Each datagram keeps its own header;\n"
"                        the stack cuts them apart late, which saves most of the\n"
"                        per-datagram cost: on the project's VM the sender paces\n"
"                        6 Gb/s with it and tops out near 3-4 Gb/s without. On\n"
"                        veth the pieces travel as one GSO packet unless the\n"
"                        sender's device has tx-udp-segmentation off (see\n"
"                        docs/rbudp.md). 0 or 1: off. Default 16; falls back to\n"
"                        one datagram per send where the kernel or path refuses\n"
"                        it\n"
"  --sndbuf BYTES        UDP send buffer size (default: the system's)\n"
"\n"
"Emulated path\n"
"  --one-way-delay-ms MS delay the start of every blast by MS (at most 10000)\n"
"                        and ask the receiver to delay its feedback by the same\n"
"                        (Banerjee et al.'s emulation); every round then costs\n"
"                        2 x MS more.\n"
"                        The receiver's own --one-way-delay-ms, if given, wins\n"
"                        for the feedback direction. Default 0\n"
"\n"
"Integrity\n"
"  --key-file PATH       pre-shared key (the same file on the receiver; at least\n"
"                        16 bytes, e.g. head -c 32 /dev/urandom; mode 0600):\n"
"                        both ends prove they hold it before anything is sent,\n"
"                        and the session keys derive from it, so an on-path\n"
"                        attacker can neither forge datagrams nor take over the\n"
"                        control connection\n"
"  --digest-only         print the SHA-256 digest of --file or --size data and\n"
"                        exit (the value the receiver checks; for --file the\n"
"                        same as sha256sum)\n"
"\n"
"Limits\n"
"  --max-rounds N        give up after N rounds (default 1000)\n"
"  --stall-rounds N      give up after N consecutive rounds in which nothing\n"
"                        arrived (default 3)\n"
"  --timeout SECONDS     connect, set-up and per-round feedback timeout\n"
"                        (default 30)\n"
"\n"
"Output\n"
"  --json                print the summary as one JSON object on stdout\n"
"  --quiet               no progress lines on stderr, only warnings and errors\n"
"  --log-level LEVEL     err, warning, notice, info (default) or debug\n"
"  --help, --version\n"
"\n"
"Progress goes to stderr twice a second. The summary (stdout) has the transfer\n"
"time (SETUP_OK to COMPLETE, the T of Banerjee et al.'s eq. 2), rounds,\n"
"datagrams sent and lost per round, the rate achieved by the pacing, the\n"
"digest check, and with --follow the rates used and the pause time honoured.\n"
"\n"
"Exit status: 0 transfer complete and verified, 1 transfer failed, 2 usage.\n"
"\n"
"Examples:\n"
"  rxbneck-recv --port 9000 --output /tmp/copy &\n"
"  rxbneck-send --to 127.0.0.1 --port 9000 --size 200M --rate 4G --json\n"
"  rxbneck-send --to recv.example.org --port 9000 --file data.h5 \\\n"
"               --follow recv.example.org --rtt-ms 40\n");
}

enum {
	OPT_TO = 256, OPT_PORT, OPT_FILE, OPT_SIZE, OPT_RATE, OPT_PAYLOAD, OPT_BATCH,
	OPT_BURST, OPT_GSO, OPT_SNDBUF, OPT_DELAY, OPT_MAX_ROUNDS, OPT_STALL, OPT_FOLLOW,
	OPT_NO_PAUSE, OPT_FOLLOW_WAIT, OPT_RTT, OPT_LEAD, OPT_MAX_RATE, OPT_DIGEST_ONLY,
};

static const struct option longopts[] = {
	{ "to", required_argument, NULL, OPT_TO },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "follow", required_argument, NULL, OPT_FOLLOW },
	{ "no-pause", no_argument, NULL, OPT_NO_PAUSE },
	{ "max-rate", required_argument, NULL, OPT_MAX_RATE },
	{ "follow-wait", required_argument, NULL, OPT_FOLLOW_WAIT },
	{ "rtt-ms", required_argument, NULL, OPT_RTT },
	{ "pause-lead-ms", required_argument, NULL, OPT_LEAD },
	{ "payload", required_argument, NULL, OPT_PAYLOAD },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "gso", required_argument, NULL, OPT_GSO },
	{ "sndbuf", required_argument, NULL, OPT_SNDBUF },
	{ "one-way-delay-ms", required_argument, NULL, OPT_DELAY },
	{ "max-rounds", required_argument, NULL, OPT_MAX_ROUNDS },
	{ "stall-rounds", required_argument, NULL, OPT_STALL },
	{ "digest-only", no_argument, NULL, OPT_DIGEST_ONLY },
	RBUDP_CLI_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

struct cli {
	struct rbudp_send_opts o;
	const char *follow;		/* --follow argument */
	char follow_host[256];
	uint16_t follow_port;
	bool no_pause;
	uint64_t max_rate_bps;		/* --max-rate, 0: none */
	int follow_wait_ms;
	int64_t rtt_ns;			/* < 0: 2 x delay */
	int64_t lead_ns;		/* < 0: the library's default */
	const char *file;
	uint64_t size_bytes;
	uint32_t payload_bytes;
	bool digest_only;
	struct rbudp_cli_common com;	/* --timeout, --key-file, --json, --quiet */
};

static void parse_check(struct cli *c);

static void parse(int argc, char **argv, struct cli *c)
{
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_TO:	c->o.host = optarg; break;
		case OPT_PORT:
			c->o.port = (uint16_t)rbudp_cli_u64(prog, "--port", optarg, 1, 65535);
			break;
		case OPT_FILE:	c->file = optarg; break;
		case OPT_SIZE:
			c->size_bytes = rbudp_cli_si(prog, "--size", optarg, 1, 1e15);
			break;
		case OPT_RATE:
			c->o.rate_bps = rbudp_cli_si(prog, "--rate", optarg, 1e3, 1e12);
			break;
		case OPT_FOLLOW:
			c->follow = optarg;
			if (rbudp_net_split_hostport(optarg, c->follow_host, sizeof(c->follow_host),
						     &c->follow_port, RXBNECK_DEFAULT_PORT))
				rbudp_cli_usage_error(prog, "--follow '%s': expected HOST, HOST:PORT "
						      "or [IPV6]:PORT", optarg);
			break;
		case OPT_NO_PAUSE:	c->no_pause = true; break;
		case OPT_MAX_RATE:
			c->max_rate_bps = rbudp_cli_si(prog, "--max-rate", optarg, 1e3, 1e12);
			break;
		case OPT_FOLLOW_WAIT:
			c->follow_wait_ms = (int)rbudp_cli_u64(prog, "--follow-wait", optarg, 1,
							       3600) * 1000;
			break;
		case OPT_RTT:
			c->rtt_ns = (int64_t)rbudp_cli_ms(prog, "--rtt-ms", optarg, 60000);
			break;
		case OPT_LEAD:
			c->lead_ns = (int64_t)rbudp_cli_ms(prog, "--pause-lead-ms", optarg, 60000);
			break;
		case OPT_PAYLOAD:
			c->payload_bytes = (uint32_t)rbudp_cli_u64(prog, "--payload", optarg,
				RBUDP_PAYLOAD_MIN, RBUDP_PAYLOAD_MAX);
			break;
		case OPT_BATCH:
			c->o.batch_pkts = (uint32_t)rbudp_cli_u64(prog, "--batch", optarg, 1, 1024);
			break;
		case OPT_BURST:
			c->o.burst_pkts = (uint32_t)rbudp_cli_u64(prog, "--burst", optarg, 1,
								  1u << 20);
			break;
		case OPT_GSO:
			c->o.gso_segs = (uint32_t)rbudp_cli_u64(prog, "--gso", optarg, 0, 64);
			break;
		case OPT_SNDBUF:
			c->o.sndbuf_bytes = (int)rbudp_cli_si(prog, "--sndbuf", optarg, 4096,
							      1 << 30);
			break;
		case OPT_DELAY:
			c->o.delay_ns = rbudp_cli_ms(prog, "--one-way-delay-ms", optarg, 10000);
			break;
		case OPT_MAX_ROUNDS:
			c->o.max_rounds = (uint32_t)rbudp_cli_u64(prog, "--max-rounds", optarg, 1,
								  1000000);
			break;
		case OPT_STALL:
			c->o.stall_rounds = (uint32_t)rbudp_cli_u64(prog, "--stall-rounds", optarg,
								    1, 1000000);
			break;
		case OPT_DIGEST_ONLY:	c->digest_only = true; break;
		default:
			rbudp_cli_common_opt(prog, opt, argv, help, &c->com);
		}
	}
	rbudp_cli_common_end(prog, argc, argv, &c->com, &c->o.timeout_ms);
	parse_check(c);
}

/* The options' combinations, and the defaults that follow from others. */
static void parse_check(struct cli *c)
{
	if (!!c->file == !!c->size_bytes)
		rbudp_cli_usage_error(prog, "give exactly one of --file PATH and --size BYTES");
	if (c->digest_only)
		return;
	if (!c->o.host)
		rbudp_cli_usage_error(prog, "--to HOST is required");
	if (!c->o.port)
		rbudp_cli_usage_error(prog, "--port PORT is required");
	if (!c->o.rate_bps == !c->follow)
		rbudp_cli_usage_error(prog, "give exactly one of --rate BPS and --follow HOST[:PORT]");
	if (!c->follow && (c->no_pause || c->follow_wait_ms || c->lead_ns >= 0 ||
			   c->rtt_ns >= 0 || c->max_rate_bps))
		rbudp_cli_usage_error(prog, "--no-pause, --follow-wait, --rtt-ms, --pause-lead-ms "
				      "and --max-rate need --follow");
	if (!c->follow_wait_ms)
		c->follow_wait_ms = 10000;
	if (!c->o.burst_pkts)
		c->o.burst_pkts = c->o.batch_pkts;
	if (c->rtt_ns < 0) {
		/* The emulated delay holds blast starts and feedback, but the
		 * datagrams and rxbneckd's PAUSE frames travel undelayed: a pause
		 * needs no lead then. The daemon still learns the emulated RTT. */
		c->rtt_ns = 2 * (int64_t)c->o.delay_ns;
		if (c->lead_ns < 0)
			c->lead_ns = 0;
	}
}

static double rate_of(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes * 8e9 / (double)ns : NAN;
}

static void json_follow(struct json_writer *w, const struct cli *c, const struct rbudp_follow *f,
			uint64_t t0_ns)
{
	json_obj_begin(w, "follow");
	json_str(w, "daemon", c->follow);
	json_str(w, "daemon_name", f->daemon_name);
	json_bool(w, "obey_pause", !c->no_pause);
	json_uint_opt(w, "max_rate_bps", c->max_rate_bps != 0, c->max_rate_bps);
	json_double(w, "rtt_ms", (double)c->rtt_ns / 1e6);
	json_double(w, "pause_lead_ms", (double)(c->lead_ns < 0 ? c->rtt_ns : c->lead_ns) / 1e6);
	json_arr_begin(w, "rates");
	for (uint32_t i = 0; i < f->n_rates; i++) {
		const struct rbudp_follow_rate *r = &f->rates[i];

		json_obj_begin(w, NULL);
		/* Relative to the transfer start; negative: before it. */
		json_double(w, "t_s", ((double)r->t_ns - (double)t0_ns) / 1e9);
		json_uint(w, "rate_bps", r->rate_bps);
		json_double(w, "loss", r->loss);
		json_double(w, "xfer_time_s", r->xfer_time_us ? r->xfer_time_us / 1e6 : NAN);
		json_uint(w, "epoch", r->epoch);
		json_uint(w, "confidence", r->confidence);
		json_uint(w, "flags", r->flags);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_arr_begin(w, "schedules");
	for (uint32_t i = 0; i < f->n_scheds; i++) {
		const struct rbudp_follow_sched *p = &f->scheds[i];

		json_obj_begin(w, NULL);
		json_double(w, "received_s", ((double)p->received_ns - (double)t0_ns) / 1e9);
		json_bool(w, "cancel", p->cancel);
		json_double(w, "first_stop_s", ((double)p->first_stop_ns - (double)t0_ns) / 1e9);
		json_uint(w, "duration_us", p->duration_us);
		json_uint(w, "period_us", p->period_us);
		json_uint(w, "repeat_count", p->repeat_count);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_uint(w, "pause_frames", f->pause_frames);
	json_uint(w, "cancel_frames", f->cancel_frames);
	json_uint(w, "pauses_honoured", f->n_windows);
	json_double(w, "pause_time_s", (double)f->pause_ns / 1e9);
	json_arr_begin(w, "pauses");
	for (uint32_t i = 0; i < f->n_windows && i < 1000; i++) {
		json_obj_begin(w, NULL);
		json_double(w, "start_s", ((double)f->windows[i].start_ns - (double)t0_ns) / 1e9);
		json_double(w, "duration_s",
			  (double)(f->windows[i].end_ns - f->windows[i].start_ns) / 1e9);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_str(w, "connection_lost", f->connected ? NULL : f->lost);
	json_obj_end(w);
}

static void json_summary(const struct cli *c, const struct rbudp_source *src,
			 const struct rbudp_send_result *r, const struct rbudp_follow *f)
{
	double t = (double)r->transfer_ns / 1e9;
	const struct rbudp_send_round *r1 = r->n_rounds ? &r->rounds[0] : NULL;
	char digest[RBUDP_DIGEST_HEX_LEN + 1];
	struct json_writer w;

	rbudp_digest_hex(r->digest, digest);
	rbudp_cli_json_begin(&w, prog, r->ok, r->error);
	json_str(&w, "receiver", r->peer);
	json_str(&w, "source", c->file ? c->file : "synthetic");
	json_uint(&w, "file_bytes", src->file_bytes);
	json_uint(&w, "payload_bytes", src->payload_bytes);
	json_uint(&w, "dgram_bytes", src->payload_bytes + RBUDP_DGRAM_HDR);
	json_uint(&w, "total_pkts", src->total_pkts);
	json_str(&w, "mode", c->follow ? (c->no_pause ? "follow-no-pause" : "follow") : "fixed");
	json_uint_opt(&w, "rate_requested_bps", !c->follow, c->o.rate_bps);
	json_double(&w, "one_way_delay_ms", (double)c->o.delay_ns / 1e6);
	json_double(&w, "feedback_delay_ms", (double)r->feedback_delay_ns / 1e6);
	json_uint(&w, "receiver_rcvbuf_bytes", r->rcvbuf_bytes);
	json_uint(&w, "batch_pkts", c->o.batch_pkts);
	json_uint(&w, "burst_pkts", c->o.burst_pkts);
	json_uint(&w, "gso_segs", r->gso_segs > 1 ? r->gso_segs : 0);
	json_uint(&w, "t0_mono_ns", r->t0_ns);
	json_double(&w, "setup_time_s", (double)r->setup_ns / 1e9);
	json_double(&w, "transfer_time_s", r->transfer_ns ? t : NAN);
	json_double(&w, "goodput_bps", r->transfer_ns ? (double)src->file_bytes * 8 / t : NAN);
	json_double(&w, "achieved_rate_bps", r1 ? rate_of(r1->udp_bytes, r1->blast_ns) : NAN);
	json_uint(&w, "rounds", r->n_rounds);
	json_uint(&w, "pkts_sent", r->pkts_sent);
	json_uint(&w, "pkts_resent", r->pkts_sent > src->total_pkts ?
		r->pkts_sent - src->total_pkts : 0);
	json_uint(&w, "bytes_sent", r->bytes_sent);
	json_uint(&w, "udp_bytes_sent", r->udp_bytes);
	json_uint(&w, "send_calls", r->send_calls);
	json_double(&w, "pause_time_s", (double)r->pause_ns / 1e9);
	json_arr_begin(&w, "per_round");
	for (uint32_t i = 0; i < r->n_rounds; i++) {
		const struct rbudp_send_round *rs = &r->rounds[i];

		json_obj_begin(&w, NULL);
		json_uint(&w, "round", rs->round);
		json_uint(&w, "pkts_sent", rs->pkts_sent);
		json_uint(&w, "pkts_lost", rs->pkts_lost);
		json_uint(&w, "udp_bytes_sent", rs->udp_bytes);
		json_double(&w, "start_s", (double)rs->start_ns / 1e9);
		json_double(&w, "blast_time_s", (double)rs->blast_ns / 1e9);
		json_double(&w, "rate_bps", rate_of(rs->udp_bytes, rs->blast_ns));
		json_uint(&w, "rate_requested_bps", rs->rate_bps);
		json_double(&w, "pause_s", (double)rs->pause_ns / 1e9);
		json_double(&w, "feedback_wait_s", (double)rs->wait_ns / 1e9);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	if (f)
		json_follow(&w, c, f, r->t0_ns);
	json_str(&w, "auth", r->psk ? "psk" : "clear");
	json_str(&w, "digest", digest);
	json_double(&w, "digest_time_s", (double)r->digest_ns / 1e9);
	json_bool(&w, "verified", r->ok);
	json_bool(&w, "digest_checked", r->ok && r->digest_checked);
	json_double(&w, "verify_wait_s", (double)r->verify_wait_ns / 1e9);
	json_obj_end(&w);
	rbudp_cli_json_out(&w);
	json_finish(&w);
}

static void text_summary(const struct rbudp_source *src, const struct rbudp_send_result *r,
			 const struct rbudp_follow *f)
{
	double t = (double)r->transfer_ns / 1e9;
	char digest[RBUDP_DIGEST_HEX_LEN + 1];

	if (!r->ok) {
		printf("transfer FAILED: %s\n", r->error);
		return;
	}
	rbudp_digest_hex(r->digest, digest);
	printf("sent %llu bytes in %.3f s (%.3f Gb/s goodput), %u round%s, %llu datagrams "
	       "(%llu resent), %s\n",
	       (unsigned long long)src->file_bytes, t, (double)src->file_bytes * 8 / t / 1e9,
	       r->n_rounds, r->n_rounds == 1 ? "" : "s", (unsigned long long)r->pkts_sent,
	       (unsigned long long)(r->pkts_sent - src->total_pkts),
	       r->digest_checked ? "SHA-256 verified by the receiver" :
	       r->psk ? "receiver keeps no file: every datagram's tag checked, no digest" :
	       "receiver keeps no file: every datagram's token checked, no digest");
	printf("  sha256 %s%s\n", digest, r->psk ? ", pre-shared key" : "");
	for (uint32_t i = 0; i < r->n_rounds; i++) {
		const struct rbudp_send_round *rs = &r->rounds[i];

		printf("  round %u: sent %u, lost %u, blast %.3f s at %.3f Gb/s (asked %.3f)%s\n",
		       rs->round, rs->pkts_sent, rs->pkts_lost, (double)rs->blast_ns / 1e9,
		       rate_of(rs->udp_bytes, rs->blast_ns) / 1e9, (double)rs->rate_bps / 1e9,
		       rs->pause_ns ? ", paused" : "");
	}
	if (f)
		printf("  followed rxbneckd: %u rate%s, %u pause%s honoured (%.3f s)%s%s\n",
		       f->n_rates, f->n_rates == 1 ? "" : "s", f->n_windows,
		       f->n_windows == 1 ? "" : "s", (double)f->pause_ns / 1e9,
		       f->connected ? "" : ", connection lost: ", f->connected ? "" : f->lost);
}

static int open_follow(struct cli *c, const struct rbudp_source *src,
		       struct rbudp_follow *f)
{
	struct rbudp_follow_opts fo = {
		.host = c->follow_host,
		.port = c->follow_port,
		.flow_port = c->o.port,
		.dgram_bytes = src->payload_bytes + RBUDP_DGRAM_HDR,
		.file_bytes = src->file_bytes,
		.rtt_us = c->rtt_ns / 1000 > RXBNECK_TIME_MAX_US ? RXBNECK_TIME_MAX_US
							       : (uint32_t)(c->rtt_ns / 1000),
		.obey_pause = !c->no_pause,
		.pause_lead_us = c->lead_ns < 0 ? -1 : c->lead_ns / 1000,
		.first_rate_timeout_ms = c->follow_wait_ms,
		.max_rate_bps = c->max_rate_bps,
	};
	char err[512];

	if (rbudp_follow_open(f, &fo, err, sizeof(err))) {
		rxb_err("%s", err);
		rbudp_follow_close(f);
		return -1;
	}
	c->o.follow = f;
	c->o.rate_bps = rbudp_follow_rate(f);
	rxb_info("rxbneckd (%s) advises %.3f Gb/s", f->daemon_name,
		 (double)c->o.rate_bps / 1e9);
	return 0;
}

/* The file or the synthetic data; 0, or -1 with the cause logged. */
static int source_open(const struct cli *c, struct rbudp_source *src)
{
	int err;

	if (c->file)
		err = rbudp_source_open_file(src, c->file, c->payload_bytes);
	else
		err = rbudp_source_open_synth(src, c->size_bytes, c->payload_bytes);
	if (err && !c->file)
		rxb_err("--size %llu: %s", (unsigned long long)c->size_bytes,
			err == -EFBIG ? "needs more than 2^32-1 packets" : strerror(-err));
	return err ? -1 : 0;
}

/* --digest-only: the line sha256sum would print. */
static void print_digest(const struct cli *c, const struct rbudp_source *src)
{
	char hex[RBUDP_DIGEST_HEX_LEN + 1];
	uint8_t d[RBUDP_DIGEST_LEN];

	rbudp_source_digest(src, d);
	rbudp_digest_hex(d, hex);
	printf("%s  %s\n", hex, c->file ? c->file : "synthetic");
}

/* What is sent where, and at which rate. */
static void announce(const struct cli *c, const struct rbudp_source *src)
{
	if (c->follow)
		rxb_info("sending %llu bytes (%u packets of %u) to %s port %u, rate from "
			 "rxbneckd at %s%s", (unsigned long long)src->file_bytes, src->total_pkts,
			 src->payload_bytes, c->o.host, c->o.port, c->follow,
			 c->no_pause ? " (no pauses)" : "");
	else
		rxb_info("sending %llu bytes (%u packets of %u) to %s port %u at %.3f Gb/s",
			 (unsigned long long)src->file_bytes, src->total_pkts, src->payload_bytes,
			 c->o.host, c->o.port, (double)c->o.rate_bps / 1e9);
}

int main(int argc, char **argv)
{
	static volatile sig_atomic_t stop;
	struct cli c = {
		.o = {
			.batch_pkts = 64,
			.gso_segs = 16,
			.max_rounds = 1000,
			.stall_rounds = 3,
			.timeout_ms = 30000,
			.stop = &stop,
		},
		.payload_bytes = RBUDP_PAYLOAD_DEFAULT,
		.rtt_ns = -1,
		.lead_ns = -1,
	};
	struct rbudp_send_result r;
	struct rbudp_source src;
	struct rbudp_follow follow;
	static uint8_t psk[RBUDP_PSK_MAX];
	int err;

	rxb_log_set_ident(prog);
	parse(argc, argv, &c);
	c.o.progress = !c.com.quiet;
	rbudp_cli_start(&c.com, &stop);

	if (source_open(&c, &src))
		return 1;
	if (c.digest_only) {
		print_digest(&c, &src);
		rbudp_source_finish(&src);
		return 0;
	}
	if (c.com.key_file) {
		if (rbudp_cli_key(c.com.key_file, psk, &c.o.psk_len)) {
			rbudp_source_finish(&src);
			return 1;
		}
		c.o.psk = psk;
	}
	announce(&c, &src);
	if (c.follow && open_follow(&c, &src, &follow)) {
		rbudp_source_finish(&src);
		return 1;
	}
	rbudp_send_result_init(&r);
	rbudp_send_run(&c.o, &src, &r);
	if (c.follow) {
		const struct rbudp_send_round *r1 = r.n_rounds ? &r.rounds[0] : NULL;

		rbudp_follow_report(&follow, r.n_rounds, r.transfer_ns, r1 ? r1->rate_bps : 0,
				    r.pkts_sent, r.pkts_sent > src.total_pkts ?
				    r.pkts_sent - src.total_pkts : 0, r1 ? r1->pkts_lost : 0, !r.ok);
	}
	if (c.com.json)
		json_summary(&c, &src, &r, c.follow ? &follow : NULL);
	else
		text_summary(&src, &r, c.follow ? &follow : NULL);
	err = r.ok ? 0 : 1;
	if (c.follow)
		rbudp_follow_close(&follow);
	rbudp_send_result_finish(&r);
	rbudp_source_finish(&src);
	explicit_bzero(psk, sizeof(psk));
	return err;
}
