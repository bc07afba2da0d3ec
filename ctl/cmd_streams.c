// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl streams: how many parallel TCP streams to use. From a running
 * rxbneckd, the samples it holds per peer (passive, from the transfers it
 * saw arrive, and from senders' STREAMS_SAMPLE frames) with the fit and
 * the advice; or offline, with no daemon, the fit of a samples file
 * (ctl/streams_csv.h) by the models of Yildirim, Yin and Kosar
 * (solver/streams_fit.h). Both make the same JSON document
 * (daemon/model/streams_doc.h), shown by ctl/view/view_streams.c and drawn
 * by rxbneck-plot-streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/parse.h"
#include "common/util.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/plot.h"
#include "ctl/streams_csv.h"
#include "ctl/view/answer.h"
#include "ctl/view/view.h"
#include "ctl/view/view_streams.h"
#include "daemon/model/streams_doc.h"

#define CMD		"streams"
#define DEF_MAX_N	64
#define DEF_TOLERANCE	0.02
#define DEF_RISE	0.05
#define PLOT_SCRIPT	"rxbneck-plot-streams"
#define PLOT_ENV	"RXBNECK_PLOT_STREAMS"

struct streams_args {
	const char *samples;		/* --samples FILE: offline */
	const char *peer;		/* PEER: one peer of the daemon's */
	const char *plot;
	struct ctl_client_opts co;	/* -s, -j, -v, -t */
	bool expo;
	double rise;
	struct streams_fit_opts fo;
};

static const char help_text[] =
"Usage: " CTL_PROG " streams [PEER] [-j] [-v] [--plot FILE] [-s PATH] [-t S]\n"
"       " CTL_PROG " streams --samples FILE [--expo] [OPTIONS]\n"
"\n"
"How many parallel TCP streams a bulk transfer should open, after\n"
"Yildirim, Yin and Kosar's models of the throughput of n streams (Dinda\n"
"et al., full second order, Newton's iteration a'n^c'+b', logarithmic,\n"
"break function, averaging, packet loss, Hacker et al.): every model is\n"
"fitted to the samples (n, throughput) by their Best-Fitted Coefficients\n"
"search, coefficients that break their propositions are rejected, and\n"
"the model closest to the samples gives the curve. The advice is the\n"
"fewest streams predicted within the tolerance of the curve's best, and\n"
"never more than the receiving host can drain (rxbneckd's receiver cap).\n"
"\n"
"From rxbneckd: every peer it holds samples for (transfers to this host\n"
"it saw, one sample per interval with n connections active from the\n"
"peer's address to the same local port; and senders' STREAMS_SAMPLE\n"
"frames), with its fit and advice; PEER (ADDRESS, or ADDRESS:PORT,\n"
"[IPv6]:PORT for the local port) shows only that one.\n"
"\n"
"Offline (no daemon): --samples FILE, lines of n,throughput_bps.\n"
"  --samples FILE      the samples; n a whole number, the throughput in\n"
"                      bits/s (SI suffixes: 950M); '#' comments, a header\n"
"                      line and repeated n (averaged) are fine.\n"
"  --expo              use only the exponential samples, n = 1, 2, 4, 8,\n"
"                      ... up to where the throughput stopped rising (the\n"
"                      paper's sampling strategy); says which n is next\n"
"                      when the file lacks it.\n"
"  --rise F            --expo stops when a doubling gains less than F\n"
"                      (default 0.05).\n"
"  --max-n N           the curve from 1 to N streams (default 64; the\n"
"                      largest sample if that is more).\n"
"  --tolerance F       advise the fewest streams within F of the best\n"
"                      predicted (default 0.02).\n"
"  --cap-bps R         what the receiver can drain, bits/s: no advice\n"
"                      above it (default none).\n"
"  --models LIST       only these models (comma-separated): hacker, dinda,\n"
"                      loss, log, newton, full2, break, avg-arith,\n"
"                      avg-geom, avg-quad (default all).\n"
"\n"
"Output (both):\n"
"  -j, --json          the JSON document (docs/CONTROL.md, streams).\n"
"  -v, --verbose       every model's error and the whole curve.\n"
"  --plot FILE         the samples and the predicted curve, the advice\n"
"                      marked, into FILE.png or FILE.svg (python3-\n"
"                      matplotlib, by rxbneck-plot-streams); one peer.\n"
CTL_CLIENT_OPTIONS_HELP
"\n"
"Exit status: 0 ok, 1 the daemon could not be reached, answered an error,\n"
"or the samples could not be fitted or read, 2 bad usage.\n"
"\n"
"Examples: " CTL_PROG " streams 192.0.2.7:5201\n"
"          " CTL_PROG " streams --samples sweep.csv --expo --plot s.png\n";

enum { OPT_SAMPLES = 256, OPT_EXPO, OPT_RISE, OPT_MAX_N, OPT_TOL, OPT_CAP, OPT_MODELS, OPT_PLOT };

/* "dinda,newton" into a model mask. */
static int parse_models(const char *s, uint32_t *mask)
{
	char buf[256], *save = NULL;

	if (rxb_strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		return ctl_client_usage(CMD, "--models: too long");
	*mask = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int m = streams_model_from_name(t);

		if (m <= 0)
			return ctl_client_usage(CMD, "--models: unknown model '%s'", t);
		*mask |= 1u << m;
	}
	return *mask ? 0 : ctl_client_usage(CMD, "--models: no model in '%s'", s);
}

static int parse_num(const char *opt, const char *s, double min, double max, double *out)
{
	int err = rxb_parse_si(s, min, max, out);

	return err ? ctl_client_usage(CMD, "%s: %s: '%s'", opt, rxb_parse_strerror(err), s) : 0;
}

static int parse_opt(struct streams_args *a, int c, const char *arg)
{
	uint64_t u;
	double d;

	switch (c) {
	case OPT_SAMPLES:
		a->samples = arg;
		return 0;
	case OPT_EXPO:
		a->expo = true;
		return 0;
	case OPT_RISE:
		return parse_num("--rise", arg, 0, 10, &a->rise);
	case OPT_MAX_N:
		if (rxb_parse_u64(arg, 1, STREAMS_N_LIMIT, &u))
			return ctl_client_usage(CMD, "--max-n: '%s' is not a whole number in 1..%d", arg,
					   STREAMS_N_LIMIT);
		a->fo.n_max = (uint32_t)u;
		return 0;
	case OPT_TOL:
		if (rxb_parse_double(arg, 0, 0.5, &a->fo.tolerance))
			return ctl_client_usage(CMD, "--tolerance: '%s' is not a fraction in 0..0.5", arg);
		return 0;
	case OPT_CAP:
		if (parse_num("--cap-bps", arg, 1, 1e15, &d))
			return CTL_EXIT_USAGE;
		a->fo.cap = d;
		return 0;
	case OPT_MODELS:
		return parse_models(arg, &a->fo.models);
	case OPT_PLOT:
		if (!plot_path_ok(arg))
			return ctl_client_usage(CMD, "--plot: '%s' does not end in .png or .svg", arg);
		a->plot = arg;
		return 0;
	}
	return ctl_client_usage(CMD, "unknown option");
}

static int parse_args(int argc, char **argv, struct streams_args *a)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ "expo", no_argument, NULL, OPT_EXPO },
		{ "rise", required_argument, NULL, OPT_RISE },
		{ "max-n", required_argument, NULL, OPT_MAX_N },
		{ "tolerance", required_argument, NULL, OPT_TOL },
		{ "cap-bps", required_argument, NULL, OPT_CAP },
		{ "models", required_argument, NULL, OPT_MODELS },
		{ "plot", required_argument, NULL, OPT_PLOT },
		CTL_CLIENT_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jvs:t:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help_text, stdout);
			return -1;
		}
		if (c == ':')
			return ctl_client_usage(CMD, "option '%s' needs a value", argv[optind - 1]);
		if (c == '?')
			return ctl_client_usage(CMD, "unknown option '%s'", argv[optind - 1]);
		rc = ctl_client_opt(CMD, c, optarg, &a->co);
		if (rc < 0)
			rc = parse_opt(a, c, optarg);
		if (rc)
			return rc;
	}
	if (optind < argc)
		a->peer = argv[optind++];
	if (optind < argc)
		return ctl_client_usage(CMD, "unexpected argument '%s'", argv[optind]);
	if (a->samples && a->peer)
		return ctl_client_usage(CMD, "PEER is the daemon's; --samples fits a file");
	if (!a->samples && (a->expo || a->fo.cap > 0 || a->fo.models))
		return ctl_client_usage(CMD, "--expo, --cap-bps and --models go with --samples");
	return 0;
}

/* The file, at most STREAMS_CSV_MAX_BYTES, into @buf (malloc'd). */
static int read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	/* One byte more than the parser takes: it then says the file is too large. */
	*buf = malloc(STREAMS_CSV_MAX_BYTES + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	err = rxb_read_all(fd, *buf, STREAMS_CSV_MAX_BYTES + 1, len);
	close(fd);
	if (err && err != -EFBIG) {
		free(*buf);
		*buf = NULL;
		return err;
	}
	return 0;
}

/*
 * --expo: the samples at n = 1, 2, 4, ... while the throughput rises by
 * @rise per doubling, the one where it stopped included; @next the next n
 * the strategy wants (0 when done).
 */
static int expo_points(const struct streams_csv *c, double rise, uint32_t n_max,
		       struct streams_point *out, uint32_t *next)
{
	int m = 0;

	*next = streams_fit_expo_next(c->p, c->m, rise, n_max);
	for (uint32_t n = 1; n <= n_max && m < c->m; n *= 2) {
		int i;

		for (i = 0; i < c->m && c->p[i].n != n; i++)
			;
		if (i == c->m)
			break;
		out[m++] = c->p[i];
		if (m > 1 && !(out[m - 1].th >= (1 + rise) * out[m - 2].th))
			break;
	}
	return m;
}

static void samples_json(struct json_writer *w, const struct streams_csv *c,
			 const struct streams_point *used, int m)
{
	json_arr_begin(w, "samples");
	for (int i = 0; i < c->m; i++) {
		bool in = false;

		for (int k = 0; k < m; k++)
			in = in || used[k].n == c->p[i].n;
		json_obj_begin(w, NULL);
		json_double(w, "n", c->p[i].n);
		json_double(w, "throughput_bps", c->p[i].th);
		json_uint(w, "count", c->count[i]);
		json_double(w, "sd_bps", c->sd[i]);
		json_null(w, "age_s");
		json_arr_begin(w, "origins");
		json_str(w, NULL, "file");
		json_arr_end(w);
		json_bool(w, "fitted", in);
		json_obj_end(w);
	}
	json_arr_end(w);
}

/* The offline document: one peer without an address. */
static int offline_doc(const struct streams_args *a, const struct streams_csv *c,
		       struct json_writer *w)
{
	struct streams_point pts[STREAMS_FIT_MAX_POINTS];
	struct streams_fit_result r;
	uint32_t next = 0;
	int m = c->m;

	memcpy(pts, c->p, sizeof(pts));
	if (a->expo)
		m = expo_points(c, a->rise, a->fo.n_max, pts, &next);
	if (m < 1)
		return ctl_client_fail(CMD, "%s: --expo: no sample at n = 1", a->samples);
	if (streams_fit_best(pts, m, &a->fo, &r))
		return ctl_client_fail(CMD, "%s: the samples cannot be fitted", a->samples);
	json_obj_begin(w, NULL);
	json_str(w, "source", "file");
	json_str(w, "file", a->samples);
	json_arr_begin(w, "peers");
	json_obj_begin(w, NULL);
	json_null(w, "address");
	json_null(w, "port");
	samples_json(w, c, pts, m);
	if (a->expo) {
		json_obj_begin(w, "explore");
		json_double(w, "rise", a->rise);
		json_uint_opt(w, "next", next != 0, next);
		json_obj_end(w);
	}
	streams_doc_result(w, pts, m, &a->fo, &r);
	json_obj_end(w);
	json_arr_end(w);
	json_obj_end(w);
	return 0;
}

/* Show @json (@len bytes): as it is, through the view, and drawn. */
static int show(const struct streams_args *a, const char *json, size_t len)
{
	char why[ANSWER_WHY_LEN];
	int rc = 0;

	if (a->co.json) {
		if (fwrite(json, 1, len, stdout) != len || (len && json[len - 1] != '\n' &&
							    fputc('\n', stdout) == EOF))
			return ctl_client_fail(CMD, "writing: %s", strerror(errno));
	} else {
		if (view_streams_text(stdout, json, len, a->co.flags, why))
			return ctl_client_fail(CMD, "the document is not valid: %s", why);
	}
	if (fflush(stdout))
		return ctl_client_fail(CMD, "writing: %s", strerror(errno));
	if (a->plot)
		rc = plot_run(CMD, PLOT_SCRIPT, PLOT_ENV, a->plot, json, len);
	return rc;
}

static int offline(const struct streams_args *a)
{
	struct streams_csv *c = malloc(sizeof(*c));
	char err[160], *text = NULL;
	struct json_writer w;
	size_t len = 0;
	int rc;

	if (!c)
		return ctl_client_fail(CMD, "out of memory");
	rc = read_file(a->samples, &text, &len);
	if (rc) {
		free(c);
		return ctl_client_fail(CMD, "%s: %s", a->samples, strerror(-rc));
	}
	rc = streams_csv_parse(text, len, c, err, sizeof(err));
	free(text);
	if (rc) {
		free(c);
		return ctl_client_fail(CMD, "%s: %s", a->samples, err);
	}
	json_init(&w, false);
	rc = offline_doc(a, c, &w);
	free(c);
	if (!rc && !json_ok(&w))
		rc = ctl_client_fail(CMD, "out of memory");
	if (!rc)
		rc = show(a, json_text(&w), json_len(&w));
	json_finish(&w);
	return rc;
}

static int from_daemon(const struct streams_args *a)
{
	struct ctl_client_answer ans;
	char verb[160];
	const char *body;
	int rc;

	if (a->peer && (strlen(a->peer) > 100 || strpbrk(a->peer, " \t\r\n")))
		return ctl_client_usage(CMD, "PEER '%.40s' is not an address", a->peer);
	snprintf(verb, sizeof(verb), CMD "%s%s", a->peer ? " " : "", a->peer ? a->peer : "");
	rc = ctl_client_ask(CMD, ctl_client_socket_path(a->co.socket), verb, a->co.timeout_s, &ans);
	if (rc)
		return rc;
	if (!ans.a.ok) {
		rc = ctl_client_show(CMD, &ans, a->co.json, NULL, 0);
	} else {
		body = memchr(ans.raw, '\n', ans.len);
		body = body ? body + 1 : ans.raw + ans.len;
		rc = show(a, body, ans.len - (size_t)(body - ans.raw));
	}
	ctl_client_answer_release(&ans);
	return rc;
}

int cmd_streams(int argc, char **argv)
{
	struct streams_args a = {
		.co = { .timeout_s = CTL_DEFAULT_TIMEOUT_S },
		.rise = DEF_RISE,
		.fo = { .n_max = DEF_MAX_N, .tolerance = DEF_TOLERANCE },
	};
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? CTL_EXIT_OK : rc;
	return a.samples ? offline(&a) : from_daemon(&a);
}
