// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for daemon/collect/procfs: the /proc parsers, on text of known content,
 * and the schedstat reader against the thread's own CPU clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/collect/procfs.h"
#include "tests/unit/unit_main.h"

static void test_stat(void **state)
{
	const char *text =
		"cpu  300 1 60 9000 20 0 7 5 0 0\n"
		"cpu0 100 1 20 4000 10 0 3 2 0 0\n"
		"cpu1 200 0 40 5000 10 0 4 3 0 0\n"
		"intr 12345 0 0\n"
		"ctxt 999\n";
	struct procfs_cpu_time t[4];

	(void)state;
	assert_int_equal(procfs_parse_stat(text, t, 4), 2);
	assert_int_equal(t[0].cpu, 0);
	assert_int_equal(t[1].cpu, 1);
	assert_int_equal(t[1].user, 200);
	assert_int_equal(t[1].system, 40);
	assert_int_equal(t[1].idle, 5000);
	assert_int_equal(t[1].iowait, 10);
	assert_int_equal(t[1].softirq, 4);
	assert_int_equal(t[1].steal, 3);
	/* Bounded by @max. */
	assert_int_equal(procfs_parse_stat(text, t, 1), 1);
}

static void test_task_stat(void **state)
{
	/* comm with spaces and a ')': the last ')' ends it. Fields from
	 * state (3) on; flags (9) has PF_KTHREAD; processor (39) = 1;
	 * delayacct_blkio_ticks (42) = 77. */
	const char *text =
		"4242 (a (b) c) D 1 4242 4242 0 -1 2097216 10 0 0 0 5 6 0 0 20 0 1 0 "
		"100 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 77 0 0\n";
	struct procfs_task t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(procfs_parse_task_stat(text, &t), 0);
	assert_string_equal(t.comm, "a (b) c");
	assert_int_equal(t.state, 'D');
	assert_true(t.kthread);
	assert_int_equal(t.cpu, 1);
	assert_int_equal(t.blkio_ticks, 77);
	assert_int_equal(procfs_parse_task_stat("garbage", &t), -EINVAL);
	assert_int_equal(procfs_parse_task_stat("1 (x) R 1 2\n", &t), -EINVAL);
}

static void test_schedstat_and_status(void **state)
{
	struct procfs_task t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(procfs_parse_schedstat("123456789 2000 31\n", &t), 0);
	assert_true(t.have_schedstat);
	assert_int_equal(t.sum_exec_ns, 123456789);
	assert_int_equal(t.run_delay_ns, 2000);
	assert_int_equal(t.pcount, 31);
	assert_int_equal(procfs_parse_schedstat("1 2\n", &t), -EINVAL);
	assert_int_equal(procfs_parse_task_status(
		"Name:\tx\nvoluntary_ctxt_switches:\t12\n"
		"nonvoluntary_ctxt_switches:\t34\n", &t), 0);
	assert_int_equal(t.nvcsw, 12);
	assert_int_equal(t.nivcsw, 34);
	assert_int_equal(procfs_parse_task_status("Name:\tx\n", &t), -EINVAL);
}

/* The kernel's schedstat of this thread against its own CPU-time clock. */
static void test_read_schedstat_live(void **state)
{
	uint64_t sum0, sum1, delay, pcount;
	struct timespec ts0, ts1, now;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	double clock_ns, stat_ns;
	volatile uint64_t x = 0;

	(void)state;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts0);
	assert_int_equal(procfs_read_schedstat((uint32_t)tid, &sum0, &delay, &pcount), 0);
	do {	/* burn ~60 ms of CPU */
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((now.tv_sec - ts0.tv_sec) * 1e9 + (now.tv_nsec - ts0.tv_nsec) < 60e6);
	assert_int_equal(procfs_read_schedstat((uint32_t)tid, &sum1, &delay, &pcount), 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts1);
	clock_ns = (ts1.tv_sec - ts0.tv_sec) * 1e9 + (ts1.tv_nsec - ts0.tv_nsec);
	stat_ns = (double)(sum1 - sum0);
	/* schedstat lags a running thread by at most a tick (4 ms at HZ=250). */
	assert_true(stat_ns > clock_ns - 5e6);
	assert_true(stat_ns < clock_ns + 1e6);
	assert_int_equal(procfs_read_schedstat(0x7ffffff0u, &sum1, &delay, &pcount), -ENOENT);
}

static void test_diskstats(void **state)
{
	const char *text =
		" 253       0 vda 1000 5 8000 400 200 3 1600 100 2 900 500 0 0 0 0 10 20\n"
		" 253       1 vda1 990 5 7900 390 200 3 1600 100 0 880 490\n"
		"   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n"
		"broken line\n";
	struct procfs_disk d[8];

	(void)state;
	assert_int_equal(procfs_parse_diskstats(text, d, 8), 3);
	assert_string_equal(d[0].name, "vda");
	assert_int_equal(d[0].major, 253);
	assert_int_equal(d[0].rd_ios, 1000);
	assert_int_equal(d[0].rd_ms, 400);
	assert_int_equal(d[0].wr_ios, 200);
	assert_int_equal(d[0].wr_ms, 100);
	assert_int_equal(d[0].in_flight, 2);
	assert_int_equal(d[0].io_ticks_ms, 900);
	assert_string_equal(d[1].name, "vda1");
}

static void test_net_udp(void **state)
{
	const char *text =
		"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
		"  255: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   101        0 20449 2 0000000000000000 0\n"
		"  812: 00000000:B04B 00000000:0000 07 00000000:00007D00 00:00000000 00000000     0        0 91827 2 0000000000000000 219002\n";
	struct procfs_udp_sock u[4];

	(void)state;
	assert_int_equal(procfs_parse_net_udp(text, u, 4), 2);
	assert_int_equal(u[0].port, 53);
	assert_int_equal(u[1].port, 0xB04B);
	assert_int_equal(u[1].rx_queue_bytes, 0x7D00);
	assert_int_equal(u[1].drops, 219002);
	assert_int_equal(u[1].inode, 91827);
}

/* /proc/net/snmp's Udp table (not UdpLite's) and snmp6's lines, summed. */
static void test_snmp_udp(void **state)
{
	const char *v4 =
		"Ip: Forwarding DefaultTTL InReceives\n"
		"Ip: 1 64 12345\n"
		"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n"
		"Udp: 33387553 307041 17633338 29841877 17633330 0\n"
		"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n"
		"UdpLite: 7 0 0 0 9 0\n";
	const char *v6 =
		"Ip6InReceives                   \t12\n"
		"Udp6InDatagrams                 \t100\n"
		"Udp6NoPorts                     \t3\n"
		"Udp6RcvbufErrors                \t5\n"
		"UdpLite6InDatagrams             \t70\n";
	struct procfs_udp_mib m = { 0 };

	(void)state;
	assert_int_equal(procfs_parse_snmp_udp(v4, &m), 1);
	assert_int_equal(m.in_datagrams, 33387553);
	assert_int_equal(m.rcvbuf_errors, 17633330);
	assert_int_equal(procfs_parse_snmp_udp(v6, &m), 1);
	assert_int_equal(m.in_datagrams, 33387653);
	assert_int_equal(m.rcvbuf_errors, 17633335);
	/* Nothing of UDP; a header without its values; values cut short. */
	memset(&m, 0, sizeof(m));
	assert_int_equal(procfs_parse_snmp_udp("Ip: Forwarding\nIp: 1\n", &m), 0);
	assert_int_equal(procfs_parse_snmp_udp("Udp: InDatagrams NoPorts\n", &m), -EINVAL);
	assert_int_equal(procfs_parse_snmp_udp("Udp: NoPorts InDatagrams\nUdp: 4\n", &m), -EINVAL);
	assert_int_equal(procfs_parse_snmp_udp("Udp: InDatagrams\nUdp: x\n", &m), -EINVAL);
	/* This host's own files parse. */
	assert_int_equal(procfs_read_udp_mib(&m), 0);
}

static void test_softnet(void **state)
{
	const char *now =
		"0048737b 00000001 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
		"00003028 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002 00000000 00000000\n";
	const char *old = "0000000a 00000002 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";
	struct procfs_softnet s[4];

	(void)state;
	assert_int_equal(procfs_parse_softnet(now, s, 4), 2);
	assert_int_equal(s[0].processed, 0x48737b);
	assert_int_equal(s[0].dropped, 1);
	assert_int_equal(s[0].time_squeeze, 3);
	assert_int_equal(s[0].cpu, 0);
	assert_int_equal(s[1].cpu, 2);		/* from the CPU column, not the line */
	assert_int_equal(procfs_parse_softnet(old, s, 4), 1);
	assert_int_equal(s[0].cpu, 0);
	assert_int_equal(s[0].processed, 10);
}

static void test_interrupts_and_softirqs(void **state)
{
	const char *irq =
		"           CPU0       CPU1       \n"
		" 36:          5      72120 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
		" 41:       2442          0 PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\n"
		"NMI:          0          0   Non-maskable interrupts\n"
		"LOC:      59531      62598   Local timer interrupts\n";
	const char *sirq =
		"                    CPU0       CPU1       \n"
		"          HI:          0          0\n"
		"      NET_TX:          1          2\n"
		"      NET_RX:     200000       3000\n";
	struct procfs_irq q[8];
	uint64_t v[4];

	(void)state;
	assert_int_equal(procfs_parse_interrupts(irq, q, 8), 4);
	assert_int_equal(q[0].irq, 36);
	assert_int_equal(q[0].count, 72125);
	assert_string_equal(q[0].name, "virtio1-req.0");
	assert_int_equal(q[1].count, 2442);
	assert_int_equal(q[3].irq, -1);
	assert_string_equal(q[3].name, "LOC");
	assert_int_equal(q[3].count, 59531 + 62598);
	assert_int_equal(procfs_parse_softirqs(sirq, "NET_RX", v, 4), 2);
	assert_int_equal(v[0], 200000);
	assert_int_equal(v[1], 3000);
	assert_int_equal(procfs_parse_softirqs(sirq, "BLOCK", v, 4), 0);
}

static void test_kconfig(void **state)
{
	const char *cfg =
		"#\n# Automatically generated file; DO NOT EDIT.\n#\n"
		"CONFIG_IRQ_TIME_ACCOUNTING_X=y\n"
		"# CONFIG_IRQ_TIME_ACCOUNTING is not set\n"
		"CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y\n"
		"CONFIG_BPF_SYSCALL=y\n"
		"CONFIG_NR_CPUS=64\n"
		"CONFIG_IKCONFIG=m\n"
		"CONFIG_LAST=y";
	/* Only "=y" is built in: not a longer name's line, "=m" or a value. */
	static const struct {
		const char *key;
		int want;
	} cases[] = {
		{ "IRQ_TIME_ACCOUNTING", 0 }, { "HAVE_IRQ_TIME_ACCOUNTING", 1 },
		{ "BPF_SYSCALL", 1 }, { "NR_CPUS", 0 }, { "IKCONFIG", 0 },
		{ "LAST", 1 }, { "ABSENT", 0 },
	};
	int v;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (procfs_parse_kconfig(cfg, cases[i].key) != cases[i].want)
			fail_msg("CONFIG_%s: want %d", cases[i].key, cases[i].want);
	assert_int_equal(procfs_parse_kconfig("", "LAST"), 0);
	/*
	 * The running kernel: the daemon's BPF programs need BPF_SYSCALL, so
	 * a readable configuration must say y.
	 */
	v = procfs_read_kconfig("BPF_SYSCALL");
	assert_true(v == 1 || v == -ENOENT);
	if (v == 1)
		assert_int_equal(procfs_read_kconfig("RXBNECK_NO_SUCH_OPTION"), 0);
}

static void test_kconfig_u64(void **state)
{
	const char *cfg = "CONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_NR_CPUS=64\n"
			  "CONFIG_BAD=12x\nCONFIG_EMPTY=\nCONFIG_BIG=99999999999999999999\n"
			  "CONFIG_LAST=7";
	/* In order: a failed lookup leaves the last value read. */
	static const struct {
		const char *key;
		int rc;
		uint64_t v;
	} cases[] = {
		{ "HZ", 0, 250 },		/* not HZ_250's line */
		{ "LAST", 0, 7 },
		{ "BAD", -EINVAL, 7 }, { "EMPTY", -EINVAL, 7 }, { "BIG", -ERANGE, 7 },
		{ "HZ_250", -EINVAL, 7 }, { "ABSENT", -ENOENT, 7 },
	};
	uint64_t v = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = procfs_parse_kconfig_u64(cfg, cases[i].key, &v);

		if (rc != cases[i].rc || v != cases[i].v)
			fail_msg("CONFIG_%s: %d, %llu; want %d, %llu", cases[i].key, rc,
				 (unsigned long long)v, cases[i].rc,
				 (unsigned long long)cases[i].v);
	}
	/* the running kernel has a tick rate, when its configuration is readable */
	if (procfs_read_kconfig_u64("HZ", &v) == 0)
		assert_true(v >= 100 && v <= 1000);
}

static void test_sysctl_u32(void **state)
{
	/* In order; a refused text leaves the value read before it (7). */
	static const struct {
		const char *text;
		int rc;
		uint32_t v;
	} cases[] = {
		{ "1000\n", 0, 1000 }, { "0", 0, 0 }, { "4294967295\n", 0, UINT32_MAX },
		{ "7", 0, 7 },
		{ "4294967296\n", -ERANGE, 7 }, { "99999999999\n", -ERANGE, 7 },
		{ "", -EINVAL, 7 }, { "\n", -EINVAL, 7 }, { "-1\n", -EINVAL, 7 },
		{ "0x10\n", -EINVAL, 7 }, { "4096 4096\n", -EINVAL, 7 },
		{ "1000\n\n", -EINVAL, 7 },
	};
	uint32_t v = 7;
	unsigned long long want;
	FILE *f;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = procfs_parse_sysctl_u32(cases[i].text, &v);

		if (rc != cases[i].rc || v != cases[i].v)
			fail_msg("\"%s\": %d, %u; want %d, %u", cases[i].text, rc, v,
				 cases[i].rc, cases[i].v);
	}

	/* The running kernel's value, as stdio reads it. */
	f = fopen("/proc/sys/net/core/netdev_max_backlog", "r");
	if (!f)
		skip();
	assert_int_equal(fscanf(f, "%llu", &want), 1);
	fclose(f);
	assert_true(procfs_read_netdev_max_backlog() == want);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_stat),
	cmocka_unit_test(test_task_stat),
	cmocka_unit_test(test_schedstat_and_status),
	cmocka_unit_test(test_read_schedstat_live),
	cmocka_unit_test(test_diskstats),
	cmocka_unit_test(test_net_udp),
	cmocka_unit_test(test_snmp_udp),
	cmocka_unit_test(test_softnet),
	cmocka_unit_test(test_interrupts_and_softirqs),
	cmocka_unit_test(test_kconfig),
	cmocka_unit_test(test_kconfig_u64),
	cmocka_unit_test(test_sysctl_u32),
)
