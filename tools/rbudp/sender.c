// SPDX-License-Identifier: GPL-2.0-or-later
/* The RBUDP sender engine. See sender.h and docs/rbudp.md. */
#include "tools/rbudp/sender.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/auth.h"
#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/conn.h"
#include "tools/rbudp/delay.h"
#include "tools/rbudp/dgram.h"
#include "tools/rbudp/error.h"
#include "tools/rbudp/follow.h"
#include "tools/rbudp/digest.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/pace.h"
#include "tools/rbudp/send_ctl.h"
#include "tools/rbudp/wire.h"

#define BATCH_MAX	1024			/* datagrams per blast step */
#define GSO_SEGS_MAX	64			/* kernel's UDP_MAX_SEGMENTS is >= 64 */
#define SPIN_NS		(50 * RXB_NSEC_PER_USEC)	/* spin, don't sleep, below this */
/* Look at the control sockets this often while blasting. It bounds how late
 * a PAUSE frame is noticed (its start is timed from when it is read). */
#define CTL_CHECK_NS	(500 * RXB_NSEC_PER_USEC)
#define PROGRESS_NS	(500 * RXB_NSEC_PER_MSEC)


/* Record the first error and return -1 (send_ctl.h). */
int rbudp_send_fail(struct rbudp_sender *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rbudp_error_keep(s->r->error, sizeof(s->r->error), NULL, fmt, ap);
	va_end(ap);
	return -1;
}

void rbudp_send_result_init(struct rbudp_send_result *r)
{
	memset(r, 0, sizeof(*r));
	r->verify_status = UINT32_MAX;
}

void rbudp_send_result_finish(struct rbudp_send_result *r)
{
	free(r->rounds);
	memset(r, 0, sizeof(*r));
}

static struct rbudp_send_round *new_round(struct rbudp_sender *s, uint32_t round)
{
	struct rbudp_send_result *r = s->r;
	struct rbudp_send_round *v = rxb_append((void **)&r->rounds, &r->n_rounds,
						&r->cap_rounds, sizeof(*v));

	if (v)
		v->round = round;
	return v;
}

/* ------------------------------------------------------------ sockets -- */

/*
 * UDP GSO: one send carries up to gso_segs datagrams of equal size, which
 * the stack cuts apart late (in the device's segmentation, or at the
 * receiving socket when the path passes GSO packets through, as veth does).
 * Each datagram still carries its own sequence header.
 */
static int setup_gso(struct rbudp_sender *s)
{
	int dgram = (int)(RBUDP_DGRAM_HDR + s->src->payload_bytes);
	uint32_t fit = 65507 / (uint32_t)dgram;

	s->gso_segs = 1;
	if (s->o->gso_segs <= 1)
		return 0;
	s->gso_segs = s->o->gso_segs < fit ? s->o->gso_segs : fit;
	if (s->gso_segs > GSO_SEGS_MAX)
		s->gso_segs = GSO_SEGS_MAX;
	if (s->gso_segs <= 1) {
		s->gso_segs = 1;
		return 0;
	}
	if (setsockopt(s->udp, SOL_UDP, UDP_SEGMENT, &dgram, sizeof(dgram)) < 0) {
		rxb_warn("UDP GSO unavailable (setsockopt(UDP_SEGMENT): %s): one datagram per "
			 "send", strerror(errno));
		s->gso_segs = 1;
	}
	return 0;
}

/*
 * The kernel refuses GSO sends with EIO when the route's device cannot
 * checksum them. Fall back to one datagram per send, once.
 */
static bool gso_fallback(struct rbudp_sender *s)
{
	int zero = 0;

	if (s->gso_segs <= 1)
		return false;
	rxb_warn("UDP GSO refused by the path (EIO): one datagram per send from now on");
	if (setsockopt(s->udp, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) < 0)
		rxb_log_errno(RXB_LOG_WARNING, errno, "clearing UDP_SEGMENT");
	s->gso_segs = 1;
	s->r->gso_segs = 1;
	return true;
}

static int open_udp(struct rbudp_sender *s, const struct sockaddr_storage *ss, socklen_t sl)
{
	int pmtu = IP_PMTUDISC_DO, eff;

	s->family = ss->ss_family;
	s->udp = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->udp < 0)
		return rbudp_send_fail(s, "socket(UDP): %s", strerror(errno));
	/* Never fragment: an oversized datagram is an error we report. */
	if (ss->ss_family == AF_INET &&
	    setsockopt(s->udp, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0)
		return rbudp_send_fail(s, "setsockopt(IP_MTU_DISCOVER): %s", strerror(errno));
	if (ss->ss_family == AF_INET6) {
		pmtu = IPV6_PMTUDISC_DO;
		if (setsockopt(s->udp, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0)
			return rbudp_send_fail(s, "setsockopt(IPV6_MTU_DISCOVER): %s", strerror(errno));
	}
	if (s->o->sndbuf_bytes > 0) {
		int err = rbudp_net_set_bufsize(s->udp, SO_SNDBUF, SO_SNDBUFFORCE,
						s->o->sndbuf_bytes, &eff);
		if (err)
			return rbudp_send_fail(s, "setting --sndbuf: %s", strerror(-err));
	}
	if (connect(s->udp, (const struct sockaddr *)ss, sl) < 0)
		return rbudp_send_fail(s, "connect(UDP) to %s port %u: %s", s->o->host, s->o->port,
				       strerror(errno));
	return setup_gso(s);
}

/* -------------------------------------------------------------- blast -- */

static void progress(struct rbudp_sender *s, uint64_t now, uint32_t round, uint64_t done,
		     uint64_t todo, uint64_t bytes, uint64_t start)
{
	double el;

	if (!s->o->progress || now < s->next_progress_ns)
		return;
	s->next_progress_ns = now + PROGRESS_NS;
	el = (double)(now - start) / 1e9;
	fprintf(stderr, "rxbneck-send: round %u: %llu/%llu pkts (%.1f%%), %.3f Gb/s, t=%.2f s\n",
		round, (unsigned long long)done, (unsigned long long)todo,
		todo ? 100.0 * (double)done / (double)todo : 100.0,
		el > 0 ? (double)bytes * 8 / el / 1e9 : 0.0,
		(double)(now - s->t0) / 1e9);
}

/*
 * Point the message headers at prepared datagrams [first, n): one message
 * per datagram, or per gso_segs datagrams with GSO. Only the file's last
 * packet can be short, and it is always the last one sent, so GSO messages
 * keep their equal-size segments. Returns the number of messages.
 */
static unsigned group(struct rbudp_sender *s, unsigned first, unsigned n)
{
	unsigned nmsg = 0;

	for (unsigned i = first; i < n; i += s->gso_segs) {
		unsigned k = n - i < s->gso_segs ? n - i : s->gso_segs;

		s->msgs[nmsg].msg_hdr.msg_iov = &s->iov[2 * i];
		s->msgs[nmsg].msg_hdr.msg_iovlen = 2 * k;
		nmsg++;
	}
	return nmsg;
}

/* Send the @n prepared datagrams; loops over partial sends. */
static int send_batch(struct rbudp_sender *s, unsigned n)
{
	unsigned first = 0;

	while (first < n) {
		int k = sendmmsg(s->udp, s->msgs, group(s, first, n), 0);

		s->r->send_calls++;
		if (k > 0) {
			uint64_t sent = (uint64_t)k * s->gso_segs;

			first = sent >= n - first ? n : first + (unsigned)sent;
			continue;
		}
		switch (errno) {
		case EINTR:
			if (rbudp_send_stopped(s))
				return rbudp_send_fail(s, "interrupted during the blast");
			continue;
		case ENOBUFS:
		case EAGAIN:
			/* Transient: the device or socket is full. */
			sched_yield();
			continue;
		case EIO:
			if (gso_fallback(s))
				continue;
			return rbudp_send_fail(s, "sendmmsg to %s port %u: %s", s->o->host, s->o->port,
					       strerror(errno));
		case ECONNREFUSED:
			return rbudp_send_fail(s, "receiver's UDP port %u is closed (ICMP port unreachable): "
					       "did the receiver exit?", s->o->port);
		case EINVAL:
			/* With GSO the kernel says EINVAL, not EMSGSIZE, when a
			 * segment does not fit the path MTU. */
			if (s->gso_segs <= 1)
				return rbudp_send_fail(s, "sendmmsg to %s port %u: %s", s->o->host,
						       s->o->port, strerror(errno));
			/* fall through */
		case EMSGSIZE: {
			int mtu = 0;
			socklen_t ml = sizeof(mtu);

			int ip_udp = s->family == AF_INET6 ? 48 : 28;

			if (s->family == AF_INET6)
				getsockopt(s->udp, IPPROTO_IPV6, IPV6_MTU, &mtu, &ml);
			else
				getsockopt(s->udp, IPPROTO_IP, IP_MTU, &mtu, &ml);
			return rbudp_send_fail(s, "a %u-byte datagram exceeds the path MTU (%d): use "
					       "--payload %d or less", s->src->payload_bytes + RBUDP_DGRAM_HDR,
					       mtu, mtu - ip_udp - RBUDP_DGRAM_HDR);
		}
		default:
			return rbudp_send_fail(s, "sendmmsg to %s port %u: %s", s->o->host, s->o->port,
					       strerror(errno));
		}
	}
	return 0;
}

/*
 * Stop sending until @until_ns, the end of a PAUSE window from rxbneckd.
 * Keeps reading the daemon (a CANCEL ends the pause early, a new schedule
 * may move its end) and the receiver while waiting. Afterwards the pacing
 * restarts from now: no catching up on the paused time.
 */
static int honour_pause(struct rbudp_sender *s, struct rbudp_pace *pace,
			struct rbudp_send_round *rs, uint64_t until_ns)
{
	uint64_t start = rxb_mono_ns(), now = start, rate = 0, next_stop;

	while (now < until_ns) {
		uint64_t t = until_ns < now + CTL_CHECK_NS ? until_ns : now + CTL_CHECK_NS;

		if (rbudp_delay_sleep_until(t, SPIN_NS) == -EINTR && rbudp_send_stopped(s))
			return rbudp_send_fail(s, "interrupted during a pause");
		now = rxb_mono_ns();
		if (rbudp_send_ctl_check(s))
			return -1;
		rbudp_follow_poll(s->o->follow, now, &rate, &until_ns, &next_stop);
	}
	rbudp_follow_paused(s->o->follow, start, now);
	rs->pause_ns += now - start;
	if (rate)
		s->rate_bps = rate;
	rbudp_pace_set_rate(pace, s->rate_bps, now);
	return 0;
}

/*
 * Between batches: react to a signal, to the receiver giving up, and to
 * rxbneckd's advice. Sets *next_ctl to when the next look is due (the next
 * pause start when that is sooner). -1 on failure.
 */
static int blast_housekeeping(struct rbudp_sender *s, struct rbudp_pace *pace,
			      struct rbudp_send_round *rs, uint64_t *now, uint64_t *next_ctl)
{
	uint64_t rate, paused_until, next_stop;

	if (rbudp_send_stopped(s))
		return rbudp_send_fail(s, "interrupted during the blast");
	if (rbudp_send_ctl_check(s))
		return -1;
	*next_ctl = *now + CTL_CHECK_NS;
	if (!s->o->follow)
		return 0;
	rbudp_follow_poll(s->o->follow, *now, &rate, &paused_until, &next_stop);
	if (rate && rate != s->rate_bps) {
		s->rate_bps = rate;
		rbudp_pace_set_rate(pace, rate, *now);
	}
	/* Back-to-back windows (a periodic schedule with a short on-time, a
	 * new schedule) are honoured in turn before anything is sent. */
	while (paused_until > *now) {
		if (honour_pause(s, pace, rs, paused_until))
			return -1;
		*now = rxb_mono_ns();
		*next_ctl = *now + CTL_CHECK_NS;
		rbudp_follow_poll(s->o->follow, *now, &rate, &paused_until, &next_stop);
	}
	if (next_stop < *next_ctl)
		*next_ctl = next_stop;
	return 0;
}


/*
 * Send every packet of s->need once, paced. The schedule counts UDP payload
 * bytes (sequence header + file data), the unit of --rate and of RATE.
 */
static int blast(struct rbudp_sender *s, struct rbudp_send_round *rs, uint64_t todo)
{
	const struct rbudp_source *src = s->src;
	uint64_t dgram = RBUDP_DGRAM_HDR + src->payload_bytes;
	uint64_t now = rxb_mono_ns(), next_ctl = now, start = now, end = now;
	uint32_t seq = rbudp_bitmap_next_set(&s->need, 0);
	struct rbudp_pace pace;

	rbudp_pace_init(&pace, s->rate_bps, s->o->burst_pkts * dgram, now);
	/* The newest advice first: a rate that came between rounds, a pause.
	 * Then the schedule starts now, without credit for that time. */
	if (blast_housekeeping(s, &pace, rs, &now, &next_ctl))
		return -1;
	rbudp_pace_set_rate(&pace, s->rate_bps, now);
	start = end = now;
	rs->start_ns = now - s->t0;
	rs->rate_bps = s->rate_bps;
	while (seq < src->total_pkts) {
		uint64_t quota;
		unsigned n = 0;

		if (now >= next_ctl) {
			if (blast_housekeeping(s, &pace, rs, &now, &next_ctl))
				return -1;
			progress(s, now, rs->round, rs->pkts_sent, todo, rs->udp_bytes, start);
		}
		quota = rbudp_pace_quota(&pace, now);
		while (n < s->o->batch_pkts && seq < src->total_pkts) {
			uint32_t len;
			const uint8_t *p = rbudp_source_pkt(src, seq, &len);
			uint8_t *h = s->hdrs + (size_t)n * RBUDP_DGRAM_HDR;

			if (RBUDP_DGRAM_HDR + len > quota)
				break;
			quota -= RBUDP_DGRAM_HDR + len;
			rbudp_pace_sent(&pace, RBUDP_DGRAM_HDR + len);
			rbudp_dgram_seal(&s->keys, h, seq, rs->round, p, len);
			s->iov[2 * n].iov_base = h;
			s->iov[2 * n].iov_len = RBUDP_DGRAM_HDR;
			s->iov[2 * n + 1].iov_base = (void *)p;
			s->iov[2 * n + 1].iov_len = len;
			rs->bytes_sent += len;
			rs->udp_bytes += RBUDP_DGRAM_HDR + len;
			n++;
			seq = rbudp_bitmap_next_set(&s->need, seq + 1);
		}
		if (n) {
			if (send_batch(s, n))
				return -1;
			rs->pkts_sent += n;
			end = rxb_mono_ns();
			now = end;
			continue;
		}
		/* Nothing due: wait for the next packet's slot, or the next look
		 * at the control sockets, whichever comes first. */
		{
			uint64_t t = rbudp_pace_next_ns(&pace, dgram);

			rbudp_delay_sleep_until(t < next_ctl ? t : next_ctl, SPIN_NS);
			now = rxb_mono_ns();
		}
	}
	rs->blast_ns = end - start;
	s->next_progress_ns = 0;
	progress(s, end, rs->round, rs->pkts_sent, todo, rs->udp_bytes, start);
	return 0;
}

/* ------------------------------------------------------------- rounds -- */

/* Sleep until @t_ns (a blast start), servicing the daemon every 100 ms. */
static int wait_until(struct rbudp_sender *s, uint64_t t_ns)
{
	for (;;) {
		uint64_t now = rxb_mono_ns(), t = t_ns;

		rbudp_send_ctl_follow_idle(s);
		if (now >= t_ns)
			return 0;
		if (t - now > 100 * RXB_NSEC_PER_MSEC)
			t = now + 100 * RXB_NSEC_PER_MSEC;
		if (rbudp_delay_sleep_until(t, SPIN_NS) == -EINTR && rbudp_send_stopped(s))
			return rbudp_send_fail(s, "interrupted");
	}
}

static int run_rounds(struct rbudp_sender *s)
{
	uint64_t todo = s->src->total_pkts, blast_at = s->t0 + s->o->delay_ns;
	uint32_t stall = 0;

	for (uint32_t round = 1;; round++) {
		uint8_t buf[RBUDP_FRAME_HDR + RBUDP_BLAST_DONE_LEN + RBUDP_CTL_TAG_LEN];
		struct rbudp_blast_done done = { .round = round };
		struct rbudp_send_round *rs;
		uint64_t t_done;
		int err;

		if (round > s->o->max_rounds)
			return rbudp_send_fail(s, "gave up after --max-rounds %u rounds with %llu packets "
					       "still missing", s->o->max_rounds, (unsigned long long)todo);
		rs = new_round(s, round);
		if (!rs)
			return rbudp_send_fail(s, "out of memory for round statistics");
		/* Emulated propagation delay: the blast starts one one-way
		 * delay after the feedback that triggered it (Banerjee et al., §IV). */
		if (wait_until(s, blast_at))
			return -1;
		if (blast(s, rs, todo))
			return -1;
		s->r->pkts_sent += rs->pkts_sent;
		s->r->bytes_sent += rs->bytes_sent;
		s->r->udp_bytes += rs->udp_bytes;
		s->r->pause_ns += rs->pause_ns;
		done.pkts_sent = rs->pkts_sent;
		if (rbudp_send_ctl_frame(s, buf, rbudp_blast_done_encode(buf, &done), "BLAST_DONE"))
			return -1;
		t_done = rxb_mono_ns();
		err = rbudp_send_ctl_feedback(s, rs);
		if (err < 0)
			return -1;
		blast_at = rbudp_delay_release_ns(rxb_mono_ns(), s->o->delay_ns);
		rs->wait_ns = rxb_mono_ns() - t_done;
		if (err == 1) {
			rs->pkts_lost = 0;
			s->r->transfer_ns = rxb_mono_ns() - s->t0;
			return 0;
		}
		stall = rs->pkts_lost == rs->pkts_sent ? stall + 1 : 0;
		if (stall >= s->o->stall_rounds)
			return rbudp_send_fail(s, "no datagram reached the receiver in %u consecutive rounds "
					       "(firewall? wrong address?)", stall);
		todo = rs->pkts_lost;
		/* The reported missing set is the next round's send set. */
		{
			struct rbudp_bitmap t = s->need;

			s->need = s->next;
			s->next = t;
		}
	}
}

static int alloc_buffers(struct rbudp_sender *s)
{
	uint32_t n = s->o->batch_pkts;

	if (rbudp_bitmap_init(&s->need, s->src->total_pkts, true) ||
	    rbudp_bitmap_init(&s->next, s->src->total_pkts, false))
		return rbudp_send_fail(s, "out of memory for the packet bitmaps");
	s->msgs = calloc(n, sizeof(*s->msgs));
	s->iov = calloc(2 * (size_t)n, sizeof(*s->iov));
	s->hdrs = calloc(n, RBUDP_DGRAM_HDR);
	if (!s->msgs || !s->iov || !s->hdrs)
		return rbudp_send_fail(s, "out of memory for %u send slots", n);
	return 0;
}

int rbudp_send_run(const struct rbudp_send_opts *o, const struct rbudp_source *src,
		   struct rbudp_send_result *r)
{
	struct rbudp_sender s = { .o = o, .src = src, .r = r, .udp = -1, .rate_bps = o->rate_bps };
	struct sockaddr_storage ss;
	socklen_t sl;
	uint64_t t;
	int err, ret = -1;

	s.conn.fd = -1;
	if (o->batch_pkts == 0 || o->batch_pkts > BATCH_MAX)
		return rbudp_send_fail(&s, "batch size must be 1..%d", BATCH_MAX);
	if (alloc_buffers(&s))
		goto out;

	t = rxb_mono_ns();
	rbudp_source_digest(src, r->digest);
	r->digest_ns = rxb_mono_ns() - t;

	err = rbudp_net_resolve(o->host, o->port, 0, &ss, &sl);
	if (err) {
		rbudp_send_fail(&s, "cannot resolve --to %s: %s", o->host, gai_strerror(err));
		goto out;
	}
	t = rxb_mono_ns();
	if (rbudp_send_ctl_connect(&s, &ss, sl) || open_udp(&s, &ss, sl))
		goto out;
	rxb_strlcpy(r->peer, s.conn.peer, sizeof(r->peer));
	if (rbudp_send_ctl_setup(&s))
		goto out;
	s.t0 = rxb_mono_ns();
	r->t0_ns = s.t0;
	r->setup_ns = s.t0 - t;
	r->gso_segs = s.gso_segs;
	if (run_rounds(&s) || rbudp_send_ctl_verified(&s))
		goto out;
	r->ok = true;
	ret = 0;
out:
	if (ret && s.conn.fd >= 0)
		rbudp_conn_send_error(&s.conn, RBUDP_ERR_ABORTED, r->error);
	if (s.conn.buf)
		rbudp_conn_finish(&s.conn);
	else if (s.conn.fd >= 0)
		close(s.conn.fd);
	if (s.udp >= 0)
		close(s.udp);
	free(s.msgs);
	free(s.iov);
	free(s.hdrs);
	rbudp_auth_keys_clear(&s.keys);
	rbudp_bitmap_finish(&s.need);
	rbudp_bitmap_finish(&s.next);
	return ret;
}
