#!/usr/bin/python3
"""Judge --follow against a fixed-rate sweep pooled over several runs.

    pool.py REFDIR... [--judge DIR...] [--boot N] [--json FILE] [--md FILE]
    pool.py --ref-from tests/e2e/results --judge DIR... [...]

One run's sweep has 3 repeats per rate. Near the knee a transfer either
loses a round or does not (at 100 ms a lost round is +0.2 s, +40 %), so
the mean of three is a coin toss and the lowest of eleven such means is
biased low (docs/e2e.md §4). The fixed-rate runs do not depend on
rxbneckd's model (only the --follow runs do), so sweeps of the same
testbed, run at different heads, are samples of one curve. This tool
pools them:

  REFDIR...   analyze.py result directories (results.json, full or
              exported) whose fixed-rate runs (tag "main", ok, not
              disturbed) make the reference curve. They must share the
              testbed: kernel, CPUs, delay, socket buffer, line rate, file
              size, USO, RPS, epoch, backlog, receiver options; a
              mismatch is an error naming the directory and the key.
  --ref-from PARENT
              also every result directory directly under PARENT (the
              kept runs, tests/e2e/results) whose testbed is the first
              judged run's; those of other testbeds are passed over and
              counted, the judged directories left out. run.sh judges
              each new run this way.
  --judge DIR the runs whose --follow transfers are judged against the
              reference (default: every REFDIR). Their testbed must match
              too; their own sweeps are not added to the reference.

Per k it prints the pooled curve (mean T with a 99 % Student interval,
runs that lost anything), the best rate (lowest pooled mean) and, by a
bootstrap over the runs at each rate (--boot resamples, fixed seed),
the 99 % interval of the best T and how often each rate came out best.
Then per judged directory and pooled over them: the --follow mean T over
the best T (claim 1: at most 1.10), the chosen rate over the best rate
(claim 3: within 15 %) with the pooled curve's T at the chosen rate
(linear between swept rates) over the best T, and, where the pooled top
rate loses more than 5 % in its first round, --follow's T over the
top's (claim 2: at most 0.75). --follow-nopause transfers are judged
the same way. It ends with the pooled verdict, one row per k (the table
docs/e2e.md quotes). --plot FILE draws the pooled curve with the judged
--follow transfers (matplotlib).
"""
import argparse
import json
import math
import os
import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the results
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analyze import (CLAIM1_MAX, CLAIM2_MAX, CLAIM2_MIN_LOSS, CLAIM3_MAX,  # noqa: E402
                     chosen_rate, stats)

# What makes two runs' sweeps samples of the same curve.
TESTBED_KEYS = ("kernel", "cpus", "one_way_delay_ms", "rcvbuf", "line_rate_bps",
                "file_size", "uso_off", "rps", "epoch_ms", "netdev_max_backlog",
                "recv_args", "recv_cpu", "send_cpu", "load")
# Runs made before a key was recorded had its value then.
TESTBED_DEFAULTS = {"load": "busy"}
FOLLOW_MODES = ("follow", "follow-nopause")
# The bound a loss model's chosen rate is held to before it becomes the
# daemon's default: within 10 % of the best rate at k = 1-3 (docs/e2e.md §4).
RATE_RULE_MAX = 0.10


class PoolError(Exception):
    pass


def load(d):
    p = os.path.join(d, "results.json")
    try:
        with open(p) as f:
            res = json.load(f)
    except OSError as e:
        raise PoolError("%s: cannot read results.json: %s" % (d, e.strerror))
    except ValueError as e:
        raise PoolError("%s: results.json is not JSON: %s" % (d, e))
    if not isinstance(res, dict) or "meta" not in res or "runs" not in res:
        raise PoolError("%s: results.json has no meta and runs (not analyze.py output?)" % d)
    return res


def testbed_diff(a, b):
    """The first testbed key in which two runs' meta differ, or None."""
    for key in TESTBED_KEYS:
        d = TESTBED_DEFAULTS.get(key)
        if a.get(key, d) != b.get(key, d):
            return key
    return None


def check_testbed(dirs, results):
    ref_dir, ref = dirs[0], results[0]["meta"]
    for d, res in zip(dirs[1:], results[1:]):
        key = testbed_diff(ref, res["meta"])
        if key:
            raise PoolError("%s: testbed differs from %s in %s (%r against %r)"
                            % (d, ref_dir, key, res["meta"].get(key), ref.get(key)))


def kept_refs(parent, judged_dirs, meta):
    """The result directories under PARENT (one level) of the testbed in
    META, other than the judged ones: the runs kept in tests/e2e/results/
    that sample the same curve. Returns (dirs, results, how many of another
    testbed were passed over)."""
    try:
        names = sorted(os.listdir(parent))
    except OSError as e:
        raise PoolError("%s: cannot list: %s" % (parent, e.strerror))
    judged = {os.path.realpath(d) for d in judged_dirs}
    dirs, results, other = [], [], 0
    for name in names:
        d = os.path.join(parent, name)
        if (os.path.realpath(d) in judged
                or not os.path.isfile(os.path.join(d, "results.json"))):
            continue
        res = load(d)
        if testbed_diff(meta, res["meta"]):
            other += 1
            continue
        dirs.append(d)
        results.append(res)
    if not dirs:
        raise PoolError("%s: no kept run of this testbed (%d of other testbeds)"
                        % (parent, other))
    return dirs, results, other


def usable(run):
    return (run.get("ok") and not run.get("disturbed")
            and run.get("tag") == "main"
            and isinstance(run.get("transfer_time_s"), (int, float)))


def lossy(run):
    return (run.get("loss_first_round") or 0) > 0


def curve(results):
    """{k: {rate_bps: [(T, lossy, loss_first_round), ...]}} of the fixed runs."""
    c = {}
    for res in results:
        for r in res["runs"]:
            if r.get("mode") != "fixed" or not usable(r):
                continue
            c.setdefault(r["k"], {}).setdefault(r["rate_req_bps"], []).append(
                (r["transfer_time_s"], lossy(r), r.get("loss_first_round") or 0.0))
    return c


def draw_mean(xs, n, rng):
    """The mean of n draws from xs with replacement."""
    return sum(xs[rng.randrange(len(xs))] for _ in range(n)) / n


def bootstrap_best(by_rate, n, rng):
    """The best (lowest) mean T over rates, each rate's runs resampled
    with replacement: its 0.5 and 99.5 percentiles, and the share of
    resamples in which each rate was the best."""
    rates = sorted(by_rate)
    times = {b: [t for t, _, _ in by_rate[b]] for b in rates}
    wins = dict.fromkeys(rates, 0)
    bests = []
    for _ in range(n):
        m = {b: draw_mean(times[b], len(times[b]), rng) for b in rates}
        b = min(m, key=m.get)
        wins[b] += 1
        bests.append(m[b])
    bests.sort()
    lo = bests[int(0.005 * (n - 1))]
    hi = bests[int(math.ceil(0.995 * (n - 1)))]
    return [lo, hi], {b: wins[b] / n for b in rates}


def oracle_fail(by_rate, best_rate, sweep_reps, follow_reps, n, rng):
    """How often claims 1 and 2 fail for a chooser that always picks the
    pooled best rate: draw a sweep of sweep_reps runs per rate and
    follow_reps runs at the best rate from the pooled runs (with
    replacement), and count T_follow > 1.10 x the sweep's lowest mean
    (claim 1) and T_follow > 0.75 x the sweep's top-rate mean (claim 2).
    The false-failure rates of judging by one run's own sweep; for claim
    2 it is what no choice of one fixed rate can do better than."""
    times = {b: [t for t, _, _ in xs] for b, xs in by_rate.items()}
    top = max(times)
    fails1 = fails2 = 0
    for _ in range(n):
        means = {b: draw_mean(xs, sweep_reps, rng) for b, xs in times.items()}
        fol = draw_mean(times[best_rate], follow_reps, rng)
        fails1 += fol > CLAIM1_MAX * min(means.values())
        fails2 += fol > CLAIM2_MAX * means[top]
    return fails1 / n, fails2 / n


def rate_fail(wins, best_rate, band):
    """The share of bootstrap resamples whose best rate is more than band
    from best_rate: how often a chooser that always asks for the pooled
    best rate would be judged outside +-band by another pooled sweep of the
    same size (the resamples stand for such repeats)."""
    return sum(w for b, w in wins.items() if abs(b / best_rate - 1) > band)


def reference(c, nboot, seed, sweep_reps=3, follow_reps=3):
    ref = {}
    for k, by_rate in sorted(c.items()):
        pts = []
        for b in sorted(by_rate):
            xs = by_rate[b]
            pts.append({"rate_bps": b, "time_s": stats([t for t, _, _ in xs]),
                        "runs_lossy": sum(1 for _, l, _ in xs if l),
                        "loss_first_round": stats([f for _, _, f in xs])["mean"]})
        best = min(pts, key=lambda p: p["time_s"]["mean"])
        ci, wins = bootstrap_best(by_rate, nboot, random.Random(seed + k))
        for p in pts:
            p["p_best"] = wins[p["rate_bps"]]
        ofail1, ofail2 = oracle_fail(by_rate, best["rate_bps"], sweep_reps, follow_reps,
                                     nboot, random.Random(seed + 100 + k))
        top = pts[-1]
        claim2 = (top["loss_first_round"] or 0) > CLAIM2_MIN_LOSS
        ref[k] = {"points": pts, "best": best, "best_time_ci99": ci,
                  "top": top, "oracle_claim1_fail": ofail1,
                  # Claim 2 applies: can one fixed rate meet it at all?
                  "best_over_top": best["time_s"]["mean"] / top["time_s"]["mean"],
                  "oracle_claim2_fail": ofail2 if claim2 else None,
                  "oracle_claim3_fail": rate_fail(wins, best["rate_bps"], CLAIM3_MAX),
                  "oracle_rate_rule_fail": rate_fail(wins, best["rate_bps"], RATE_RULE_MAX),
                  "oracle_reps": [sweep_reps, follow_reps]}
    return ref


def t_at(points, rate):
    """The pooled mean T at rate, linear between the two swept rates
    around it; None outside the sweep."""
    for a, b in zip(points, points[1:]):
        if a["rate_bps"] <= rate <= b["rate_bps"]:
            w = (rate - a["rate_bps"]) / (b["rate_bps"] - a["rate_bps"])
            return a["time_s"]["mean"] + w * (b["time_s"]["mean"] - a["time_s"]["mean"])
    if points and rate == points[-1]["rate_bps"]:
        return points[-1]["time_s"]["mean"]
    return None


def judge_runs(runs, ref_k):
    """Claims 1-3 for one set of --follow transfers at one k."""
    out = {}
    best, top = ref_k["best"], ref_k["top"]
    t_best, t_top = best["time_s"]["mean"], top["time_s"]["mean"]
    for mode in FOLLOW_MODES:
        rs = [r for r in runs if r.get("mode") == mode]
        if not rs:
            continue
        s = stats([r["transfer_time_s"] for r in rs])
        med = chosen_rate(rs)
        j = {"time_s": s, "runs_lossy": sum(1 for r in rs if lossy(r)),
             "follow_over_best": s["mean"] / t_best,
             "claim1": s["mean"] <= CLAIM1_MAX * t_best}
        if s["ci99"]:
            j["follow_over_best_ci99"] = [x / t_best for x in s["ci99"]]
        if med is not None:
            j["chosen_rate_bps"] = med
            j["chosen_over_best"] = med / best["rate_bps"]
            j["claim3"] = abs(med / best["rate_bps"] - 1) <= CLAIM3_MAX
            # What the chosen rate is worth on the pooled curve, whatever
            # luck its own transfers had.
            t = t_at(ref_k["points"], med)
            j["curve_t_at_chosen_over_best"] = t / t_best if t is not None else None
        if (top["loss_first_round"] or 0) > CLAIM2_MIN_LOSS:
            j["follow_over_top"] = s["mean"] / t_top
            j["claim2"] = s["mean"] <= CLAIM2_MAX * t_top
        out[mode] = j
    return out


def judge(dirs, results, ref):
    per_dir = {}
    pooled_runs = {}
    for d, res in zip(dirs, results):
        per_k = {}
        for k in sorted(ref):
            rs = [r for r in res["runs"] if r.get("k") == k and usable(r)
                  and r.get("mode") in FOLLOW_MODES]
            if rs:
                per_k[k] = judge_runs(rs, ref[k])
                pooled_runs.setdefault(k, []).extend(rs)
        per_dir[d] = {"git_commit": res["meta"].get("git_commit"),
                      "seed": res["meta"].get("seed"), "per_k": per_k}
    pooled = {k: judge_runs(rs, ref[k]) for k, rs in sorted(pooled_runs.items())}
    return per_dir, pooled, pooled_runs


def gbps(b):
    return "%.2f" % (b / 1e9)


def yes(v):
    return "holds" if v else "**fails**"


def markdown(refdirs, ref, per_dir, pooled, nboot, other=0):
    L = ["# --follow against the pooled fixed-rate sweep", "",
         "Reference: the fixed-rate runs of %d directories (%s%s). Best T's 99 %% "
         "interval and P(best): bootstrap over each rate's runs, %d resamples."
         % (len(refdirs), ", ".join(os.path.basename(os.path.normpath(d)) for d in refdirs),
            "; %d kept runs of other testbeds passed over" % other if other else "",
            nboot), ""]
    L += ["## The pooled curve", "",
          "| k | rate (Gb/s) | runs | lossy | T mean [99 % CI] | P(best) |",
          "|---|---|---|---|---|---|"]
    for k, r in sorted(ref.items()):
        for p in r["points"]:
            s = p["time_s"]
            ci = "[%.3f, %.3f]" % tuple(s["ci99"]) if s["ci99"] else "–"
            L.append("| %d | %s | %d | %d | %.3f %s | %.2f |" % (
                k, gbps(p["rate_bps"]), s["n"], p["runs_lossy"], s["mean"], ci, p["p_best"]))
    L += ["", "*claim 1 (2) fails for the best rate itself*: drawn from the pooled runs, "
          "a sweep of %d runs per rate and %d transfers at the pooled best rate; how "
          "often those transfers' mean is above 1.10 × the sweep's lowest mean (0.75 × "
          "its top rate's mean): a chooser that always picks the best rate, judged by "
          "one run's own sweep. *T best / T top* above 0.75: no single fixed rate "
          "meets claim 2 on the pooled curve. *Claim 3 (±10 %%) fails for it*: the "
          "share of the bootstrap resamples whose best rate lies outside ±15 %% "
          "(±10 %%) of the pooled best rate."
          % tuple(next(iter(ref.values()))["oracle_reps"]), "",
          "| k | best rate (Gb/s) | T best | best T, bootstrap 99 % | top loss | T top "
          "| T best / T top | claim 1 fails for the best rate itself "
          "| claim 2 fails for it | claim 3 fails for it | ±10 % fails for it |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k, r in sorted(ref.items()):
        o2 = r["oracle_claim2_fail"]
        L.append("| %d | %s | %.3f | [%.3f, %.3f] | %.3f | %.3f | %.3f | %.2f | %s | %.2f | %.2f |" % (
            k, gbps(r["best"]["rate_bps"]), r["best"]["time_s"]["mean"],
            r["best_time_ci99"][0], r["best_time_ci99"][1],
            r["top"]["loss_first_round"], r["top"]["time_s"]["mean"],
            r["best_over_top"], r["oracle_claim1_fail"],
            "%.2f" % o2 if o2 is not None else "n/a",
            r["oracle_claim3_fail"], r["oracle_rate_rule_fail"]))

    def rows(label, per_k):
        out = []
        for k, modes in sorted(per_k.items()):
            for mode, j in modes.items():
                ci = j.get("follow_over_best_ci99")
                tc = j.get("curve_t_at_chosen_over_best")
                out.append("| %s | %d | %s | %d (%d lossy) | %.3f | %.2f%s | %s | %s | %s | %s |" % (
                    label, k, mode, j["time_s"]["n"], j["runs_lossy"], j["time_s"]["mean"],
                    j["follow_over_best"], " [%.2f, %.2f]" % tuple(ci) if ci else "",
                    yes(j["claim1"]),
                    ("%.2f (%s)" % (j["follow_over_top"], yes(j["claim2"])))
                    if "follow_over_top" in j else "n/a",
                    ("%.2f (%s)" % (j["chosen_over_best"], yes(j["claim3"])))
                    if "chosen_over_best" in j else "–",
                    "%.3f" % tc if tc is not None else "–"))
        return out

    L += ["", "## The judged --follow transfers", "",
          "| run | k | mode | transfers | T mean | / T best [99 %] (claim 1: ≤ 1.10) "
          "| claim 1 | / T top (claim 2: ≤ 0.75) | chosen / best rate (claim 3) "
          "| pooled T at the chosen rate / T best |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for d, v in per_dir.items():
        L += rows(os.path.basename(os.path.normpath(d)), v["per_k"])
    L += rows("**pooled**", pooled)
    L += ["", "## The pooled verdict", ""] + verdict_md(ref, pooled).splitlines()
    return "\n".join(L) + "\n"


def verdict_md(ref, pooled):
    """The verdict on the judged --follow transfers pooled, one row per k:
    claims 1-3 against the pooled sweep, for --follow and (last column)
    --follow --no-pause. docs/e2e.md quotes this table."""
    def claim(j, ratio, key, ci=None):
        return "%.2f%s %s" % (j[ratio], " [%.2f, %.2f]" % tuple(ci) if ci else "",
                              yes(j[key]))

    def claim2(j, r):
        if "follow_over_top" in j:
            return claim(j, "follow_over_top", "claim2")
        return "n/a (top loses %.1f %%)" % (100 * (r["top"]["loss_first_round"] or 0))

    L = ["| k | best fixed rate (Gb/s): T (s) | claim 1: follow / best (≤ 1.10) [99 %] "
         "| `--follow` lossy | claim 2: follow / top (≤ 0.75) "
         "| claim 3: chosen / best rate (within 15 %) | pooled T at the chosen rate / best "
         "| `--no-pause`: claim 1; claim 2 |",
         "|---|---|---|---|---|---|---|---|"]
    for k, r in sorted(ref.items()):
        j = pooled.get(k, {}).get("follow")
        if not j:
            continue
        n = pooled[k].get("follow-nopause")
        tc = j.get("curve_t_at_chosen_over_best")
        L.append("| %d | %s: %.3f | %s | %d of %d | %s | %s | %s | %s |" % (
            k, gbps(r["best"]["rate_bps"]), r["best"]["time_s"]["mean"],
            claim(j, "follow_over_best", "claim1", j.get("follow_over_best_ci99")),
            j["runs_lossy"], j["time_s"]["n"], claim2(j, r),
            "%.2f (%s Gb/s) %s" % (j["chosen_over_best"], gbps(j["chosen_rate_bps"]),
                                   yes(j["claim3"])) if "chosen_over_best" in j else "–",
            "%.3f" % tc if tc is not None else "–",
            "%s; %s" % (claim(n, "follow_over_best", "claim1"), claim2(n, r)) if n else "–"))
    return "\n".join(L) + "\n"


def plot(ref, pooled_runs, meta, nref, path):
    """The pooled curve per k (mean T and its 99 % interval at each fixed
    rate), every judged --follow transfer at its first RATE, and their mean
    T at the median first RATE (the chosen rate)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PoolError("--plot %s: no matplotlib (python3-matplotlib)" % path)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    for i, (k, r) in enumerate(sorted(ref.items())):
        c = colors[i % len(colors)]
        pts = r["points"]
        x = [p["rate_bps"] / 1e9 for p in pts]
        y = [p["time_s"]["mean"] for p in pts]
        e = [[p["time_s"]["mean"] - p["time_s"]["ci99"][0] if p["time_s"]["ci99"] else 0
              for p in pts],
             [p["time_s"]["ci99"][1] - p["time_s"]["mean"] if p["time_s"]["ci99"] else 0
              for p in pts]]
        ax.errorbar(x, y, yerr=e, color=c, marker="o", ms=3, lw=1.2, capsize=2,
                    label="k = %d, fixed rates" % k)
        fol = [q for q in pooled_runs.get(k, []) if q.get("mode") == "follow"
               and isinstance(q.get("rate_first_bps"), (int, float))]
        if fol:
            ax.scatter([q["rate_first_bps"] / 1e9 for q in fol],
                       [q["transfer_time_s"] for q in fol], s=9, color=c, alpha=0.35,
                       linewidths=0)
            ax.plot([chosen_rate(fol) / 1e9],
                    [stats([q["transfer_time_s"] for q in fol])["mean"]],
                    marker="*", ms=14, color=c, mec="k", ls="none",
                    label="k = %d, --follow (%d)" % (k, len(fol)))
    ax.set_xlabel("sending rate (Gb/s of UDP payload)")
    ax.set_ylabel("transfer time (s)")
    ax.set_title("%s file, %g ms one way, %g Gb/s line, k CPU-bound tasks on the "
                 "receiver's CPU:\nfixed rates pooled over %d runs (mean, 99 %% CI); "
                 "dots: --follow transfers at rxbneckd's rate; star: their mean"
                 % (meta.get("file_size"), meta.get("one_way_delay_ms"),
                    (meta.get("line_rate_bps") or 0) / 1e9, nref), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(
        description="Judge --follow transfers against the fixed-rate sweep pooled "
                    "over several tests/e2e runs (docs/e2e.md §4).")
    ap.add_argument("refdirs", nargs="*", metavar="REFDIR",
                    help="analyze.py result directories whose fixed-rate runs are pooled")
    ap.add_argument("--ref-from", metavar="PARENT",
                    help="also pool every result directory under PARENT (e.g. "
                         "tests/e2e/results) of the judged runs' testbed; needs --judge")
    ap.add_argument("--judge", nargs="+", metavar="DIR",
                    help="directories whose --follow runs are judged (default: the REFDIRs)")
    ap.add_argument("--boot", type=int, default=2000, metavar="N",
                    help="bootstrap resamples for the best T's interval (default 2000)")
    ap.add_argument("--seed", type=int, default=1, help="bootstrap seed (default 1)")
    ap.add_argument("--sweep-reps", type=int, default=3, metavar="N",
                    help="repeats per rate of the one-run sweep the best rate itself "
                         "is judged by (default 3, run.sh -n)")
    ap.add_argument("--follow-reps", type=int, default=3, metavar="N",
                    help="--follow transfers per k of that run (default 3, run.sh -f)")
    ap.add_argument("--json", metavar="FILE", help="also write everything as JSON to FILE")
    ap.add_argument("--md", metavar="FILE", help="also write the tables to FILE")
    ap.add_argument("--plot", metavar="FILE",
                    help="also draw the pooled curve and the judged --follow transfers "
                         "into FILE (PNG)")
    args = ap.parse_args()
    if args.boot < 100:
        ap.error("--boot %d: at least 100 resamples are needed for a 99 %% interval" % args.boot)
    for name in ("sweep_reps", "follow_reps"):
        if getattr(args, name) < 1:
            ap.error("--%s %d: at least 1" % (name.replace("_", "-"), getattr(args, name)))
    if args.ref_from and not args.judge:
        ap.error("--ref-from %s: needs --judge DIR (whose testbed to look for)" % args.ref_from)
    if not args.refdirs and not args.ref_from:
        ap.error("no reference: give REFDIRs, --ref-from PARENT or both")
    jdirs = args.judge or args.refdirs
    refdirs = list(args.refdirs)
    other = 0
    try:
        refs = [load(d) for d in refdirs]
        judged = [load(d) for d in jdirs]
        if args.ref_from:
            kd, kr, other = kept_refs(args.ref_from, jdirs + refdirs, judged[0]["meta"])
            refdirs += kd
            refs += kr
        check_testbed(refdirs + jdirs, refs + judged)
    except PoolError as e:
        print("pool.py: %s" % e, file=sys.stderr)
        return 1
    c = curve(refs)
    if not c:
        print("pool.py: no usable fixed-rate runs in %s" % " ".join(refdirs),
              file=sys.stderr)
        return 1
    ref = reference(c, args.boot, args.seed, args.sweep_reps, args.follow_reps)
    per_dir, pooled, pooled_runs = judge(jdirs, judged, ref)
    md = markdown(refdirs, ref, per_dir, pooled, args.boot, other)
    sys.stdout.write(md)
    if args.plot:
        try:
            plot(ref, pooled_runs, judged[0]["meta"], len(refdirs), args.plot)
        except PoolError as e:
            print("pool.py: %s" % e, file=sys.stderr)
            return 1
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"refdirs": refdirs, "other_testbeds_passed_over": other,
                       "judged": jdirs, "boot": args.boot,
                       "seed": args.seed, "reference": ref, "per_dir": per_dir,
                       "pooled": pooled}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
