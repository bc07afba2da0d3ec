// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model: the solver offline. Builds one stage's model inputs
 * from the command line - or a live flow's from rxbneckd (--from-status),
 * with any of them changed on the command line -, runs the bottleneck
 * computation (solver/bneck.h) and prints the result and the T(B) curve,
 * as text, one JSON object or CSV, and a figure (--plot). Optionally
 * sweeps Banerjee et al.'s Fig. 3 grid (--table) and exports the tagged-customer
 * chain for PRISM (--export-prism). Needs no privileges, and no daemon but
 * for --from-status; the other jobs are in the files ctl/model.h lists.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "common/util.h"
#include "ctl/ctl.h"
#include "ctl/model.h"
#include "ctl/plot.h"
#include "rxb/measure.h"
#include "solver/bneck.h"
#include "solver/offwin.h"
#include "solver/tagged.h"

#define CMD MODEL_CMD
#define PER_MS	1e3	/* the deprecated per-millisecond rate options */
#define MAX_OPTS	64	/* options on one command line */

/* Defaults: Banerjee et al.'s Table II host and experiment (docs/references.md). */
#define DEF_CPU_BOUND	1.0
#define DEF_IO_BOUND	0.0
#define DEF_MU_PIO	4600.0	/* per second, as every rate here */
#define DEF_MU_DISK	1010.0
#define DEF_MU_NET	41600.0
#define DEF_QUEUE	64
#define DEF_BATCH	6
#define DEF_PAYLOAD	1468.0
#define DEF_FILE	500e6
#define DEF_DELAY_MS	100.0
#define DEF_LINE_BPS	1e9
#define DEF_POINTS	1000
#define DEF_ROWS	20
#define DEF_BALANCE	1000.0	/* --balance-per-s */
#define MAX_CPUS	64	/* tagged_smp_init()'s limit */


enum {
	OPT_CPU = 256, OPT_IO, OPT_MU_PIO, OPT_MU_DISK, OPT_MU_NET,
	OPT_LOAD_INDEP, OPT_QUEUE, OPT_BATCH, OPT_RULE, OPT_PAYLOAD, OPT_FILE,
	OPT_DELAY, OPT_LINE, OPT_MIN, OPT_POINTS, OPT_JSON, OPT_TABLE,
	OPT_ROWS, OPT_PRISM, OPT_ROUNDS, OPT_LOSS_MODEL, OPT_IRQ, OPT_EPISODE, OPT_MU_NET_FULL,
	OPT_RATE_SD, OPT_MU_NET_S, OPT_MU_NET_FULL_S, OPT_MU_PIO_S, OPT_MU_DISK_S,
	OPT_FROM_STATUS, OPT_SOCKET, OPT_STATUS_FILE, OPT_PLOT, OPT_CSV, OPT_CPUS, OPT_BALANCE,
	OPT_OFFCPU, OPT_OFFCPU_GAP, OPT_WAKE, OPT_WAKE_MAX, OPT_SEEN, OPT_RELEASE, OPT_SAT_DRAIN,
	OPT_SAT_ARRIVALS,
	OPT_EPISODES_WIN, OPT_QUOTA, OPT_SLACK,
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
	{ "time-slack", required_argument, NULL, OPT_SLACK },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "loss-model", required_argument, NULL, OPT_LOSS_MODEL },
	{ "offcpu-windows", required_argument, NULL, OPT_OFFCPU },
	{ "offcpu-gap-ms", required_argument, NULL, OPT_OFFCPU_GAP },
	{ "wake-windows", required_argument, NULL, OPT_WAKE },
	{ "wake-max-ms", required_argument, NULL, OPT_WAKE_MAX },
	{ "windows-seen-pps", required_argument, NULL, OPT_SEEN },
	{ "queue-release-pkts", required_argument, NULL, OPT_RELEASE },
	{ "saturated-drain-pps", required_argument, NULL, OPT_SAT_DRAIN },
	{ "saturated-drain-arrivals-pps", required_argument, NULL, OPT_SAT_ARRIVALS },
	{ "episodes-from-windows", no_argument, NULL, OPT_EPISODES_WIN },
	{ "quota-phases", required_argument, NULL, OPT_QUOTA },
	{ "loss-episode-pkts", required_argument, NULL, OPT_EPISODE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "curve-rows", required_argument, NULL, OPT_ROWS },
	{ "export-prism", required_argument, NULL, OPT_PRISM },
	{ "mu-net-per-s", required_argument, NULL, OPT_MU_NET_S },
	{ "mu-net-full-per-s", required_argument, NULL, OPT_MU_NET_FULL_S },
	{ "mu-pio-per-s", required_argument, NULL, OPT_MU_PIO_S },
	{ "mu-disk-per-s", required_argument, NULL, OPT_MU_DISK_S },
	{ "from-status", required_argument, NULL, OPT_FROM_STATUS },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "status-file", required_argument, NULL, OPT_STATUS_FILE },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "balance-per-s", required_argument, NULL, OPT_BALANCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, CTL_PROG " " CMD ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try '" CTL_PROG " " CMD " --help')\n");
	return CTL_EXIT_USAGE;
}

static const char *opt_name(int id)
{
	if (id == 's')
		return "socket";
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
	a->stage.mu_pio_per_s = DEF_MU_PIO;
	a->stage.mu_disk_per_s = DEF_MU_DISK;
	a->stage.mu_net_per_s = DEF_MU_NET;
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
	a->cpus = 1;
	a->balance_per_s = DEF_BALANCE;
}

/* A rate per second. */
static int parse_rate(int id, const char *s, double *per_s)
{
	int err = rxb_parse_si(s, 1e-6, 1e15, per_s);

	return err ? bad_value(id, s, err) : 0;
}

/*
 * The options of old, per millisecond: still taken, converted, with a note
 * naming the option that says per second (the unit status shows).
 */
static int parse_rate_ms(int id, const char *s, double *per_s)
{
	double v;
	int err = rxb_parse_double(s, 1e-9, 1e12, &v);

	if (err)
		return bad_value(id, s, err);
	*per_s = v * PER_MS;
	fprintf(stderr, CTL_PROG " " CMD ": --%s is per millisecond and deprecated: "
		"this is --%s-per-s %.6g (rates are per second, as in 'rxbneckctl status')\n",
		opt_name(id), opt_name(id), *per_s);
	return 0;
}

/*
 * A packet count: a whole number, or a mean as status prints it ("91.0",
 * "1.3"), rounded to the nearest whole packet as the daemon does when it
 * solves (at least 1).
 */
static int parse_pkts(int id, const char *s, uint32_t *out)
{
	double v;
	int err = rxb_parse_double(s, 0.5, (double)(1u << 30), &v);

	if (err)
		return bad_value(id, s, err);
	*out = (uint32_t)llround(v);
	return 0;
}

/*
 * A window histogram (--offcpu-windows, --wake-windows):
 * PER_S/SLOT:COUNT[:MEAN_NS:SD_NS],... as status prints it, onto @per_s,
 * @hist and the slots' moments (RXB_OFFCPU_SLOTS slots).
 */
static int parse_windows_opt(int id, const char *s, double *per_s, double *hist,
			     double *mean_s, double *sd_s)
{
	if (!offwin_parse(s, per_s, hist, mean_s, sd_s, RXB_OFFCPU_SLOTS))
		return 0;
	return usage_error("--%s: expected PER_S/SLOT:COUNT[:MEAN_NS:SD_NS],... "
			   "(slots 0-%d, numbers >= 0, each slot once): '%s'",
			   opt_name(id), RXB_OFFCPU_SLOTS - 1, s);
}

/*
 * --quota-phases PERIOD_MS:SLOW_MS:SLOW_SHARE[:FAST_SHARE] onto @in
 * (solver/qphase.h; the fast share 1 when not given).
 */
static int parse_quota_opt(int id, const char *s, struct rxb_stage_inputs *in)
{
	static const double max[4] = { 1e7, 1e7, 1.0, 1.0 };
	double v[4] = { 0.0, 0.0, 0.0, 1.0 };
	char buf[128], *field, *save = NULL;
	int n = 0, err;

	if (strlen(s) >= sizeof(buf))
		return usage_error("--%s: too long: '%.32s...'", opt_name(id), s);
	strcpy(buf, s);
	for (field = strtok_r(buf, ":", &save); field; field = strtok_r(NULL, ":", &save)) {
		if (n == 4)
			return usage_error("--%s: expected PERIOD_MS:SLOW_MS:SLOW_SHARE"
					   "[:FAST_SHARE]: '%s'", opt_name(id), s);
		err = rxb_parse_double(field, n < 2 ? 1e-6 : 1e-9, max[n], &v[n]);
		if (err)
			return bad_value(id, s, err);
		n++;
	}
	if (n < 3)
		return usage_error("--%s: expected PERIOD_MS:SLOW_MS:SLOW_SHARE[:FAST_SHARE]: '%s'",
				   opt_name(id), s);
	if (v[1] > v[0] || v[3] < v[2])
		return usage_error("--%s: the slow phase must fit in the period and the fast "
				   "share be at least the slow one: '%s'", opt_name(id), s);
	in->quota_period_s = v[0] / 1e3;
	in->quota_slow_s = v[1] / 1e3;
	in->quota_slow_share = v[2];
	in->quota_fast_share = v[3];
	return 0;
}

/* One word an option like --rounds takes, and what it stands for. */
struct choice {
	const char *word;
	int value;
};

/* *@value: the value of the word @s among the @n @choices of option @id;
 * else a usage error that lists the words. */
static int parse_choice(int id, const char *s, const struct choice *choices, size_t n,
			int *value)
{
	char words[128] = "";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(s, choices[i].word)) {
			*value = choices[i].value;
			return 0;
		}
	}
	for (size_t i = 0; i < n && len < sizeof(words); i++)
		len += (size_t)snprintf(words + len, sizeof(words) - len, "%s'%s'",
					!i ? "" : i == n - 1 ? " or " : ", ", choices[i].word);
	return usage_error("--%s: expected %s: '%s'", opt_name(id), words, s);
}

static const struct choice rounds_choices[] = {
	{ "burst", BNECK_ROUNDS_BURST }, { "seed", BNECK_ROUNDS_SEED },
};
static const struct choice loss_choices[] = {
	{ "queue", BNECK_LOSS_QUEUE }, { "spread", BNECK_LOSS_SPREAD },
	{ "windows", BNECK_LOSS_WINDOWS }, { "service", BNECK_LOSS_SERVICE },
};
static const struct choice rule_choices[] = {
	{ "partial", RXB_BATCH_PARTIAL }, { "strict", RXB_BATCH_STRICT },
};

/* The options that take a word: the enum field of struct model_args it sets. */
static const struct choice_opt {
	int id;
	const struct choice *choices;
	size_t n;
	size_t field;
} choice_opts[] = {
#define CHOICE(ID, CHOICES, F) \
	{ ID, CHOICES, RXB_ARRAY_SIZE(CHOICES), offsetof(struct model_args, F) }
	CHOICE(OPT_RULE, rule_choices, stage.rule),
	CHOICE(OPT_ROUNDS, rounds_choices, x.rounds),
	CHOICE(OPT_LOSS_MODEL, loss_choices, x.loss_model),
#undef CHOICE
};

/* choice_opts[] stores an int into each of these. */
_Static_assert(sizeof(enum rxb_batch_rule) == sizeof(int), "enum rxb_batch_rule is an int");
_Static_assert(sizeof(enum bneck_rounds) == sizeof(int), "enum bneck_rounds is an int");
_Static_assert(sizeof(enum bneck_loss) == sizeof(int), "enum bneck_loss is an int");

/* Options that choose the output rather than an input of the model. */
static bool output_opt(int id)
{
	return id == OPT_JSON || id == OPT_CSV || id == OPT_PLOT || id == OPT_ROWS ||
	       id == OPT_TABLE || id == OPT_PRISM;
}

/* --plot FILE: .png or .svg, the format matplotlib writes. */
static int parse_plot(struct model_args *a, const char *s)
{
	if (!plot_path_ok(s))
		return usage_error("--plot: '%s' does not end in .png or .svg", s);
	a->plot_path = s;
	return 0;
}

/*
 * The options that set one number of struct model_args within bounds: a
 * plain number, or with SI suffixes (k M G T Ki Mi ...) where @si, stored
 * divided by @div (milliseconds to seconds) into a double, or into a
 * uint32_t where @whole.
 */
static const struct num_opt {
	int id;
	bool si, whole;
	double min, max, div;
	size_t field;
} num_opts[] = {
#define NUM(ID, SI, MIN, MAX, DIV, F) \
	{ ID, SI, false, MIN, MAX, DIV, offsetof(struct model_args, F) }
#define WHOLE(ID, MIN, MAX, F) \
	{ ID, false, true, MIN, MAX, 1.0, offsetof(struct model_args, F) }
	NUM(OPT_CPU, false, 0.0, TAGGED_MAX_TASKS - 1, 1.0, stage.cpu_bound),
	NUM(OPT_IO, false, 0.0, TAGGED_MAX_TASKS - 1, 1.0, stage.io_bound),
	NUM(OPT_IRQ, false, 0.0, 1e9, 1.0, stage.irq_ns_per_pkt),
	NUM(OPT_RATE_SD, false, 0.0, 1.0, 1.0, stage.mu_rel_sd),
	NUM(OPT_OFFCPU_GAP, false, 0.0, 1e7, 1e3, stage.offcpu_gap_s),
	NUM(OPT_WAKE_MAX, false, 0.0, 1e7, 1e3, stage.wake_max_s),
	NUM(OPT_SEEN, false, 0.0, 1e12, 1.0, stage.windows_seen_pps),
	NUM(OPT_RELEASE, false, 0.0, 1e9, 1.0, stage.queue_release_pkts),
	NUM(OPT_SAT_DRAIN, false, 0.0, 1e12, 1.0, stage.sat_drain_pkts_per_s),
	NUM(OPT_SAT_ARRIVALS, false, 0.0, 1e12, 1.0, stage.sat_drain_arrivals_pps),
	NUM(OPT_PAYLOAD, true, 1.0, 65507.0, 1.0, x.payload_bytes),	/* a UDP datagram */
	NUM(OPT_FILE, true, 1.0, 1e18, 1.0, x.file_bytes),
	NUM(OPT_EPISODE, false, 1.0, 1e12, 1.0, x.loss_episode_pkts),
	NUM(OPT_SLACK, false, 0.0, 1.0, 1.0, x.time_slack_rel),
	NUM(OPT_DELAY, false, 0.0, 1e7, 1e3, x.one_way_delay_s),
	NUM(OPT_LINE, true, 1.0, 1e15, 1.0, x.line_rate_bps),
	NUM(OPT_MIN, true, 1.0, 1e15, 1.0, x.min_rate_bps),
	NUM(OPT_BALANCE, true, 0.0, 1e15, 1.0, balance_per_s),
	WHOLE(OPT_POINTS, 2, 1000000, x.points),
	WHOLE(OPT_ROWS, 0, 1000000, curve_rows),
	WHOLE(OPT_CPUS, 1, MAX_CPUS, cpus),
#undef NUM
#undef WHOLE
};

static int parse_num_opt(struct model_args *a, const struct num_opt *o, const char *s)
{
	void *field = (char *)a + o->field;
	uint64_t u = 0;
	double d = 0.0;
	int err;

	if (o->whole)
		err = rxb_parse_u64(s, (uint64_t)o->min, (uint64_t)o->max, &u);
	else if (o->si)
		err = rxb_parse_si(s, o->min, o->max, &d);
	else
		err = rxb_parse_double(s, o->min, o->max, &d);
	if (err)
		return bad_value(o->id, s, err);
	if (o->whole)
		*(uint32_t *)field = (uint32_t)u;
	else
		*(double *)field = d / o->div;
	return 0;
}

/* The service-rate options: per second, or (deprecated) per millisecond. */
static int parse_rate_opt(struct model_args *a, int id, const char *s)
{
	static const struct {
		int per_s, per_ms;
		size_t field;
	} rates[] = {
		{ OPT_MU_PIO_S, OPT_MU_PIO, offsetof(struct rxb_stage_inputs, mu_pio_per_s) },
		{ OPT_MU_DISK_S, OPT_MU_DISK, offsetof(struct rxb_stage_inputs, mu_disk_per_s) },
		{ OPT_MU_NET_S, OPT_MU_NET, offsetof(struct rxb_stage_inputs, mu_net_per_s) },
		{ OPT_MU_NET_FULL_S, OPT_MU_NET_FULL,
		  offsetof(struct rxb_stage_inputs, mu_net_full_per_s) },
	};

	for (size_t i = 0; i < RXB_ARRAY_SIZE(rates); i++) {
		double *v = (double *)((char *)&a->stage + rates[i].field);

		if (id == rates[i].per_s)
			return parse_rate(id, s, v);
		if (id == rates[i].per_ms)
			return parse_rate_ms(id, s, v);
	}
	return usage_error("internal: rate option %d", id);
}

static int parse_one(struct model_args *a, int id, const char *s)
{
	for (size_t i = 0; i < RXB_ARRAY_SIZE(num_opts); i++)
		if (id == num_opts[i].id)
			return parse_num_opt(a, &num_opts[i], s);
	for (size_t i = 0; i < RXB_ARRAY_SIZE(choice_opts); i++) {
		const struct choice_opt *o = &choice_opts[i];

		if (id == o->id)
			return parse_choice(id, s, o->choices, o->n, (int *)((char *)a + o->field));
	}
	switch (id) {
	case OPT_MU_PIO:
	case OPT_MU_DISK:
	case OPT_MU_NET:
	case OPT_MU_NET_FULL:
	case OPT_MU_PIO_S:
	case OPT_MU_DISK_S:
	case OPT_MU_NET_S:
	case OPT_MU_NET_FULL_S:
		return parse_rate_opt(a, id, s);
	case OPT_OFFCPU:
		return parse_windows_opt(id, s, &a->stage.offcpu_per_s, a->stage.offcpu_hist,
					 a->stage.offcpu_mean_s, a->stage.offcpu_sd_s);
	case OPT_WAKE:
		return parse_windows_opt(id, s, &a->stage.wake_per_s, a->stage.wake_hist,
					 a->stage.wake_mean_s, a->stage.wake_sd_s);
	case OPT_QUOTA:
		return parse_quota_opt(id, s, &a->stage);
	case OPT_QUEUE:
		return parse_pkts(id, s, &a->stage.queue_pkts);
	case OPT_BATCH:
		return parse_pkts(id, s, &a->stage.batch_pkts);
	case OPT_PRISM:
		if (!*s)
			return usage_error("--export-prism: empty prefix");
		a->prism_prefix = s;
		return 0;
	case OPT_PLOT:
		return parse_plot(a, s);
	}
	return usage_error("internal: option %d", id);
}

/* One option of the command line onto @a (after --from-status, if given). */
static int apply_opt(struct model_args *a, int id, const char *arg)
{
	struct model_live *l = &a->live;
	size_t n = strlen(l->overridden);

	if (l->used && !output_opt(id) && n + 1 < sizeof(l->overridden))
		snprintf(l->overridden + n, sizeof(l->overridden) - n, "%s--%s%s%s", n ? " " : "",
			 opt_name(id), arg ? " " : "", arg ? arg : "");
	switch (id) {
	case OPT_LOAD_INDEP:
		a->stage.load_independent = true;
		return 0;
	case OPT_MIN:	/* its value below; not derived from --line-rate-bps */
		a->min_rate_set = true;
		break;
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_TABLE:
		a->table = true;
		return 0;
	case OPT_CSV:
		a->csv = true;
		return 0;
	case OPT_EPISODES_WIN:
		a->x.episodes_from_windows = true;
		return 0;
	}
	return parse_one(a, id, arg);
}

struct opt_seen {
	int id;
	const char *arg;
};

/*
 * --from-status with a load given on top (--cpu-bound, --io-bound) and no
 * windows: the measured off-CPU windows hold the co-runners' turns at the
 * load they were measured at, not the one asked about, so they are
 * dropped and the stage is the shared queue at the new load (what the
 * daemon solves without windows). Windows given on top stay.
 */
static void live_drop_windows(struct model_args *a, const struct opt_seen *seen, int n)
{
	bool load = false;

	if (!a->live.used || !(a->stage.offcpu_per_s > 0.0 || a->stage.wake_per_s > 0.0))
		return;
	for (int i = 0; i < n; i++) {
		if (seen[i].id == OPT_OFFCPU || seen[i].id == OPT_WAKE) {
			a->nbands = 0;	/* the windows given hold at every rate */
			return;
		}
		load |= seen[i].id == OPT_CPU || seen[i].id == OPT_IO;
	}
	if (!load)
		return;
	a->stage.offcpu_per_s = 0.0;
	a->stage.wake_per_s = 0.0;
	memset(a->stage.offcpu_hist, 0, sizeof(a->stage.offcpu_hist));
	memset(a->stage.offcpu_mean_s, 0, sizeof(a->stage.offcpu_mean_s));
	memset(a->stage.offcpu_sd_s, 0, sizeof(a->stage.offcpu_sd_s));
	memset(a->stage.wake_hist, 0, sizeof(a->stage.wake_hist));
	memset(a->stage.wake_mean_s, 0, sizeof(a->stage.wake_mean_s));
	memset(a->stage.wake_sd_s, 0, sizeof(a->stage.wake_sd_s));
	a->stage.offcpu_gap_s = 0.0;
	a->stage.wake_max_s = 0.0;
	a->stage.windows_seen_pps = 0.0;
	a->nbands = 0;
	a->live.windows_dropped = true;
}

/*
 * --from-status of a solve that took its loss episodes from the windows,
 * with --loss-model queue or spread given on top: those models have no
 * windows to take them from, so the solve takes the measured episode
 * size as the daemon does with them. --episodes-from-windows given on
 * top stays (and check_args() refuses the pair).
 */
static void live_drop_episodes(struct model_args *a, const struct opt_seen *seen, int n)
{
	if (!a->live.used || !a->x.episodes_from_windows ||
	    a->x.loss_model == BNECK_LOSS_WINDOWS || a->x.loss_model == BNECK_LOSS_SERVICE)
		return;
	for (int i = 0; i < n; i++)
		if (seen[i].id == OPT_EPISODES_WIN)
			return;
	a->x.episodes_from_windows = false;
	a->live.episodes_dropped = true;
}

/* The checks of the whole command line; -1 to go on, or an exit code. */
static int check_args(struct model_args *a)
{
	if (!a->min_rate_set)
		a->x.min_rate_bps = a->x.line_rate_bps / 100.0;
	if (!(a->x.min_rate_bps < a->x.line_rate_bps))
		return usage_error("--min-rate-bps (%g) must be below --line-rate-bps (%g)",
				   a->x.min_rate_bps, a->x.line_rate_bps);
	if (a->stage.mu_net_full_per_s > a->stage.mu_net_per_s)
		return usage_error("--mu-net-full-per-s (%g/s) exceeds --mu-net-per-s (%g/s): a full queue is not served faster",
				   a->stage.mu_net_full_per_s, a->stage.mu_net_per_s);
	if (a->x.loss_episode_pkts > 0.0 && a->x.rounds != BNECK_ROUNDS_BURST)
		return usage_error("--loss-episode-pkts needs --rounds burst (seed rounds lose a fraction, not episodes)");
	if (a->x.episodes_from_windows &&
	    (a->x.rounds != BNECK_ROUNDS_BURST ||
	     (a->x.loss_model != BNECK_LOSS_WINDOWS && a->x.loss_model != BNECK_LOSS_SERVICE)))
		return usage_error("--episodes-from-windows needs --rounds burst and --loss-model windows or service");
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
	if (a->cpus > 1 && (a->stage.load_independent || a->table || a->has_front ||
			    a->stage.mu_net_full_per_s > 0 ||
			    a->stage.cpu_bound != floor(a->stage.cpu_bound) ||
			    a->stage.io_bound != floor(a->stage.io_bound)))
		return usage_error("--cpus %u needs integer --cpu-bound and --io-bound, and neither --load-independent, --table, --from-status nor --mu-net-full-per-s",
				   a->cpus);
	if (a->csv && (a->json || a->table))
		return usage_error("--csv cannot be combined with --json or --table");
	if (a->plot_path && a->table)
		return usage_error("--plot cannot be combined with --table");
	return -1;
}

/*
 * Returns -1 to go on, or an exit code. The options are applied in the
 * order given, on top of the defaults or, with --from-status, of the live
 * flow's inputs: so any one of those can be changed.
 */
static int parse_args(int argc, char **argv, struct model_args *a)
{
	struct opt_seen seen[MAX_OPTS];
	const char *socket = NULL, *status_file = NULL;
	uint64_t port = 0;
	int c, err, n = 0;

	defaults(a);
	opterr = 0;
	optind = 1;
	/* -s as before the command (rxbneckctl -s PATH model ...), as --socket */
	while ((c = getopt_long(argc, argv, ":hs:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			model_help();
			return CTL_EXIT_OK;
		case ':':
			return usage_error("--%s needs a value", opt_name(optopt));
		case '?':
			return usage_error("unknown option '%s'", argv[optind - 1]);
		case OPT_FROM_STATUS:
			err = rxb_parse_u64(optarg, 1, 65535, &port);
			if (err)
				return bad_value(c, optarg, err);
			break;
		case 's':
		case OPT_SOCKET:
			if (!optarg[0])
				return usage_error("--socket: empty path");
			socket = optarg;
			break;
		case OPT_STATUS_FILE:
			if (!optarg[0])
				return usage_error("--status-file: empty path");
			status_file = optarg;
			break;
		default:
			if (n == MAX_OPTS)
				return usage_error("more than %d options", MAX_OPTS);
			seen[n].id = c;
			seen[n++].arg = optarg;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if ((socket || status_file) && !port)
		return usage_error("--%s is for --from-status", socket ? "socket" : "status-file");
	if (socket && status_file)
		return usage_error("--socket and --status-file: the status comes from one of them");
	if (port) {
		err = status_file ? model_live_load_file(a, status_file, (uint16_t)port) :
		      model_live_load(a, socket, (uint16_t)port);
		if (err)
			return err;
	}
	for (int i = 0; i < n; i++) {
		err = apply_opt(a, seen[i].id, seen[i].arg);
		if (err)
			return err;
	}
	live_drop_windows(a, seen, n);
	live_drop_episodes(a, seen, n);
	return check_args(a);
}

/* ------------------------------------------------------------- running -- */

uint32_t model_stages(const struct model_args *a, struct rxb_stage_inputs *out)
{
	uint32_t n = 0;

	if (a->has_front)
		out[n++] = a->front;
	out[n++] = a->stage;
	return n;
}

int model_solve_error(const char *what, int err)
{
	fprintf(stderr, CTL_PROG " " CMD ": %s failed: %s\n", what, strerror(-err));
	return CTL_EXIT_FAIL;
}

static int run_smp(struct model_args *a, struct bneck_ws *ws);

bool model_bands_used(const struct model_args *a)
{
	return a->nbands >= 2 && a->nbands <= BNECK_MAX_PIECES && a->cpus <= 1 &&
	       (a->x.loss_model == BNECK_LOSS_WINDOWS || a->x.loss_model == BNECK_LOSS_SERVICE);
}

/*
 * The solve: over the windows by rate where --from-status brought them and
 * the loss model takes windows (as rxbneckd solves), else in one piece.
 */
static int solve(const struct model_args *a, struct bneck_ws *ws, struct bneck_result *r)
{
	struct rxb_stage_inputs one[BNECK_MAX_STAGES];
	uint32_t n = model_stages(a, one);

	if (!model_bands_used(a))
		return bneck_compute(ws, one, n, &a->x, NULL, r);
	return bneck_compute_windows(ws, one, n, a->band_win, a->band_at_bps, a->nbands, &a->x,
				     NULL, r, NULL);
}
static int outputs(const struct model_args *a, const struct bneck_result *r,
		   const struct model_quantiles *qs, double prism_q,
		   uint32_t prism_states, int ret);

/* The solve and every output asked for. */
static int run(struct model_args *a, struct bneck_ws *ws)
{
	struct model_quantiles qs = { 0 };
	struct bneck_result r;
	double prism_q = 0.0;
	uint32_t prism_states = 0;
	int ret, err;

	if (a->cpus > 1)
		return run_smp(a, ws);
	err = solve(a, ws, &r);
	if (err)
		return model_solve_error("bottleneck computation", err);
	ret = a->has_front ? 0 : model_prism_extras(a, &qs, &prism_q, &prism_states,
						    NULL);
	return outputs(a, &r, &qs, prism_q, prism_states, ret);
}

/*
 * --cpus P > 1: the SMP net's analysis first; its rate goes to the queue as
 * a given (load-independent) rate, its figures into the result.
 */
static int run_smp(struct model_args *a, struct bneck_ws *ws)
{
	struct model_quantiles qs = { 0 };
	struct tagged_result smp;
	struct rxb_stage_inputs st;
	struct bneck_result r;
	double prism_q = 0.0;
	uint32_t prism_states = 0;
	int ret, err;

	ret = model_prism_extras(a, &qs, &prism_q, &prism_states, &smp);
	if (ret)
		return ret;
	st = a->stage;
	st.load_independent = true;
	st.mu_net_per_s = smp.service_rate_per_s;
	err = bneck_compute(ws, &st, 1, &a->x, NULL, &r);
	if (err)
		return model_solve_error("bottleneck computation", err);
	r.stage[0].tagged_used = true;
	r.stage[0].tagged = smp;
	r.model_rel_err = smp.rel_err;
	return outputs(a, &r, &qs, prism_q, prism_states, 0);
}

/* Every output asked for, unless @ret already failed. */
static int outputs(const struct model_args *a, const struct bneck_result *r,
		   const struct model_quantiles *qs, double prism_q,
		   uint32_t prism_states, int ret)
{
	if (!ret && a->plot_path)
		ret = model_plot_write(a, r);
	if (ret)
		return ret;
	if (a->csv)
		return model_out_csv(r);
	if (a->json)
		return model_out_json(a, r, qs, prism_q, prism_states);
	return model_out_text(a, r, qs, prism_states);
}

int cmd_model(int argc, char **argv)
{
	struct model_args a;
	struct bneck_ws ws;
	int ret, err;

	ret = parse_args(argc, argv, &a);
	if (ret >= 0)
		return ret;
	err = bneck_ws_init(&ws, a.x.points);
	if (err)
		return model_solve_error("workspace", err);
	ret = a.table ? model_out_table(&a, &ws) : run(&a, &ws);
	bneck_ws_finish(&ws);
	return ret;
}
