/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sendsrv's insides, shared by its files (nothing else includes this):
 *   sendsrv.c          the server: listeners, accept, limits, timeouts, API
 *   sendsrv_cidr.c     allow-list entries, connection sources
 *   sendsrv_source.c   connections counted per source
 *   sendsrv_conn.c     one connection: its frames, its output, closing
 *   sendsrv_publish.c  each flow port's subscribers, RATE and PAUSE pushes
 *   sendsrv_streams.c  STREAMS: who is granted it, and its pushes
 */
#ifndef RXB_DAEMON_SENDSRV_INT_H
#define RXB_DAEMON_SENDSRV_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ratelimit.h"
#include "daemon/serve/sendsrv.h"
#include "proto/codec.h"

#define PORT_BUCKETS		64
#define SOURCE_BUCKETS		256
#define FD_NONE			(-1)
#define FD_LISTENER(i)		(-2 - (int32_t)(i))
#define SERVED_SUBS		(RXBNECK_SUB_RATE | RXBNECK_SUB_PAUSE)	/* to every sender */
/* Served besides, to minor >= RXBNECK_MINOR_BUFFER while limits say so. */
#define SERVED_SUBS_BUFFER	RXBNECK_SUB_BUFFER

/* ------------------------------------------------------------ lists -- */

struct link {
	struct link *prev, *next;
};

static inline void link_init(struct link *l)
{
	l->prev = l;
	l->next = l;
}

static inline bool list_empty(const struct link *head)
{
	return head->next == head;
}

static inline void link_del(struct link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	link_init(l);
}

static inline void list_add_tail(struct link *head, struct link *l)
{
	l->prev = head->prev;
	l->next = head;
	head->prev->next = l;
	head->prev = l;
}

#define link_entry(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ------------------------------------------------------------ state -- */

enum conn_state { C_FREE, C_HELLO, C_ACTIVE, C_CLOSING };

struct port_state {
	struct port_state *next;	/* hash chain */
	uint16_t port;
	uint32_t n_subs;
	uint32_t pins;			/* held across publish loops */
	struct link subs;
	bool has_rate;
	struct rxbneck_rate rate;
	/* The rate between pause windows, for senders that obey them. */
	bool has_rate_between;
	struct rxbneck_rate rate_between;
	bool has_buffer;
	struct rxbneck_buffer buffer;
};

/* The live connections (waiting for HELLO or active) of one source. */
struct source_count {
	struct source_count *next;	/* hash chain */
	struct sendsrv_source src;
	uint32_t n;
};

/*
 * The active connections that were told the same idle timeout in their
 * HELLO_ACK, least recently heard first: with one timeout per list, the
 * head is the next to time out. A reload that changes the timeout starts a
 * new list; the old one lives on while a sender told its value does.
 */
struct idle_list {
	struct idle_list *next;
	uint64_t timeout_ns;		/* 0: never */
	struct link conns;
};

struct conn {
	enum conn_state state;
	int fd;
	uint32_t slot;			/* its index in slots[] */
	uint32_t events;		/* interest registered with the loop */
	struct link tnode;		/* on the hello, an idle or the closing list */
	struct link pnode;		/* on its port's subscriber list */
	struct port_state *ps;
	struct source_count *src;	/* while live: its source's count */
	struct idle_list *idle;		/* C_ACTIVE: the timeout it was told */
	uint64_t deadline_ns;
	uint32_t in_cap;		/* max_frame_bytes when accepted (and told) */
	uint8_t *in;			/* in_cap bytes, live states only */
	uint32_t in_len;
	uint8_t *out;
	uint32_t out_off, out_len, out_cap;
	uint32_t seq_out;
	bool owes_goodbye;		/* on_hello accepted it */
	struct sendsrv_peer peer;
};

struct listener {
	int fd;
	bool watched;
};

struct sendsrv {
	struct sendsrv_limits lim;	/* in force: for new connections, and see
					 * sendsrv_update_limits() for open ones */
	struct sendsrv_ops ops;
	uint64_t frac_ppm;		/* rate_change_frac in parts per million */
	uint64_t instance_id;
	/*
	 * Connection memory, made as needed and kept for reuse: a released
	 * connection stays valid memory (C_FREE) while the call that released
	 * it unwinds. At most lim.max_conns + SENDSRV_SPARE_SLOTS in use.
	 */
	struct conn **slots;
	uint32_t n_slots, slots_cap;
	uint32_t *free_slots;		/* stack of free slot indices */
	uint32_t n_free;
	int32_t *fdmap;			/* fd -> slot, FD_NONE, FD_LISTENER(i) */
	uint32_t fdmap_len;
	struct listener listeners[SENDSRV_MAX_LISTEN];
	uint32_t n_listeners;
	uint64_t accept_resume_ns;	/* != 0: accepting paused until then */
	struct link hello_list, closing_list;
	struct idle_list *idle_lists;	/* every one in use, and idle_now */
	struct idle_list *idle_now;	/* lim.idle_timeout_ns, for the next HELLO */
	struct port_state *ports[PORT_BUCKETS];
	struct source_count *sources[SOURCE_BUCKETS];
	uint64_t next_id;
	struct sendsrv_stats st;
	/* The largest limits since sendsrv_init(): sendsrv_memory_bound(). */
	uint32_t peak_conns, peak_frame_bytes, peak_out_bytes;
	struct ratelimit log_limit;	/* sendsrv_log_ok() */
};

/* sendsrv.c */
uint64_t sendsrv_now_ns(const struct sendsrv *s);
void *sendsrv_mem_alloc(struct sendsrv *s, size_t n);
void sendsrv_mem_free(struct sendsrv *s, void *p, size_t n);

/* sendsrv_conn.c */
void sendsrv_conn_set_state(struct sendsrv *s, struct conn *c, enum conn_state st);
/* Close and forget @c at once. The slot stays valid memory (C_FREE). */
void sendsrv_conn_release(struct sendsrv *s, struct conn *c);
/* on_goodbye, once, for a connection on_hello accepted. */
void sendsrv_conn_goodbye(struct sendsrv *s, struct conn *c, int why);
/* send() what the kernel takes; 0, or -errno when the socket is broken. */
int sendsrv_conn_push_bytes(int fd, const uint8_t *p, uint32_t n, uint32_t *done);
/*
 * Send a frame to a live connection. Returns 0, or < 0 when the connection
 * is gone or closing afterwards (output cap reached, socket broken).
 */
int sendsrv_conn_send(struct sendsrv *s, struct conn *c, struct rxbp_msg *m);
/* An ERROR frame of @code about the sender's frame @ref_seq, no message. */
void sendsrv_conn_error_msg(struct rxbp_msg *m, int code, uint32_t ref_seq);
/*
 * A protocol violation, a limit or a timeout: send ERROR @code and close
 * gracefully (PROTOCOL.md §8.1).
 */
void sendsrv_conn_fail(struct sendsrv *s, struct conn *c, int code, uint32_t ref_seq,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Write queued output; on completion adjust interest. */
void sendsrv_conn_flush(struct sendsrv *s, struct conn *c);
/* Read and discard while closing: one read per event. */
void sendsrv_conn_drain(struct sendsrv *s, struct conn *c);
/* One read, then every whole frame in the buffer. */
void sendsrv_conn_read(struct sendsrv *s, struct conn *c);

/* sendsrv_source.c */
/*
 * Count a new live connection against its source: NULL when the source
 * already has max_conns_per_source (*full set) or there is no memory.
 */
struct source_count *sendsrv_source_take(struct sendsrv *s, const struct sockaddr_storage *ss,
					 bool *full);
/* A live connection ended (or is closing): uncount it. */
void sendsrv_source_put(struct sendsrv *s, struct source_count *sc);
void sendsrv_source_finish(struct sendsrv *s);

/* sendsrv_publish.c */
struct port_state *sendsrv_publish_port(struct sendsrv *s, uint16_t port, bool create);
/* Free @ps when nobody subscribes and no loop holds it. */
void sendsrv_publish_port_put(struct sendsrv *s, struct port_state *ps);
void sendsrv_publish_leave(struct sendsrv *s, struct conn *c);
int sendsrv_publish_push_rate(struct sendsrv *s, struct conn *c, const struct rxbneck_rate *r);
/*
 * The rate meant for @c now (its own or its port's; between pauses only
 * with a schedule in force for it): false when there is none yet.
 */
bool sendsrv_publish_rate_for(struct sendsrv *s, const struct conn *c,
			      struct rxbneck_rate *out);
bool sendsrv_publish_rate_due(const struct sendsrv *s, const struct conn *c,
			      const struct rxbneck_rate *r);
/*
 * Push the rate meant for @c, a RATE subscriber, when it is due (§6.1) or
 * @force; 0 when one went out.
 */
int sendsrv_publish_rate_if_due(struct sendsrv *s, struct conn *c, bool force);

int sendsrv_publish_push_buffer(struct sendsrv *s, struct conn *c,
				const struct rxbneck_buffer *b);
/* Free every port (sendsrv_finish()). */
void sendsrv_publish_finish(struct sendsrv *s);

/* sendsrv_streams.c */
/* The pushes @c may be granted: SERVED_SUBS, and STREAMS from minor 2 when served. */
uint16_t sendsrv_streams_served(const struct sendsrv *s, const struct conn *c);
/* Send @c its STREAMS advice if it takes it and one is due; 0 sent, -1 not. */
int sendsrv_streams_offer(struct sendsrv *s, struct conn *c);

#endif
