// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model: the tagged customer's response-time quantiles and the
 * chain's export for PRISM (--export-prism). See model.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/model.h"
#include "solver/prism.h"
#include "solver/tagged.h"

static int file_write(void *ctx, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -EIO;
}

static int export_one(const char *prefix, enum prism_file file,
		      const struct prism_export *e, const struct prism_order *o)
{
	char path[4096];
	FILE *f;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s.%s", prefix,
			     prism_file_ext(file)) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f) {
		err = -errno;
		fprintf(stderr, CTL_PROG " " MODEL_CMD ": %s: %s\n", path, strerror(errno));
		return err;
	}
	err = prism_write(e, o, file, file_write, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, CTL_PROG " " MODEL_CMD ": writing %s: %s\n", path,
			strerror(-err));
	return err;
}

/*
 * The chain's arrival state fans out at q = 1000 x the fastest rate, so
 * PRISM's P=? [F<=t "absorbed"] is F(t) delayed by a mean of 1/q, far below
 * E[R]; the reward-based E[R] is exact whatever q is.
 */
static int export_prism(const char *prefix, const struct tagged_model *m,
			const struct tagged_chain *ch, double *q_out)
{
	struct prism_export e = {
		.net = &m->net, .sp = &ch->tag, .alpha = ch->alpha,
		.start_rate_per_s = 1e3 * ctmc_max_exit_rate(&ch->tag.chain),
	};
	struct prism_order ord;
	int err = prism_prepare(&e, &ord);

	if (err)
		return err;
	for (int file = 0; !err && file < PRISM_FILES; file++)
		err = export_one(prefix, file, &e, &ord);
	prism_finish(&ord);
	*q_out = e.start_rate_per_s;
	return err;
}

/* The integer net of the options: the uniprocessor net, or the SMP net (--cpus). */
static int tagged_model_of(const struct model_args *a, struct tagged_model *m)
{
	const struct tagged_smp_params p = {
		.ncpus = a->cpus,
		.cpu_bound = (uint32_t)a->stage.cpu_bound,
		.io_bound = (uint32_t)a->stage.io_bound,
		.rates = {
			.mu_pio_per_s = a->stage.mu_pio_per_s,
			.mu_disk_per_s = a->stage.mu_disk_per_s,
			.mu_net_per_s = a->stage.mu_net_per_s,
		},
		.migrate_per_s = a->balance_per_s,
	};

	if (a->cpus > 1)
		return tagged_smp_init(m, &p);
	return tagged_seed_init(m, p.cpu_bound, p.io_bound, &p.rates);
}

/* Response-time quantiles (and the export) need the integer net's chain. */
int model_prism_extras(const struct model_args *a, struct model_quantiles *qs,
		       double *prism_q, uint32_t *prism_states,
		       struct tagged_result *res_out)
{
	static const double ps[3] = { 0.5, 0.9, 0.99 };
	double ts[3];
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result res;
	int err;

	memset(qs, 0, sizeof(*qs));
	if (a->stage.load_independent ||
	    a->stage.cpu_bound != floor(a->stage.cpu_bound) ||
	    a->stage.io_bound != floor(a->stage.io_bound))
		return 0;
	err = tagged_model_of(a, &m);
	if (err)
		return model_solve_error("tagged-customer model", err);
	err = tagged_analyze(&m, NULL, &ch, &res);
	if (err) {
		tagged_model_finish(&m);
		return model_solve_error("tagged-customer model", err);
	}
	err = tagged_quantiles(&ch, ps, 3, res.mean_response_s, ts);
	qs->p50_s = ts[0];
	qs->p90_s = ts[1];
	qs->p99_s = ts[2];
	qs->valid = !err;
	if (err) {
		err = model_solve_error("response-time distribution", err);
	} else if (a->prism_prefix) {
		*prism_states = ch.tag.nstates + 1;
		err = export_prism(a->prism_prefix, &m, &ch, prism_q);
		err = err ? CTL_EXIT_FAIL : 0;
	}
	if (res_out)
		*res_out = res;
	tagged_chain_finish(&ch);
	tagged_model_finish(&m);
	return err;
}
