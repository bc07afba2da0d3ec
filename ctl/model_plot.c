// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckctl model --plot FILE: the figure of transfer time and loss
 * against the rate, drawn by rxbneck-plot-model (python3-matplotlib), which
 * gets the curve as JSON on its standard input. A figure in C would mean
 * either SVG only, written by hand, or cairo and its X11 and font stack
 * in a server tool; matplotlib is already what the project's figures use
 * and writes both PNG and SVG. See model.h.
 *
 * The script is looked for, in order, at
 *   $RXBNECK_PLOT_MODEL                          (set by hand or by tests)
 *   <rxbneckctl's dir>/../share/rxbneck/rxbneck-plot-model  (installed)
 *   <rxbneckctl's dir>/rxbneck-plot-model        (the build tree)
 *   RXB_DATADIR/rxbneck-plot-model               (where make install put it)
 * and run with /usr/bin/python3, the interpreter Debian's
 * python3-matplotlib is installed for (tools/deps.sh) - a python3 found
 * first in $PATH may be another one without it -, else python3 from $PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "ctl/ctl.h"
#include "ctl/model.h"

#ifndef RXB_DATADIR
#define RXB_DATADIR	"/usr/local/share/rxbneck"
#endif
#define PLOT_SCRIPT	"rxbneck-plot-model"
#define PLOT_ENV	"RXBNECK_PLOT_MODEL"
#define SYSTEM_PYTHON	"/usr/bin/python3"

static int plot_fail(const char *fmt, const char *what, int err)
{
	fprintf(stderr, CTL_PROG " " MODEL_CMD ": --plot: ");
	fprintf(stderr, fmt, what);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
	return CTL_EXIT_FAIL;
}

static bool readable(const char *path)
{
	return path[0] && access(path, R_OK) == 0;
}

/* "@dir@rest" into @out (PATH_MAX) if it fits and is readable. */
static bool try_path(char *out, const char *dir, const char *rest)
{
	int n = snprintf(out, PATH_MAX, "%s%s", dir, rest);

	return n > 0 && n < PATH_MAX && readable(out);
}

/* The script's path into @out (PATH_MAX), or false. */
static bool find_script(char *out)
{
	const char *env = getenv(PLOT_ENV);
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0]) {
		rxb_strlcpy(out, env, PATH_MAX);
		return readable(out);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (try_path(out, exe, "/../share/rxbneck/" PLOT_SCRIPT) ||
			    try_path(out, exe, "/" PLOT_SCRIPT))
				return true;
		}
	}
	snprintf(out, PATH_MAX, RXB_DATADIR "/" PLOT_SCRIPT);
	return readable(out);
}

static void point_json(struct json_writer *w, const char *key, double rate, double loss, double t)
{
	json_obj_begin(w, key);
	json_double(w, "rate_bps", rate);
	json_double(w, "loss", loss);
	json_double(w, "time_s", t);
	json_obj_end(w);
}

/* What the script draws, as its input says. */
static void plot_json(struct json_writer *w, const struct model_args *a, const struct bneck_result *r)
{
	char title[384];

	if (a->live.used)
		snprintf(title, sizeof(title), "rxbneckd flow %u (epoch %llu)%s%s", a->live.port,
			 (unsigned long long)a->live.epoch, a->live.overridden[0] ? ", with " : "",
			 a->live.overridden);
	else
		snprintf(title, sizeof(title), "#C %g, #I %g, K %u, N %u, one-way delay %g ms",
			 a->stage.cpu_bound, a->stage.io_bound, a->stage.queue_pkts,
			 a->stage.batch_pkts, a->x.one_way_delay_s * 1e3);
	json_obj_begin(w, NULL);
	json_str(w, "title", title);
	json_arr_begin(w, "curve");
	for (uint32_t i = 0; i < r->npoints; i++) {
		json_arr_begin(w, NULL);
		json_double(w, NULL, r->curve[i].rate_bps);
		json_double(w, NULL, r->curve[i].loss);
		json_double(w, NULL, r->curve[i].time_s);
		json_arr_end(w);
	}
	json_arr_end(w);
	point_json(w, "chosen", r->rate_bps, r->loss, r->time_s);
	point_json(w, "line", a->x.line_rate_bps, r->line_loss, r->line_time_s);
	if (a->live.used) {
		point_json(w, "daemon", a->live.rate_bps, a->live.loss, a->live.time_s);
	} else {
		json_null(w, "daemon");
	}
	json_obj_end(w);
}

/* All of @json down the pipe @fd (closed after); 0 or -errno. */
static int feed(int fd, const char *json, size_t len)
{
	FILE *f = fdopen(fd, "w");
	int err = 0;

	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	if (fwrite(json, 1, len, f) != len)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* Run the script on @path, feed it @json; 0 or CTL_EXIT_FAIL. */
static int run_script(const char *script, const char *path, const char *json, size_t len)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int fds[2], status, err;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return plot_fail("%s", "pipe", errno);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(fds[0]);
		close(fds[1]);
		return plot_fail("%s", "fork", err);
	}
	if (pid == 0) {
		if (dup2(fds[0], STDIN_FILENO) < 0)
			_exit(127);
		if (access(SYSTEM_PYTHON, X_OK) == 0)
			execl(SYSTEM_PYTHON, "python3", script, path, (char *)NULL);
		else
			execlp("python3", "python3", script, path, (char *)NULL);
		fprintf(stderr, CTL_PROG " " MODEL_CMD ": --plot: python3: %s\n", strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	/* A script that dies early must not kill rxbneckctl with SIGPIPE. */
	sigaction(SIGPIPE, &ign, &old);
	err = feed(fds[1], json, len);
	sigaction(SIGPIPE, &old, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return plot_fail("%s", "waiting for the plot script", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return plot_fail("%s failed (its message is above)", script, 0);
	if (err)
		return plot_fail("%s", "writing to the plot script", -err);
	return 0;
}

int model_plot_write(const struct model_args *a, const struct bneck_result *r)
{
	char script[PATH_MAX];
	struct json_writer w;
	int ret;

	if (!find_script(script))
		return plot_fail("%s not found (set $" PLOT_ENV " to its path)", PLOT_SCRIPT, 0);
	json_init(&w, false);
	plot_json(&w, a, r);
	if (!json_ok(&w)) {
		json_finish(&w);
		return plot_fail("%s", "out of memory", 0);
	}
	ret = run_script(script, a->plot_path, json_text(&w), json_len(&w));
	json_finish(&w);
	return ret;
}
