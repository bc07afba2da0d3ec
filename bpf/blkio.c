// SPDX-License-Identifier: GPL-2.0-or-later
/* Loader and reader of blkio.bpf.c. See blkio.h. */
#include "bpf/blkio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/util.h"
#include "blkio.skel.h"

struct blkio_probe {
	struct rxb_blkio *skel;
	struct probe_obj po;
	int ncpus;
	struct blkio_disk *percpu_buf;	/* [ncpus]; the size is a multiple of 8 */
	uint64_t *sweep_keys;		/* [2 x BLKIO_MAX_INFLIGHT]: sweep_inflight() */
};

int blkio_probe_open(struct blkio_probe **out, enum probe_mode mode)
{
	struct blkio_probe *bp;
	int err;

	_Static_assert(sizeof(struct blkio_disk) % 8 == 0, "per-CPU stride");
	*out = NULL;
	bp = calloc(1, sizeof(*bp));
	if (!bp)
		return -ENOMEM;
	bp->ncpus = libbpf_num_possible_cpus();
	if (bp->ncpus <= 0) {
		err = bp->ncpus < 0 ? bp->ncpus : -EINVAL;
		goto fail;
	}
	bp->percpu_buf = calloc((size_t)bp->ncpus, sizeof(*bp->percpu_buf));
	bp->sweep_keys = calloc(2 * BLKIO_MAX_INFLIGHT, sizeof(*bp->sweep_keys));
	bp->skel = rxb_blkio__open();
	if (!bp->percpu_buf || !bp->sweep_keys || !bp->skel) {
		err = bp->skel ? -ENOMEM : -errno;
		rxb_log_errno(RXB_LOG_WARNING, -err, "blkio: opening BPF object");
		goto fail;
	}
	err = probe_obj_start(&bp->po, "blkio", bp->skel->skeleton, mode, NULL);
	if (err)
		goto fail;
	*out = bp;
	return 0;
fail:
	blkio_probe_close(bp);
	return err;
}

/* Also what a failed blkio_probe_open() undoes. */
void blkio_probe_close(struct blkio_probe *bp)
{
	if (!bp)
		return;
	probe_obj_detach(&bp->po);
	rxb_blkio__destroy(bp->skel);
	free(bp->percpu_buf);
	free(bp->sweep_keys);
	free(bp);
}

struct probe_obj *blkio_probe_obj(struct blkio_probe *bp)
{
	return &bp->po;
}

int blkio_snap_init(struct blkio_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->issuers = calloc(BLKIO_MAX_ISSUERS, sizeof(*s->issuers));
	return s->issuers ? 0 : -ENOMEM;
}

void blkio_snap_free(struct blkio_snap *s)
{
	free(s->issuers);
	memset(s, 0, sizeof(*s));
}

static int issuer_cmp(const void *a, const void *b)
{
	const struct blkio_snap_issuer *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void read_issuers(struct blkio_probe *bp, struct blkio_snap *s)
{
	int fd = bpf_map__fd(bp->skel->maps.issuers);
	uint32_t key, next;
	void *prev = NULL;

	s->nissuers = 0;
	while (s->issuers && s->nissuers < BLKIO_MAX_ISSUERS &&
	       bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct blkio_snap_issuer *o = &s->issuers[s->nissuers];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &o->v))
			continue;
		o->tid = key;
		s->nissuers++;
	}
	if (s->nissuers)
		qsort(s->issuers, (size_t)s->nissuers, sizeof(s->issuers[0]), issuer_cmp);
}

int blkio_probe_snapshot(struct blkio_probe *bp, struct blkio_snap *s)
{
	int fd = bpf_map__fd(bp->skel->maps.disks);
	uint32_t key, next;
	void *prev = NULL;

	s->at_ns = rxb_mono_ns();
	s->ndisks = 0;
	while (s->ndisks < BLKIO_MAX_DISKS &&
	       bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct blkio_disk *o = &s->disks[s->ndisks].v;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, bp->percpu_buf))
			continue;
		memset(o, 0, sizeof(*o));
		for (int c = 0; c < bp->ncpus; c++) {
			const struct blkio_disk *x = &bp->percpu_buf[c];

			o->completions += x->completions;
			o->service_ns += x->service_ns;
			if (!o->name[0] && x->name[0]) {
				memcpy(o->name, x->name, sizeof(o->name));
				o->major = x->major;
				o->minor = x->minor;
			}
		}
		o->name[sizeof(o->name) - 1] = '\0';
		s->disks[s->ndisks].dev = key;
		s->ndisks++;
	}
	read_issuers(bp, s);
	s->inflight_full = bp->skel->bss->inflight_full;
	return 0;
}

/*
 * The inflight map's entries whose completion was not seen for
 * BLKIO_STALE_NS and, once the map is BLKIO_SWEEP_DONE_AT full, those
 * completed (the next issue of their request inserts them again; one
 * issued again between the read and the delete goes untimed): their keys
 * are gathered first and deleted after, since a delete loses the
 * iterator's place.
 */
static void sweep_inflight(struct blkio_probe *bp, uint64_t now)
{
	int fd = bpf_map__fd(bp->skel->maps.inflight);
	uint64_t *stale = bp->sweep_keys, *done = bp->sweep_keys + BLKIO_MAX_INFLIGHT;
	size_t nstale = 0, ndone = 0, n = 0;
	uint64_t key, next;
	void *prev = NULL;

	while (n < BLKIO_MAX_INFLIGHT && bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct blkio_start v;

		key = next;
		prev = &key;
		n++;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (!v.issue_ns)
			done[ndone++] = key;
		else if (now > v.issue_ns + BLKIO_STALE_NS)
			stale[nstale++] = key;
	}
	for (size_t i = 0; i < nstale; i++)
		bpf_map_delete_elem(fd, &stale[i]);
	if (n < BLKIO_SWEEP_DONE_AT)
		return;
	for (size_t i = 0; i < ndone; i++)
		bpf_map_delete_elem(fd, &done[i]);
	rxb_debug("blkio: %zu of %zu requests' entries dropped (the map is %u long)",
		  ndone + nstale, n, BLKIO_MAX_INFLIGHT);
}

void blkio_probe_sweep(struct blkio_probe *bp, const struct blkio_snap *prev,
		       const struct blkio_snap *cur, bool (*gone)(uint32_t tid))
{
	int fd = bpf_map__fd(bp->skel->maps.issuers);
	int j = 0;

	sweep_inflight(bp, cur->at_ns);
	/* Both sorted by tid: walk them together. */
	for (int i = 0; i < cur->nissuers; i++) {
		const struct blkio_snap_issuer *c = &cur->issuers[i];

		while (j < prev->nissuers && prev->issuers[j].tid < c->tid)
			j++;
		if (j == prev->nissuers || prev->issuers[j].tid != c->tid ||
		    memcmp(&prev->issuers[j].v, &c->v, sizeof(c->v)))
			continue;
		if (gone(c->tid))
			bpf_map_delete_elem(fd, &c->tid);
	}
}
