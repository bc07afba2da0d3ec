// SPDX-License-Identifier: GPL-2.0-or-later
/* Shared loader helpers for the programs in bpf/. See probe.h. */
#include "bpf/probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "common/log.h"
#include "common/util.h"

static const char *const mode_names[] = {
	[PROBE_MODE_TP_BTF] = "tp_btf",
	[PROBE_MODE_RAW_TP] = "raw_tp",
};

const char *probe_mode_name(enum probe_mode mode)
{
	return RXB_NAME(mode_names, mode, "?");
}

static int libbpf_to_rxb_log(enum libbpf_print_level level, const char *fmt,
			     va_list ap)
{
	char line[1024];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	rxb_log(level == LIBBPF_WARN ? RXB_LOG_WARNING :
		level == LIBBPF_INFO ? RXB_LOG_INFO : RXB_LOG_DEBUG,
		"%s", line);
	return 0;
}

void probe_route_libbpf_log(void)
{
	libbpf_set_print(libbpf_to_rxb_log);
}

/* The BTF id of tracepoint @tp's type (btf_trace_<tp>) in @vmlinux, or < 0. */
static int btf_trace_id(const struct btf *vmlinux, const char *tp)
{
	char type_name[128];

	snprintf(type_name, sizeof(type_name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(vmlinux, type_name, BTF_KIND_TYPEDEF);
}

int probe_nop_attach(const char *tp, int *prog_fd)
{
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *vmlinux;
	int id, pfd, lfd, err;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = errno ? -errno : -ENOENT;
		rxb_log_errno(RXB_LOG_INFO, -err, "tracepoint %s: no kernel BTF", tp);
		return err;
	}
	id = btf_trace_id(vmlinux, tp);
	btf__free(vmlinux);
	if (id < 0) {
		rxb_info("tracepoint %s: kernel BTF has no btf_trace_%s", tp, tp);
		return -ENOENT;
	}

	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = (__u32)id);
	pfd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "rxb_nop", "GPL", insns,
			    sizeof(insns) / sizeof(insns[0]), &opts);
	if (pfd < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_INFO, -err, "tracepoint %s: loading a tracing program", tp);
		return err;
	}
	lfd = bpf_raw_tracepoint_open(NULL, pfd);
	if (lfd < 0) {
		err = -errno;
		rxb_log_errno(RXB_LOG_INFO, -err, "tracepoint %s: attaching a tracing program", tp);
		close(pfd);
		return err;
	}
	*prog_fd = pfd;
	return lfd;
}

int probe_tp_btf_works(const char *tp)
{
	int pfd, lfd = probe_nop_attach(tp, &pfd);

	if (lfd < 0)
		return 0;
	close(lfd);
	close(pfd);
	return 1;
}

void probe_select_variant(struct bpf_object *obj, enum probe_mode mode)
{
	const char *want = mode == PROBE_MODE_TP_BTF ? "tp_btf/" : "raw_tp/";
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		const char *sec = bpf_program__section_name(p);

		bpf_program__set_autoload(p, strncmp(sec, want, strlen(want)) == 0);
	}
}

/* The tracepoint of a program's section: "tp_btf/napi_poll" -> "napi_poll". */
static const char *section_tp(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);
	const char *slash = strchr(sec, '/');

	return slash ? slash + 1 : sec;
}

/*
 * A tp_btf program finds its tracepoint's type (btf_trace_<tp>) in the
 * kernel's BTF when the object loads, so one the kernel lacks fails the
 * whole object, where a raw_tp program fails alone at attach. Such
 * programs are not loaded: up to @max of them into @missing. Returns how
 * many (none when the BTF cannot be read: the load then says why).
 */
static int skip_missing_tp_btf(struct bpf_object *obj, const struct bpf_program **missing,
			       int max)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *p;
	int n = 0;

	if (!vmlinux)
		return 0;
	bpf_object__for_each_program(p, obj) {
		if (!bpf_program__autoload(p) ||
		    strncmp(bpf_program__section_name(p), "tp_btf/", 7) ||
		    btf_trace_id(vmlinux, section_tp(p)) >= 0)
			continue;
		bpf_program__set_autoload(p, false);
		if (n < max)
			missing[n++] = p;
	}
	btf__free(vmlinux);
	return n;
}

static void note_failure(struct probe_obj *po, const char *prog, int err)
{
	size_t len = strlen(po->failed);

	po->nfailed++;
	if (len + 2 < sizeof(po->failed))
		snprintf(po->failed + len, sizeof(po->failed) - len, "%s%s: %s",
			 len ? "; " : "", prog, strerror(err));
}

int probe_obj_attach(struct probe_obj *po)
{
	struct bpf_program *p;
	int attached = 0;

	po->nprogs = 0;
	po->nfailed = 0;
	po->failed[0] = '\0';
	memset(po->sampled, 0, sizeof(po->sampled));
	bpf_object__for_each_program(p, po->obj) {
		struct bpf_link *link;
		int i = po->nprogs;

		if (!bpf_program__autoload(p))
			continue;
		if (i >= PROBE_MAX_PROGS) {
			note_failure(po, bpf_program__name(p), E2BIG);
			continue;
		}
		link = bpf_program__attach(p);
		if (!link) {
			int err = errno;

			rxb_log_errno(RXB_LOG_WARNING, err, "%s: attaching %s (%s)",
				      po->name, bpf_program__name(p),
				      bpf_program__section_name(p));
			note_failure(po, bpf_program__name(p), err);
			continue;
		}
		po->progs[i] = p;
		po->links[i] = link;
		po->nprogs++;
		attached++;
	}
	return attached;
}

void probe_obj_detach(struct probe_obj *po)
{
	for (int i = 0; i < po->nprogs; i++) {
		bpf_link__destroy(po->links[i]);
		po->links[i] = NULL;
		po->sampled[i] = false;
	}
	po->nprogs = 0;
}

int probe_obj_start(struct probe_obj *po, const char *name,
		    struct bpf_object_skeleton *skel, enum probe_mode mode,
		    const char *const *sampled)
{
	const struct bpf_program *missing[PROBE_MAX_PROGS];
	int err, nmissing = 0, attached;

	po->name = name;
	po->obj = *skel->obj;
	probe_select_variant(po->obj, mode);
	if (mode == PROBE_MODE_TP_BTF)
		nmissing = skip_missing_tp_btf(po->obj, missing, PROBE_MAX_PROGS);
	err = bpf_object__load_skeleton(skel);
	if (err) {
		rxb_log_errno(RXB_LOG_WARNING, -err, "%s: loading %s programs", name,
			      probe_mode_name(mode));
		return err;
	}
	attached = probe_obj_attach(po);
	for (int i = 0; i < nmissing; i++) {
		rxb_warn("%s: %s not loaded: the kernel has no tracepoint %s", name,
			 bpf_program__name(missing[i]), section_tp(missing[i]));
		note_failure(po, bpf_program__name(missing[i]), ENOENT);
	}
	if (attached == 0) {
		rxb_warn("%s: no program attached: %s", name, po->failed);
		return -ENOENT;
	}
	if (sampled)
		probe_obj_mark_sampled(po, sampled);
	return 0;
}

int probe_obj_mark_sampled(struct probe_obj *po, const char *const *tps)
{
	int n = 0;

	for (int i = 0; i < po->nprogs; i++) {
		const char *tp = section_tp(po->progs[i]);

		for (const char *const *t = tps; *t; t++)
			if (!strcmp(tp, *t)) {
				po->sampled[i] = true;
				n++;
				break;
			}
	}
	return n;
}

bool probe_obj_has_sampled(const struct probe_obj *po)
{
	for (int i = 0; i < po->nprogs; i++)
		if (po->sampled[i])
			return true;
	return false;
}

bool probe_obj_sampled_attached(const struct probe_obj *po)
{
	bool any = false;

	for (int i = 0; i < po->nprogs; i++) {
		if (!po->sampled[i])
			continue;
		if (!po->links[i])
			return false;
		any = true;
	}
	return any;
}

int probe_obj_attach_sampled(struct probe_obj *po)
{
	bool made[PROBE_MAX_PROGS] = { false };

	for (int i = 0; i < po->nprogs; i++) {
		const struct bpf_program *p = po->progs[i];
		int err;

		if (!po->sampled[i] || po->links[i])
			continue;
		po->links[i] = bpf_program__attach(p);
		if (po->links[i]) {
			made[i] = true;
			continue;
		}
		err = errno ? errno : EINVAL;
		rxb_log_errno(RXB_LOG_WARNING, err, "%s: re-attaching %s (%s)",
			      po->name, bpf_program__name(p),
			      bpf_program__section_name(p));
		for (int j = 0; j < i; j++)
			if (made[j]) {
				bpf_link__destroy(po->links[j]);
				po->links[j] = NULL;
			}
		return -err;
	}
	return 0;
}

void probe_obj_detach_sampled(struct probe_obj *po)
{
	for (int i = 0; i < po->nprogs; i++) {
		if (!po->sampled[i] || !po->links[i])
			continue;
		bpf_link__destroy(po->links[i]);
		po->links[i] = NULL;
	}
}

int probe_obj_set_sampled(struct probe_obj *po, bool on, uint32_t *attach_gen,
			  uint64_t *attach_ns)
{
	if (!on) {
		probe_obj_detach_sampled(po);
		return 0;
	}
	if (probe_obj_sampled_attached(po))
		return 0;
	if (attach_ns)
		*attach_ns = rxb_mono_ns();
	if (attach_gen)
		(*attach_gen)++;
	return probe_obj_attach_sampled(po);
}

int probe_obj_set_tp(struct probe_obj *po, const char *tp, bool on)
{
	for (int i = 0; i < po->nprogs; i++) {
		const struct bpf_program *p = po->progs[i];

		if (strcmp(section_tp(p), tp))
			continue;
		if (!on) {
			bpf_link__destroy(po->links[i]);
			po->links[i] = NULL;
			continue;
		}
		if (po->links[i])
			continue;
		po->links[i] = bpf_program__attach(p);
		if (!po->links[i]) {
			int err = errno ? errno : EINVAL;

			rxb_log_errno(RXB_LOG_WARNING, err, "%s: re-attaching %s (%s)",
				      po->name, bpf_program__name(p),
				      bpf_program__section_name(p));
			return -err;
		}
	}
	return 0;
}

int probe_prog_stats(const struct bpf_program *prog, uint64_t *run_cnt,
		     uint64_t *run_time_ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog);

	if (fd < 0)
		return -EBADF;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*run_cnt = info.run_cnt;
	*run_time_ns = info.run_time_ns;
	return 0;
}

int probe_enable_stats(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

/*
 * Consistent copy of a hash map element that a BPF program updates inside a
 * seq bracket (odd seq while updating): reads until two copies agree. @val
 * and @tmp have the value size; @seq_off is the offset of the u32 seq.
 * 0, -ENOENT (gone), -EAGAIN (kept changing), or -errno.
 */
static int map_read_stable(int map_fd, const void *key, void *val, void *tmp,
			   size_t size, size_t seq_off)
{
	for (int tries = 0; tries < 8; tries++) {
		uint32_t seq;

		if (bpf_map_lookup_elem(map_fd, key, val))
			return -errno;
		if (bpf_map_lookup_elem(map_fd, key, tmp))
			return -errno;
		memcpy(&seq, (const char *)val + seq_off, sizeof(seq));
		if (!(seq & 1) && memcmp(val, tmp, size) == 0)
			return 0;
	}
	return -EAGAIN;
}

/* ------------------------------------------------------ batch reads -- */

#define PROBE_BATCH_MAX_CHUNK	65536u
/*
 * The kernel's own "operation not supported" (ENOTSUPP, not in the uapi
 * headers): what a map type without batch lookups answers (hash maps have
 * them since Linux 5.6).
 */
#define PROBE_KERNEL_ENOTSUPP	524

static int batch_alloc(struct probe_batch *b, uint32_t chunk)
{
	size_t nbufs = b->stable ? 2 : 1;
	void *bufs[4] = { NULL };

	for (size_t i = 0; i < nbufs; i++) {
		bufs[2 * i] = calloc(chunk, b->key_size);
		bufs[2 * i + 1] = calloc(chunk, b->val_size);
		if (!bufs[2 * i] || !bufs[2 * i + 1]) {
			for (size_t j = 0; j < 4; j++)
				free(bufs[j]);
			return -ENOMEM;
		}
	}
	free(b->keys);
	free(b->vals);
	free(b->keys2);
	free(b->vals2);
	b->keys = bufs[0];
	b->vals = bufs[1];
	b->keys2 = bufs[2];
	b->vals2 = bufs[3];
	b->chunk = chunk;
	return 0;
}

int probe_batch_init(struct probe_batch *b, size_t key_size, size_t val_size,
		     uint32_t chunk, bool stable, size_t seq_off)
{
	int err;

	memset(b, 0, sizeof(*b));
	if (!key_size || !val_size || !chunk || chunk > PROBE_BATCH_MAX_CHUNK ||
	    (stable && seq_off + sizeof(uint32_t) > val_size))
		return -EINVAL;
	b->key_size = key_size;
	b->val_size = val_size;
	b->stable = stable;
	b->seq_off = seq_off;
	b->tmp = calloc(1, val_size);
	b->next_key = calloc(1, key_size);
	err = b->tmp && b->next_key ? batch_alloc(b, chunk) : -ENOMEM;
	if (err) {
		free(b->tmp);
		free(b->next_key);
		b->tmp = NULL;
		b->next_key = NULL;
	}
	return err;
}

void probe_batch_finish(struct probe_batch *b)
{
	free(b->keys);
	free(b->vals);
	free(b->keys2);
	free(b->vals2);
	free(b->tmp);
	free(b->next_key);
	memset(b, 0, sizeof(*b));
}

/* One element again, on its own; 0 also when it is gone. */
static int batch_one(struct probe_batch *b, int fd, const void *key, void *val,
		     probe_batch_fn fn, void *arg)
{
	uint64_t chunk_ns = b->read_ns;
	int err;

	if (b->stable)
		err = map_read_stable(fd, key, val, b->tmp, b->val_size, b->seq_off);
	else
		err = bpf_map_lookup_elem(fd, key, val) ? -errno : 0;
	if (err == -ENOENT)
		return 0;	/* deleted meanwhile */
	if (err) {
		/* One element (-EAGAIN: it kept changing) is not the read. */
		rxb_log_errno(RXB_LOG_DEBUG, -err, "probe: reading a map element; skipped");
		return 0;
	}
	b->read_ns = rxb_mono_ns();
	err = fn(arg, key, val);
	b->read_ns = chunk_ns;	/* the rest of its chunk */
	return err;
}

/* The element-by-element walk, for kernels without batch lookups. */
static int batch_walk(struct probe_batch *b, int fd, probe_batch_fn fn, void *arg)
{
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, b->next_key) == 0) {
		int err;

		memcpy(b->keys, b->next_key, b->key_size);
		prev = b->keys;
		err = batch_one(b, fd, b->keys, b->vals, fn, arg);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* The second copy of a chunk: do its elements agree with the first? */
static bool batch_same(const struct probe_batch *b, uint32_t i)
{
	const char *v = (const char *)b->vals + (size_t)i * b->val_size;
	uint32_t seq;

	if (memcmp((const char *)b->keys + (size_t)i * b->key_size,
		   (const char *)b->keys2 + (size_t)i * b->key_size, b->key_size))
		return false;
	memcpy(&seq, v + b->seq_off, sizeof(seq));
	return !(seq & 1) &&
	       !memcmp(v, (const char *)b->vals2 + (size_t)i * b->val_size, b->val_size);
}

static int batch_lookup(int fd, void *in, void *out, void *keys, void *vals,
			uint32_t *count)
{
	return bpf_map_lookup_batch(fd, in, out, keys, vals, count, NULL) ? -errno : 0;
}

int probe_batch_read(struct probe_batch *b, int fd, probe_batch_fn fn, void *arg)
{
	/* The kernel's batch token for hash maps is a bucket index (u32). */
	uint64_t in_tok = 0, out_tok = 0, out_tok2 = 0;
	bool first = true;

	if (b->unsupported)
		return batch_walk(b, fd, fn, arg);
	for (;;) {
		uint32_t n = b->chunk, n2 = b->chunk;
		bool end, same = true;
		int err;

		err = batch_lookup(fd, first ? NULL : &in_tok, &out_tok, b->keys,
				   b->vals, &n);
		if (err == -ENOSPC && b->chunk < PROBE_BATCH_MAX_CHUNK) {
			/* A bucket holds more than a chunk: a bigger one. */
			err = batch_alloc(b, b->chunk * 2);
			if (err)
				return err;
			continue;
		}
		if (err && err != -ENOENT) {
			if (first && (err == -EINVAL || err == -EOPNOTSUPP ||
				      err == -PROBE_KERNEL_ENOTSUPP)) {
				rxb_debug("probe: no batch lookups here (%s); walking maps",
					  strerror(-err));
				b->unsupported = true;
				return batch_walk(b, fd, fn, arg);
			}
			return err;
		}
		end = err == -ENOENT;
		if (b->stable && n) {
			err = batch_lookup(fd, first ? NULL : &in_tok, &out_tok2,
					   b->keys2, b->vals2, &n2);
			if (err && err != -ENOENT)
				return err;
			same = n2 == n;
		}
		b->read_ns = rxb_mono_ns();
		for (uint32_t i = 0; i < n; i++) {
			const char *key = (const char *)b->keys + (size_t)i * b->key_size;
			char *val = (char *)b->vals + (size_t)i * b->val_size;

			if (b->stable && !(same && batch_same(b, i)))
				err = batch_one(b, fd, key, val, fn, arg);
			else
				err = fn(arg, key, val);
			if (err)
				return err;
		}
		if (end)
			return 0;
		in_tok = out_tok;
		first = false;
	}
}
