// SPDX-License-Identifier: GPL-2.0-or-later
/* The receiver's session set-up. See recv_setup.h and docs/rbudp.md §3. */
#include "tools/rbudp/recv_setup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/util.h"
#include "tools/rbudp/net.h"
#include "tools/rbudp/wire.h"

/* Wait for the next frame of the set-up until the set-up deadline. */
static int setup_frame(struct rbudp_recv_session *s, uint64_t deadline, const char *what,
		       struct rbudp_frame *f)
{
	uint64_t now = rxb_mono_ns();
	const char *why = NULL;
	int err;

	err = rbudp_conn_wait(&s->conn, now < deadline ? (int)((deadline - now) / 1000000) : 0,
			      f, &why);
	if (err == -ETIMEDOUT)
		return rbudp_recv_fail(s, RBUDP_ERR_TIMEOUT, "no %s within %d ms of connecting", what,
				       s->o->setup_timeout_ms);
	if (err == -ECONNRESET)
		return rbudp_recv_fail(s, 0, "peer closed the connection before %s", what);
	if (err == -EBADMSG)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "malformed frame instead of %s: %s", what, why);
	if (err < 0)
		return rbudp_recv_fail(s, 0, "reading %s: %s", what, strerror(-err));
	if (f->type == RBUDP_MSG_ERROR) {
		struct rbudp_error e;

		if (rbudp_error_decode(f->body, f->len, &e, &why))
			return rbudp_recv_fail(s, 0, "sender gave up before %s", what);
		return rbudp_recv_fail(s, 0, "sender gave up before %s: %s", what, e.text);
	}
	return 0;
}

/*
 * HELLO -> CHALLENGE: the session keys. A sender of another protocol
 * version is told so; with --key-file a sender without it is refused.
 */
int rbudp_recv_setup_handshake(struct rbudp_recv_session *s, uint64_t deadline)
{
	uint8_t hello[RBUDP_HELLO_LEN], buf[RBUDP_FRAME_HDR + RBUDP_CHALLENGE_LEN];
	struct rbudp_challenge c = { .auth = s->o->psk ? RBUDP_AUTH_PSK : RBUDP_AUTH_CLEAR };
	struct rbudp_hello h;
	struct rbudp_frame f;
	const char *why;
	uint16_t version;
	int err;

	if (setup_frame(s, deadline, "HELLO", &f))
		return -1;
	if (f.type != RBUDP_MSG_HELLO)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "first frame is %s, not HELLO",
				       rbudp_msg_name(f.type));
	err = rbudp_hello_decode(f.body, f.len, &h, &version, &why);
	if (err == -EPROTONOSUPPORT)
		return rbudp_recv_fail(s, RBUDP_ERR_VERSION, "sender speaks RBUDP protocol version %u, this "
				       "receiver version %d: use the same release on both ends",
				       version, RBUDP_VERSION);
	if (err)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "bad HELLO: %s", why);
	if (h.auth != c.auth)
		return rbudp_recv_fail(s, RBUDP_ERR_AUTH, h.auth == RBUDP_AUTH_PSK ?
				       "sender uses a pre-shared key but this receiver has no --key-file" :
				       "this receiver requires a pre-shared key: give the sender --key-file");
	memcpy(hello, f.body, sizeof(hello));
	err = rbudp_auth_random(c.nonce, sizeof(c.nonce));
	if (!err && !s->o->psk)
		err = rbudp_auth_random(c.secret, sizeof(c.secret));
	if (err)
		return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "getrandom: %s", strerror(-err));
	rbudp_auth_keys_derive_session(&s->keys, s->o->psk, s->o->psk_len, &h, &c, false);
	rbudp_challenge_encode(buf, &c);
	if (s->o->psk)
		rbudp_auth_proof(&s->keys, hello, sizeof(hello), buf + RBUDP_FRAME_HDR,
				 RBUDP_CHALLENGE_LEN - RBUDP_PROOF_LEN,
				 buf + RBUDP_FRAME_HDR + RBUDP_CHALLENGE_LEN - RBUDP_PROOF_LEN);
	explicit_bzero(c.secret, sizeof(c.secret));
	err = rbudp_conn_send(&s->conn, buf, sizeof(buf), s->o->setup_timeout_ms);
	explicit_bzero(buf, sizeof(buf));
	if (err)
		return rbudp_recv_fail(s, 0, "sending CHALLENGE: %s", strerror(-err));
	return 0;
}

/* SETUP, its tag checked before anything in it is believed. */
int rbudp_recv_setup_read(struct rbudp_recv_session *s, uint64_t deadline)
{
	struct rbudp_frame f;
	const char *why = NULL;

	if (setup_frame(s, deadline, "SETUP", &f))
		return -1;
	if (f.type != RBUDP_MSG_SETUP)
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "%s frame where SETUP was expected",
				       rbudp_msg_name(f.type));
	if (!rbudp_auth_ctl_open(&s->keys, f.body - RBUDP_FRAME_HDR, f.body, f.len))
		return rbudp_recv_fail(s, RBUDP_ERR_AUTH, s->o->psk ?
				       "SETUP failed authentication: the pre-shared keys differ" :
				       "SETUP failed authentication (forged or corrupted on the way)");
	if (s->o->psk) {
		s->r->psk = true;
		rbudp_recv_counts(s);
	}
	if (rbudp_setup_decode(f.body, f.len - RBUDP_CTL_TAG_LEN, &s->su, &why))
		return rbudp_recv_fail(s, RBUDP_ERR_PROTOCOL, "bad SETUP: %s", why);
	s->r->setup = s->su;
	s->r->have_setup = true;
	return 0;
}

int rbudp_recv_setup_prepare(struct rbudp_recv_session *s)
{
	const struct rbudp_setup *su = &s->su;
	uint32_t vlen = s->o->batch_pkts;
	char err[200];

	if (s->o->output && su->file_bytes > s->o->max_mem_bytes)
		return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "file of %llu bytes is larger than "
				       "--max-mem %llu", (unsigned long long)su->file_bytes,
				       (unsigned long long)s->o->max_mem_bytes);
	if (rbudp_bitmap_init(&s->have, su->total_pkts, false))
		return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "out of memory for a %u-packet bitmap",
				       su->total_pkts);
	s->slot_bytes = RBUDP_DGRAM_HDR + su->payload_bytes;
	s->slots = malloc(vlen * s->slot_bytes);
	s->msgs = calloc(vlen, sizeof(*s->msgs));
	s->iov = calloc(vlen, sizeof(*s->iov));
	s->frame = malloc(RBUDP_FRAME_MAX);
	if (!s->slots || !s->msgs || !s->iov || !s->frame)
		return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "out of memory for receive buffers");
	for (uint32_t i = 0; i < vlen; i++) {
		s->iov[i].iov_base = s->slots + i * s->slot_bytes;
		s->iov[i].iov_len = s->slot_bytes;
		s->msgs[i].msg_hdr.msg_iov = &s->iov[i];
		s->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	/* Memory comes as data arrives, unless the peer proved it holds the
	 * pre-shared key: then the whole file is faulted in now, so the
	 * receive path takes no page fault at all. */
	if (s->o->output) {
		if (rbudp_store_open(&s->store, s->o->output, su->file_bytes, s->r->psk,
				     err, sizeof(err)))
			return rbudp_recv_fail(s, RBUDP_ERR_RESOURCES, "%s", err);
		s->keep = true;
	}
	return 0;
}

/* Accept datagrams from the sender's UDP port only; throw away leftovers. */
int rbudp_recv_setup_bind_peer(struct rbudp_recv_session *s)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	uint8_t junk[64];

	if (getpeername(s->conn.fd, (struct sockaddr *)&ss, &sl) < 0)
		return rbudp_recv_fail(s, RBUDP_ERR_ABORTED, "getpeername: %s", strerror(errno));
	rbudp_net_addr_set_port(&ss, s->su.udp_port);
	if (connect(s->rx->udp, (struct sockaddr *)&ss, sl) < 0)
		return rbudp_recv_fail(s, RBUDP_ERR_ABORTED, "connect(UDP) to the sender's port %u: %s",
				       s->su.udp_port, strerror(errno));
	while (recv(s->rx->udp, junk, sizeof(junk), MSG_DONTWAIT) >= 0 || errno == EINTR ||
	       errno == ECONNREFUSED)
		;
	return 0;
}

void rbudp_recv_setup_unbind_peer(struct rbudp_recv_session *s)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };

	if (connect(s->rx->udp, &sa, sizeof(sa)) < 0)
		rxb_log_errno(RXB_LOG_WARNING, errno, "disconnecting the UDP socket");
}

void rbudp_recv_setup_cleanup(struct rbudp_recv_session *s)
{
	if (s->keep)
		rbudp_store_finish(&s->store);
	rbudp_delay_outq_finish(&s->outq);
	rbudp_bitmap_finish(&s->have);
	free(s->slots);
	free(s->msgs);
	free(s->iov);
	free(s->frame);
	rbudp_auth_keys_clear(&s->keys);
	if (s->conn.buf)
		rbudp_conn_finish(&s->conn);
}

int rbudp_recv_setup_send_ok(struct rbudp_recv_session *s)
{
	uint8_t buf[RBUDP_FRAME_HDR + RBUDP_SETUP_OK_LEN + RBUDP_CTL_TAG_LEN];
	struct rbudp_setup_ok ok = {
		.rcvbuf_bytes = (uint64_t)s->rx->rcvbuf_bytes,
		.feedback_delay_ns = s->r->feedback_delay_ns,
	};
	size_t n = rbudp_auth_ctl_seal(&s->keys, buf, rbudp_setup_ok_encode(buf, &ok));
	int err = rbudp_conn_send(&s->conn, buf, n, s->o->timeout_ms);

	if (err)
		return rbudp_recv_fail(s, 0, "sending SETUP_OK: %s", strerror(-err));
	return 0;
}

