/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RRDA: receive-buffer adaptation from the rate difference and the free
 * memory (Liu, Zhang, Zhou and Xue, "A Rate and Resource Detection Based
 * Receive Buffer Adaptation Approach for High-speed Data Transportation";
 * docs/buffer.md). One controller per socket, stepped every epoch of
 * length dt (the paper's Delta t, 100 ms):
 *
 *   v_b,n  = v_recv - v_srv                                        (epoch n)
 *   v'_b,n = omega v_b,n + (1 - omega) v'_b,n-1                     eq. (1)
 *   f      = +1 if v'_b,i > 0 for every i in [n-k, n-1],
 *            -1 if v'_b,i < 0 for every such i, else 0              eq. (2)
 *   L_n+1  = L_n + (1 - alpha) beta |v'_b,n|    if f = +1
 *            L_n                                if f = 0
 *            L_n - alpha beta |v'_b,n|          if f = -1           eq. (4)
 *
 * with alpha the host's memory utilisation (used / total). Read as the
 * paper writes it: the decision looks at the k smoothed values *before*
 * the current one, the step's size at the current one. The EMA starts
 * from v'_b,0 = 0 (no trend known), and until k values precede the
 * current one f is 0.
 *
 * Units. L is the socket's sk_rcvbuf, the kernel's limit on the memory
 * charged for queued packets (their truesize, skb overhead included: a
 * 1472-byte datagram is charged about 2.3 KiB); it is what `ss -m` shows as
 * rb and what getsockopt(SO_RCVBUF) returns. The rates are in the same
 * charged bytes, *per epoch*: v_recv is what arrived at the socket during
 * the epoch (queued or dropped for want of room), v_srv what the
 * application took out. So beta is dimensionless: a step makes room for
 * beta epochs' worth of the current smoothed surplus (with dt = 100 ms and
 * beta = 16, 1.6 s of it). Read with v in bytes per second, beta = 16
 * would have to be seconds, and a 1 % surplus at 1 Gb/s would grow the
 * buffer by 20 MB per step; the paper's own example (a 1 MB buffer lasts
 * 1 s against a 1 % surplus at 1 Gb/s) is the per-epoch scale. Samples
 * over an interval other than dt (a late timer) are scaled to dt.
 * v_recv counts the packets dropped too: a full buffer keeps arrivals
 * and departures equal, and only the drops show the surplus then.
 *
 * Bounds, applied after eq. (4) in this order:
 *   - no growth while the host's UDP memory is under pressure (the
 *     caller's mem_pressure: udp_mem's pressure threshold reached), nor
 *     at alpha = 1;
 *   - never above min(ceiling, kernel_max) nor below the floor; a growth
 *     never lowers L, a shrink never raises it (a socket the application
 *     set outside [floor, ceiling] stays where it is until RRDA moves it
 *     the other way);
 *   - L is even: the kernel stores twice the setsockopt() value, so only
 *     even sizes can be set (rrda_sockopt_val());
 *   - a change smaller than min_step_bytes is not made.
 * kernel_max is rrda_kernel_max_bytes(): SO_RCVBUF caps the value at
 * net.core.rmem_max (sk_rcvbuf at most 2 rmem_max), SO_RCVBUFFORCE (with
 * CAP_NET_ADMIN) at INT_MAX / 2, so sk_rcvbuf at most 2^31 - 2. Below
 * SOCK_MIN_RCVBUF (2304 bytes on 6.18) the kernel rounds up.
 *
 * Pure: no I/O, no clock, no globals; the caller measures and applies.
 */
#ifndef RXB_SOLVER_RRDA_H
#define RXB_SOLVER_RRDA_H

#include <stdbool.h>
#include <stdint.h>

/* The paper's experiment (Section V-A). */
#define RRDA_DEFAULT_DT_MS	100
#define RRDA_DEFAULT_K		3
#define RRDA_DEFAULT_BETA	16.0
#define RRDA_DEFAULT_OMEGA	0.5
#define RRDA_K_MAX		64

/* The largest sk_rcvbuf the kernel stores: 2 x INT_MAX / 2. */
#define RRDA_SK_RCVBUF_MAX	2147483646ULL

struct rrda_params {
	double dt_s;		/* epoch, > 0 */
	uint32_t k;		/* epochs of the decision, 1..RRDA_K_MAX */
	double omega;		/* EMA weight of the newest value, [0, 1] */
	double beta;		/* step gain, dimensionless, >= 0 */
	uint64_t floor_bytes;	/* L never shrinks below */
	uint64_t ceiling_bytes;	/* L never grows above (>= floor) */
	/*
	 * Smaller changes are not made (0: any). The kernel charges socket
	 * memory in pages; a change of a few bytes, every step, as the EMA
	 * of a quiet socket decays towards 0, would change nothing.
	 */
	uint64_t min_step_bytes;
};

/* 0, or -EINVAL naming nothing: the caller's config names the key. */
int rrda_params_check(const struct rrda_params *p);

/* One epoch's measurements of one socket. */
struct rrda_input {
	double recv_bytes;	/* charged bytes that arrived (queued + dropped) */
	double srv_bytes;	/* charged bytes the application dequeued */
	double interval_s;	/* what they were counted over, > 0 */
	uint64_t cur_bytes;	/* L_n: sk_rcvbuf now */
	double mem_util;	/* alpha(n), [0, 1] */
	bool mem_pressure;	/* UDP memory at or above udp_mem's pressure */
	uint64_t kernel_max_bytes;	/* rrda_kernel_max_bytes() */
};

enum rrda_why {
	RRDA_WARMUP = 0,	/* fewer than k smoothed values yet */
	RRDA_STEADY,		/* f = 0 */
	RRDA_GROW,		/* f = +1, grown */
	RRDA_SHRINK,		/* f = -1, shrunk */
	RRDA_AT_CEILING,	/* f = +1, already at min(ceiling, kernel max) */
	RRDA_AT_FLOOR,		/* f = -1, already at the floor */
	RRDA_PRESSURE,		/* f = +1, held: UDP memory under pressure */
	RRDA_NO_MEMORY,		/* f = +1, (1 - alpha) beta |v'| rounds to nothing */
	RRDA_NO_SHRINK,		/* f = -1, alpha beta |v'| rounds to nothing */
	RRDA_SMALL,		/* f != 0, the change is below min_step_bytes */
};

const char *rrda_why_name(enum rrda_why w);

struct rrda_decision {
	double vb_bytes;	/* v_b,n per epoch */
	double ema_bytes;	/* v'_b,n */
	int f;			/* eq. (2) */
	double step_bytes;	/* eq. (4)'s change before the bounds (signed) */
	uint64_t target_bytes;	/* L_n+1 after the bounds */
	enum rrda_why why;
};

struct rrda_state {
	double ema_bytes;	/* v'_b,n-1 */
	double hist[RRDA_K_MAX];	/* the latest smoothed values, a ring */
	uint32_t nhist;		/* valid entries, <= RRDA_K_MAX */
	uint32_t head;		/* next slot written */
	uint64_t steps;
};

void rrda_init(struct rrda_state *s);

/*
 * One epoch: eq. (1), (2), (4) and the bounds. 0, or -EINVAL for bad
 * parameters or input (nothing changes then).
 */
int rrda_step(const struct rrda_params *p, struct rrda_state *s,
	      const struct rrda_input *in, struct rrda_decision *out);

/* The largest sk_rcvbuf a setsockopt() can give (see above). */
uint64_t rrda_kernel_max_bytes(uint64_t rmem_max_bytes, bool force);

/* The setsockopt(SO_RCVBUF[FORCE]) value that makes sk_rcvbuf @rcvbuf_bytes
 * (at most RRDA_SK_RCVBUF_MAX). */
int rrda_sockopt_val(uint64_t rcvbuf_bytes);

#endif
