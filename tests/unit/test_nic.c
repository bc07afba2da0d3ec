// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for daemon/collect/nic: counter deltas, fallback selection, and the
 * reader against the loopback device (bracketed by sysfs counters).
 *
 * The same binary is the driver of tests/integration/nic_netlink.sh:
 *   test_nic --dump IFNAME [--fallback RING,FRAMES,USECS] [--repeat]
 *	prints one "rc=0 name=... key=value ... note=..." line per sample;
 *	with --repeat it samples again for every line read on stdin until EOF,
 *	with one reader (the way the daemon samples every epoch).
 *   test_nic --list
 *	prints the names nic_list_devices() returns, one per line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/parse.h"
#include "common/util.h"
#include "daemon/collect/nic.h"

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* ------------------------------------------------------------ pure parts -- */

static void test_counter_delta_increase(void **state)
{
	bool reset = false;

	(void)state;
	assert_int_equal(nic_counter_delta(100, 250, &reset), 150);
	assert_false(reset);
	assert_int_equal(nic_counter_delta(7, 7, &reset), 0);
	assert_false(reset);
	/* Large 64-bit values: no truncation through 32 bits. */
	assert_true(nic_counter_delta(0x100000000ULL, 0x300000005ULL, &reset) == 0x200000005ULL);
	assert_false(reset);
	assert_true(nic_counter_delta(0, UINT64_MAX, &reset) == UINT64_MAX);
	assert_false(reset);
}

static void test_counter_delta_backwards_is_reset(void **state)
{
	bool reset = false;

	(void)state;
	/* Device reset: the count since the reset, never a huge wrapped value. */
	assert_int_equal(nic_counter_delta(5000, 42, &reset), 42);
	assert_true(reset);
	/* A 32-bit counter wrapping: same rule, undercount < one epoch. */
	reset = false;
	assert_int_equal(nic_counter_delta(0xFFFFFFF0ULL, 0x10, &reset), 0x10);
	assert_true(reset);
	reset = false;
	assert_int_equal(nic_counter_delta(UINT64_MAX, 0, &reset), 0);
	assert_true(reset);
}

static void test_counters_delta_fields(void **state)
{
	struct nic_counters prev = { 10, 20, 30, 40, 50 };
	struct nic_counters cur = { 15, 20, 31, 45, 52 };
	struct nic_counters d;

	(void)state;
	assert_false(nic_counters_delta(&prev, &cur, &d));
	assert_int_equal(d.rx_packets, 5);
	assert_int_equal(d.rx_missed, 0);
	assert_int_equal(d.rx_fifo, 1);
	assert_int_equal(d.rx_dropped, 5);
	assert_int_equal(d.rx_over, 2);

	/* One field going backwards flags a reset; the others stay exact. */
	cur.rx_dropped = 3;
	assert_true(nic_counters_delta(&prev, &cur, &d));
	assert_int_equal(d.rx_dropped, 3);
	assert_int_equal(d.rx_packets, 5);
	assert_int_equal(d.rx_over, 2);
}

static void test_choose_param(void **state)
{
	struct nic_answer dev = { .err = 0, .present = true, .value = 4096 };
	struct nic_answer unsup = { .err = -EOPNOTSUPP };
	struct nic_answer absent = { .err = 0, .present = false, .value = 99 };
	uint32_t v = 12345;

	(void)state;
	assert_int_equal(nic_choose_param(&dev, true, 256, &v), RXB_SRC_DEVICE);
	assert_int_equal(v, 4096);
	/* The device's answer wins even without a fallback. */
	assert_int_equal(nic_choose_param(&dev, false, 0, &v), RXB_SRC_DEVICE);
	assert_int_equal(v, 4096);
	/* A device value of 0 is an answer, not a missing value. */
	dev.value = 0;
	assert_int_equal(nic_choose_param(&dev, true, 256, &v), RXB_SRC_DEVICE);
	assert_int_equal(v, 0);

	assert_int_equal(nic_choose_param(&unsup, true, 256, &v), RXB_SRC_CONFIG);
	assert_int_equal(v, 256);
	/* Attribute left out of the reply ("n/a"): configured value too. */
	assert_int_equal(nic_choose_param(&absent, true, 8, &v), RXB_SRC_CONFIG);
	assert_int_equal(v, 8);
	/* No configuration: unknown, and 0 rather than the stale value. */
	v = 12345;
	assert_int_equal(nic_choose_param(&unsup, false, 256, &v), RXB_SRC_NONE);
	assert_int_equal(v, 0);
}

static void test_err_unsupported(void **state)
{
	(void)state;
	assert_true(nic_err_unsupported(-EOPNOTSUPP));
	assert_true(nic_err_unsupported(-ENOTSUP));
	assert_true(nic_err_unsupported(-524));	/* kernel-internal ENOTSUPP */
	assert_false(nic_err_unsupported(0));
	assert_false(nic_err_unsupported(-ENODEV));
	assert_false(nic_err_unsupported(-EPERM));
	assert_false(nic_err_unsupported(-EIO));
	assert_string_equal(nic_source_name(RXB_SRC_DEVICE), "device");
	assert_string_equal(nic_source_name(RXB_SRC_CONFIG), "config");
	assert_string_equal(nic_source_name(RXB_SRC_NONE), "none");
}

/* ------------------------------------------- reader on the loopback dev -- */

static uint64_t sysfs_counter(const char *dev, const char *name)
{
	char path[128], buf[64];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", dev, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	assert_int_equal(rxb_parse_u64(buf, 0, UINT64_MAX, &v), 0);
	return v;
}

static void send_udp_to_loopback(int n)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	socklen_t len = sizeof(dst);
	char buf[64] = "rxbneck test";
	int rx, tx;

	/* A bound receiver, so no ICMP errors are generated. */
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(rx >= 0 && tx >= 0);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(rx, (struct sockaddr *)&dst, sizeof(dst)), 0);
	assert_int_equal(getsockname(rx, (struct sockaddr *)&dst, &len), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&dst,
					sizeof(dst)), (ssize_t)sizeof(buf));
		assert_int_equal(recv(rx, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	}
	close(rx);
	close(tx);
}

/* Append a netlink attribute (type, u32 or a string) at *@pos of @buf. */
static void put_attr(unsigned char *buf, size_t *pos, uint16_t type, const void *v, uint16_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };

	memcpy(buf + *pos, &a, sizeof(a));
	memcpy(buf + *pos + NLA_HDRLEN, v, n);
	*pos += NLA_ALIGN(NLA_HDRLEN + n);
}

/*
 * An ethtool RINGS_GET reply as the kernel builds it: the wanted u32s are
 * read, an attribute too short for a u32 counts as absent, a message whose
 * length runs past what arrived is refused, and one whose attributes
 * overrun it gives nothing from past the overrun.
 */
static void test_parse_ethtool(void **state)
{
	static const int want[] = { ETHTOOL_A_RINGS_RX, ETHTOOL_A_RINGS_RX_MAX, ETHTOOL_A_RINGS_TX };
	union { unsigned char b[256]; uint64_t align; } u;
	struct nlmsghdr *h = (struct nlmsghdr *)u.b;
	struct genlmsghdr g = { .cmd = ETHTOOL_MSG_RINGS_GET_REPLY, .version = 1 };
	struct nic_answer ans[3];
	uint32_t rx = 4096, rx_max = 8192;
	uint16_t half = 7;
	size_t pos = NLMSG_HDRLEN;

	(void)state;
	memset(&u, 0, sizeof(u));
	memcpy(u.b + pos, &g, sizeof(g));
	pos += GENL_HDRLEN;
	put_attr(u.b, &pos, ETHTOOL_A_RINGS_RX, &rx, 4);
	put_attr(u.b, &pos, ETHTOOL_A_RINGS_RX_MAX, &rx_max, 4);
	put_attr(u.b, &pos, ETHTOOL_A_RINGS_TX, &half, 2);
	h->nlmsg_len = (uint32_t)pos;
	h->nlmsg_type = 0x1e;
	memset(ans, 0, sizeof(ans));
	assert_int_equal(nic_parse_ethtool(u.b, pos, ETHTOOL_A_RINGS_MAX, want, ans, 3), 0);
	assert_true(ans[0].present);
	assert_int_equal(ans[0].value, 4096);
	assert_true(ans[1].present);
	assert_int_equal(ans[1].value, 8192);
	assert_false(ans[2].present);
	/* Longer than what arrived; shorter than its headers; an overrun. */
	memset(ans, 0, sizeof(ans));
	assert_int_equal(nic_parse_ethtool(u.b, pos - 4, ETHTOOL_A_RINGS_MAX, want, ans, 3),
			 -EBADMSG);
	assert_false(ans[0].present);
	assert_true(nic_parse_ethtool(u.b, 8, ETHTOOL_A_RINGS_MAX, want, ans, 3) < 0);
	/* libnl stops at an attribute that overruns the message: none read. */
	((struct nlattr *)(u.b + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 200;
	memset(ans, 0, sizeof(ans));
	assert_true(nic_parse_ethtool(u.b, pos, ETHTOOL_A_RINGS_MAX, want, ans, 3) <= 0);
	assert_false(ans[0].present || ans[1].present);
	assert_int_equal(nic_parse_ethtool(u.b, pos, 64, want, ans, 3), -EOVERFLOW);
}

static void test_reader_loopback(void **state)
{
	const struct nic_fallback fb = { .rx_ring = 333, .rx_max_frames = 7, .rx_usecs = 11 };
	const int npkts = 200;
	struct rxb_nic_meas m;
	struct nic_reader *nr = NULL;
	uint64_t sys0, sys1;

	(void)state;
	assert_int_equal(nic_reader_init(&nr), 0);
	assert_non_null(nr);

	/* First sample: zero deltas; lo has no ring/coalesce ops -> fallback. */
	sys0 = sysfs_counter("lo", "rx_packets");
	assert_int_equal(nic_reader_sample(nr, "lo", &fb, &m), 0);
	assert_string_equal(m.name, "lo");
	assert_int_equal(m.ifindex, 1);
	assert_int_equal(m.rx_packets, 0);
	assert_int_equal(m.rx_dropped, 0);
	assert_int_equal(m.ring_source, RXB_SRC_CONFIG);
	assert_int_equal(m.rx_ring, 333);
	assert_int_equal(m.rx_ring_max, 0);
	assert_int_equal(m.coalesce_source, RXB_SRC_CONFIG);
	assert_int_equal(m.rx_max_frames, 7);
	assert_int_equal(m.rx_usecs, 11);
	assert_string_equal(m.note, "lo: rings, coalesce not supported by the device, "
			    "configured values used");

	/*
	 * Others may use lo at the same time, so the delta is bracketed: at
	 * least our packets, at most what sysfs saw around both samples.
	 */
	send_udp_to_loopback(npkts);
	assert_int_equal(nic_reader_sample(nr, "lo", &fb, &m), 0);
	sys1 = sysfs_counter("lo", "rx_packets");
	assert_true(m.rx_packets >= (uint64_t)npkts);
	assert_true(m.rx_packets <= sys1 - sys0);

	/* Without a fallback the parameters are unknown, not invented. */
	assert_int_equal(nic_reader_sample(nr, "lo", NULL, &m), 0);
	assert_int_equal(m.ring_source, RXB_SRC_NONE);
	assert_int_equal(m.rx_ring, 0);
	assert_int_equal(m.coalesce_source, RXB_SRC_NONE);
	assert_string_equal(m.note, "lo: rings, coalesce not supported by the device, unknown");

	nic_reader_finish(nr);
}

static void test_reader_no_such_device(void **state)
{
	struct nic_reader *nr = NULL;
	struct rxb_nic_meas m;

	(void)state;
	assert_int_equal(nic_reader_init(&nr), 0);
	assert_int_equal(nic_reader_sample(nr, "rxbt-nosuchdev", NULL, &m), -ENODEV);
	assert_string_equal(m.name, "rxbt-nosuchdev");
	assert_int_equal(nic_reader_sample(nr, "", NULL, &m), -ENODEV);
	/* Longer than IFNAMSIZ - 1: cannot exist. */
	assert_int_equal(nic_reader_sample(nr, "abcdefghijklmnopq", NULL, &m), -ENODEV);
	/* The reader is still usable after errors. */
	assert_int_equal(nic_reader_sample(nr, "lo", NULL, &m), 0);
	nic_reader_finish(nr);
	nic_reader_finish(NULL);
}

static void test_list_devices_excludes_loopback(void **state)
{
	char names[RXB_MAX_NICS][RXB_IFNAME_LEN];
	struct nic_reader *nr = NULL;
	int n;

	(void)state;
	assert_int_equal(nic_reader_init(&nr), 0);
	n = nic_list_devices(nr, names, RXB_MAX_NICS);
	assert_true(n >= 0 && n <= RXB_MAX_NICS);
	for (int i = 0; i < n; i++)
		assert_string_not_equal(names[i], "lo");
	assert_int_equal(nic_list_devices(nr, names, 0), 0);
	assert_int_equal(nic_list_devices(nr, names, -1), -EINVAL);
	nic_reader_finish(nr);
}

/* ------------------------------------------------ integration driver -- */

static void print_meas(int rc, const struct rxb_nic_meas *m)
{
	if (rc) {
		printf("rc=%d error=%s\n", rc, strerror(-rc));
		fflush(stdout);
		return;
	}
	printf("rc=0 name=%s ifindex=%d rx_ring=%u rx_ring_max=%u ring_source=%s "
	       "rx_max_frames=%u rx_usecs=%u coalesce_source=%s rx_packets=%llu "
	       "rx_missed=%llu rx_fifo=%llu rx_dropped=%llu rx_over=%llu note=%s\n",
	       m->name, m->ifindex, m->rx_ring, m->rx_ring_max, nic_source_name(m->ring_source),
	       m->rx_max_frames, m->rx_usecs, nic_source_name(m->coalesce_source),
	       (unsigned long long)m->rx_packets, (unsigned long long)m->rx_missed,
	       (unsigned long long)m->rx_fifo, (unsigned long long)m->rx_dropped,
	       (unsigned long long)m->rx_over, m->note);
	fflush(stdout);
}

static int parse_fallback(const char *s, struct nic_fallback *fb)
{
	uint64_t v[3];
	char buf[64], *tok, *save = NULL;
	int i = 0;

	if (rxb_strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		return -EINVAL;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (i == 3 || rxb_parse_u64(tok, 0, UINT32_MAX, &v[i]))
			return -EINVAL;
		i++;
	}
	if (i != 3)
		return -EINVAL;
	fb->rx_ring = (uint32_t)v[0];
	fb->rx_max_frames = (uint32_t)v[1];
	fb->rx_usecs = (uint32_t)v[2];
	return 0;
}

static int driver_dump(int argc, char **argv)
{
	struct nic_fallback fb, *fbp = NULL;
	const char *ifname = argv[2];
	struct nic_reader *nr;
	struct rxb_nic_meas m;
	bool repeat = false;
	char line[64];
	int rc;

	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--repeat") == 0) {
			repeat = true;
		} else if (strcmp(argv[i], "--fallback") == 0 && i + 1 < argc) {
			if (parse_fallback(argv[++i], &fb)) {
				fprintf(stderr, "bad --fallback, want RING,FRAMES,USECS\n");
				return 2;
			}
			fbp = &fb;
		} else {
			fprintf(stderr, "unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	rc = nic_reader_init(&nr);
	if (rc) {
		fprintf(stderr, "nic_reader_init: %s\n", strerror(-rc));
		return 1;
	}
	rc = nic_reader_sample(nr, ifname, fbp, &m);
	print_meas(rc, &m);
	while (repeat && fgets(line, sizeof(line), stdin)) {
		rc = nic_reader_sample(nr, ifname, fbp, &m);
		print_meas(rc, &m);
	}
	nic_reader_finish(nr);
	return rc ? 1 : 0;
}

static int driver_list(void)
{
	char names[64][RXB_IFNAME_LEN];
	struct nic_reader *nr;
	int n;

	n = nic_reader_init(&nr);
	if (n) {
		fprintf(stderr, "nic_reader_init: %s\n", strerror(-n));
		return 1;
	}
	n = nic_list_devices(nr, names, 64);
	for (int i = 0; i < n; i++)
		printf("%s\n", names[i]);
	nic_reader_finish(nr);
	return n < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_delta_increase),
		cmocka_unit_test(test_counter_delta_backwards_is_reset),
		cmocka_unit_test(test_counters_delta_fields),
		cmocka_unit_test(test_choose_param),
		cmocka_unit_test(test_err_unsupported),
		cmocka_unit_test(test_parse_ethtool),
		cmocka_unit_test(test_reader_loopback),
		cmocka_unit_test(test_reader_no_such_device),
		cmocka_unit_test(test_list_devices_excludes_loopback),
	};

	if (argc >= 3 && strcmp(argv[1], "--dump") == 0)
		return driver_dump(argc, argv);
	if (argc == 2 && strcmp(argv[1], "--list") == 0)
		return driver_list();
	if (argc != 1) {
		fprintf(stderr, "usage: %s [--dump IFNAME [--fallback R,F,U] [--repeat] | --list]\n",
			argv[0]);
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
