// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage A of the receive path: hard IRQ handler time and counts per IRQ,
 * NET_RX softirq time per CPU, and per NAPI instance the polls, packets per
 * poll ("work") and the service time of each poll - the time since the NET_RX
 * softirq began or since the previous poll in it, hard IRQ time removed.
 * Everything is aggregated in per-CPU maps.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/core.bpf.h"
#include "bpf/netrx.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct netrx_cpu);
} cpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, NETRX_MAX_IRQS);
	__type(key, __s32);
	__type(value, struct netrx_irq);
} irqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, NETRX_MAX_NAPI);
	__type(key, __u64);
	__type(value, struct netrx_napi);
} napis SEC(".maps");

/*
 * Bumped by the loader before it attaches the per-packet programs again
 * (they are attached for sampled epochs only, netrx.h): a NET_RX softirq
 * whose entry was timed before a detach must not be finished by an exit or
 * poll seen after the next attach - that would charge the whole detached
 * time to one softirq.
 */
volatile __u32 attach_gen;

static __always_inline struct netrx_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_stats, &zero);
}

static __always_inline int irq_entry(int irq)
{
	struct netrx_cpu *c = this_cpu();

	if (c)
		c->irq_entry_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int irq_exit(int irq, struct irqaction *action, bool btf)
{
	struct netrx_cpu *c = this_cpu();
	struct netrx_irq *v;
	__u64 d;

	if (!c || !c->irq_entry_ns)
		return 0;
	d = bpf_ktime_get_ns() - c->irq_entry_ns;
	c->irq_entry_ns = 0;
	c->hardirq_ns += d;
	c->hardirq_cnt++;
	v = bpf_map_lookup_elem(&irqs, &irq);
	if (!v) {
		struct netrx_irq init = {};

		bpf_probe_read_kernel_str(init.name, sizeof(init.name),
					  RD(btf, action, name));
		bpf_map_update_elem(&irqs, &irq, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&irqs, &irq);
		if (!v)
			return 0;
	}
	v->count++;
	v->ns += d;
	return 0;
}

static __always_inline int softirq_entry(unsigned int vec)
{
	struct netrx_cpu *c;
	__u64 now;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	c = this_cpu();
	if (!c)
		return 0;
	/* Count every one, time one in NETRX_SAMPLE_EVERY (see netrx.h). */
	if (c->netrx_cnt++ % NETRX_SAMPLE_EVERY)
		return 0;
	now = bpf_ktime_get_ns();
	c->sirq_entry_ns = now;
	c->sirq_gen = attach_gen;
	c->sirq_entry_hardirq_ns = c->hardirq_ns;
	c->mark_ns = now;
	c->mark_hardirq_ns = c->hardirq_ns;
	return 0;
}

static __always_inline int softirq_exit(unsigned int vec)
{
	struct netrx_cpu *c;
	__u64 d, irq;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	c = this_cpu();
	if (!c || !c->sirq_entry_ns)
		return 0;
	if (c->sirq_gen != attach_gen) {	/* entered before a detach */
		c->sirq_entry_ns = 0;
		return 0;
	}
	d = bpf_ktime_get_ns() - c->sirq_entry_ns;
	irq = c->hardirq_ns - c->sirq_entry_hardirq_ns;
	c->netrx_ns += d > irq ? d - irq : 0;
	c->netrx_timed++;
	c->sirq_entry_ns = 0;
	return 0;
}

/* The napis[] entry of @key, made (named after @dev) if it is new. */
static __always_inline struct netrx_napi *napi_entry(__u64 key,
						     struct net_device *dev)
{
	struct netrx_napi *v = bpf_map_lookup_elem(&napis, &key);

	if (!v) {
		struct netrx_napi init = {};

		if (dev) {
			BPF_CORE_READ_STR_INTO(&init.dev, dev, name);
			init.ifindex = BPF_CORE_READ(dev, ifindex);
		} else {
			__builtin_memcpy(init.dev, "(backlog)", 10);
		}
		bpf_map_update_elem(&napis, &key, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&napis, &key);
	}
	return v;
}

/* Another device is polled on this CPU: add the cached counts of the
 * previous one to its entry and make sure the new one has an entry. */
static __always_inline void napi_switch(struct netrx_cpu *c, __u64 key,
					struct net_device *dev)
{
	struct netrx_napi *v;

	if (c->napi_valid) {
		v = bpf_map_lookup_elem(&napis, &c->napi_key);
		if (v)
			netrx_napi_add(v, &c->np);
	}
	__builtin_memset(&c->np, 0, sizeof(c->np));
	/* No entry (the map is full): this poll goes uncounted; the next
	 * one tries again. */
	if (!napi_entry(key, dev)) {
		c->napi_valid = 0;
		return;
	}
	c->napi_key = key;
	c->napi_valid = 1;
}

static __always_inline int napi_poll(struct napi_struct *napi, int work,
				     int budget, bool btf)
{
	struct net_device *dev = RD(btf, napi, dev);
	__u64 key = (__u64)dev;
	struct netrx_cpu *c = this_cpu();
	__u64 now;

	if (!c)
		return 0;
	if (!c->napi_valid || c->napi_key != key) {
		napi_switch(c, key, dev);
		if (!c->napi_valid)
			return 0;
	}
	c->np.polls++;
	c->np.pkts += work > 0 ? work : 0;
	if (work >= budget)
		c->np.full_polls++;
	c->np.budget = budget;
	/* Timed only inside a traced NET_RX softirq (not busy polling). */
	if (c->sirq_entry_ns && c->sirq_gen == attach_gen) {
		__u64 irq = c->hardirq_ns - c->mark_hardirq_ns;
		__u64 d;

		now = bpf_ktime_get_ns();
		d = now - c->mark_ns;
		c->np.timed_polls++;
		c->np.timed_ns += d > irq ? d - irq : 0;
		c->mark_ns = now;
		c->mark_hardirq_ns = c->hardirq_ns;
	}
	return 0;
}

CORE_TP_PROGS(irq_handler_entry, irq_entry, irq_entry(irq),
	      int irq, struct irqaction *action)

CORE_TP_PROGS(irq_handler_exit, irq_exit, irq_exit(irq, action, btf),
	      int irq, struct irqaction *action, int ret)

CORE_TP_PROGS(softirq_entry, softirq_entry, softirq_entry(vec), unsigned int vec)

CORE_TP_PROGS(softirq_exit, softirq_exit, softirq_exit(vec), unsigned int vec)

CORE_TP_PROGS(napi_poll, napi_poll, napi_poll(napi, work, budget, btf),
	      struct napi_struct *napi, int work, int budget)
