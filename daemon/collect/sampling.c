// SPDX-License-Identifier: GPL-2.0-or-later
/* When the per-packet programs are attached. See sampling.h. */
#include "daemon/collect/sampling.h"

#include <string.h>

#include "bpf/netrx.h"
#include "bpf/sockq.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/collect/sockdiag.h"

void sampling_init(struct sampling *s, struct netrx_probe *np, struct sockq_probe *sq,
		   struct collect_proc *proc, uint32_t every, uint32_t a_every)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->np = np;
	s->sq = sq;
	s->proc = proc;
	s->every = every;
	s->on = np || sq;
	s->whole_seq = 1;
	s->next_seq = 1;
	s->a_every = a_every ? a_every : 1;
	s->a_on = np != NULL;
	s->a_whole_seq = 1;
	s->a_next_seq = 1;
	/* The probes open attached, the enqueue program too. */
	s->enq_on = sq != NULL;
	s->enq_whole_seq = 1;
	err = sockdiag_open(&s->diag);
	if (err)
		rxb_log_errno(RXB_LOG_INFO, -err,
			      "collect: socket diagnostics (new receivers on UDP ports "
			      "then from /proc/net/udp, on TCP ports at the sampling "
			      "cadence)");
}

void sampling_finish(struct sampling *s)
{
	sockdiag_close(s->diag);
	s->diag = NULL;
}

void sampling_set_every(struct sampling *s, uint32_t every, uint64_t seq)
{
	uint64_t next;

	s->every = every;
	/* From the latest sample on; the epoch under way keeps its state. */
	next = s->sampled_seq ? s->sampled_seq + every : seq + 1;
	s->next_seq = next > seq + 1 ? next : seq + 1;
}

void sampling_new_port(struct sampling *s, uint64_t seq)
{
	/* The epoch under way began with the last snapshot, before this. */
	if (s->next_seq > seq + 2)
		s->next_seq = seq + 2;
}

bool sampling_enq_wanted(bool stage_a, bool have_np, bool have_diag, bool derive_ready)
{
	return stage_a || !have_np || !have_diag || !derive_ready;
}

/*
 * Is the enqueue program wanted in every sampled epoch? The epochs without
 * it derive arrivals from the queues read through socket diagnostics and
 * the memory per packet of a counted epoch; while some watched port lacks
 * either (s->derive_ready), or without stage A (which it goes with), it
 * stays.
 */
static bool enq_always(const struct sampling *s)
{
	return sampling_enq_wanted(false, s->np != NULL, s->diag != NULL, s->derive_ready);
}

/* Attach (@on, for epoch @seq + 1) or detach the enqueue program. */
static int enq_set(struct sampling *s, bool on, uint64_t seq)
{
	int err;

	if (!s->sq || on == s->enq_on)
		return 0;
	err = sockq_probe_set_enq(s->sq, on);
	if (err) {
		s->enq_on = false;
		return err;
	}
	s->enq_on = on;
	if (on)
		s->enq_whole_seq = seq + 1;
	return 0;
}

/* Detach stage A's programs. */
static void detach_a(struct sampling *s)
{
	if (s->np && s->a_on) {
		netrx_probe_set_sampled(s->np, false);
		/* The enqueue program goes with stage A (SOCKQ_ENQ_TP). */
		if (!enq_always(s))
			enq_set(s, false, 0);
	}
	s->a_on = false;
}

/* Detach the per-packet programs. */
static void detach(struct sampling *s)
{
	uint64_t t0 = rxb_mono_ns();

	detach_a(s);
	if (s->sq)
		sockq_probe_set_sampled(s->sq, false);
	s->enq_on = false;
	s->detach_ns = rxb_mono_ns() - t0;
	s->on = false;
	rxb_debug("collect: per-packet probes detached in %llu us",
		  (unsigned long long)(s->detach_ns / 1000));
}

/* Is stage A due in epoch @seq + 1? */
static bool a_due(const struct sampling *s, uint64_t seq)
{
	return s->np && seq + 1 >= s->a_next_seq;
}

/* Attach stage A's programs (for epoch @seq + 1) unless they are. */
static int attach_a(struct sampling *s, uint64_t seq)
{
	int err;

	if (s->a_on)
		return 0;
	err = netrx_probe_set_sampled(s->np, true);
	if (!err)
		err = enq_set(s, true, seq);
	if (err) {
		netrx_probe_set_sampled(s->np, false);
		return err;
	}
	s->a_on = true;
	s->a_whole_seq = seq + 1;
	return 0;
}

/* Attach them (for epoch @seq + 1): the socket programs and, when it is
 * due, stage A's; all of them or none. */
static void attach(struct sampling *s, uint64_t seq)
{
	uint64_t t0 = rxb_mono_ns();
	int err = 0;

	if (a_due(s, seq))
		err = attach_a(s, seq);
	if (!err && s->sq) {
		err = sockq_probe_set_sampled(s->sq, true);
		/* That attached the enqueue program too: it stays only
		 * with stage A unless enq_always(). */
		if (!err && !s->enq_on) {
			s->enq_on = true;
			s->enq_whole_seq = seq + 1;
		}
		if (!err && !s->a_on && !enq_always(s))
			err = enq_set(s, false, seq);
	}
	if (err) {
		detach(s);
		if (!s->attach_failing)
			rxb_log_errno(RXB_LOG_WARNING, -err,
				      "collect: attaching the per-packet probes for "
				      "epoch %llu (will retry each epoch)",
				      (unsigned long long)seq + 1);
		s->attach_failing = true;
		return;
	}
	if (s->attach_failing)
		rxb_notice("collect: per-packet probes attached again");
	s->attach_failing = false;
	s->attach_ns = rxb_mono_ns() - t0;
	s->on = true;
	rxb_debug("collect: per-packet probes attached in %llu us",
		  (unsigned long long)(s->attach_ns / 1000));
}

/* sockdiag_fn: count a socket on a watched port. */
static void add_socket(uint8_t proto, uint16_t port, uint64_t inode, uint32_t uid, void *arg)
{
	struct port_socks *v = arg;

	(void)uid;
	(void)proto;
	/* @v ends with a port-0 sentinel: port 0 is never listened on. */
	for (; v->port; v++)
		if (v->port == port) {
			v->nsocks++;
			v->inode_sum += inode;
			return;
		}
}

/*
 * How many ports of @now have sockets that @prev did not (another inode, or
 * more of them); a port missing from @prev counts when it has a socket.
 */
static int port_socks_new(const struct port_socks *prev, int nprev,
			  const struct port_socks *now, int n)
{
	int nnew = 0;

	for (int i = 0; i < n; i++) {
		bool known = false;

		for (int j = 0; j < nprev; j++)
			if (prev[j].port == now[i].port) {
				known = prev[j].nsocks == now[i].nsocks &&
					prev[j].inode_sum == now[i].inode_sum;
				break;
			}
		/* Sockets gone (the receiver exited) name nobody new. */
		if (!known && now[i].nsocks)
			nnew++;
	}
	return nnew;
}

/* The sockets on @ports into @now (port-0 sentinel after them): how many
 * ports were filled, or -1 when the look failed. */
static int look(struct sampling *s, const uint16_t *ports, int nports,
		struct port_socks *now)
{
	int n = nports < RXB_MAX_SOCKS ? nports : RXB_MAX_SOCKS, err;

	for (int i = 0; i < n; i++)
		now[i] = (struct port_socks){ .port = ports[i] };
	now[n] = (struct port_socks){ 0 };
	if (!s->diag) {
		n = collect_proc_udp_port_socks(s->proc, ports, nports, now);
		if (n < 0)
			rxb_log_errno(RXB_LOG_DEBUG, -n,
				      "collect: /proc/net/udp for new receivers");
		return n < 0 ? -1 : n;
	}
	err = sockdiag_udp_sockets(s->diag, add_socket, now);
	if (err >= 0)
		err = sockdiag_tcp_listeners(s->diag, add_socket, now);
	if (err < 0) {
		/* For good: a look that half works now and then would
		 * take the other half's return for new sockets. */
		rxb_log_errno(RXB_LOG_NOTICE, -err,
			      "collect: socket diagnostics failed; new receivers "
			      "on UDP ports from /proc/net/udp from now on, on "
			      "TCP ports at the sampling cadence");
		sockdiag_close(s->diag);
		s->diag = NULL;
		return -1;
	}
	return n;
}

/*
 * How many watched ports have a new socket since the last look (see
 * sampling.h); 0 when sampling is off or a look failed.
 */
static int new_sockets(struct sampling *s, const uint16_t *ports, int nports)
{
	struct port_socks now[RXB_MAX_SOCKS + 1];
	int n, nnew;

	if (s->every <= 1 || !s->sq || !nports)
		return 0;
	n = look(s, ports, nports, now);
	if (n < 0)
		return 0;
	nnew = port_socks_new(s->seen, s->nseen, now, n);
	memcpy(s->seen, now, (size_t)n * sizeof(now[0]));
	s->nseen = n;
	return nnew;
}

/* At the end of epoch @seq: sample the next epoch whatever the cadence, so a
 * receiver that started in this one is named within it. */
static void new_receivers(struct sampling *s, uint64_t seq, const uint16_t *ports,
			  int nports)
{
	int n = new_sockets(s, ports, nports);

	if (!n || s->next_seq <= seq + 1)
		return;
	s->next_seq = seq + 1;
	s->forced++;
	rxb_debug("collect: %d watched ports with a new socket: epoch %llu sampled",
		  n, (unsigned long long)seq + 1);
}

/*
 * Before the snapshot that ends epoch @seq (and starts the next): attach
 * the per-packet programs if the next epoch is to be sampled. Attaching
 * before the snapshot means no event of the next epoch is missed; what
 * they count between the attach and the snapshot belongs to this epoch,
 * which is then not a sampled one and reports no counts.
 */
static void attach_next(struct sampling *s, uint64_t seq)
{
	if (seq + 1 < s->next_seq)
		return;
	if ((s->np || s->sq) && !s->on) {
		attach(s, seq);
		s->whole_seq = seq + 1;
	} else if (s->on && !s->a_on && a_due(s, seq) && attach_a(s, seq)) {
		/* The socket programs stay; stage A waits for the next. */
		rxb_debug("collect: stage A probes not attached for epoch %llu",
			  (unsigned long long)seq + 1);
	}
}

bool sampling_epoch_end(struct sampling *s, uint64_t seq, const uint16_t *ports,
			int nports, bool *stage_a)
{
	/* Attached since before the snapshot that started it (never
	 * detached since): the epoch ending now is a sampled one. */
	bool sampled = s->on && s->whole_seq <= seq;

	*stage_a = sampled && s->a_on && s->a_whole_seq <= seq;
	s->enq_counted = sampled && s->enq_on && s->enq_whole_seq <= seq;
	if (sampled) {
		s->sampled_seq = seq;
		if (s->next_seq <= seq)
			s->next_seq = seq + s->every;
	}
	if (*stage_a) {
		s->a_seq = seq;
		if (s->a_next_seq <= seq)
			s->a_next_seq = seq + s->a_every;
	}
	new_receivers(s, seq, ports, nports);
	attach_next(s, seq);
	return sampled;
}

/*
 * Detaching after the snapshot means the epoch just ended saw every event;
 * what they count until the detach goes to the next epoch, not sampled.
 */
void sampling_plan(struct sampling *s, uint64_t seq)
{
	if (s->on && seq + 1 < s->next_seq)
		detach(s);
	else if (s->a_on && seq + 1 < s->a_next_seq)
		detach_a(s);
	else if (s->on && !s->enq_on && enq_always(s) && enq_set(s, true, seq))
		rxb_debug("collect: enqueue probe not attached for epoch %llu",
			  (unsigned long long)seq + 1);
	else if (s->on && !s->a_on && s->enq_on && !enq_always(s))
		enq_set(s, false, seq);	/* every port derivable now */
}

/*
 * Between two epochs a new socket on a watched UDP port attaches the
 * per-packet programs at once, so the receiver is named at its first read
 * and the epoch it started in does not count it as a CPU-bound task. That
 * epoch is not a sampled one (they missed its start); the next is.
 */
uint64_t sampling_poll_due_ns(const struct sampling *s, int nports)
{
	if (s->every <= 1 || !s->sq || !nports || s->on)
		return UINT64_MAX;
	return s->poll_next_ns;
}

void sampling_poll(struct sampling *s, uint64_t now_ns, uint64_t seq,
		   const uint16_t *ports, int nports)
{
	int n;

	if (sampling_poll_due_ns(s, nports) > now_ns)
		return;
	s->poll_next_ns = now_ns + SAMPLING_POLL_NS;
	n = new_sockets(s, ports, nports);
	if (!n)
		return;
	attach(s, seq);
	if (!s->on)
		return;
	s->whole_seq = seq + 2;
	if (s->a_on && s->a_whole_seq < seq + 2)
		s->a_whole_seq = seq + 2;
	if (s->enq_on && s->enq_whole_seq < seq + 2)
		s->enq_whole_seq = seq + 2;
	if (s->next_seq > seq + 2)
		s->next_seq = seq + 2;
	s->forced++;
	rxb_debug("collect: %d watched ports with a new socket: per-packet probes attached "
		  "in epoch %llu", n, (unsigned long long)seq + 1);
}
