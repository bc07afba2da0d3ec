/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librxbneck: the sender side of the rxbneck control protocol.
 *
 * A data sender links this to learn, from the rxbneckd daemon on the
 * receiving host, the rate to send at (RATE), when to pause (PAUSE) and
 * how many parallel TCP streams to open (STREAMS, with
 * RXBNECK_SUB_STREAMS; it reports what it got with
 * rxbneck_client_streams_sample()):
 *
 *	struct rxbneck_client_config cfg;
 *	struct rxbneck_client *c;
 *
 *	rxbneck_client_config_init(&cfg);
 *	cfg.host = "recv.example.org";
 *	cfg.hello.flow_port = 9000;		// UDP port the receiver reads
 *	cfg.hello.payload_bytes = 8192;
 *	cfg.hello.file_bytes = size;
 *	cfg.hello.rtt_us = rtt_us;
 *	cfg.cb.on_rate = my_rate_cb;		// or poll, see below
 *	c = rxbneck_client_new(&cfg);
 *	if (!c || rxbneck_client_connect(c) < 0) ... rxbneck_client_errmsg(c)
 *
 * Then either put rxbneck_client_fd() into your own poll loop (events from
 * rxbneck_client_poll_events(), timeout from rxbneck_client_timeout_ms())
 * and call rxbneck_client_process() when it is ready or the timeout passed,
 * or call rxbneck_client_wait() from time to time. Callbacks run inside
 * process()/wait()/connect(). Polling: rxbneck_client_latest_rate(),
 * rxbneck_client_latest_streams() and rxbneck_client_pause_state() return
 * the newest values at any time.
 *
 * Results: 0 (or a count) on success, a negative RXBNECK_E* code on failure;
 * rxbneck_strerror() names the code, rxbneck_client_errmsg() tells the
 * details (the library never prints). After a failure of process(), wait()
 * or a send function the connection is closed; connect() may be called again.
 *
 * Threads: a client handle is used by one thread at a time, except
 * rxbneck_client_latest_rate(), rxbneck_client_latest_pause(),
 * rxbneck_client_latest_streams() and rxbneck_client_pause_state(),
 * which may be called from any thread at any
 * time while the handle exists (a sending thread checks them while another
 * thread runs process()). Different handles are independent. The library
 * has no global state; rxbneck_strerror() returns static strings.
 *
 * Clock: times ending in _ns are CLOCK_MONOTONIC nanoseconds
 * (rxbneck_now_ns()).
 *
 * Ignores SIGPIPE by sending with MSG_NOSIGNAL. Name resolution uses
 * getaddrinfo(), which may block beyond timeout_ms for DNS names; numeric
 * addresses never do.
 */
#ifndef RXBNECK_CLIENT_H
#define RXBNECK_CLIENT_H

#include <stdint.h>

#include <rxbneck/proto.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rxbneck_rc {
	RXBNECK_OK		= 0,
	RXBNECK_ESYS		= -1,	/* a system call failed, see errmsg */
	RXBNECK_EINVAL		= -2,	/* bad argument or configuration */
	RXBNECK_ENOMEM		= -3,
	RXBNECK_ERESOLVE	= -4,	/* host name did not resolve */
	RXBNECK_ETIMEDOUT	= -5,	/* connect/hello or keepalive timed out */
	RXBNECK_ECLOSED		= -6,	/* daemon closed the connection */
	RXBNECK_EPROTO		= -7,	/* daemon sent something invalid */
	RXBNECK_EREMOTE		= -8,	/* daemon sent ERROR, see remote_error */
	RXBNECK_ENOTCONN	= -9,	/* not connected */
	RXBNECK_ENODATA		= -10,	/* no value received yet */
	RXBNECK_EUNSUPPORTED	= -11,	/* daemon does not accept this frame */
	RXBNECK_ENOBUFS		= -12,	/* output queue full: call process() */
};

/*
 * A PAUSE schedule in the sender's own clock. The first local stop is
 *	first_stop_ns = received_ns + start_in_us - lead_us
 * and each window lasts duration_us, every period_us, repeat_count times
 * (PROTOCOL.md §6 explains the lead). received_ns is when the frame
 * arrived (CLOCK_MONOTONIC, from the kernel's receive timestamp of the
 * connection), not when it was read: a frame that waited in the socket
 * while the caller slept keeps its phase.
 */
struct rxbneck_pause_window {
	struct rxbneck_pause pause;	/* as received */
	uint64_t received_ns;
	uint64_t first_stop_ns;
	uint64_t lead_us;
};

struct rxbneck_callbacks {
	/*
	 * A RATE to send at from now on. Its flags say how it was obtained
	 * (PROTOCOL.md §6.1): RXBNECK_RATE_PROVISIONAL, modelled before any
	 * packet of the flow was measured (the receiver's CPU and its load
	 * now, costs learned earlier on the host - and with
	 * RXBNECK_RATE_DEFAULT_COST the daemon's defaults: nothing learned;
	 * confidence says how far to trust it): follow it, a better one
	 * comes within an epoch of the first packets. NO_TRAFFIC without
	 * PROVISIONAL, confidence 0 (epoch 0 before the daemon's first
	 * epoch): nothing modelled, the top of the search - no word about
	 * the receiver; send as without the daemon until a RATE with
	 * confidence above 0 comes (PROTOCOL.md §6.1).
	 */
	void (*on_rate)(void *user, const struct rxbneck_rate *rate);
	/* Also called for a CANCEL (pause.flags & RXBNECK_PAUSE_CANCEL). */
	void (*on_pause)(void *user, const struct rxbneck_pause_window *w);
	/* Receive-buffer advice (subscribe RXBNECK_SUB_BUFFER; PROTOCOL.md §6.4). */
	void (*on_buffer)(void *user, const struct rxbneck_buffer *b);
	/* STREAMS advice (PROTOCOL.md §6.5): subscribe with RXBNECK_SUB_STREAMS. */
	void (*on_streams)(void *user, const struct rxbneck_streams *s);
	/* The connection ended: @rc as returned, @msg the details. */
	void (*on_error)(void *user, int rc, const char *msg);
};

struct rxbneck_client_config {
	const char *host;		/* daemon host, default "localhost" */
	uint16_t port;			/* daemon port, default RXBNECK_DEFAULT_PORT */
	uint32_t timeout_ms;		/* connect + HELLO/HELLO_ACK, default 5000 */
	/*
	 * The HELLO: flow_port and payload_bytes are required; flow_proto
	 * defaults to 17 (UDP), subscribe to RATE|PAUSE; minor is set by the
	 * library. The strings are copied.
	 */
	struct rxbneck_hello hello;
	/* Subtracted from PAUSE start times; < 0 (default): hello.rtt_us. */
	int64_t pause_lead_us;
	struct rxbneck_callbacks cb;
	void *user;			/* first argument of every callback */
};

/* Library version, e.g. "0.1.0". */
RXBNECK_API const char *rxbneck_version(void);
RXBNECK_API const char *rxbneck_strerror(int rc);
RXBNECK_API uint64_t rxbneck_now_ns(void);

RXBNECK_API void rxbneck_client_config_init(struct rxbneck_client_config *cfg);

/* Copies @cfg. NULL only when out of memory or @cfg is NULL. */
RXBNECK_API struct rxbneck_client *
rxbneck_client_new(const struct rxbneck_client_config *cfg);
/* Sends BYE if connected, closes and frees. NULL is allowed. */
RXBNECK_API void rxbneck_client_close(struct rxbneck_client *c);

/*
 * Connect, send HELLO, wait for HELLO_ACK, all within timeout_ms. Blocking.
 * A connected client is disconnected first. Frames that arrive together
 * with HELLO_ACK are dispatched before it returns.
 */
RXBNECK_API int rxbneck_client_connect(struct rxbneck_client *c);
/* Send BYE and close the socket; the handle stays usable. */
RXBNECK_API void rxbneck_client_disconnect(struct rxbneck_client *c);

/* The socket, or -1 when not connected. Do not read or write it. */
RXBNECK_API int rxbneck_client_fd(const struct rxbneck_client *c);
/* POLLIN, plus POLLOUT while output is queued; 0 when not connected. */
RXBNECK_API short rxbneck_client_poll_events(const struct rxbneck_client *c);
/* Milliseconds until process() must run for keepalive; -1: no need. */
RXBNECK_API int rxbneck_client_timeout_ms(const struct rxbneck_client *c);
/*
 * Non-blocking: read what arrived, dispatch callbacks, write queued output,
 * send a keepalive PING when due. Returns the number of frames handled
 * (>= 0) or a negative code, after which the connection is closed.
 */
RXBNECK_API int rxbneck_client_process(struct rxbneck_client *c);
/*
 * poll() + process() until at least one frame was handled or @timeout_ms
 * passed (-1: no limit). Returns as process(); 0 on timeout.
 */
RXBNECK_API int rxbneck_client_wait(struct rxbneck_client *c, int timeout_ms);

/* Newest values; RXBNECK_ENODATA if none yet. Any thread. */
RXBNECK_API int rxbneck_client_latest_rate(struct rxbneck_client *c,
					   struct rxbneck_rate *out);
RXBNECK_API int rxbneck_client_latest_pause(struct rxbneck_client *c,
					    struct rxbneck_pause_window *out);
RXBNECK_API int rxbneck_client_latest_streams(struct rxbneck_client *c,
					      struct rxbneck_streams *out);
RXBNECK_API int rxbneck_client_latest_buffer(struct rxbneck_client *c,
					     struct rxbneck_buffer *out);
/*
 * For a receiving application that takes BUFFER for its own port: set
 * socket @fd's receive buffer to the advice (setsockopt() with half of
 * rcvbuf_bytes: the kernel doubles it; SO_RCVBUFFORCE first when the
 * caller may, SO_RCVBUF, capped at net.core.rmem_max, otherwise). The
 * size read back into *@now_bytes (may be NULL). 0 or RXBNECK_ESYS
 * (errno set), RXBNECK_EINVAL.
 */
RXBNECK_API int rxbneck_buffer_apply(int fd, const struct rxbneck_buffer *b,
				     uint64_t *now_bytes);
/*
 * Whether the sender should be paused at @now_ns by the newest schedule:
 * 1 = paused, *until_ns = when to resume; 0 = send, *until_ns = next stop
 * (UINT64_MAX: none). Any thread. @until_ns may be NULL.
 */
RXBNECK_API int rxbneck_client_pause_state(struct rxbneck_client *c,
					   uint64_t now_ns, uint64_t *until_ns);
/* The same for a given window (no client needed). */
RXBNECK_API int rxbneck_pause_window_state(const struct rxbneck_pause_window *w,
					   uint64_t now_ns, uint64_t *until_ns);

/*
 * Change the subscription (RXBNECK_SUB_*) and/or the RTT (0 = keep). The
 * daemon does not answer; a push newly taken comes at once when it has a
 * value for it (PROTOCOL.md §5.3).
 */
RXBNECK_API int rxbneck_client_subscribe(struct rxbneck_client *c,
					 uint16_t subscribe, uint32_t rtt_us);
/* Report a finished (or aborted) transfer. */
RXBNECK_API int rxbneck_client_report(struct rxbneck_client *c,
				      const struct rxbneck_report *r);
/*
 * Report a transfer (or an interval of one) made with s->streams parallel
 * TCP streams to the flow port: their summed goodput s->throughput_bps
 * over s->duration_us (PROTOCOL.md §5.12; s->port 0 = the HELLO's
 * flow_port). RXBNECK_EUNSUPPORTED unless the daemon accepts it,
 * RXBNECK_EINVAL out of the frame's bounds.
 */
RXBNECK_API int rxbneck_client_streams_sample(struct rxbneck_client *c,
					      const struct rxbneck_streams_sample *s);

/* The daemon's HELLO_ACK, or NULL when not connected. */
RXBNECK_API const struct rxbneck_hello_ack *
rxbneck_client_daemon(const struct rxbneck_client *c);
/* Details of the last failure ("" if none). */
RXBNECK_API const char *rxbneck_client_errmsg(const struct rxbneck_client *c);
/* Code of the daemon's last ERROR frame (enum rxbneck_error), 0 if none. */
RXBNECK_API int rxbneck_client_remote_error(const struct rxbneck_client *c);

#ifdef __cplusplus
}
#endif

#endif
