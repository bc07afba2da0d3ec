/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `rxbneckd --measure-only`: run the collector for a number of epochs and
 * print one record per epoch (JSON, one object per line, or text), then
 * exit. The daemon's main() hands its whole command line over when it sees
 * --measure-only. See docs/measurement.md for the options and keys.
 */
#ifndef RXB_DAEMON_MEASURE_CLI_H
#define RXB_DAEMON_MEASURE_CLI_H

/* Returns the process exit status (0 ok, 1 runtime error, 2 usage). */
int measure_cli_main(int argc, char **argv);

#endif
