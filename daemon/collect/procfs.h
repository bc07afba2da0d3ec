/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readers of the /proc files the measurement falls back on when BPF cannot be
 * loaded, and which it also uses with BPF (CPU idle time, per-task seeding).
 *
 * Each file has a parser that works on text (unit-testable, no I/O) and a
 * reader that fetches the text. Parsers return the number of items filled
 * (or 0/-errno for single records); they skip lines they do not understand
 * and never read past the text. Counters are cumulative, as the kernel
 * keeps them; callers take deltas.
 */
#ifndef RXB_DAEMON_PROCFS_H
#define RXB_DAEMON_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read a whole (pseudo-)file into a NUL-terminated buffer the caller frees.
 * 0 or -errno. */
int procfs_read_file(const char *path, char **text, size_t *len);

/* ------------------------------------------------------- /proc/stat -- */

/* One "cpuN" line, in USER_HZ ticks. */
struct procfs_cpu_time {
	int cpu;
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

/* All "cpuN" lines (not the "cpu" total); @out indexed in order found. */
int procfs_parse_stat(const char *text, struct procfs_cpu_time *out, int max);
int procfs_read_stat(struct procfs_cpu_time *out, int max);

/* ------------------------------------------- /proc/<pid>/task/<tid>/ -- */

struct procfs_task {
	uint32_t tid;
	uint32_t tgid;
	char comm[16];
	char state;		/* R, S, D, ... */
	int cpu;		/* last CPU it ran on */
	bool kthread;		/* PF_KTHREAD */
	uint64_t blkio_ticks;	/* delayacct_blkio_ticks (0 unless enabled) */
	bool have_schedstat;
	uint64_t sum_exec_ns;	/* schedstat: on-CPU time */
	uint64_t run_delay_ns;	/* schedstat: runqueue wait */
	uint64_t pcount;	/* schedstat: times run */
	uint64_t nvcsw;		/* status: voluntary_ctxt_switches */
	uint64_t nivcsw;	/* status: nonvoluntary_ctxt_switches */
};

/* .../stat: comm, state, flags, processor, delayacct_blkio_ticks. */
int procfs_parse_task_stat(const char *text, struct procfs_task *t);
/* .../schedstat: three numbers. */
int procfs_parse_schedstat(const char *text, struct procfs_task *t);
/* .../status: the two ctxt_switches lines. */
int procfs_parse_task_status(const char *text, struct procfs_task *t);

/* /proc/<tid>/schedstat of any thread: on-CPU and runqueue-wait totals and
 * the number of times it was switched in. 0 or -errno. */
int procfs_read_schedstat(uint32_t tid, uint64_t *sum_exec_ns, uint64_t *run_delay_ns,
			  uint64_t *pcount);

/*
 * Call @fn for every thread of every process (stat and schedstat read; with
 * @with_status also status). Threads that vanish meanwhile are skipped. A
 * non-zero return of @fn stops the walk and is returned. 0 or -errno.
 */
int procfs_for_each_task(bool with_status,
			 int (*fn)(void *arg, const struct procfs_task *t),
			 void *arg);

/* ------------------------------------------------- /proc/diskstats -- */

struct procfs_disk {
	char name[32];
	unsigned major, minor;
	uint64_t rd_ios, rd_ms, wr_ios, wr_ms;	/* completed, time spent */
	uint64_t in_flight, io_ticks_ms;
};

int procfs_parse_diskstats(const char *text, struct procfs_disk *out, int max);
int procfs_read_diskstats(struct procfs_disk *out, int max);

/* ------------------------------------------- /proc/net/udp and udp6 -- */

struct procfs_udp_sock {
	uint16_t port;		/* local port */
	uint64_t rx_queue_bytes;
	uint64_t drops;		/* sk_drops */
	uint64_t inode;
};

int procfs_parse_net_udp(const char *text, struct procfs_udp_sock *out, int max);
/* Both /proc/net/udp and /proc/net/udp6 of the caller's network namespace. */
int procfs_read_net_udp(struct procfs_udp_sock *out, int max);

/* ------------------------------------ /proc/net/snmp and snmp6: UDP -- */

/* The namespace's UDP datagrams delivered to sockets, and those a full
 * receive buffer dropped (IPv4 + IPv6). */
struct procfs_udp_mib {
	uint64_t in_datagrams;
	uint64_t rcvbuf_errors;
};

/*
 * Add the UDP counters of @text to @out: /proc/net/snmp's "Udp:" table (a
 * header line of names, then a line of values) or /proc/net/snmp6's
 * "Udp6InDatagrams N" lines. 1 when found, 0 when not, -EINVAL when the
 * table is broken.
 */
int procfs_parse_snmp_udp(const char *text, struct procfs_udp_mib *out);
/* Both files of the caller's network namespace: 0 or -errno. */
int procfs_read_udp_mib(struct procfs_udp_mib *out);

/* ------------------------------------------ /proc/net/softnet_stat -- */

struct procfs_softnet {
	int cpu;
	uint64_t processed, dropped, time_squeeze;
};

int procfs_parse_softnet(const char *text, struct procfs_softnet *out, int max);
int procfs_read_softnet(struct procfs_softnet *out, int max);

/* ------------------------------------------------- /proc/interrupts -- */

struct procfs_irq {
	int irq;		/* -1 for the named rows (LOC, RES, ...) */
	char name[32];		/* the action names, as shown */
	uint64_t count;		/* summed over CPUs */
};

int procfs_parse_interrupts(const char *text, struct procfs_irq *out, int max);
int procfs_read_interrupts(struct procfs_irq *out, int max);

/* --------------------------------------------------- /proc/softirqs -- */

/* Per-CPU counts of one vector (e.g. "NET_RX"); returns CPUs filled. */
int procfs_parse_softirqs(const char *text, const char *vec, uint64_t *out,
			  int max);
int procfs_read_softirqs(const char *vec, uint64_t *out, int max);

/* --------------------------------------------------- /proc/sys/ -- */

/*
 * A sysctl file that holds one unsigned number: decimal digits, then at
 * most a newline. 0 with *@out set, -EINVAL for anything else, -ERANGE
 * above UINT32_MAX.
 */
int procfs_parse_sysctl_u32(const char *text, uint32_t *out);

/*
 * net.core.netdev_max_backlog: packets the per-CPU backlog holds (stage
 * A's queue when a device has no RX ring of its own, e.g. veth or lo);
 * 0 when it cannot be read (the kernel refuses 0 as a setting).
 */
uint32_t procfs_read_netdev_max_backlog(void);

/* ------------------------------------------ the kernel's configuration -- */

/*
 * Is CONFIG_@name (without the prefix) set to y in the configuration
 * @text: 1 for "CONFIG_name=y", 0 for "# CONFIG_name is not set", "=n",
 * or no line about it.
 */
int procfs_parse_kconfig(const char *text, const char *name);

/*
 * The same for the running kernel: reads /boot/config-<release>, else
 * /proc/config.gz. 1, 0, or -ENOENT when neither can be read.
 */
int procfs_read_kconfig(const char *name);

/*
 * A numeric option, "CONFIG_@name=N" (e.g. HZ): 0 with *@v, -ENOENT when
 * there is no such line, -EINVAL/-ERANGE when it is not a number.
 */
int procfs_parse_kconfig_u64(const char *text, const char *name, uint64_t *v);
/* The same for the running kernel; -ENOENT also when no configuration is readable. */
int procfs_read_kconfig_u64(const char *name, uint64_t *v);

#endif
