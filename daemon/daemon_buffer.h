/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckd's receive-buffer adaptation ([buffer], docs/buffer.md): the
 * sizing (daemon/model/buffer.h) wired to what it reads and what it
 * changes.
 *
 *   its own timer (dt, 100 ms; not the epoch)
 *       /proc/meminfo, sockstat, udp_mem, rmem_max (procmem.h)
 *       sock_diag: every UDP socket of a watched port with its memory
 *       -> buffer_step(): RRDA per socket, or the model's size
 *       apply mode: each change through daemon/act/rcvbuf.h (allow-list,
 *       pidfd_getfd, SO_RCVBUFFORCE), logged with socket, old -> new size
 *       and the decision's values; the new size goes to the flow's model
 *       at once (flows_set_rcvbuf(): the next RATE reflects it)
 *   after each epoch's solve
 *       the model policy sized again for flows whose model or rate moved;
 *       the advice published (BUFFER frames, PROTOCOL.md §6.4)
 *
 * Off ([buffer] mode = off): no timer, no sock_diag socket, nothing read.
 */
#ifndef RXB_DAEMON_DAEMON_BUFFER_H
#define RXB_DAEMON_DAEMON_BUFFER_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/act/rcvbuf.h"
#include "daemon/collect/procmem.h"
#include "daemon/collect/sockdiag.h"
#include "daemon/model/buffer.h"
#include "daemon/model/flows.h"
#include "rxb/measure.h"
#include "rxbneck/proto.h"

/* The observed windows decay with this time constant. */
#define DAEMON_BUFFER_WINDOW_TAU_S	60.0

/* The least change made: a page, the kernel's unit of socket memory. */
#define DAEMON_BUFFER_MIN_STEP	4096

/* UDP sockets read from one dump (those on watched ports are kept). */
#define DAEMON_BUFFER_MAX_DUMP	BUFFER_MAX_SOCKS

struct daemon_buffer_cfg {
	struct buffer_params p;		/* p.rrda.dt_s is the timer's period */
	struct rcvbuf_allow allow;
	uint64_t solve_min_ns;		/* a flow is solved at once for a new
					 * size at most this often (the epoch) */
};

struct daemon_buffer_ops {
	void *ctx;
	/* Offer advice to the port's BUFFER subscribers (may be NULL). */
	int (*publish)(void *ctx, const struct rxbneck_buffer *b);
};

/* Per socket: who holds it, as the actuator last looked. */
struct daemon_buffer_owner {
	struct rcvbuf_cache c;
	char refusal_logged[160];	/* the refusal last logged ("": none) */
};

struct daemon_buffer {
	struct daemon_buffer_cfg cfg;
	struct daemon_buffer_ops ops;
	struct buffer_set set;
	struct sockdiag *sd;		/* NULL when off */
	int tfd;			/* the step timer, -1 when off */
	struct procmem_snap mem;
	struct sockdiag_sock dump[DAEMON_BUFFER_MAX_DUMP];
	int ndump;
	bool dump_cut;			/* more sockets on watched ports than fit */
	struct daemon_buffer_owner owner[BUFFER_MAX_SOCKS];	/* by inode */
	uint64_t last_solve_ns[FLOWS_MAX];	/* per flow: last at-once solve */
	uint16_t last_solve_port[FLOWS_MAX];
	/* per flow: the arrival rate of the latest epoch that measured it
	 * (the per-packet probes are not attached in every epoch) */
	uint16_t arrival_port[FLOWS_MAX];
	double arrival_bps[FLOWS_MAX];
	/*
	 * per flow, the same slots: the longest off-CPU window the socket was
	 * seen to overflow in (its rcvbuf drop episodes), decaying
	 * (DAEMON_BUFFER_WINDOW_TAU_S); 0: none seen
	 */
	double window_s[FLOWS_MAX];
	uint64_t window_ns[FLOWS_MAX];
	/* the controller's own cost, for status and the experiment */
	uint64_t steps, step_ns_total, step_ns_max;
	uint64_t changes, refusals, failures;
	uint64_t epoch;			/* the daemon's epoch, for BUFFER frames */
	int last_err;			/* of the last dump or read, 0 = fine */
	double tick_ns;			/* 1 / CONFIG_HZ, 0 when unknown */
	bool force_refused;		/* SO_RCVBUFFORCE was refused: rmem_max caps */
};

/* 0 or -errno (logged). Off: nothing opened. */
int daemon_buffer_init(struct daemon_buffer *b, const struct daemon_buffer_cfg *cfg,
		       const struct daemon_buffer_ops *ops);
void daemon_buffer_finish(struct daemon_buffer *b);
/*
 * New [buffer] settings (reload): the timer started, re-armed or stopped,
 * the sockets' state kept. 0 or -errno; on error nothing changed.
 */
int daemon_buffer_reconfigure(struct daemon_buffer *b, const struct daemon_buffer_cfg *cfg);

/* The step timer to poll for EPOLLIN, -1 when off. */
int daemon_buffer_fd(const struct daemon_buffer *b);

/*
 * The timer fired: one step over the watched sockets. @e is the latest
 * epoch record (receiver threads as hints for finding a socket's owner),
 * may be NULL.
 */
void daemon_buffer_on_timer(struct daemon_buffer *b, struct flows *f,
			    const struct rxb_epoch *e);

/* After flows_epoch(): the model policy and the advice. */
void daemon_buffer_after_epoch(struct daemon_buffer *b, struct flows *f,
			       const struct rxb_epoch *e);

/* The advice for @port as a BUFFER frame would carry it; false if none. */
bool daemon_buffer_advice(const struct daemon_buffer *b, uint16_t port,
			  struct rxbneck_buffer *out);

/*
 * A flow's model as buffer.h takes it (exposed for tests); @tick_ns the
 * kernel's tick (0: unknown), for the windows of a receiver that sleeps.
 */
void daemon_buffer_flow_of(const struct flow *fl, const struct rxb_epoch *e,
			   double tick_ns, struct buffer_flow *out);

#endif
