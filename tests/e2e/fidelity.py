#!/usr/bin/python3
"""The stage-B loss models against the kept e2e runs, offline
(docs/fidelity.md: the rule, and the verdict this prints).

    fidelity.py [--build DIR] [--results DIR] [--json | --check | --write]
                [--drain daemon|measured|learned]

Measured: every undisturbed, completed fixed-rate transfer of the main
sweeps of the first host's kept runs, doctables.FIDELITY_REF and
FIDELITY_JUDGED (48 per rate and k at k = 1..3): mean first-round loss
and mean T per (k, rate). Predicted: rxbneckctl model at each judged
run's daemon inputs at its --follow starts, per loss model ('queue', the
bulk queue; 'spread', the fluid queue with a spread drain), with burst
rounds and the daemon's measured loss episode, the median over the nine
judged runs at each swept rate.

A model passes when, at every k = 1..3, predicted / measured first-round
loss lies in [LOSS_LO, LOSS_HI] wherever the measured loss is at least
LOSS_MIN, and T_model / T_measured lies within 1 +- T_TOL at every rate.
Exit 0 whether or not a model passes (the verdict is printed), 1 when the
runs or rxbneckctl cannot be read, 2 on usage.

--drain learned (docs/fidelity.md §5): the capacity the daemon's
[model] capacity = drain would have had at each --follow start, the
saturated drain learned by daemon/model/drain.c's rule (drainlearn.py)
from the transfers of the run that ended before it, the cost's capacity
where none was usable; the run's median over its starts.

The tables and verdicts docs/fidelity.md quotes sit between the lines
    <!-- table fidelity: tests/e2e/fidelity.py -->           (--drain daemon)
    <!-- table fidelity-learned: tests/e2e/fidelity.py -->   (--drain learned)
    <!-- end table -->
--check exits 1, with a diff, when they are not what the kept runs give;
--write puts them there.
"""
import argparse
import difflib
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the results
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import analyze  # noqa: E402
import doctables  # noqa: E402
import drainlearn  # noqa: E402

SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
DOC = os.path.join(SRC, "docs", "fidelity.md")
BEGIN = "<!-- table fidelity: tests/e2e/fidelity.py -->"
BEGINS = {"daemon": BEGIN, "learned": "<!-- table fidelity-learned: tests/e2e/fidelity.py -->"}
END = "<!-- end table -->"
KS = (1, 2, 3)
MODELS = ("queue", "spread")
# The rule (docs/fidelity.md §2), fixed before the evaluation.
LOSS_MIN = 0.005
LOSS_LO, LOSS_HI = 0.5, 2.0
T_TOL = 0.15
# The sweep's rates lie on a 50 Mb/s grid from 0.1 to 10 Gb/s: 199 points
# put every one of them on a point the solver evaluates.
POINTS = 199
MIN_RATE_BPS = 100e6
# --drain learned: the scaled inputs' capacity against the one wanted
# (capacity.c's mu_for() meets it to 1e-6).
CAP_TOL = 1e-6


class Failure(Exception):
    pass


def load_runs(results):
    # The first host's runs, on an earlier kernel build (docs/fidelity.md §2).
    names = sorted(set(doctables.FIDELITY_REF + doctables.FIDELITY_JUDGED))
    runs = {}
    for d in names:
        try:
            with open(os.path.join(results, d, "results.json")) as f:
                runs[d] = json.load(f)
        except (OSError, ValueError) as e:
            raise Failure("%s: %s" % (d, e))
    if not runs:
        raise Failure("no kept runs in %s" % results)
    return runs


def measured(runs):
    """{(k, rate): {loss, time_s, n, lossy}} over every kept run."""
    acc = {}
    for r in runs.values():
        for u in r["runs"]:
            if (u["mode"] != "fixed" or u["tag"] != "main" or u["disturbed"]
                    or not u["ok"] or u["k"] not in KS):
                continue
            acc.setdefault((u["k"], u["rate_req_bps"]), []).append(u)
    out = {}
    for key, us in acc.items():
        ls = [u["loss_first_round"] for u in us]
        out[key] = {"n": len(us), "lossy": sum(1 for x in ls if x > 0),
                    "loss": sum(ls) / len(ls),
                    "time_s": sum(u["transfer_time_s"] for u in us) / len(us)}
    return out


def run_inputs(res, k, drain):
    """The daemon's stage-B inputs at a run's --follow starts, with the
    spread of its drain: the median rate_rel_sd over those transfers.
    drain "measured": mu scaled so that the model's capacity is the
    run's own mean drain over its lossy first rounds (analyze.py's
    diagnosis), a diagnosis after the verdict, not part of the rule."""
    dv = dict(res["per_k"][str(k)]["daemon_inputs_at_follow"])
    if drain == "measured":
        dg = res["per_k"][str(k)]["diagnosis"]
        got = (dg.get("drain_bps_lossy_runs") or {}).get("mean")
        if not got or not dg.get("model_capacity_bps"):
            raise Failure("k=%d: no measured drain in the run's diagnosis" % k)
        dv["mu_net_per_s"] *= got / dg["model_capacity_bps"]
        dv["mu_net_full_per_s"] = None
    sds = [u["daemon_before"].get("rate_rel_sd") for u in follow_starts(res, k)]
    dv["rate_rel_sd"] = analyze.median(sds)
    return dv


def follow_starts(res, k):
    """The undisturbed --follow transfers at k with the daemon's snapshot
    before them: the starts whose inputs the prediction takes."""
    return [u for u in res["runs"] if u["k"] == k and u["mode"] in ("follow", "follow-nopause")
            and not u["disturbed"] and u.get("daemon_before")]


def tagged_pps(cap_bps, irq_ns):
    """The tagged customer's rate x N (packets / s) behind a stage capacity
    (bits / s): capacity = x / (1 + x irq) (daemon/model/capacity.c)."""
    c = cap_bps / drainlearn.PKT_BITS
    irq = irq_ns * 1e-9 if irq_ns and irq_ns > 0 else 0.0
    return c / (1 - c * irq) if c * irq < 0.5 else None


def learned_inputs(ctl, res, k, dv):
    """docs/fidelity.md §5.1: dv with mu_net (and mu_full) scaled as
    capacity_calibrate() scales them, to the median over the run's --follow
    starts of the capacity the drain rule gives before each (the cost's
    where it gives none usable); and what it was, for the report. The
    cost's capacity is the stage's at the full queue's rate (mu_full where
    it is set: capacity_calibrate()'s reference), at §2's inputs."""
    cost_bps = solve(ctl, dv, res["meta"], "queue")["capacity_full_bps"]
    irq = dv.get("irq_ns_per_pkt")
    x_cost = tagged_pps(cost_bps, irq)
    starts = follow_starts(res, k)
    got = drainlearn.learned(res["runs"], [(u["t_start_mono"], drainlearn.transfer_load(u))
                                           for u in starts])
    caps, used, whys = [], 0, []
    for g in got:
        cap = cost_bps
        if g["usable"]:
            bps = g["drain_pps"] * drainlearn.PKT_BITS
            x = tagged_pps(bps, irq)
            f = x / x_cost if x and x_cost else None
            if f and drainlearn.CAPACITY_MIN_SCALE <= f <= drainlearn.CAPACITY_MAX_SCALE:
                cap, used = bps, used + 1
            else:
                whys.append("scale %s" % f)
        else:
            whys.append(g["why"])
        caps.append(cap)
    if not caps:
        raise Failure("k=%d: no --follow start to take the capacity at" % k)
    target = analyze.median(caps)
    x = tagged_pps(target, irq)
    if not x or not x_cost:
        raise Failure("k=%d: capacity %.4g b/s cannot be met with irq %s ns" % (k, target, irq))
    f = x / x_cost
    out = dict(dv)
    out["mu_net_per_s"] = dv["mu_net_per_s"] * f
    if dv.get("mu_net_full_per_s"):
        out["mu_net_full_per_s"] = min(dv["mu_net_full_per_s"] * f, out["mu_net_per_s"])
    dg = res["per_k"][str(k)]["diagnosis"]
    info = {"starts": len(starts), "drain_used": used, "capacity_bps": target,
            "capacity_cost_bps": cost_bps, "scale": f,
            "drain_measured_bps": (dg.get("drain_bps_lossy_runs") or {}).get("mean"),
            "drain_epochs": [g["epochs"] for g in got],
            "not_used": sorted(set(whys))}
    return out, info


def solve(ctl, dv, meta, model, extra=()):
    args = [ctl, "model", "--json", "--cpu-bound", "%.6g" % dv["cpu_bound"],
            "--io-bound", "0", "--mu-net-per-s", "%.9g" % dv["mu_net_per_s"],
            "--queue-pkts", "%d" % round(dv["queue_pkts"]),
            "--batch", "%d" % max(1, round(dv["pkts_per_wakeup"])),
            "--batch-rule", "partial", "--payload", "1472",
            "--file-bytes", str(int(analyze.parse_size(meta["file_size"]))),
            "--one-way-delay-ms", "%g" % meta["one_way_delay_ms"],
            "--line-rate-bps", "%d" % meta["line_rate_bps"],
            "--min-rate-bps", "%d" % MIN_RATE_BPS, "--points", str(POINTS),
            "--rounds", "burst", "--loss-model", model]
    if dv.get("model_loss_episode_pkts"):
        args += ["--loss-episode-pkts", "%.6g" % max(1.0, dv["model_loss_episode_pkts"])]
    if dv.get("irq_ns_per_pkt"):
        args += ["--irq-ns-per-pkt", "%.6g" % dv["irq_ns_per_pkt"]]
    full = dv.get("mu_net_full_per_s")
    if full and full < dv["mu_net_per_s"] * (1 - 1e-9):
        args += ["--mu-net-full-per-s", "%.9g" % full]
    if model == "spread" and dv.get("rate_rel_sd"):
        args += ["--rate-rel-sd", "%.6g" % dv["rate_rel_sd"]]
    args += list(extra)  # later options override earlier ones
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise Failure("%s: %s" % (" ".join(args), out.stderr.strip()))
    return json.loads(out.stdout)


def at(curve, rate):
    return min(curve, key=lambda c: abs(c["rate_bps"] - rate))


def predicted(ctl, runs, rates, drain):
    """{model: {(k, rate): {loss, first_loss, time_s}}}, medians over the
    judged runs; and the inputs used, per run and k."""
    per = {m: {} for m in MODELS}
    inputs = {}
    for name in doctables.FIDELITY_JUDGED:
        res = runs[name]
        for k in KS:
            dv = run_inputs(res, k, "daemon" if drain == "learned" else drain)
            info = None
            if drain == "learned":
                dv, info = learned_inputs(ctl, res, k, dv)
            inputs["%s k=%d" % (name, k)] = {
                x: dv.get(x) for x in ("cpu_bound", "mu_net_per_s", "pkts_per_wakeup",
                                       "queue_pkts", "model_loss_episode_pkts",
                                       "rate_rel_sd")}
            if info:
                inputs["%s k=%d" % (name, k)]["capacity"] = info
            for m in MODELS:
                j = solve(ctl, dv, res["meta"], m)
                if info and not abs(j["capacity_full_bps"] / info["capacity_bps"] - 1) <= CAP_TOL:
                    raise Failure("%s k=%d: capacity %.6g b/s after the scaling, %.6g wanted"
                                  % (name, k, j["capacity_full_bps"], info["capacity_bps"]))
                for rate in rates:
                    p = at(j["curve"], rate)
                    per[m].setdefault((k, rate), []).append(p)
    med = {m: {key: {f: analyze.median([p[f] for p in ps])
                     for f in ("loss", "first_loss", "time_s")}
                for key, ps in per[m].items()} for m in MODELS}
    return med, inputs


def judge(meas, pred):
    """Rows of the table and each model's verdict."""
    rows, misses = [], {m: [] for m in MODELS}
    for (k, rate) in sorted(meas):
        me = meas[(k, rate)]
        row = {"k": k, "rate_bps": rate, "measured": me}
        for m in MODELS:
            p = pred[m][(k, rate)]
            loss = p["loss"] if m == "queue" else p["first_loss"]
            lr = loss / me["loss"] if me["loss"] > 0 else None
            tr = p["time_s"] / me["time_s"]
            judged = me["loss"] >= LOSS_MIN
            row[m] = dict(p, loss_judged=loss, loss_ratio=lr, time_ratio=tr,
                          loss_ok=(not judged) or (LOSS_LO <= lr <= LOSS_HI),
                          time_ok=abs(tr - 1) <= T_TOL, loss_is_judged=judged)
            if not row[m]["loss_ok"]:
                misses[m].append("k=%d %.2f Gb/s loss x%.2f" % (k, rate / 1e9, lr))
            if not row[m]["time_ok"]:
                misses[m].append("k=%d %.2f Gb/s T x%.3f" % (k, rate / 1e9, tr))
        rows.append(row)
    return rows, {m: {"passes": not misses[m], "misses": misses[m]} for m in MODELS}


def fmt_ratio(x, judged):
    if x is None:
        return "–"
    return ("**%.2f**" if judged else "%.2f") % x


def capacity_lines(inputs):
    """Per k: where the learned capacity stood (docs/fidelity.md §5.1)."""
    out = []
    for k in KS:
        cs = [v["capacity"] for key, v in sorted(inputs.items())
              if key.endswith(" k=%d" % k) and v.get("capacity")]
        if not cs:
            continue
        med = lambda f: analyze.median([c[f] for c in cs if c.get(f)])
        out.append("k=%d: the drain stood at %d of %d --follow starts; capacity %.2f Gb/s "
                   "(median of the runs), the cost's %.2f, the measured drain over the lossy "
                   "first rounds %.2f (learned / measured %.3f, range %.3f-%.3f)" % (
                       k, sum(c["drain_used"] for c in cs), sum(c["starts"] for c in cs),
                       med("capacity_bps") / 1e9, med("capacity_cost_bps") / 1e9,
                       med("drain_measured_bps") / 1e9,
                       med("capacity_bps") / med("drain_measured_bps"),
                       min(c["capacity_bps"] / c["drain_measured_bps"] for c in cs),
                       max(c["capacity_bps"] / c["drain_measured_bps"] for c in cs)))
    return out


def table(rows, verdict, extra=()):
    out = ["| k | rate Gb/s | measured loss (lossy of n) | measured T s "
           "| queue: l, ratio | queue: first blast, ratio | queue: T ratio "
           "| spread: first blast, ratio | spread: T ratio |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        me, q, s = r["measured"], r["queue"], r["spread"]
        j = q["loss_is_judged"]
        fq = q["first_loss"] / me["loss"] if me["loss"] > 0 else None
        out.append("| %d | %.2f | %.4f (%d of %d) | %.3f | %.4f, %s | %.4f, %s | %.3f | %.4f, %s | %.3f |" % (
            r["k"], r["rate_bps"] / 1e9, me["loss"], me["lossy"], me["n"], me["time_s"],
            q["loss"], fmt_ratio(q["loss_ratio"], j), q["first_loss"], fmt_ratio(fq, False),
            q["time_ratio"], s["first_loss"], fmt_ratio(s["loss_ratio"], j), s["time_ratio"]))
    out.append("")
    out.append("Ratios in bold are judged (measured loss >= %.1f %%: within [%g, %g]); "
               "T ratios at every rate within 1 +- %g." % (LOSS_MIN * 100, LOSS_LO, LOSS_HI, T_TOL))
    out.append("")
    for m in MODELS:
        v = verdict[m]
        out.append("%-6s %s%s" % (m, "passes" if v["passes"] else "fails",
                                 "" if v["passes"] else ": " + "; ".join(v["misses"])))
    if extra:
        out.append("")
        out += extra
    return "\n".join(out)


def doc_block(text, begin=BEGIN):
    """(start, end) line indices of the block's body in the document."""
    lines = text.split("\n")
    try:
        i = lines.index(begin)
        j = lines.index(END, i)
    except ValueError:
        raise Failure("%s: no %r ... %r block" % (DOC, begin, END))
    return lines, i + 1, j


def check_or_write(doc, made, write, begin=BEGIN):
    try:
        with open(doc) as f:
            text = f.read()
    except OSError as e:
        raise Failure("%s: %s" % (doc, e.strerror))
    lines, i, j = doc_block(text, begin)
    body = [""] + made.split("\n") + [""]
    if write:
        with open(doc, "w") as f:
            f.write("\n".join(lines[:i] + body + lines[j:]))
        return 0
    if lines[i:j] == body:
        return 0
    sys.stderr.write("fidelity.py: %s: table %s is not what the kept runs give:\n"
                     % (doc, begin.split()[2].rstrip(":")))
    sys.stderr.writelines(l + "\n" for l in difflib.unified_diff(
        lines[i:j], body, "document", "kept runs", lineterm=""))
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"),
                    help="the build directory holding rxbneckctl (default build/)")
    ap.add_argument("--results", default=os.path.join(HERE, "results"),
                    help="the kept runs (default tests/e2e/results)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--check", action="store_true",
                    help="compare the table with docs/fidelity.md's; exit 1 when they differ")
    ap.add_argument("--write", action="store_true", help="put the table into docs/fidelity.md")
    ap.add_argument("--doc", default=DOC, help="the document (default docs/fidelity.md)")
    ap.add_argument("--drain", choices=("daemon", "measured", "learned"), default="daemon",
                    help="the capacity both models use: the daemon's with capacity = cost "
                    "(§2's rule), the drain it would have learned before each --follow start "
                    "(§5's rule), or each run's measured drain over its lossy first rounds "
                    "(a diagnosis)")
    a = ap.parse_args()
    if (a.check or a.write) and (a.json or a.drain not in BEGINS or (a.check and a.write)):
        ap.error("--check and --write take a rule's run alone (no --json; --drain daemon "
                 "or learned)")
    ctl = os.path.join(a.build, "rxbneckctl")
    try:
        if not os.access(ctl, os.X_OK):
            raise Failure("no %s: build first (make)" % ctl)
        runs = load_runs(a.results)
        missing = [d for d in doctables.FIDELITY_JUDGED if d not in runs]
        if missing:
            raise Failure("judged runs missing from %s: %s" % (a.results, " ".join(missing)))
        meas = measured(runs)
        rates = sorted({rate for (_, rate) in meas})
        pred, inputs = predicted(ctl, runs, rates, a.drain)
        rows, verdict = judge(meas, pred)
        if a.check or a.write:
            return check_or_write(a.doc, table(rows, verdict, capacity_lines(inputs)), a.write,
                                  BEGINS[a.drain])
    except (Failure, subprocess.TimeoutExpired, OSError) as e:
        print("fidelity.py: %s" % e, file=sys.stderr)
        return 1
    if a.json:
        json.dump({"drain": a.drain, "runs_measured": sorted(runs),
                   "runs_predicted": doctables.FIDELITY_JUDGED,
                   "rule": {"loss_min": LOSS_MIN, "loss_lo": LOSS_LO, "loss_hi": LOSS_HI,
                            "time_tol": T_TOL},
                   "inputs": inputs, "rows": rows, "verdict": verdict},
                  sys.stdout, indent=1, default=str)
        print()
    else:
        print("Stage-B loss models against %d kept runs (measured) and the inputs of %d "
              "judged runs (predicted, median); capacity: %s\n"
              % (len(runs), len(doctables.FIDELITY_JUDGED),
                 {"daemon": "the daemon's (§2's rule)",
                  "learned": "the drain learned before each --follow start (§5's rule)",
                  "measured": "each run's measured drain (a diagnosis, not the rule)"}[a.drain]))
        print(table(rows, verdict, capacity_lines(inputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
