// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl buffers: the receive-buffer adaptation, per watched socket. */
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/view/view.h"
#include "ctl/view/view_buffers.h"

static const char help[] =
"Usage: " CTL_PROG " buffers [-j|--json] [-v|--verbose] [-s|--socket PATH] [-t|--timeout S]\n"
"\n"
"Show rxbneckd's receive-buffer adaptation ([buffer] in rxbneckd.conf,\n"
"docs/buffer.md): its mode and policy, the host's memory as it weighs it,\n"
"and for every UDP socket on a watched port: its buffer now (sk_rcvbuf,\n"
"what ss -m shows as rb), the memory its queue holds, the size the policy\n"
"wants, the last decision and its values (RRDA: f, the surplus v_b and its\n"
"average v', alpha; model: the queue K and its loss at the rate), the\n"
"changes the daemon made and why, or why it may not. -v adds each socket's\n"
"mean and peak buffer and memory held since it was first seen, and what\n"
"the controller costs per step.\n"
"\n"
"Options:\n"
"  -j, --json          the daemon's JSON document (docs/CONTROL.md).\n"
"  -v, --verbose       more detail, as above.\n"
"  -s, --socket PATH   the daemon's control socket; default\n"
"                      $" CTL_SOCKET_ENV " or " CTL_DEFAULT_SOCKET ".\n"
"  -t, --timeout S     give up after S seconds (default 10).\n"
"  -h, --help          this text.\n"
"\n"
"Exit status: 0 ok, 1 the daemon could not be reached or answered an\n"
"error, 2 bad usage.\n";

const struct ctl_client_cmd cmd_buffers = {
	.verb = "buffers", .help = help, .view = view_buffers, .verbose = true,
};
