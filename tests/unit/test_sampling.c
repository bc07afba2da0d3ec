// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for when the per-packet programs are attached
 * (daemon/collect/sampling.c): the probes' attach calls and the socket
 * diagnostics are replaced by fakes that keep the attached state as the
 * kernel would, and the collector's calls are played epoch by epoch. Each
 * case's expected epochs - sampled, with stage A, with the enqueue
 * program, derived - were worked out by hand from the rules in sampling.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/netrx.h"
#include "bpf/sockq.h"
#include "daemon/collect/sampling.h"
#include "daemon/collect/sockdiag.h"
#include "tests/unit/unit_main.h"

/* ----------------------------------------------------------------- fakes -- */

static struct {
	bool a, deq, enq;	/* attached now */
	bool diag_fails;	/* sockdiag_open() says -EACCES */
	int diag_open;		/* open minus closed */
} fk;

static char fake_np, fake_sq, fake_diag;

int netrx_probe_set_sampled(struct netrx_probe *np, bool on)
{
	assert_ptr_equal(np, &fake_np);
	fk.a = on;
	return 0;
}

/* Both socket programs, as bpf/sockq.c does. */
int sockq_probe_set_sampled(struct sockq_probe *sq, bool on)
{
	assert_ptr_equal(sq, &fake_sq);
	fk.deq = fk.enq = on;
	return 0;
}

int sockq_probe_set_enq(struct sockq_probe *sq, bool on)
{
	assert_ptr_equal(sq, &fake_sq);
	fk.enq = on;
	return 0;
}

int sockdiag_open(struct sockdiag **out)
{
	if (fk.diag_fails)
		return -EACCES;
	*out = (struct sockdiag *)&fake_diag;
	fk.diag_open++;
	return 0;
}

void sockdiag_close(struct sockdiag *sd)
{
	if (sd)
		fk.diag_open--;
}

/* No sockets: new receivers play no part in these cases. */
int sockdiag_udp_sockets(struct sockdiag *sd, sockdiag_fn fn, void *arg)
{
	(void)sd, (void)fn, (void)arg;
	return 0;
}

int sockdiag_tcp_listeners(struct sockdiag *sd, sockdiag_fn fn, void *arg)
{
	(void)sd, (void)fn, (void)arg;
	return 0;
}

int collect_proc_udp_port_socks(struct collect_proc *cp, const uint16_t *ports, int nports,
				struct port_socks *out)
{
	(void)cp, (void)ports, (void)nports, (void)out;
	return 0;
}

/* -------------------------------------------------------------- harness -- */

#define NEPOCHS 16

/* What each epoch 1..NEPOCHS was: '-' not sampled, 'A' stage A (and the
 * enqueue program), 'C' counted (enqueue program, no stage A), 'D'
 * derived (sampled without the enqueue program). */
struct run {
	char kind[NEPOCHS + 1];
};

/*
 * Play the collector: baseline, then each epoch's end, snapshot and plan.
 * @ready[i]: s->derive_ready as the collector sets it before the plan at
 * the end of epoch i (i = 0: the baseline).
 */
static void play(uint32_t every, uint32_t a_every, const bool *ready, struct run *out)
{
	const uint16_t port = 5001;
	struct sampling s;

	/* The probes open with every program attached. */
	fk.a = fk.deq = fk.enq = true;
	sampling_init(&s, (struct netrx_probe *)&fake_np, (struct sockq_probe *)&fake_sq, NULL,
		      every, a_every);
	s.derive_ready = ready[0];
	sampling_plan(&s, 0);
	for (uint64_t seq = 1; seq <= NEPOCHS; seq++) {
		bool stage_a, sampled = sampling_epoch_end(&s, seq, &port, 1, &stage_a);

		/* The sampling's view and the probes' agree. */
		assert_int_equal(s.a_on, fk.a);
		assert_int_equal(s.enq_on, fk.enq);
		assert_int_equal(s.on, fk.deq);
		assert_true(!stage_a || s.enq_counted);
		out->kind[seq - 1] = !sampled ? '-' : stage_a ? 'A' : s.enq_counted ? 'C' : 'D';
		s.derive_ready = ready[seq];
		sampling_plan(&s, seq);
		assert_int_equal(s.enq_on, fk.enq);
		/* The enqueue program never runs without the dequeue one. */
		assert_true(!fk.enq || fk.deq);
	}
	out->kind[NEPOCHS] = '\0';
	sampling_finish(&s);
	assert_int_equal(fk.diag_open, 0);
}

/* ---------------------------------------------------------------- cases -- */

static void test_enq_wanted(void **state)
{
	(void)state;
	/* Only a sampled epoch without stage A, with both probes, the
	 * diagnostics and every port derivable goes without it. */
	for (int m = 0; m < 16; m++) {
		bool a = m & 1, np = m & 2, diag = m & 4, ready = m & 8;

		assert_int_equal(sampling_enq_wanted(a, np, diag, ready),
				 !(!a && np && diag && ready));
	}
}

/*
 * A sampling plan played over NEPOCHS epochs: sampled one epoch in
 * @every, stage A one in @a_every; the port's queue derivable from the
 * plan at the end of epoch @ready_from on, except at @hole (-1: none);
 * @no_diag: socket diagnostics cannot be opened.
 */
struct plan_case {
	const char *what;
	uint32_t every, a_every;
	int ready_from, hole;
	bool no_diag;
	const char *kind;	/* the epochs, as struct run writes them */
};

static const struct plan_case plan_cases[] = {
	/*
	 * Every epoch sampled, stage A one in 4 (1, 5, 9, 13). The first
	 * packets come in epoch 6, which counts them and their memory, so
	 * the collector says ready from the plan at the end of epoch 6 on;
	 * the queue cannot be read at the snapshot ending epoch 10. Worked
	 * by hand: epochs 1-6 count (stage A detached after 1 and 5, the
	 * enqueue program kept: not ready), 7-8 derive, 9 stage A, 10
	 * derives (its queue was read at its start), 11 counts (attached at
	 * the end of 10), 12 derives, 13 stage A, 14-16 derive.
	 */
	{ "every epoch", 1, 4, 6, 10, false, "ACCCACDDADCDADDD" },
	/*
	 * The same before the memory per packet is known, for good: a port
	 * that never had a packet. Every sampled epoch counts its arrivals.
	 */
	{ "never ready", 1, 4, NEPOCHS + 1, -1, false, "ACCCACCCACCCACCC" },
	/*
	 * One epoch in 2 sampled (1, 3, 5, ...), stage A one in 4: in 1, 5,
	 * 9, 13 (the first sampled epoch at least 4 after the last). Ready
	 * from the baseline on: 3, 7, 11, 15 derive. Not ready until the end
	 * of epoch 8: 3 and 7 count too.
	 */
	{ "every other", 2, 4, 0, -1, false, "A-D-A-D-A-D-A-D-" },
	{ "every other, ready late", 2, 4, 8, -1, false, "A-C-A-C-A-D-A-D-" },
	/* Sampling no more often than stage A: every sampled epoch has it. */
	{ "sparse", 4, 4, 0, -1, false, "A---A---A---A---" },
	/* Without socket diagnostics no queue can be read: never derived. */
	{ "no diagnostics", 1, 4, 0, -1, true, "ACCCACCCACCCACCC" },
};

static void test_plans(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(plan_cases) / sizeof(plan_cases[0]); i++) {
		const struct plan_case *pc = &plan_cases[i];
		bool ready[NEPOCHS + 1];
		struct run r;

		for (int k = 0; k <= NEPOCHS; k++)
			ready[k] = k >= pc->ready_from && k != pc->hole;
		fk.diag_fails = pc->no_diag;
		play(pc->every, pc->a_every, ready, &r);
		fk.diag_fails = false;
		if (strcmp(r.kind, pc->kind) != 0)
			print_error("plan '%s'\n", pc->what);
		assert_string_equal(r.kind, pc->kind);
	}
}

UNIT_TEST_MAIN(
	cmocka_unit_test(test_enq_wanted),
	cmocka_unit_test(test_plans),
)
