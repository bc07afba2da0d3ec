// SPDX-License-Identifier: GPL-2.0-or-later
/* Loader and reader of sockq.bpf.c. See sockq.h. */
#include "bpf/sockq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/sched.h"
#include "common/log.h"
#include "common/util.h"
#include "sockq.skel.h"

#define REASON_PREFIX "SKB_DROP_REASON_"

struct sockq_probe {
	struct rxb_sockq *skel;
	struct probe_obj po;
	int ncpus;
	void *percpu_buf;
	struct btf *vmlinux;		/* for drop reason names; may be NULL */
	bool have_rx_sk;
};

int sockq_snap_init(struct sockq_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->deq = calloc(SOCKQ_MAX_RX_DEQ, sizeof(*s->deq));
	s->reasons = calloc(SOCKQ_MAX_REASONS, sizeof(*s->reasons));
	if (!s->deq || !s->reasons) {
		sockq_snap_free(s);
		return -ENOMEM;
	}
	return 0;
}

void sockq_snap_free(struct sockq_snap *s)
{
	free(s->deq);
	free(s->reasons);
	memset(s, 0, sizeof(*s));
}

/* Does this kernel's kfree_skb tracepoint carry the receiving socket? */
static bool kfree_skb_has_rx_sk(const struct btf *btf)
{
	const struct btf_type *t;
	const struct btf_member *m;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "trace_event_raw_kfree_skb",
				    BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, (__u32)id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), "rx_sk"))
			return true;
	return false;
}

int sockq_probe_open(struct sockq_probe **out, enum probe_mode mode,
		     int rx_tids_fd)
{
	struct sockq_probe *sq;
	size_t vsz = (sizeof(struct sockq_stats) + 7) & ~(size_t)7;
	int err;

	*out = NULL;
	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return -ENOMEM;
	sq->ncpus = libbpf_num_possible_cpus();
	if (sq->ncpus <= 0) {
		err = sq->ncpus < 0 ? sq->ncpus : -EINVAL;
		free(sq);
		return err;
	}
	if (vsz < 8)
		vsz = 8;
	sq->percpu_buf = calloc((size_t)sq->ncpus, vsz);
	sq->skel = rxb_sockq__open();
	if (!sq->percpu_buf || !sq->skel) {
		err = sq->skel ? -ENOMEM : -errno;
		rxb_log_errno(RXB_LOG_WARNING, -err, "sockq: opening BPF object");
		goto fail;
	}
	if (rx_tids_fd >= 0) {
		err = bpf_map__reuse_fd(sq->skel->maps.rx_tids, rx_tids_fd);
		if (err) {
			rxb_log_errno(RXB_LOG_WARNING, -err,
				      "sockq: sharing the receiver-thread map");
			goto fail;
		}
	}
	probe_select_variant(sq->skel->obj, mode);
	err = rxb_sockq__load(sq->skel);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "sockq: loading %s programs",
			      probe_mode_name(mode));
		goto fail;
	}
	sq->po.name = "sockq";
	sq->po.obj = sq->skel->obj;
	if (probe_obj_attach(&sq->po) == 0) {
		err = -ENOENT;
		rxb_warn("sockq: no program attached: %s", sq->po.failed);
		goto fail;
	}
	sq->vmlinux = btf__load_vmlinux_btf();
	if (!sq->vmlinux)
		rxb_log_errno(RXB_LOG_INFO, errno,
			      "sockq: no kernel BTF: drop reasons shown as numbers");
	sq->have_rx_sk = kfree_skb_has_rx_sk(sq->vmlinux);
	if (!sq->have_rx_sk)
		rxb_notice("sockq: kfree_skb has no rx_sk on this kernel (< 6.11): "
			   "drops cannot be attributed to sockets");
	*out = sq;
	return 0;
fail:
	probe_obj_detach(&sq->po);
	rxb_sockq__destroy(sq->skel);
	free(sq->percpu_buf);
	free(sq);
	return err;
}

void sockq_probe_close(struct sockq_probe *sq)
{
	if (!sq)
		return;
	probe_obj_detach(&sq->po);
	rxb_sockq__destroy(sq->skel);
	btf__free(sq->vmlinux);
	free(sq->percpu_buf);
	free(sq);
}

struct probe_obj *sockq_probe_obj(struct sockq_probe *sq)
{
	return &sq->po;
}

int sockq_probe_set_ports(struct sockq_probe *sq, const uint16_t *ports, int n)
{
	int fd = bpf_map__fd(sq->skel->maps.watch_ports);
	uint16_t key, next;
	uint32_t one = 1;
	void *prev = NULL;

	/* Remove the ports no longer wanted, then add the new ones. */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		bool keep = false;

		key = next;
		for (int i = 0; i < n; i++)
			keep |= ports[i] == key;
		if (!keep && bpf_map_delete_elem(fd, &key) == 0) {
			prev = NULL;	/* restart: the iterator lost its place */
			continue;
		}
		prev = &key;
	}
	for (int i = 0; i < n; i++) {
		if (bpf_map_update_elem(fd, &ports[i], &one, BPF_ANY)) {
			int err = -errno;

			rxb_log_errno(RXB_LOG_WARNING, -err,
				      "sockq: watching port %u", ports[i]);
			return err;
		}
	}
	return 0;
}

static void sum_stats(const void *buf, int ncpus, struct sockq_stats *o)
{
	size_t stride = (sizeof(*o) + 7) & ~(size_t)7;

	memset(o, 0, sizeof(*o));
	for (int c = 0; c < ncpus; c++) {
		const struct sockq_stats *x =
			(const void *)((const char *)buf + (size_t)c * stride);

		o->enq += x->enq;
		o->enq_bytes += x->enq_bytes;
		o->enq_truesize += x->enq_truesize;
		o->deq += x->deq;
		o->deq_bytes += x->deq_bytes;
		o->drops += x->drops;
		o->drops_rcvbuf += x->drops_rcvbuf;
	}
}

static void read_ports(struct sockq_probe *sq, struct sockq_snap *s)
{
	int sfd = bpf_map__fd(sq->skel->maps.port_stats);
	int qfd = bpf_map__fd(sq->skel->maps.port_state);
	uint16_t key, next;
	void *prev = NULL;

	s->nports = 0;
	while (s->nports < SOCKQ_MAX_PORTS &&
	       bpf_map_get_next_key(sfd, prev, &next) == 0) {
		struct sockq_snap_port *p = &s->ports[s->nports];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(sfd, &key, sq->percpu_buf))
			continue;
		memset(p, 0, sizeof(*p));
		p->port = key;
		sum_stats(sq->percpu_buf, sq->ncpus, &p->v);
		p->have_state = bpf_map_lookup_elem(qfd, &key, &p->state) == 0;
		s->nports++;
	}
}

static void read_deq(struct sockq_probe *sq, struct sockq_snap *s)
{
	int fd = bpf_map__fd(sq->skel->maps.rx_deq);
	struct sockq_deq_key key, next;
	void *prev = NULL;

	s->ndeq = 0;
	while (s->ndeq < SOCKQ_MAX_RX_DEQ &&
	       bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &s->deq[s->ndeq].v))
			continue;
		s->deq[s->ndeq].k = key;
		s->ndeq++;
	}
}

static void read_reasons(struct sockq_probe *sq, struct sockq_snap *s)
{
	int fd = bpf_map__fd(sq->skel->maps.drop_reasons);
	uint32_t key, next;
	void *prev = NULL;

	s->nreasons = 0;
	while (s->nreasons < SOCKQ_MAX_REASONS &&
	       bpf_map_get_next_key(fd, prev, &next) == 0) {
		uint64_t sum = 0;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, sq->percpu_buf))
			continue;
		for (int c = 0; c < sq->ncpus; c++)
			sum += ((const uint64_t *)sq->percpu_buf)[c];
		s->reasons[s->nreasons].reason = key;
		s->reasons[s->nreasons].count = sum;
		s->nreasons++;
	}
}

int sockq_probe_snapshot(struct sockq_probe *sq, struct sockq_snap *s)
{
	s->at_ns = rxb_mono_ns();
	s->have_rx_sk = sq->have_rx_sk;
	read_ports(sq, s);
	read_deq(sq, s);
	read_reasons(sq, s);
	return 0;
}

void sockq_probe_forget_tid(struct sockq_probe *sq, uint32_t tid)
{
	int fd = bpf_map__fd(sq->skel->maps.rx_deq);
	struct sockq_deq_key key, next;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		if (key.tid == tid && bpf_map_delete_elem(fd, &key) == 0) {
			prev = NULL;
			continue;
		}
		prev = &key;
	}
	bpf_map_delete_elem(bpf_map__fd(sq->skel->maps.rx_tids), &tid);
}

const char *sockq_probe_reason_name(struct sockq_probe *sq, uint32_t value)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id;

	if (!sq->vmlinux)
		return NULL;
	id = btf__find_by_name_kind(sq->vmlinux, "skb_drop_reason", BTF_KIND_ENUM);
	if (id < 0)
		return NULL;
	t = btf__type_by_id(sq->vmlinux, (__u32)id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++) {
		const char *name = btf__name_by_offset(sq->vmlinux, e->name_off);

		if ((uint32_t)e->val != value || !name)
			continue;
		if (!strncmp(name, REASON_PREFIX, strlen(REASON_PREFIX)))
			name += strlen(REASON_PREFIX);
		return name;
	}
	return NULL;
}
