// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * STREAMS (PROTOCOL.md §5.10, §6.5): granted to senders of minor >= 2 when
 * the daemon has an advisor (ops->streams_for), and pushed to each by the
 * rule of §6.5 - the advice is per sender (its address and flow port),
 * so it is asked for per connection rather than published per port.
 */
#include <errno.h>
#include <string.h>

#include "daemon/serve/sendsrv_int.h"

uint16_t sendsrv_streams_served(const struct sendsrv *s, const struct conn *c)
{
	if (s->ops.streams_for && c->peer.hello.minor >= RXBNECK_MINOR_STREAMS)
		return SERVED_SUBS | RXBNECK_SUB_STREAMS;
	return SERVED_SUBS;
}

/* §6.5: first advice, streams or flags changed, predicted moved, refresh due. */
static bool due(const struct sendsrv *s, const struct conn *c, const struct rxbneck_streams *a)
{
	const struct rxbneck_streams *last = &c->peer.last_streams;
	uint64_t diff;

	if (!c->peer.has_streams || a->streams != last->streams || a->flags != last->flags ||
	    a->epoch < last->epoch)
		return true;
	if (s->lim.rate_refresh_epochs && a->epoch - last->epoch >= s->lim.rate_refresh_epochs)
		return true;
	diff = a->predicted_bps > last->predicted_bps ? a->predicted_bps - last->predicted_bps :
						       last->predicted_bps - a->predicted_bps;
	return diff > 0 && (unsigned __int128)diff * 1000000u >=
			   (unsigned __int128)s->frac_ppm * last->predicted_bps;
}

int sendsrv_streams_offer(struct sendsrv *s, struct conn *c)
{
	struct rxbp_msg m = { .type = RXBNECK_T_STREAMS };

	if (c->state != C_ACTIVE || !(c->peer.granted & RXBNECK_SUB_STREAMS) ||
	    !s->ops.streams_for || s->ops.streams_for(s->ops.ctx, &c->peer, &m.u.streams))
		return -1;
	m.u.streams.port = c->peer.hello.flow_port;
	if (rxbp_validate(&m) || !due(s, c, &m.u.streams))
		return -1;
	if (sendsrv_conn_send(s, c, &m) < 0)
		return -1;
	c->peer.has_streams = true;
	c->peer.last_streams = m.u.streams;
	s->st.streams_pushes++;
	return 0;
}

int sendsrv_publish_streams(struct sendsrv *s)
{
	int sent = 0;

	if (!s->ops.streams_for)
		return 0;
	for (unsigned int b = 0; b < PORT_BUCKETS; b++) {
		struct port_state *ps, *next;

		for (ps = s->ports[b]; ps; ps = next) {
			struct link *l, *nl;

			/* Pinned: a failed send may drop the port's last subscriber. */
			ps->pins++;
			for (l = ps->subs.next; l != &ps->subs; l = nl) {
				nl = l->next;
				if (sendsrv_streams_offer(s, link_entry(l, struct conn, pnode)) == 0)
					sent++;
			}
			next = ps->next;
			ps->pins--;
			sendsrv_publish_port_put(s, ps);
		}
	}
	return sent;
}
