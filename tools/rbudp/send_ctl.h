/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the RBUDP sender (sender.c, send_ctl.c): one transfer's state, and
 * its control connection - connect, HELLO/CHALLENGE and SETUP, the frames
 * of the rounds (BLAST_DONE out; MISSING, COMPLETE, VERIFIED in, each
 * checked field by field), the receiver's ERROR. Not for other modules;
 * sender.h is the sender's interface.
 */
#ifndef RBUDP_SEND_CTL_H
#define RBUDP_SEND_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tools/rbudp/auth.h"
#include "tools/rbudp/bitmap.h"
#include "tools/rbudp/conn.h"
#include "tools/rbudp/sender.h"

struct rbudp_sender {
	const struct rbudp_send_opts *o;
	const struct rbudp_source *src;
	struct rbudp_send_result *r;
	struct rbudp_conn conn;
	struct rbudp_keys keys;		/* session keys, after CHALLENGE */
	int udp;
	int family;			/* AF_INET or AF_INET6 */
	struct rbudp_bitmap need;	/* to send this round */
	struct rbudp_bitmap next;	/* reported missing: next round's need */
	struct mmsghdr *msgs;
	struct iovec *iov;		/* two per datagram: header, payload */
	uint8_t *hdrs;			/* RBUDP_DGRAM_HDR per datagram: seq, round, token/tag */
	uint32_t gso_segs;		/* datagrams per UDP GSO send; 1: no GSO */
	uint64_t t0;			/* transfer start (SETUP_OK received) */
	uint64_t rate_bps;		/* current pacing rate */
	uint64_t next_progress_ns;
};

/* Record the first error (logged) and return -1 (sender.c). */
int rbudp_send_fail(struct rbudp_sender *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline bool rbudp_send_stopped(const struct rbudp_sender *s)
{
	return s->o->stop && *s->o->stop;
}

/* Connect the control connection to the receiver. 0 or -1 (recorded). */
int rbudp_send_ctl_connect(struct rbudp_sender *s, const struct sockaddr_storage *ss,
			   socklen_t sl);
/* HELLO/CHALLENGE (the session keys; with a pre-shared key the receiver's
 * proof checked first), SETUP and SETUP_OK. */
int rbudp_send_ctl_setup(struct rbudp_sender *s);
/* Send the frame in @buf (@len bytes, tagged when its type is: the buffer
 * has room for the tag); @what names it in errors. */
int rbudp_send_ctl_frame(struct rbudp_sender *s, uint8_t *buf, size_t len, const char *what);
/* During a blast: -1 when the receiver sent anything (it only speaks to
 * give up). */
int rbudp_send_ctl_check(struct rbudp_sender *s);
/* Keep the connection to rxbneckd serviced (RATE updates, keepalive). */
void rbudp_send_ctl_follow_idle(struct rbudp_sender *s);
/*
 * The receiver's answer to round @rs: COMPLETE (returns 1) or one MISSING
 * frame per segment, decoded into s->next (returns 0; rs->pkts_lost set).
 */
int rbudp_send_ctl_feedback(struct rbudp_sender *s, struct rbudp_send_round *rs);
/* VERIFIED: the receiver's digest check. 0 when the transfer is verified. */
int rbudp_send_ctl_verified(struct rbudp_sender *s);

#endif
