// SPDX-License-Identifier: GPL-2.0-or-later
/* The receive-buffer adaptation's document. See status_buffer.h. */
#include "daemon/serve/status_buffer.h"

#include <math.h>

#include "daemon/daemon.h"
#include "daemon/serve/status.h"

/* The owner the actuator found for @inode, if it looked. */
static const struct daemon_buffer_owner *owner_of(const struct daemon_buffer *db,
						  uint64_t inode)
{
	for (int i = 0; i < BUFFER_MAX_SOCKS; i++)
		if (db->owner[i].c.inode == inode && db->owner[i].c.found)
			return &db->owner[i];
	return NULL;
}

static void rrda_json(struct json_writer *w, const struct buffer_sock *x)
{
	const struct rrda_decision *d = &x->last;

	json_obj_begin(w, "rrda");
	if (!x->have_decision) {
		json_null(w, "f");
		json_str(w, "why", "no step yet");
		json_obj_end(w);
		return;
	}
	json_int(w, "f", d->f);
	json_str(w, "why", rrda_why_name(d->why));
	json_double(w, "v_b_bytes", d->vb_bytes);
	json_double(w, "ema_bytes", d->ema_bytes);
	json_double(w, "step_bytes", d->step_bytes);
	json_uint(w, "target_bytes", d->target_bytes);
	json_double(w, "mem_util", x->alpha);
	json_bool(w, "udp_mem_pressure", x->pressure);
	json_obj_end(w);
}

static void model_json(struct json_writer *w, const struct buffer_sock *x)
{
	const struct buffer_model_rec *m = &x->model;

	json_obj_begin(w, "model");
	json_bool(w, "valid", m->valid);
	if (!m->valid) {
		json_str(w, "why", m->why[0] ? m->why : "not sized yet");
		json_obj_end(w);
		return;
	}
	json_str(w, "criterion", m->by_time ? "time" : "loss");
	json_double(w, "rate_bps", m->rate_bps);
	json_uint(w, "queue_pkts", m->r.queue_pkts);
	json_double(w, "truesize_bytes", m->truesize_bytes);
	json_uint(w, "bytes", m->bytes);
	json_double(w, "loss", m->r.loss);
	json_double(w, "loss_at_ceiling", m->r.loss_at_max);
	if (m->by_time) {
		json_double(w, "time_s", m->r.time_s);
		json_double(w, "time_at_ceiling_s", m->r.time_ref_s);
	}
	json_uint(w, "evaluations", m->r.evaluations);
	json_obj_end(w);
}

static void last_change_json(struct json_writer *w, const struct buffer_sock *x, uint64_t now)
{
	if (!json_obj_begin_opt(w, "last_change", x->changes != 0))
		return;
	json_double(w, "age_s", status_age_s(x->last_change_ns, now));
	json_uint(w, "from_bytes", x->last_from_bytes);
	json_uint(w, "to_bytes", x->last_to_bytes);
	json_str(w, "reason", x->last_reason);
	json_obj_end(w);
}

static void socket_json(struct json_writer *w, const struct daemon_buffer *db,
			const struct buffer_sock *x, uint64_t now)
{
	const struct daemon_buffer_owner *o = owner_of(db, x->inode);

	json_obj_begin(w, NULL);
	json_uint(w, "port", x->port);
	json_uint(w, "inode", x->inode);
	json_uint(w, "uid", x->uid);
	if (json_obj_begin_opt(w, "owner", o != NULL)) {
		json_int(w, "pid", o->c.owner.pid);
		json_uint(w, "uid", o->c.owner.uid);
		json_str(w, "exe", o->c.owner.exe);
		json_bool(w, "allowed", o->c.allowed);
		json_obj_end(w);
	}
	json_uint(w, "rcvbuf_bytes", x->rcvbuf);
	json_uint(w, "held_bytes", x->rmem_alloc);
	json_uint(w, "recommend_bytes", x->recommend_bytes);
	json_uint(w, "floor_bytes", x->floor_bytes);
	json_double(w, "truesize_bytes", x->truesize_bytes);
	json_uint(w, "drops", x->drops_total);
	json_double(w, "mean_rcvbuf_bytes", x->steps ? x->rcvbuf_sum / (double)x->steps : NAN);
	json_uint(w, "peak_rcvbuf_bytes", x->rcvbuf_peak);
	json_double(w, "mean_held_bytes", x->steps ? x->rmem_sum / (double)x->steps : NAN);
	json_uint(w, "peak_held_bytes", x->rmem_peak);
	json_double(w, "watched_s", status_age_s(x->first_ns, now));
	rrda_json(w, x);
	model_json(w, x);
	json_uint(w, "changes", x->changes);
	last_change_json(w, x, now);
	json_str(w, "refused", x->act_err ? x->act_why : NULL);
	json_obj_end(w);
}

static void host_json(struct json_writer *w, const struct daemon_buffer *db)
{
	const struct procmem_snap *m = &db->mem;

	json_obj_begin(w, "host");
	json_double(w, "mem_util", m->mem_valid ? procmem_utilisation(&m->mem) : NAN);
	json_uint(w, "mem_available_bytes", m->mem.available_bytes);
	/* udp_mem not readable here (not the initial network namespace): null */
	json_uint_opt(w, "udp_mem_bytes", m->udp_valid, m->udp_mem_pages * m->page_bytes);
	json_uint_opt(w, "udp_mem_pressure_bytes", m->udp_valid,
		      m->udp_limit_pages[1] * m->page_bytes);
	json_bool_opt(w, "udp_mem_pressure", m->udp_valid, procmem_udp_pressure(m));
	json_uint(w, "rmem_max_bytes", m->rmem_max_bytes);
	json_bool(w, "force_refused", db->force_refused);
	json_uint(w, "kernel_max_bytes", db->set.kernel_max_bytes);
	json_obj_end(w);
}

void status_buffer_json(struct json_writer *w, const char *key, const struct daemon *d,
			uint64_t now)
{
	const struct daemon_buffer *db = &d->buf;
	const struct buffer_params *p = &db->set.p;

	json_obj_begin(w, key);
	json_str(w, "mode", buffer_mode_name(p->mode));
	json_str(w, "policy", buffer_policy_name(p->policy));
	json_double(w, "dt_ms", p->rrda.dt_s * 1e3);
	json_uint(w, "floor_bytes", p->rrda.floor_bytes);
	json_uint(w, "ceiling_bytes", p->rrda.ceiling_bytes);
	json_arr_begin(w, "allow_users");
	for (int i = 0; i < db->cfg.allow.nuids; i++)
		json_uint(w, NULL, db->cfg.allow.uids[i]);
	json_arr_end(w);
	json_arr_begin(w, "allow_exes");
	for (int i = 0; i < db->cfg.allow.nexes; i++)
		json_str(w, NULL, db->cfg.allow.exes[i]);
	json_arr_end(w);
	json_uint(w, "steps", db->steps);
	json_double(w, "step_us_mean", db->steps ? (double)db->step_ns_total / db->steps / 1e3 : NAN);
	json_double(w, "step_us_max", (double)db->step_ns_max / 1e3);
	json_uint(w, "changes", db->changes);
	json_uint(w, "refusals", db->refusals);
	json_uint(w, "failures", db->failures);
	json_uint(w, "sockets_not_followed", db->set.dropped_socks);
	host_json(w, db);
	json_arr_begin(w, "sockets");
	for (int i = 0; i < db->set.n; i++)
		socket_json(w, db, &db->set.v[i], now);
	json_arr_end(w);
	json_obj_end(w);
}
