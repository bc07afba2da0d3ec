/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl model, split by job:
 *	cmd_model.c    options, their checks, running the solve
 *	model_help.c   --help: the usage text
 *	model_live.c   --from-status: the inputs of a live flow from rxbneckd
 *	               (or from its status saved in a file, --status-file)
 *	model_prism.c  response-time quantiles and --export-prism
 *	model_out.c    the result as text, JSON, CSV (--csv), the --table grid
 *	model_plot.c   --plot: the figure, drawn by rxbneck-plot-model (Python)
 * Rates on the command line and in every output are per second, as in
 * `rxbneckctl status` and its JSON.
 */
#ifndef RXB_CTL_MODEL_H
#define RXB_CTL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "rxb/measure.h"
#include "solver/bneck.h"
#include "solver/bneck_pieces.h"

struct json_object;

#define MODEL_CMD	"model"

/* What --from-status took from the daemon, for the output. */
struct model_live {
	bool used;
	uint16_t port;
	uint64_t epoch;			/* of the daemon's solve */
	double rate_bps;		/* what the daemon chose then */
	double loss;
	double time_s;
	char overridden[256];		/* the options given on top, "" if none */
	bool windows_dropped;		/* a load given on top: the windows went */
	bool episodes_dropped;		/* a loss model without windows given on
					 * top: so did the episodes from them */
};

struct model_args {
	struct rxb_stage_inputs stage;	/* the stage the options describe (B) */
	bool has_front;			/* --from-status: a stage A before it */
	struct rxb_stage_inputs front;
	struct bneck_xfer x;
	bool min_rate_set;
	bool json;
	bool csv;
	bool table;
	uint32_t curve_rows;
	const char *prism_prefix;
	const char *plot_path;
	struct model_live live;
	/*
	 * --from-status of a solve with the windows by rate
	 * (model.windows_by_rate): the pieces' measured rates and stage B's
	 * windows in each (only the windows fields are used: the rest is
	 * stage's, options on top included). 0: stage's windows everywhere.
	 */
	uint32_t nbands;
	double band_at_bps[BNECK_MAX_PIECES];
	struct rxb_stage_inputs band_win[BNECK_MAX_PIECES];
	uint32_t cpus;			/* --cpus: > 1 selects the SMP net */
	double balance_per_s;		/* its load balancer's rate */
};

/* Whether the solve runs over the windows by rate (a->nbands pieces). */
bool model_bands_used(const struct model_args *a);

/* The stages in path order (stage A first when there is one); returns how many. */
uint32_t model_stages(const struct model_args *a, struct rxb_stage_inputs *out);

/* Response-time quantiles of the tagged customer (integer #C, #I only). */
struct model_quantiles {
	bool valid;
	double p50_s, p90_s, p99_s;
};

/* The solver's failure: message on stderr, CTL_EXIT_FAIL. */
int model_solve_error(const char *what, int err);

/*
 * --from-status PORT: fill @a from the flow's last solve in rxbneckd's
 * status (the daemon at @socket, NULL for the default). CTL_EXIT_OK, or
 * CTL_EXIT_FAIL after saying why (no daemon, no such flow, no model yet).
 */
int model_live_load(struct model_args *a, const char *socket, uint16_t port);

/*
 * The same from a status document saved in the file @path ("-": standard
 * input), as `rxbneckctl status --json` prints it (--status-file).
 */
int model_live_load_file(struct model_args *a, const char *path, uint16_t port);

/*
 * The same from the status document @doc already read (the part of
 * model_live_load() after the answer: tests/fuzz/fuzz_ctl_model.c): every
 * number is range-checked, and what is out of range is said and refused.
 */
int model_live_from_doc(struct model_args *a, const struct json_object *doc, uint16_t port);

/*
 * Quantiles and the PRISM export; 0 or CTL_EXIT_FAIL. The net's analysis
 * into @res when not NULL (--cpus: the SMP net's E[R] sets the rate).
 */
int model_prism_extras(const struct model_args *a, struct model_quantiles *qs,
		       double *prism_q, uint32_t *prism_states,
		       struct tagged_result *res);

int model_out_text(const struct model_args *a, const struct bneck_result *r,
		   const struct model_quantiles *qs, uint32_t prism_states);
int model_out_json(const struct model_args *a, const struct bneck_result *r,
		   const struct model_quantiles *qs, double prism_q, uint32_t prism_states);
int model_out_csv(const struct bneck_result *r);
/* --table: the grid of #C x #I; @a->stage's counts are changed. */
int model_out_table(struct model_args *a, struct bneck_ws *ws);

/* --plot: write the figure of @r to a->plot_path. 0 or CTL_EXIT_FAIL. */
int model_plot_write(const struct model_args *a, const struct bneck_result *r);

/* model_help.c: the usage text, on stdout. */
void model_help(void);

#endif
