// SPDX-License-Identifier: GPL-2.0-or-later
/* The stream-count advisor's history file. See streams_hist.h. */
#include "daemon/model/streams_hist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/util.h"

#define TMP_FILE	STREAMS_HIST_FILE ".tmp"

static const char *const keys[] = {
	"peer", "port", "n", "count", "weight", "mean", "m2", "first", "last", "from",
};

#define NKEYS		(sizeof(keys) / sizeof(keys[0]))
#define ALL_KEYS	((1u << NKEYS) - 1)

static int parse_from(const char *s, uint8_t *out)
{
	char buf[32], *save = NULL;

	if (rxb_strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		return -EINVAL;
	*out = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "passive"))
			*out |= ADVISOR_PASSIVE;
		else if (!strcmp(t, "sender"))
			*out |= ADVISOR_SENDER;
		else
			return -EINVAL;
	}
	return *out ? 0 : -EINVAL;
}

static int parse_value(int k, const char *v, struct streams_hist_entry *e)
{
	struct advisor_bucket *b = &e->b;
	uint64_t u;

	switch (k) {
	case 0:
		return advisor_addr_parse(v, e->addr);
	case 1:
		if (rxb_parse_u64(v, 1, 65535, &u))
			return -EINVAL;
		e->port = (uint16_t)u;
		return 0;
	case 2:
	case 3:
		if (rxb_parse_u64(v, 1, k == 2 ? STREAMS_N_LIMIT : UINT32_MAX, &u))
			return -EINVAL;
		*(k == 2 ? &b->n : &b->count) = (uint32_t)u;
		return 0;
	case 4:
		return rxb_parse_double(v, 1e-9, 1e12, &b->weight_s);
	case 5:
		return rxb_parse_double(v, 1e-6, 1e18, &b->mean_bps);
	case 6:
		return rxb_parse_double(v, 0, 1e300, &b->m2);
	case 7:
	case 8:
		return rxb_parse_u64(v, 0, (uint64_t)1 << 40, k == 7 ? &b->first_unix :
				     &b->last_unix);
	default:
		return parse_from(v, &b->origins);
	}
}

int streams_hist_parse_line(const char *line, struct streams_hist_entry *out)
{
	char buf[STREAMS_HIST_MAX_LINE + 1], *save = NULL, *tok;
	struct streams_hist_entry e;
	size_t len = strnlen(line, STREAMS_HIST_MAX_LINE + 1);
	unsigned seen = 0;

	if (len > STREAMS_HIST_MAX_LINE)
		return -EINVAL;
	memcpy(buf, line, len);
	buf[len] = '\0';
	memset(&e, 0, sizeof(e));
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		size_t k;

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		for (k = 0; k < NKEYS && strcmp(tok, keys[k]); k++)
			;
		if (k == NKEYS || (seen & (1u << k)) || parse_value((int)k, eq + 1, &e))
			return -EINVAL;
		seen |= 1u << k;
	}
	if (seen != ALL_KEYS || e.b.first_unix > e.b.last_unix)
		return -EINVAL;
	*out = e;
	return 0;
}

int streams_hist_format_line(const struct streams_hist_entry *e, char *buf, size_t size)
{
	const struct advisor_bucket *b = &e->b;
	char addr[INET6_ADDRSTRLEN];

	advisor_addr_text(e->addr, addr, sizeof(addr));
	return snprintf(buf, size, "peer=%s port=%u n=%u count=%u weight=%.17g mean=%.17g "
			"m2=%.17g first=%llu last=%llu from=%s%s%s\n", addr, e->port, b->n, b->count,
			b->weight_s, b->mean_bps, b->m2, (unsigned long long)b->first_unix,
			(unsigned long long)b->last_unix,
			b->origins & ADVISOR_PASSIVE ? "passive" : "",
			(b->origins & ADVISOR_PASSIVE) && (b->origins & ADVISOR_SENDER) ? "," : "",
			b->origins & ADVISOR_SENDER ? "sender" : "");
}

int streams_hist_parse(const char *text, size_t len, struct advisor *a, uint64_t now_unix,
		       struct streams_hist_stats *st)
{
	char line[STREAMS_HIST_MAX_LINE + 1];
	size_t off = 0;

	memset(st, 0, sizeof(*st));
	if (len > STREAMS_HIST_MAX_FILE)
		return -EFBIG;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		struct streams_hist_entry e;

		if (n > STREAMS_HIST_MAX_LINE || memchr(text + off, '\0', n)) {
			st->bad++;
			off += n + 1;
			continue;
		}
		memcpy(line, text + off, n);
		line[n] = '\0';
		off += n + 1;
		if (!n || line[0] == '#')
			continue;
		st->lines++;
		if (streams_hist_parse_line(line, &e)) {
			st->bad++;
			continue;
		}
		if ((a->p.max_age_s && e.b.last_unix + a->p.max_age_s < now_unix) ||
		    advisor_restore(a, e.addr, e.port, &e.b))
			st->refused++;
	}
	return 0;
}

int streams_hist_load(int dirfd, struct advisor *a, uint64_t now_unix,
		      struct streams_hist_stats *st)
{
	struct stat sb;
	int fd = rxb_open_regular(dirfd, STREAMS_HIST_FILE, STREAMS_HIST_MAX_FILE, &sb);
	char *text = NULL;
	size_t len = 0;
	int err;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return fd;
	/* To the end, not to st_size: a writer may have grown it. */
	err = rxb_read_fd_grow(fd, STREAMS_HIST_MAX_FILE, &text, &len);
	close(fd);
	if (!err)
		err = streams_hist_parse(text, len, a, now_unix, st);
	free(text);
	return err;
}

/* Every bucket of @a as the file's text (malloc'd) into @out. */
static int render(const struct advisor *a, char **out, size_t *len)
{
	static const char head[] =
		"# rxbneckd: stream-count samples per peer and stream count "
		"(docs/streams.md).\n# Written by the daemon; edits are lost.\n";
	size_t cap = sizeof(head), n = sizeof(head) - 1;
	char *text;

	for (uint32_t i = 0; i < a->p.max_peers; i++)
		if (a->peers[i].used)
			cap += (size_t)a->peers[i].nb * (STREAMS_HIST_MAX_LINE + 1);
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	memcpy(text, head, n);
	for (uint32_t i = 0; i < a->p.max_peers; i++) {
		const struct advisor_peer *p = &a->peers[i];

		for (int k = 0; p->used && k < p->nb; k++) {
			struct streams_hist_entry e = { .port = p->port, .b = p->b[k] };
			int w;

			memcpy(e.addr, p->addr, 16);
			w = streams_hist_format_line(&e, text + n, cap - n);
			if (w > 0 && (size_t)w <= STREAMS_HIST_MAX_LINE)
				n += (size_t)w;
		}
	}
	*out = text;
	*len = n;
	return 0;
}

int streams_hist_save(int dirfd, const struct advisor *a)
{
	char *text;
	size_t len;
	int err = render(a, &text, &len);

	if (err)
		return err;
	err = rxb_replace_file(dirfd, STREAMS_HIST_FILE, TMP_FILE, text, len, 0640);
	free(text);
	return err;
}
