/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rxbneckctl's figures (`model --plot`, `streams --plot`): a Python script
 * (python3-matplotlib) draws them from JSON on its standard input. A
 * figure in C would mean either SVG only, written by hand, or cairo and
 * its X11 and font stack in a server tool; matplotlib is already what the
 * project's figures use and writes both PNG and SVG.
 *
 * The script @name is looked for, in order, at
 *   $@env                                        (set by hand or by tests)
 *   <rxbneckctl's dir>/../share/rxbneck/@name    (installed)
 *   <rxbneckctl's dir>/@name                     (the build tree)
 *   RXB_DATADIR/@name                            (where make install put it)
 * and run with /usr/bin/python3, the interpreter Debian's
 * python3-matplotlib is installed for (tools/deps.sh) - a python3 found
 * first in $PATH may be another one without it -, else python3 from $PATH.
 */
#ifndef RXB_CTL_PLOT_H
#define RXB_CTL_PLOT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether @path ends in .png or .svg, the formats the scripts write. */
bool plot_path_ok(const char *path);

/*
 * Run the script @name (found as above, $@env first) with @path as its
 * argument and @json (@len bytes) on its standard input. 0, or
 * CTL_EXIT_FAIL after saying why on stderr, prefixed "rxbneckctl @cmd".
 */
int plot_run(const char *cmd, const char *name, const char *env, const char *path,
	     const char *json, size_t len);

#endif
