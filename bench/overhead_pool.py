#!/usr/bin/env python3
"""Pool the pairs of several bench/overhead.sh runs (their OUT= files).

One run on a VM whose speed drifts by more than the few per cent sought
gives an interval a few per cent wide; runs of the same probe code on the
same machine measure the same thing, so their attached/detached pairs can
be judged together. Each pair is already a self-contained comparison (an
attached window against the detached windows on either side of it), so
pooling adds pairs, not bias; runs whose probe code, sampling, probes,
window length or datagram size differ are refused unless --mix is given.

Method 4 (steady state) is pooled the same way: the U pairs of all runs
together and the T pairs together, combined with the weights of their
common STEADY_N; runs with a different STEADY_N or window are refused.

usage: overhead_pool.py [--target 0.97] [--mix] [--json] RUN.json...
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overhead_stats as ost  # noqa: E402

SAME = ("probe_sha", "net_every", "stage_a_every", "probes", "period_s", "len_bytes")
METHODS = (("rate", "ratios", "max throughput attached/detached"),
           ("cpu", "ratios", "CPU-cost estimate (busiest stage)"),
           ("cpu", "path_ratios", "receive path (softirq + receiver)"))


def load(path):
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("overhead_pool: %s: %s" % (path, e))
    r.setdefault("stage_a_every", 1)     # runs from before --stage-a-every
    missing = [k for k in SAME if k not in r]
    if missing:
        sys.exit("overhead_pool: %s: not an overhead.sh OUT file (no %s)"
                 % (path, ", ".join(missing)))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN.json")
    ap.add_argument("--target", type=float, default=0.97)
    ap.add_argument("--mix", action="store_true",
                    help="pool runs whose set-up differs (says which)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()

    runs = [(p, load(p)) for p in a.runs]
    starts = [r.get("start_unix") for _, r in runs]
    if len(set(starts)) < len(starts):
        sys.exit("overhead_pool: the same run given twice (equal start_unix)")
    differ = [k for k in SAME if len({json.dumps(r[k]) for _, r in runs}) > 1]
    if differ and not a.mix:
        sys.exit("overhead_pool: the runs differ in %s; pass --mix to pool them anyway"
                 % ", ".join(differ))
    bad = [p for p, r in runs if r.get("foreign_daemons")]
    lines, res = [], {"runs": [], "pooled": {}, "differ": differ,
                      "disturbed_runs": bad}
    say = lines.append if a.json else print
    for p, r in runs:
        row = {"file": p, "commit": r.get("commit"), "probe_sha": r["probe_sha"]}
        for m, key, _ in METHODS:
            xs = (r.get(m) or {}).get(key) or []
            row["%s.%s" % (m, key)] = {"n": len(xs),
                                       "median": statistics.median(xs) if xs else None}
        res["runs"].append(row)
        say("%s: commit %s, probes %s, %s" % (p, row["commit"], row["probe_sha"], ", ".join(
            "%s n=%d median %s" % (k, v["n"], "%.3f" % v["median"] if v["n"] else "-")
            for k, v in row.items() if isinstance(v, dict))))
    for m, key, name in METHODS:
        xs = [x for _, r in runs for x in ((r.get(m) or {}).get(key) or [])]
        if not xs:
            continue
        med, lo, hi, v = ost.report("pooled " + name, xs, a.target, out=say)
        res["pooled"]["%s.%s" % (m, key)] = {
            "n": len(xs), "median": med, "lo": lo, "hi": hi,
            "mean": statistics.mean(xs), "verdict": v}
        say("RESULT pooled %s %.3f, 95%% CI %.3f-%.3f (target >= %.2f: %s)"
            % (name, med, lo, hi, a.target, v))
    steady = [r["steady"] for _, r in runs if (r.get("steady") or {}).get("u_ratios")]
    if steady:
        shapes = {(st["n"], st["period_s"]) for st in steady}
        if len(shapes) > 1:
            sys.exit("overhead_pool: the runs' steady-state methods differ in STEADY_N or "
                     "window: %s" % sorted(shapes))
        n = steady[0]["n"]
        ru = [x for st in steady for x in st["u_ratios"]]
        rt = [x for st in steady for x in st["t_ratios"]]
        if len(ru) >= 2 and len(rt) >= 2:
            est, lo, hi = ost.strata_mean([(1 - 2 / n, ru), (2 / n, rt)])
            v = ost.verdict(lo, hi, a.target)
            res["pooled"]["steady"] = {"n": n, "u_pairs": len(ru), "t_pairs": len(rt),
                                       "ratio": est, "lo": lo, "hi": hi, "verdict": v}
            say("RESULT pooled steady-state throughput ratio (one epoch in %d) %.3f, 95%% CI "
                "%.3f-%.3f from %d U and %d T pairs (target >= %.2f: %s)"
                % (n, est, lo, hi, len(ru), len(rt), a.target, v))
    if differ:
        say("WARNING: pooled runs differ in %s" % ", ".join(differ))
    if bad:
        say("WARNING: another rxbneckd ran during %s: those ratios are not valid"
            % ", ".join(bad))
    if a.json:
        res["lines"] = lines
        print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
