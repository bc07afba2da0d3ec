// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for rxbneckctl's views (ctl/view/): JSON documents in, text
 * out. A status document whose values are all missing or null prints "-"
 * and the daemon's reasons, never "nan" or "inf"; a full one prints what an
 * operator needs without contradicting itself (who holds the RATE versus
 * this epoch's push, traffic not counted in an unsampled epoch beside the
 * last counted one, a flow whose sender left); the legend's terms are all
 * in rxbneckctl(8); the answer parser refuses what is not an answer.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/view/answer.h"
#include "ctl/view/jpath.h"
#include "common/vfmt.h"
#include "ctl/view/view.h"
#include "ctl/view/view_measure.h"
#include "ctl/view/view_senders.h"
#include "ctl/view/view_status.h"
#include "tests/unit/unit_main.h"

/* Run @fn on @doc into a malloc'd string. */
static char *render(void (*fn)(FILE *, const struct json_object *, unsigned),
		    const struct json_object *doc, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, doc, flags);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static struct json_object *parse(const char *json)
{
	char why[ANSWER_WHY_LEN];
	struct json_object *doc = answer_parse_json(json, strlen(json), why);

	if (!doc)
		fail_msg("test document does not parse: %s", why);
	return doc;
}

/* No "nan", "inf", "infinity" as a word, in any case. */
static void assert_no_nonfinite(const char *text)
{
	regex_t re;
	regmatch_t m;

	assert_int_equal(regcomp(&re, "(^|[^a-z])-?(nan|inf|infinity)([^a-z]|$)",
				 REG_EXTENDED | REG_ICASE), 0);
	if (!regexec(&re, text, 1, &m, 0))
		fail_msg("non-finite number in the view at byte %d: ...%.40s...", (int)m.rm_so,
			 text + m.rm_so);
	regfree(&re);
}

static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want)) {
		fprintf(stderr, "'%s' not in:\n%s\n", want, text);
		fail();
	}
}

/* A status document as the daemon writes it before any traffic, with every
 * value that can be unknown null. */
static const char doc_missing[] =
"{\"version\":\"0.1.0\",\"ctl_protocol\":2,"
"\"daemon\":{\"pid\":42,\"uptime_s\":null,\"config_file\":\"/etc/rxbneckd/rxbneckd.conf\","
" \"health\":\"degraded\",\"degraded_reasons\":[\"no epoch measured yet\"],\"notes\":[],"
" \"log_level\":\"info\",\"epoch_ms\":500,\"epochs\":0,\"epochs_late\":0,\"collect_ms\":null,"
" \"model_ms\":null,\"net_probes\":{\"every\":1,\"learning\":true,\"learning_left_s\":null}},"
"\"epoch\":null,\"cpus\":[{\"cpu\":0,\"cpu_bound\":null,\"io_bound\":null,\"busy_frac\":null,"
" \"runnable_avg\":null,\"softirq_frac\":null}],"
"\"disk\":{\"mu_disk_per_s\":null,\"mu_pio_per_s\":null},"
"\"flows\":[{\"port\":9000,\"configured\":true,\"senders\":0,\"state\":\"provisional\","
" \"transfer\":{\"from\":\"config\",\"payload_bytes\":1468,\"file_bytes\":null,"
"  \"one_way_delay_s\":null,\"line_rate_bps\":1e10,\"min_rate_bps\":null},"
" \"traffic\":{\"seen\":false,\"counts_valid\":false,\"epoch\":null,\"pkts_in\":null,"
"  \"pkts_out\":null,\"drops\":null,\"rcvbuf_drops\":null,"
"  \"why\":\"the flow began after the last epoch; its port is watched from the next on\","
"  \"last_counted\":null},"
" \"inputs\":{\"stages\":0,\"confidence\":0,\"no_traffic\":true,"
"  \"note\":\"stage B not modelled: no traffic seen on the port yet\","
"  \"stage_b\":{\"modelled\":false,\"cpus\":[],"
"   \"cpu_bound\":{\"value\":null,\"source\":\"missing\",\"why\":\"receiver thread not seen yet\"},"
"   \"io_bound\":{\"value\":null,\"source\":\"missing\",\"why\":\"receiver thread not seen yet\"},"
"   \"cpu_ns_per_pkt\":{\"value\":null,\"source\":\"missing\",\"why\":\"no traffic seen on the port yet\"},"
"   \"cpu_cost\":{\"basis\":\"none\",\"saturated_ns\":null,\"fit_b_ns\":null,\"fit_terms\":null},"
"   \"pkts_per_wakeup\":{\"value\":null,\"source\":\"missing\",\"why\":\"needs the queue capacity\"},"
"   \"queue_pkts\":{\"value\":null,\"source\":\"missing\",\"why\":\"receive buffer not measured\"},"
"   \"mu_net_per_s\":{\"value\":null,\"source\":\"missing\",\"why\":\"needs cpu_ns_per_pkt, N and K\"},"
"   \"irq_ns_per_pkt\":{\"value\":null,\"source\":\"missing\",\"why\":\"no NET_RX probe\"}},"
"  \"stage_a\":{\"modelled\":false,\"device\":\"\","
"   \"mu_per_s\":{\"value\":null,\"source\":\"missing\",\"why\":\"stage B is not modelled\"}},"
"  \"learned\":{\"origin\":\"missing\",\"last_traffic_age_s\":null,\"history_age_s\":null}},"
" \"model\":null,\"solve_error\":null,\"solves\":0,"
" \"rate\":{\"rate_bps\":10000000000,\"loss\":0,\"epoch\":0,\"confidence\":0,\"xfer_time_us\":0,"
"  \"flags\":[\"no_traffic\"]},\"rate_between_pauses\":null,\"pause_fraction\":null,"
" \"rate_sent_to\":0,\"subscribers\":0,\"rate_holders\":0,\"reports\":0,\"last_report\":null,"
" \"pause\":{\"enabled\":true,\"scheduler\":\"unknown\",\"state\":\"idle\","
"  \"why\":\"no receiver preemption seen yet\",\"prediction\":{\"valid\":false,\"t_io_us\":null},"
"  \"measured\":{\"preemptions\":0,\"run_mean_us\":null},\"check\":{\"scored\":0,\"hit_rate\":null},"
"  \"last\":null}}],"
"\"learned_flows\":[],"
"\"senders\":{\"port\":7440,\"connected\":0,\"accepted\":0,\"rejected_allow\":0,"
" \"rejected_full\":0,\"rate_pushes\":0,\"pause_pushes\":0,\"reports\":0},"
"\"measurement\":null}";

static void test_missing_values(void **state)
{
	struct json_object *doc = parse(doc_missing);
	char *t;

	(void)state;
	for (unsigned flags = 0; flags <= VIEW_VERBOSE; flags++) {
		t = render(view_status, doc, flags);
		assert_no_nonfinite(t);
		assert_contains(t, "Health         : degraded");
		assert_contains(t, "- no epoch measured yet");
		assert_contains(t, "Epoch          : none yet (one every 500 ms)");
		assert_contains(t, "Flow 9000      : provisional: nothing to model yet; no sender connected");
		/* Missing inputs: "-" and the daemon's reason. */
		assert_contains(t, "receiver cost per packet                          -  "
				"missing: no traffic seen on the port yet");
		assert_contains(t, "receiver service rate (mu_P-Net)                  -  "
				"missing: needs cpu_ns_per_pkt, N and K");
		assert_contains(t, "traffic      : not measured: the flow began after the last epoch");
		assert_contains(t, "no sender subscribed to RATE");
		assert_contains(t, "one-way delay -");
		if (flags & VIEW_VERBOSE) {
			assert_contains(t, "Legend");
			assert_contains(t, "mu_P-Net");
		}
		free(t);
	}
	json_object_put(doc);
}

/* The same document with numbers JSON cannot carry, as a garbled daemon
 * might send them, and every member of the wrong type. */
static void test_hostile_values(void **state)
{
	static const char *const docs[] = {
		"{\"daemon\":{\"uptime_s\":1e999,\"pid\":-1e400},\"cpus\":[{\"cpu_bound\":1e308,"
		"\"busy_frac\":-1e308}],\"flows\":[{\"port\":\"x\",\"rate\":{\"rate_bps\":1e300,"
		"\"flags\":\"none\"},\"transfer\":{\"file_bytes\":1e300,\"one_way_delay_s\":-1e300},"
		"\"model\":{\"loss\":1e-320,\"transfer_time_s\":1e200,\"rate_bps\":-0.0}}]}",
		"{\"flows\":[null,1,\"a\",[],{\"inputs\":[],\"pause\":{\"state\":\"periodic\","
		"\"prediction\":{\"valid\":true}}}],\"learned_flows\":[{},{\"left_age_s\":1e20}]}",
		"{\"version\":\"\\u001b[31mred\",\"daemon\":{\"degraded_reasons\":[\"\\u0007bell\\n\"]}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct json_object *doc = parse(docs[i]);
		char *t = render(view_status, doc, VIEW_VERBOSE);

		assert_no_nonfinite(t);
		for (const char *p = t; *p; p++)
			if ((unsigned char)*p < 0x20 && *p != '\n')
				fail_msg("control character 0x%02x in the view", (unsigned char)*p);
		free(t);
		json_object_put(doc);
	}
}

/* A modelled flow mid-transfer in an epoch without packet counts, a sender
 * holding a RATE that this epoch did not push again, a flow that left. */
static const char doc_full[] =
"{\"version\":\"0.1.0\",\"ctl_protocol\":2,"
"\"daemon\":{\"pid\":42,\"uptime_s\":310,\"health\":\"ok\",\"degraded_reasons\":[],\"notes\":[],"
" \"epoch_ms\":500,\"collect_ms\":2.1,\"model_ms\":0.6,"
" \"net_probes\":{\"every\":4,\"learning\":false,\"last_change\":\"port 9000: new flow\","
"  \"last_change_age_s\":12}},"
"\"epoch\":{\"seq\":620,\"age_s\":0.21,\"attach_mode\":\"tp_btf\",\"degraded_reason\":\"\"},"
"\"cpus\":[{\"cpu\":1,\"cpu_bound\":2,\"io_bound\":0,\"busy_frac\":1,\"runnable_avg\":3.02,"
" \"softirq_frac\":0.012}],"
"\"flows\":[{\"port\":9000,\"configured\":false,\"senders\":1,\"state\":\"model\","
" \"transfer\":{\"from\":\"sender\",\"sender\":\"127.0.0.1:51234\",\"payload_bytes\":1468,"
"  \"file_bytes\":1e9,\"one_way_delay_s\":0.0001,\"line_rate_bps\":1e10,\"min_rate_bps\":1e7},"
" \"traffic\":{\"seen\":true,\"counts_valid\":false,\"epoch\":620,\"pkts_in\":null,\"pkts_out\":null,"
"  \"drops\":5,\"rcvbuf_drops\":5,\"why\":\"packets are counted in the epochs the per-packet "
"probes are attached in (one in net_probe_every)\","
"  \"last_counted\":{\"epoch\":616,\"age_s\":2,\"pkts_in\":35120,\"pkts_out\":35115,\"drops\":5,"
"   \"rcvbuf_drops\":5}},"
" \"inputs\":{\"stages\":1,\"no_traffic\":false,\"note\":\"\","
"  \"stage_b\":{\"modelled\":true,\"cpus\":[{\"cpu\":1,\"share\":1}],"
"   \"cpu_bound\":{\"value\":2,\"source\":\"measured\"},"
"   \"io_bound\":{\"value\":0,\"source\":\"measured\"},"
"   \"cpu_ns_per_pkt\":{\"value\":3811,\"source\":\"measured\"},"
"   \"cpu_cost\":{\"basis\":\"saturated\",\"saturated_ns\":3811},"
"   \"pkts_per_wakeup\":{\"value\":1.3,\"source\":\"measured\"},"
"   \"queue_pkts\":{\"value\":92,\"source\":\"measured\"},"
"   \"mu_net_per_s\":{\"value\":262398,\"source\":\"measured\"}},"
"  \"stage_a\":{\"modelled\":true,\"device\":\"(backlog)\","
"   \"mu_per_s\":{\"value\":330000,\"source\":\"measured\"},"
"   \"pkts_per_poll\":{\"value\":1,\"source\":\"measured\"},"
"   \"queue_pkts\":{\"value\":1000,\"source\":\"sysctl\"}},"
"  \"learned\":{\"origin\":\"measured\",\"windows_load\":1,\"windows_other_load\":true}},"
" \"model\":{\"epoch\":620,\"rate_bps\":412300000,\"loss\":0.00108,\"transfer_time_s\":19.41,"
"  \"time_slack\":0.02,\"least_rate_bps\":450000000,\"least_time_s\":19.1,"
"  \"line_rate_loss\":0.045,\"line_rate_time_s\":30.2,\"unconstrained\":false,"
"  \"windows_by_rate\":[{\"at_bps\":3e8,\"from_bps\":1e7,\"to_bps\":3.87e8,\"chosen\":false},"
"   {\"at_bps\":5e8,\"from_bps\":3.87e8,\"to_bps\":1e10,\"chosen\":true}]},"
" \"solve_error\":null,"
" \"rate\":{\"rate_bps\":412300000,\"loss\":0.00108,\"epoch\":620,\"confidence\":1000,"
"  \"xfer_time_us\":19410000,\"flags\":[]},"
" \"rate_sent_to\":0,\"subscribers\":1,\"rate_holders\":1,\"reports\":2,"
" \"last_report\":{\"aborted\":false,\"rounds\":3,\"file_bytes\":1e9,\"elapsed_s\":19.8,"
"  \"rate_bps\":400000000,\"pkts_sent\":690000,\"pkts_resent\":9000,\"pkts_lost_first\":6810,"
"  \"model_rate_bps\":412300000,\"model_time_s\":19.41},"
" \"pause\":{\"enabled\":true,\"scheduler\":\"eevdf\",\"state\":\"periodic\",\"why\":null,"
"  \"prediction\":{\"valid\":true,\"t_io_us\":2800,\"t_io_source\":\"measured-run\","
"   \"window_us\":2900,\"period_us\":5700,\"cpu\":1,\"cpu_bound\":2,\"slice_us\":1450},"
"  \"check\":{\"scored\":50,\"hits\":45,\"hit_rate\":0.9}}}],"
"\"learned_flows\":[{\"port\":9001,\"origin\":\"this run\",\"left_age_s\":42,"
" \"cpu_ns_per_pkt\":2950,\"pkts_per_wakeup\":1.2,\"cpus\":[{\"cpu\":0,\"share\":1}],"
" \"last\":{\"rate_bps\":950000000,\"epoch\":600}}],"
"\"senders\":{\"port\":7440,\"connected\":1,\"accepted\":1,\"rejected_allow\":0,"
" \"rejected_full\":0,\"rate_pushes\":14,\"pause_pushes\":3,\"reports\":2},"
"\"measurement\":null}";

static void test_full_status(void **state)
{
	struct json_object *doc = parse(doc_full);
	char *t = render(view_status, doc, 0);

	(void)state;
	assert_no_nonfinite(t);
	assert_contains(t, "Flow 9000      : modelled in epoch 620; 1 sender connected\n");
	assert_contains(t, "RATE         : 412.3 Mb/s, confidence 1000 of 1000, flags none (epoch 620)");
	/* Held by the one subscriber though not pushed again this epoch. */
	assert_contains(t, "1 subscribed to RATE, 1 holds one; this epoch's went to 0 "
			"(a RATE that changed little is not sent again)");
	assert_contains(t, "prediction   : at 412.3 Mb/s: first-round loss 0.108 %, "
			"transfer time 19.41 s; at the line rate 4.5 %, 30.20 s");
	assert_contains(t, "the least time, 19.10 s, at 450.0 Mb/s: the lowest rate within 2 % of it\n");
	/* Two bands, the rate from the one met at 500 Mb/s. */
	assert_contains(t, "each rate with the windows met nearest it: 2 bands, 300.0 Mb/s .. "
			"500.0 Mb/s; the rate from those met at 500.0 Mb/s\n");
	/* Learned beside one loop, two now. */
	assert_contains(t, "windows      : learned at #C + #I 1.00, 2.00 now: left out (the queue "
			"alone) until 1 s of receiving at this load\n");
	assert_contains(t, "1.00 GB file in 1468 B packets, one-way delay 100.0 us, "
			"rates 10.0 Mb/s .. 10.000 Gb/s; from the HELLO of 127.0.0.1:51234");
	/* Unsampled epoch: drops only, and the last epoch that counted. */
	assert_contains(t, "traffic      : epoch 620: 5 dropped (5 at the receive buffer); "
			"packets not counted: packets are counted in the epochs");
	assert_contains(t, "last counted in epoch 616, 2.00 s ago: 35120 packets in, 35115 read");
	/* 6810 lost of the 681000 first-round packets. */
	assert_contains(t, "1.00 GB in 19.80 s at 400.0 Mb/s, 3 rounds, 1 % lost in the first round; "
			"the model said 412.3 Mb/s, 19.41 s (2 reports)");
	assert_contains(t, "receiver service rate (mu_P-Net)            262 k/s  measured");
	assert_contains(t, "packets per wake-up (N)                         1.3  measured");
	assert_contains(t, "device queue capacity (K)              1000 packets  sysctl");
	assert_contains(t, "periodic (scheduler eevdf); the receiver runs T_I/O 2.8 ms");
	assert_contains(t, "45 of 50 windows predicted (90 %)");
	assert_contains(t, "Learned flows  : port 9001: left 42.00 s ago; receiver cost 2950 ns "
			"per packet, N 1.2 per wake-up, on cpu0; last RATE 950.0 Mb/s (epoch 600)");
	assert_contains(t, "Packet probes  : attached one epoch in 4; last change 12.00 s ago");
	free(t);
	/* The solve's detail, verbose: the piece of the windows by rate it chose in. */
	t = render(view_status, doc, VIEW_VERBOSE);
	assert_no_nonfinite(t);
	assert_contains(t, "windows by rate: 2 pieces; the rate is in the one met reading "
			"500.0 Mb/s (387.0 Mb/s to 10.000 Gb/s)");
	free(t);
	json_object_put(doc);
}

/* Stage B's capacity from each basis, one with nothing known, one from a
 * daemon that does not report it. */
static const char doc_capacity[] =
"{\"flows\":["
"{\"port\":9000,\"transfer\":{\"payload_bytes\":1468},\"inputs\":{\"stage_b\":{"
" \"capacity\":{\"basis\":\"saturated_drain\",\"pkts_per_s\":535000,"
"  \"cost_pkts_per_s\":612000,\"drain_pkts_per_s\":535000,\"drain_load\":2.02,"
"  \"drain_epochs\":31,\"drain_epochs_refused\":2,\"scale\":0.874,\"note\":\"\"}}}},"
"{\"port\":9001,\"transfers\":[{\"transfer\":{\"payload_bytes\":1000}}],"
" \"inputs\":{\"stage_b\":{"
" \"capacity\":{\"basis\":\"cost\",\"pkts_per_s\":262398,\"cost_pkts_per_s\":262398,"
"  \"drain_pkts_per_s\":null,\"drain_load\":null,\"drain_epochs\":0,"
"  \"drain_epochs_refused\":0,\"scale\":1,"
"  \"note\":\"the drain has 8000 packets, needs 20000\"}}}},"
"{\"port\":9002,\"inputs\":{\"stage_b\":{"
" \"capacity\":{\"basis\":\"cost\",\"pkts_per_s\":null,\"cost_pkts_per_s\":null,"
"  \"drain_pkts_per_s\":null,\"drain_load\":null,\"drain_epochs\":0,"
"  \"drain_epochs_refused\":0,\"scale\":null,\"note\":\"no traffic seen\"}}}},"
"{\"port\":9003,\"transfer\":{\"payload_bytes\":1468},\"inputs\":{\"stage_b\":{}}}]}";

static void test_capacity(void **state)
{
	struct json_object *doc = parse(doc_capacity);
	char *t = render(view_status, doc, 0), *v = render(view_status, doc, VIEW_VERBOSE);

	(void)state;
	assert_no_nonfinite(t);
	assert_no_nonfinite(v);
	/* 535000 packets/s x 1468 B x 8 = 6.283 Gb/s of payload. */
	assert_contains(t, "receiver capacity (c)                    6.283 Gb/s  from the saturated "
			"drain: 31 epochs at load 2.02 (2 refused), mu_P-Net x 0.87\n");
	/* 262398 x 1000 B x 8 = 2.099 Gb/s; the payload of the flow's first transfer. */
	assert_contains(t, "receiver capacity (c)                    2.099 Gb/s  from the per-packet "
			"cost: the drain has 8000 packets, needs 20000\n");
	assert_contains(t, "receiver capacity (c)                             -  from the per-packet "
			"cost: no traffic seen\n");
	assert_contains(t, "receiver capacity (c)                             -  not reported by "
			"the daemon\n");
	assert_null(strstr(t, "capacity     :"));
	assert_contains(v, "capacity     : packets: 612 k/s from the cost, 535 k/s saturated "
			"drain at load 2.02 (31 epochs, 2 refused); mu_P-Net scale 0.87\n");
	assert_contains(v, "capacity     : packets: - from the cost, - saturated drain at load - "
			"(0 epochs, 0 refused); mu_P-Net scale -\n");
	free(t);
	free(v);
	json_object_put(doc);
}

static void test_measure_record(void **state)
{
	static const char rec[] =
		"{\"seq\":3,\"start_ns\":1000000000,\"end_ns\":1500000000,\"attach_mode\":\"none\","
		"\"degraded\":true,\"degraded_reason\":\"no BPF\",\"net_probe_every\":1,"
		"\"cpus\":[{\"cpu\":0,\"cpu_bound\":1,\"io_bound\":0,\"busy_frac\":0.5,"
		"\"cpu_bound_slice_ns\":null,\"switches\":null}],\"disk\":{\"device\":\"\"},"
		"\"sockets\":[{\"port\":9000,\"pkts_in\":null,\"drops\":7,\"drops_rcvbuf\":null}],"
		"\"napi\":null,\"nics\":[],\"drops_by_reason\":{\"SOCKET_RCVBUFF\":7},\"probe_cost\":[]}";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(view_measure_text(f, rec, sizeof(rec) - 1), 0);
	assert_int_equal(view_measure_text(f, "{", 1), -EINVAL);
	fclose(f);
	assert_no_nonfinite(buf);
	assert_contains(buf, "epoch 3  500.0 ms  probes none  DEGRADED: no BPF");
	assert_contains(buf, "socket :9000  dropped 7 (receive buffer -, in - episodes); "
			"packets not counted (needs the BPF probes)");
	assert_contains(buf, "drops: SOCKET_RCVBUFF=7");
	assert_null(strstr(buf, "stage A"));
	free(buf);
}

/* A sampled epoch without stage A says so; one with it, or unsampled, does not. */
static void test_measure_stage_a(void **state)
{
	static const char *const recs[] = {
		"{\"seq\":4,\"net_probe_every\":32,\"net_sampled\":true,"
		"\"net_stage_a\":false,\"net_stage_a_every\":4,\"napi\":null}",
		"{\"seq\":5,\"net_probe_every\":32,\"net_sampled\":true,"
		"\"net_stage_a\":true,\"net_stage_a_every\":4,\"napi\":[]}",
		"{\"seq\":6,\"net_probe_every\":32,\"net_sampled\":false,"
		"\"net_stage_a\":false,\"net_stage_a_every\":4,\"napi\":null}",
	};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		assert_int_equal(view_measure_text(f, recs[i], strlen(recs[i])), 0);
		fclose(f);
		assert_no_nonfinite(buf);
		if (i == 0)
			assert_contains(buf, "stage A (NET_RX softirq, NAPI) not attached this "
					"epoch (one sampled epoch in 4)");
		else
			assert_null(strstr(buf, "stage A"));
		free(buf);
	}
}

static void test_senders_reload_version(void **state)
{
	struct json_object *s = parse("{\"senders\":[{\"id\":1,\"address\":\"127.0.0.1:5\","
				      "\"flow_port\":9000,\"granted\":3,\"rtt_us\":200,"
				      "\"connected_s\":12,\"frames_out\":14,\"name\":\"send\","
				      "\"last_rate\":{\"rate_bps\":412300000,\"epoch\":620}}]}");
	struct json_object *e = parse("{\"senders\":[]}");
	struct json_object *r = parse("{\"ok\":true,\"config_file\":\"/c\",\"changed\":\"[model] rounds\","
				      "\"restart_needed\":[\"[daemon] ctl_socket\"]}");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	view_senders(f, s, 0);
	view_senders(f, e, 0);
	view_reload(f, r, 0);
	fclose(f);
	assert_contains(buf, "1     127.0.0.1:5                9000  rate,pause  200.0 us    12.00 s"
			"      14 412.3 Mb/s @620        send\n");
	assert_contains(buf, "(no senders connected)\n");
	assert_contains(buf, "reloaded /c: [model] rounds\nrestart needed for [daemon] ctl_socket\n");
	free(buf);
	json_object_put(s);
	json_object_put(e);
	json_object_put(r);
}

/* Every term of the legend is explained in rxbneckctl(8) too. */
static void test_legend_in_man_page(void **state)
{
	char *legend = NULL, *man;
	size_t len = 0;
	FILE *f = open_memstream(&legend, &len);
	FILE *m = fopen("man/rxbneckctl.8", "r");
	long n;

	(void)state;
	assert_non_null(m);
	assert_int_equal(fseek(m, 0, SEEK_END), 0);
	n = ftell(m);
	rewind(m);
	man = calloc(1, (size_t)n + 1);
	assert_non_null(man);
	assert_int_equal(fread(man, 1, (size_t)n, m), (size_t)n);
	fclose(m);
	view_legend(f);
	fclose(f);
	for (char *line = strtok(legend, "\n"); line; line = strtok(NULL, "\n")) {
		char term[32], roff[64];

		/* "  TERM         explanation": a term starts at column 2. */
		if (strncmp(line, "  ", 2) || line[2] == ' ' || sscanf(line + 2, "%31s", term) != 1)
			continue;
		/* In the page each term is a tagged paragraph: .TP then \fBTERM\fR. */
		snprintf(roff, sizeof(roff), "\\fB%s\\fR", term);
		if (!strstr(man, roff))
			fail_msg("legend term '%s' is not in man/rxbneckctl.8 as %s", term, roff);
	}
	free(legend);
	free(man);
}

static void test_vfmt(void **state)
{
	char b[VFMT_LEN];

	(void)state;
	assert_string_equal(vfmt_fixed(b, NAN, 2), "-");
	assert_string_equal(vfmt_fixed(b, INFINITY, 2), "-");
	assert_string_equal(vfmt_rate(b, -INFINITY), "-");
	assert_string_equal(vfmt_rate(b, 412.3e6), "412.3 Mb/s");
	assert_string_equal(vfmt_rate(b, 9.4123e9), "9.412 Gb/s");
	assert_string_equal(vfmt_rate(b, 1e300), "1e+300 b/s");
	assert_string_equal(vfmt_si(b, 262398), "262 k");
	assert_string_equal(vfmt_si(b, 999.7e3), "1 M");
	assert_string_equal(vfmt_si(b, 41.6), "41.6");
	assert_string_equal(vfmt_bytes(b, 1e9), "1.00 GB");
	assert_string_equal(vfmt_bytes(b, 1468), "1468 B");
	assert_string_equal(vfmt_dur(b, 310), "5 min 10 s");
	assert_string_equal(vfmt_dur(b, 35e-6), "35.0 us");
	assert_string_equal(vfmt_pct(b, 0.2312, 0), "23 %");
	assert_string_equal(vfmt_prob(b, 0.00108), "0.108 %");
	assert_string_equal(vfmt_prob(b, 0), "0 %");
	assert_string_equal(vfmt_text(b, sizeof(b), "a\033[1mb\tc"), "a?[1mb?c");
	assert_string_equal(vfmt_text(b, sizeof(b), NULL), "-");
}

static void test_answer(void **state)
{
	static const char *const bad[] = {
		"", "OK", "OK\n", "OK\nnot json\n", "OK\n[1,2]\n", "OK\n{\"a\":1} x\n",
		"OK\n{\"a\":1\n", "HELLO\n{}\n", "ERR \n", "ERR lower case\n", "ERR X\n{]\n",
		"rxbneckd 0.1.0 (control protocol 1)\n",
	};
	static const char ok[] = "OK\n{\"version\":\"1\"}\n";
	static const char err[] = "ERR BUSY evicted: \033x\n{\"error\":{}}\n";
	char why[ANSWER_WHY_LEN], deep[200];
	struct answer a;

	(void)state;
	assert_int_equal(answer_parse(ok, strlen(ok), &a, why), 0);
	assert_true(a.ok);
	assert_string_equal(jpath_str(a.doc, "version"), "1");
	answer_release(&a);
	assert_int_equal(answer_parse(err, strlen(err), &a, why), 0);
	assert_false(a.ok);
	assert_string_equal(a.code, "BUSY");
	assert_string_equal(a.message, "evicted: ?x");
	assert_non_null(a.doc);
	answer_release(&a);
	assert_int_equal(answer_parse("ERR TOO_LONG request too long\n", strlen("ERR TOO_LONG request too long\n"), &a, why), 0);
	assert_null(a.doc);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!answer_parse(bad[i], strlen(bad[i]), &a, why))
			fail_msg("answer %zu ('%s') was accepted", i, bad[i]);
		assert_true(why[0]);
	}
	/* A NUL inside the document, and nesting past ANSWER_MAX_DEPTH. */
	assert_int_equal(answer_parse("OK\n{\"a\":\"x\0y\"}\n", 16, &a, why), -EINVAL);
	memcpy(deep, "OK\n", 3);
	for (int i = 0; i < 40; i++)
		deep[3 + i] = '[';
	deep[43] = '\0';
	assert_int_equal(answer_parse(deep, strlen(deep), &a, why), -EINVAL);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_missing_values),
	cmocka_unit_test(test_hostile_values),
	cmocka_unit_test(test_full_status),
	cmocka_unit_test(test_capacity),
	cmocka_unit_test(test_measure_record),
	cmocka_unit_test(test_measure_stage_a),
	cmocka_unit_test(test_senders_reload_version),
	cmocka_unit_test(test_legend_in_man_page),
	cmocka_unit_test(test_vfmt),
	cmocka_unit_test(test_answer),
)
