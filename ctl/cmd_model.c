// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model: the solver offline. Builds one stage's model inputs
 * from the command line, runs the bottleneck computation (solver/bneck.h)
 * and prints the result and the T(B) curve, as text or one JSON object.
 * Optionally sweeps the seed's Fig. 3 grid (--table) and exports the
 * tagged-customer chain for PRISM (--export-prism). Needs no daemon and no
 * privileges; all file I/O of the solver's output happens here.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/parse.h"
#include "common/util.h"
#include "ctl/ctl.h"
#include "rxb/measure.h"
#include "solver/bneck.h"
#include "solver/prism.h"
#include "solver/tagged.h"

#define CMD "model"
#define PER_MS	1e3	/* rates on the command line are per millisecond */

/* Defaults: the seeds' Table II and experiment (DESIGN §5, last paragraph). */
#define DEF_CPU_BOUND	1.0
#define DEF_IO_BOUND	0.0
#define DEF_MU_PIO	4.6
#define DEF_MU_DISK	1.01
#define DEF_MU_NET	41.6
#define DEF_QUEUE	64
#define DEF_BATCH	6
#define DEF_PAYLOAD	1468.0
#define DEF_FILE	500e6
#define DEF_DELAY_MS	100.0
#define DEF_LINE_BPS	1e9
#define DEF_POINTS	1000
#define DEF_ROWS	20

/* The seed's Fig. 3 grid for --table. */
#define TABLE_C_MIN	1
#define TABLE_C_MAX	4
#define TABLE_I_MIN	0
#define TABLE_I_MAX	3

struct model_args {
	struct rxb_stage_inputs stage;
	struct bneck_xfer x;
	bool min_rate_set;
	bool json;
	bool table;
	uint32_t curve_rows;
	const char *prism_prefix;
};

enum {
	OPT_CPU = 256, OPT_IO, OPT_MU_PIO, OPT_MU_DISK, OPT_MU_NET,
	OPT_LOAD_INDEP, OPT_QUEUE, OPT_BATCH, OPT_RULE, OPT_PAYLOAD, OPT_FILE,
	OPT_DELAY, OPT_LINE, OPT_MIN, OPT_POINTS, OPT_JSON, OPT_TABLE,
	OPT_ROWS, OPT_PRISM, OPT_ROUNDS, OPT_IRQ, OPT_EPISODE, OPT_MU_NET_FULL,
	OPT_RATE_SD,
};

static const struct option long_opts[] = {
	{ "cpu-bound", required_argument, NULL, OPT_CPU },
	{ "io-bound", required_argument, NULL, OPT_IO },
	{ "mu-pio", required_argument, NULL, OPT_MU_PIO },
	{ "mu-disk", required_argument, NULL, OPT_MU_DISK },
	{ "mu-net", required_argument, NULL, OPT_MU_NET },
	{ "mu-net-full", required_argument, NULL, OPT_MU_NET_FULL },
	{ "load-independent", no_argument, NULL, OPT_LOAD_INDEP },
	{ "irq-ns-per-pkt", required_argument, NULL, OPT_IRQ },
	{ "rate-rel-sd", required_argument, NULL, OPT_RATE_SD },
	{ "queue-pkts", required_argument, NULL, OPT_QUEUE },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "batch-rule", required_argument, NULL, OPT_RULE },
	{ "payload", required_argument, NULL, OPT_PAYLOAD },
	{ "file-bytes", required_argument, NULL, OPT_FILE },
	{ "one-way-delay-ms", required_argument, NULL, OPT_DELAY },
	{ "line-rate-bps", required_argument, NULL, OPT_LINE },
	{ "min-rate-bps", required_argument, NULL, OPT_MIN },
	{ "points", required_argument, NULL, OPT_POINTS },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "loss-episode-pkts", required_argument, NULL, OPT_EPISODE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "curve-rows", required_argument, NULL, OPT_ROWS },
	{ "export-prism", required_argument, NULL, OPT_PRISM },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void help(void)
{
	fputs(
"Usage: " CTL_PROG " model [OPTIONS]\n"
"\n"
"Compute, offline, the effective bottleneck rate of a receiving host: the\n"
"sending rate that minimises the RBUDP transfer time of a file, given the\n"
"work on the receiver's CPU and the receive queue. No daemon and no\n"
"privileges are needed. The model (docs/model.md):\n"
"  1. a stochastic reward net of the CPU (processor sharing) with #C\n"
"     CPU-bound tasks and #I I/O-bound tasks cycling CPU <-> FCFS disk;\n"
"     the receiver's batch is a tagged customer, E[R] its mean response\n"
"     time and mu = 1/E[R] the queue's service rate;\n"
"  2. the receive queue as M/M[N]/1/K: loss l(B) at sending rate B;\n"
"  3. the RBUDP transfer time T(B) (seed eq. 2-3; resend rounds counted\n"
"     per --rounds), minimised over B.\n"
"Every option has a default; the defaults are the seeds' Table II host\n"
"and experiment (500 MB over a 1 Gb/s path with 100 ms one-way delay).\n"
"Sizes and rates accept SI suffixes: k M G T (x1000) and Ki Mi Gi Ti (x1024).\n"
"\n"
"Workload on the receiver's CPU:\n"
"  --cpu-bound N         #C, CPU-bound tasks sharing the CPU; may be\n"
"                        fractional (time-weighted): E[R] is interpolated\n"
"                        between the neighbouring integer models. Default 1.\n"
"  --io-bound N          #I, I/O-bound tasks; fractional as above. Default 0.\n"
"  --mu-pio R            CPU burst rate of an I/O-bound task running alone,\n"
"                        per ms (mu_P-I/O). Default 4.6.\n"
"  --mu-disk R           disk service rate, per ms (mu_D). Default 1.01.\n"
"  --mu-net R            rate at which the receiver drains one batch when\n"
"                        alone on the CPU, per ms (mu_P-Net). Default 41.6.\n"
"  --mu-net-full R       the same once the queue has overflowed, when lower\n"
"                        (a receiver behind reads out of cache): rates\n"
"                        above what it keeps up with at --mu-net are served\n"
"                        at R, per ms. Default: --mu-net throughout.\n"
"  --load-independent    the queue is drained by softirq work that preempts\n"
"                        tasks (stage A): use --mu-net as the service rate,\n"
"                        skip the tagged-customer model (#C, #I, --mu-pio and\n"
"                        --mu-disk are then unused).\n"
"  --irq-ns-per-pkt NS   interrupt time (softirq of the receive path: RPS,\n"
"                        or the NIC's IRQ on this CPU) spent on the\n"
"                        receiver's CPU per arriving packet, ns: at rate B\n"
"                        the receiver keeps 1 - B/(8 S_pkt) x NS of its\n"
"                        rate (at least 5 %). Default 0: the softirq runs\n"
"                        elsewhere.\n"
"  --rate-rel-sd SD      the service rate is uncertain by this relative\n"
"                        standard deviation (0-1, a lognormal factor): the\n"
"                        rate chosen minimises the transfer time expected\n"
"                        over it (docs/model.md 3.3). Default 0: exact.\n"
"\n"
"Receive queue:\n"
"  --queue-pkts K        capacity in packets. Default 64.\n"
"  --batch N             packets taken per service (coalescing factor,\n"
"                        packets per wake-up). Default 6.\n"
"  --batch-rule RULE     'strict': a service needs N queued packets and takes\n"
"                        N (the seeds' Petri net); 'partial': takes\n"
"                        min(queued, N). Default strict.\n"
"\n"
"Transfer:\n"
"  --payload BYTES       payload bytes per packet (S_pkt). Default 1468.\n"
"  --file-bytes BYTES    file size (S_total). Default 500M (500000000).\n"
"  --one-way-delay-ms MS one-way propagation delay. Default 100.\n"
"  --line-rate-bps BPS   line rate, top of the rate sweep, bits/s.\n"
"                        Default 1G.\n"
"  --min-rate-bps BPS    bottom of the rate sweep, bits/s. Default 1% of the\n"
"                        line rate.\n"
"  --points N            rates in the sweep (evenly spaced, both ends\n"
"                        included); the best is then refined. Default 1000.\n"
"  --rounds MODEL        how resend rounds are counted: 'seed': every round\n"
"                        loses the same fraction l, ln(S_pkt/S)/ln(l) rounds\n"
"                        (seed eq. 3); 'burst': each round is a burst into\n"
"                        an empty queue that absorbs part of it (a round of\n"
"                        n loses n l - c) and ends when the receiver has\n"
"                        emptied it again, the daemon's default ([model]\n"
"                        rounds). Default seed, as the other defaults.\n"
"  --loss-episode-pkts M with --rounds burst: packets lost per loss episode\n"
"                        on average (a queue overflowing while the receiver\n"
"                        is off its CPU loses a run of packets). A round\n"
"                        then happens with probability min(1, n/M) when n\n"
"                        packets are expected lost, not min(1, n). 1 (the\n"
"                        default) = packets lost one by one; M >= 1.\n"
"\n"
"Output:\n"
"  --json                print one JSON object instead of text: at least\n"
"                        bottleneck_rate_bps, loss_at_bottleneck,\n"
"                        transfer_time_s, mean_response_s (E[R], seconds),\n"
"                        service_rate_per_s (1/E[R]), and curve, a list of\n"
"                        {rate_bps, loss, time_s, n_resend} for every swept\n"
"                        rate.\n"
"  --curve-rows N        rows of the curve in the text output, evenly\n"
"                        spaced (0: all). Default 20.\n"
"  --table               sweep #C = 1..4 and #I = 0..3 (the seeds' Fig. 3)\n"
"                        and print the bottleneck rate of each; --cpu-bound\n"
"                        and --io-bound are ignored.\n"
"  --export-prism PREFIX write the tagged-customer chain - the CTMC from the\n"
"                        receiver batch's arrival (in the steady state of the\n"
"                        background tasks) to its completion - in PRISM's\n"
"                        explicit format: PREFIX.tra, PREFIX.sta, PREFIX.lab\n"
"                        and PREFIX.srew (time reward). Needs integer\n"
"                        --cpu-bound and --io-bound. Check E[R] with\n"
"                          prism -importmodel PREFIX.tra,sta,lab -ctmc \\\n"
"                            -importstaterewards PREFIX.srew \\\n"
"                            -pf 'R=? [ F \"absorbed\" ]'\n"
"  -h, --help            this text.\n"
"\n"
"Exit status: 0 success, 1 the model could not be solved or a file could\n"
"not be written, 2 bad usage (the message names the option).\n"
"\n"
"Example: " CTL_PROG " model --cpu-bound 2 --io-bound 1 --json\n", stdout);
}

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, CTL_PROG " " CMD ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see " CTL_PROG " " CMD " --help)\n");
	return CTL_EXIT_USAGE;
}

static const char *opt_name(int id)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == id)
			return o->name;
	return "?";
}

static int bad_value(int id, const char *val, int err)
{
	return usage_error("--%s: %s: '%s'", opt_name(id),
			   rxb_parse_strerror(err), val);
}

static void defaults(struct model_args *a)
{
	memset(a, 0, sizeof(*a));
	a->stage.cpu_bound = DEF_CPU_BOUND;
	a->stage.io_bound = DEF_IO_BOUND;
	a->stage.mu_pio_per_s = DEF_MU_PIO * PER_MS;
	a->stage.mu_disk_per_s = DEF_MU_DISK * PER_MS;
	a->stage.mu_net_per_s = DEF_MU_NET * PER_MS;
	a->stage.queue_pkts = DEF_QUEUE;
	a->stage.batch_pkts = DEF_BATCH;
	a->stage.rule = RXB_BATCH_STRICT;
	a->x.payload_bytes = DEF_PAYLOAD;
	a->x.file_bytes = DEF_FILE;
	a->x.one_way_delay_s = DEF_DELAY_MS / 1e3;
	a->x.line_rate_bps = DEF_LINE_BPS;
	a->x.points = DEF_POINTS;
	a->x.rounds = BNECK_ROUNDS_SEED;
	a->curve_rows = DEF_ROWS;
}

/* A rate per ms from the command line into per second. */
static int parse_rate_ms(int id, const char *s, double *per_s)
{
	double v;
	int err = rxb_parse_double(s, 1e-9, 1e12, &v);

	if (err)
		return bad_value(id, s, err);
	*per_s = v * PER_MS;
	return 0;
}

static int parse_one(struct model_args *a, int id, const char *s)
{
	uint64_t u;
	double d;
	int err;

	switch (id) {
	case OPT_CPU:
	case OPT_IO:
		err = rxb_parse_double(s, 0.0, TAGGED_MAX_TASKS - 1, &d);
		if (err)
			return bad_value(id, s, err);
		*(id == OPT_CPU ? &a->stage.cpu_bound : &a->stage.io_bound) = d;
		return 0;
	case OPT_MU_PIO:
		return parse_rate_ms(id, s, &a->stage.mu_pio_per_s);
	case OPT_MU_DISK:
		return parse_rate_ms(id, s, &a->stage.mu_disk_per_s);
	case OPT_MU_NET:
		return parse_rate_ms(id, s, &a->stage.mu_net_per_s);
	case OPT_MU_NET_FULL:
		return parse_rate_ms(id, s, &a->stage.mu_net_full_per_s);
	case OPT_IRQ:
		err = rxb_parse_double(s, 0.0, 1e9, &a->stage.irq_ns_per_pkt);
		return err ? bad_value(id, s, err) : 0;
	case OPT_RATE_SD:
		err = rxb_parse_double(s, 0.0, 1.0, &a->stage.mu_rel_sd);
		return err ? bad_value(id, s, err) : 0;
	case OPT_QUEUE:
	case OPT_BATCH:
		err = rxb_parse_u64(s, 1, 1u << 30, &u);
		if (err)
			return bad_value(id, s, err);
		*(id == OPT_QUEUE ? &a->stage.queue_pkts : &a->stage.batch_pkts) =
			(uint32_t)u;
		return 0;
	case OPT_RULE:
		if (!strcmp(s, "partial"))
			a->stage.rule = RXB_BATCH_PARTIAL;
		else if (!strcmp(s, "strict"))
			a->stage.rule = RXB_BATCH_STRICT;
		else
			return usage_error("--batch-rule: expected 'partial' or 'strict': '%s'", s);
		return 0;
	case OPT_ROUNDS:
		if (!strcmp(s, "burst"))
			a->x.rounds = BNECK_ROUNDS_BURST;
		else if (!strcmp(s, "seed"))
			a->x.rounds = BNECK_ROUNDS_SEED;
		else
			return usage_error("--rounds: expected 'burst' or 'seed': '%s'", s);
		return 0;
	case OPT_PAYLOAD:
		err = rxb_parse_si(s, 1.0, 1e9, &a->x.payload_bytes);
		return err ? bad_value(id, s, err) : 0;
	case OPT_FILE:
		err = rxb_parse_si(s, 1.0, 1e18, &a->x.file_bytes);
		return err ? bad_value(id, s, err) : 0;
	case OPT_EPISODE:
		err = rxb_parse_double(s, 1.0, 1e12, &a->x.loss_episode_pkts);
		return err ? bad_value(id, s, err) : 0;
	case OPT_DELAY:
		err = rxb_parse_double(s, 0.0, 1e7, &d);
		if (err)
			return bad_value(id, s, err);
		a->x.one_way_delay_s = d / 1e3;
		return 0;
	case OPT_LINE:
		err = rxb_parse_si(s, 1.0, 1e15, &a->x.line_rate_bps);
		return err ? bad_value(id, s, err) : 0;
	case OPT_MIN:
		err = rxb_parse_si(s, 1.0, 1e15, &a->x.min_rate_bps);
		a->min_rate_set = true;
		return err ? bad_value(id, s, err) : 0;
	case OPT_POINTS:
		err = rxb_parse_u64(s, 2, 1000000, &u);
		if (err)
			return bad_value(id, s, err);
		a->x.points = (uint32_t)u;
		return 0;
	case OPT_ROWS:
		err = rxb_parse_u64(s, 0, 1000000, &u);
		if (err)
			return bad_value(id, s, err);
		a->curve_rows = (uint32_t)u;
		return 0;
	case OPT_PRISM:
		if (!*s)
			return usage_error("--export-prism: empty prefix");
		a->prism_prefix = s;
		return 0;
	}
	return usage_error("internal: option %d", id);
}

/* Returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, struct model_args *a)
{
	int c, err;

	defaults(a);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			help();
			return CTL_EXIT_OK;
		case OPT_LOAD_INDEP:
			a->stage.load_independent = true;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_TABLE:
			a->table = true;
			break;
		case ':':
			return usage_error("--%s needs a value", opt_name(optopt));
		case '?':
			return usage_error("unknown option '%s'", argv[optind - 1]);
		default:
			err = parse_one(a, c, optarg);
			if (err)
				return err;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!a->min_rate_set)
		a->x.min_rate_bps = a->x.line_rate_bps / 100.0;
	if (!(a->x.min_rate_bps < a->x.line_rate_bps))
		return usage_error("--min-rate-bps (%g) must be below --line-rate-bps (%g)",
				   a->x.min_rate_bps, a->x.line_rate_bps);
	if (a->stage.mu_net_full_per_s > a->stage.mu_net_per_s)
		return usage_error("--mu-net-full (%g/ms) exceeds --mu-net (%g/ms): a full queue is not served faster",
				   a->stage.mu_net_full_per_s / PER_MS, a->stage.mu_net_per_s / PER_MS);
	if (a->x.loss_episode_pkts > 0.0 && a->x.rounds != BNECK_ROUNDS_BURST)
		return usage_error("--loss-episode-pkts needs --rounds burst (seed rounds lose a fraction, not episodes)");
	if (a->stage.rule == RXB_BATCH_STRICT &&
	    a->stage.batch_pkts > a->stage.queue_pkts)
		return usage_error("--batch (%u) exceeds --queue-pkts (%u): a strict server would never fire",
				   a->stage.batch_pkts, a->stage.queue_pkts);
	if (a->prism_prefix && a->stage.load_independent)
		return usage_error("--export-prism: a --load-independent stage has no tagged-customer chain");
	if (a->prism_prefix && a->table)
		return usage_error("--export-prism cannot be combined with --table");
	if (a->prism_prefix &&
	    (a->stage.cpu_bound != floor(a->stage.cpu_bound) ||
	     a->stage.io_bound != floor(a->stage.io_bound)))
		return usage_error("--export-prism needs integer --cpu-bound and --io-bound (a fractional count interpolates between two chains)");
	return -1;
}

/* ------------------------------------------------------------- running -- */

struct quantiles {
	bool valid;
	double p50_s, p90_s, p99_s;
};

static const char *rule_name(enum rxb_batch_rule r)
{
	return r == RXB_BATCH_STRICT ? "strict" : "partial";
}

static int solve_error(const char *what, int err)
{
	fprintf(stderr, CTL_PROG " " CMD ": %s failed: %s\n", what,
		strerror(-err));
	return CTL_EXIT_FAIL;
}

static int file_write(void *ctx, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -EIO;
}

typedef int (*prism_writer)(const struct prism_export *,
			    const struct prism_order *, prism_write_fn, void *);

static int export_one(const char *prefix, const char *ext, prism_writer fn,
		      const struct prism_export *e, const struct prism_order *o)
{
	char path[4096];
	FILE *f;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s.%s", prefix, ext) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f) {
		err = -errno;
		fprintf(stderr, CTL_PROG " " CMD ": %s: %s\n", path, strerror(errno));
		return err;
	}
	err = fn(e, o, file_write, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, CTL_PROG " " CMD ": writing %s: %s\n", path,
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
	err = export_one(prefix, "tra", prism_write_tra, &e, &ord);
	if (!err)
		err = export_one(prefix, "sta", prism_write_sta, &e, &ord);
	if (!err)
		err = export_one(prefix, "lab", prism_write_lab, &e, &ord);
	if (!err)
		err = export_one(prefix, "srew", prism_write_srew, &e, &ord);
	prism_finish(&ord);
	*q_out = e.start_rate_per_s;
	return err;
}

/* Response-time quantiles (and the export) need the integer net's chain. */
static int tagged_extras(const struct model_args *a, struct quantiles *qs,
			 double *prism_q, uint32_t *prism_states)
{
	const struct tagged_rates r = {
		.mu_pio_per_s = a->stage.mu_pio_per_s,
		.mu_disk_per_s = a->stage.mu_disk_per_s,
		.mu_net_per_s = a->stage.mu_net_per_s,
	};
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result res;
	int err;

	memset(qs, 0, sizeof(*qs));
	if (a->stage.load_independent ||
	    a->stage.cpu_bound != floor(a->stage.cpu_bound) ||
	    a->stage.io_bound != floor(a->stage.io_bound))
		return 0;
	err = tagged_seed_init(&m, (uint32_t)a->stage.cpu_bound,
			       (uint32_t)a->stage.io_bound, &r);
	if (err)
		return solve_error("tagged-customer model", err);
	err = tagged_analyze(&m, NULL, &ch, &res);
	if (err) {
		tagged_model_finish(&m);
		return solve_error("tagged-customer model", err);
	}
	err = tagged_quantile(&ch, 0.5, res.mean_response_s, &qs->p50_s);
	if (!err)
		err = tagged_quantile(&ch, 0.9, res.mean_response_s, &qs->p90_s);
	if (!err)
		err = tagged_quantile(&ch, 0.99, res.mean_response_s, &qs->p99_s);
	qs->valid = !err;
	if (err) {
		err = solve_error("response-time distribution", err);
	} else if (a->prism_prefix) {
		*prism_states = ch.tag.nstates + 1;
		err = export_prism(a->prism_prefix, &m, &ch, prism_q);
		err = err ? CTL_EXIT_FAIL : 0;
	}
	tagged_chain_finish(&ch);
	tagged_model_finish(&m);
	return err;
}

/* ------------------------------------------------------------- output -- */

static void json_inputs(struct json_writer *w, const struct model_args *a)
{
	json_obj_begin(w, "inputs");
	json_double(w, "cpu_bound", a->stage.cpu_bound);
	json_double(w, "io_bound", a->stage.io_bound);
	json_double(w, "mu_pio_per_s", a->stage.mu_pio_per_s);
	json_double(w, "mu_disk_per_s", a->stage.mu_disk_per_s);
	json_double(w, "mu_net_per_s", a->stage.mu_net_per_s);
	json_double(w, "mu_net_full_per_s", a->stage.mu_net_full_per_s > 0 ?
		  a->stage.mu_net_full_per_s : a->stage.mu_net_per_s);
	json_bool(w, "load_independent", a->stage.load_independent);
	json_double(w, "irq_ns_per_pkt", a->stage.irq_ns_per_pkt);
	json_double(w, "mu_rel_sd", a->stage.mu_rel_sd);
	json_uint(w, "queue_pkts", a->stage.queue_pkts);
	json_uint(w, "batch_pkts", a->stage.batch_pkts);
	json_str(w, "batch_rule", rule_name(a->stage.rule));
	json_double(w, "payload_bytes", a->x.payload_bytes);
	json_double(w, "file_bytes", a->x.file_bytes);
	json_double(w, "one_way_delay_s", a->x.one_way_delay_s);
	json_double(w, "line_rate_bps", a->x.line_rate_bps);
	json_double(w, "min_rate_bps", a->x.min_rate_bps);
	json_uint(w, "points", a->x.points);
	json_str(w, "rounds", bneck_rounds_name(a->x.rounds));
	json_double(w, "loss_episode_pkts", a->x.loss_episode_pkts > 1.0 ? a->x.loss_episode_pkts : 1.0);
	json_obj_end(w);
}

static void json_stat(struct json_writer *w, const char *key, const struct ctmc_stat *s)
{
	json_obj_begin(w, key);
	json_str(w, "method", ctmc_method_name(s->method));
	json_uint(w, "iterations", s->iterations);
	json_double(w, "residual", s->residual);
	json_double(w, "error_bound", s->err_bound);
	json_obj_end(w);
}

static int print_json(struct json_writer *w)
{
	int ok = json_ok(w);

	if (ok)
		printf("%s\n", json_text(w));
	else
		fprintf(stderr, CTL_PROG " " CMD ": out of memory writing JSON\n");
	json_finish(w);
	return ok ? CTL_EXIT_OK : CTL_EXIT_FAIL;
}

static int output_json(const struct model_args *a, const struct bneck_result *r,
		       const struct quantiles *qs, double prism_q,
		       uint32_t prism_states)
{
	const struct bneck_stage *s = &r->stage[0];
	struct json_writer w;

	json_init(&w, false);
	json_obj_begin(&w, NULL);
	json_inputs(&w, a);
	json_double(&w, "bottleneck_rate_bps", r->rate_bps);
	json_double(&w, "loss_at_bottleneck", r->loss);
	json_double(&w, "ln_loss_at_bottleneck", r->ln_loss);
	json_double(&w, "transfer_time_s", r->time_s);
	json_double(&w, "n_resend", r->breakdown.n_resend);
	json_double(&w, "resend_rounds", r->breakdown.resend_rounds);
	json_double(&w, "resend_pkts", r->breakdown.resend_pkts);
	json_double(&w, "drain_s", r->breakdown.drain_s);
	json_double(&w, "absorb_pkts", s->absorb_pkts);
	json_double(&w, "mean_response_s", s->mean_response_s);
	json_double(&w, "service_rate_per_s", s->service_rate_per_s);
	json_double(&w, "capacity_bps", s->capacity_bps);
	json_double(&w, "capacity_full_bps", s->capacity_full_bps > 0 ?
		  s->capacity_full_bps : s->capacity_bps);
	json_double(&w, "line_rate_loss", r->line_loss);
	json_double(&w, "line_rate_time_s", r->line_time_s);
	if (qs->valid) {
		json_obj_begin(&w, "response_quantiles_s");
		json_double(&w, "p50", qs->p50_s);
		json_double(&w, "p90", qs->p90_s);
		json_double(&w, "p99", qs->p99_s);
		json_obj_end(&w);
	}
	json_obj_begin(&w, "numerics");
	json_double(&w, "loss_rel_error", r->loss_rel_err);
	json_double(&w, "mean_response_rel_error", r->model_rel_err);
	json_uint(&w, "evaluations", r->evaluations);
	if (s->tagged_used) {
		json_uint(&w, "background_states", s->tagged.bg_states);
		json_uint(&w, "tagged_states", s->tagged.tag_states);
		json_stat(&w, "steady_state", &s->tagged.steady);
		json_stat(&w, "absorption", &s->tagged.absorb);
	}
	json_obj_end(&w);
	if (a->prism_prefix) {
		json_obj_begin(&w, "prism_export");
		json_str(&w, "prefix", a->prism_prefix);
		json_uint(&w, "states", prism_states);
		json_double(&w, "start_rate_per_s", prism_q);
		json_double(&w, "expected_reward_s", s->mean_response_s);
		json_obj_end(&w);
	}
	json_arr_begin(&w, "curve");
	for (uint32_t i = 0; i < r->npoints; i++) {
		json_obj_begin(&w, NULL);
		json_double(&w, "rate_bps", r->curve[i].rate_bps);
		json_double(&w, "loss", r->curve[i].loss);
		json_double(&w, "time_s", r->curve[i].time_s);
		json_double(&w, "n_resend", r->curve[i].n_resend);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	return print_json(&w);
}

static void print_inputs(const struct model_args *a)
{
	const struct rxb_stage_inputs *s = &a->stage;

	if (s->load_independent)
		printf("Service    load-independent: mu = %g batches/ms\n",
		       s->mu_net_per_s / PER_MS);
	else
		printf("Workload   #C %g  #I %g on the receiver's CPU\n"
		       "           mu_P-I/O %g/ms  mu_D %g/ms  mu_P-Net %g/ms\n",
		       s->cpu_bound, s->io_bound, s->mu_pio_per_s / PER_MS,
		       s->mu_disk_per_s / PER_MS, s->mu_net_per_s / PER_MS);
	if (s->irq_ns_per_pkt > 0)
		printf("           interrupts take %g ns of its CPU per arriving packet\n",
		       s->irq_ns_per_pkt);
	if (s->mu_rel_sd > 0)
		printf("           its rate uncertain by %g (relative sd): T is expected over it\n",
		       s->mu_rel_sd);
	printf("Queue      K %u pkts  N %u pkts  rule %s\n", s->queue_pkts,
	       s->batch_pkts, rule_name(s->rule));
	printf("Transfer   payload %g B  file %.0f B  one-way delay %g ms\n",
	       a->x.payload_bytes, a->x.file_bytes, a->x.one_way_delay_s * 1e3);
	printf("Sweep      %g .. %g Mb/s, %u points; %s rounds", a->x.min_rate_bps / 1e6,
	       a->x.line_rate_bps / 1e6, a->x.points, bneck_rounds_name(a->x.rounds));
	if (a->x.loss_episode_pkts > 1.0)
		printf(", %g packets per loss episode", a->x.loss_episode_pkts);
	putchar('\n');
}

static void print_curve(const struct model_args *a, const struct bneck_result *r)
{
	uint32_t n = r->npoints, rows = a->curve_rows;
	bool marked = false;

	if (!rows || rows > n)
		rows = n;
	printf("\n  %12s  %12s  %10s\n", "rate Mb/s", "loss", "time s");
	for (uint32_t k = 0; k < rows; k++) {
		uint32_t i = rows == 1 ? n - 1 :
			     (uint32_t)((uint64_t)k * (n - 1) / (rows - 1));
		const struct bneck_point *p = &r->curve[i];

		if (!marked && p->rate_bps >= r->rate_bps) {
			printf("  %12.3f  %12.4g  %10.4f  <- bottleneck\n",
			       r->rate_bps / 1e6, r->loss, r->time_s);
			marked = true;
			if (p->rate_bps == r->rate_bps)
				continue;
		}
		printf("  %12.3f  %12.4g  %10.4f\n", p->rate_bps / 1e6, p->loss,
		       p->time_s);
	}
}

static int output_text(const struct model_args *a, const struct bneck_result *r,
		       const struct quantiles *qs, double prism_q,
		       uint32_t prism_states)
{
	const struct bneck_stage *s = &r->stage[0];

	print_inputs(a);
	printf("\nService    E[R] %.4g us", s->mean_response_s * 1e6);
	if (qs->valid)
		printf("  (median %.4g us, p90 %.4g us, p99 %.4g us)",
		       qs->p50_s * 1e6, qs->p90_s * 1e6, qs->p99_s * 1e6);
	printf("\n           mu = 1/E[R] = %.4f batches/ms: drains %.1f Mb/s\n",
	       s->service_rate_per_s / PER_MS, s->capacity_bps / 1e6);
	if (s->capacity_full_bps > 0)
		printf("           once its queue has overflowed: drains %.1f Mb/s\n",
		       s->capacity_full_bps / 1e6);
	printf("Bottleneck %.1f Mb/s   loss %.3g   transfer time %.4f s\n",
	       r->rate_bps / 1e6, r->loss, r->time_s);
	printf("           (resend rounds %.3g, emptying the queue %.1f ms; at the line rate: loss %.3g, %.4f s)\n",
	       r->breakdown.n_resend, r->breakdown.drain_s * 1e3, r->line_loss,
	       r->line_time_s);
	if (s->tagged_used)
		printf("Numerics   background chain %u states (%s, residual %.1e), tagged chain %u states (%s)\n"
		       "           E[R] rel. error <= %.1e, loss rel. error <= %.1e, %u evaluations of T(B)\n",
		       s->tagged.bg_states, ctmc_method_name(s->tagged.steady.method),
		       s->tagged.steady.residual, s->tagged.tag_states,
		       ctmc_method_name(s->tagged.absorb.method), r->model_rel_err,
		       r->loss_rel_err, r->evaluations);
	else
		printf("Numerics   loss rel. error <= %.1e, %u evaluations of T(B)\n",
		       r->loss_rel_err, r->evaluations);
	if (a->prism_prefix)
		printf("PRISM      %s.{tra,sta,lab,srew}: %u states; R=? [ F \"absorbed\" ] should give %.10g s\n",
		       a->prism_prefix, prism_states, s->mean_response_s);
	(void)prism_q;
	print_curve(a, r);
	return CTL_EXIT_OK;
}

static int run_table(struct model_args *a, struct bneck_ws *ws)
{
	struct bneck_result r[TABLE_C_MAX + 1][TABLE_I_MAX + 1];
	struct json_writer w;
	int err;

	for (int c = TABLE_C_MIN; c <= TABLE_C_MAX; c++) {
		for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++) {
			a->stage.cpu_bound = c;
			a->stage.io_bound = i;
			err = bneck_compute(ws, &a->stage, 1, &a->x, NULL, &r[c][i]);
			if (err)
				return solve_error("bottleneck computation", err);
		}
	}
	if (a->json) {
		json_init(&w, false);
		json_obj_begin(&w, NULL);
		json_inputs(&w, a);
		json_arr_begin(&w, "table");
		for (int c = TABLE_C_MIN; c <= TABLE_C_MAX; c++) {
			for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++) {
				json_obj_begin(&w, NULL);
				json_int(&w, "cpu_bound", c);
				json_int(&w, "io_bound", i);
				json_double(&w, "bottleneck_rate_bps", r[c][i].rate_bps);
				json_double(&w, "loss_at_bottleneck", r[c][i].loss);
				json_double(&w, "transfer_time_s", r[c][i].time_s);
				json_double(&w, "mean_response_s",
					  r[c][i].stage[0].mean_response_s);
				json_double(&w, "service_rate_per_s",
					  r[c][i].stage[0].service_rate_per_s);
				json_obj_end(&w);
			}
		}
		json_arr_end(&w);
		json_obj_end(&w);
		return print_json(&w);
	}
	a->stage.cpu_bound = NAN;
	printf("Effective bottleneck rate, Mb/s (seed Fig. 3 grid)\n"
	       "  mu_P-I/O %g/ms  mu_D %g/ms  mu_P-Net %g/ms  K %u  N %u (%s)\n"
	       "  file %.0f B, one-way delay %g ms, line %g Mb/s\n\n",
	       a->stage.mu_pio_per_s / PER_MS, a->stage.mu_disk_per_s / PER_MS,
	       a->stage.mu_net_per_s / PER_MS, a->stage.queue_pkts,
	       a->stage.batch_pkts, rule_name(a->stage.rule), a->x.file_bytes,
	       a->x.one_way_delay_s * 1e3, a->x.line_rate_bps / 1e6);
	printf("  %-6s", "");
	for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++)
		printf("  %5s=%d", "#I", i);
	printf("\n");
	for (int c = TABLE_C_MIN; c <= TABLE_C_MAX; c++) {
		printf("  #C=%-3d", c);
		for (int i = TABLE_I_MIN; i <= TABLE_I_MAX; i++)
			printf("  %7.1f", r[c][i].rate_bps / 1e6);
		printf("\n");
	}
	return CTL_EXIT_OK;
}

int cmd_model(int argc, char **argv)
{
	struct model_args a;
	struct bneck_ws ws;
	struct bneck_result r;
	struct quantiles qs = { 0 };
	double prism_q = 0.0;
	uint32_t prism_states = 0;
	int ret, err;

	ret = parse_args(argc, argv, &a);
	if (ret >= 0)
		return ret;
	err = bneck_ws_init(&ws, a.x.points);
	if (err)
		return solve_error("workspace", err);
	if (a.table) {
		ret = run_table(&a, &ws);
		bneck_ws_finish(&ws);
		return ret;
	}
	err = bneck_compute(&ws, &a.stage, 1, &a.x, NULL, &r);
	if (err) {
		bneck_ws_finish(&ws);
		return solve_error("bottleneck computation", err);
	}
	ret = tagged_extras(&a, &qs, &prism_q, &prism_states);
	if (!ret)
		ret = a.json ? output_json(&a, &r, &qs, prism_q, prism_states)
			     : output_text(&a, &r, &qs, prism_q, prism_states);
	bneck_ws_finish(&ws);
	return ret;
}
