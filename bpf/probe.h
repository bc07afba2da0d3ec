/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every BPF loader in bpf/ shares: choosing between the tp_btf and raw_tp
 * variants of the programs (a feature probe, or forced), attaching the
 * programs of an object one by one so that one missing tracepoint does not
 * take the others down, reading a program's own cost (run_cnt, run_time_ns),
 * and routing libbpf's messages into rxb_log.
 *
 * Each x.bpf.c defines every program twice, in sections "tp_btf/<tp>" and
 * "raw_tp/<tp>"; probe_obj_load() turns autoload on for one variant only.
 */
#ifndef RXB_BPF_PROBE_H
#define RXB_BPF_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct bpf_program;
struct bpf_link;

enum probe_mode {
	PROBE_MODE_TP_BTF = 1,
	PROBE_MODE_RAW_TP = 2,
};

#define PROBE_MAX_PROGS	16
#define PROBE_ERR_LEN	256

/*
 * The attached programs of one BPF object. Some may be marked "sampled"
 * (probe_obj_mark_sampled()): the per-packet programs, which the collector
 * attaches only for sampled epochs and detaches in between
 * (probe_obj_attach_sampled() / probe_obj_detach_sampled()). Detaching
 * destroys the link, so a detached program costs nothing - a program kept
 * attached and told to do nothing would still cost its invocation. Its
 * counters (maps) and statistics stay.
 */
struct probe_obj {
	const char *name;		/* "sched", "netrx", ... for messages */
	struct bpf_object *obj;		/* owned by the skeleton, not here */
	int nprogs;			/* programs attached at open */
	const struct bpf_program *progs[PROBE_MAX_PROGS];
	struct bpf_link *links[PROBE_MAX_PROGS];	/* NULL: not attached */
	bool sampled[PROBE_MAX_PROGS];	/* attached for sampled epochs only */
	int nfailed;
	char failed[PROBE_ERR_LEN];	/* "prog: reason; ..." */
};

const char *probe_mode_name(enum probe_mode mode);

/* Send libbpf's messages to rxb_log (warnings as debug: they are expected
 * while probing features). Idempotent. */
void probe_route_libbpf_log(void);

/*
 * Feature probe: can a BTF-typed tracing program be loaded and attached to
 * tracepoint @tp (e.g. "sched_switch")? Loads and attaches a program that
 * does nothing, then detaches it. Returns 1 (yes), 0 (no) and logs why.
 */
int probe_tp_btf_works(const char *tp);

/*
 * Load a BTF-typed tracing program that does nothing and attach it to
 * tracepoint @tp: the feature probe above, and the reference a program's
 * cost per run is measured against (bench/overhead.sh). Returns the link's
 * fd (closing it detaches) and the program's in *@prog_fd, or -errno
 * (logged at level info).
 */
int probe_nop_attach(const char *tp, int *prog_fd);

/* Enable the programs of @mode's variant in @obj, disable the others. */
void probe_select_variant(struct bpf_object *obj, enum probe_mode mode);

/*
 * The common start of every probe group: enable @mode's variant of the
 * programs in skeleton @skel, load it, and attach its programs to @po
 * (named @name in messages), marking those on the tracepoints @sampled
 * (NULL terminated; may be NULL) as sampled. A tp_btf program whose
 * tracepoint the kernel's BTF lacks is not loaded (it would fail the
 * whole object's load) and is recorded in @po->failed, as a raw_tp program
 * that fails to attach is. Logs what failed. 0, or -errno with nothing
 * attached (the skeleton stays the caller's).
 */
struct bpf_object_skeleton;
int probe_obj_start(struct probe_obj *po, const char *name,
		    struct bpf_object_skeleton *skel, enum probe_mode mode,
		    const char *const *sampled);

/*
 * Attach every loaded program of @po->obj. A program that fails is recorded
 * in @po->failed and the others are still attached. Returns the number of
 * programs attached (0 means the object is useless).
 */
int probe_obj_attach(struct probe_obj *po);
void probe_obj_detach(struct probe_obj *po);

/*
 * Mark the programs of @po attached to one of the tracepoints @tps (NULL
 * terminated; "napi_poll" matches both "tp_btf/napi_poll" and
 * "raw_tp/napi_poll") as sampled. Returns how many were marked.
 */
int probe_obj_mark_sampled(struct probe_obj *po, const char *const *tps);

/* Does @po have sampled programs, and are they attached now? */
bool probe_obj_has_sampled(const struct probe_obj *po);
bool probe_obj_sampled_attached(const struct probe_obj *po);

/*
 * Attach the sampled programs that are not attached. All or nothing: if
 * one fails, the ones attached here are detached again, the reason is
 * logged, and -errno is returned.
 */
int probe_obj_attach_sampled(struct probe_obj *po);

/* Detach (destroy the links of) the sampled programs. */
void probe_obj_detach_sampled(struct probe_obj *po);

/*
 * Attach (@on) or detach the sampled programs of @po. Before attaching them
 * again, *@attach_ns (may be NULL) gets the time (CLOCK_MONOTONIC) and
 * *@attach_gen (the object's attach_gen, may be NULL) is bumped, so that
 * the programs and the reader can tell state noted before the detach from
 * state noted after. Nothing happens when they already are as asked.
 * 0 or -errno (then they are all detached).
 */
int probe_obj_set_sampled(struct probe_obj *po, bool on, uint32_t *attach_gen,
			  uint64_t *attach_ns);

/*
 * Attach (@on) or detach the programs of @po on tracepoint @tp (as
 * probe_obj_mark_sampled() names it), whether or not they are sampled:
 * for a program that only some sampled epochs need. Nothing happens to
 * those already as asked. 0 or -errno (the failing one stays detached).
 */
int probe_obj_set_tp(struct probe_obj *po, const char *tp, bool on);

/*
 * The kernel's cumulative statistics of @prog (kernel.bpf_stats_enabled must
 * be on for them to grow). 0 or -errno.
 */
int probe_prog_stats(const struct bpf_program *prog, uint64_t *run_cnt,
		     uint64_t *run_time_ns);

/*
 * Turn on BPF run-time statistics for as long as the returned fd is open
 * (BPF_ENABLE_STATS): closing it restores the previous setting, also if the
 * process dies. Returns the fd or -errno.
 */
int probe_enable_stats(void);

/*
 * Reading a whole hash map a chunk at a time (BPF_MAP_LOOKUP_BATCH): one
 * system call per chunk instead of two per element (bpf_map_get_next_key
 * and a lookup), which would be most of the daemon's own per-epoch time. The
 * buffers belong to the struct (probe_batch_init / probe_batch_finish).
 * With @stable, values carry a u32 seq at @seq_off that the BPF program
 * makes odd while it updates them: each chunk is read twice and an
 * element whose copies differ, or whose seq is odd, is read again on its
 * own until two copies agree (skipped if it keeps changing). A kernel
 * without batch lookups for the map gets the element-by-element walk.
 */
struct probe_batch {
	size_t key_size, val_size;
	uint32_t chunk;		/* elements per system call (grows on ENOSPC) */
	bool stable;
	size_t seq_off;
	bool unsupported;	/* the kernel refused a batch: walk instead */
	void *keys, *vals;	/* chunk x key_size, chunk x val_size */
	void *keys2, *vals2;	/* the second read (stable only) */
	void *tmp;		/* one value (the element read again) */
	void *next_key;		/* one key (the walk) */
	/*
	 * CLOCK_MONOTONIC when the element being handed to the callback was
	 * read (its chunk's read, or its own). A callback may be slow, or
	 * the process stalled between two callbacks: what an element says
	 * is as of this time, not as of the callback's.
	 */
	uint64_t read_ns;
};

int probe_batch_init(struct probe_batch *b, size_t key_size, size_t val_size,
		     uint32_t chunk, bool stable, size_t seq_off);
void probe_batch_finish(struct probe_batch *b);

/* Called for each element read; nonzero stops the read and is returned. */
typedef int (*probe_batch_fn)(void *arg, const void *key, const void *val);

/* Every element of @map_fd to @fn. 0, what @fn returned, or -errno. */
int probe_batch_read(struct probe_batch *b, int map_fd, probe_batch_fn fn,
		     void *arg);

#endif
