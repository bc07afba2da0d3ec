// SPDX-License-Identifier: GPL-2.0-or-later
/* rxbneckctl version: this program's version and the daemon's. */
#include <stdio.h>

#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ctl/view/view_senders.h"

static const char help[] =
"Usage: " CTL_PROG " version [-j|--json] [-s|--socket PATH] [-t|--timeout S]\n"
"\n"
"Ask rxbneckd for its version and for the version of the control protocol\n"
"it speaks (docs/CONTROL.md §9), and print them below rxbneckctl's own.\n"
"When the daemon cannot be reached only the error is printed:\n"
"'" CTL_PROG " --version' prints this program's version alone.\n"
"\n"
"Options:\n"
"  -j, --json          the daemon's answer as JSON: {\"version\", \"ctl_protocol\"}.\n"
CTL_CLIENT_OPTIONS_HELP
"\n"
"Exit status: 0 ok, 1 the daemon could not be reached, 2 bad usage.\n";

static void view(FILE *f, const struct json_object *doc, unsigned flags)
{
	(void)flags;
	fprintf(f, CTL_PROG " %s\n", RXB_VERSION);
	view_version(f, doc);
}

const struct ctl_client_cmd cmd_version = { .verb = "version", .help = help, .view = view };
