#!/usr/bin/env python3
"""The tables of docs/measurement.md's "Overhead" section, from the files
bench/overhead.sh writes with OUT= (kept in bench/results/).

For each file: the maximum-throughput ratio with the per-packet programs
in every epoch (method 1), the CPU-cost estimate (method 2), the steady
state at one epoch in N (method 4), and the cost of each program per run
against the do-nothing reference on its tracepoint (method 3), whichever
the file holds. The statistics are bench/overhead_stats.py's, the ones
overhead.sh prints, so the tables equal what the run printed.

usage: overhead_report.py [--target 0.97] [--cost-target 50] RUN.json...
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overhead_stats as ost  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("overhead_report: %s: %s" % (path, e))


def ratio_row(name, xs, target):
    """| setting | median [CI] | mean [CI] | pairs | verdict |"""
    if not xs:
        return None
    med, lo, hi, v = ost.report(name, xs, target, out=lambda *_: None)
    b = ost.boot_ci(xs) if len(xs) >= 2 else (xs[0], xs[0])
    return "| %s | %.3f [%.3f-%.3f] | %.3f [%.3f-%.3f] | %d | %s |" % (
        name, med, lo, hi, statistics.mean(xs), b[0], b[1], len(xs), v)


def throughput(path, r, target, out):
    rows = []
    rate = (r.get("rate") or {}).get("ratios") or []
    cpu = r.get("cpu") or {}
    a_every = r.get("stage_a_every", 1)
    rows.append(ratio_row("per-packet programs in every epoch%s: max throughput (method 1)"
                          % (", stage A's in one in %d" % a_every if a_every > 1 else ""),
                          rate, target))
    rows.append(ratio_row("... CPU-cost estimate, busiest stage (method 2)",
                          cpu.get("ratios") or [], target))
    rows = [x for x in rows if x]
    st = r.get("steady") or {}
    if st.get("u_ratios") and st.get("t_ratios") and "ratio" in st:
        rows.append("| steady state, one epoch in %d (method 4: %d U, %d T pairs) | - | "
                    "%.3f [%.3f-%.3f] | %d | %s |" % (
                        st["n"], len(st["u_ratios"]), len(st["t_ratios"]), st["ratio"],
                        st["lo"], st["hi"], len(st["u_ratios"]) + len(st["t_ratios"]),
                        ost.verdict(st["lo"], st["hi"], target)))
    if not rows:
        return
    out("Throughput with the probes attached / detached (`%s`, commit %s, probe code %s; "
        "medians with order-statistic and means with bootstrap 95 %% intervals; target >= %.2f):"
        % (os.path.basename(path), r.get("commit"), r.get("probe_sha"), target))
    out("")
    out("| setting | median [95 %] | mean [95 %] | pairs | verdict |")
    out("|---|---|---|---|---|")
    for x in rows:
        out(x)
    out("")


def stages(path, r, target, out):
    """CPU time per packet of each stage in method 1's windows (maximum
    throughput): detached, attached, and what the probes add (each attached
    window against its two detached neighbours; median with its interval).
    Throughput is set by the busiest stage, so the ratio's target allows the
    probes (1/target - 1) of its detached cost."""
    wins = (r.get("rate") or {}).get("windows") or []
    if len(wins) < 3:
        return
    arr = lambda w: max(w["pkts"] + w["drops"], 1)
    cols = [("sender's CPU %s: sender + NET_RX softirq, per packet arrived" % r.get("tx_cpu"),
             lambda w: w["tx"] / arr(w)),
            ("receiver's CPU %s: receiver threads, per packet read" % r.get("rx_cpu"),
             lambda w: w["rx"] / max(w["pkts"], 1))]
    off = [w for w in wins if not w["on"]]
    on = [w for w in wins if w["on"]]
    trip = [(wins[i - 1], wins[i], wins[i + 1]) for i in range(1, len(wins) - 1)
            if wins[i]["on"] and not wins[i - 1]["on"] and not wins[i + 1]["on"]]
    if not on or not trip:
        return
    out("CPU time per packet at maximum throughput (`%s`, method 1's windows: %d detached, %d "
        "attached at a median %.0f and %.0f packets/s; schedstat, ksoftirqd included; added: "
        "each attached window minus the mean of its detached neighbours, median with its 95 %% "
        "interval):" % (os.path.basename(path), len(off), len(on),
                        statistics.median(w["pkts"] / w["t"] for w in off),
                        statistics.median(w["pkts"] / w["t"] for w in on)))
    out("")
    out("| stage | CPU busy, detached | detached ns | attached ns | added ns [95 %%] | "
        "allowed for >= %.2f |" % target)
    out("|---|---|---|---|---|---|")
    for name, f in cols:
        busy = statistics.median(f(w) * (arr(w) if "arrived" in name else w["pkts"]) / w["t"] / 1e9
                                 for w in off)
        d_off = statistics.median(f(w) for w in off)
        add = [f(b) - (f(a) + f(c)) / 2 for a, b, c in trip]
        m = ost.median_ci(add)
        ci = " [%.0f-%.0f]" % (m[0], m[1]) if m else ""
        out("| %s | %.0f %% | %.0f | %.0f | %.0f%s | %.0f |" % (
            name, 100 * busy, d_off, statistics.median(f(w) for w in on),
            statistics.median(add), ci, (1 / target - 1) * d_off))
    out("")


def cost(path, r, cost_target, out):
    c = r.get("cost")
    if not c:
        return
    out("Cost per run (`%s`, %d daemon runs of %d epochs, every epoch sampled, median %.0f "
        "packets/s received; ns per run, median and range over the runs; reference: a "
        "do-nothing program on the same tracepoint in the same seconds; own = measured - "
        "reference):" % (os.path.basename(path), c["runs"], c["epochs"], c["pps"]))
    out("")
    out("| program | class | runs / packet | measured | reference | own | target <= %d ns own |"
        % cost_target)
    out("|---|---|---|---|---|---|---|")
    fmt = lambda xs: "%.0f (%.0f-%.0f)" % (statistics.median(xs), min(xs), max(xs)) \
        if xs else "-"
    total = 0.0
    order = {"per packet": 0, "per scheduling event": 1, "other": 2}
    for name, p in sorted(c["programs"].items(), key=lambda kv: (order[kv[1]["class"]], kv[0])):
        own = p["own_ns"]
        if not own or p["runs_per_pkt"] < 0.001:
            continue
        total += p["runs_per_pkt"] * statistics.median(own)
        v = "-"
        if p["class"] == "per packet":
            v = "met" if max(own) <= cost_target else \
                "NOT met" if min(own) > cost_target else "not resolved"
        out("| `%s` | %s | %.2f | %s | %s | %s | %s |" % (
            name, p["class"], p["runs_per_pkt"], fmt(p["measured_ns"]), fmt(p["reference_ns"]),
            fmt(own), v))
    out("")
    out("Own work per packet received, all programs: %.0f ns." % total)
    out("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN.json")
    ap.add_argument("--target", type=float, default=0.97)
    ap.add_argument("--cost-target", type=int, default=50)
    a = ap.parse_args()
    for path in a.runs:
        r = load(path)
        if r.get("foreign_daemons"):
            print("WARNING: %s: another rxbneckd ran during the run" % path)
        throughput(path, r, a.target, print)
        stages(path, r, a.target, print)
        cost(path, r, a.cost_target, print)


if __name__ == "__main__":
    main()
