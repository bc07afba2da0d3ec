// SPDX-License-Identifier: GPL-2.0-or-later
/* The receiver's saturated drain. See drain.h. */
#include "daemon/model/drain.h"

#include <math.h>
#include <stdio.h>

#include "daemon/model/busy.h"
#include "daemon/model/ran_on.h"

/*
 * #C + #I of the CPUs the receiver ran on in @e, weighted by its on-CPU
 * time on each, #C by its effective count where measured (as the model's
 * inputs take it, inputs.c): false when a CPU or its counts are unknown.
 */
static bool epoch_load(const struct rxb_sock_meas *s, const struct rxb_epoch *e,
		       double *load)
{
	double total = ran_on_total_ns(s);

	*load = 0;
	if (!(total > 0))
		return false;
	for (int i = 0; i < ran_on_count(s); i++) {
		const struct rxb_cpu_meas *c;
		int cpu = s->ran_on[i].cpu;
		double n;

		if (!s->ran_on[i].oncpu_ns)
			continue;
		if (cpu < 0 || cpu >= e->ncpus || cpu >= RXB_MAX_CPUS)
			return false;
		c = &e->cpus[cpu];
		n = (c->cpu_bound_eff_valid && isfinite(c->cpu_bound_eff) ? c->cpu_bound_eff
									   : c->cpu_bound) +
		    c->io_bound;
		if (!isfinite(n) || n < 0)
			return false;
		*load += (double)s->ran_on[i].oncpu_ns / total * n;
	}
	return true;
}

bool drain_overflowed(const struct rxb_sock_meas *s)
{
	return s->reasons_valid ? s->drops_rcvbuf > 0 : s->drops_valid && s->drops > 0;
}

/*
 * Adds n intervals of mean_ns (the receiver preempted, or runnable after a
 * wake-up) to *off_ns; false when a mean is unusable for a count it has.
 */
static bool add_off_cpu(uint64_t n, double mean_ns, double *off_ns)
{
	if (!n)
		return true;
	if (!(mean_ns >= 0) || !isfinite(mean_ns))
		return false;
	*off_ns += (double)n * mean_ns;
	return true;
}

bool drain_epoch(const struct rxb_sock_meas *s, const struct rxb_epoch *e, double spin_ns,
		 double *pkts, double *busy_ns, double *load)
{
	double p = (double)s->pkts_out, t = (double)s->receiver_oncpu_ns;
	double z = (double)s->empty_reads, off = 0;

	if (!s->counts_valid || !s->receivers_valid || !drain_overflowed(s))
		return false;
	if (!(p >= DRAIN_MIN_EPOCH_PKTS) || !(t > 0))
		return false;
	if ((double)s->recv_wakeups * BUSY_MIN_PPW > p)
		return false;
	if (z > 0) {
		if (spin_ns > 0 && isfinite(spin_ns))
			t -= spin_ns * z;
		else if (z * BUSY_MIN_PPW > p)
			return false;
		if (!(t > 0))
			return false;
	}
	if (!add_off_cpu(s->receiver_preemptions, s->preempt_off_ns, &off) ||
	    !add_off_cpu(s->wake_waits, s->wake_wait_ns, &off))
		return false;
	/*
	 * Busier than the epoch is long: the counts do not belong together
	 * (an interval is counted in the epoch it ends in, hence the margin).
	 */
	if (e->end_ns <= e->start_ns || t + off > DRAIN_MAX_OVER_EPOCH * (double)(e->end_ns - e->start_ns))
		return false;
	if (!epoch_load(s, e, load))
		return false;
	*pkts = p;
	*busy_ns = t + off;
	return true;
}

void drain_decay(struct drain *d, double k)
{
	d->pkts *= k;
	d->busy_ns *= k;
	d->load_pkts *= k;
	d->arrived *= k;
}

void drain_add(struct drain *d, const struct rxb_sock_meas *s, const struct rxb_epoch *e,
	       double spin_ns, double k)
{
	double p, ns, load;

	drain_decay(d, k);
	if (!drain_epoch(s, e, spin_ns, &p, &ns, &load)) {
		if (drain_overflowed(s))
			d->refused++;
		return;
	}
	/* Another load: the drain is the new one's alone (see drain.h). */
	if (d->pkts > 0 && !(fabs(load - d->load_pkts / d->pkts) <= DRAIN_MAX_DLOAD)) {
		d->pkts = 0;
		d->busy_ns = 0;
		d->load_pkts = 0;
		d->arrived = 0;
		d->ok = false;
	}
	d->pkts += p;
	d->arrived += (double)s->pkts_in;
	d->busy_ns += ns;
	d->load_pkts += load * p;
	d->taken++;
	d->last_ns = e->end_ns;
	if (d->pkts >= DRAIN_MIN_PKTS)
		d->ok = true;
}

double drain_pkts_per_s(const struct drain *d, double *load)
{
	if (load)
		*load = NAN;
	if (!d->ok || !(d->pkts > 0) || !(d->busy_ns > 0) || !isfinite(d->busy_ns))
		return NAN;
	if (load)
		*load = d->load_pkts / d->pkts;
	return d->pkts / d->busy_ns * 1e9;
}

double drain_arrivals_pps(const struct drain *d)
{
	if (!isfinite(drain_pkts_per_s(d, NULL)))
		return NAN;
	return d->arrived / d->busy_ns * 1e9;
}

bool drain_usable(const struct drain *d, double load_now, uint64_t now_ns,
		  char *why, size_t len)
{
	double load, v = drain_pkts_per_s(d, &load);

	if (!isfinite(v)) {
		snprintf(why, len, "no saturated drain yet (%llu epochs, %.0f of %.0f packets)",
			 (unsigned long long)d->taken, d->pkts, DRAIN_MIN_PKTS);
		return false;
	}
	if (!isfinite(load_now) || !(fabs(load_now - load) <= DRAIN_MAX_DLOAD)) {
		snprintf(why, len, "saturated drain measured at #C+#I %.2f, now %.2f", load,
			 load_now);
		return false;
	}
	/* A clock behind the last epoch (a replay) counts as fresh. */
	if (now_ns > d->last_ns && now_ns - d->last_ns > DRAIN_MAX_AGE_NS) {
		snprintf(why, len, "saturated drain %.0f s old",
			 (double)(now_ns - d->last_ns) / 1e9);
		return false;
	}
	why[0] = '\0';
	return true;
}
