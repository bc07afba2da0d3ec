// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-udpsink: a UDP receiver for rxbneck-shape's tests and
 * experiment. It reads datagrams as rxbneck-recv's receive thread does
 * (recvmmsg, batches of 64, blocking) and reports, per interval and in
 * total, what arrived at its socket and what the socket dropped:
 *
 *   received   datagrams read, and their payload bytes;
 *   dropped    datagrams the socket dropped for want of room (the kernel's
 *              per-socket counter, SO_RXQ_OVFL);
 *   arrived    received + dropped: what the sender's shaping let through,
 *              in payload bits/s (dropped datagrams counted at the mean
 *              size of the received ones);
 *   loss       dropped / arrived.
 *
 * With iperf3's datagrams (--iperf3) it also reads their sequence numbers
 * (the 32-bit counter after the timestamp): per interval the rate at
 * which the sender's datagrams came (sent_bps, at the mean size), and in
 * total what went missing before the socket. With --work-ns it spends that
 * long on the CPU after each datagram (reading the clock until it has
 * passed): a receiver whose application does per-datagram work, slower
 * than a fast sender. Built, not installed.
 *
 *	rxbneck-udpsink --port P [--listen ADDR] [--cpu N] [--rcvbuf BYTES]
 *	                [--interval-ms MS] [--seconds S] [--iperf3] [--work-ns NS]
 *
 * One JSON object per interval and a final one ("final": true) on stdout;
 * it ends after --seconds, or SIGINT/SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/json.h"
#include "common/parse.h"
#include "common/util.h"

#define BATCH 64
#define DGRAM_MAX 65536

struct tally {
	uint64_t pkts, bytes, drops;
	uint64_t seq_max, seq_seen;	/* iperf3 sequence numbers */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

#define USAGE "usage: rxbneck-udpsink --port P [--listen ADDR] [--cpu N] [--rcvbuf BYTES]\n" \
	"                       [--interval-ms MS] [--seconds S] [--iperf3] [--work-ns NS]\n"

static void usage(const char *why)
{
	fprintf(stderr, "rxbneck-udpsink: %s\n" USAGE, why);
	exit(2);
}

static void help(void)
{
	printf(USAGE
	       "Reads UDP datagrams and prints, per interval and in total (one JSON object\n"
	       "per line, the last with \"final\": true), what arrived and what the socket\n"
	       "dropped.\n"
	       "  --port P          UDP port to read (required)\n"
	       "  --listen ADDR     address to bind (default 0.0.0.0)\n"
	       "  --cpu N           pin to CPU N\n"
	       "  --rcvbuf BYTES    receive buffer (default: the system's)\n"
	       "  --interval-ms MS  report interval (default 1000)\n"
	       "  --seconds S       stop S seconds after the first datagram (default: at SIGTERM)\n"
	       "  --iperf3          read iperf3's sequence numbers: the rate the sender sent at\n"
	       "  --work-ns NS      spend NS ns on the CPU after each datagram (a slow application)\n");
	exit(0);
}

/* Per-datagram work: on the CPU until @ns have passed (not a sleep). */
static void work(uint64_t ns)
{
	uint64_t end = rxb_mono_ns() + ns;

	while (rxb_mono_ns() < end)
		;
}

static uint64_t num(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (rxb_parse_u64(arg, min, max, &v)) {
		char why[128];

		snprintf(why, sizeof(why), "%s '%s': expected %llu..%llu", opt, arg,
			 (unsigned long long)min, (unsigned long long)max);
		usage(why);
	}
	return v;
}

static int open_socket(const char *listen, uint16_t port, uint64_t rcvbuf)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	int fd, one = 1, v = (int)rcvbuf;

	if (inet_pton(AF_INET, listen, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, listen, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		sl = sizeof(*s6);
	} else {
		usage("--listen: not an address");
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) < 0 ||
	    (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0 &&
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		perror("rxbneck-udpsink: socket");
		exit(1);
	}
	return fd;
}

static void report(const struct tally *now, const struct tally *prev, double t0, double t1,
		   bool final, bool iperf3)
{
	struct json_writer w;
	uint64_t pkts = now->pkts - prev->pkts, drops = now->drops - prev->drops;
	uint64_t bytes = now->bytes - prev->bytes;
	double mean = pkts ? (double)bytes / (double)pkts : 0, dt = t1 - t0;

	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_bool(&w, "final", final);
	json_double(&w, "t_start", t0);
	json_double(&w, "t_end", t1);
	json_uint(&w, "received", pkts);
	json_uint(&w, "received_bytes", bytes);
	json_uint(&w, "dropped", drops);
	json_double(&w, "received_bps", dt > 0 ? 8.0 * (double)bytes / dt : 0);
	json_double(&w, "arrived_bps", dt > 0 ? 8.0 * ((double)bytes + mean * (double)drops) / dt
						 : 0);
	json_double(&w, "loss", pkts + drops ? (double)drops / (double)(pkts + drops) : 0);
	if (iperf3 && !final) {
		/* What left the sender in the interval, by iperf3's numbers: the
		 * arrivals at the host, whatever was dropped where. */
		json_uint(&w, "seq_max", now->seq_max);
		json_double(&w, "sent_bps", dt > 0 && prev->seq_max ? 8.0 * mean *
			    (double)(now->seq_max - prev->seq_max) / dt : 0);
	}
	if (iperf3 && final) {
		json_uint(&w, "seq_max", now->seq_max);
		json_uint(&w, "missing_before_socket",
			  now->seq_max + 1 > now->pkts + now->drops
			  ? now->seq_max + 1 - now->pkts - now->drops : 0);
	}
	json_obj_end(&w);
	if (json_ok(&w))
		printf("%s\n", json_text(&w));
	fflush(stdout);
	json_finish(&w);
}

/* Read what is there (at most one batch); 0 when nothing, -1 on error. */
static int read_batch(int fd, struct tally *t, bool iperf3, uint64_t work_ns,
		      uint8_t (*buf)[DGRAM_MAX])
{
	static struct mmsghdr m[BATCH];
	static struct iovec iov[BATCH];
	static char ctl[BATCH][CMSG_SPACE(sizeof(uint32_t))];
	int n;

	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ buf[i], DGRAM_MAX };
		m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1,
						.msg_control = ctl[i],
						.msg_controllen = sizeof(ctl[i]) };
	}
	n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (int i = 0; i < n; i++) {
		struct cmsghdr *c;

		t->pkts++;
		t->bytes += m[i].msg_len;
		for (c = CMSG_FIRSTHDR(&m[i].msg_hdr); c; c = CMSG_NXTHDR(&m[i].msg_hdr, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
				uint32_t d;

				memcpy(&d, CMSG_DATA(c), sizeof(d));
				/* The socket's running total of drops. */
				if (d > (uint32_t)t->drops)
					t->drops += d - (uint32_t)t->drops;
			}
		if (iperf3 && m[i].msg_len >= 12) {
			uint32_t seq;

			memcpy(&seq, buf[i] + 8, 4);
			seq = ntohl(seq);
			t->seq_seen++;
			if (seq > t->seq_max)
				t->seq_max = seq;
		}
		if (work_ns)
			work(work_ns);
	}
	return n;
}

struct opts {
	const char *listen;
	uint64_t port, rcvbuf, interval_ms, seconds, work_ns;
	int cpu;
	bool iperf3;
};

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' }, { "listen", required_argument, NULL, 'l' },
		{ "cpu", required_argument, NULL, 'c' }, { "rcvbuf", required_argument, NULL, 'r' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 's' }, { "iperf3", no_argument, NULL, '3' },
		{ "work-ns", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	*o = (struct opts){ .listen = "0.0.0.0", .interval_ms = 1000, .cpu = -1 };
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'p': o->port = num("--port", optarg, 1, 65535); break;
		case 'l': o->listen = optarg; break;
		case 'c': o->cpu = (int)num("--cpu", optarg, 0, 1023); break;
		case 'r': o->rcvbuf = num("--rcvbuf", optarg, 1, 1u << 30); break;
		case 'i': o->interval_ms = num("--interval-ms", optarg, 10, 60000); break;
		case 's': o->seconds = num("--seconds", optarg, 1, 86400); break;
		case '3': o->iperf3 = true; break;
		case 'w': o->work_ns = num("--work-ns", optarg, 1, 1000000000); break;
		case 'h': help(); break;
		default: usage("unknown option");
		}
	}
	if (!o->port || optind < argc)
		usage("--port is required");
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("rxbneck-udpsink: sched_setaffinity");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	struct tally t = { 0 }, prev = { 0 }, first = { 0 };
	uint8_t (*buf)[DGRAM_MAX];
	double t_begin = 0, t_mark = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	int fd;

	parse(argc, argv, &o);
	if (o.cpu >= 0)
		pin(o.cpu);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	buf = malloc((size_t)BATCH * DGRAM_MAX);
	if (!buf) {
		fprintf(stderr, "rxbneck-udpsink: out of memory\n");
		return 1;
	}
	fd = open_socket(o.listen, (uint16_t)o.port, o.rcvbuf);
	fprintf(stderr, "rxbneck-udpsink: ready on port %llu\n", (unsigned long long)o.port);
	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double now = (double)rxb_mono_ns() / 1e9;

		if (t_begin > 0 && now - t_mark >= o.interval_ms / 1e3) {
			report(&t, &prev, t_mark, now, false, o.iperf3);
			prev = t;
			t_mark = now;
		}
		if (o.seconds && t_begin > 0 && now - t_begin >= (double)o.seconds)
			break;
		if (poll(&p, 1, 50) <= 0)
			continue;
		if (read_batch(fd, &t, o.iperf3, o.work_ns, buf) < 0) {
			perror("rxbneck-udpsink: recvmmsg");
			break;
		}
		if (t_begin == 0 && t.pkts) {	/* the clock starts with the first datagram */
			t_begin = t_mark = (double)rxb_mono_ns() / 1e9;
			first = t;
			prev = t;
		}
	}
	if (t_begin > 0)
		report(&t, &first, t_begin, (double)rxb_mono_ns() / 1e9, true, o.iperf3);
	close(fd);
	free(buf);
	return 0;
}
