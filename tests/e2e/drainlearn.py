"""The daemon's saturated-drain rule (daemon/model/drain.c) in Python, and
the drain the daemon would have learned before each transfer of a kept
e2e run (docs/fidelity.md §5).

The rule is drain.c's, function for function: epoch() is drain_epoch()
(with overflowed() and epoch_load()), Drain.add() drain_add(),
Drain.decay() drain_decay(), Drain.pkts_per_s() drain_pkts_per_s(),
Drain.usable() drain_usable(); decay_factor() is learn_epoch()'s
ewma_decay(dt, LEARN_TAU_S). The constants are drain.h's, busy.h's
BUSY_MIN_PPW, learn.h's LEARN_TAU_S and capacity.h's scale bounds.
test_drainlearn.py checks it against the C on a worked sequence.

The first host's kept runs (results/line10g-s48 ... s78) lack the per-epoch
counts drain_epoch() reads (analyze.py --export drops daemon_during),
and their daemon did not yet learn a drain. transfer_epochs() therefore
makes one epoch per transfer from what each transfer kept: its first
round's packets dequeued (sent - lost), busy for as long as the receiver
took at its measured round-1 rate, overflowing when its socket dropped,
at the load #C + #I the daemon counted before it. learned() runs the rule
over them in time order and gives, at any instant, the drain the daemon
would have had from the transfers that ENDED before it.
"""
import math

# drain.h
DRAIN_MIN_PKTS = 20000.0
DRAIN_MIN_EPOCH_PKTS = 1000.0
DRAIN_MAX_DLOAD = 0.5
DRAIN_MAX_OVER_EPOCH = 1.10
DRAIN_MAX_AGE_NS = 600 * 10**9
# busy.h, learn.h, capacity.h
BUSY_MIN_PPW = 400.0
LEARN_TAU_S = 5.0
CAPACITY_MIN_SCALE, CAPACITY_MAX_SCALE = 0.25, 4.0
# The bytes a packet of the e2e runs counts for in their bit rates
# (analyze.py's model_capacity_bps and drains: 1472 B of UDP payload).
PKT_BITS = 1472 * 8


def decay_factor(dt_s, tau_s=LEARN_TAU_S):
    """solver/ewma.c ewma_decay()."""
    if not (dt_s > 0) or not math.isfinite(dt_s):
        return 1.0
    return math.exp(-dt_s / tau_s)


def overflowed(s):
    """drain.c overflowed()."""
    if s["reasons_valid"]:
        return s["drops_rcvbuf"] > 0
    return bool(s["drops_valid"]) and s["drops"] > 0


def epoch_load(s, e):
    """drain.c epoch_load(): None where it returns false. s["ran_on"] is
    [(cpu, oncpu_ns)], e["cpus"] {cpu: {cpu_bound, cpu_bound_eff,
    cpu_bound_eff_valid, io_bound}}, e["ncpus"]."""
    total = float(sum(ns for _, ns in s["ran_on"]))
    if not (total > 0):
        return None
    load = 0.0
    for cpu, ns in s["ran_on"]:
        if not ns:
            continue
        if cpu < 0 or cpu >= e["ncpus"] or cpu not in e["cpus"]:
            return None
        c = e["cpus"][cpu]
        eff = c.get("cpu_bound_eff")
        n = (eff if c.get("cpu_bound_eff_valid") and eff is not None and math.isfinite(eff)
             else c["cpu_bound"]) + c["io_bound"]
        if not math.isfinite(n) or n < 0:
            return None
        load += ns / total * n
    return load


def epoch(s, e, spin_ns):
    """drain.c drain_epoch(): (pkts, busy_ns, load) when the epoch counts,
    else None."""
    p, t, z, off = float(s["pkts_out"]), float(s["receiver_oncpu_ns"]), float(s["empty_reads"]), 0.0
    if not s["counts_valid"] or not s["receivers_valid"] or not overflowed(s):
        return None
    if not (p >= DRAIN_MIN_EPOCH_PKTS) or not (t > 0):
        return None
    if s["recv_wakeups"] * BUSY_MIN_PPW > p:
        return None
    if z > 0:
        if spin_ns is not None and spin_ns > 0 and math.isfinite(spin_ns):
            t -= spin_ns * z
        elif z * BUSY_MIN_PPW > p:
            return None
        if not (t > 0):
            return None
    if s["receiver_preemptions"]:
        o = s["preempt_off_ns"]
        if not (o >= 0) or not math.isfinite(o):
            return None
        off += s["receiver_preemptions"] * o
    if s["wake_waits"]:
        w = s["wake_wait_ns"]
        if not (w >= 0) or not math.isfinite(w):
            return None
        off += s["wake_waits"] * w
    if e["end_ns"] <= e["start_ns"] or t + off > DRAIN_MAX_OVER_EPOCH * (e["end_ns"] - e["start_ns"]):
        return None
    load = epoch_load(s, e)
    if load is None:
        return None
    return p, t + off, load


class Drain:
    """struct drain and its functions (drain.c)."""

    def __init__(self):
        self.pkts = self.busy_ns = self.load_pkts = 0.0
        self.ok = False
        self.taken = self.refused = 0
        self.last_ns = 0

    def decay(self, k):
        """drain_decay()."""
        self.pkts *= k
        self.busy_ns *= k
        self.load_pkts *= k

    def add(self, s, e, spin_ns, k):
        """drain_add(): True when the epoch was folded in."""
        self.decay(k)
        got = epoch(s, e, spin_ns)
        if got is None:
            if overflowed(s):
                self.refused += 1
            return False
        p, ns, load = got
        if self.pkts > 0 and not (abs(load - self.load_pkts / self.pkts) <= DRAIN_MAX_DLOAD):
            self.pkts = self.busy_ns = self.load_pkts = 0.0
            self.ok = False
        self.pkts += p
        self.busy_ns += ns
        self.load_pkts += load * p
        self.taken += 1
        self.last_ns = e["end_ns"]
        if self.pkts >= DRAIN_MIN_PKTS:
            self.ok = True
        return True

    def pkts_per_s(self):
        """drain_pkts_per_s(): (drain, load), (None, None) without one."""
        if (not self.ok or not (self.pkts > 0) or not (self.busy_ns > 0)
                or not math.isfinite(self.busy_ns)):
            return None, None
        return self.pkts / self.busy_ns * 1e9, self.load_pkts / self.pkts

    def usable(self, load_now, now_ns):
        """drain_usable(): (True, "") or (False, why)."""
        v, load = self.pkts_per_s()
        if v is None:
            return False, "no saturated drain yet (%d epochs, %.0f of %.0f packets)" % (
                self.taken, self.pkts, DRAIN_MIN_PKTS)
        if load_now is None or not math.isfinite(load_now) or not (abs(load_now - load) <= DRAIN_MAX_DLOAD):
            return False, "saturated drain measured at #C+#I %.2f, now %s" % (load, load_now)
        if now_ns > self.last_ns and now_ns - self.last_ns > DRAIN_MAX_AGE_NS:
            return False, "saturated drain %.0f s old" % ((now_ns - self.last_ns) / 1e9)
        return True, ""


def transfer_load(u):
    """#C + #I the daemon counted before transfer u, None when unknown."""
    db = u.get("daemon_before") or {}
    c = db.get("cpu_bound")
    if c is None:
        return None
    return c + (db.get("io_bound") or 0)


def transfer_epochs(run_records):
    """One epoch per transfer of a kept run, in time order: (u, s, e), with
    s and e as epoch() reads them. A transfer without the numbers (failed,
    no round-1 rate) gives an epoch that measured nothing (it still decays
    the sums, as the daemon's epochs do while it runs)."""
    out = []
    for u in sorted(run_records, key=lambda x: x["t_start_mono"]):
        start = int(round(u["t_start_mono"] * 1e9))
        end = int(round(u["t_end_mono"] * 1e9))
        sent = (u.get("pkts_sent_per_round") or [0])[0]
        lost = (u.get("pkts_lost_per_round") or [0])[0]
        rx = u.get("rx_rate_round1_bps")
        load = transfer_load(u)
        pkts = max(0, sent - lost)
        valid = bool(u.get("ok") and rx and rx > 0 and pkts > 0 and load is not None)
        busy = pkts / (rx / PKT_BITS) * 1e9 if valid else 0
        drops = u.get("socket_drops") or 0
        s = {"pkts_out": pkts if valid else 0, "receiver_oncpu_ns": busy, "empty_reads": 0,
             "recv_wakeups": 0, "receiver_preemptions": 0, "preempt_off_ns": 0.0,
             "wake_waits": 0, "wake_wait_ns": 0.0, "drops": drops, "drops_rcvbuf": drops,
             "counts_valid": valid, "receivers_valid": valid, "reasons_valid": True,
             "drops_valid": True, "ran_on": [(0, busy)]}
        e = {"start_ns": start, "end_ns": end, "ncpus": 1,
             "cpus": {0: {"cpu_bound": load if load is not None else float("nan"),
                          "io_bound": 0.0}}}
        out.append((u, s, e))
    return out


def learned(run_records, at_s):
    """The drain (packets / s) the rule gives at each instant of at_s
    (CLOCK_MONOTONIC seconds, with the load #C + #I then): a list of
    dicts {drain_pps, usable, why, epochs} per instant, from the epochs
    of the transfers that ended before it."""
    eps = transfer_epochs(run_records)
    out = []
    for t_s, load_now in at_s:
        d, last = Drain(), None
        now = int(round(t_s * 1e9))
        for u, s, e in eps:
            if e["end_ns"] > now:
                continue
            k = decay_factor((e["end_ns"] - last) / 1e9) if last is not None else 1.0
            d.add(s, e, None, k)
            last = e["end_ns"]
        if last is not None:
            d.decay(decay_factor((now - last) / 1e9))
        v, _ = d.pkts_per_s()
        ok, why = d.usable(load_now, now)
        out.append({"drain_pps": v, "usable": ok, "why": why, "epochs": d.taken,
                    "refused": d.refused})
    return out
