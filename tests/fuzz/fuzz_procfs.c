// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the collector's /proc text parsers
 * (daemon/collect/procfs.c): /proc/stat, /proc/PID/task/TID/{stat,
 * schedstat,status}, /proc/diskstats, /proc/net/udp, softnet_stat,
 * /proc/interrupts, /proc/softirqs (read every epoch when stage A's
 * programs are sampled), sysctl files. The input is the file's text.
 * Besides "no crash, no sanitizer report": a table parser returns an error
 * or at most the rows it was given room for, and writes no further.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/collect/procfs.h"

#define ROOM 4		/* rows each table parser gets, one guard after */

/* @n rows returned for room ROOM: an error (< 0) or 0..ROOM. */
static void check_rows(int n)
{
	if (n > ROOM)
		abort();
}

static void tables(const char *text)
{
	struct procfs_cpu_time cpus[ROOM + 1];
	struct procfs_disk disks[ROOM + 1];
	struct procfs_udp_sock socks[ROOM + 1];
	struct procfs_softnet sn[ROOM + 1];
	struct procfs_irq irqs[ROOM + 1];
	uint64_t counts[ROOM + 1];

	memset(&cpus[ROOM], 0xa5, sizeof(cpus[ROOM]));
	check_rows(procfs_parse_stat(text, cpus, ROOM));
	check_rows(procfs_parse_diskstats(text, disks, ROOM));
	check_rows(procfs_parse_net_udp(text, socks, ROOM));
	check_rows(procfs_parse_softnet(text, sn, ROOM));
	check_rows(procfs_parse_interrupts(text, irqs, ROOM));
	counts[ROOM] = 0xa5a5a5a5a5a5a5a5ULL;
	check_rows(procfs_parse_softirqs(text, "NET_RX", counts, ROOM));
	check_rows(procfs_parse_softirqs(text, "TIMER", counts, ROOM));
	if (counts[ROOM] != 0xa5a5a5a5a5a5a5a5ULL)
		abort();
	for (size_t i = 0; i < sizeof(cpus[ROOM]); i++)
		if (((const unsigned char *)&cpus[ROOM])[i] != 0xa5)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct procfs_task t;
	uint32_t v = 7;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	tables(text);
	memset(&t, 0, sizeof(t));
	procfs_parse_task_stat(text, &t);
	procfs_parse_schedstat(text, &t);
	procfs_parse_task_status(text, &t);
	if (procfs_parse_sysctl_u32(text, &v) && v != 7)
		abort();
	free(text);
	return 0;
}
