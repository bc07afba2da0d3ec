// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl status: the daemon's health, measurements, models and rates. */
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"

static const char help[] =
"Usage: " CTL_PROG " status [-j|--json] [-s|--socket PATH] [-t|--timeout S]\n"
"\n"
"Show what rxbneckd knows now:\n"
"  * health: 'ok', or 'degraded' with every reason (no BPF probes, probe\n"
"    cost unknown, state directory unusable, a failed reload, a stale\n"
"    model, ...);\n"
"  * the epoch: number, length, age, time spent measuring and solving;\n"
"  * per CPU: the task classes #C (CPU-bound) and #I (I/O-bound), time\n"
"    weighted over the last epoch, busy fraction, runnable tasks;\n"
"  * per watched flow (a local receive port): the transfer it is modelled\n"
"    for (payload, file size, one-way delay, rate range, from the sender's\n"
"    HELLO or the configuration), the traffic of the last epoch, every\n"
"    model input with its value and where it came from (measured,\n"
"    learned, history, config, device, sysctl, or missing and why), the\n"
"    solved model (effective bottleneck rate, predicted loss and transfer\n"
"    time, per-stage service rates) and the RATE last offered to senders\n"
"    with its flags and confidence;\n"
"  * the sender control server: connected senders and counters.\n"
"\n"
"Options:\n"
"  -j, --json          one JSON object instead of text (schema in\n"
"                      docs/CONTROL.md); its \"measurement\" member is the\n"
"                      last epoch's record with the keys of\n"
"                      'rxbneckd --measure-only --json'.\n"
"  -s, --socket PATH   the daemon's control socket; default\n"
"                      $" CTL_SOCKET_ENV " or " CTL_DEFAULT_SOCKET ".\n"
"  -t, --timeout S     give up after S seconds (default 10).\n"
"  -h, --help          this text.\n"
"\n"
"Exit status: 0 ok, 1 the daemon could not be reached or answered an\n"
"error (printed on stderr), 2 bad usage.\n";

int cmd_status(int argc, char **argv)
{
	return ctl_client_daemon_cmd(argc, argv, "status", help);
}
