// SPDX-License-Identifier: GPL-2.0-or-later
/* The RBUDP receiver engine. See receiver.h and docs/rbudp.md. */
#include "tools/rbudp/receiver.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/auth.h"
#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/conn.h"
#include "tools/rbudp/delay.h"
#include "tools/rbudp/dgram.h"
#include "tools/rbudp/error.h"
#include "tools/rbudp/digest.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/recv_setup.h"
#include "tools/rbudp/recv_store.h"

#define RX_BATCHES_PER_WAKE	64	/* then look at the control socket again */
#define PROGRESS_NS		(500 * RXB_NSEC_PER_MSEC)
#define BATCH_MAX		1024

/* Record the first error, tell the sender (best effort) and return -1. */
int rbudp_recv_fail(struct rbudp_recv_session *s, uint32_t code, const char *fmt, ...)
{
	const char *peer = s->r->peer[0] ? s->r->peer : "?";
	va_list ap;
	bool kept;

	va_start(ap, fmt);
	kept = rbudp_error_keep(s->r->error, sizeof(s->r->error), peer, fmt, ap);
	va_end(ap);
	if (kept && code && s->conn.fd >= 0)
		rbudp_conn_send_error(&s->conn, code, s->r->error);
	return -1;
}

static bool stopped(const struct rbudp_recv_session *s)
{
	return s->o->stop && *s->o->stop;
}

/* ------------------------------------------------------------ sockets -- */

int rbudp_receiver_open(struct rbudp_receiver *rx, const char *addr, uint16_t port,
			int rcvbuf_bytes)
{
	struct sockaddr_storage ss;
	socklen_t sl, il = sizeof(rx->rcvbuf_bytes);
	int one = 1, err;

	memset(rx, 0, sizeof(*rx));
	rx->udp = rx->listen_fd = -1;
	err = rbudp_net_resolve(addr, port, 1, &ss, &sl);
	if (err) {
		rxb_err("cannot resolve --listen %s: %s", addr ? addr : "(any)", gai_strerror(err));
		return -EINVAL;
	}
	rxb_sockaddr_str(&ss, rx->local, sizeof(rx->local));
	rx->udp = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	rx->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (rx->udp < 0 || rx->listen_fd < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, errno, "socket() for %s", rx->local);
		goto fail;
	}
	if (setsockopt(rx->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, errno, "SO_REUSEADDR on %s", rx->local);
		goto fail;
	}
	if (rcvbuf_bytes > 0) {
		err = rbudp_net_set_bufsize(rx->udp, SO_RCVBUF, SO_RCVBUFFORCE, rcvbuf_bytes,
					    &rx->rcvbuf_bytes);
		if (err) {
			rxb_log_errno(RXB_LOG_ERR, -err, "setting --rcvbuf %d", rcvbuf_bytes);
			goto fail;
		}
	} else if (getsockopt(rx->udp, SOL_SOCKET, SO_RCVBUF, &rx->rcvbuf_bytes, &il) < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, errno, "getsockopt(SO_RCVBUF)");
		goto fail;
	}
	if (bind(rx->udp, (struct sockaddr *)&ss, sl) < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, errno, "cannot bind UDP %s", rx->local);
		goto fail;
	}
	if (bind(rx->listen_fd, (struct sockaddr *)&ss, sl) < 0 || listen(rx->listen_fd, 16) < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, errno, "cannot listen on TCP %s", rx->local);
		goto fail;
	}
	return 0;
fail:
	rbudp_receiver_close(rx);
	return err;
}

void rbudp_receiver_close(struct rbudp_receiver *rx)
{
	rbudp_recv_accept_close(rx);
	if (rx->udp >= 0)
		close(rx->udp);
	if (rx->listen_fd >= 0)
		close(rx->listen_fd);
	rx->udp = rx->listen_fd = -1;
}

void rbudp_recv_result_init(struct rbudp_recv_result *r)
{
	memset(r, 0, sizeof(*r));
	r->socket_drops = UINT64_MAX;
}

void rbudp_recv_result_finish(struct rbudp_recv_result *r)
{
	free(r->rounds);
	free(r->gaps);
	memset(r, 0, sizeof(*r));
}

/* Another sender connects while a session runs: queue it or turn it away. */
static void newcomer(struct rbudp_recv_session *s)
{
	char text[160];

	snprintf(text, sizeof(text), "receiver busy with a transfer from %s", s->r->peer);
	rbudp_recv_accept_newcomer(s->rx, !s->r->counted, text);
}

/* The session shows it is a real transfer: it counts, and queued senders
 * are told the receiver is busy rather than left waiting. */
void rbudp_recv_counts(struct rbudp_recv_session *s)
{
	char text[160];

	if (s->r->counted)
		return;
	s->r->counted = true;
	snprintf(text, sizeof(text), "receiver busy with a transfer from %s", s->r->peer);
	rbudp_recv_accept_refuse_queued(s->rx, text);
}

/* -------------------------------------------------------------- rounds -- */

static struct rbudp_recv_round *new_round(struct rbudp_recv_session *s, uint32_t expected)
{
	struct rbudp_recv_result *r = s->r;
	struct rbudp_recv_round *v = rxb_append((void **)&r->rounds, &r->n_rounds,
						&r->cap_rounds, sizeof(*v));

	if (!v)
		return NULL;
	s->rr = v;
	s->rr->round = ++s->round;
	s->rr->pkts_expected = expected;
	return s->rr;
}

/* ---------------------------------------------------------- datagrams -- */

static void bad_dgram(struct rbudp_recv_session *s, uint64_t *counter, bool *warned,
		      const char *what, uint32_t seq, uint32_t len)
{
	(*counter)++;
	if (*warned)
		return;
	*warned = true;
	rxb_warn("transfer from %s: dropped a datagram with %s (seq %u, %u bytes); "
		 "further ones are only counted", s->r->peer, what, seq, len);
}

static void note_gap(struct rbudp_recv_session *s, uint64_t end_ns)
{
	struct rbudp_recv_result *r = s->r;

	r->gaps_total++;
	if (r->n_gaps == RBUDP_RECV_GAPS_MAX)
		return;
	if (!r->gaps) {
		r->gaps = calloc(RBUDP_RECV_GAPS_MAX, sizeof(*r->gaps));
		if (!r->gaps)
			return;
	}
	r->gaps[r->n_gaps++] = (struct rbudp_recv_gap){
		.round = s->round, .start_ns = s->rr->last_rx_ns, .end_ns = end_ns,
	};
}

static void take_dgram(struct rbudp_recv_session *s, const uint8_t *d, uint32_t len, int flags,
		       uint64_t now)
{
	struct rbudp_recv_result *r = s->r;
	uint32_t seq, plen;

	r->dgrams++;
	switch (rbudp_dgram_check(&s->keys, &s->su, s->round, d, len, flags & MSG_TRUNC,
				  &seq, &plen)) {
	case RBUDP_DGRAM_OK:
		break;
	case RBUDP_DGRAM_SHORT:
		bad_dgram(s, &r->bad_short, &s->warned_short, "no room for a header", 0, len);
		return;
	case RBUDP_DGRAM_SEQ:
		bad_dgram(s, &r->bad_seq, &s->warned_seq, "a sequence number past the end",
			  seq, len);
		return;
	case RBUDP_DGRAM_LENGTH:
		bad_dgram(s, &r->bad_len, &s->warned_len, "the wrong length", seq, len);
		return;
	case RBUDP_DGRAM_FORGED:
		bad_dgram(s, &r->rejected, &s->warned_forged,
			  s->keys.dgram_mac ? "a wrong authentication tag" : "a wrong session token",
			  seq, len);
		return;
	}
	if (!s->proven) {
		s->proven = true;
		rbudp_recv_counts(s);
	}
	if (rbudp_bitmap_test_and_set(&s->have, seq)) {
		r->pkts_duplicate++;
		s->rr->pkts_duplicate++;
		return;
	}
	if (s->keep)
		rbudp_store_put(&s->store, (uint64_t)seq * s->su.payload_bytes,
				d + RBUDP_DGRAM_HDR, plen);
	r->pkts_received++;
	s->rr->pkts_received++;
	s->rr->bytes_received += plen;
	if (!s->rr->first_rx_ns)
		s->rr->first_rx_ns = now - s->t0;
	else if (s->o->gap_ns && now - s->t0 >= s->rr->last_rx_ns + s->o->gap_ns)
		note_gap(s, now - s->t0);
	s->rr->last_rx_ns = now - s->t0;
}

/*
 * Read what the UDP socket holds, at most RX_BATCHES_PER_WAKE batches.
 * Returns 1 when the socket was left empty, 0 when more is waiting, -1 on error.
 */
static int rx_socket(struct rbudp_recv_session *s)
{
	unsigned vlen = s->o->batch_pkts;

	for (int b = 0; b < RX_BATCHES_PER_WAKE; b++) {
		int n = recvmmsg(s->rx->udp, s->msgs, vlen, MSG_DONTWAIT, NULL);
		uint64_t now;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			if (errno == EINTR)
				return 0;
			/* A connected UDP socket reports ICMP errors from the
			 * peer; they say nothing about our data. */
			if (errno == ECONNREFUSED || errno == EHOSTUNREACH ||
			    errno == ENETUNREACH)
				continue;
			return rbudp_recv_fail(s, RBUDP_ERR_ABORTED, "recvmmsg: %s", strerror(errno));
		}
		now = rxb_mono_ns();
		for (int i = 0; i < n; i++)
			take_dgram(s, s->slots + (size_t)i * s->slot_bytes, s->msgs[i].msg_len,
				   s->msgs[i].msg_hdr.msg_flags, now);
		if (n > 0)
			s->last_rx = s->last_activity = now;
		if ((unsigned)n < vlen)
			return 1;
	}
	return 0;
}

/* ----------------------------------------------------------- feedback -- */

/* Seal (tag) the frame in @buf, which has room for the tag, and queue it. */
static int queue_frame(struct rbudp_recv_session *s, uint8_t *buf, size_t len, uint64_t now)
{
	len = rbudp_auth_ctl_seal(&s->keys, buf, len);
	if (rbudp_delay_outq_push(&s->outq, buf, len,
				  rbudp_delay_release_ns(now, s->r->feedback_delay_ns)))
		return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "out of memory for feedback");
	return 0;
}

/* Send what the delay line has released. */
static int flush_outq(struct rbudp_recv_session *s, uint64_t now)
{
	const struct rbudp_outq_msg *m;

	while ((m = rbudp_delay_outq_peek_due(&s->outq, now))) {
		int err = rbudp_conn_send(&s->conn, m->data, m->len, s->o->timeout_ms);

		if (err)
			return rbudp_recv_fail(s, 0, "sending feedback to %s: %s", s->r->peer, strerror(-err));
		rbudp_delay_outq_drop(&s->outq);
		if (s->state == RX_COMPLETE && !s->outq.head)
			s->r->transfer_ns = rxb_mono_ns() - s->t0;
	}
	return 0;
}

/* End the current round: report what is missing and start the next. */
static int end_round(struct rbudp_recv_session *s, uint64_t now)
{
	uint32_t missing = s->su.total_pkts - (uint32_t)s->r->pkts_received;
	uint32_t nseg = rbudp_bitmap_seg_count(s->su.total_pkts);

	s->rr->pkts_lost = missing;
	s->rr->drain_ns = now - s->done_at;
	if (missing == 0) {
		struct rbudp_complete c = { .round = s->round, .total_pkts = s->su.total_pkts };

		s->state = RX_COMPLETE;
		return queue_frame(s, s->frame, rbudp_complete_encode(s->frame, &c), now);
	}
	for (uint32_t k = 0; k < nseg; k++) {
		uint8_t *data = s->frame + RBUDP_FRAME_HDR + RBUDP_MISSING_HDR_LEN;
		struct rbudp_missing m = { .round = s->round, .seg = k, .round_missing = missing };
		size_t hl;

		m.data_len = rbudp_bitmap_miss_encode(&s->have, k, data, &m.enc, &m.n_missing);
		hl = rbudp_missing_hdr_encode(s->frame, &m);
		if (queue_frame(s, s->frame, hl + m.data_len, now))
			return -1;
	}
	if (!new_round(s, missing))
		return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "out of memory for round statistics");
	s->state = RX_BLAST;
	return 0;
}

/* ------------------------------------------------------- control frames -- */

static int on_blast_done(struct rbudp_recv_session *s, const uint8_t *body, uint32_t len,
			 uint64_t now)
{
	struct rbudp_blast_done d;
	const char *why;

	if (rbudp_blast_done_decode(body, len, &d, &why))
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "bad BLAST_DONE: %s", why);
	if (s->state != RX_BLAST || d.round != s->round)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "BLAST_DONE for round %u while in round %u%s",
				       d.round, s->round, s->state == RX_BLAST ? "" : " (already ended)");
	if (d.pkts_sent != s->rr->pkts_expected)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "round %u: sender says it sent %u packets, "
				       "%u were missing", d.round, d.pkts_sent, s->rr->pkts_expected);
	s->rr->pkts_sent = d.pkts_sent;
	s->done_at = now;
	s->state = RX_DRAIN;
	return 0;
}

static int rx_control(struct rbudp_recv_session *s, uint64_t now)
{
	struct rbudp_frame f;
	const char *why = NULL;
	int err;

	err = rbudp_conn_fill(&s->conn);
	if (err == -ECONNRESET)
		return rbudp_recv_fail(s, 0, "sender closed the control connection in round %u", s->round);
	if (err < 0)
		return rbudp_recv_fail(s, 0, "control connection: %s", strerror(-err));
	s->last_activity = now;
	while ((err = rbudp_conn_next(&s->conn, &f, &why)) == 1) {
		if (rbudp_msg_tagged(f.type)) {
			if (!rbudp_auth_ctl_open(&s->keys, f.body - RBUDP_FRAME_HDR, f.body, f.len))
				return rbudp_recv_fail(s, RBUDP_ERR_AUTH, "%s frame failed authentication "
						       "(forged or corrupted on the way)",
						       rbudp_msg_name(f.type));
			f.len -= RBUDP_CTL_TAG_LEN;
		}
		if (f.type == RBUDP_MSG_BLAST_DONE) {
			if (on_blast_done(s, f.body, f.len, now))
				return -1;
		} else if (f.type == RBUDP_MSG_ERROR) {
			struct rbudp_error e;

			if (rbudp_error_decode(f.body, f.len, &e, &why))
				return rbudp_recv_fail(s, 0, "sender sent a malformed ERROR: %s", why);
			return rbudp_recv_fail(s, 0, "sender gave up (code %u): %s", e.code, e.text);
		} else {
			return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "unexpected %s frame in round %u",
					       rbudp_msg_name(f.type), s->round);
		}
	}
	if (err < 0)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "malformed control frame: %s", why);
	return 0;
}

/* ------------------------------------------------------------- verify -- */

/*
 * Check the digest and store the file (--output), queue VERIFIED. With
 * --discard nothing is kept to hash: only the per-datagram checks applied,
 * and VERIFIED says exactly that (status NOT_KEPT).
 */
static int verify(struct rbudp_recv_session *s, uint64_t now)
{
	struct rbudp_verified v = { .status = RBUDP_VERIFY_NOT_KEPT };
	char got[RBUDP_DIGEST_HEX_LEN + 1], want[RBUDP_DIGEST_HEX_LEN + 1];
	uint64_t t = rxb_mono_ns();

	if (s->keep) {
		rbudp_store_digest(&s->store, v.digest);
		memcpy(s->r->digest, v.digest, RBUDP_DIGEST_LEN);
		s->r->digest_checked = true;
		s->r->verify_ns = rxb_mono_ns() - t;
		v.status = RBUDP_VERIFY_OK;
		if (memcmp(v.digest, s->su.digest, RBUDP_DIGEST_LEN) != 0) {
			v.status = RBUDP_VERIFY_DIGEST;
			rbudp_digest_hex(v.digest, got);
			rbudp_digest_hex(s->su.digest, want);
			rxb_err("INTEGRITY FAILURE from %s: SHA-256 %s, sender announced %s; "
				"output discarded", s->r->peer, got, want);
		} else {
			t = rxb_mono_ns();
			if (rbudp_store_commit(&s->store))
				v.status = RBUDP_VERIFY_WRITE;
			s->r->write_ns = rxb_mono_ns() - t;
		}
	}
	s->r->verified = v.status == RBUDP_VERIFY_OK || v.status == RBUDP_VERIFY_NOT_KEPT;
	s->state = RX_DONE;
	if (queue_frame(s, s->frame, rbudp_verified_encode(s->frame, &v), now))
		return -1;
	if (v.status == RBUDP_VERIFY_DIGEST)
		snprintf(s->r->error, sizeof(s->r->error), "integrity failure: digest mismatch");
	else if (v.status == RBUDP_VERIFY_WRITE)
		snprintf(s->r->error, sizeof(s->r->error), "could not store %s", s->o->output);
	return 0;
}

/* ------------------------------------------------------------ progress -- */

static void progress(struct rbudp_recv_session *s, uint64_t now)
{
	const struct rbudp_recv_round *rr = s->rr;
	double span;

	if (!s->o->progress || now < s->next_progress_ns || s->state != RX_BLAST)
		return;
	s->next_progress_ns = now + PROGRESS_NS;
	span = (double)(rr->last_rx_ns - rr->first_rx_ns) / 1e9;
	fprintf(stderr, "rxbneck-recv: round %u: %u/%u new pkts, %.3f Gb/s, %llu of %u "
		"received, t=%.2f s\n", rr->round, rr->pkts_received, rr->pkts_expected,
		span > 0 ? (double)rr->bytes_received * 8 / span / 1e9 : 0.0,
		(unsigned long long)s->r->pkts_received, s->su.total_pkts,
		(double)(now - s->t0) / 1e9);
}

/* --------------------------------------------------------------- loop -- */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* True when the current round has ended: all expected packets came, or
 * the socket stayed quiet for drain_idle after BLAST_DONE. */
static bool drain_over(const struct rbudp_recv_session *s, uint64_t now)
{
	uint64_t quiet_since = s->last_rx > s->done_at ? s->last_rx : s->done_at;

	return s->rr->pkts_received == s->rr->pkts_expected ||
	       now >= quiet_since + s->o->drain_idle_ns ||
	       now >= s->done_at + s->o->drain_max_ns;
}

/*
 * How the thread waits for datagrams. With poll_ns = 0 it blocks in ppoll()
 * on the UDP socket and is woken by every arrival. With poll_ns > 0, once
 * datagrams flow it stops waiting on the socket and naps poll_ns between
 * reads instead (user-space interrupt coalescing): the sender no longer
 * pays a cross-CPU wake-up per datagram, and each read takes a batch. It
 * goes back to blocking as soon as a nap finds the socket empty.
 *
 * With busy_poll it never sleeps while a round's data may arrive (BLAST,
 * DRAIN): it reads the socket in a loop and only checks the control
 * connection between reads. The thread then stays runnable and leaves its
 * CPU only when the scheduler preempts it - the receiver Datta et al.'s RBUDP+
 * assumes, whose off-CPU windows rxbneckd predicts. It costs a whole CPU.
 */
static int loop(struct rbudp_recv_session *s)
{
	uint64_t timeout_ns = (uint64_t)s->o->timeout_ms * RXB_NSEC_PER_MSEC;
	bool napping = false, backlog = false;

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = s->rx->udp, .events = POLLIN },
			{ .fd = s->conn.fd, .events = POLLIN },
			{ .fd = s->rx->listen_fd, .events = POLLIN },
		};
		uint64_t now = rxb_mono_ns(), wake;
		struct timespec ts;
		bool busy;

		if (s->state == RX_DRAIN && !backlog && drain_over(s, now) && end_round(s, now))
			return -1;
		if (flush_outq(s, now))
			return -1;
		if (s->state == RX_COMPLETE && !s->outq.head && verify(s, now))
			return -1;
		if (s->state == RX_DONE && !s->outq.head)
			return 0;
		if (stopped(s))
			return rbudp_recv_fail(s, RBUDP_ERR_ABORTED, "interrupted by a signal");
		if (!s->proven && now >= s->first_dgram_by)
			return rbudp_recv_fail(s, RBUDP_ERR_TIMEOUT, "no authenticated datagram within %.1f s "
					       "of SETUP_OK", (double)(s->first_dgram_by - s->t0) / 1e9);
		if (s->state == RX_BLAST && now >= s->last_activity + timeout_ns)
			return rbudp_recv_fail(s, RBUDP_ERR_TIMEOUT, "sender silent for %d ms in round %u",
					       s->o->timeout_ms, s->round);
		progress(s, now);
		busy = s->o->busy_poll && (s->state == RX_BLAST || s->state == RX_DRAIN);

		wake = min_u64(rbudp_delay_outq_next_ns(&s->outq), s->last_activity + timeout_ns);
		if (!s->proven)
			wake = min_u64(wake, s->first_dgram_by);
		if (s->state == RX_DRAIN) {
			uint64_t q = s->last_rx > s->done_at ? s->last_rx : s->done_at;

			wake = min_u64(wake, q + s->o->drain_idle_ns);
			wake = min_u64(wake, s->done_at + s->o->drain_max_ns);
		}
		if (s->o->progress && s->state == RX_BLAST)
			wake = min_u64(wake, s->next_progress_ns);
		if (backlog || busy)
			wake = now;
		else if (napping)
			wake = min_u64(wake, now + s->o->poll_ns);
		/* A negative fd is skipped: while napping, stay off the socket's
		 * wait queue so arrivals do not wake us. */
		if (napping || backlog || busy)
			pfd[0].fd = -1;
		wake = wake > now ? wake - now : 0;
		ts.tv_sec = (time_t)(wake / RXB_NSEC_PER_SEC);
		ts.tv_nsec = (long)(wake % RXB_NSEC_PER_SEC);
		if (ppoll(pfd, 3, &ts, NULL) < 0) {
			if (errno == EINTR)
				continue;
			return rbudp_recv_fail(s, RBUDP_ERR_ABORTED, "ppoll: %s", strerror(errno));
		}
		now = rxb_mono_ns();
		if (napping || backlog || busy || (pfd[0].revents & (POLLIN | POLLERR))) {
			uint64_t before = s->r->dgrams;
			int ret = rx_socket(s);

			if (ret < 0)
				return -1;
			backlog = ret == 0;
			/* The socket is empty: time to fault memory in ahead. */
			if (!backlog && s->keep)
				rbudp_store_ahead(&s->store);
			napping = s->o->poll_ns && s->r->dgrams != before &&
				  (s->state == RX_BLAST || s->state == RX_DRAIN);
		}
		if ((pfd[1].revents & (POLLIN | POLLERR | POLLHUP)) && rx_control(s, now))
			return -1;
		if (pfd[2].revents & POLLIN)
			newcomer(s);
	}
}

/* ------------------------------------------------------------- set-up -- */

int rbudp_receiver_serve(struct rbudp_receiver *rx, const struct rbudp_recv_opts *o,
			 struct rbudp_recv_result *r)
{
	struct rbudp_recv_session s = { .rx = rx, .o = o, .r = r, .drops0 = UINT64_MAX };
	uint64_t deadline;
	int fd = -1, err;

	s.conn.fd = -1;
	rbudp_delay_outq_init(&s.outq);
	if (o->batch_pkts == 0 || o->batch_pkts > BATCH_MAX || o->setup_timeout_ms <= 0)
		return -EINVAL;
	err = rbudp_recv_accept_next(rx, o->stop, &fd);
	if (err)
		return err;
	err = rbudp_conn_init(&s.conn, fd);
	if (err) {
		close(fd);
		rbudp_recv_fail(&s, 0, "control connection set-up: %s", strerror(-err));
		goto out;
	}
	rxb_strlcpy(r->peer, s.conn.peer, sizeof(r->peer));
	deadline = rxb_mono_ns() + (uint64_t)o->setup_timeout_ms * RXB_NSEC_PER_MSEC;
	if (rbudp_recv_setup_handshake(&s, deadline) || rbudp_recv_setup_read(&s, deadline))
		goto out;
	if (rbudp_recv_setup_prepare(&s) || rbudp_recv_setup_bind_peer(&s))
		goto out_unbind;
	r->feedback_delay_ns = o->delay_ns >= 0 ? (uint64_t)o->delay_ns : s.su.one_way_delay_ns;
	if (rbudp_net_udp_drops(rx->udp, &s.drops0))
		s.drops0 = UINT64_MAX;
	if (rbudp_recv_setup_send_ok(&s))
		goto out_unbind;
	s.t0 = s.last_activity = rxb_mono_ns();
	/* The sender blasts after its announced (emulated) one-way delay. */
	s.first_dgram_by = s.t0 + s.su.one_way_delay_ns +
			   (uint64_t)o->setup_timeout_ms * RXB_NSEC_PER_MSEC;
	r->t0_ns = s.t0;
	s.next_progress_ns = s.t0 + PROGRESS_NS;
	if (!new_round(&s, s.su.total_pkts)) {
		rbudp_recv_fail(&s, RBUDP_ERR_RESOURCES, "out of memory");
		goto out_unbind;
	}
	if (loop(&s) == 0 && r->verified)
		r->ok = true;
out_unbind:
	if (s.drops0 != UINT64_MAX && rbudp_net_udp_drops(rx->udp, &r->socket_drops) == 0)
		r->socket_drops -= s.drops0;
	else
		r->socket_drops = UINT64_MAX;
	rbudp_recv_setup_unbind_peer(&s);
out:
	rbudp_recv_setup_cleanup(&s);
	return 0;
}
