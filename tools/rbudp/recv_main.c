// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-recv: the reference Reliable Blast UDP receiver.
 * Parses options, binds the port, serves transfers, prints a summary each.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/auth.h"
#include "tools/rbudp/cli.h"
#include "tools/rbudp/digest.h"
#include "tools/rbudp/receiver.h"
#include "tools/rbudp/wire.h"

static const char *const prog = "rxbneck-recv";

static void help(void)
{
	printf(
"Usage: rxbneck-recv --port PORT (--output PATH | --discard) [OPTIONS]\n"
"       rxbneck-recv --verify FILE --digest HEX\n"
"\n"
"Receive files sent by rxbneck-send with Reliable Blast UDP. One thread reads\n"
"the UDP datagrams (recvmmsg), tallies the packets in a bitmap, and at the end\n"
"of each blast round reports the missing ones over the TCP control connection,\n"
"until the file is complete; then it checks the sender's digest and only then\n"
"renames the file into place. This thread is the receiver rxbneckd watches\n"
"(by its UDP port).\n"
"\n"
"Datagrams nobody in the session sent are dropped and counted as rejected;\n"
"the file digest is SHA-256. Without --key-file every datagram must carry\n"
"the session's random token: the session secret crosses the TCP connection\n"
"in the clear, so this stops off-path spoofers only, and changes made on the\n"
"way are caught by the digest at the end (not with --discard). With\n"
"--key-file every datagram must carry a tag (UMAC-64) and every control frame\n"
"one (HMAC-SHA256) under keys derived from the pre-shared key: on-path\n"
"attackers cannot forge either. Nothing is encrypted (docs/rbudp.md,\n"
"section 4).\n"
"\n"
"Where to listen\n"
"  --port PORT           TCP (control) and UDP (data) port\n"
"  --listen ADDR         local address to bind (default 0.0.0.0; :: for IPv6)\n"
"\n"
"What to do with the data (exactly one)\n"
"  --output PATH         write the file here. It is received into memory\n"
"                        (committed as data arrives; all at once for a sender\n"
"                        proven by --key-file), its SHA-256 checked, written\n"
"                        to PATH.rbudp-XXXXXX and renamed to PATH; a failed\n"
"                        transfer leaves nothing behind. An existing PATH is\n"
"                        replaced\n"
"  --discard             keep nothing (no file to hash: only each datagram's\n"
"                        token or tag is checked)\n"
"  --max-mem BYTES       refuse files larger than this with --output (default:\n"
"                        3/4 of physical memory)\n"
"\n"
"Receive path\n"
"  --cpu N               pin the receiving thread to CPU N\n"
"  --rcvbuf BYTES        UDP receive buffer (SO_RCVBUF; as root beyond\n"
"                        net.core.rmem_max). The kernel doubles the value; the\n"
"                        summary reports what it granted. Default: the system's\n"
"  --batch N             datagrams per recvmmsg() call (default 64)\n"
"  --poll-us US          once datagrams flow, stop sleeping on the socket and\n"
"                        read it every US microseconds instead (user-space\n"
"                        interrupt coalescing: a batch per wake-up, no wake-up\n"
"                        per datagram); back to blocking when a read finds the\n"
"                        socket empty. 0 = always block (woken per arrival).\n"
"                        Default 20\n"
"  --busy-poll           never sleep while a round's data may arrive: read the\n"
"                        socket in a loop (costs a whole CPU). The thread stays\n"
"                        runnable and leaves its CPU only when preempted - the\n"
"                        receiver RBUDP+ pause windows are about (docs/pause.md)\n"
"  --drain-ms MS         after the sender's end-of-blast marker, end the round\n"
"                        once the socket has been quiet this long (default 2), or\n"
"                        at once when every packet of the round is in\n"
"  --gap-log-ms MS       list the pauses in arrivals of at least MS within a\n"
"                        round in the summary (times the thread read the\n"
"                        datagrams; off by default)\n"
"\n"
"Emulated path\n"
"  --one-way-delay-ms MS hold every feedback message MS (at most 10000) before\n"
"                        sending it (Banerjee et al.'s emulation). Default: the\n"
"                        delay the sender announces with its own\n"
"                        --one-way-delay-ms\n"
"\n"
"Sessions and trust\n"
"  --count N             serve N transfers, then exit (default 1; 0 = forever).\n"
"                        Only real transfers count: sessions that authenticated\n"
"                        with --key-file, or (without it) that delivered an\n"
"                        authenticated datagram. Senders arriving meanwhile wait\n"
"                        while the running session has sent no data yet, and\n"
"                        are turned away (busy) once it does\n"
"  --key-file PATH       pre-shared key (the same file on the sender; at least\n"
"                        16 bytes, mode 0600). Senders must prove they hold it\n"
"                        before the receiver commits anything to them\n"
"  --setup-timeout SECONDS  a connection must complete its handshake within\n"
"                        this, and deliver its first authenticated datagram\n"
"                        this long after SETUP_OK (plus its announced one-way\n"
"                        delay), or it is dropped (default 3)\n"
"  --timeout SECONDS     give up a transfer when the sender is silent this long\n"
"                        (default 30)\n"
"  --verify FILE --digest HEX\n"
"                        check a stored file against the SHA-256 a transfer\n"
"                        reported (JSON \"digest\") and exit: 0 match, 1 not\n"
"\n"
"Output\n"
"  --json                print each transfer's summary as one JSON object per\n"
"                        line on stdout\n"
"  --quiet               no progress lines on stderr, only warnings and errors\n"
"  --log-level LEVEL     err, warning, notice, info (default) or debug\n"
"  --help, --version\n"
"\n"
"The summary has the transfer time, rounds, packets received, duplicated and\n"
"lost per round, malformed and rejected (forged) datagrams dropped, the\n"
"kernel's drop count for the socket, and the digest check.\n"
"\n"
"Exit status: 0 every transfer complete and verified, 1 a transfer failed or\n"
"the receiver was interrupted (SIGINT, SIGTERM), 2 usage.\n"
"\n"
"Example:\n"
"  rxbneck-recv --port 9000 --output /tmp/copy --cpu 1 --rcvbuf 4Mi --json\n");
}

enum {
	OPT_PORT = 256, OPT_LISTEN, OPT_OUTPUT, OPT_DISCARD, OPT_MAX_MEM, OPT_CPU,
	OPT_RCVBUF, OPT_BATCH, OPT_POLL, OPT_DRAIN, OPT_DELAY, OPT_COUNT, OPT_GAP, OPT_BUSY,
	OPT_SETUP_TIMEOUT, OPT_VERIFY, OPT_DIGEST,
};

static const struct option longopts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "discard", no_argument, NULL, OPT_DISCARD },
	{ "max-mem", required_argument, NULL, OPT_MAX_MEM },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "poll-us", required_argument, NULL, OPT_POLL },
	{ "busy-poll", no_argument, NULL, OPT_BUSY },
	{ "drain-ms", required_argument, NULL, OPT_DRAIN },
	{ "one-way-delay-ms", required_argument, NULL, OPT_DELAY },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "gap-log-ms", required_argument, NULL, OPT_GAP },
	{ "setup-timeout", required_argument, NULL, OPT_SETUP_TIMEOUT },
	{ "verify", required_argument, NULL, OPT_VERIFY },
	{ "digest", required_argument, NULL, OPT_DIGEST },
	RBUDP_CLI_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

struct cli {
	struct rbudp_recv_opts o;
	const char *listen;
	uint16_t port;
	bool discard;
	int cpu;
	int rcvbuf_bytes;
	uint64_t count;
	const char *verify;		/* --verify FILE */
	const char *digest;		/* --digest HEX */
	struct rbudp_cli_common com;	/* --timeout, --key-file, --json, --quiet */
};

static void parse(int argc, char **argv, struct cli *c)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PORT:
			c->port = (uint16_t)rbudp_cli_u64(prog, "--port", optarg, 1, 65535);
			break;
		case OPT_LISTEN:	c->listen = optarg; break;
		case OPT_OUTPUT:	c->o.output = optarg; break;
		case OPT_DISCARD:	c->discard = true; break;
		case OPT_MAX_MEM:
			c->o.max_mem_bytes = rbudp_cli_si(prog, "--max-mem", optarg, 1, 1e15);
			break;
		case OPT_CPU:
			c->cpu = (int)rbudp_cli_u64(prog, "--cpu", optarg, 0,
						    ncpu > 0 ? (uint64_t)ncpu - 1 : 0);
			break;
		case OPT_RCVBUF:
			c->rcvbuf_bytes = (int)rbudp_cli_si(prog, "--rcvbuf", optarg, 1024,
							    1 << 30);
			break;
		case OPT_BATCH:
			c->o.batch_pkts = (uint32_t)rbudp_cli_u64(prog, "--batch", optarg, 1, 1024);
			break;
		case OPT_POLL:
			c->o.poll_ns = rbudp_cli_u64(prog, "--poll-us", optarg, 0, 100000) *
				       RXB_NSEC_PER_USEC;
			break;
		case OPT_BUSY:		c->o.busy_poll = true; break;
		case OPT_DRAIN:
			c->o.drain_idle_ns = rbudp_cli_ms(prog, "--drain-ms", optarg, 10000);
			break;
		case OPT_DELAY:
			c->o.delay_ns = (int64_t)rbudp_cli_ms(prog, "--one-way-delay-ms", optarg,
							      10000);
			break;
		case OPT_GAP:
			c->o.gap_ns = rbudp_cli_ms(prog, "--gap-log-ms", optarg, 60000);
			if (!c->o.gap_ns)
				rbudp_cli_usage_error(prog, "--gap-log-ms must be above 0");
			break;
		case OPT_COUNT:
			c->count = rbudp_cli_u64(prog, "--count", optarg, 0, UINT64_MAX);
			break;
		case OPT_SETUP_TIMEOUT:
			c->o.setup_timeout_ms = (int)rbudp_cli_u64(prog, "--setup-timeout", optarg,
								   1, 3600) * 1000;
			break;
		case OPT_VERIFY:	c->verify = optarg; break;
		case OPT_DIGEST:	c->digest = optarg; break;
		default:
			rbudp_cli_common_opt(prog, opt, argv, help, &c->com);
		}
	}
	rbudp_cli_common_end(prog, argc, argv, &c->com, &c->o.timeout_ms);
	if (!!c->verify != !!c->digest)
		rbudp_cli_usage_error(prog, "--verify FILE and --digest HEX go together");
	if (c->verify)
		return;
	if (!c->port)
		rbudp_cli_usage_error(prog, "--port PORT is required");
	if (!!c->o.output == c->discard)
		rbudp_cli_usage_error(prog, "give exactly one of --output PATH and --discard");
	/* Drain for at most 50 quiet periods: a trickle must not hold a round. */
	c->o.drain_max_ns = 50 * c->o.drain_idle_ns;
}

static uint64_t default_max_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || psize <= 0)
		return 1ULL << 30;
	return (uint64_t)pages * (uint64_t)psize / 4 * 3;
}

/* --verify FILE --digest HEX: exit 0 when the file's SHA-256 is HEX. */
static int verify_file(const struct cli *c)
{
	uint8_t want[RBUDP_DIGEST_LEN], got[RBUDP_DIGEST_LEN];
	char hex[RBUDP_DIGEST_HEX_LEN + 1], err[300];
	uint64_t bytes;

	if (rbudp_digest_parse(c->digest, want))
		rbudp_cli_usage_error(prog, "--digest '%s': expected 64 hex digits (SHA-256)",
				      c->digest);
	if (rbudp_digest_file(c->verify, got, &bytes, err, sizeof(err))) {
		rxb_err("%s", err);
		return 1;
	}
	rbudp_digest_hex(got, hex);
	if (memcmp(got, want, sizeof(got)) != 0) {
		printf("%s: MISMATCH: SHA-256 %s (%llu bytes), expected %s\n", c->verify, hex,
		       (unsigned long long)bytes, c->digest);
		return 1;
	}
	printf("%s: OK (SHA-256 %s, %llu bytes)\n", c->verify, hex, (unsigned long long)bytes);
	return 0;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		rxb_log_errno(RXB_LOG_ERR, errno, "cannot pin to --cpu %d", cpu);
		return -1;
	}
	return 0;
}

static void json_summary(const struct cli *c, const struct rbudp_receiver *rx,
			 const struct rbudp_recv_result *r)
{
	const struct rbudp_setup *su = &r->setup;
	char digest[RBUDP_DIGEST_HEX_LEN + 1];
	struct json_writer w;

	rbudp_cli_json_begin(&w, prog, r->ok, r->error);
	json_bool(&w, "counted", r->counted);
	json_str(&w, "auth", c->com.key_file ? "psk" : "clear");
	json_str(&w, "sender", r->peer);
	json_str(&w, "local", rx->local);
	json_str(&w, "output", c->o.output);
	json_uint(&w, "file_bytes", r->have_setup ? su->file_bytes : 0);
	json_uint(&w, "payload_bytes", r->have_setup ? su->payload_bytes : 0);
	json_uint(&w, "total_pkts", r->have_setup ? su->total_pkts : 0);
	json_int(&w, "cpu", c->cpu);
	json_int(&w, "rcvbuf_bytes", rx->rcvbuf_bytes);
	json_double(&w, "poll_us", (double)c->o.poll_ns / 1e3);
	json_bool(&w, "busy_poll", c->o.busy_poll);
	json_double(&w, "feedback_delay_ms", (double)r->feedback_delay_ns / 1e6);
	json_uint(&w, "t0_mono_ns", r->t0_ns);
	json_double(&w, "transfer_time_s", r->transfer_ns ? (double)r->transfer_ns / 1e9 : NAN);
	json_uint(&w, "rounds", r->n_rounds);
	json_uint(&w, "dgrams_received", r->dgrams);
	json_uint(&w, "pkts_received", r->pkts_received);
	json_uint(&w, "pkts_duplicate", r->pkts_duplicate);
	json_obj_begin(&w, "dgrams_bad");
	json_uint(&w, "short", r->bad_short);
	json_uint(&w, "seq", r->bad_seq);
	json_uint(&w, "length", r->bad_len);
	json_obj_end(&w);
	json_uint(&w, "rejected", r->rejected);
	json_uint_opt(&w, "socket_drops", r->socket_drops != UINT64_MAX, r->socket_drops);
	json_arr_begin(&w, "per_round");
	for (uint32_t i = 0; i < r->n_rounds; i++) {
		const struct rbudp_recv_round *rr = &r->rounds[i];
		double span = (double)(rr->last_rx_ns - rr->first_rx_ns) / 1e9;

		json_obj_begin(&w, NULL);
		json_uint(&w, "round", rr->round);
		json_uint(&w, "pkts_expected", rr->pkts_expected);
		json_uint(&w, "pkts_sent", rr->pkts_sent);
		json_uint(&w, "pkts_received", rr->pkts_received);
		json_uint(&w, "pkts_lost", rr->pkts_lost);
		json_uint(&w, "pkts_duplicate", rr->pkts_duplicate);
		json_double(&w, "rx_rate_bps", span > 0 ? (double)rr->bytes_received * 8 / span : NAN);
		json_double(&w, "drain_s", (double)rr->drain_ns / 1e9);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	if (c->o.gap_ns) {
		json_double(&w, "gap_log_ms", (double)c->o.gap_ns / 1e6);
		json_uint(&w, "gaps_total", r->gaps_total);
		json_arr_begin(&w, "gaps");
		for (uint32_t i = 0; i < r->n_gaps; i++) {
			json_obj_begin(&w, NULL);
			json_uint(&w, "round", r->gaps[i].round);
			json_double(&w, "start_s", (double)r->gaps[i].start_ns / 1e9);
			json_double(&w, "duration_s",
				  (double)(r->gaps[i].end_ns - r->gaps[i].start_ns) / 1e9);
			json_obj_end(&w);
		}
		json_arr_end(&w);
	}
	rbudp_digest_hex(r->digest, digest);
	json_str(&w, "digest", r->digest_checked ? digest : NULL);
	json_bool(&w, "digest_checked", r->digest_checked);
	json_bool(&w, "verified", r->verified);
	json_double(&w, "verify_time_s", (double)r->verify_ns / 1e9);
	json_double(&w, "write_time_s", (double)r->write_ns / 1e9);
	json_obj_end(&w);
	rbudp_cli_json_out(&w);
	json_finish(&w);
}

static void text_summary(const struct rbudp_recv_result *r)
{
	char digest[RBUDP_DIGEST_HEX_LEN + 1];

	if (!r->ok) {
		printf("%s from %s FAILED: %s\n", r->counted ? "transfer" : "session", r->peer,
		       r->error);
		return;
	}
	rbudp_digest_hex(r->digest, digest);
	printf("received %llu bytes from %s in %.3f s, %u round%s, %llu duplicates, "
	       "%llu bad datagrams, %llu rejected (forged), %s%s\n",
	       (unsigned long long)r->setup.file_bytes, r->peer, (double)r->transfer_ns / 1e9,
	       r->n_rounds, r->n_rounds == 1 ? "" : "s", (unsigned long long)r->pkts_duplicate,
	       (unsigned long long)(r->bad_short + r->bad_seq + r->bad_len),
	       (unsigned long long)r->rejected,
	       r->digest_checked ? "sha256 verified " :
	       r->psk ? "no digest (nothing kept), every datagram's tag checked" :
	       "no digest (nothing kept), every datagram's token checked",
	       r->digest_checked ? digest : "");
	for (uint32_t i = 0; i < r->n_rounds; i++)
		printf("  round %u: expected %u, received %u, lost %u\n", r->rounds[i].round,
		       r->rounds[i].pkts_expected, r->rounds[i].pkts_received,
		       r->rounds[i].pkts_lost);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static volatile sig_atomic_t stop;
	struct cli c = {
		.o = {
			.delay_ns = -1,
			.batch_pkts = 64,
			.poll_ns = 20 * RXB_NSEC_PER_USEC,
			.drain_idle_ns = 2 * RXB_NSEC_PER_MSEC,
			.timeout_ms = 30000,
			.setup_timeout_ms = 3000,
			.stop = &stop,
		},
		.cpu = -1,
		.count = 1,
	};
	static uint8_t psk[RBUDP_PSK_MAX];
	struct rbudp_receiver rx;
	int failed = 0;

	rxb_log_set_ident(prog);
	c.o.max_mem_bytes = default_max_mem();
	parse(argc, argv, &c);
	if (c.verify)
		return verify_file(&c);
	if (c.com.key_file) {
		if (rbudp_cli_key(c.com.key_file, psk, &c.o.psk_len))
			return 1;
		c.o.psk = psk;
	}
	c.o.progress = !c.com.quiet;
	rbudp_cli_start(&c.com, &stop);
	if (c.cpu >= 0 && pin_cpu(c.cpu))
		return 1;
	if (rbudp_receiver_open(&rx, c.listen ? c.listen : "0.0.0.0", c.port, c.rcvbuf_bytes))
		return 1;
	rxb_info("listening on %s (TCP control, UDP data), rcvbuf %d bytes%s", rx.local,
		 rx.rcvbuf_bytes, c.cpu >= 0 ? ", pinned" : "");
	for (uint64_t n = 0; c.count == 0 || n < c.count;) {
		struct rbudp_recv_result r;

		rbudp_recv_result_init(&r);
		if (rbudp_receiver_serve(&rx, &c.o, &r) < 0) {
			rbudp_recv_result_finish(&r);
			failed = stop ? failed : 1;
			break;
		}
		/* Sessions that never showed they are transfers (refused, timed
		 * out before any authenticated data) neither count nor fail. */
		if (r.counted) {
			n++;
			if (!r.ok)
				failed = 1;
		}
		if (c.com.json)
			json_summary(&c, &rx, &r);
		else
			text_summary(&r);
		rbudp_recv_result_finish(&r);
		if (stop)
			break;
	}
	rbudp_receiver_close(&rx);
	explicit_bzero(psk, sizeof(psk));
	return failed || stop ? 1 : 0;
}
