// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the /proc parsers of the collector
 * (daemon/collect/procfs.c): /proc/stat, a task's stat, schedstat and
 * status, /proc/diskstats, /proc/net/udp, /proc/net/snmp{,6}, softnet_stat,
 * /proc/interrupts, /proc/softirqs, a sysctl and the kernel configuration.
 * /proc is the kernel's, but a task's comm is any user's text, and the
 * daemon must not trust a format it parses. The first byte picks the
 * parser, the rest is the file's text (cut at the first NUL, as a read
 * of a text file would not carry one).
 *
 * Properties besides "no crash, no sanitizer report": a table parser
 * returns at most the room it was given; a task's comm stays a string of
 * at most 15 characters; a sysctl is 0 or an error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/collect/procfs.h"

#define MAX_TEXT	65536
#define ROOM		8

static char text[MAX_TEXT + 1];

static void check_count(int n)
{
	if (n > ROOM)
		abort();
}

static void task(int which)
{
	struct procfs_task t;

	memset(&t, 0, sizeof(t));
	if (which == 0)
		procfs_parse_task_stat(text, &t);
	else if (which == 1)
		procfs_parse_schedstat(text, &t);
	else
		procfs_parse_task_status(text, &t);
	if (memchr(t.comm, '\0', sizeof(t.comm)) == NULL)
		abort();
}

static void parse(unsigned which)
{
	union {
		struct procfs_cpu_time cpu[ROOM];
		struct procfs_disk disk[ROOM];
		struct procfs_udp_sock udp[ROOM];
		struct procfs_softnet softnet[ROOM];
		struct procfs_irq irq[ROOM];
		uint64_t counts[ROOM];
	} u;
	struct procfs_udp_mib mib = { 0 };
	uint32_t v;

	switch (which % 12) {
	case 0:
		check_count(procfs_parse_stat(text, u.cpu, ROOM));
		break;
	case 1:
	case 2:
	case 3:
		task((int)(which % 12) - 1);
		break;
	case 4:
		check_count(procfs_parse_diskstats(text, u.disk, ROOM));
		break;
	case 5:
		check_count(procfs_parse_net_udp(text, u.udp, ROOM));
		break;
	case 6:
		if (procfs_parse_snmp_udp(text, &mib) > 1)
			abort();
		break;
	case 7:
		check_count(procfs_parse_softnet(text, u.softnet, ROOM));
		break;
	case 8:
		check_count(procfs_parse_interrupts(text, u.irq, ROOM));
		for (int i = 0; i < ROOM; i++)
			u.irq[i].name[sizeof(u.irq[i].name) - 1] = '\0';
		break;
	case 9:
		check_count(procfs_parse_softirqs(text, "NET_RX", u.counts, ROOM));
		break;
	case 10:
		if (procfs_parse_sysctl_u32(text, &v) > 0)
			abort();
		break;
	default:
		procfs_parse_kconfig(text, "CONFIG_IRQ_TIME_ACCOUNTING");
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;

	if (size < 1)
		return 0;
	len = size - 1 < MAX_TEXT ? size - 1 : MAX_TEXT;
	memcpy(text, data + 1, len);
	text[len] = '\0';
	parse(data[0]);
	return 0;
}
