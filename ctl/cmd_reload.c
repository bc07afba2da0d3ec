// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl reload: re-read the daemon's configuration file. */
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/view/view_senders.h"

static const char help[] =
"Usage: " CTL_PROG " reload [-j|--json] [-s|--socket PATH] [-t|--timeout S]\n"
"\n"
"Make rxbneckd re-read its configuration file, as SIGHUP does, and wait\n"
"for the outcome. If the file is valid, the changed keys take effect\n"
"(the answer lists them, and those that only take effect when the daemon\n"
"is restarted: sockets, directories, connection limits, probe\n"
"attachment). If it is not, the daemon keeps running with its current\n"
"configuration and the answer is the error, naming FILE:LINE and the key;\n"
"the exit status is then 1.\n"
"\n"
"Options:\n"
"  -j, --json          answer as JSON: {\"ok\", \"config_file\", \"changed\",\n"
"                      \"restart_needed\"} or, on failure, {\"error\": {\"code\",\n"
"                      \"message\"}}.\n"
CTL_CLIENT_OPTIONS_HELP
"\n"
"Exit status: 0 reloaded, 1 the reload failed or the daemon could not be\n"
"reached, 2 bad usage.\n";

const struct ctl_client_cmd cmd_reload = { .verb = "reload", .help = help, .view = view_reload };
