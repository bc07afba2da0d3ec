// SPDX-License-Identifier: GPL-2.0-or-later
/* Loader and reader of sockq.bpf.c. See sockq.h. */
#include "bpf/sockq.h"

#include <errno.h>
#include <netinet/in.h>
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
	struct sockq_slot *slot_buf;	/* [ncpus]: one slot's per-CPU values */
	uint64_t *u64_buf;		/* [ncpus] */
	struct probe_batch reasons_rd;	/* drop_reasons, all at once */
	uint16_t slot_port[SOCKQ_MAX_PORTS];	/* 0: free */
	struct btf *vmlinux;		/* for drop reason names; may be NULL */
	bool have_rx_sk;
};

int sockq_snap_init(struct sockq_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->deq = calloc(SOCKQ_MAX_RX_DEQ, sizeof(*s->deq));
	s->reasons = calloc(SOCKQ_MAX_REASONS + SOCKQ_MAX_EXT_REASONS,
			    sizeof(*s->reasons));
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
		     int rx_tids_fd, int rx_gen_fd)
{
	struct sockq_probe *sq;
	int err;

	_Static_assert(sizeof(struct sockq_slot) % 8 == 0, "per-CPU stride");

	*out = NULL;
	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return -ENOMEM;
	sq->ncpus = libbpf_num_possible_cpus();
	if (sq->ncpus <= 0) {
		err = sq->ncpus < 0 ? sq->ncpus : -EINVAL;
		goto fail;
	}
	sq->slot_buf = calloc((size_t)sq->ncpus, sizeof(*sq->slot_buf));
	sq->u64_buf = calloc((size_t)sq->ncpus, sizeof(*sq->u64_buf));
	/* A per-CPU u64 is ncpus x 8 bytes to user space; one read for all. */
	err = probe_batch_init(&sq->reasons_rd, sizeof(uint32_t),
			       (size_t)sq->ncpus * sizeof(uint64_t), SOCKQ_MAX_REASONS,
			       false, 0);
	if (!err && (!sq->slot_buf || !sq->u64_buf))
		err = -ENOMEM;
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "sockq: map read buffers");
		goto fail;
	}
	sq->skel = rxb_sockq__open();
	if (!sq->skel) {
		err = -errno;
		rxb_log_errno(RXB_LOG_WARNING, -err, "sockq: opening BPF object");
		goto fail;
	}
	if (rx_tids_fd >= 0) {
		err = bpf_map__reuse_fd(sq->skel->maps.rx_tids, rx_tids_fd);
		if (!err && rx_gen_fd >= 0)
			err = bpf_map__reuse_fd(sq->skel->maps.rx_gen, rx_gen_fd);
		if (err) {
			rxb_log_errno(RXB_LOG_WARNING, -err,
				      "sockq: sharing the receiver-thread map");
			goto fail;
		}
	}
	{
		static const char *const tps[] = SOCKQ_SAMPLED_TPS;

		err = probe_obj_start(&sq->po, "sockq", sq->skel->skeleton, mode, tps);
	}
	if (err)
		goto fail;
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
	sockq_probe_close(sq);
	return err;
}

/* Also what a failed sockq_probe_open() undoes. */
void sockq_probe_close(struct sockq_probe *sq)
{
	if (!sq)
		return;
	probe_obj_detach(&sq->po);
	rxb_sockq__destroy(sq->skel);
	btf__free(sq->vmlinux);
	probe_batch_finish(&sq->reasons_rd);
	free(sq->slot_buf);
	free(sq->u64_buf);
	free(sq);
}

struct probe_obj *sockq_probe_obj(struct sockq_probe *sq)
{
	return &sq->po;
}

static int set_watch(struct sockq_probe *sq, uint16_t port, uint32_t slot1)
{
	uint32_t key = port;

	if (bpf_map_update_elem(bpf_map__fd(sq->skel->maps.watch_ports), &key,
				&slot1, BPF_ANY)) {
		int err = -errno;

		rxb_log_errno(RXB_LOG_WARNING, -err, "sockq: %s port %u",
			      slot1 ? "watching" : "unwatching", port);
		return err;
	}
	return 0;
}

static bool wanted(const uint16_t *ports, int n, uint16_t port)
{
	for (int i = 0; i < n; i++)
		if (ports[i] == port)
			return true;
	return false;
}

int sockq_probe_set_ports(struct sockq_probe *sq, const uint16_t *ports, int n)
{
	int sfd = bpf_map__fd(sq->skel->maps.slots);
	int efd = bpf_map__fd(sq->skel->maps.shared);
	static const struct sockq_shared no_shared;
	int err;

	/* Stop watching what is no longer wanted: its slot becomes free. */
	for (uint32_t i = 0; i < SOCKQ_MAX_PORTS; i++) {
		if (!sq->slot_port[i] || wanted(ports, n, sq->slot_port[i]))
			continue;
		err = set_watch(sq, sq->slot_port[i], 0);
		if (err)
			return err;
		sq->slot_port[i] = 0;
	}
	for (int i = 0; i < n; i++) {
		uint32_t slot = SOCKQ_MAX_PORTS;

		if (!ports[i])
			return -EINVAL;
		for (uint32_t k = 0; k < SOCKQ_MAX_PORTS; k++) {
			if (sq->slot_port[k] == ports[i]) {
				slot = SOCKQ_MAX_PORTS + 1;	/* already watched */
				break;
			}
			if (!sq->slot_port[k] && slot == SOCKQ_MAX_PORTS)
				slot = k;
		}
		if (slot > SOCKQ_MAX_PORTS)
			continue;
		if (slot == SOCKQ_MAX_PORTS)
			return -ENOSPC;
		/* A reused slot starts from zero before the port goes live. */
		memset(sq->slot_buf, 0, (size_t)sq->ncpus * sizeof(*sq->slot_buf));
		if (bpf_map_update_elem(sfd, &slot, sq->slot_buf, BPF_ANY))
			return -errno;
		if (bpf_map_update_elem(efd, &slot, &no_shared, BPF_ANY))
			return -errno;
		err = set_watch(sq, ports[i], slot + 1);
		if (err)
			return err;
		sq->slot_port[slot] = ports[i];
	}
	return 0;
}

/* Sum a slot over CPUs; see struct sockq_snap_port for the rest. */
static void sum_slot(const struct sockq_slot *v, int ncpus, struct sockq_slot *o)
{
	memset(o, 0, sizeof(*o));
	for (int c = 0; c < ncpus; c++) {
		const struct sockq_slot *x = &v[c];

		o->enq += x->enq;
		o->enq_bytes += x->enq_bytes;
		o->enq_truesize += x->enq_truesize;
		o->deq += x->deq;
		o->deq_bytes += x->deq_bytes;
		o->drops += x->drops;
		o->drops_rcvbuf += x->drops_rcvbuf;
		o->empty_reads += x->empty_reads;
		for (int r = 0; r < SOCKQ_SLOT_REASONS; r++)
			o->drop_reason[r] += x->drop_reason[r];
		if (x->proto && o->proto != IPPROTO_UDP)
			o->proto = x->proto;
	}
}

/* The port's receive buffer: its UDP socket's when one was seen. */
static void rcvbuf_of(const struct sockq_shared *sh, struct sockq_slot *o)
{
	if (sh->rcvbuf_udp) {
		o->rcvbuf_bytes = sh->rcvbuf_udp;
		o->rcvbuf_proto = IPPROTO_UDP;
	} else {
		o->rcvbuf_bytes = sh->rcvbuf_other;
		o->rcvbuf_proto = sh->other_proto;
	}
}

/* Add the per-CPU pending receiver counts of slot @port to the deq rows. */
static void add_pending(struct sockq_probe *sq, struct sockq_snap *s, uint16_t port)
{
	for (int c = 0; c < sq->ncpus; c++) {
		const struct sockq_slot *x = &sq->slot_buf[c];
		struct sockq_snap_deq *d = NULL;

		if (!x->cur_tid || !x->cur_pkts)
			continue;
		for (int i = 0; i < s->ndeq; i++)
			if (s->deq[i].k.tid == x->cur_tid && s->deq[i].k.port == port)
				d = &s->deq[i];
		if (!d) {
			if (s->ndeq == SOCKQ_MAX_RX_DEQ)
				continue;
			d = &s->deq[s->ndeq++];
			memset(d, 0, sizeof(*d));
			d->k.tid = x->cur_tid;
			d->k.port = port;
		}
		d->v.pkts += x->cur_pkts;
	}
}

static void read_ports(struct sockq_probe *sq, struct sockq_snap *s)
{
	int fd = bpf_map__fd(sq->skel->maps.slots);
	int efd = bpf_map__fd(sq->skel->maps.shared);
	struct sockq_shared sh;

	s->nports = 0;
	for (uint32_t slot = 0; slot < SOCKQ_MAX_PORTS; slot++) {
		struct sockq_snap_port *p = &s->ports[s->nports];

		if (!sq->slot_port[slot])
			continue;
		if (bpf_map_lookup_elem(fd, &slot, sq->slot_buf))
			continue;
		p->port = sq->slot_port[slot];
		sum_slot(sq->slot_buf, sq->ncpus, &p->v);
		p->have_state = p->v.enq || p->v.deq;
		p->qlen = (int64_t)(p->v.enq - p->v.deq);
		p->have_rqueue = false;	/* the collector's to fill */
		p->rqueue_bytes = 0;
		p->diag_rcvbuf_bytes = 0;
		if (bpf_map_lookup_elem(efd, &slot, &sh))
			memset(&sh, 0, sizeof(sh));
		rcvbuf_of(&sh, &p->v);
		p->drop_episodes = sh.episodes;
		memcpy(p->episode_hist, sh.size_hist, sizeof(p->episode_hist));
		add_pending(sq, s, p->port);
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

/* The total of a per-CPU u64 counter as the kernel hands it out. */
static uint64_t sum_per_cpu(const uint64_t *per_cpu, int ncpus)
{
	uint64_t sum = 0;

	for (int c = 0; c < ncpus; c++)
		sum += per_cpu[c];
	return sum;
}

struct reason_read {
	const struct sockq_probe *sq;
	struct sockq_snap *s;
};

/* probe_batch_fn: one drop reason's per-CPU counts; the nonzero ones kept. */
static int reason_read(void *arg, const void *key, const void *val)
{
	struct reason_read *rr = arg;
	uint64_t sum = sum_per_cpu(val, rr->sq->ncpus);

	if (sum && rr->s->nreasons < SOCKQ_MAX_REASONS) {
		rr->s->reasons[rr->s->nreasons].reason = *(const uint32_t *)key;
		rr->s->reasons[rr->s->nreasons++].count = sum;
	}
	return 0;
}

static void read_reasons(struct sockq_probe *sq, struct sockq_snap *s)
{
	int hfd = bpf_map__fd(sq->skel->maps.drop_reasons_ext);
	struct reason_read rr = { .sq = sq, .s = s };
	uint32_t key, next;
	void *prev = NULL;
	int err;

	s->nreasons = 0;
	err = probe_batch_read(&sq->reasons_rd, bpf_map__fd(sq->skel->maps.drop_reasons),
			       reason_read, &rr);
	if (err)
		rxb_log_errno(RXB_LOG_DEBUG, -err, "sockq: reading drop reasons");
	while (s->nreasons < SOCKQ_MAX_REASONS + SOCKQ_MAX_EXT_REASONS &&
	       bpf_map_get_next_key(hfd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(hfd, &key, sq->u64_buf))
			continue;
		s->reasons[s->nreasons].reason = key;
		s->reasons[s->nreasons++].count = sum_per_cpu(sq->u64_buf, sq->ncpus);
	}
}

int sockq_probe_set_sampled(struct sockq_probe *sq, bool on)
{
	return probe_obj_set_sampled(&sq->po, on, NULL, NULL);
}

int sockq_probe_set_enq(struct sockq_probe *sq, bool on)
{
	return probe_obj_set_tp(&sq->po, SOCKQ_ENQ_TP, on);
}

int sockq_probe_snapshot(struct sockq_probe *sq, struct sockq_snap *s)
{
	s->at_ns = rxb_mono_ns();
	s->have_rx_sk = sq->have_rx_sk;
	/*
	 * The flushed rows before the slots' pending counts: a flush between
	 * the two reads is then missed once (and seen next time) instead of
	 * being counted twice.
	 */
	read_deq(sq, s);
	read_ports(sq, s);
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
