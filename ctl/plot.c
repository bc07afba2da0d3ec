// SPDX-License-Identifier: GPL-2.0-or-later
/* Running rxbneckctl's plot scripts. See plot.h. */
#include "ctl/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "ctl/ctl.h"

#ifndef RXB_DATADIR
#define RXB_DATADIR	"/usr/local/share/rxbneck"
#endif
#define SYSTEM_PYTHON	"/usr/bin/python3"

static int plot_fail(const char *cmd, const char *fmt, const char *what, int err)
{
	fprintf(stderr, CTL_PROG " %s: --plot: ", cmd);
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
static bool find_script(char *out, const char *name, const char *env_name)
{
	const char *env = getenv(env_name);
	char rest[NAME_MAX + 32];
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
			snprintf(rest, sizeof(rest), "/../share/rxbneck/%s", name);
			if (try_path(out, exe, rest))
				return true;
			snprintf(rest, sizeof(rest), "/%s", name);
			if (try_path(out, exe, rest))
				return true;
		}
	}
	snprintf(out, PATH_MAX, RXB_DATADIR "/%s", name);
	return readable(out);
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
static int run_script(const char *cmd, const char *script, const char *path, const char *json,
		      size_t len)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int fds[2], status, err;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return plot_fail(cmd, "%s", "pipe", errno);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(fds[0]);
		close(fds[1]);
		return plot_fail(cmd, "%s", "fork", err);
	}
	if (pid == 0) {
		if (dup2(fds[0], STDIN_FILENO) < 0)
			_exit(127);
		if (access(SYSTEM_PYTHON, X_OK) == 0)
			execl(SYSTEM_PYTHON, "python3", script, path, (char *)NULL);
		else
			execlp("python3", "python3", script, path, (char *)NULL);
		fprintf(stderr, CTL_PROG " %s: --plot: python3: %s\n", cmd, strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	/* A script that dies early must not kill rxbneckctl with SIGPIPE. */
	sigaction(SIGPIPE, &ign, &old);
	err = feed(fds[1], json, len);
	sigaction(SIGPIPE, &old, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return plot_fail(cmd, "%s", "waiting for the plot script", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return plot_fail(cmd, "%s failed (its message is above)", script, 0);
	if (err)
		return plot_fail(cmd, "%s", "writing to the plot script", -err);
	return 0;
}

bool plot_path_ok(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && (!strcmp(path + n - 4, ".png") || !strcmp(path + n - 4, ".svg"));
}

int plot_run(const char *cmd, const char *name, const char *env, const char *path,
	     const char *json, size_t len)
{
	char script[PATH_MAX];

	if (!find_script(script, name, env)) {
		fprintf(stderr, CTL_PROG " %s: --plot: %s not found (set $%s to its path)\n",
			cmd, name, env);
		return CTL_EXIT_FAIL;
	}
	return run_script(cmd, script, path, json, len);
}
