// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics endpoint over libmicrohttpd. See metricsrv.h.
 *
 * Why libmicrohttpd: it parses HTTP/1.x (request line, headers, chunked
 * bodies, pipelining, keep-alive) with its own bounds, and it has a mode
 * with no thread of its own, driven from an outside loop through one epoll
 * descriptor. What it does not bound is a connection's whole life (its
 * timeout is one of inactivity): that is done here, by shutting down the
 * socket of a connection open for timeout_s, which libmicrohttpd then
 * closes as a peer that went away.
 */
#include "daemon/serve/metricsrv.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/ratelimit.h"
#include "common/util.h"
#include "daemon/serve/listen.h"

#define LOG_WINDOW_NS	(10 * RXB_NSEC_PER_SEC)
#define LOG_PER_WINDOW	5
#define LISTEN_BACKLOG	64

/* A connection libmicrohttpd holds, for the cut at timeout_s. */
struct tracked {
	bool used, cut;
	int fd;
	uint64_t accepted_ns;
};

struct metricsrv {
	struct metricsrv_opts o;	/* allow-list: the one in force */
	struct metricsrv_ops ops;
	struct MHD_Daemon *mhd;
	int epfd;			/* libmicrohttpd's, in the daemon's loop */
	bool watched;
	uint16_t port;
	uint64_t mhd_due_ns;		/* MHD_run() needed by then */
	struct tracked *conns;		/* o.max_conns */
	struct metricsrv_stats st;
	struct ratelimit log_limit;	/* libmicrohttpd's messages */
};

/* ------------------------------------------------------------ logging -- */

/* libmicrohttpd's messages, at most LOG_PER_WINDOW per LOG_WINDOW_NS. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct metricsrv *m = cls;
	uint64_t dropped;
	char msg[256];
	size_t n;
	bool ok = ratelimit_ok(&m->log_limit, rxb_mono_ns(), &dropped);

	if (dropped)
		rxb_info("metrics: %llu more HTTP server messages suppressed",
			 (unsigned long long)dropped);
	if (!ok)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
		msg[--n] = '\0';
	rxb_info("metrics: HTTP server: %s", msg);
}

/* ------------------------------------------------- connections, limits -- */

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct metricsrv *m = cls;

	(void)len;
	for (size_t i = 0; i < m->o.n_allow; i++)
		if (sendsrv_cidr_match(&m->o.allow[i], sa))
			return MHD_YES;
	m->st.refused_allow++;
	return MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct metricsrv *m = cls;
	const union MHD_ConnectionInfo *ci;
	struct tracked *t = *socket_ctx;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (t) {
			t->used = false;
			m->st.conns--;
		}
		*socket_ctx = NULL;
		return;
	}
	m->st.accepted++;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (uint32_t i = 0; ci && i < m->o.max_conns; i++) {
		if (m->conns[i].used)
			continue;
		m->conns[i] = (struct tracked){
			.used = true, .fd = ci->connect_fd, .accepted_ns = rxb_mono_ns(),
		};
		*socket_ctx = &m->conns[i];
		m->st.conns++;
		return;
	}
	/* Cannot happen: libmicrohttpd holds at most max_conns. */
	rxb_warn("metrics: a connection beyond %u; its time is not bounded", m->o.max_conns);
}

/* Shut down every connection open for timeout_s; the earliest still due. */
static uint64_t cut_old(struct metricsrv *m, uint64_t now, bool cut)
{
	uint64_t life = (uint64_t)m->o.timeout_s * RXB_NSEC_PER_SEC, due = UINT64_MAX;

	for (uint32_t i = 0; m->st.conns && i < m->o.max_conns; i++) {
		struct tracked *t = &m->conns[i];

		if (!t->used || t->cut)
			continue;
		if (cut && now - t->accepted_ns >= life) {
			if (shutdown(t->fd, SHUT_RDWR) && errno != ENOTCONN)
				rxb_log_errno(RXB_LOG_INFO, errno, "metrics: shutdown(fd %d)", t->fd);
			t->cut = true;
			m->st.cut++;
		} else if (t->accepted_ns + life < due) {
			due = t->accepted_ns + life;
		}
	}
	return due;
}

/* --------------------------------------------------------- requests -- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     struct MHD_Response *r, const char *type)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;	/* out of memory: close */
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
	    (code == MHD_HTTP_METHOD_NOT_ALLOWED &&
	     MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET") != MHD_YES)) {
		MHD_destroy_response(r);
		return MHD_NO;
	}
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int code, const char *text)
{
	return reply(c, code, MHD_create_response_from_buffer(strlen(text), (void *)text,
							     MHD_RESPMEM_PERSISTENT),
		     "text/plain; charset=utf-8");
}

static enum MHD_Result reply_metrics(struct metricsrv *m, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct promtext w;
	uint64_t t0 = rxb_mono_ns();
	size_t len;
	char *text;

	promtext_init(&w, METRICSRV_BODY_MAX);
	m->ops.render(m->ops.ctx, &w);
	text = promtext_take(&w, &len);
	promtext_finish(&w);
	m->st.render_ns += rxb_mono_ns() - t0;
	if (!text) {
		m->st.failed++;
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "the exposition could not be written\n");
	}
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(text);
	ret = reply(c, MHD_HTTP_OK, r, PROMTEXT_CONTENT_TYPE);
	if (ret == MHD_YES)	/* counted as answered only when it was */
		m->st.ok++;
	return ret;
}

/*
 * Called once the request line and headers are in. The answer goes at
 * once, before any body: a body is never read (libmicrohttpd then closes
 * the connection after the answer).
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **req_ctx)
{
	struct metricsrv *m = cls;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	if (*req_ctx)		/* a body after the answer: ignored */
		return MHD_YES;
	*req_ctx = m;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
		m->st.bad_method++;
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET /metrics is served here\n");
	}
	if (strcmp(url, "/metrics") != 0) {
		m->st.not_found++;
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	}
	return reply_metrics(m, c);
}

/* ------------------------------------------------------------- loop -- */

static void run(struct metricsrv *m)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_run(m->mhd) != MHD_YES)
		rxb_warn("metrics: MHD_run failed");
	if (MHD_get_timeout(m->mhd, &ms) == MHD_YES)
		m->mhd_due_ns = rxb_mono_ns() + (uint64_t)ms * RXB_NSEC_PER_MSEC;
	else
		m->mhd_due_ns = UINT64_MAX;
}

void metricsrv_handle(struct metricsrv *m)
{
	if (m)
		run(m);
}

void metricsrv_tick(struct metricsrv *m, uint64_t now_ns)
{
	uint64_t due;

	if (!m)
		return;
	due = cut_old(m, now_ns, false);
	if (due <= now_ns)
		cut_old(m, now_ns, true);
	if (due <= now_ns || m->mhd_due_ns <= now_ns)
		run(m);
}

uint64_t metricsrv_next_deadline_ns(const struct metricsrv *m)
{
	uint64_t due;

	if (!m)
		return UINT64_MAX;
	due = cut_old((struct metricsrv *)m, 0, false);
	return due < m->mhd_due_ns ? due : m->mhd_due_ns;
}

/* -------------------------------------------------------- life cycle -- */

static bool opts_ok(const struct metricsrv_opts *o)
{
	if (o->max_conns < 1 || o->max_conns > METRICSRV_MAX_CONNS || o->max_conns_per_addr < 1 ||
	    o->max_conns_per_addr > o->max_conns || o->timeout_s < 1 ||
	    o->n_allow > SENDSRV_MAX_ALLOW) {
		rxb_err("metrics: bad limits (connections %u, per address %u, timeout %u s, "
			"%zu networks)", o->max_conns, o->max_conns_per_addr, o->timeout_s,
			o->n_allow);
		return false;
	}
	return true;
}

static int start_mhd(struct metricsrv *m, int lfd)
{
	const union MHD_DaemonInfo *di;

	m->mhd = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, accept_policy, m, on_request, m,
		MHD_OPTION_EXTERNAL_LOGGER, on_log, m,	/* first: it logs the rest */
		MHD_OPTION_LISTEN_SOCKET, lfd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)m->o.max_conns,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)m->o.max_conns_per_addr,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)m->o.timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICSRV_REQUEST_BYTES,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
		MHD_OPTION_END);
	if (!m->mhd) {
		rxb_err("metrics: the HTTP server (libmicrohttpd) did not start");
		/* Whether it closed the listener on failure is not documented. */
		if (fcntl(lfd, F_GETFD) != -1)
			close(lfd);
		return -EIO;
	}
	di = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di || di->epoll_fd < 0) {
		rxb_err("metrics: the HTTP server has no epoll descriptor");
		return -EIO;
	}
	m->epfd = di->epoll_fd;
	return 0;
}

int metricsrv_init(struct metricsrv **out, const struct metricsrv_opts *o,
		   const struct metricsrv_ops *ops)
{
	struct metricsrv *m;
	int lfd, err;

	*out = NULL;
	if (!opts_ok(o) || !ops->fd_add || !ops->fd_del || !ops->render)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->o = *o;
	m->ops = *ops;
	m->epfd = -1;
	ratelimit_init(&m->log_limit, LOG_WINDOW_NS, LOG_PER_WINDOW, rxb_mono_ns());
	m->mhd_due_ns = UINT64_MAX;
	m->conns = calloc(o->max_conns, sizeof(m->conns[0]));
	lfd = m->conns ? listen_tcp("metrics", o->addr, o->port, LISTEN_BACKLOG, &m->port) :
			 -ENOMEM;
	err = lfd < 0 ? lfd : start_mhd(m, lfd);
	if (!err) {
		err = ops->fd_add(ops->ctx, m->epfd, EPOLLIN);
		m->watched = err == 0;
	}
	if (err) {
		metricsrv_finish(m);
		return err;
	}
	run(m);		/* its first timeout */
	rxb_info("metrics: serving http://%s%s%s:%u/metrics (%zu allowed networks, "
		 "%u connections, %u per address, %u s)", strchr(o->addr, ':') ? "[" : "",
		 o->addr, strchr(o->addr, ':') ? "]" : "", m->port, o->n_allow, o->max_conns,
		 o->max_conns_per_addr, o->timeout_s);
	*out = m;
	return 0;
}

void metricsrv_finish(struct metricsrv *m)
{
	if (!m)
		return;
	if (m->watched)
		m->ops.fd_del(m->ops.ctx, m->epfd);
	if (m->mhd)
		MHD_stop_daemon(m->mhd);	/* closes its connections and the listener */
	free(m->conns);
	free(m);
}

void metricsrv_set_allow(struct metricsrv *m, const struct sendsrv_cidr *allow, size_t n)
{
	if (n > SENDSRV_MAX_ALLOW)
		n = SENDSRV_MAX_ALLOW;
	memcpy(m->o.allow, allow, n * sizeof(allow[0]));
	m->o.n_allow = n;
}

size_t metricsrv_allow(const struct metricsrv *m, struct sendsrv_cidr *out, size_t max)
{
	size_t n = m->o.n_allow < max ? m->o.n_allow : max;

	memcpy(out, m->o.allow, n * sizeof(out[0]));
	return n;
}

uint16_t metricsrv_port(const struct metricsrv *m)
{
	return m->port;
}

void metricsrv_stats(const struct metricsrv *m, struct metricsrv_stats *st)
{
	*st = m->st;
}
