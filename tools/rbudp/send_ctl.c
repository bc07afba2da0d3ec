// SPDX-License-Identifier: GPL-2.0-or-later
/* The RBUDP sender's control connection. See send_ctl.h and docs/rbudp.md §3. */
#include "tools/rbudp/send_ctl.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/follow.h"
#include "tools/rbudp/digest.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/wire.h"

/* ------------------------------------------------------------ connect -- */

int rbudp_send_ctl_connect(struct rbudp_sender *s, const struct sockaddr_storage *ss,
			   socklen_t sl)
{
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t el = sizeof(err);

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return rbudp_send_fail(s, "socket(TCP): %s", strerror(errno));
	if (connect(fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS) {
		err = errno;
		goto out_fail;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&pfd, 1, s->o->timeout_ms) <= 0) {
		err = ETIMEDOUT;
		goto out_fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		err = errno;
	if (err)
		goto out_fail;
	err = rbudp_conn_init(&s->conn, fd);
	if (err) {
		close(fd);
		return rbudp_send_fail(s, "control connection set-up: %s", strerror(-err));
	}
	return 0;

out_fail:
	close(fd);
	return rbudp_send_fail(s, "cannot connect to the receiver at %s port %u (TCP): %s",
			       s->o->host, s->o->port, strerror(err));
}

static uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	return rbudp_net_addr_port(&ss);
}

static int peer_error(struct rbudp_sender *s, const struct rbudp_frame *f)
{
	struct rbudp_error e;
	const char *why;

	if (rbudp_error_decode(f->body, f->len, &e, &why))
		return rbudp_send_fail(s, "receiver %s sent a malformed ERROR: %s", s->conn.peer, why);
	if (e.code == RBUDP_ERR_VERSION)
		return rbudp_send_fail(s, "receiver %s speaks another RBUDP protocol version (it says: %s); "
				       "this rxbneck-send speaks version %d: use the same release on both ends",
				       s->conn.peer, e.text, RBUDP_VERSION);
	return rbudp_send_fail(s, "receiver %s reports an error (code %u): %s", s->conn.peer,
			       e.code, e.text);
}

static int conn_failure(struct rbudp_sender *s, int err, const char *waiting_for, const char *why)
{
	switch (err) {
	case -ETIMEDOUT:
		return rbudp_send_fail(s, "no %s from receiver %s within %d ms", waiting_for,
				       s->conn.peer, s->o->timeout_ms);
	case -ECONNRESET:
		return rbudp_send_fail(s, "receiver %s closed the control connection while we waited for %s",
				       s->conn.peer, waiting_for);
	case -EBADMSG:
		return rbudp_send_fail(s, "receiver %s sent a malformed frame (%s) while we waited for %s",
				       s->conn.peer, why, waiting_for);
	case -EINTR:
		return rbudp_send_fail(s, "interrupted while waiting for %s", waiting_for);
	default:
		return rbudp_send_fail(s, "control connection to %s: %s", s->conn.peer, strerror(-err));
	}
}

/* Check and strip the tag of a tagged frame. -1 when it fails. */
static int frame_auth(struct rbudp_sender *s, struct rbudp_frame *f)
{
	if (!rbudp_msg_tagged(f->type))
		return 0;
	if (!rbudp_auth_ctl_open(&s->keys, f->body - RBUDP_FRAME_HDR, f->body, f->len))
		return rbudp_send_fail(s, "receiver %s: %s frame failed authentication (forged or corrupted "
				       "on the way)", s->conn.peer, rbudp_msg_name(f->type));
	f->len -= RBUDP_CTL_TAG_LEN;
	return 0;
}

/* Wait for a frame of @want (or ERROR), tag checked. 0 with it in *@f, -1 on failure. */
static int wait_frame(struct rbudp_sender *s, uint16_t want, int timeout_ms,
		      struct rbudp_frame *f)
{
	const char *why = NULL;
	int err;

	for (;;) {
		err = rbudp_conn_wait(&s->conn, timeout_ms > 1000 ? 1000 : timeout_ms, f, &why);
		if (err == -ETIMEDOUT || err == -EINTR) {
			if (rbudp_send_stopped(s))
				return rbudp_send_fail(s, "interrupted while waiting for %s", rbudp_msg_name(want));
			timeout_ms -= 1000;
			if (timeout_ms > 0)
				continue;
			err = -ETIMEDOUT;
		}
		if (err < 0)
			return conn_failure(s, err, rbudp_msg_name(want), why);
		if (f->type == RBUDP_MSG_ERROR)
			return peer_error(s, f);
		if (f->type != want)
			return rbudp_send_fail(s, "receiver %s sent %s where %s was expected", s->conn.peer,
					       rbudp_msg_name(f->type), rbudp_msg_name(want));
		return frame_auth(s, f);
	}
}

int rbudp_send_ctl_frame(struct rbudp_sender *s, uint8_t *buf, size_t len, const char *what)
{
	if (rbudp_msg_tagged(rbudp_get_u16(buf)))
		len = rbudp_auth_ctl_seal(&s->keys, buf, len);
	int err = rbudp_conn_send(&s->conn, buf, len, s->o->timeout_ms);

	if (err)
		return rbudp_send_fail(s, "sending %s to receiver %s: %s", what, s->conn.peer,
				       strerror(-err));
	return 0;
}

/* During a blast the receiver only speaks to report an error. */
int rbudp_send_ctl_check(struct rbudp_sender *s)
{
	struct rbudp_frame f;
	const char *why = NULL;
	int err;

	err = rbudp_conn_fill(&s->conn);
	if (err < 0)
		return conn_failure(s, err, "the end of the blast", why);
	err = rbudp_conn_next(&s->conn, &f, &why);
	if (err < 0)
		return conn_failure(s, err, "the end of the blast", why);
	if (err == 0)
		return 0;
	if (f.type == RBUDP_MSG_ERROR)
		return peer_error(s, &f);
	return rbudp_send_fail(s, "receiver %s sent %s during a blast", s->conn.peer,
			       rbudp_msg_name(f.type));
}

/* Keep the daemon connection serviced (RATE updates, keepalive). */
void rbudp_send_ctl_follow_idle(struct rbudp_sender *s)
{
	uint64_t rate, paused_until, next_stop;

	if (s->o->follow)
		rbudp_follow_poll(s->o->follow, rxb_mono_ns(), &rate, &paused_until, &next_stop);
}

/*
 * HELLO / CHALLENGE: agree on the session keys. With a pre-shared key the
 * receiver's proof is checked before anything else is sent.
 */
static int handshake(struct rbudp_sender *s)
{
	uint8_t buf[RBUDP_FRAME_HDR + RBUDP_HELLO_LEN], hello[RBUDP_HELLO_LEN];
	uint8_t proof[RBUDP_PROOF_LEN];
	struct rbudp_hello h = { .auth = s->o->psk ? RBUDP_AUTH_PSK : RBUDP_AUTH_CLEAR };
	struct rbudp_challenge c;
	struct rbudp_frame f;
	const char *why;
	int err;

	err = rbudp_auth_random(h.nonce, sizeof(h.nonce));
	if (err)
		return rbudp_send_fail(s, "getrandom: %s", strerror(-err));
	rbudp_hello_encode(buf, &h);
	memcpy(hello, buf + RBUDP_FRAME_HDR, sizeof(hello));
	if (rbudp_send_ctl_frame(s, buf, sizeof(buf), "HELLO") ||
	    wait_frame(s, RBUDP_MSG_CHALLENGE, s->o->timeout_ms, &f))
		return -1;
	if (rbudp_challenge_decode(f.body, f.len, &c, &why))
		return rbudp_send_fail(s, "receiver %s: bad CHALLENGE: %s", s->conn.peer, why);
	if (c.auth != h.auth)
		return rbudp_send_fail(s, c.auth == RBUDP_AUTH_PSK ?
				       "receiver %s requires a pre-shared key: give --key-file" :
				       "receiver %s has no pre-shared key but --key-file was given: the "
				       "receiver needs --key-file too", s->conn.peer);
	rbudp_auth_keys_derive_session(&s->keys, s->o->psk, s->o->psk_len, &h, &c, true);
	explicit_bzero(c.secret, sizeof(c.secret));
	if (s->o->psk) {
		rbudp_auth_proof(&s->keys, hello, sizeof(hello), f.body,
				 RBUDP_CHALLENGE_LEN - RBUDP_PROOF_LEN, proof);
		if (!rbudp_auth_equal(proof, c.proof, sizeof(proof)))
			return rbudp_send_fail(s, "receiver %s failed to prove it holds the pre-shared key: "
					       "the two --key-file keys differ", s->conn.peer);
		s->r->psk = true;
	}
	return 0;
}

int rbudp_send_ctl_setup(struct rbudp_sender *s)
{
	const struct rbudp_source *src = s->src;
	uint8_t buf[RBUDP_FRAME_HDR + RBUDP_SETUP_LEN + RBUDP_CTL_TAG_LEN];
	struct rbudp_setup_ok ok;
	struct rbudp_setup m = {
		.payload_bytes = src->payload_bytes,
		.total_pkts = src->total_pkts,
		.file_bytes = src->file_bytes,
		.one_way_delay_ns = s->o->delay_ns,
		.udp_port = local_port(s->udp),
	};
	struct rbudp_frame f;
	const char *why;

	memcpy(m.digest, s->r->digest, sizeof(m.digest));
	if (m.udp_port == 0)
		return rbudp_send_fail(s, "cannot learn the local UDP port: %s", strerror(errno));
	if (handshake(s))
		return -1;
	if (rbudp_send_ctl_frame(s, buf, rbudp_setup_encode(buf, &m), "SETUP"))
		return -1;
	if (wait_frame(s, RBUDP_MSG_SETUP_OK, s->o->timeout_ms, &f))
		return -1;
	if (rbudp_setup_ok_decode(f.body, f.len, &ok, &why))
		return rbudp_send_fail(s, "receiver %s: bad SETUP_OK: %s", s->conn.peer, why);
	s->r->rcvbuf_bytes = ok.rcvbuf_bytes;
	s->r->feedback_delay_ns = ok.feedback_delay_ns;
	return 0;
}

/*
 * Read the receiver's answer to round @round: COMPLETE (returns 1) or one
 * MISSING frame per segment, decoded into s->next (returns 0).
 */
int rbudp_send_ctl_feedback(struct rbudp_sender *s, struct rbudp_send_round *rs)
{
	uint32_t nseg = rbudp_bitmap_seg_count(s->src->total_pkts), seg = 0, round_missing = 0;
	int timeout = s->o->timeout_ms + (int)(s->r->feedback_delay_ns / RXB_NSEC_PER_MSEC);
	uint64_t sum = 0;

	rbudp_bitmap_fill(&s->next, false);
	while (seg < nseg) {
		struct rbudp_missing m;
		struct rbudp_frame f;
		const char *why = NULL;
		int err;

		rbudp_send_ctl_follow_idle(s);
		err = rbudp_conn_wait(&s->conn, 1000, &f, &why);
		if (err == -ETIMEDOUT || err == -EINTR) {
			if (rbudp_send_stopped(s))
				return rbudp_send_fail(s, "interrupted while waiting for feedback");
			timeout -= 1000;
			if (timeout > 0)
				continue;
			err = -ETIMEDOUT;
		}
		if (err < 0)
			return conn_failure(s, err, "round feedback", why);
		if (f.type == RBUDP_MSG_ERROR)
			return peer_error(s, &f);
		if (frame_auth(s, &f))
			return -1;
		if (f.type == RBUDP_MSG_COMPLETE && seg == 0) {
			struct rbudp_complete c;

			if (rbudp_complete_decode(f.body, f.len, &c, &why))
				return rbudp_send_fail(s, "receiver %s: bad COMPLETE: %s", s->conn.peer, why);
			if (c.round != rs->round || c.total_pkts != s->src->total_pkts)
				return rbudp_send_fail(s, "receiver %s: COMPLETE for round %u / %u packets, "
						       "expected round %u / %u", s->conn.peer, c.round,
						       c.total_pkts, rs->round, s->src->total_pkts);
			return 1;
		}
		if (f.type != RBUDP_MSG_MISSING)
			return rbudp_send_fail(s, "receiver %s sent %s where round %u feedback was expected",
					       s->conn.peer, rbudp_msg_name(f.type), rs->round);
		if (rbudp_missing_decode(f.body, f.len, &m, &why))
			return rbudp_send_fail(s, "receiver %s: bad MISSING: %s", s->conn.peer, why);
		if (m.round != rs->round || m.seg != seg)
			return rbudp_send_fail(s, "receiver %s: MISSING for round %u segment %u, expected "
					       "round %u segment %u", s->conn.peer, m.round, m.seg, rs->round, seg);
		if (seg == 0)
			round_missing = m.round_missing;
		else if (m.round_missing != round_missing)
			return rbudp_send_fail(s, "receiver %s: MISSING segments disagree on the round total",
					       s->conn.peer);
		if (rbudp_bitmap_miss_decode(&s->next, seg, m.enc, m.data, m.data_len, m.n_missing, &why))
			return rbudp_send_fail(s, "receiver %s: bad MISSING segment %u: %s", s->conn.peer,
					       seg, why);
		sum += m.n_missing;
		seg++;
	}
	if (sum != round_missing || round_missing == 0)
		return rbudp_send_fail(s, "receiver %s: MISSING segments list %llu packets, announced %u",
				       s->conn.peer, (unsigned long long)sum, round_missing);
	/* Only what we just sent can be missing; anything else is a receiver bug. */
	if (!rbudp_bitmap_is_subset(&s->next, &s->need))
		return rbudp_send_fail(s, "receiver %s reports packets missing that it had acknowledged",
				       s->conn.peer);
	rs->pkts_lost = round_missing;
	return 0;
}

int rbudp_send_ctl_verified(struct rbudp_sender *s)
{
	int timeout = 120000 + (int)(s->r->feedback_delay_ns / RXB_NSEC_PER_MSEC);
	char theirs[RBUDP_DIGEST_HEX_LEN + 1], ours[RBUDP_DIGEST_HEX_LEN + 1];
	struct rbudp_verified v;
	struct rbudp_frame f;
	const char *why;
	uint64_t t = rxb_mono_ns();

	/* The receiver checks the digest and writes the file first: allow time. */
	if (wait_frame(s, RBUDP_MSG_VERIFIED, timeout, &f))
		return -1;
	if (rbudp_verified_decode(f.body, f.len, &v, &why))
		return rbudp_send_fail(s, "receiver %s: bad VERIFIED: %s", s->conn.peer, why);
	s->r->verify_wait_ns = rxb_mono_ns() - t;
	s->r->verify_status = v.status;
	rbudp_digest_hex(v.digest, theirs);
	rbudp_digest_hex(s->r->digest, ours);
	if (v.status == RBUDP_VERIFY_DIGEST)
		return rbudp_send_fail(s, "INTEGRITY FAILURE: receiver computed SHA-256 %s, sent %s",
				       theirs, ours);
	if (v.status == RBUDP_VERIFY_WRITE)
		return rbudp_send_fail(s, "receiver %s got the data intact but could not store it",
				       s->conn.peer);
	if (v.status == RBUDP_VERIFY_NOT_KEPT)
		return 0;	/* --discard: nothing hashed, per-datagram checks only */
	if (memcmp(v.digest, s->r->digest, RBUDP_DIGEST_LEN) != 0)
		return rbudp_send_fail(s, "receiver %s says verified but reports SHA-256 %s, ours %s",
				       s->conn.peer, theirs, ours);
	s->r->digest_checked = true;
	return 0;
}
