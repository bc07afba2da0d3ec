// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl senders: the senders connected to the daemon. */
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/view/view_senders.h"

static const char help[] =
"Usage: " CTL_PROG " senders [-j|--json] [-s|--socket PATH] [-t|--timeout S]\n"
"\n"
"List the data senders connected to rxbneckd's sender control server\n"
"(docs/PROTOCOL.md) that have said HELLO: connection id, address, the flow\n"
"port, the pushes granted (rate, pause), the RTT it announced, how long it\n"
"has been connected, frames sent to it, the last RATE it got (@ the epoch\n"
"it was computed in) and the name it gave. --json adds payload and file\n"
"sizes, its maximum rate, byte and frame counters and the last RATE in full.\n"
"\n"
"Options:\n"
"  -j, --json          the daemon's JSON document {\"senders\": [...]}\n"
"                      (docs/CONTROL.md).\n"
CTL_CLIENT_OPTIONS_HELP
"\n"
"Exit status: 0 ok, 1 the daemon could not be reached or answered an\n"
"error, 2 bad usage.\n";

const struct ctl_client_cmd cmd_senders = { .verb = "senders", .help = help, .view = view_senders };
