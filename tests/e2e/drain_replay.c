// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Feeds epochs to the daemon's saturated-drain rule (daemon/model/drain.c)
 * and prints its state after each: the reference that drainlearn.py's
 * emulation is checked against (test_drainlearn.py builds and runs it).
 *
 * Input, one epoch a line (whitespace-separated numbers):
 *   dt_s spin_ns start_ns end_ns pkts_out receiver_oncpu_ns empty_reads
 *   recv_wakeups receiver_preemptions preempt_off_ns wake_waits wake_wait_ns
 *   drops drops_rcvbuf counts_valid receivers_valid reasons_valid
 *   drops_valid cpu cpu_bound cpu_bound_eff cpu_bound_eff_valid io_bound
 * (the receiver ran on the one CPU @cpu). Output, one line an epoch:
 *   counted pkts busy_ns load_pkts ok taken refused last_ns drain_pkts_per_s
 * Exit 1 on a malformed line, with its number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/model/drain.h"
#include "daemon/model/learn.h"
#include "solver/ewma.h"

#define NFIELDS 23

int main(void)
{
	static struct rxb_epoch e;
	struct rxb_sock_meas s;
	struct drain d;
	char line[1024];
	long lineno = 0;

	memset(&d, 0, sizeof(d));
	while (fgets(line, sizeof(line), stdin)) {
		double f[NFIELDS], p, ns, load;
		char *cur = line, *end;
		int n, cpu;
		bool counted;

		lineno++;
		for (n = 0; n < NFIELDS; n++, cur = end) {
			f[n] = strtod(cur, &end);
			if (end == cur)
				break;
		}
		if (n != NFIELDS) {
			fprintf(stderr, "drain_replay: line %ld: %d of %d fields\n", lineno, n,
				NFIELDS);
			return 1;
		}
		cpu = (int)f[18];
		if (cpu < 0 || cpu >= RXB_MAX_CPUS) {
			fprintf(stderr, "drain_replay: line %ld: cpu %d out of range\n", lineno, cpu);
			return 1;
		}
		memset(&e, 0, sizeof(e));
		memset(&s, 0, sizeof(s));
		e.start_ns = (uint64_t)f[2];
		e.end_ns = (uint64_t)f[3];
		e.ncpus = cpu + 1;
		e.cpus[cpu].cpu_bound = f[19];
		e.cpus[cpu].cpu_bound_eff = f[20];
		e.cpus[cpu].cpu_bound_eff_valid = f[21] != 0;
		e.cpus[cpu].io_bound = f[22];
		s.pkts_out = (uint64_t)f[4];
		s.receiver_oncpu_ns = (uint64_t)f[5];
		s.empty_reads = (uint64_t)f[6];
		s.recv_wakeups = (uint64_t)f[7];
		s.receiver_preemptions = (uint64_t)f[8];
		s.preempt_off_ns = f[9];
		s.wake_waits = (uint64_t)f[10];
		s.wake_wait_ns = f[11];
		s.drops = (uint64_t)f[12];
		s.drops_rcvbuf = (uint64_t)f[13];
		s.counts_valid = f[14] != 0;
		s.receivers_valid = f[15] != 0;
		s.reasons_valid = f[16] != 0;
		s.drops_valid = f[17] != 0;
		s.ncpus_ran = 1;
		s.ran_on[0].cpu = cpu;
		s.ran_on[0].oncpu_ns = s.receiver_oncpu_ns;
		counted = drain_epoch(&s, &e, f[1], &p, &ns, &load);
		drain_add(&d, &s, &e, f[1], ewma_decay(f[0], LEARN_TAU_S));
		printf("%d %.17g %.17g %.17g %d %llu %llu %llu %.17g\n", counted, d.pkts, d.busy_ns,
		       d.load_pkts, d.ok, (unsigned long long)d.taken,
		       (unsigned long long)d.refused, (unsigned long long)d.last_ns,
		       drain_pkts_per_s(&d, NULL));
	}
	return 0;
}
