/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sendsrv: the daemon's side of the sender control protocol
 * (docs/PROTOCOL.md): listening sockets, per-sender connections, limits,
 * timeouts, RATE/PAUSE pushes.
 *
 * Event-loop agnostic. The daemon owns the loop; sendsrv tells it which fds
 * to watch through ops->fd_add/fd_mod/fd_del (events are SENDSRV_IN/OUT,
 * numerically equal to EPOLLIN/EPOLLOUT), and the daemon calls
 *
 *	sendsrv_handle(s, fd, events)	when such an fd is ready (pass the
 *					epoll events straight through);
 *	sendsrv_tick(s, now_ns)		at sendsrv_next_deadline_ns() or
 *					simply every 100 ms - 1 s (timeouts);
 *	sendsrv_publish_rate/pause()	when the model has new values;
 *	sendsrv_offer_rates()		when each sender's own rate (ops->rate_for)
 *					may have changed.
 *
 * Wiring into an epoll loop:
 *
 *	static int add(void *ctx, int fd, uint32_t ev)
 *	{
 *		struct epoll_event e = { .events = ev, .data.u64 = TAG_SENDSRV | fd };
 *		return epoll_ctl(((struct daemon *)ctx)->epfd, EPOLL_CTL_ADD, fd, &e)
 *			? -errno : 0;
 *	}
 *	... fd_mod with EPOLL_CTL_MOD, fd_del with EPOLL_CTL_DEL ...
 *	on an event tagged TAG_SENDSRV: sendsrv_handle(s, fd, e.events);
 *
 * Callbacks run synchronously inside sendsrv calls. They may call
 * sendsrv_publish_*(), sendsrv_foreach_sender() and sendsrv_stats(), never
 * sendsrv_handle/tick/finish. Every connection whose HELLO on_hello accepted
 * gets exactly one on_goodbye, also from sendsrv_finish().
 *
 * Work per call is bounded: one read per readable connection (at most
 * max_frame_bytes, so at most max_frame_bytes / 16 frames), at most
 * SENDSRV_ACCEPT_BATCH accepts per readable listener, timeouts from ordered
 * lists (no scans), publishes touch only the port's subscribers.
 *
 * Memory is bounded by sendsrv_memory_bound(): connection slots are made
 * as connections come, at most max_conns + SENDSRV_SPARE_SLOTS, and kept
 * for reuse; each holds at most max_frame_bytes of input and max_out_bytes
 * (+ one final ERROR) of output.
 */
#ifndef RXB_DAEMON_SENDSRV_H
#define RXB_DAEMON_SENDSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rxbneck/proto.h"

#define SENDSRV_IN		0x001u	/* == EPOLLIN  */
#define SENDSRV_OUT		0x004u	/* == EPOLLOUT */
#define SENDSRV_ERR		0x008u	/* == EPOLLERR */
#define SENDSRV_HUP		0x010u	/* == EPOLLHUP */

#define SENDSRV_MAX_ALLOW	64	/* CIDRs in the allow-list */
#define SENDSRV_MAX_LISTEN	8	/* listening sockets */
#define SENDSRV_SPARE_SLOTS	64	/* closing connections beyond max_conns */
#define SENDSRV_ACCEPT_BATCH	32
#define SENDSRV_LINGER_NS	2000000000ULL	/* closing: drain input this long */
#define SENDSRV_ADDR_STRLEN	56	/* "[v6]:port" */
#define SENDSRV_RATES_KEPT	8	/* RATEs sent to a sender kept with their times */
#define SENDSRV_FRAME_TYPES	64	/* frame types counted (enum rxbneck_type) */
#define SENDSRV_V6_SOURCE_BITS	64	/* IPv6 sources are counted per /64 */

/* An allow-list entry. v4-mapped IPv6 prefixes are stored as IPv4. */
struct sendsrv_cidr {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t addr[16];		/* network byte order, host bits zero */
	uint8_t prefix_len;
};

/*
 * "10.0.0.0/8", "::1/128", "192.0.2.7" (a host). Host bits must be zero.
 * Returns 0 or -EINVAL; *why (if not NULL) then says what is wrong.
 */
int sendsrv_cidr_parse(const char *text, struct sendsrv_cidr *out, const char **why);
bool sendsrv_cidr_match(const struct sendsrv_cidr *c, const struct sockaddr *sa);

/*
 * The source a connection counts against for the per-address limits: an
 * IPv4 address (v4-mapped IPv6 included), or an IPv6 /64 - one host's
 * usual share, so a host cannot multiply its connections by picking
 * addresses from its own prefix.
 */
struct sendsrv_source {
	uint8_t b[17];			/* family, then the address bytes */
};

void sendsrv_source_of(const struct sockaddr_storage *ss, struct sendsrv_source *out);
bool sendsrv_same_source(const struct sockaddr_storage *a, const struct sockaddr_storage *b);

struct sendsrv_limits {
	uint32_t max_frame_bytes;	/* 512..65536, default 4096 */
	uint32_t max_conns;		/* default 1024 */
	uint32_t max_conns_per_source;	/* per sendsrv_source, default 64 */
	uint64_t hello_timeout_ns;	/* default 5 s */
	uint64_t idle_timeout_ns;	/* default 60 s, 0 = none */
	uint32_t max_out_bytes;		/* per connection, >= 1024, default 16 KiB */
	double rate_change_frac;	/* push when |new-last| >= frac*last, 0.05 */
	uint32_t rate_refresh_epochs;	/* push at least this often, 10; 0 = never */
	uint32_t epoch_ms;		/* announced in HELLO_ACK */
	bool buffer_advice;		/* grant BUFFER to minor >= 2 ([buffer] on) */
	struct sendsrv_cidr allow[SENDSRV_MAX_ALLOW];
	size_t n_allow;			/* 0 = nobody may connect */
};

/* Defaults of PROTOCOL.md §9, allow-list 127.0.0.0/8 and ::1/128. */
void sendsrv_limits_default(struct sendsrv_limits *l);

/* A connected sender, as callbacks and sendsrv_foreach_sender() see it. */
struct sendsrv_peer {
	uint64_t id;			/* unique per connection, from 1 */
	struct sockaddr_storage addr;
	char addr_str[SENDSRV_ADDR_STRLEN];	/* "192.0.2.7:40000", "[::1]:40000" */
	struct rxbneck_hello hello;	/* rtt_us/subscribe updated by SUBSCRIBE */
	uint32_t hello_rtt_us;		/* rtt_us as the HELLO said it */
	uint16_t granted;		/* subscription served */
	uint64_t connected_ns;		/* ops->now_ns clock */
	uint64_t last_rx_ns;
	uint64_t frames_in, frames_out;
	uint64_t bytes_in, bytes_out;
	uint64_t reports;
	uint64_t pauses_sent;
	bool has_rate;			/* last_rate valid */
	struct rxbneck_rate last_rate;	/* last RATE sent to this sender */
	bool has_first_rate;		/* first_rate valid */
	struct rxbneck_rate first_rate;	/* the first: what its transfer started on */
	/*
	 * The last SENDSRV_RATES_KEPT RATEs sent, oldest first, and when
	 * (ops->now_ns clock): which one a REPORT's transfer started on
	 * where several carried its rate (flows.c start_rate()).
	 */
	struct rxbneck_rate rates_sent[SENDSRV_RATES_KEPT];
	uint64_t rates_sent_ns[SENDSRV_RATES_KEPT];
	uint32_t nrates_sent;
	/*
	 * The PAUSE schedule in force for this sender (PROTOCOL.md §6.3): the
	 * last PAUSE frame sent to it (not CANCEL), from pause_sent_ns until
	 * pause_until_ns (UINT64_MAX: until replaced); pause_until_ns 0 = none.
	 */
	struct rxbneck_pause pause;
	uint64_t pause_sent_ns, pause_until_ns;
	uint64_t streams_samples;	/* STREAMS_SAMPLE frames from it */
	bool has_streams;		/* last_streams valid */
	struct rxbneck_streams last_streams;	/* last STREAMS sent to it */
	bool has_buffer;		/* last_buffer valid */
	struct rxbneck_buffer last_buffer;	/* last BUFFER sent to it */
	uint32_t out_queued_bytes;
};

/* Why a sender went away (on_goodbye): 0 = BYE, else an rxbneck_error. */
#define SENDSRV_GONE_BYE	0
#define SENDSRV_GONE_EOF	(-1)	/* closed without BYE */
#define SENDSRV_GONE_PEER_ERROR	(-2)	/* the sender sent ERROR */
#define SENDSRV_GONE_SHUTDOWN	(-3)	/* sendsrv_finish() */

struct sendsrv_ops {
	void *ctx;			/* first argument of every callback */
	/* Required: interest in @fd, events SENDSRV_IN/OUT. 0 or -errno. */
	int (*fd_add)(void *ctx, int fd, uint32_t events);
	int (*fd_mod)(void *ctx, int fd, uint32_t events);
	void (*fd_del)(void *ctx, int fd);
	/* Optional clock (CLOCK_MONOTONIC ns by default): tests inject time. */
	uint64_t (*now_ns)(void *ctx);
	/*
	 * Optional. A sender said HELLO. Return 0 to serve it, or an
	 * rxbneck_error code (normally RXBNECK_ERR_REFUSED) to refuse it.
	 * May publish a rate for the port to have it sent right after the ACK.
	 */
	int (*on_hello)(void *ctx, const struct sendsrv_peer *p);
	/* Optional; REPORT is accepted only when set. */
	void (*on_report)(void *ctx, const struct sendsrv_peer *p,
			  const struct rxbneck_report *r);
	/* Optional; STREAMS_SAMPLE is accepted only when set. */
	void (*on_streams_sample)(void *ctx, const struct sendsrv_peer *p,
				  const struct rxbneck_streams_sample *smp);
	/*
	 * Optional; STREAMS is granted (to senders of minor >= 2) only when
	 * set. The advice for sender @p now into @out: 0, or -ENOENT when
	 * there is none yet (PROTOCOL.md §6.5).
	 */
	int (*streams_for)(void *ctx, const struct sendsrv_peer *p, struct rxbneck_streams *out);
	/* Optional; @why is SENDSRV_GONE_* or the rxbneck_error sent to it. */
	void (*on_goodbye)(void *ctx, const struct sendsrv_peer *p, int why);
	/*
	 * Optional: sender @p's own rates (sendsrv_offer_rates()). Fill @r,
	 * and @between when there is a rate between pause windows for it
	 * (RXBNECK_RATE_BETWEEN_PAUSES set, the same port); return 0 (no rate
	 * for it yet), 1 (@r) or 2 (@r and @between). Without it, every
	 * sender of a port gets what sendsrv_publish_rate() gave for the port.
	 */
	int (*rate_for)(void *ctx, const struct sendsrv_peer *p, struct rxbneck_rate *r,
			struct rxbneck_rate *between);
};

struct sendsrv_stats {
	uint32_t conns_hello;		/* waiting for HELLO */
	uint32_t conns_active;
	uint32_t conns_closing;
	uint32_t listeners;
	uint64_t accepted;
	uint64_t rejected_allow;
	uint64_t rejected_full;
	uint64_t rejected_source;	/* max_conns_per_source reached */
	uint64_t closed_not_allowed;	/* open, outside a reloaded allow-list */
	uint64_t reports_rejected;	/* REPORT failing §5.11's checks */
	uint64_t dropped_no_slot;	/* rejected without a lingering close */
	uint64_t errors_sent[RXBNECK_ERR_MAX_ + 1];
	uint64_t frames_in, frames_out;
	uint64_t frames_out_by_type[SENDSRV_FRAME_TYPES];	/* by rxbneck_type */
	uint64_t bytes_in, bytes_out;
	uint64_t rate_pushes, pause_pushes, buffer_pushes, streams_pushes;
	uint64_t reports, streams_samples;
	size_t mem_bytes;		/* allocated now, fd index excluded */
	size_t mem_bound_bytes;		/* sendsrv_memory_bound() */
};

struct sendsrv;

/*
 * Validates @limits (logs what is wrong), copies both arguments.
 * Returns 0 or -EINVAL / -ENOMEM.
 */
int sendsrv_init(struct sendsrv **out, const struct sendsrv_limits *limits,
		 const struct sendsrv_ops *ops);
/*
 * A configuration reload: every limit changes, all or none (0, -EINVAL or
 * -ENOMEM). Connected senders are never dropped for it; what each limit
 * does to them:
 *  - allow: at once. Open connections from addresses outside the new
 *    allow-list get ERROR NOT_ALLOWED and are closed (logged, counted in
 *    closed_not_allowed).
 *  - max_conns, max_conns_per_source: checked at the next accept. Senders
 *    beyond a lowered cap stay; new connections are refused (TOO_MANY)
 *    until they fit.
 *  - max_frame_bytes, idle_timeout_ns: announced in HELLO_ACK, so a
 *    connection keeps the values it was accepted with, for its lifetime;
 *    connections accepted from now get the new ones.
 *  - hello_timeout_ns: nothing was announced; connections still waiting
 *    for HELLO now have this long from their accept (and time out at the
 *    next sendsrv_tick() if that has passed).
 *  - max_out_bytes: at once, for every connection: a sender with more
 *    queued than the new cap is dropped as stuck at its next frame.
 *  - rate_change_frac, rate_refresh_epochs: the next publish; epoch_ms:
 *    the next HELLO_ACK.
 * The memory bound stays that of the largest limits since sendsrv_init().
 */
int sendsrv_update_limits(struct sendsrv *s, const struct sendsrv_limits *limits);
/* The limits in force (those sendsrv_init() or the last update gave). */
void sendsrv_current_limits(const struct sendsrv *s, struct sendsrv_limits *out);
/* BYE (shutdown) to every sender, on_goodbye for each, close all, free. */
void sendsrv_finish(struct sendsrv *s);

/*
 * Listen on a literal IPv4/IPv6 address ("127.0.0.1", "::1", "0.0.0.0",
 * "::" = dual stack). @port 0 picks one; *bound_port (may be NULL) gets it.
 * Returns 0 or -errno (logged).
 */
int sendsrv_listen(struct sendsrv *s, const char *addr, uint16_t port,
		   uint16_t *bound_port);

/* Whether @fd is one of sendsrv's (listener or connection). */
bool sendsrv_owns_fd(const struct sendsrv *s, int fd);
void sendsrv_handle(struct sendsrv *s, int fd, uint32_t events);
/* @now_ns from the same clock as ops->now_ns (CLOCK_MONOTONIC by default). */
void sendsrv_tick(struct sendsrv *s, uint64_t now_ns);
/*
 * Whether a message about one connection may be logged now: the server
 * rate-limits its own, and its callbacks (on_hello, on_report, ...) ask
 * the same limit, so that a sender's flood of frames does not flood the
 * log. Messages held back are owned up to once a window later.
 */
bool sendsrv_log_ok(struct sendsrv *s);
/* Earliest time sendsrv_tick() has work, UINT64_MAX if none. */
uint64_t sendsrv_next_deadline_ns(const struct sendsrv *s);

/*
 * Offer a new rate for flow r->port to its RATE subscribers; each gets it
 * when PROTOCOL.md §6.1's rule says so. While the port has senders the
 * value is kept, and a sender that subscribes later gets it at once (also
 * when published from on_hello). Returns the number of senders it was sent
 * to, or -EINVAL for an invalid value.
 *
 * @between (may be NULL): the rate to send at between pause windows, with
 * RXBNECK_RATE_BETWEEN_PAUSES set and the same port; it goes instead of @r
 * to the senders that take PAUSE, speak minor >= 1 and have a PAUSE
 * schedule in force (sendsrv_peer.pause_until_ns; PROTOCOL.md §6.3).
 * NULL: there is none (no windows are predicted), every sender gets @r.
 */
int sendsrv_publish_rate(struct sendsrv *s, const struct rxbneck_rate *r,
			 const struct rxbneck_rate *between);
/*
 * With ops->rate_for: each RATE subscriber of flow @port gets its own
 * rates (ops->rate_for) when PROTOCOL.md §6.1's rule says so. Returns the
 * number of senders a RATE went to.
 */
int sendsrv_offer_rates(struct sendsrv *s, uint16_t port);
/*
 * Send a pause schedule (or CANCEL) to the PAUSE subscribers of p->port,
 * except, for a one-shot window, those whose RTT says they cannot act on
 * it (start_in_us + duration_us <= rtt_us). Each one it reaches has it in
 * force from then (CANCEL: none), and gets the rate that is now its own
 * right after it when that is due (between pauses after a schedule, the
 * plain rate after CANCEL). Returns the count or -EINVAL.
 */
int sendsrv_publish_pause(struct sendsrv *s, const struct rxbneck_pause *p);
/*
 * Offer receive-buffer advice for flow b->port to its BUFFER subscribers
 * (granted to senders of minor >= 2 while limits.buffer_advice is set),
 * each when PROTOCOL.md §6.4's rule says so; kept like the rate for a
 * sender that subscribes later. Returns the count or -EINVAL.
 */
int sendsrv_publish_buffer(struct sendsrv *s, const struct rxbneck_buffer *b);

/*
 * Offer every STREAMS subscriber its advice (ops->streams_for), sent when
 * PROTOCOL.md §6.5's rule says so: once per epoch. Returns how many got one.
 */
int sendsrv_publish_streams(struct sendsrv *s);

/* Calls @cb for every sender past HELLO; returns how many. */
size_t sendsrv_foreach_sender(const struct sendsrv *s,
			      void (*cb)(void *arg, const struct sendsrv_peer *p),
			      void *arg);
void sendsrv_stats(const struct sendsrv *s, struct sendsrv_stats *st);
/*
 * Upper bound of sendsrv's heap use under the largest limits it has had,
 * excluding the fd index (4 bytes per fd number up to the highest one
 * seen, i.e. bounded by RLIMIT_NOFILE).
 */
size_t sendsrv_memory_bound(const struct sendsrv *s);

#endif
