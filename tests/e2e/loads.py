#!/usr/bin/python3
"""The load kinds of the end-to-end harness (tests/e2e/lib.sh E_LOAD,
docs/e2e.md §1) and the share of the CPU each leaves a receiver.

    loads.py expect KIND K     the effective count K tasks of KIND give

The effective count (cpus[].cpu_bound_eff, docs/measurement.md) is the
equal-share count that gives a saturated nice-0 receiver the share the
scheduler gives it. From the closed forms of weighted fair sharing:
busy K; duty:P P/100 for K = 1 (runnable P % of the time; two or more
on one CPU stretch each other's busy phases: no closed form); nice:N
K w(N)/1024 (the kernel's weight of nice N); quota:P x/(1 - x) with
x = min(P/100, K/(K+1)) (the K loops' share, capped by the quota); io 0
(I/O-bound: the model's #I, not #C).
"""
import sys

# The kernel's sched_prio_to_weight[], nice -20 .. 19.
NICE_WEIGHT = [88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
               9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
               1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
               110, 87, 70, 56, 45, 36, 29, 23, 18, 15]


def expect(kind, k):
    """The effective count of K tasks of KIND (ValueError for an unknown kind)."""
    name, _, arg = (kind or "busy").partition(":")
    if k == 0 or name == "io":
        return 0.0
    if name == "busy":
        return float(k)
    if name == "duty":
        if k > 1:
            raise ValueError("duty:P has a closed form for k = 1 only")
        return int(arg) / 100
    if name == "nice":
        return k * NICE_WEIGHT[int(arg) + 20] / 1024
    if name == "quota":
        x = min(int(arg) / 100, k / (k + 1))
        return x / (1 - x)
    raise ValueError("unknown load kind %r" % kind)


def main(argv):
    if len(argv) != 4 or argv[1] != "expect":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        print("%.4f" % expect(argv[2], int(argv[3])))
    except ValueError as e:
        print("loads.py: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
