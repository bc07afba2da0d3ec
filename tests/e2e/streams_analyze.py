#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The stream-count experiment's verdict (docs/streams.md §6).

    streams_analyze.py OUTDIR [BUILD]

Reads OUTDIR/runs.jsonl (tests/e2e/streams.sh; disturbed runs left out),
advice-k*-explore.json and advice-k*-all.json (rxbneckd's streams
documents), and per hog count k computes the measured curve (mean and
standard deviation of the runs at each n), the best n, the daemon's
advice after the exponential sampling and its throughput as a fraction of
the best (the rule: >= 0.95, from <= 5 stream counts), and, as the paper
compares its models, each model fitted offline (BUILD/rxbneckctl streams
--samples --expo --models M) to the exponential samples of the measured
means: its RMS error on the held-out n relative to their mean, its advice
and the fraction of the best it gets. Writes results.json, table.md and
streams.png into OUTDIR and prints table.md.
"""
import json
import math
import os
import statistics
import subprocess
import sys

MODELS = ["hacker", "dinda", "loss", "log", "newton", "full2", "break",
          "avg-arith", "avg-geom", "avg-quad"]


def load_runs(out):
    runs = []
    with open(os.path.join(out, "runs.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("ok") and not r.get("disturbed"):
                runs.append(r)
    return runs


def peer(path):
    try:
        p = json.load(open(path))["peers"]
    except (OSError, ValueError, KeyError):
        return None
    return p[0] if p else None


def offline(ctl, csv, max_n, model):
    args = [ctl, "streams", "--samples", csv, "--expo", "--max-n", str(max_n), "--json"]
    if model:
        args += ["--models", model]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None
    return json.loads(r.stdout)["peers"][0]


def at(mean, n):
    """The measured mean at n; between two measured counts, their straight
    line (the models' n* need not be a count the curve measured)."""
    if n in mean:
        return mean[n], False
    lo = max((m for m in mean if m < n), default=None)
    hi = min((m for m in mean if m > n), default=None)
    if lo is None or hi is None:
        return None, False
    return mean[lo] + (mean[hi] - mean[lo]) * (n - lo) / (hi - lo), True


def analyze_k(out, ctl, k, runs, max_n):
    curve = {}
    for r in runs:
        if r["k"] == k and r["phase"] == "curve":
            curve.setdefault(r["n"], []).append(r["goodput_bps"])
    if not curve:
        return None
    mean = {n: statistics.mean(v) for n, v in curve.items()}
    sd = {n: statistics.stdev(v) if len(v) > 1 else 0.0 for n, v in curve.items()}
    best_n = max(mean, key=lambda n: mean[n])
    best = mean[best_n]
    res = {"k": k, "curve": {n: {"mean_bps": mean[n], "sd_bps": sd[n], "runs": len(curve[n])}
                              for n in sorted(curve)},
           "best_n": best_n, "best_bps": best,
           "explore_runs": [r["n"] for r in runs if r["k"] == k and r["phase"] == "explore"]}
    p = peer(os.path.join(out, f"advice-k{k}-explore.json"))
    if p:
        f = p["frame"]
        n = f["streams"]
        res["daemon"] = {"streams": n, "flags": f["flags"], "model": f["model"],
                         "points": f["points"], "confidence": f["confidence"],
                         "predicted_bps": f["predicted_bps"], "cap_why": p.get("cap_why"),
                         "cap_bps": (p.get("advice") or {}).get("cap_bps"),
                         "measured_bps": mean.get(n),
                         "fraction": mean[n] / best if n in mean else None,
                         "curve": p.get("curve", [])}
        d = res["daemon"]
        d["pass"] = bool(d["fraction"] is not None and d["fraction"] >= 0.95 and
                         "explore" not in f["flags"] and d["points"] <= 5)
    p = peer(os.path.join(out, f"advice-k{k}-all.json"))
    if p:
        n = p["frame"]["streams"]
        res["daemon_all"] = {"streams": n, "model": p["frame"]["model"],
                             "points": p["frame"]["points"],
                             "fraction": mean[n] / best if n in mean else None}
    csv = os.path.join(out, f"curve-k{k}.csv")
    with open(csv, "w") as fh:
        fh.write("n,throughput_bps\n")
        for n in sorted(mean):
            fh.write(f"{n},{mean[n]!r}\n")
    res["models"] = {}
    for m in [None] + MODELS:
        q = offline(ctl, csv, max_n, m)
        if not q:
            continue
        used = [s["n"] for s in q["samples"] if s["fitted"]]
        held = [n for n in sorted(mean) if n not in used]
        cur = {c[0]: c[1] for c in q["curve"]}
        errs = [(cur[n] - mean[n]) ** 2 for n in held if cur.get(n) is not None]
        n_opt = q["advice"]["streams"]
        got, interp = at(mean, n_opt)
        res["models"][m or "chosen"] = {
            "model": q["fit"]["model"], "used": used,
            "held_rms_rel": (math.sqrt(sum(errs) / len(errs)) / statistics.mean(mean[n] for n in held)
                             if errs and held else None),
            "streams": n_opt, "fraction": got / best if got is not None else None,
            "interpolated": interp, "curve": q["curve"]}
    return res


def pct(x):
    return "-" if x is None else f"{100 * x:.1f} %"


def table(results):
    lines = ["| k | best n (measured) | best | advised n* | samples | model | n* gets | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        d = r.get("daemon") or {}
        lines.append(f"| {r['k']} | {r['best_n']} | {r['best_bps'] / 1e6:.1f} Mb/s | "
                     f"{d.get('streams', '-')} | {d.get('points', '-')} ({' '.join(map(str, r['explore_runs']))}) | "
                     f"{d.get('model', '-')} | {pct(d.get('fraction'))} | "
                     f"{'pass' if d.get('pass') else 'MISS'} |")
    lines += ["", "Each model on the exponential samples of the measured means (the paper's comparison):", "",
              "| k | model | samples fitted | RMS error, held-out n | n* | n* gets |", "|---|---|---|---|---|---|"]
    for r in results:
        for name, m in r["models"].items():
            lines.append(f"| {r['k']} | {name if name != 'chosen' else 'chosen: ' + m['model']} | "
                         f"{','.join(map(str, m['used']))} | {pct(m['held_rms_rel'])} | {m['streams']} | "
                         f"{pct(m['fraction'])}{' (interpolated)' if m['interpolated'] else ''} |")
    return "\n".join(lines) + "\n"


def plot(out, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.2), squeeze=False)
    for ax, r in zip(axes[0], results):
        ns = sorted(int(n) for n in r["curve"])
        m = [r["curve"][n]["mean_bps"] / 1e6 for n in ns]
        s = [r["curve"][n]["sd_bps"] / 1e6 for n in ns]
        ax.errorbar(ns, m, yerr=s, fmt="o", ms=3, color="C1", label="measured (mean, sd)")
        d = r.get("daemon")
        if d and d["curve"]:
            ax.plot([c[0] for c in d["curve"]], [c[1] / 1e6 for c in d["curve"]], color="C0",
                    label=f"rxbneckd's fit ({d['model']}, {d['points']} samples)")
        if d:
            ax.axvline(d["streams"], color="C3", linewidth=1, label=f"advised n* = {d['streams']}")
        ax.axvline(r["best_n"], color="C2", linestyle="--", linewidth=1,
                   label=f"measured best n = {r['best_n']}")
        ax.set_xlim(0, max(ns) + 1)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("parallel streams n")
        ax.set_ylabel("throughput, Mb/s")
        ax.set_title(f"{r['k']} CPU hogs on the receiver's CPU", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "streams.png"), dpi=90)


def main():
    out = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "build"
    ctl = os.path.join(build, "rxbneckctl")
    meta = json.load(open(os.path.join(out, "meta.json")))
    runs = load_runs(out)
    results = [r for r in (analyze_k(out, ctl, k, runs, meta["max_n"]) for k in meta["ks"]) if r]
    json.dump({"meta": meta, "results": results}, open(os.path.join(out, "results.json"), "w"),
              indent=1)
    t = table(results)
    open(os.path.join(out, "table.md"), "w").write(t)
    plot(out, results)
    print(t)


if __name__ == "__main__":
    main()
