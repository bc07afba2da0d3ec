// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-shape-pausecheck: can a send/pause schedule be held to 1 ms by
 * changing an HTB class from user space? (docs/shape.md §5.) Built, not
 * installed; run by tests/e2e/shape_pause.sh in a sender namespace.
 *
 * It installs rxbneck-shape's qdisc and one class for --to/--port on --dev
 * (tools/shape/tc.c), blasts UDP at that flow from a sender thread (1472-
 * byte datagrams, or UDP GSO packets of --gso of them), and from the main
 * thread, pinned to --cpu, stops and restarts the class at the edges of a
 * periodic schedule (--period-us, --pause-us, --windows) by --mechanism:
 *
 *   rate    the class's rate to its floor at the window's start, back to
 *           --rate at its end;
 *   charge  at the start, the rate at which one packet of the wire size the
 *           class's counters show (bytes / packets) costs the whole window,
 *           with a burst far below a packet; back to --rate half-way, so
 *           that HTB resumes the class itself when the charge is paid.
 *
 * An AF_PACKET socket timestamps every departure of the flow on the device
 * (PACKET_OUTGOING: the tap runs when the qdisc releases the packet). Per
 * window the measured gap runs from the last departure before the
 * window's middle to the first after it; its ends are compared with the
 * commanded edges (a window is held when both are within 1 ms). One JSON
 * summary on stdout; the device is restored on exit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/util.h"
#include "tools/shape/rate.h"
#include "tools/shape/tc.h"

#define PAYLOAD 1472u
#define HDR 42u			/* Ethernet + IPv4 + UDP */
#define MAX_DEPARTURES (8u << 20)
#define GSO_MAX 64u

enum mechanism { MECH_RATE, MECH_CHARGE };

struct opts {
	const char *dev;
	struct shape_addr to;
	uint16_t port;
	uint64_t rate_bps;
	uint64_t period_us, pause_us;
	unsigned windows;
	unsigned gso;
	int cpu;
	enum mechanism mech;
};

struct run {
	const struct opts *o;
	struct shape_tc *tc;
	struct shape_tc_dev dev;
	atomic_bool stop;
	uint64_t *dep;			/* departure times, CLOCK_REALTIME ns */
	atomic_uint ndep;
	int psock;
	uint64_t *cmd_stop, *cmd_resume;	/* commanded edges, CLOCK_REALTIME ns */
	uint64_t *lat_ns;		/* per change: ack time - commanded time */
	unsigned nlat;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rxbneck-shape-pausecheck: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ------------------------------------------------------------ threads -- */

static void *sender(void *arg)
{
	struct run *r = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(r->o->port),
				  .sin_addr = r->o->to.u.v4 };
	size_t len = (size_t)PAYLOAD * r->o->gso;
	char *buf = calloc(1, len);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), seg = PAYLOAD;

	if (!buf || fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("sender socket: %s", strerror(errno));
	if (r->o->gso > 1 && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg)) < 0)
		die("UDP_SEGMENT: %s", strerror(errno));
	while (!atomic_load(&r->stop))
		if (send(fd, buf, len, 0) < 0 && errno != ENOBUFS && errno != EAGAIN &&
		    errno != ECONNREFUSED && errno != EINTR)
			die("send: %s", strerror(errno));
	close(fd);
	free(buf);
	return NULL;
}

/* Our flow's outgoing packets: IPv4, UDP, to the destination port. */
static bool ours(const struct run *r, const uint8_t *p, size_t n)
{
	const struct iphdr *ip = (const void *)(p + sizeof(struct ether_header));
	const struct udphdr *u;

	if (n < sizeof(struct ether_header) + sizeof(*ip) + sizeof(*u) ||
	    ((const struct ether_header *)p)->ether_type != htons(ETHERTYPE_IP) ||
	    ip->protocol != IPPROTO_UDP)
		return false;
	u = (const void *)((const uint8_t *)ip + 4 * ip->ihl);
	if ((const uint8_t *)(u + 1) > p + n)
		return false;
	return u->dest == htons(r->o->port);
}

static void *capture(void *arg)
{
	struct run *r = arg;
	uint8_t pkt[128];
	char ctl[CMSG_SPACE(sizeof(struct timespec))];

	while (!atomic_load(&r->stop)) {
		struct sockaddr_ll sll;
		struct iovec iov = { pkt, sizeof(pkt) };
		struct msghdr m = { .msg_name = &sll, .msg_namelen = sizeof(sll), .msg_iov = &iov,
				    .msg_iovlen = 1, .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		ssize_t n = recvmsg(r->psock, &m, MSG_TRUNC);
		struct cmsghdr *c;

		if (n < 0)
			continue;	/* the receive timeout: look at the stop flag */
		if (sll.sll_pkttype != PACKET_OUTGOING || !ours(r, pkt, (size_t)n))
			continue;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
				struct timespec ts;
				unsigned i = atomic_load(&r->ndep);

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				if (i < MAX_DEPARTURES) {
					r->dep[i] = (uint64_t)ts.tv_sec * RXB_NSEC_PER_SEC +
						    (uint64_t)ts.tv_nsec;
					atomic_store(&r->ndep, i + 1);
				}
			}
	}
	return NULL;
}

static int open_capture(int ifindex)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = ifindex };
	struct timeval tv = { 0, 100000 };
	int one = 1, big = 64 << 20;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die("AF_PACKET socket: %s", strerror(errno));
	/* The capture must not drop what it checks: as big a buffer as allowed. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)) < 0)
		die("AF_PACKET socket: SO_RCVBUF %d: %s", big, strerror(errno));
	return fd;
}

/* ----------------------------------------------------------- schedule -- */

static void sleep_until(uint64_t mono_ns)
{
	struct timespec ts = { (time_t)(mono_ns / RXB_NSEC_PER_SEC),
			       (long)(mono_ns % RXB_NSEC_PER_SEC) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void set_class(struct run *r, uint64_t wire_Bps, uint32_t burst, uint64_t due_mono)
{
	char err[256];

	if (shape_tc_class_rate(r->tc, &r->dev, SHAPE_DEFAULT_HANDLE, 1, wire_Bps, burst, err,
				sizeof(err)))
		die("%s", err);
	r->lat_ns[r->nlat++] = rxb_mono_ns() - due_mono;
}

/* The wire bytes per packet the class's counters show (what rxbneck-shape
 * could know), after the warm-up. */
static double counter_pkt_bytes(struct run *r)
{
	struct shape_tc_stats st;
	uint16_t minor = 1;
	char err[256];

	if (shape_tc_class_stats(r->tc, r->dev.ifindex, SHAPE_DEFAULT_HANDLE, &minor, 1, &st, err,
				 sizeof(err)) || !st.packets)
		die("class counters: %s", err);
	return (double)st.bytes / (double)st.packets;
}

static void run_schedule(struct run *r, int64_t real_minus_mono)
{
	const struct opts *o = r->o;
	uint64_t wire = shape_rate_wire_Bps(o->rate_bps, PAYLOAD, HDR);
	uint32_t burst = shape_rate_burst_bytes(wire, 0);
	uint64_t P = o->period_us * 1000, D = o->pause_us * 1000, t0;
	double L = counter_pkt_bytes(r);
	/* charge: L bytes cost D; a burst of 64 bytes caps the credit at
	 * 64/L of the window. */
	uint64_t low = o->mech == MECH_CHARGE ? (uint64_t)llround(L / ((double)D / 1e9))
					      : SHAPE_RATE_MIN_BPS / 8;
	uint32_t low_burst = o->mech == MECH_CHARGE ? 64 : burst;

	t0 = rxb_mono_ns() + 20 * RXB_NSEC_PER_MSEC;
	for (unsigned k = 0; k < o->windows; k++) {
		uint64_t stop = t0 + k * P, resume = stop + D;

		r->cmd_stop[k] = (uint64_t)((int64_t)stop + real_minus_mono);
		r->cmd_resume[k] = (uint64_t)((int64_t)resume + real_minus_mono);
		sleep_until(stop);
		set_class(r, low, low_burst, stop);
		if (o->mech == MECH_CHARGE) {
			sleep_until(stop + D / 2);
			set_class(r, wire, burst, stop + D / 2);
		} else {
			sleep_until(resume);
			set_class(r, wire, burst, resume);
		}
	}
	sleep_until(t0 + o->windows * P + 10 * RXB_NSEC_PER_MSEC);
}

/* ----------------------------------------------------------- analysis -- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, unsigned n, double p)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return v[(unsigned)fmin(n - 1, floor(p * n))];
}

/* First index with dep[i] >= t. */
static unsigned lower(const uint64_t *d, unsigned n, uint64_t t)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (d[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void analyse(struct run *r)
{
	const struct opts *o = r->o;
	unsigned n = atomic_load(&r->ndep), held = 0, nw = o->windows;
	double *es = calloc(nw, sizeof(double)), *ee = calloc(nw, sizeof(double));
	double *lat = calloc(r->nlat + 1, sizeof(double));
	struct json_writer w;

	if (!es || !ee || !lat)
		die("out of memory");
	qsort(r->dep, n, sizeof(*r->dep), cmp_u64);
	for (unsigned k = 0; k < nw; k++) {
		/* The gap around the window's middle: from the last departure
		 * before it to the first after it, wherever they are. A class
		 * that never stopped has both near the middle; one that did not
		 * resume has the second far after the window (or none: the end
		 * of the capture counts). */
		uint64_t mid = r->cmd_stop[k] / 2 + r->cmd_resume[k] / 2;
		unsigned i = lower(r->dep, n, mid);
		double gs = i > 0 ? (double)r->dep[i - 1] : 0;
		double ge = i < n ? (double)r->dep[i] : (double)r->cmd_resume[nw - 1] + 1e9;

		es[k] = (gs - (double)r->cmd_stop[k]) / 1e6;
		ee[k] = (ge - (double)r->cmd_resume[k]) / 1e6;
		held += fabs(es[k]) <= 1.0 && fabs(ee[k]) <= 1.0;
	}
	for (unsigned i = 0; i < r->nlat; i++)
		lat[i] = (double)r->lat_ns[i] / 1e6;
	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_str(&w, "mechanism", o->mech == MECH_CHARGE ? "charge" : "rate");
	json_uint(&w, "gso_segs", o->gso);
	json_uint(&w, "rate_bps", o->rate_bps);
	json_uint(&w, "period_us", o->period_us);
	json_uint(&w, "pause_us", o->pause_us);
	json_uint(&w, "windows", nw);
	json_uint(&w, "departures", n);
	json_uint(&w, "held_1ms", held);
	json_double(&w, "held_fraction", (double)held / nw);
	json_double(&w, "start_err_ms_min", pct(es, nw, 0.0));
	json_double(&w, "start_err_ms_p50", pct(es, nw, 0.5));
	json_double(&w, "start_err_ms_p95", pct(es, nw, 0.95));
	json_double(&w, "start_err_ms_max", pct(es, nw, 1.0));
	json_double(&w, "end_err_ms_p50", pct(ee, nw, 0.5));
	json_double(&w, "end_err_ms_p95", pct(ee, nw, 0.95));
	json_double(&w, "end_err_ms_min", pct(ee, nw, 0.0));
	json_double(&w, "end_err_ms_max", pct(ee, nw, 1.0));
	json_double(&w, "command_late_ms_p50", pct(lat, r->nlat, 0.5));
	json_double(&w, "command_late_ms_p99", pct(lat, r->nlat, 0.99));
	json_double(&w, "command_late_ms_max", pct(lat, r->nlat, 1.0));
	json_obj_end(&w);
	if (json_ok(&w))
		printf("%s\n", json_text(&w));
	json_finish(&w);
	free(es);
	free(ee);
	free(lat);
}

/* ------------------------------------------------------------- set-up -- */

static uint64_t opt_u64(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (rxb_parse_u64(arg, min, max, &v))
		die("%s '%s': expected %llu..%llu", opt, arg, (unsigned long long)min,
		    (unsigned long long)max);
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' }, { "to", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' }, { "rate", required_argument, NULL, 'r' },
		{ "period-us", required_argument, NULL, 'P' },
		{ "pause-us", required_argument, NULL, 'D' },
		{ "windows", required_argument, NULL, 'n' }, { "gso", required_argument, NULL, 'g' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "mechanism", required_argument, NULL, 'm' }, { 0 },
	};
	double v;
	int c;

	*o = (struct opts){ .rate_bps = 400000000, .period_us = 4200, .pause_us = 2800,
			    .windows = 500, .gso = 1, .cpu = -1, .mech = MECH_RATE };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 't':
			if (inet_pton(AF_INET, optarg, &o->to.u.v4) != 1)
				die("--to: an IPv4 address");
			o->to.family = AF_INET;
			break;
		case 'p': o->port = (uint16_t)opt_u64("--port", optarg, 1, 65535); break;
		case 'r':
			if (rxb_parse_si(optarg, 1e6, 1e11, &v))
				die("--rate '%s': expected 1M..100G", optarg);
			o->rate_bps = (uint64_t)v;
			break;
		case 'P': o->period_us = opt_u64("--period-us", optarg, 100, 1000000); break;
		case 'D': o->pause_us = opt_u64("--pause-us", optarg, 50, 1000000); break;
		case 'n': o->windows = (unsigned)opt_u64("--windows", optarg, 1, 100000); break;
		case 'g': o->gso = (unsigned)opt_u64("--gso", optarg, 1, GSO_MAX); break;
		case 'c': o->cpu = (int)opt_u64("--cpu", optarg, 0, 1023); break;
		case 'm':
			if (strcmp(optarg, "rate") == 0)
				o->mech = MECH_RATE;
			else if (strcmp(optarg, "charge") == 0)
				o->mech = MECH_CHARGE;
			else
				die("--mechanism: rate or charge");
			break;
		default:
			die("usage: --dev IFACE --to ADDR --port P [--rate BPS] [--period-us US] "
			    "[--pause-us US] [--windows N] [--gso N] [--cpu N] "
			    "[--mechanism rate|charge]");
		}
	}
	if (!o->dev || !o->to.family || !o->port || o->pause_us >= o->period_us)
		die("--dev, --to and --port are required, and --pause-us < --period-us");
}

/* The class, as rxbneck-shape would set it up, at the rate. */
static void install(struct run *r)
{
	char err[320], kind[SHAPE_STATE_KIND_MAX];
	uint16_t major;
	uint64_t wire = shape_rate_wire_Bps(r->o->rate_bps, PAYLOAD, HDR);
	struct shape_tc_class cl = { .major = SHAPE_DEFAULT_HANDLE, .minor = 1,
				     .proto = IPPROTO_UDP, .flow_port = r->o->port,
				     .addrs = &r->o->to, .naddr = 1, .queue_bytes = 16u << 20 };

	if (shape_tc_open(&r->tc, false, stdout, err, sizeof(err)) ||
	    shape_tc_dev_lookup(r->tc, r->o->dev, &r->dev, err, sizeof(err)) ||
	    shape_tc_root(r->tc, r->dev.ifindex, kind, &major, err, sizeof(err)))
		die("%s", err);
	if (major != 0)
		die("%s has a configured root qdisc (%s %x:)", r->o->dev, kind, major);
	if (shape_tc_install(r->tc, &r->dev, SHAPE_DEFAULT_HANDLE, err, sizeof(err)) ||
	    shape_tc_class_add(r->tc, &r->dev, &cl, wire, shape_rate_burst_bytes(wire, 0), err,
			       sizeof(err))) {
		shape_tc_remove(r->tc, r->dev.ifindex, r->o->dev, SHAPE_DEFAULT_HANDLE, false,
				err, sizeof(err));
		die("%s", err);
	}
}

int main(int argc, char **argv)
{
	static struct run r;
	struct opts o;
	pthread_t ts, tcap;
	struct timespec rt, mt;
	char err[320];

	parse(argc, argv, &o);
	r.o = &o;
	r.dep = malloc(MAX_DEPARTURES * sizeof(*r.dep));
	r.cmd_stop = calloc(o.windows, sizeof(uint64_t));
	r.cmd_resume = calloc(o.windows, sizeof(uint64_t));
	r.lat_ns = calloc(2u * o.windows, sizeof(uint64_t));
	if (!r.dep || !r.cmd_stop || !r.cmd_resume || !r.lat_ns)
		die("out of memory");
	install(&r);
	r.psock = open_capture(r.dev.ifindex);
	/* The capture thread anywhere; the sender and the timer (this thread)
	 * on --cpu, as a sender and rxbneck-shape share a sending host. */
	if (pthread_create(&tcap, NULL, capture, &r))
		die("pthread_create failed");
	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			die("sched_setaffinity: %s", strerror(errno));
	}
	if (pthread_create(&ts, NULL, sender, &r))
		die("pthread_create failed");
	usleep(500000);		/* warm-up: the class backlogged, counters going */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	run_schedule(&r, ((int64_t)rt.tv_sec - mt.tv_sec) * (int64_t)RXB_NSEC_PER_SEC +
			 (rt.tv_nsec - mt.tv_nsec));
	atomic_store(&r.stop, true);
	pthread_join(ts, NULL);
	pthread_join(tcap, NULL);
	if (shape_tc_remove(r.tc, r.dev.ifindex, o.dev, SHAPE_DEFAULT_HANDLE, false, err,
			    sizeof(err)) < 0)
		fprintf(stderr, "rxbneck-shape-pausecheck: %s\n", err);
	shape_tc_close(r.tc);
	analyse(&r);
	close(r.psock);
	free(r.dep);
	free(r.cmd_stop);
	free(r.cmd_resume);
	free(r.lat_ns);
	return 0;
}
