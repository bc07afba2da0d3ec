// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Live connections counted per source (struct sendsrv_source: an IPv4
 * address or an IPv6 /64), for max_conns_per_source: one host keeping
 * connections open (1024 kept alive with PING, say) fills its own share,
 * not the server. A hash of the sources seen, with the instance's random
 * id as its key so that nobody can aim many sources at one chain; an
 * entry lives while its source has a live connection, so there are at
 * most max_conns of them.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/serve/sendsrv_int.h"

/* FNV-1a over the instance id and the source. */
static unsigned int bucket(const struct sendsrv *s, const struct sendsrv_source *src)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < 8; i++) {
		h ^= (s->instance_id >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	for (size_t i = 0; i < sizeof(src->b); i++) {
		h ^= src->b[i];
		h *= 0x100000001b3ULL;
	}
	return (unsigned int)(h ^ (h >> 32)) % SOURCE_BUCKETS;
}

struct source_count *sendsrv_source_take(struct sendsrv *s, const struct sockaddr_storage *ss,
					 bool *full)
{
	struct sendsrv_source src;
	struct source_count **pp, *sc;

	*full = false;
	sendsrv_source_of(ss, &src);
	pp = &s->sources[bucket(s, &src)];
	for (sc = *pp; sc; sc = sc->next)
		if (memcmp(&sc->src, &src, sizeof(src)) == 0)
			break;
	if (sc && s->lim.max_conns_per_source && sc->n >= s->lim.max_conns_per_source) {
		*full = true;
		return NULL;
	}
	if (!sc) {
		sc = sendsrv_mem_alloc(s, sizeof(*sc));
		if (!sc)
			return NULL;
		sc->src = src;
		sc->next = *pp;
		*pp = sc;
	}
	sc->n++;
	return sc;
}

void sendsrv_source_put(struct sendsrv *s, struct source_count *sc)
{
	struct source_count **pp;

	if (!sc || --sc->n)
		return;
	for (pp = &s->sources[bucket(s, &sc->src)]; *pp; pp = &(*pp)->next)
		if (*pp == sc) {
			*pp = sc->next;
			sendsrv_mem_free(s, sc, sizeof(*sc));
			return;
		}
}

void sendsrv_source_finish(struct sendsrv *s)
{
	for (unsigned int b = 0; b < SOURCE_BUCKETS; b++)
		while (s->sources[b]) {
			struct source_count *sc = s->sources[b];

			s->sources[b] = sc->next;
			free(sc);
		}
}
