// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rxbneck-watch: subscribe to a flow and print what rxbneckd pushes.
 *
 *	rxbneck-watch [-h host] [-p port] [-r rtt_us] [-s payload] [-f file_bytes]
 *	              [-n seconds] flow_port
 *
 * An example of librxbneck in a caller's own poll loop, and a way to see the
 * daemon's advice for a flow without sending anything. Linked against the
 * installable librxbneck.a only.
 */
#define _POSIX_C_SOURCE 200809L	/* getopt(); builds as strict C99 too */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rxbneck/client.h>

static void on_rate(void *user, const struct rxbneck_rate *r)
{
	(void)user;
	printf("RATE  port %u rate %.6g bit/s loss %.3g epoch %" PRIu64
	       " confidence %u/1000 flags 0x%x xfer_time %" PRIu64 " us\n",
	       r->port, (double)r->rate_bps, r->loss, r->epoch, r->confidence,
	       r->flags, r->xfer_time_us);
	fflush(stdout);
}

static void on_pause(void *user, const struct rxbneck_pause_window *w)
{
	const struct rxbneck_pause *p = &w->pause;

	(void)user;
	if (p->flags & RXBNECK_PAUSE_CANCEL)
		printf("PAUSE port %u cancelled\n", p->port);
	else
		printf("PAUSE port %u in %" PRIu64 " us for %" PRIu64 " us, period %"
		       PRIu64 " us x %u (lead %" PRIu64 " us) epoch %" PRIu64 "\n",
		       p->port, p->start_in_us, p->duration_us, p->period_us,
		       p->repeat_count, w->lead_us, p->epoch);
	fflush(stdout);
}

static int number(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: rxbneck-watch [-h host] [-p port] [-r rtt_us] "
		"[-s payload_bytes] [-f file_bytes] [-n seconds] flow_port\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct rxbneck_client_config cfg;
	struct rxbneck_client *c;
	uint64_t v, seconds = 0, end_ns;
	int opt, rc;

	rxbneck_client_config_init(&cfg);
	cfg.hello.payload_bytes = 1472;
	strcpy(cfg.hello.name, "rxbneck-watch");
	while ((opt = getopt(argc, argv, "h:p:r:s:f:n:")) != -1) {
		switch (opt) {
		case 'h': cfg.host = optarg; break;
		case 'p': if (number(optarg, 65535, &v)) return usage();
			  cfg.port = (uint16_t)v; break;
		case 'r': if (number(optarg, RXBNECK_TIME_MAX_US, &v)) return usage();
			  cfg.hello.rtt_us = (uint32_t)v; break;
		case 's': if (number(optarg, 65535, &v)) return usage();
			  cfg.hello.payload_bytes = (uint32_t)v; break;
		case 'f': if (number(optarg, UINT64_MAX, &v)) return usage();
			  cfg.hello.file_bytes = v; break;
		case 'n': if (number(optarg, 1000000, &seconds)) return usage();
			  break;
		default: return usage();
		}
	}
	if (optind + 1 != argc || number(argv[optind], 65535, &v) || v == 0)
		return usage();
	cfg.hello.flow_port = (uint16_t)v;
	cfg.cb.on_rate = on_rate;
	cfg.cb.on_pause = on_pause;

	c = rxbneck_client_new(&cfg);
	if (!c) {
		fprintf(stderr, "rxbneck-watch: out of memory\n");
		return 1;
	}
	rc = rxbneck_client_connect(c);
	if (rc == 0) {
		const struct rxbneck_hello_ack *a = rxbneck_client_daemon(c);

		printf("connected: %s, epoch %u ms, idle timeout %u ms\n",
		       a->name, a->epoch_ms, a->idle_timeout_ms);
		fflush(stdout);
	}
	end_ns = rxbneck_now_ns() + seconds * 1000000000ULL;
	while (rc >= 0 && (seconds == 0 || rxbneck_now_ns() < end_ns)) {
		struct pollfd pfd = { rxbneck_client_fd(c), rxbneck_client_poll_events(c), 0 };
		int t = rxbneck_client_timeout_ms(c);

		if (seconds && (t < 0 || t > 1000))
			t = 1000;
		if (poll(&pfd, 1, t) < 0)
			continue;	/* EINTR; process() re-checks the socket */
		rc = rxbneck_client_process(c);
	}
	if (rc < 0)
		fprintf(stderr, "rxbneck-watch: %s: %s\n", rxbneck_strerror(rc),
			rxbneck_client_errmsg(c));
	rxbneck_client_close(c);
	return rc < 0 ? 1 : 0;
}
