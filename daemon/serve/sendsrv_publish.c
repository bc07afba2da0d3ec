// SPDX-License-Identifier: GPL-2.0-or-later
/* Each flow port's subscribers, and the RATE, PAUSE and BUFFER pushes to them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/serve/sendsrv_int.h"
#include "common/util.h"

/* ------------------------------------------------------------ ports -- */

static struct port_state **port_slot(struct sendsrv *s, uint16_t port)
{
	struct port_state **pp = &s->ports[port % PORT_BUCKETS];

	while (*pp && (*pp)->port != port)
		pp = &(*pp)->next;
	return pp;
}

struct port_state *sendsrv_publish_port(struct sendsrv *s, uint16_t port, bool create)
{
	struct port_state **pp = port_slot(s, port);

	if (*pp || !create)
		return *pp;
	*pp = sendsrv_mem_alloc(s, sizeof(**pp));
	if (!*pp)
		return NULL;
	(*pp)->port = port;
	link_init(&(*pp)->subs);
	return *pp;
}

/* Free @ps when nobody subscribes and no loop holds it. */
void sendsrv_publish_port_put(struct sendsrv *s, struct port_state *ps)
{
	struct port_state **pp;

	if (ps->n_subs || ps->pins)
		return;
	pp = port_slot(s, ps->port);
	*pp = ps->next;
	sendsrv_mem_free(s, ps, sizeof(*ps));
}

void sendsrv_publish_leave(struct sendsrv *s, struct conn *c)
{
	struct port_state *ps = c->ps;

	if (!ps)
		return;
	link_del(&c->pnode);
	ps->n_subs--;
	c->ps = NULL;
	sendsrv_publish_port_put(s, ps);
}

/* ---------------------------------------------------------- pushes -- */

int sendsrv_publish_push_rate(struct sendsrv *s, struct conn *c, const struct rxbneck_rate *r)
{
	struct rxbp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RXBNECK_T_RATE;
	m.u.rate = *r;
	if (sendsrv_conn_send(s, c, &m) < 0)
		return -1;
	if (!c->peer.has_first_rate)
		c->peer.first_rate = *r;
	c->peer.has_first_rate = true;
	c->peer.has_rate = true;
	c->peer.last_rate = *r;
	if (c->peer.nrates_sent == SENDSRV_RATES_KEPT) {
		memmove(c->peer.rates_sent, c->peer.rates_sent + 1,
			(SENDSRV_RATES_KEPT - 1) * sizeof(c->peer.rates_sent[0]));
		memmove(c->peer.rates_sent_ns, c->peer.rates_sent_ns + 1,
			(SENDSRV_RATES_KEPT - 1) * sizeof(c->peer.rates_sent_ns[0]));
		c->peer.nrates_sent--;
	}
	c->peer.rates_sent[c->peer.nrates_sent] = *r;
	c->peer.rates_sent_ns[c->peer.nrates_sent++] = sendsrv_now_ns(s);
	s->st.rate_pushes++;
	return 0;
}

/*
 * PROTOCOL.md §6.3: a sender that takes PAUSE and speaks minor >= 1 sends
 * only between the windows, so it gets the rate for that (when the model
 * has one) while a schedule is in force for it; every other sender gets
 * the plain rate.
 */
static bool obeys_pauses(const struct conn *c)
{
	return (c->peer.granted & RXBNECK_SUB_PAUSE) &&
	       c->peer.hello.minor >= RXBNECK_MINOR_BETWEEN_PAUSES;
}

static bool rate_ok(const struct rxbneck_rate *r, uint16_t port, bool between)
{
	struct rxbp_msg m = { .type = RXBNECK_T_RATE };

	m.u.rate = *r;
	return r->port == port && !(r->flags & RXBNECK_RATE_BETWEEN_PAUSES) == !between &&
	       rxbp_validate(&m) == 0;
}

/* The plain rate and the one between pauses for @c: 0, 1 or 2 of them. */
static int rates_of(struct sendsrv *s, const struct conn *c, struct rxbneck_rate *r,
		    struct rxbneck_rate *between)
{
	uint16_t port = c->peer.hello.flow_port;
	int n;

	if (!s->ops.rate_for) {
		if (!c->ps || !c->ps->has_rate)
			return 0;
		*r = c->ps->rate;
		*between = c->ps->rate_between;
		return c->ps->has_rate_between ? 2 : 1;
	}
	n = s->ops.rate_for(s->ops.ctx, &c->peer, r, between);
	if (n <= 0 || !rate_ok(r, port, false))
		return 0;
	return n >= 2 && rate_ok(between, port, true) ? 2 : 1;
}

bool sendsrv_publish_rate_for(struct sendsrv *s, const struct conn *c,
			      struct rxbneck_rate *out)
{
	struct rxbneck_rate r, between;
	int n = rates_of(s, c, &r, &between);

	if (n == 0)
		return false;
	*out = n == 2 && obeys_pauses(c) && c->peer.pause_until_ns > sendsrv_now_ns(s) ?
	       between : r;
	return true;
}

/* PROTOCOL.md §6.1: first value, flags changed, moved by >= frac, refresh. */
bool sendsrv_publish_rate_due(const struct sendsrv *s, const struct conn *c,
		     const struct rxbneck_rate *r)
{
	const struct rxbneck_rate *last = &c->peer.last_rate;
	uint64_t diff;

	if (!c->peer.has_rate || r->flags != last->flags || r->epoch < last->epoch)
		return true;
	if (s->lim.rate_refresh_epochs &&
	    r->epoch - last->epoch >= s->lim.rate_refresh_epochs)
		return true;
	diff = r->rate_bps > last->rate_bps ? r->rate_bps - last->rate_bps :
					      last->rate_bps - r->rate_bps;
	/* Exact integer comparison, in parts per million. */
	return (unsigned __int128)diff * 1000000u >=
	       (unsigned __int128)s->frac_ppm * last->rate_bps && diff > 0;
}

/*
 * Offer to every subscriber of @port: @offer decides for one connection
 * and sends (0: sent). The port is pinned meanwhile, so it stays while a
 * failed send drops its last subscriber. Returns how many were sent to.
 */
static int offer_port(struct sendsrv *s, uint16_t port,
		      int (*offer)(struct sendsrv *s, struct conn *c, const void *arg),
		      const void *arg)
{
	struct port_state *ps = sendsrv_publish_port(s, port, false);
	struct link *l, *next;
	int sent = 0;

	if (!ps)
		return 0;
	ps->pins++;
	for (l = ps->subs.next; l != &ps->subs; l = next) {
		next = l->next;
		if (offer(s, link_entry(l, struct conn, pnode), arg) == 0)
			sent++;
	}
	ps->pins--;
	sendsrv_publish_port_put(s, ps);
	return sent;
}

int sendsrv_publish_rate_if_due(struct sendsrv *s, struct conn *c, bool force)
{
	struct rxbneck_rate mine;

	if (!(c->peer.granted & RXBNECK_SUB_RATE) || !sendsrv_publish_rate_for(s, c, &mine) ||
	    !(force || sendsrv_publish_rate_due(s, c, &mine)))
		return -1;
	return sendsrv_publish_push_rate(s, c, &mine);
}

/* PROTOCOL.md §6.1: the rate meant for @c, when it is due. */
static int offer_rate(struct sendsrv *s, struct conn *c, const void *arg)
{
	(void)arg;
	return sendsrv_publish_rate_if_due(s, c, false);
}

int sendsrv_publish_rate(struct sendsrv *s, const struct rxbneck_rate *r,
			 const struct rxbneck_rate *between)
{
	struct rxbp_msg m = { .type = RXBNECK_T_RATE };
	struct port_state *ps;

	m.u.rate = *r;
	if (rxbp_validate(&m) != 0)
		return -EINVAL;
	if (between) {
		m.u.rate = *between;
		if (between->port != r->port ||
		    !(between->flags & RXBNECK_RATE_BETWEEN_PAUSES) ||
		    rxbp_validate(&m) != 0)
			return -EINVAL;
	}
	if (r->flags & RXBNECK_RATE_BETWEEN_PAUSES)
		return -EINVAL;
	ps = sendsrv_publish_port(s, r->port, false);
	if (!ps)
		return 0;
	ps->rate = *r;
	ps->has_rate = true;
	ps->has_rate_between = between != NULL;
	if (between)
		ps->rate_between = *between;
	return offer_port(s, r->port, offer_rate, NULL);
}

int sendsrv_offer_rates(struct sendsrv *s, uint16_t port)
{
	return offer_port(s, port, offer_rate, NULL);
}

/*
 * When schedule @p, sent at @now_ns, stops being in force for the sender
 * that got it (0: CANCEL, none; UINT64_MAX: periodic until replaced): the
 * end of its last window, plus one epoch - the daemon refreshes a schedule
 * once per epoch, and a chain of one-shot windows is one schedule while
 * each comes before the last one's window has been over for an epoch.
 */
static uint64_t pause_until_ns(const struct sendsrv *s, const struct rxbneck_pause *p,
			       uint64_t now_ns)
{
	uint64_t us;

	if (p->flags & RXBNECK_PAUSE_CANCEL)
		return 0;
	if (p->period_us && !p->repeat_count)
		return UINT64_MAX;
	/* Each time <= 60 s (§5.8), repeat_count < 2^32: no overflow in us. */
	us = p->start_in_us + p->duration_us + (uint64_t)s->lim.epoch_ms * 1000 +
	     (p->repeat_count > 1 ? (uint64_t)(p->repeat_count - 1) * p->period_us : 0);
	return us < (UINT64_MAX - now_ns) / 1000 ? now_ns + us * 1000 : UINT64_MAX;
}

static int offer_pause(struct sendsrv *s, struct conn *c, const void *arg)
{
	const struct rxbneck_pause *p = arg;
	bool one_shot = p->period_us == 0 && !(p->flags & RXBNECK_PAUSE_CANCEL);
	struct rxbp_msg m = { .type = RXBNECK_T_PAUSE };

	if (!(c->peer.granted & RXBNECK_SUB_PAUSE))
		return -1;
	/* Over by the time its datagrams could arrive: useless to it. */
	if (one_shot && p->start_in_us + p->duration_us <= c->peer.hello.rtt_us)
		return -1;
	m.u.pause = *p;
	if (sendsrv_conn_send(s, c, &m) < 0)
		return -1;
	c->peer.pauses_sent++;
	s->st.pause_pushes++;
	c->peer.pause = *p;
	c->peer.pause_sent_ns = sendsrv_now_ns(s);
	c->peer.pause_until_ns = pause_until_ns(s, p, c->peer.pause_sent_ns);
	/* The rate that goes with a schedule, or with none, right after it. */
	sendsrv_publish_rate_if_due(s, c, false);
	return 0;
}

int sendsrv_publish_pause(struct sendsrv *s, const struct rxbneck_pause *p)
{
	struct rxbp_msg m = { .type = RXBNECK_T_PAUSE };

	m.u.pause = *p;
	if (rxbp_validate(&m) != 0)
		return -EINVAL;
	return offer_port(s, p->port, offer_pause, p);
}

int sendsrv_publish_push_buffer(struct sendsrv *s, struct conn *c,
				const struct rxbneck_buffer *b)
{
	struct rxbp_msg m = { .type = RXBNECK_T_BUFFER };

	m.u.buffer = *b;
	if (sendsrv_conn_send(s, c, &m) < 0)
		return -1;
	c->peer.has_buffer = true;
	c->peer.last_buffer = *b;
	s->st.buffer_pushes++;
	return 0;
}

/* PROTOCOL.md §6.4: first advice, flags changed, size moved by >= frac. */
static bool buffer_due(const struct sendsrv *s, const struct conn *c,
		       const struct rxbneck_buffer *b)
{
	const struct rxbneck_buffer *last = &c->peer.last_buffer;
	uint64_t diff;

	if (!c->peer.has_buffer || b->flags != last->flags)
		return true;
	diff = b->rcvbuf_bytes > last->rcvbuf_bytes ? b->rcvbuf_bytes - last->rcvbuf_bytes :
						      last->rcvbuf_bytes - b->rcvbuf_bytes;
	return diff > 0 && (unsigned __int128)diff * 1000000u >=
			   (unsigned __int128)s->frac_ppm * last->rcvbuf_bytes;
}

static int offer_buffer(struct sendsrv *s, struct conn *c, const void *arg)
{
	const struct rxbneck_buffer *b = arg;

	if (!(c->peer.granted & RXBNECK_SUB_BUFFER) || !buffer_due(s, c, b))
		return -1;
	return sendsrv_publish_push_buffer(s, c, b);
}

int sendsrv_publish_buffer(struct sendsrv *s, const struct rxbneck_buffer *b)
{
	struct rxbp_msg m = { .type = RXBNECK_T_BUFFER };
	struct port_state *ps;

	m.u.buffer = *b;
	if (rxbp_validate(&m) != 0)
		return -EINVAL;
	ps = sendsrv_publish_port(s, b->port, false);
	if (!ps)
		return 0;
	ps->buffer = *b;
	ps->has_buffer = true;
	return offer_port(s, b->port, offer_buffer, b);
}

void sendsrv_publish_finish(struct sendsrv *s)
{
	for (unsigned int b = 0; b < PORT_BUCKETS; b++) {
		while (s->ports[b]) {
			struct port_state *ps = s->ports[b];

			s->ports[b] = ps->next;
			free(ps);
		}
	}
}
