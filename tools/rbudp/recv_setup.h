/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the RBUDP receiver (receiver.c, recv_setup.c): one session's
 * state, and its set-up: handshake, SETUP, buffers, the UDP socket's peer.
 * Not for other modules; receiver.h is the receiver's interface.
 */
#ifndef RBUDP_RECV_SETUP_H
#define RBUDP_RECV_SETUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tools/rbudp/auth.h"
#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/conn.h"
#include "tools/rbudp/delay.h"
#include "tools/rbudp/receiver.h"
#include "tools/rbudp/recv_store.h"

enum rx_state {
	RX_BLAST,	/* receiving, waiting for BLAST_DONE */
	RX_DRAIN,	/* BLAST_DONE seen: reading what is still in flight */
	RX_COMPLETE,	/* COMPLETE queued: waiting for it to leave */
	RX_DONE,	/* VERIFIED queued: waiting for it to leave */
};

struct rbudp_recv_session {
	struct rbudp_receiver *rx;
	const struct rbudp_recv_opts *o;
	struct rbudp_recv_result *r;
	struct rbudp_conn conn;
	struct rbudp_keys keys;		/* session keys, from CHALLENGE on */
	struct rbudp_setup su;
	struct rbudp_bitmap have;
	struct rbudp_outq outq;
	struct rbudp_store store;	/* --output: the file image */
	bool keep;			/* --output (store open) */
	bool proven;			/* an authenticated datagram came */
	uint64_t first_dgram_by;	/* deadline for it */
	uint8_t *slots;			/* batch x slot_bytes datagram buffers */
	size_t slot_bytes;
	struct mmsghdr *msgs;
	struct iovec *iov;
	uint8_t *frame;			/* RBUDP_FRAME_MAX scratch for feedback */
	uint64_t drops0;		/* socket drop counter at the start */
	enum rx_state state;
	uint32_t round;
	struct rbudp_recv_round *rr;	/* current round's stats */
	uint64_t t0;			/* SETUP_OK sent */
	uint64_t done_at;		/* BLAST_DONE received */
	uint64_t last_rx;		/* last datagram */
	uint64_t last_activity;		/* last datagram or control frame */
	uint64_t next_progress_ns;
	bool warned_short, warned_seq, warned_len, warned_forged;
};

/* Record the first error, tell the sender (best effort, ERROR @code unless
 * 0) and return -1 (receiver.c). */
int rbudp_recv_fail(struct rbudp_recv_session *s, uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The session is a real transfer: it counts; queued senders hear "busy". */
void rbudp_recv_counts(struct rbudp_recv_session *s);

/* HELLO -> CHALLENGE within @deadline_ns. 0 or -1 (failed, recorded). */
int rbudp_recv_setup_handshake(struct rbudp_recv_session *s, uint64_t deadline_ns);
/* SETUP, its tag checked first. */
int rbudp_recv_setup_read(struct rbudp_recv_session *s, uint64_t deadline_ns);
/* Receive buffers and, with --output, the file image. */
int rbudp_recv_setup_prepare(struct rbudp_recv_session *s);
/* Connect the UDP socket to the sender's port; drop leftovers. */
int rbudp_recv_setup_bind_peer(struct rbudp_recv_session *s);
void rbudp_recv_setup_unbind_peer(struct rbudp_recv_session *s);
int rbudp_recv_setup_send_ok(struct rbudp_recv_session *s);
/* Free everything the session holds (the store's temporary file too). */
void rbudp_recv_setup_cleanup(struct rbudp_recv_session *s);

#endif
