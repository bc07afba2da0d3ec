// SPDX-License-Identifier: GPL-2.0-or-later
/* Shared layout of the views, and their legend. See view.h. */
#include "ctl/view/view.h"

void view_key(FILE *f, int indent, const char *label)
{
	fprintf(f, "%*s%-*s: ", indent, "", VIEW_KEY_WIDTH - indent, label);
}

void view_cont(FILE *f, int indent)
{
	fprintf(f, "%*s", indent + (VIEW_KEY_WIDTH - indent) + 2, "");
}

/*
 * The terms on the left are what the views print; man/rxbneckctl.8 has
 * the same legend (tests/unit/test_ctl_view.c checks that every term is
 * there).
 */
static const char *const legend[][2] = {
	{ "#C", "CPU-bound tasks sharing a CPU, time-weighted over the epoch" },
	{ "#I", "I/O-bound tasks sharing it (they alternate between the CPU and the disk)" },
	{ "N", "packets taken per service: per wake-up of the receiver (stage B),\n"
	       "per NAPI poll (stage A); a mean, rounded to whole packets for the model" },
	{ "K", "the queue's capacity in packets: the socket's receive buffer (B),\n"
	       "the device's ring or the per-CPU backlog (A)" },
	{ "mu_P-Net", "the receiver's service rate: batches of N packets it drains per\n"
		      "second when alone on its CPU (1 / (N x cost per packet))" },
	{ "c", "stage B's capacity: the packets per second the receiver drains with a\n"
	       "full queue, its saturated drain where measured at this load, else\n"
	       "what mu_P-Net, N and the tasks' share give (shown in b/s of payload)" },
	{ "mu_A", "NAPI polls per second the device's softirq would serve (stage A)" },
	{ "mu_P-I/O", "CPU bursts per second of an I/O-bound task running alone" },
	{ "mu_D", "disk completions per second" },
	{ "T_I/O", "how long the receiver runs before it is preempted" },
	{ "D", "the off-CPU window predicted after that: a PAUSE window" },
	{ "RATE", "the rate offered to the flow's senders (docs/PROTOCOL.md)" },
	{ "stage A, B", "the queues a packet passes: A the device's (NAPI), B the socket's" },
	{ "measured", "source of a value: counted in the last epoch" },
	{ "learned", "counted earlier in this run; the flow had no traffic since" },
	{ "history", "learned by an earlier run (the state directory), or by another flow" },
	{ "default", "the daemon's default: nothing learned on this host yet" },
	{ "device", "reported by the NIC" },
	{ "config", "the configured fallback ([measure] fallback_*)" },
	{ "sysctl", "net.core.netdev_max_backlog" },
	{ "missing", "not known; the reason follows, and the stage is not modelled" },
	{ "-", "a value that is not known or not measured" },
};

void view_legend(FILE *f)
{
	fputs("Legend (the model's symbols are those of docs/model.md):\n", f);
	for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++) {
		const char *s = legend[i][1];

		fprintf(f, "  %-12s ", legend[i][0]);
		for (; *s; s++) {
			fputc(*s, f);
			if (*s == '\n')
				fprintf(f, "  %-12s ", "");
		}
		fputc('\n', f);
	}
	fputs("Rates are per second everywhere (status, status --json, model);\n"
	      "data rates in bits per second of UDP payload.\n", f);
}
