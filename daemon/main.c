// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rxbneckd. For now only the measurement mode exists: `--measure-only` runs
 * the collector and prints records (daemon/measure_cli.c). The daemon proper
 * (event loop, control server, model) is not built yet.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/measure_cli.h"

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--measure-only"))
			return measure_cli_main(argc, argv);
	fprintf(stderr,
		"rxbneckd: the daemon mode is not built yet; only --measure-only "
		"is available (see rxbneckd --measure-only --help)\n");
	return 1;
}
