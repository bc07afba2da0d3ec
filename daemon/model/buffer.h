/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Receive-buffer sizing for the watched sockets (docs/buffer.md): what
 * size each socket's buffer should have, by one of two policies, and
 * whether it should change now. No system calls: the daemon feeds it the
 * sockets' memory (sock_diag), the host's (procmem.h) and its flows'
 * models, applies what it asks (daemon/act/rcvbuf.h) and tells it the
 * outcome.
 *
 *   rrda   Liu et al.'s controller (solver/rrda.h) per socket, stepped on
 *          its own timer (dt, 100 ms). The surplus v_b = v_recv - v_srv of
 *          a step is the change of the memory the socket holds plus its
 *          drops, in charged bytes: sock_diag gives the two, not the rates
 *          apart, and together they are exactly v_b (a drop is an arrival
 *          the queue could not hold). UDP releases dequeued memory in
 *          batches of up to a quarter of sk_rcvbuf while its reader queue
 *          is not empty, so one step's v_b can lag by that much; the EMA
 *          and the k-step sign rule are what absorb it.
 *   model  the smallest buffer whose socket-stage loss at the flow's rate
 *          is at most the loss target, or, where no buffer can meet it,
 *          whose transfer time is within the slack of the largest buffer's
 *          (solver/bufsize.h). The rate is the one measured arriving while
 *          there is traffic (a sender that follows RATE sends the rate
 *          published; one that does not still gets its packets held), else
 *          the rate the daemon publishes while senders are connected (what
 *          the next transfer will send); neither: the size stays. The
 *          off-CPU windows are the pause predictor's, or for a receiver
 *          that sleeps between reads (none predicted) a round of the
 *          CPU-bound tasks' measured turns (daemon_buffer.c). Evaluated
 *          again when the flow's model is solved again (its task classes,
 *          costs or transfer moved) or the rate moves by 10 %.
 *
 * In advise mode nothing is applied: RRDA steps from its own last
 * recommendation (what the socket would have had), the model's answer
 * stands as it is. In apply mode RRDA steps from the size the socket has
 * (the application or the kernel may have changed it), and the model's
 * answer is applied once the size differs from it by BUFFER_HYSTERESIS.
 */
#ifndef RXB_DAEMON_BUFFER_H
#define RXB_DAEMON_BUFFER_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/collect/procmem.h"
#include "daemon/collect/sockdiag.h"
#include "solver/bneck.h"
#include "solver/bufsize.h"
#include "solver/rrda.h"

#define BUFFER_MAX_SOCKS	64
/* The model policy applies a size once it is this far from the socket's. */
#define BUFFER_HYSTERESIS	0.10
/*
 * ... and a smaller size only once it has wanted one for this long: an
 * epoch that saw the start of a transfer measures part of its rate, and
 * sizing for that would shrink the buffer just before the full rate comes
 * (seen in the experiment: 115 KB set on a new socket, 428 drops in the
 * next 250 ms). Growth is applied at once.
 */
#define BUFFER_SHRINK_HOLD_NS	1000000000ULL
/* A 1500-byte frame's truesize on x86-64, for a flow that has not
 * measured its own (drops into bytes, packets into bytes). */
#define BUFFER_TRUESIZE_DEFAULT	2304.0

enum buffer_mode { BUFFER_OFF = 0, BUFFER_ADVISE, BUFFER_APPLY };
enum buffer_policy { BUFFER_RRDA = 0, BUFFER_MODEL };

const char *buffer_mode_name(enum buffer_mode m);
const char *buffer_policy_name(enum buffer_policy p);

struct buffer_params {
	enum buffer_mode mode;
	enum buffer_policy policy;
	/*
	 * dt, k, beta, omega, ceiling; floor_bytes 0 = each socket's own
	 * size when first seen (RRDA never shrinks a socket below what its
	 * application chose).
	 */
	struct rrda_params rrda;
	double loss_target;	/* model: socket-stage loss, [0, 1); 0 = time only */
	double time_slack;	/* model: T within this of the largest buffer's */
	bool force;		/* SO_RCVBUFFORCE may be used: rmem_max not a limit */
};

/* A flow's model as the daemon last solved it, for the model policy. */
struct buffer_flow {
	uint16_t port;
	bool have_model;
	uint64_t solved_ns;	/* identifies the solve */
	uint32_t nstages;	/* the socket is the last stage */
	struct rxb_stage_inputs stages[BNECK_MAX_STAGES];
	struct bneck_xfer xfer;
	double published_bps;	/* RATE offered (0: none) */
	double arrival_bps;	/* arriving, measured, in the model's payload
				 * bits (packets x 8 x xfer.payload_bytes);
				 * 0: no traffic or not measured */
	double truesize_bytes;	/* charged per packet (0: unknown) */
};

/* The model policy's latest answer for a socket. */
struct buffer_model_rec {
	bool valid;
	uint64_t solved_ns;	/* of the flow model it came from */
	double rate_bps;	/* what it was sized for */
	bool by_time;		/* the time criterion (no K met the loss target) */
	struct bufsize_result r;	/* K, loss / time */
	double truesize_bytes;
	uint64_t bytes;		/* K x truesize, bounded */
	char why[96];		/* when not valid */
};

/* One change the daemon should make (apply mode). */
struct buffer_action {
	uint64_t inode;
	uint16_t port;
	uint64_t from_bytes;
	uint64_t to_bytes;
	char reason[160];	/* the decision values */
};

struct buffer_sock {
	uint64_t inode;
	uint64_t cookie;
	uint16_t port;
	uint32_t uid;
	uint64_t first_ns, last_ns;	/* CLOCK_MONOTONIC of the samples */
	uint32_t rmem_alloc;	/* bytes held, latest */
	uint32_t rcvbuf;	/* sk_rcvbuf, latest */
	uint32_t rcvbuf_min;	/* the least since buffer_take_min() (0: none) */
	double truesize_bytes;	/* charged per packet, as the step took it */
	uint32_t drops;		/* sk_drops, latest */
	uint64_t drops_total;	/* since first seen (wraps unwound) */
	uint64_t floor_bytes;	/* this socket's floor */
	struct rrda_state rrda;
	bool have_decision;
	struct rrda_decision last;	/* the latest RRDA step */
	double alpha;		/* its alpha */
	bool pressure;		/* udp_mem under pressure then */
	struct buffer_model_rec model;
	uint64_t recommend_bytes;	/* the policy's size */
	/* apply mode */
	uint64_t changes;	/* sizes set */
	uint64_t last_change_ns;
	uint64_t last_from_bytes, last_to_bytes;
	char last_reason[160];
	uint64_t shrink_since_ns;	/* model: wanting less since (0: not) */
	int act_err;		/* last refusal/failure (-errno), 0 = none */
	char act_why[160];
	/* memory over the socket's life, for status */
	double rcvbuf_sum, rmem_sum;	/* sums over steps */
	uint64_t steps;
	uint32_t rcvbuf_peak, rmem_peak;
	bool seen;		/* in the latest dump */
};

struct buffer_set {
	struct buffer_params p;
	struct bneck_ws ws;	/* for the model policy's evaluations */
	int n;
	struct buffer_sock v[BUFFER_MAX_SOCKS];
	uint64_t steps;
	uint64_t dropped_socks;	/* sockets not followed: table full */
	uint64_t kernel_max_bytes;	/* rrda_kernel_max_bytes() at the last step */
};

/* 0 or -EINVAL (bad parameters) / -ENOMEM. */
int buffer_init(struct buffer_set *b, const struct buffer_params *p);
void buffer_finish(struct buffer_set *b);
/* New parameters; sockets and their state stay. 0 or -EINVAL. */
int buffer_set_params(struct buffer_set *b, const struct buffer_params *p);

/* The input of one step: the sockets on watched ports. */
struct buffer_step_in {
	uint64_t now_ns;
	const struct sockdiag_sock *socks;
	int nsocks;
	const struct procmem_snap *mem;
	/* per port: the flow's truesize (0: unknown) */
	const struct buffer_flow *flows;
	int nflows;
};

/*
 * One step (every dt): sockets appear and go, RRDA steps (policy rrda),
 * each socket's recommendation is set. In apply mode the changes to make
 * go to @act (at most @max), the count is returned; else 0.
 */
int buffer_step(struct buffer_set *b, const struct buffer_step_in *in,
		struct buffer_action *act, int max);

/*
 * The model policy for every socket of @f's port: sized again when the
 * flow was solved again or a rate moved by 10 % (or @force). 0 or the
 * first -errno (then that socket's model.why says why).
 */
int buffer_model_update(struct buffer_set *b, const struct buffer_flow *f, bool force);

/* Pure: the model-sized buffer for @f within [floor, hi] (bytes). */
int buffer_model_size(struct bneck_ws *ws, const struct buffer_flow *f,
		      double loss_target, double time_slack, uint64_t floor_bytes,
		      uint64_t hi_bytes, struct buffer_model_rec *out);

/*
 * The shortest off-CPU window that explains @episodes overflow episodes
 * with @drops datagrams dropped at a queue of @queue_pkts and arrivals at
 * @lambda per second: (K + drops / episodes) / lambda (the queue filled,
 * then the rest came). 0 when any input is not positive.
 */
double buffer_overflow_window_s(double queue_pkts, double drops, double episodes,
				double lambda);

/* What an apply did: the size read back after it (0: failed, @err). */
void buffer_applied(struct buffer_set *b, const struct buffer_action *a,
		    uint64_t now_bytes, int err, const char *why, uint64_t now_ns);

struct buffer_sock *buffer_find(struct buffer_set *b, uint64_t inode);

/*
 * The least sk_rcvbuf @x had since the last call (its size then, if no step
 * came between), and start again: the size its overflows of that time
 * happened at, not the size a change made since.
 */
uint32_t buffer_take_min(struct buffer_sock *x);

/* The port's socket whose advice goes to its senders (largest
 * recommendation), NULL if none. */
const struct buffer_sock *buffer_port_sock(const struct buffer_set *b, uint16_t port);

#endif
