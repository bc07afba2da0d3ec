#!/usr/bin/python3
"""The receiver's waits for its CPU at full resolution, against what a log2
histogram of the same waits says when each slot is spread log-uniformly
(the shape the windows' loss models take within a slot: docs/model.md
§2.2, docs/fidelity.md §6.3).

    wakewaits.py TIMEHIST X_MS [X_MS ...]

TIMEHIST is `perf sched timehist --state -p PID` of the receiver (one line
per time it left its CPU: wait time, sch delay, run time, state). A run's
sch delay is a wait after a wake-up when the receiver had slept (state S)
before it, a window after preemption when it had been runnable (state R).
Per kind: how many, the longest, the top log2 slots, and at each X_MS
(a K/λ, the time the empty queue takes to fill) P(W > x) and E[(W - x)+]
measured and from the log-uniform slots. Exit 1 when the file has no
receiver runs.
"""
import math
import sys


def runs(path):
    """(sch delay ms, state) of each run, in order."""
    out = []
    for line in open(path):
        f = line.split()
        if len(f) < 7 or not f[0][0].isdigit():
            continue
        try:
            out.append((float(f[-3]), f[-1]))
        except ValueError:
            continue
    return out


def waits(rs):
    """{'wake': [...], 'preempt': [...]} sch delays in ns, by how the run
    before left the CPU."""
    kinds = {"wake": [], "preempt": []}
    for prev, cur in zip(rs, rs[1:]):
        if prev[1] == "S":
            kinds["wake"].append(cur[0] * 1e6)
        elif prev[1] == "R":
            kinds["preempt"].append(cur[0] * 1e6)
    return kinds


def loguniform(a, b, x):
    """(P(W > x), E[(W - x)+]) for W log-uniform on [a, b)."""
    if x >= b:
        return 0.0, 0.0
    if x <= a:
        return 1.0, (b - a) / math.log(b / a) - x
    span = math.log(b / a)
    return math.log(b / x) / span, ((b - x) - x * math.log(b / x)) / span


def compare(ws, x_ns):
    """Measured and log-uniform (P(W > x), E[(W - x)+] in ns) over ws."""
    n = len(ws)
    tail = sum(1 for w in ws if w > x_ns) / n
    excess = sum(w - x_ns for w in ws if w > x_ns) / n
    lu_tail = lu_excess = 0.0
    for w in ws:
        if w <= 0:
            continue
        r = int(math.log2(w))
        t, e = loguniform(2.0 ** r, 2.0 ** (r + 1), x_ns)
        lu_tail += t / n
        lu_excess += e / n
    return tail, excess, lu_tail, lu_excess


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rs = runs(argv[1])
    if not rs:
        print("wakewaits.py: no receiver runs in %s" % argv[1], file=sys.stderr)
        return 1
    xs = [float(x) * 1e6 for x in argv[2:]]
    for kind, ws in waits(rs).items():
        if not ws:
            print("%s: none" % kind)
            continue
        slots = {}
        for w in ws:
            if w > 0:
                r = int(math.log2(w))
                slots[r] = slots.get(r, 0) + 1
        top = ", ".join("%.1f-%.1f ms: %d" % (2.0 ** r / 1e6, 2.0 ** (r + 1) / 1e6, c)
                        for r, c in sorted(slots.items())[-4:])
        print("%s: %d, longest %.2f ms; top slots %s" % (kind, len(ws), max(ws) / 1e6, top))
        for x in xs:
            t, e, lt, le = compare(ws, x)
            print("  x = %.2f ms: P(W > x) %.2e measured, %.2e log-uniform; "
                  "E[(W - x)+] %.2e ms measured, %.2e ms log-uniform"
                  % (x / 1e6, t, lt, e / 1e6, le / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
