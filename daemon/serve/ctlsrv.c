// SPDX-License-Identifier: GPL-2.0-or-later
/* The rxbneckctl command server. See ctlsrv.h and docs/CONTROL.md. */
#include "daemon/serve/ctlsrv.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"

static const char *const err_names[] = {
	[CTL_OK] = "OK",
	[CTL_ERR_BAD_REQUEST] = "BAD_REQUEST",
	[CTL_ERR_UNKNOWN] = "UNKNOWN_COMMAND",
	[CTL_ERR_BAD_ARGUMENT] = "BAD_ARGUMENT",
	[CTL_ERR_TOO_LONG] = "TOO_LONG",
	[CTL_ERR_TIMEOUT] = "TIMEOUT",
	[CTL_ERR_BUSY] = "BUSY",
	[CTL_ERR_FAILED] = "FAILED",
	[CTL_ERR_INTERNAL] = "INTERNAL",
};

const char *ctlsrv_err_name(enum ctl_err e)
{
	if ((unsigned)e >= RXB_ARRAY_SIZE(err_names))
		return "INTERNAL";
	return err_names[e];
}

/* ------------------------------------------------------------ parsing -- */

enum ctl_err ctlsrv_parse_request(char *line, struct ctl_request *req, const char **why)
{
	char *save = NULL, *tok;
	size_t len = strlen(line);

	memset(req, 0, sizeof(*req));
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)line[i];

		if ((ch < 0x20 && ch != '\t') || ch > 0x7e) {
			*why = "the request has a byte that is not printable ASCII";
			return CTL_ERR_BAD_REQUEST;
		}
	}
	tok = strtok_r(line, " \t", &save);
	if (!tok) {
		*why = "empty request";
		return CTL_ERR_BAD_REQUEST;
	}
	for (const char *p = tok; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '-' || *p == '_')) {
			*why = "a command is lowercase letters, '-' and '_'";
			return CTL_ERR_BAD_REQUEST;
		}
	req->verb = tok;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (req->argc == CTLSRV_MAX_ARGS) {
			*why = "too many arguments";
			return CTL_ERR_BAD_REQUEST;
		}
		req->argv[req->argc++] = tok;
		if (!strcmp(tok, "json"))
			req->json = true;
	}
	return CTL_OK;
}

/* ------------------------------------------------------------- server -- */

enum client_state { CL_FREE, CL_READ, CL_WRITE };

struct client {
	enum client_state state;
	int fd;
	uint64_t deadline_ns;
	uint64_t accepted_ns;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char in[CTLSRV_MAX_REQUEST + 1];
	size_t in_len;
	struct strbuf out;	/* the response */
	size_t out_off;
};

struct ctlsrv {
	struct ctlsrv_ops ops;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd;
	bool path_created;
	struct client cl[CTLSRV_MAX_CLIENTS];
	struct ctlsrv_stats st;
};

size_t ctlsrv_memory_bound(void)
{
	return sizeof(struct ctlsrv) +
	       (size_t)CTLSRV_MAX_CLIENTS * (CTLSRV_MAX_RESPONSE + 1);
}

/*
 * Discard what the client sent beyond its request: closing a unix socket
 * with unread input resets the connection, and the client would lose the
 * answer it has not read yet (an ERR TOO_LONG, say).
 */
static void drain_input(int fd)
{
	char buf[4096];

	for (int i = 0; i < 16; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return;
}

static void client_close(struct ctlsrv *c, struct client *cl)
{
	if (cl->state == CL_FREE)
		return;
	drain_input(cl->fd);
	c->ops.fd_del(c->ops.ctx, cl->fd);
	close(cl->fd);
	c->st.mem_bytes -= cl->out.cap;
	strbuf_finish(&cl->out);
	cl->state = CL_FREE;
	cl->fd = -1;
	c->st.clients--;
}

/* Try to write the rest of the response; close when done or broken. */
static void client_flush(struct ctlsrv *c, struct client *cl)
{
	while (cl->out_off < cl->out.len) {
		ssize_t n = send(cl->fd, cl->out.buf + cl->out_off,
				 cl->out.len - cl->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;		/* wait for EPOLLOUT */
		if (n < 0) {
			rxb_debug("ctl: client pid %d: %s", (int)cl->pid, strerror(errno));
			break;
		}
		cl->out_off += (size_t)n;
	}
	client_close(c, cl);
}

static void client_respond(struct ctlsrv *c, struct client *cl, bool parsed,
			   enum ctl_err err, const char *msg, const struct strbuf *body)
{
	strbuf_init(&cl->out, CTLSRV_MAX_RESPONSE + 512);
	if (err == CTL_OK) {
		strbuf_adds(&cl->out, "OK\n");
		strbuf_add(&cl->out, body->buf ? body->buf : "", body->len);
	} else {
		c->st.errors++;
		strbuf_addf(&cl->out, "ERR %s %s\n", ctlsrv_err_name(err), msg);
		if (parsed) {
			struct json_writer w;

			json_init(&w, false);
			json_obj_begin(&w, NULL);
			json_obj_begin(&w, "error");
			json_str(&w, "code", ctlsrv_err_name(err));
			json_str(&w, "message", msg);
			json_obj_end(&w);
			json_obj_end(&w);
			if (json_ok(&w)) {
				strbuf_add(&cl->out, json_text(&w), json_len(&w));
				strbuf_adds(&cl->out, "\n");
			}
			json_finish(&w);
		}
	}
	c->st.mem_bytes += cl->out.cap;
	if (cl->out.failed) {
		/* Out of memory even for the error line: just close. */
		client_close(c, cl);
		return;
	}
	cl->state = CL_WRITE;
	cl->out_off = 0;
	if (c->ops.fd_mod(c->ops.ctx, cl->fd, EPOLLOUT)) {
		client_close(c, cl);
		return;
	}
	client_flush(c, cl);
}

static void client_request(struct ctlsrv *c, struct client *cl)
{
	struct ctl_request req;
	struct ctl_reply rep;
	const char *why = NULL;
	enum ctl_err err;

	c->st.requests++;
	err = ctlsrv_parse_request(cl->in, &req, &why);
	if (err) {
		/* Not a request: the error line alone. */
		client_respond(c, cl, false, err, why, NULL);
		return;
	}
	req.pid = cl->pid;
	req.uid = cl->uid;
	req.gid = cl->gid;
	memset(&rep, 0, sizeof(rep));
	strbuf_init(&rep.body, CTLSRV_MAX_RESPONSE);
	c->ops.request(c->ops.ctx, &req, &rep);
	if (rep.err == CTL_OK && rep.body.failed) {
		rep.err = CTL_ERR_INTERNAL;
		snprintf(rep.msg, sizeof(rep.msg), "response over %d bytes or out of memory",
			 CTLSRV_MAX_RESPONSE);
	}
	if (rep.err != CTL_OK && !rep.msg[0])
		rxb_strlcpy(rep.msg, "failed", sizeof(rep.msg));
	client_respond(c, cl, true, rep.err, rep.msg, &rep.body);
	strbuf_finish(&rep.body);
}

static void client_read(struct ctlsrv *c, struct client *cl)
{
	char *nl;

	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->in_len,
				 CTLSRV_MAX_REQUEST - cl->in_len, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			client_close(c, cl);
			return;
		}
		if (n == 0) {
			/* EOF: a request without its newline is still one. */
			if (!cl->in_len) {
				client_close(c, cl);
				return;
			}
			cl->in[cl->in_len] = '\0';
			client_request(c, cl);
			return;
		}
		cl->in_len += (size_t)n;
		cl->in[cl->in_len] = '\0';
		nl = memchr(cl->in, '\n', cl->in_len);
		if (nl) {
			*nl = '\0';
			if (strlen(cl->in) != (size_t)(nl - cl->in)) {
				client_respond(c, cl, false, CTL_ERR_BAD_REQUEST,
					       "NUL byte in the request", NULL);
				return;
			}
			client_request(c, cl);
			return;
		}
		if (cl->in_len == CTLSRV_MAX_REQUEST) {
			char msg[64];

			snprintf(msg, sizeof(msg), "a request is at most %d bytes",
				 CTLSRV_MAX_REQUEST);
			client_respond(c, cl, false, CTL_ERR_TOO_LONG, msg, NULL);
			return;
		}
	}
}

/* The oldest client still sending its request, if it may be evicted. */
static struct client *evictable(struct ctlsrv *c, uint64_t now)
{
	struct client *old = NULL;

	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++) {
		struct client *cl = &c->cl[i];

		if (cl->state == CL_READ && (!old || cl->accepted_ns < old->accepted_ns))
			old = cl;
	}
	if (old && now - old->accepted_ns >= CTLSRV_EVICT_NS)
		return old;
	return NULL;
}

static struct client *free_slot(struct ctlsrv *c, uint64_t now)
{
	struct client *cl;

	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		if (c->cl[i].state == CL_FREE)
			return &c->cl[i];
	cl = evictable(c, now);
	if (!cl)
		return NULL;
	c->st.evicted++;
	client_respond(c, cl, false, CTL_ERR_BUSY,
		       "evicted: no request within the eviction delay while the server was full",
		       NULL);
	/* The eviction notice may still be queued: force the slot free. */
	client_close(c, cl);
	return cl;
}

static void reject_busy(struct ctlsrv *c, int fd)
{
	static const char msg[] = "ERR BUSY too many rxbneckctl clients, try again\n";

	c->st.busy++;
	if (send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		rxb_debug("ctl: busy notice not sent: %s", strerror(errno));
	close(fd);
}

static void accept_one(struct ctlsrv *c, int fd, uint64_t now)
{
	struct client *cl = free_slot(c, now);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int err;

	if (!cl) {
		reject_busy(c, fd);
		return;
	}
	memset(cl, 0, sizeof(*cl));
	cl->fd = fd;
	cl->accepted_ns = now;
	cl->deadline_ns = now + CTLSRV_TIMEOUT_NS;
	cl->pid = -1;
	cl->uid = (uid_t)-1;
	cl->gid = (gid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		cl->pid = cred.pid;
		cl->uid = cred.uid;
		cl->gid = cred.gid;
	}
	err = c->ops.fd_add(c->ops.ctx, fd, EPOLLIN);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "ctl: watching client fd %d (pid %d)", fd,
			      (int)cl->pid);
		if (close(fd))
			rxb_log_errno(RXB_LOG_WARNING, errno, "ctl: closing client fd %d", fd);
		return;
	}
	cl->state = CL_READ;
	c->st.clients++;
	c->st.accepted++;
}

static void handle_listener(struct ctlsrv *c)
{
	uint64_t now = rxb_mono_ns();

	for (int i = 0; i < CTLSRV_ACCEPT_BATCH; i++) {
		int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				rxb_log_errno(RXB_LOG_WARNING, errno, "ctl: accept on %s",
					      c->path);
			return;
		}
		accept_one(c, fd, now);
	}
}

static struct client *find_client(struct ctlsrv *c, int fd)
{
	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		if (c->cl[i].state != CL_FREE && c->cl[i].fd == fd)
			return &c->cl[i];
	return NULL;
}

bool ctlsrv_owns_fd(const struct ctlsrv *c, int fd)
{
	if (fd == c->lfd)
		return true;
	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		if (c->cl[i].state != CL_FREE && c->cl[i].fd == fd)
			return true;
	return false;
}

void ctlsrv_handle(struct ctlsrv *c, int fd, uint32_t events)
{
	struct client *cl;

	if (fd == c->lfd) {
		handle_listener(c);
		return;
	}
	cl = find_client(c, fd);
	if (!cl)
		return;
	if (cl->state == CL_READ && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		client_read(c, cl);
	else if (cl->state == CL_WRITE && (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)))
		client_flush(c, cl);
}

void ctlsrv_tick(struct ctlsrv *c, uint64_t now_ns)
{
	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++) {
		struct client *cl = &c->cl[i];

		if (cl->state == CL_FREE || cl->deadline_ns > now_ns)
			continue;
		c->st.timeouts++;
		if (cl->state == CL_READ) {
			/* Tell it why; one non-blocking try, then close. */
			static const char msg[] = "ERR TIMEOUT no complete request in time\n";

			if (send(cl->fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				rxb_debug("ctl: timeout notice not sent: %s", strerror(errno));
		}
		client_close(c, cl);
	}
}

uint64_t ctlsrv_next_deadline_ns(const struct ctlsrv *c)
{
	uint64_t t = UINT64_MAX;

	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		if (c->cl[i].state != CL_FREE && c->cl[i].deadline_ns < t)
			t = c->cl[i].deadline_ns;
	return t;
}

void ctlsrv_stats(const struct ctlsrv *c, struct ctlsrv_stats *st)
{
	*st = c->st;
}

/* ------------------------------------------------------- the socket -- */

/*
 * Whether a daemon answers on @path: then its socket must not be removed.
 * A socket file nobody listens on is a leftover of a crash.
 */
static bool socket_alive(const struct sockaddr_un *sa, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool alive;

	if (fd < 0)
		return false;
	alive = connect(fd, (const struct sockaddr *)sa, len) == 0;
	close(fd);
	return alive;
}

static int remove_stale(const char *path, const struct sockaddr_un *sa, socklen_t len)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		rxb_log_errno(RXB_LOG_ERR, errno, "ctl: %s", path);
		return -errno;
	}
	if (!S_ISSOCK(st.st_mode)) {
		rxb_err("ctl: %s exists and is not a socket; not replacing it", path);
		return -EEXIST;
	}
	if (socket_alive(sa, len)) {
		rxb_err("ctl: another daemon answers on %s", path);
		return -EADDRINUSE;
	}
	if (unlink(path) && errno != ENOENT) {
		rxb_log_errno(RXB_LOG_ERR, errno, "ctl: removing the stale socket %s", path);
		return -errno;
	}
	rxb_notice("ctl: removed the stale socket %s", path);
	return 0;
}

static int bind_socket(struct ctlsrv *c, const struct ctlsrv_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	mode_t old_mask;
	int err;

	if (strlen(o->path) >= sizeof(sa.sun_path) || o->path[0] != '/') {
		rxb_err("ctl: socket path '%s' is not absolute or too long", o->path);
		return -EINVAL;
	}
	rxb_strlcpy(sa.sun_path, o->path, sizeof(sa.sun_path));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(o->path) + 1);
	err = remove_stale(o->path, &sa, len);
	if (err)
		return err;
	/* Nobody may connect before the mode is set: start with none. */
	old_mask = umask(0777);
	err = bind(c->lfd, (struct sockaddr *)&sa, len) ? -errno : 0;
	umask(old_mask);
	if (err) {
		rxb_log_errno(RXB_LOG_ERR, -err, "ctl: binding %s", o->path);
		return err;
	}
	c->path_created = true;
	if (o->gid != (gid_t)-1 && chown(o->path, (uid_t)-1, o->gid)) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, -err, "ctl: giving %s to group %u", o->path,
			      (unsigned)o->gid);
		return err;
	}
	if (chmod(o->path, (mode_t)o->mode)) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, -err, "ctl: chmod %o %s", o->mode, o->path);
		return err;
	}
	return 0;
}

int ctlsrv_init(struct ctlsrv **out, const struct ctlsrv_opts *o,
		const struct ctlsrv_ops *ops)
{
	struct ctlsrv *c;
	int err;

	*out = NULL;
	if (!ops->fd_add || !ops->fd_mod || !ops->fd_del || !ops->request)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ops = *ops;
	rxb_strlcpy(c->path, o->path, sizeof(c->path));
	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		c->cl[i].fd = -1;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, -err, "ctl: socket");
		free(c);
		return err;
	}
	err = bind_socket(c, o);
	if (!err && listen(c->lfd, CTLSRV_BACKLOG)) {
		err = -errno;
		rxb_log_errno(RXB_LOG_ERR, -err, "ctl: listen on %s", o->path);
	}
	if (!err)
		err = ops->fd_add(ops->ctx, c->lfd, EPOLLIN);
	if (err) {
		close(c->lfd);
		if (c->path_created)
			unlink(o->path);
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void ctlsrv_finish(struct ctlsrv *c)
{
	if (!c)
		return;
	for (int i = 0; i < CTLSRV_MAX_CLIENTS; i++)
		client_close(c, &c->cl[i]);
	c->ops.fd_del(c->ops.ctx, c->lfd);
	close(c->lfd);
	if (c->path_created && unlink(c->path) && errno != ENOENT)
		rxb_log_errno(RXB_LOG_WARNING, errno, "ctl: removing %s", c->path);
	free(c);
}
