// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librxbneck internals shared by client.c (connection, output, API) and
 * client_input.c (reading, framing and dispatch of what the daemon sends).
 * Not installed; every function here is hidden in the installed library.
 */
#ifndef RXBNECK_CLIENT_INT_H
#define RXBNECK_CLIENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxbneck/client.h"
#include "proto/codec.h"

#define CL_IN_BYTES	RXBNECK_FRAME_MAX_DEFAULT
#define CL_OUT_BYTES	16384
#define CL_READS_PER_PROCESS 8	/* bounded work per process() call */
/* Older receive timestamps than this are taken for a clock step. */
#define CL_MAX_ARRIVAL_AGE_NS	(60ULL * 1000000000ULL)
/* A (monotonic, realtime) clock pair read further apart than this is read again. */
#define CL_CLOCK_PAIR_MAX_NS	(20ULL * 1000ULL)
#define CL_CLOCK_PAIR_TRIES	4
#define NS_PER_US	1000ULL
#define NS_PER_MS	1000000ULL

struct rxbneck_client {
	struct rxbneck_client_config cfg;
	char *host;			/* owned copy of cfg.host */
	int fd;
	bool acked;
	struct rxbneck_hello_ack ack;
	uint32_t seq_out;
	uint32_t rtt_us;
	uint64_t last_tx_ns;
	uint64_t ping_sent_ns;		/* 0: no keepalive outstanding */
	uint64_t ping_token;
	int remote_error;
	char errmsg[320];

	uint8_t in[CL_IN_BYTES];
	size_t in_len;
	/*
	 * When the bytes of the last read arrived (CLOCK_MONOTONIC, from the
	 * kernel's receive timestamp when there is one): a PAUSE schedule is
	 * relative to the daemon's send time, so a frame that waited in the
	 * socket while the caller was busy must not be dated by its read.
	 */
	uint64_t in_arrival_ns;
	uint8_t out[CL_OUT_BYTES];
	size_t out_off, out_len;

	pthread_mutex_t lock;		/* guards the latest values below */
	bool have_rate, have_pause, have_buffer, have_streams;
	struct rxbneck_rate rate;
	struct rxbneck_pause_window pause;
	struct rxbneck_buffer buffer;
	struct rxbneck_streams streams;
};

/*
 * The latest values (rate, pause, buffer, streams), under the handle's
 * lock: set copies *@src (@size bytes) to @dst and marks *@have; get
 * copies @src to @out if *@have, returning 0, else RXBNECK_ENODATA.
 */
void client_latest_set(struct rxbneck_client *c, bool *have, void *dst, const void *src,
		       size_t size);
int client_latest_get(struct rxbneck_client *c, const bool *have, const void *src, void *out,
		      size_t size);

/* Set the handle's error message; returns @rc. */
int client_fail(struct rxbneck_client *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* client_fail() for a failed syscall with errno @err. */
int client_fail_errno(struct rxbneck_client *c, int err, const char *what);
/* Encode @m with the next sequence number and send or queue it. */
int client_send_msg(struct rxbneck_client *c, struct rxbp_msg *m);
/* Best effort on the way out: tell the daemon why we close. */
void client_send_error(struct rxbneck_client *c, int code, uint32_t ref_seq,
		       const char *msg);
/* One recvmsg() into the input buffer: bytes read (0: would block) or a negative RXBNECK_E* code. */
int client_read_some(struct rxbneck_client *c);
/* Decode and act on every whole frame in the input buffer: frames handled or a negative RXBNECK_E* code. */
int client_parse_input(struct rxbneck_client *c);

#endif
