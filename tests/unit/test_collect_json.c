// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the disk rate (daemon/collect/collect_disk), the
 * record's JSON form (daemon/collect/collect_json), the episode size
 * buckets, and the collector's options: parsed, refused before anything
 * is loaded, and without BPF nothing sampled.
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/collect/collect.h"
#include "daemon/collect/collect_disk.h"
#include "daemon/collect/collect_json.h"
#include "daemon/collect/collect_net.h"
#include "tests/unit/collect_fixture.h"
#include "tests/unit/unit_main.h"

/* --------------------------------------------------------------- disk -- */

static void test_disk(void **state)
{
	struct blkio_snap *p = calloc(1, sizeof(*p)), *c = calloc(1, sizeof(*c));
	struct rxb_disk_meas d;

	(void)state;
	p->ndisks = 1;
	p->disks[0] = (struct blkio_snap_disk){ 253 << 20, { .completions = 10, .service_ns = 1000 } };
	c->ndisks = 2;
	c->disks[0] = (struct blkio_snap_disk){ 253 << 20,
		{ .completions = 5010, .service_ns = 1000 + 5000 * 150000ULL } };
	strcpy(c->disks[0].v.name, "vda");
	c->disks[1] = (struct blkio_snap_disk){ 7 << 20, { .completions = 30, .service_ns = 900 } };
	strcpy(c->disks[1].v.name, "loop0");
	collect_disk_compute(p, c, &d);
	assert_true(d.valid);
	assert_string_equal(d.device, "vda");
	assert_int_equal(d.completions, 5000);
	assert_float_equal(d.mean_service_ns, 150000, 1e-9);
	assert_float_equal(d.service_rate_per_s, 1e9 / 150000, 1e-9);
	collect_disk_compute(c, c, &d);	/* nothing completed */
	assert_false(d.valid);
	assert_true(isnan(d.service_rate_per_s));
	free(p);
	free(c);
}

/* --------------------------------------------------------- JSON, opts -- */

/*
 * The probe's bucket of an episode size against the record's bucket
 * bounds: every size n lies in [lo(i), lo(i + 1)) of its bucket i, and the
 * buckets never go down as n grows. All sizes to 2^16, then around every
 * power of two and its quarters up to 2^31.
 */
static void test_episode_buckets(void **state)
{
	uint32_t prev = 0;

	(void)state;
	for (uint64_t n = 1; n <= 65536; n++) {
		uint32_t i = sockq_episode_bucket(n);

		assert_true(i >= prev);
		assert_true(rxb_episode_bucket_lo(i) <= (double)n);
		assert_true((double)n < rxb_episode_bucket_lo(i + 1));
		prev = i;
	}
	for (unsigned int b = 2; b < 32; b++) {
		for (unsigned int q = 0; q < 4; q++) {
			uint64_t at = (1ULL << b) + ((1ULL << b) * q) / 4;

			for (uint64_t n = at - 1; n <= at + 1; n++) {
				uint32_t i = sockq_episode_bucket(n);

				assert_true(rxb_episode_bucket_lo(i) <= (double)n);
				assert_true((double)n < rxb_episode_bucket_lo(i + 1));
			}
			assert_int_equal(sockq_episode_bucket(at), 4 * b + q);
		}
	}
	/* Beyond the last bucket: clamped to it. */
	assert_int_equal(sockq_episode_bucket(1ULL << 40), SOCKQ_EPISODE_BUCKETS - 1);
}

/*
 * @e written afresh into @w has each of the fragments in @want (up to a
 * NULL): the record's JSON form is checked by pieces, not whole.
 */
static void expect_json(struct json_writer *w, const struct rxb_epoch *e,
			const char *const *want)
{
	const char *t;

	json_reset(w);
	collect_json_epoch(w, NULL, e, NULL);
	assert_true(json_ok(w));
	t = json_text(w);
	for (; *want; want++)
		if (!strstr(t, *want))
			fail_msg("no %s in %s", *want, t);
}

static void test_json_keys(void **state)
{
	struct rxb_epoch *e = collect_fixture_epoch(1);
	struct json_writer w;

	(void)state;
	e->seq = 3;
	e->probes = RXB_PROBE_SCHED | RXB_PROBE_SOCKQ;
	e->cpus[0].cpu_bound = 2.5;
	e->cpus[0].io_bound = NAN;
	e->disk.service_rate_per_s = NAN;
	e->nsocks = 2;
	e->socks[0].port = 5001;
	e->socks[0].counts_valid = true;
	e->socks[0].drops_valid = true;
	e->socks[0].pkts_in = 7;
	e->socks[0].cpu_ns_per_pkt = NAN;
	e->socks[1].port = 5002;		/* degraded: counts unknown */
	e->socks[1].drops_valid = true;
	e->socks[1].drops = 4;
	e->nreasons = 1;
	strcpy(e->drops_by_reason[0].reason, "SOCKET_RCVBUFF");
	e->drops_by_reason[0].count = 9;
	e->degraded = RXB_DEGRADED_NO_BPF_STATS;
	strcpy(e->degraded_reason, "why");
	json_init(&w, false);
	expect_json(&w, e, (const char *const[]){
		"\"probes\":[\"sched\",\"sockq\"]",
		"\"cpu_bound\":2.5,\"io_bound\":null",
		"\"service_rate_per_s\":null",
		"\"port\":5001,\"ipproto\":0,\"pkts_in\":7",
		"\"port\":5002,\"ipproto\":0,\"pkts_in\":null",
		"\"drops\":4",
		/* The scheduler's view of the receivers not valid: no histograms. */
		"\"wake_max_ns\":null,"
		"\"offcpu_hist_log2_ns\":null,\"offcpu_slot_mean_ns\":null,"
		"\"offcpu_slot_sd_ns\":null,\"wake_hist_log2_ns\":null,"
		"\"wake_slot_mean_ns\":null,\"wake_slot_sd_ns\":null,\"active_ns\":null}",
		"\"drops_by_reason\":{\"SOCKET_RCVBUFF\":9}",
		"\"degraded\":true,\"degraded_flags\":[\"no_bpf_stats\"]",
		/* every key, whatever its value */
		"\"nics\":", "\"napi\":", "\"irqs\":", "\"probe_cost\":", "\"disk\":",
		"\"sockets\":", "\"net_probe_every\":", "\"net_sampled\":",
		"\"net_sampled_seq\":", "\"net_attach_ns\":", "\"net_detach_ns\":",
		"\"net_stage_a_every\":", "\"net_stage_a\":",
		"\"napi\":[]",
		NULL });

	/*
	 * An epoch between two samples: NAPI and packet counts not measured
	 * (null), drops and the receivers' scheduling measured.
	 */
	e->probes = RXB_PROBE_SCHED | RXB_PROBE_SOCKQ | RXB_PROBE_NETRX;
	e->net_probe_every = 8;
	e->net_sampled = false;
	e->net_sampled_seq = 1;
	e->net_attach_ns = 250000;
	e->nsocks = 1;
	memset(&e->socks[0], 0, sizeof(e->socks[0]));
	e->socks[0].port = 5001;
	e->socks[0].drops_valid = e->socks[0].reasons_valid = true;
	e->socks[0].drops = e->socks[0].drops_rcvbuf = 12;
	e->socks[0].receivers_valid = true;
	e->socks[0].receiver_oncpu_ns = 5000;
	e->socks[0].cpu_ns_per_pkt = NAN;
	e->socks[0].offcpu_hist[12] = 2;
	e->socks[0].wake_hist[0] = 3.5;
	e->socks[0].wake_hist[21] = 1;
	/* Slot 12's two windows of 2^-17 s (binary-exact): no spread. */
	e->socks[0].offcpu_sums.sum_s[12] = ldexp(1, -16);
	e->socks[0].offcpu_sums.sq_s2[12] = ldexp(1, -33);
	e->socks[0].wake_max_ns = 2500000;
	e->socks[0].active_ns = 7500;
	expect_json(&w, e, (const char *const[]){
		"\"net_probe_every\":8,\"net_sampled\":false,\"net_sampled_seq\":1,"
		"\"net_attach_ns\":250000,\"net_detach_ns\":null",
		"\"napi\":null",
		"\"pkts_in\":null",
		"\"drops\":12,\"drops_rcvbuf\":12,\"drops_by_reason\":{}",
		"\"drops_by_reason\":{},\"drop_episodes\":0,\"episodes_ended\":[],"
		"\"episodes_ended_cut\":false",
		"\"queue_pkts_delta\":null",
		"\"receiver_oncpu_ns\":5000,\"cpu_ns_per_pkt\":null",
		"\"wake_wait_ns\":0,\"wake_max_ns\":2500000,\"offcpu_hist_log2_ns\":{\"12\":2},"
		"\"offcpu_slot_mean_ns\":{\"12\":7629.39453125},\"offcpu_slot_sd_ns\":{},"
		"\"wake_hist_log2_ns\":{\"0\":3.5,\"21\":1},\"wake_slot_mean_ns\":{},"
		"\"wake_slot_sd_ns\":{},\"active_ns\":7500}",
		NULL });

	/* Sampled, but stage A's programs were not attached: no polls. */
	e->net_sampled = true;
	e->net_stage_a_every = 4;
	expect_json(&w, e, (const char *const[]){
		"\"net_stage_a_every\":4,\"net_stage_a\":false", "\"napi\":null", NULL });
	e->net_stage_a = true;
	expect_json(&w, e, (const char *const[]){ "\"napi\":[]", NULL });
	json_finish(&w);
	free(e);
}

static void test_option_parsers(void **state)
{
	(void)state;
	assert_int_equal(collect_attach_parse("raw_tp"), COLLECT_ATTACH_RAW_TP);
	assert_int_equal(collect_attach_parse("none"), COLLECT_ATTACH_NONE);
	assert_int_equal(collect_attach_parse("fentry"), -1);
	assert_string_equal(collect_attach_name(COLLECT_ATTACH_TP_BTF), "tp_btf");
	assert_int_equal(collect_groups_parse("all"), COLLECT_GROUP_ALL);
	assert_int_equal(collect_groups_parse("sched,blkio"),
			 COLLECT_GROUP_SCHED | COLLECT_GROUP_BLKIO);
	assert_int_equal(collect_groups_parse("sockq"), COLLECT_GROUP_SOCKQ);
	assert_int_equal(collect_groups_parse("sched,"), -1);
	assert_int_equal(collect_groups_parse("sched,,netrx"), -1);
	assert_int_equal(collect_groups_parse("disk"), -1);
	assert_int_equal(collect_groups_parse(""), -1);
}

/* Bad options are refused before anything is loaded. */
static void test_init_rejects_bad_options(void **state)
{
	struct collect_opts o = COLLECT_OPTS_DEFAULT;
	struct collect *c = (struct collect *)1;

	(void)state;
	o.nports = RXB_MAX_SOCKS + 1;
	assert_int_equal(collect_init(&c, &o), -EINVAL);
	assert_null(c);
	o = (struct collect_opts)COLLECT_OPTS_DEFAULT;
	o.nports = 1;		/* ports NULL */
	assert_int_equal(collect_init(&c, &o), -EINVAL);
	o = (struct collect_opts)COLLECT_OPTS_DEFAULT;
	o.groups = 0x100;
	assert_int_equal(collect_init(&c, &o), -EINVAL);
	o = (struct collect_opts)COLLECT_OPTS_DEFAULT;
	o.net_probe_every = COLLECT_MAX_NET_PROBE_EVERY + 1;
	assert_int_equal(collect_init(&c, &o), -EINVAL);
	o = (struct collect_opts)COLLECT_OPTS_DEFAULT;
	o.net_stage_a_every = COLLECT_MAX_NET_PROBE_EVERY + 1;
	assert_int_equal(collect_init(&c, &o), -EINVAL);
	collect_finish(NULL);
}

/*
 * Without BPF nothing is sampled: every epoch says so, and the sampling
 * period can still be changed within its bounds.
 */
static void test_no_bpf_never_sampled(void **state)
{
	struct collect_opts o = COLLECT_OPTS_DEFAULT;
	struct rxb_epoch *e = collect_fixture_epoch(1);
	struct collect *c;

	(void)state;
	o.attach = COLLECT_ATTACH_NONE;
	o.net_probe_every = 4;
	assert_int_equal(collect_init(&c, &o), 0);
	for (int i = 0; i < 3; i++) {
		collect_epoch(c, e);
		assert_false(e->net_sampled);
		assert_int_equal(e->net_sampled_seq, 0);
		assert_int_equal(e->net_probe_every, 4);
	}
	assert_int_equal(collect_set_net_probe_every(c, 0), -EINVAL);
	assert_int_equal(collect_set_net_probe_every(c, COLLECT_MAX_NET_PROBE_EVERY + 1),
			 -EINVAL);
	assert_int_equal(collect_set_net_probe_every(c, 1), 0);
	collect_epoch(c, e);
	assert_int_equal(e->net_probe_every, 1);
	assert_false(e->net_sampled);
	collect_finish(c);
	free(e);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_disk),
	cmocka_unit_test(test_episode_buckets),
	cmocka_unit_test(test_json_keys),
	cmocka_unit_test(test_option_parsers),
	cmocka_unit_test(test_init_rejects_bad_options),
	cmocka_unit_test(test_no_bpf_never_sampled),
)
