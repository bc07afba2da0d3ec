// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sendsrv's STREAMS (PROTOCOL.md §5.10, §5.12, §6.5): granted to senders
 * of minor >= 2 only, and only by a daemon with an advisor; the advice at
 * once after HELLO_ACK and after a SUBSCRIBE that adds STREAMS, each
 * sender its own (by its address); pushed again by sendsrv_publish_streams()
 * exactly when §6.5's rule says (streams or flags changed, predicted moved
 * by the change fraction, the refresh); STREAMS_SAMPLE accepted with the
 * accepts bit and handed over as sent, refused with UNSUPPORTED without.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/serve/sendsrv.h"
#include "tests/unit/sendsrv_test.h"
#include "proto/codec.h"
#include "tests/unit/unit_main.h"

#define FLOW 5201

/* The pump first: the callbacks' ctx is the pump, so also this harness. */
struct h {
	struct pump p;
	bool have;			/* an advice to give */
	struct rxbneck_streams adv;
	int asked;
	int samples;
	struct rxbneck_streams_sample last;
	char last_addr[SENDSRV_ADDR_STRLEN];
};

static int streams_for(void *ctx, const struct sendsrv_peer *p, struct rxbneck_streams *out)
{
	struct h *h = ctx;

	(void)p;
	h->asked++;
	if (!h->have)
		return -ENOENT;
	*out = h->adv;
	return 0;
}

static void on_sample(void *ctx, const struct sendsrv_peer *p,
		      const struct rxbneck_streams_sample *smp)
{
	struct h *h = ctx;

	h->samples++;
	h->last = *smp;
	rxb_strlcpy(h->last_addr, p->addr_str, sizeof(h->last_addr));
}

static void start(struct h *h, bool advisor)
{
	struct sendsrv_limits lim;
	struct sendsrv_ops ops = { 0 };

	if (advisor) {
		ops.streams_for = streams_for;
		ops.on_streams_sample = on_sample;
	}
	memset(h, 0, sizeof(*h));
	sendsrv_limits_default(&lim);
	lim.rate_refresh_epochs = 10;
	pump_start_ops(&h->p, &lim, &ops);
}

/* Connected, HELLO of @minor subscribing @sub sent. */
static int dial(struct h *h, uint16_t minor, uint16_t sub)
{
	struct rxbp_msg m = pump_hello_msg(FLOW);

	m.u.hello.minor = minor;
	m.u.hello.flow_proto = 6;
	m.u.hello.subscribe = sub;
	m.u.hello.payload_bytes = 1448;
	return pump_send_hello(&h->p, &m);
}

/* The next frame within ~200 ms: its type, 0 if none, -1 at EOF. */
static int next(struct h *h, int fd, struct rxbp_msg *m)
{
	return sendsrv_test_next_frame(h->p.epfd, h->p.s, fd, m, 100, pump_now, &h->p);
}

static struct rxbneck_streams advice(uint32_t n, uint64_t bps, uint64_t epoch, uint16_t flags)
{
	return (struct rxbneck_streams){ .port = FLOW, .streams = n, .predicted_bps = bps,
					 .epoch = epoch, .flags = flags, .confidence = 600,
					 .model = RXBNECK_MODEL_NEWTON, .points = 5, .rel_err = 12 };
}

static void test_granted_by_minor(void **state)
{
	struct h h;
	struct rxbp_msg m;
	int old, fd;

	(void)state;
	start(&h, true);
	h.have = true;
	h.adv = advice(4, 500000000, 3, RXBNECK_STREAMS_EXPLORE);
	old = dial(&h, 1, RXBNECK_SUB_RATE | RXBNECK_SUB_STREAMS);
	assert_int_equal(next(&h, old, &m), RXBNECK_T_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.granted, RXBNECK_SUB_RATE);
	assert_true(m.u.hello_ack.accepts & RXBNECK_ACCEPT_STREAMS_SAMPLE);
	assert_int_equal(m.u.hello_ack.minor, RXBNECK_MINOR);
	assert_int_equal(next(&h, old, &m), 0);		/* no STREAMS for minor 1 */
	fd = dial(&h, RXBNECK_MINOR_STREAMS, RXBNECK_SUB_STREAMS);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.granted, RXBNECK_SUB_STREAMS);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_STREAMS);
	assert_int_equal(m.u.streams.streams, 4);
	assert_int_equal(m.u.streams.flags, RXBNECK_STREAMS_EXPLORE);
	assert_int_equal(m.u.streams.model, RXBNECK_MODEL_NEWTON);
	assert_int_equal(m.u.streams.rel_err, 12);
	/* The same advice next epoch: not again. */
	assert_int_equal(sendsrv_publish_streams(h.p.s), 0);
	close(fd);
	close(old);
	pump_finish(&h.p);
	/* A daemon without an advisor grants none, at any minor, and refuses samples. */
	start(&h, false);
	fd = dial(&h, RXBNECK_MINOR_STREAMS, RXBNECK_SUB_STREAMS | RXBNECK_SUB_RATE);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_HELLO_ACK);
	assert_int_equal(m.u.hello_ack.granted, RXBNECK_SUB_RATE);
	assert_false(m.u.hello_ack.accepts & RXBNECK_ACCEPT_STREAMS_SAMPLE);
	m = (struct rxbp_msg){ .type = RXBNECK_T_STREAMS_SAMPLE };
	m.u.sample = (struct rxbneck_streams_sample){ FLOW, 2, 1000000, 1000000 };
	sendsrv_test_send(fd, &m, 2);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_ERROR);
	assert_int_equal(m.u.error.code, RXBNECK_ERR_UNSUPPORTED);
	close(fd);
	pump_finish(&h.p);
}

static void test_push_rule_and_samples(void **state)
{
	struct h h;
	struct rxbp_msg m;
	int fd;

	(void)state;
	start(&h, true);
	fd = dial(&h, RXBNECK_MINOR_STREAMS, RXBNECK_SUB_RATE);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_HELLO_ACK);
	assert_int_equal(next(&h, fd, &m), 0);
	/* SUBSCRIBE adds STREAMS: nothing to say yet, then the advice at once. */
	m = (struct rxbp_msg){ .type = RXBNECK_T_SUBSCRIBE };
	m.u.subscribe.subscribe = RXBNECK_SUB_RATE | RXBNECK_SUB_STREAMS;
	sendsrv_test_send(fd, &m, 2);
	assert_int_equal(next(&h, fd, &m), 0);
	assert_true(h.asked > 0);
	h.have = true;
	h.adv = advice(6, 1000000000, 10, 0);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 1);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_STREAMS);
	assert_int_equal(m.u.streams.streams, 6);
	/* 4 % more predicted: not due (5 %); 6 %: due. */
	h.adv = advice(6, 1040000000, 11, 0);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 0);
	h.adv = advice(6, 1060000000, 12, 0);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 1);
	assert_int_equal(next(&h, fd, &m), RXBNECK_T_STREAMS);
	/* A flag alone; the count alone; the refresh after 10 epochs. */
	h.adv = advice(6, 1060000000, 13, RXBNECK_STREAMS_CAPPED);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 1);
	h.adv = advice(5, 1060000000, 14, RXBNECK_STREAMS_CAPPED);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 1);
	h.adv = advice(5, 1060000000, 23, RXBNECK_STREAMS_CAPPED);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 0);
	h.adv = advice(5, 1060000000, 24, RXBNECK_STREAMS_CAPPED);
	assert_int_equal(sendsrv_publish_streams(h.p.s), 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(next(&h, fd, &m), RXBNECK_T_STREAMS);
	assert_int_equal(m.u.streams.epoch, 24);
	/* A sample, as sent, with the sender's address. */
	m = (struct rxbp_msg){ .type = RXBNECK_T_STREAMS_SAMPLE };
	m.u.sample = (struct rxbneck_streams_sample){ FLOW, 8, 987654321, 2500000 };
	sendsrv_test_send(fd, &m, 3);
	pump_run(&h.p, 20);
	assert_int_equal(h.samples, 1);
	assert_int_equal(h.last.streams, 8);
	assert_int_equal(h.last.throughput_bps, 987654321);
	assert_int_equal(h.last.duration_us, 2500000);
	assert_non_null(strstr(h.last_addr, "127.0.0.1:"));
	close(fd);
	pump_finish(&h.p);
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_granted_by_minor),
	cmocka_unit_test(test_push_rule_and_samples),
)
