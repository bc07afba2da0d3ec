// SPDX-License-Identifier: GPL-2.0-or-later
/* Loader and reader of netrx.bpf.c. See netrx.h. */
#include "bpf/netrx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/util.h"
#include "netrx.skel.h"

struct netrx_probe {
	struct rxb_netrx *skel;
	struct probe_obj po;
	int ncpus;
	/* Readers of the per-CPU hashes: a value is ncpus x the record. */
	struct probe_batch irqs_rd, napi_rd;
};

/* One record's stride in a per-CPU value as user space gets it. */
#define PERCPU_STRIDE(type)	((sizeof(type) + 7) & ~(size_t)7)
/* CPU @c's record in the per-CPU value @v (a pointer to its first record). */
#define PERCPU_AT(v, c) \
	((const void *)((const char *)(v) + (size_t)(c) * PERCPU_STRIDE(*(v))))

/* A few dozen devices and IRQs on a host: one batch reads them all. */
#define NETRX_READ_CHUNK	64

int netrx_snap_init(struct netrx_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->irqs = calloc(NETRX_MAX_IRQS, sizeof(*s->irqs));
	s->napi = calloc(NETRX_MAX_NAPI, sizeof(*s->napi));
	if (!s->irqs || !s->napi) {
		netrx_snap_free(s);
		return -ENOMEM;
	}
	return 0;
}

void netrx_snap_free(struct netrx_snap *s)
{
	free(s->cpus);
	free(s->irqs);
	free(s->napi);
	memset(s, 0, sizeof(*s));
}

int netrx_probe_open(struct netrx_probe **out, enum probe_mode mode)
{
	struct netrx_probe *np;
	int err;

	*out = NULL;
	np = calloc(1, sizeof(*np));
	if (!np)
		return -ENOMEM;
	np->ncpus = libbpf_num_possible_cpus();
	if (np->ncpus <= 0) {
		err = np->ncpus < 0 ? np->ncpus : -EINVAL;
		goto fail;
	}
	err = probe_batch_init(&np->irqs_rd, sizeof(int32_t),
			       (size_t)np->ncpus * PERCPU_STRIDE(struct netrx_irq),
			       NETRX_READ_CHUNK, false, 0);
	if (!err)
		err = probe_batch_init(&np->napi_rd, sizeof(uint64_t),
				       (size_t)np->ncpus * PERCPU_STRIDE(struct netrx_napi),
				       NETRX_READ_CHUNK, false, 0);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "netrx: map read buffers");
		goto fail;
	}
	np->skel = rxb_netrx__open();
	if (!np->skel) {
		err = -errno;
		rxb_log_errno(RXB_LOG_WARNING, -err, "netrx: opening BPF object");
		goto fail;
	}
	{
		static const char *const tps[] = NETRX_SAMPLED_TPS;

		err = probe_obj_start(&np->po, "netrx", np->skel->skeleton, mode, tps);
	}
	if (err)
		goto fail;
	*out = np;
	return 0;
fail:
	netrx_probe_close(np);
	return err;
}

/* Also what a failed netrx_probe_open() undoes. */
void netrx_probe_close(struct netrx_probe *np)
{
	if (!np)
		return;
	probe_obj_detach(&np->po);
	rxb_netrx__destroy(np->skel);
	probe_batch_finish(&np->napi_rd);
	probe_batch_finish(&np->irqs_rd);
	free(np);
}

struct probe_obj *netrx_probe_obj(struct netrx_probe *np)
{
	return &np->po;
}

int netrx_probe_set_sampled(struct netrx_probe *np, bool on)
{
	/* See attach_gen in netrx.bpf.c. */
	return probe_obj_set_sampled(&np->po, on, &np->skel->bss->attach_gen, NULL);
}

bool netrx_probe_sampled_on(const struct netrx_probe *np)
{
	return probe_obj_sampled_attached(&np->po);
}

static int read_cpus(struct netrx_probe *np, struct netrx_snap *s)
{
	uint32_t zero = 0;

	if (s->ncpus != np->ncpus) {
		struct netrx_cpu *p = realloc(s->cpus, (size_t)np->ncpus * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->cpus = p;
		s->ncpus = np->ncpus;
	}
	/* struct netrx_cpu is a multiple of 8 bytes: no per-CPU padding. */
	if (bpf_map_lookup_elem(bpf_map__fd(np->skel->maps.cpu_stats), &zero,
				s->cpus))
		return -errno;
	return 0;
}

static void sum_irq(const struct netrx_irq *v, int ncpus, struct netrx_irq *o)
{
	memset(o, 0, sizeof(*o));
	for (int c = 0; c < ncpus; c++) {
		const struct netrx_irq *x = PERCPU_AT(v, c);

		o->count += x->count;
		o->ns += x->ns;
		if (!o->name[0] && x->name[0])
			memcpy(o->name, x->name, sizeof(o->name));
	}
	o->name[sizeof(o->name) - 1] = '\0';
}

static void sum_napi(const struct netrx_napi *v, int ncpus, struct netrx_napi *o)
{
	memset(o, 0, sizeof(*o));
	for (int c = 0; c < ncpus; c++) {
		const struct netrx_napi *x = PERCPU_AT(v, c);

		netrx_napi_add(o, x);
		if (!o->dev[0] && x->dev[0]) {
			memcpy(o->dev, x->dev, sizeof(o->dev));
			o->ifindex = x->ifindex;
		}
	}
	o->dev[sizeof(o->dev) - 1] = '\0';
}

struct percpu_read {
	const struct netrx_probe *np;
	struct netrx_snap *s;
};

/* probe_batch_fn: one IRQ's per-CPU counts, summed. */
static int irq_read(void *arg, const void *key, const void *val)
{
	struct percpu_read *r = arg;
	struct netrx_snap *s = r->s;

	if (s->nirqs == NETRX_MAX_IRQS)
		return 0;
	memcpy(&s->irqs[s->nirqs].irq, key, sizeof(int32_t));
	sum_irq(val, r->np->ncpus, &s->irqs[s->nirqs].v);
	s->nirqs++;
	return 0;
}

/* probe_batch_fn: one device's per-CPU NAPI counts, summed. */
static int napi_read(void *arg, const void *key, const void *val)
{
	struct percpu_read *r = arg;
	struct netrx_snap *s = r->s;

	if (s->nnapi == NETRX_MAX_NAPI)
		return 0;
	memcpy(&s->napi[s->nnapi].key, key, sizeof(uint64_t));
	sum_napi(val, r->np->ncpus, &s->napi[s->nnapi].v);
	s->nnapi++;
	return 0;
}

static int read_irqs(struct netrx_probe *np, struct netrx_snap *s)
{
	struct percpu_read r = { .np = np, .s = s };

	s->nirqs = 0;
	return probe_batch_read(&np->irqs_rd, bpf_map__fd(np->skel->maps.irqs), irq_read, &r);
}

static int read_napi(struct netrx_probe *np, struct netrx_snap *s)
{
	struct percpu_read r = { .np = np, .s = s };

	s->nnapi = 0;
	return probe_batch_read(&np->napi_rd, bpf_map__fd(np->skel->maps.napis), napi_read, &r);
}

/*
 * Add each CPU's cached napi_poll counts (struct netrx_cpu's np) to the
 * entry of its device. The entries are read before the CPUs: a flush
 * between the two reads is then missed once (and seen in the next
 * snapshot) rather than counted twice; so are the counts of a device whose
 * entry was made after the entries were read.
 */
static void add_pending_napi(struct netrx_snap *s)
{
	for (int c = 0; c < s->ncpus; c++) {
		const struct netrx_cpu *x = &s->cpus[c];

		if (!x->napi_valid)
			continue;
		for (int i = 0; i < s->nnapi; i++) {
			if (s->napi[i].key != x->napi_key)
				continue;
			netrx_napi_add(&s->napi[i].v, &x->np);
			break;
		}
	}
}

int netrx_probe_snapshot(struct netrx_probe *np, struct netrx_snap *s)
{
	int err;

	s->at_ns = rxb_mono_ns();
	err = read_napi(np, s);
	if (!err)
		err = read_cpus(np, s);
	if (!err)
		add_pending_napi(s);
	if (!err)
		err = read_irqs(np, s);
	if (err)
		rxb_log_errno(RXB_LOG_WARNING, -err, "netrx: reading counters");
	return err;
}
