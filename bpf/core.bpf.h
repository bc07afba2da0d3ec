/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the BPF objects in bpf/ share to run on more than one kernel: the
 * two ways of reading a kernel field (tp_btf and raw_tp programs), and the
 * fields and types that differ between kernel versions or configurations,
 * each decided once per kernel by CO-RE relocation when the object is
 * loaded. Included by x.bpf.c after vmlinux.h and the libbpf headers.
 */
#ifndef RXB_BPF_CORE_BPF_H
#define RXB_BPF_CORE_BPF_H

/*
 * Reading a field of a kernel object @p: tp_btf programs get BTF-typed
 * pointers and load directly; raw_tp programs get plain numbers and must
 * use probe reads (a helper call each). @btf is a constant in each program,
 * so the compiler keeps only one branch and the verifier never sees the
 * other. Every program exists twice, as "tp_btf/<tp>" and "raw_tp/<tp>",
 * both calling one inline handler with @btf true or false (CORE_TP_PROGS);
 * the loader enables one set (probe_select_variant()).
 */
#define RD(btf, p, field) ((btf) ? (p)->field : BPF_CORE_READ(p, field))

/*
 * Both programs of tracepoint @tp: @name_btf in "tp_btf/@tp" and @name_raw
 * in "raw_tp/@tp", taking the tracepoint's arguments @args. Each returns
 * @call, an expression of those arguments (and of ctx, as in any BPF_PROG)
 * in which btf is the constant true or false.
 */
#define CORE_TP_PROGS(tp, name, call, args...)				\
SEC("tp_btf/" #tp)							\
int BPF_PROG(name##_btf, args)						\
{									\
	const bool btf __attribute__((unused)) = true;			\
									\
	return call;							\
}									\
									\
SEC("raw_tp/" #tp)							\
int BPF_PROG(name##_raw, args)						\
{									\
	const bool btf __attribute__((unused)) = false;			\
									\
	return call;							\
}

/* The same for a bitfield (which has no address to probe-read from). */
#define RD_BITFIELD(btf, p, field) \
	((btf) ? BPF_CORE_READ_BITFIELD(p, field) : BPF_CORE_READ_BITFIELD_PROBED(p, field))

/*
 * The CPU a task is on or queued for. With CONFIG_THREAD_INFO_IN_TASK
 * (x86, arm64) it is thread_info.cpu; other configurations keep it
 * elsewhere, and wake_cpu is the best field every kernel has.
 */
static __always_inline __u32 core_task_cpu(struct task_struct *p, bool btf)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return RD(btf, p, thread_info.cpu);
	return RD(btf, p, wake_cpu);
}

/*
 * sched_info (run_delay: the task's cumulative wait on runqueues; pcount:
 * its switch-ins) exists only with CONFIG_SCHED_INFO. Without it these
 * read 0 and core_have_run_delay() says so.
 */
static __always_inline bool core_have_run_delay(struct task_struct *p)
{
	return bpf_core_field_exists(p->sched_info.run_delay);
}

static __always_inline __u64 core_run_delay(struct task_struct *p, bool btf)
{
	if (bpf_core_field_exists(p->sched_info.run_delay))
		return RD(btf, p, sched_info.run_delay);
	return 0;
}

static __always_inline __u64 core_pcount(struct task_struct *p, bool btf)
{
	if (bpf_core_field_exists(p->sched_info.pcount))
		return RD(btf, p, sched_info.pcount);
	return 0;
}

/*
 * EEVDF (Linux 6.6+) gives every scheduling entity a slice and a virtual
 * deadline; CFS (before) has neither: its slice is derived from
 * sched_latency and the runqueue's load, which user space computes.
 */
static __always_inline bool core_sched_is_eevdf(struct task_struct *p)
{
	return bpf_core_field_exists(p->se.deadline) &&
	       bpf_core_field_exists(p->se.slice);
}

/* se.slice under EEVDF, 0 under CFS. */
static __always_inline __u64 core_se_slice(struct task_struct *p, bool btf)
{
	if (core_sched_is_eevdf(p))
		return RD(btf, p, se.slice);
	return 0;
}

/* skb:kfree_skb has carried the receiving socket (4th argument) since 6.11. */
#define CORE_KFREE_SKB_HAS_RX_SK \
	bpf_core_field_exists(((struct trace_event_raw_kfree_skb *)0)->rx_sk)

/*
 * That socket, from a kfree_skb program's raw arguments @ctx (the same
 * slot for tp_btf and raw_tp); NULL on kernels before 6.11, where the
 * read is dead code the verifier never sees.
 */
static __always_inline const struct sock *core_kfree_skb_rx_sk(unsigned long long *ctx)
{
	return CORE_KFREE_SKB_HAS_RX_SK ? (const struct sock *)ctx[3] : NULL;
}

/*
 * Whether @reason is enumerator @name of enum skb_drop_reason, whose values
 * differ between kernels (false when this kernel has no such reason).
 */
#define CORE_IS_DROP_REASON(reason, name)					\
	(bpf_core_enum_value_exists(enum skb_drop_reason, name) &&		\
	 (reason) == bpf_core_enum_value(enum skb_drop_reason, name))

#endif
