// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneck-delayline: a fixed propagation delay for any IP traffic, in user
 * space, between two TUN devices (possibly in two network namespaces).
 *
 * The end-to-end experiment needs TCP over the same emulated path as
 * rxbneck-send's blasts, and this kernel has no netem (nor fq, whose
 * earliest-departure times could otherwise hold packets). rxbneck-send and
 * rxbneck-recv delay their own blasts and feedback (Banerjee et al., §IV); TCP's
 * delay has to be on the path. The experiment routes only the receiver's
 * packets back to the sender (TCP's ACKs) through this line and puts the
 * whole round-trip delay on it: TCP's behaviour depends on the RTT, not on
 * how it is split between the directions, and the data direction stays on
 * the veth at full speed (holding data in user space would cost a copy per
 * 1500 bytes on a CPU of a two-CPU machine).
 *
 *	ip tuntap add dev dl0 mode tun; ip -n ns tuntap add dev dl1 mode tun
 *	rxbneck-delayline --from dl0 --to dl1 --to-netns ns --delay-ms 200
 *
 * Every packet read from --from is written to --to @delay_ms after it was
 * read, in order (a fixed-delay path does not reorder). Packets beyond
 * --max-queue are dropped and counted. On SIGINT/SIGTERM it prints what it
 * forwarded and how late (--json for a script).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tools/rbudp/cli.h"
#include "tools/rbudp/delay.h"

static const char *const prog = "rxbneck-delayline";

#define DL_PKT_MAX	65536	/* largest IP packet a TUN hands over */
#define DL_READ_BATCH	256	/* packets read per wake-up before releasing */
#define DL_LATE_NS	1000000	/* a release later than this is counted */

struct dl_stats {
	uint64_t fwd_pkts, fwd_bytes;
	uint64_t drop_full_pkts;	/* queue at --max-queue */
	uint64_t write_err_pkts;
	uint64_t max_queue_pkts;
	uint64_t late_sum_ns, late_max_ns, late_over_1ms_pkts;
};

struct dl {
	int from_fd, to_fd;
	uint64_t delay_ns;
	uint64_t max_queue_pkts;
	struct rbudp_outq q;
	struct dl_stats st;
	int last_write_errno;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s --from DEV --to DEV --delay-ms MS [options]\n"
"Forward every IP packet read from TUN device --from to TUN device --to,\n"
"MS milliseconds later, in order. Both devices must exist (ip tuntap add\n"
"dev DEV mode tun); the line attaches to them and detaches at exit.\n"
"\n"
"  --from DEV            TUN device to read from\n"
"  --from-netns NAME     its network namespace (/run/netns/NAME, or a path)\n"
"  --to DEV              TUN device to write to\n"
"  --to-netns NAME       its network namespace\n"
"  --delay-ms MS         delay added to every packet (0-10000, fractions ok)\n"
"  --max-queue PKTS      packets held at most; later ones are dropped and\n"
"                        counted (default 1000000)\n"
"  --rt-prio PRIO        run as SCHED_FIFO at PRIO (1-99): released on time\n"
"                        even when CPU-bound tasks share its CPU\n"
"  --json                print the summary as JSON on stdout at exit\n"
"  -h, --help            this text\n"
"\n"
"Prints \"ready\" on stderr once attached to both devices. Runs until SIGINT\n"
"or SIGTERM, then prints packets forwarded and dropped, the queue's peak and\n"
"how late releases were. Exit status 0, 1 on a runtime error, 2 on a bad\n"
"option.\n", prog);
}

/* Attach to TUN device @dev in namespace @netns (NULL: the current one).
 * Returns the fd, or -errno with the cause logged. The caller's namespace
 * is restored before returning: the fd stays bound to its device. */
static int tun_attach(const char *netns, const char *dev)
{
	char path[PATH_MAX];
	struct ifreq ifr;
	int self = -1, target = -1, fd = -1, err = 0;

	if (strlen(dev) >= IFNAMSIZ) {
		fprintf(stderr, "%s: device name '%s' longer than %d characters\n",
			prog, dev, IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (netns) {
		if (strchr(netns, '/'))
			snprintf(path, sizeof(path), "%s", netns);
		else
			snprintf(path, sizeof(path), "/run/netns/%s", netns);
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0) {
			err = -errno;
			fprintf(stderr, "%s: open /proc/self/ns/net: %s\n", prog, strerror(errno));
			goto out;
		}
		target = open(path, O_RDONLY | O_CLOEXEC);
		if (target < 0) {
			err = -errno;
			fprintf(stderr, "%s: network namespace %s: %s\n", prog, path, strerror(errno));
			goto out;
		}
		if (setns(target, CLONE_NEWNET) < 0) {
			err = -errno;
			fprintf(stderr, "%s: setns %s: %s\n", prog, path, strerror(errno));
			goto out;
		}
	}
	/* TUNSETIFF would make a new device of a name that does not exist,
	 * one with no address or route: a typo would forward nothing. */
	if (!if_nametoindex(dev)) {
		err = -errno;
		fprintf(stderr, "%s: TUN device %s%s%s: %s\n", prog, dev,
			netns ? " in " : "", netns ? netns : "", strerror(errno));
		goto restore;
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "%s: open /dev/net/tun: %s\n", prog, strerror(errno));
		goto restore;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	memcpy(ifr.ifr_name, dev, strlen(dev));
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		fprintf(stderr, "%s: attach to TUN device %s%s%s: %s\n", prog, dev,
			netns ? " in " : "", netns ? netns : "", strerror(errno));
		close(fd);
		fd = -1;
	}
restore:
	if (self >= 0 && setns(self, CLONE_NEWNET) < 0) {
		/* Cannot go back: later opens would land in the wrong place. */
		err = -errno;
		fprintf(stderr, "%s: setns back to the own namespace: %s\n", prog, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
out:
	if (target >= 0)
		close(target);
	if (self >= 0)
		close(self);
	return fd >= 0 ? fd : err;
}

/* Write every packet due at @now_ns to the --to device. */
static void dl_release(struct dl *d, uint64_t now_ns)
{
	const struct rbudp_outq_msg *m;

	while ((m = rbudp_delay_outq_peek_due(&d->q, now_ns))) {
		uint64_t late_ns = now_ns - m->release_ns;
		ssize_t n = write(d->to_fd, m->data, m->len);

		if (n == (ssize_t)m->len) {
			d->st.fwd_pkts++;
			d->st.fwd_bytes += m->len;
		} else {
			/* A TUN write is whole or fails; a short one is an error too. */
			int e = n < 0 ? errno : EIO;

			if (e != d->last_write_errno)
				fprintf(stderr, "%s: write to the --to device: %s (counted, going on)\n",
					prog, strerror(e));
			d->last_write_errno = e;
			d->st.write_err_pkts++;
		}
		d->st.late_sum_ns += late_ns;
		if (late_ns > d->st.late_max_ns)
			d->st.late_max_ns = late_ns;
		if (late_ns > DL_LATE_NS)
			d->st.late_over_1ms_pkts++;
		rbudp_delay_outq_drop(&d->q);
		now_ns = rxb_mono_ns();
	}
}

/* Read what the --from device has (at most a batch) into the queue.
 * Returns 0, or -errno on a read error other than "nothing more". */
static int dl_take(struct dl *d, uint8_t *buf)
{
	for (int i = 0; i < DL_READ_BATCH; i++) {
		ssize_t n = read(d->from_fd, buf, DL_PKT_MAX);
		uint64_t t_ns = rxb_mono_ns();

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			fprintf(stderr, "%s: read from the --from device: %s\n", prog, strerror(errno));
			return -errno;
		}
		if (d->q.n_msgs >= d->max_queue_pkts) {
			d->st.drop_full_pkts++;
			continue;
		}
		if (rbudp_delay_outq_push(&d->q, buf, (size_t)n,
					  rbudp_delay_release_ns(t_ns, d->delay_ns)) < 0) {
			fprintf(stderr, "%s: out of memory with %zu packets queued\n", prog,
				d->q.n_msgs);
			return -ENOMEM;
		}
		if (d->q.n_msgs > d->st.max_queue_pkts)
			d->st.max_queue_pkts = d->q.n_msgs;
	}
	return 0;
}

static int dl_run(struct dl *d, volatile sig_atomic_t *stop, const sigset_t *waitmask)
{
	uint8_t *buf = malloc(DL_PKT_MAX);
	int err = 0;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -ENOMEM;
	}
	while (!*stop) {
		struct pollfd pfd = { .fd = d->from_fd, .events = POLLIN };
		uint64_t next_ns = rbudp_delay_outq_next_ns(&d->q), now_ns = rxb_mono_ns();
		struct timespec ts, *tsp = NULL;
		int n;

		if (next_ns != UINT64_MAX) {
			uint64_t wait_ns = next_ns > now_ns ? next_ns - now_ns : 0;

			ts.tv_sec = (time_t)(wait_ns / RXB_NSEC_PER_SEC);
			ts.tv_nsec = (long)(wait_ns % RXB_NSEC_PER_SEC);
			tsp = &ts;
		}
		n = ppoll(&pfd, 1, tsp, waitmask);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			fprintf(stderr, "%s: ppoll: %s\n", prog, strerror(errno));
			break;
		}
		if (n > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
			fprintf(stderr, "%s: the --from device went away\n", prog);
			err = -EIO;
			break;
		}
		if (n > 0 && (err = dl_take(d, buf)) < 0)
			break;
		dl_release(d, rxb_mono_ns());
	}
	free(buf);
	return err;
}

static void dl_report(const struct dl *d, unsigned rt_prio, bool json)
{
	struct rusage ru;
	double cpu_s = 0.0;
	double late_mean_us = d->st.fwd_pkts + d->st.write_err_pkts ?
		d->st.late_sum_ns / 1e3 / (double)(d->st.fwd_pkts + d->st.write_err_pkts) : 0.0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	else
		fprintf(stderr, "%s: getrusage: %s\n", prog, strerror(errno));
	if (json) {
		struct json_writer w;

		json_init(&w, false);
		json_obj_begin(&w, NULL);
		json_double(&w, "delay_ms", d->delay_ns / 1e6);
		json_uint(&w, "rt_prio", rt_prio);
		json_uint(&w, "forwarded_pkts", d->st.fwd_pkts);
		json_uint(&w, "forwarded_bytes", d->st.fwd_bytes);
		json_uint(&w, "dropped_queue_full_pkts", d->st.drop_full_pkts);
		json_uint(&w, "write_error_pkts", d->st.write_err_pkts);
		json_uint(&w, "unreleased_pkts", d->q.n_msgs);
		json_uint(&w, "max_queue_pkts", d->st.max_queue_pkts);
		json_double(&w, "late_mean_us", late_mean_us);
		json_double(&w, "late_max_us", d->st.late_max_ns / 1e3);
		json_uint(&w, "late_over_1ms_pkts", d->st.late_over_1ms_pkts);
		json_double(&w, "cpu_s", cpu_s);
		json_obj_end(&w);
		if (rbudp_cli_json_out(&w) < 0)
			fprintf(stderr, "%s: cannot write the JSON summary\n", prog);
		json_finish(&w);
		return;
	}
	fprintf(stderr,
		"%s: %llu packets (%llu bytes) forwarded %.3f ms late on average "
		"(max %.3f ms, %llu over 1 ms); %llu dropped at a full queue, %llu write "
		"errors, %zu unreleased; peak queue %llu packets; %.2f s CPU\n", prog,
		(unsigned long long)d->st.fwd_pkts, (unsigned long long)d->st.fwd_bytes,
		late_mean_us / 1e3, d->st.late_max_ns / 1e6,
		(unsigned long long)d->st.late_over_1ms_pkts,
		(unsigned long long)d->st.drop_full_pkts,
		(unsigned long long)d->st.write_err_pkts, d->q.n_msgs,
		(unsigned long long)d->st.max_queue_pkts, cpu_s);
}

/* The command line: the two ends and how to run between them. */
struct dl_args {
	const char *from, *from_ns, *to, *to_ns;
	uint64_t rt_prio;	/* 0: timeshared */
	bool json;
};

/* Parse the command line into @a and @d's settings; exits on a bad one. */
static void parse(int argc, char **argv, struct dl_args *a, struct dl *d)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "from-netns", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 't' },
		{ "to-netns", required_argument, NULL, 'T' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "max-queue", required_argument, NULL, 'q' },
		{ "rt-prio", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool have_delay = false;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': a->from = optarg; break;
		case 'F': a->from_ns = optarg; break;
		case 't': a->to = optarg; break;
		case 'T': a->to_ns = optarg; break;
		case 'd':
			d->delay_ns = rbudp_cli_ms(prog, "--delay-ms", optarg, 10000.0);
			have_delay = true;
			break;
		case 'q':
			d->max_queue_pkts = rbudp_cli_u64(prog, "--max-queue", optarg, 1, 100000000);
			break;
		case 'r':
			a->rt_prio = rbudp_cli_u64(prog, "--rt-prio", optarg, 1, 99);
			break;
		case 'j': a->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: rbudp_cli_usage_error(prog, "unknown option");
		}
	}
	if (optind < argc)
		rbudp_cli_usage_error(prog, "unexpected argument '%s'", argv[optind]);
	if (!a->from || !a->to || !have_delay)
		rbudp_cli_usage_error(prog, "--from, --to and --delay-ms are required");
}

/*
 * Signals, timer slack and scheduling class of the process; @waitmask gets
 * the mask to wait with. Returns 0, or -1 with the cause printed.
 */
static int process_setup(volatile sig_atomic_t *stop, uint64_t rt_prio, sigset_t *waitmask)
{
	sigset_t block;

	/* SIGINT/SIGTERM only between ppoll's checks: blocked otherwise, so a
	 * signal cannot slip in after the stop flag was read and before a
	 * sleep with no timeout. */
	rbudp_cli_signals(stop);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &block, waitmask) < 0) {
		fprintf(stderr, "%s: sigprocmask: %s\n", prog, strerror(errno));
		return -1;
	}
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGTERM);
	/* The default 50 us timer slack would be added to every release. */
	if (prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) < 0)
		fprintf(stderr, "%s: PR_SET_TIMERSLACK: %s (going on)\n", prog, strerror(errno));

	/* A timeshared line is released whenever the scheduler gets round to
	 * it: behind a busy sender on its CPU that was 2.7 ms late on average
	 * (max 31 ms) at a 20 ms delay on the e2e testbed. */
	if (rt_prio) {
		struct sched_param sp = { .sched_priority = (int)rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			fprintf(stderr, "%s: SCHED_FIFO at priority %d: %s\n", prog,
				sp.sched_priority, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static volatile sig_atomic_t stop;
	struct dl_args a = { 0 };
	struct dl d = { .from_fd = -1, .to_fd = -1, .max_queue_pkts = 1000000 };
	sigset_t waitmask;
	int err;

	parse(argc, argv, &a, &d);
	if (process_setup(&stop, a.rt_prio, &waitmask))
		return 1;
	rbudp_delay_outq_init(&d.q);
	d.from_fd = tun_attach(a.from_ns, a.from);
	if (d.from_fd < 0)
		return 1;
	d.to_fd = tun_attach(a.to_ns, a.to);
	if (d.to_fd < 0) {
		close(d.from_fd);
		return 1;
	}
	fprintf(stderr, "%s: ready: %s%s%s -> %s%s%s, %.3f ms\n", prog, a.from,
		a.from_ns ? "@" : "", a.from_ns ? a.from_ns : "", a.to, a.to_ns ? "@" : "",
		a.to_ns ? a.to_ns : "", d.delay_ns / 1e6);

	err = dl_run(&d, &stop, &waitmask);
	dl_report(&d, (unsigned)a.rt_prio, a.json);
	rbudp_delay_outq_finish(&d.q);
	close(d.from_fd);
	close(d.to_fd);
	return err < 0 ? 1 : 0;
}
