// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl status: what the daemon knows now. */
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/view/view_status.h"

static const char help[] =
"Usage: " CTL_PROG " status [-v|--verbose] [-j|--json] [-s|--socket PATH] [-t|--timeout S]\n"
"\n"
"Show what rxbneckd knows now:\n"
"  * health: 'ok', or 'degraded' with every reason (no BPF probes, a\n"
"    state directory that cannot be used, a failed reload, a stale model);\n"
"  * the epoch: number, length, age, time spent measuring and solving;\n"
"    when the per-packet probes attach; the reloads;\n"
"  * per CPU: the CPU-bound (#C) and I/O-bound (#I) tasks, time-weighted\n"
"    over the last epoch, how busy it was, runnable tasks, softirq time;\n"
"  * the sender control server: senders connected, pushes, reports;\n"
"  * learned flows: ports whose senders left (or that an earlier run\n"
"    learned), with how long ago and what was learned;\n"
"  * per watched flow (a local receive port): the RATE offered, who holds\n"
"    it and who got this epoch's; the model's prediction at that rate\n"
"    (first-round loss, transfer time); the transfer it is modelled for\n"
"    (from the sender's HELLO or the configuration); the last epoch's\n"
"    traffic; the sender's last REPORT beside what the model said; every\n"
"    model input with its value and where it came from (measured,\n"
"    learned, history, device, config, sysctl - or missing, and why); the\n"
"    receiver's capacity and whether it came from its saturated drain or\n"
"    from the per-packet cost; the pause-window predictor.\n"
"A value that is not known prints as '-', with the reason where the\n"
"daemon gives one. The symbols beside the words are the model's\n"
"(docs/model.md); the legend below explains them.\n"
"\n"
"Options:\n"
"  -v, --verbose       the legend first, then every detail: the receiver's\n"
"                      cost estimates, the solved stages, the solver's\n"
"                      counters, the pause predictor's checks, the state\n"
"                      directory and control socket, and the last epoch's\n"
"                      measurement record.\n"
"  -j, --json          the daemon's JSON document (schema in\n"
"                      docs/CONTROL.md); its \"measurement\" member is the\n"
"                      last epoch's record with the keys of\n"
"                      'rxbneckd --measure-only --json'.\n"
CTL_CLIENT_OPTIONS_HELP
"\n"
"Exit status: 0 ok, 1 the daemon could not be reached or answered an\n"
"error (printed on stderr), 2 bad usage.\n";

const struct ctl_client_cmd cmd_status = {
	.verb = "status", .help = help, .view = view_status,
	.verbose = true, .legend = true,
};
