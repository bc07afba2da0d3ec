#!/usr/bin/env python3
"""rxbneck-shape's experiment (docs/shape.md §6): tables, claims and a plot.

    python3 tests/e2e/shape_analyze.py OUTDIR [--export DIR]

Reads OUTDIR/runs.jsonl (tests/e2e/shape.sh), OUTDIR/shape/*.jsonl (the
shaper's status every 0.1 s) and OUTDIR/meta.json; writes OUTDIR/shape.json
(every number below), OUTDIR/shape.md (the tables) and OUTDIR/shape.png
(advice and shaped rate over time, one shaped run per k). --export DIR
copies those three and a compact runs.jsonl and shape/status.jsonl (the
raw sender/receiver JSON and the shaper's status reduced to the fields
used here: the analysis of DIR gives the same numbers) to DIR.

Per k, over the undisturbed runs (docs/e2e.md §1):
  T         transfer time of blast / shaped / follow (mean, 99 % interval)
  loss1     first-round loss
  claim 1   T_shaped <= 0.75 T_blast where the blast loses > 5 % (round 1)
  claim 2   T_shaped <= 1.10 T_follow
  claim 3   the shaped first round's arrival rate at the receiver
            (rxbneck-recv's round-1 receive rate x sent / received) within
            5 % of the advice in force over the round (time-weighted)
  claim 4   shaped TCP goodput (iperf3 -P 4, its 1 s intervals after the
            first 2 s) <= 1.05 x the advice over them, and >= 0.90 x it
            where unshaped TCP exceeds the advice by more than 10 %
"""
import json
import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analyze import load_jsonl, stats  # noqa: E402

CLAIM1_MAX, CLAIM1_MIN_LOSS = 0.75, 0.05
CLAIM2_MAX = 1.10
CLAIM3_TOL = 0.05
CLAIM4_MAX, CLAIM4_MIN, CLAIM4_BINDS = 1.05, 0.90, 1.10
TCP_SKIP_S = 2.0


def status_samples(outdir):
    """Every status line of every shaped run: (mono_s, receiver name -> r)."""
    out = []
    d = os.path.join(outdir, "shape")
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not f.endswith(".jsonl"):
            continue
        for s in load_jsonl(os.path.join(d, f)):
            if s.get("receivers"):
                out.append((s["mono_s"], {r["name"]: r for r in s["receivers"]}, f))
    out.sort(key=lambda x: x[0])
    return out


def advice_over(samples, name, t0, t1):
    """Time-weighted mean of the rate in force for receiver @name in [t0, t1]."""
    pts = [(t, rs[name]["in_force"].get("rate_bps")) for t, rs, _ in samples
           if name in rs and rs[name]["in_force"]["mode"] in ("advice", "hold", "fallback")]
    if not pts:
        return None
    acc = dur = 0.0
    for i, (t, r) in enumerate(pts):
        nxt = pts[i + 1][0] if i + 1 < len(pts) else t1
        a, b = max(t, t0), min(nxt, t1)
        if b > a and r:
            acc += r * (b - a)
            dur += b - a
    # The value in force at t0 when no sample falls inside.
    if dur == 0:
        before = [r for t, r in pts if t <= t0]
        return before[-1] if before else None
    return acc / dur


def rbudp_row(rec, samples):
    s, r = rec.get("send") or {}, rec.get("recv") or {}
    if not s.get("ok") or not s.get("per_round"):
        return None
    r1 = s["per_round"][0]
    row = {"t": s["transfer_time_s"], "rounds": s["rounds"],
           "loss1": r1["pkts_lost"] / max(1, r1["pkts_sent"]),
           "send_rate1_bps": r1.get("rate_bps")}
    rr = (r.get("per_round") or [None])[0]
    if rr and rr.get("rx_rate_bps") and rr.get("pkts_received"):
        row["arrive_rate1_bps"] = rr["rx_rate_bps"] * rr["pkts_sent"] / rr["pkts_received"]
    if rec["tag"] == "shaped":
        t0 = s["t0_mono_ns"] / 1e9 + r1["start_s"]
        row["advice1_bps"] = advice_over(samples, "rbudp", t0, t0 + r1["blast_time_s"])
        row["backlogged"] = backlogged(samples, t0, t0 + r1["blast_time_s"])
    return row


def backlogged(samples, t0, t1):
    """The class's payload rate against the advice in the status intervals
    inside [t0, t1] in which every read of the counters found the queue
    non-empty: where the class, not the sender, set the pace. A diagnosis
    (docs/shape.md §6), not a claim."""
    pts = [(t, rs["rbudp"]) for t, rs, _ in samples if t0 <= t <= t1 and "rbudp" in rs]
    out = []
    for (ta, a), (tb, b) in zip(pts, pts[1:]):
        ca, cb = a.get("class_stats"), b.get("class_stats")
        if not ca or not cb or "polls" not in cb or not b["in_force"].get("rate_bps"):
            continue
        polls = cb["polls"] - ca["polls"]
        if polls < 3 or cb["busy_polls"] - ca["busy_polls"] < polls:
            continue
        h = b["in_force"]["header_bytes_per_pkt"]
        pay = ((cb["bytes"] - ca["bytes"]) - h * (cb["packets"] - ca["packets"])) * 8 / (tb - ta)
        out.append(pay / b["in_force"]["rate_bps"])
    return out


def tcp_row(rec, samples):
    if not rec.get("ok"):
        return None
    ivs = [i for i in rec.get("intervals", []) if i[0] >= TCP_SKIP_S]
    row = {"goodput_bps": rec["goodput_bps"], "retransmits": rec.get("retransmits")}
    if ivs:
        row["steady_bps"] = sum((b - a) * g for a, b, g in ivs) / sum(b - a for a, b, _ in ivs)
    if rec["mode"].endswith("-shaped"):
        # iperf3's clock starts about when the run does.
        row["advice_bps"] = advice_over(samples, "tcp", rec["t_start_mono"] + TCP_SKIP_S,
                                        rec["t_end_mono"])
    return row


def mean_of(rows, key):
    return stats([r.get(key) for r in rows if r])


def per_k(runs, samples, k):
    ok = [x for x in runs if x["k"] == k and not x.get("disturbed")]
    out = {"k": k}
    for tag, sel in (("blast", lambda x: x["tag"] == "blast"),
                     ("shaped", lambda x: x["tag"] == "shaped"),
                     ("follow", lambda x: x["mode"] == "follow" and x["tag"] == "main")):
        rows = [rbudp_row(x, samples) for x in ok if sel(x)]
        rows = [r for r in rows if r]
        out[tag] = {"n": len(rows), "T": mean_of(rows, "t"), "loss1": mean_of(rows, "loss1"),
                    "rounds": mean_of(rows, "rounds"), "rows": rows}
    sh = out["shaped"]["rows"]
    ratios = [r["arrive_rate1_bps"] / r["advice1_bps"] for r in sh
              if r.get("arrive_rate1_bps") and r.get("advice1_bps")]
    out["shaped"]["rate_ratio"] = stats(ratios)
    out["shaped"]["backlogged_ratio"] = stats([x for r in sh for x in r.get("backlogged", [])])
    for m in ("tcp4", "tcp4-shaped", "tcp4-delay", "tcp4-delay-shaped"):
        rows = [tcp_row(x, samples) for x in ok if x["mode"] == m]
        rows = [r for r in rows if r]
        out[m] = {"n": len(rows), "steady": mean_of(rows, "steady_bps"),
                  "goodput": mean_of(rows, "goodput_bps"), "advice": mean_of(rows, "advice_bps"),
                  "rows": rows}
    out["claims"] = claims(out)
    return out


def claims(p):
    c = {}
    tb, ts, tf = (p[m]["T"]["mean"] for m in ("blast", "shaped", "follow"))
    lb = p["blast"]["loss1"]["mean"]
    if tb and ts:
        applies = lb is not None and lb > CLAIM1_MIN_LOSS
        c["1"] = {"ratio": ts / tb, "applies": applies,
                  "holds": (ts / tb <= CLAIM1_MAX) if applies else None}
    if ts and tf:
        c["2"] = {"ratio": ts / tf, "holds": ts / tf <= CLAIM2_MAX}
    rr = p["shaped"]["rate_ratio"]
    if rr["n"]:
        c["3"] = {"ratio": rr["mean"], "min": rr["min"], "max": rr["max"],
                  "holds": abs(rr["mean"] - 1) <= CLAIM3_TOL}
    for shaped, plain in (("tcp4-shaped", "tcp4"), ("tcp4-delay-shaped", "tcp4-delay")):
        s, a, u = p[shaped]["steady"]["mean"], p[shaped]["advice"]["mean"], p[plain]["steady"]["mean"]
        if s and a:
            binds = u is not None and u > CLAIM4_BINDS * a
            held = s <= CLAIM4_MAX * a and (not binds or s >= CLAIM4_MIN * a)
            c["4 " + shaped] = {"ratio": s / a, "unshaped_ratio": u / a if u else None,
                                "binds": binds, "holds": held}
    return c


def fmt(x, f="%.3f", none="–"):
    return none if x is None or (isinstance(x, float) and not math.isfinite(x)) else f % x


def ci(s, f="%.3f"):
    if not s or s["mean"] is None:
        return "–"
    if s["ci99"]:
        return "%s [%s, %s]" % (fmt(s["mean"], f), fmt(s["ci99"][0], f), fmt(s["ci99"][1], f))
    return fmt(s["mean"], f)


def verdict(c):
    if c is None:
        return "–"
    if c.get("applies") is False:
        return "n/a"
    return "holds" if c["holds"] else "**fails**"


def table(res):
    L = ["## RBUDP, fixed 10 Gb/s sender: transfer time (s), mean [99 % interval]", "",
         "| k | blast T | blast loss (round 1) | shaped T | shaped loss | follow T | follow loss "
         "| claim 1: shaped / blast (≤ 0.75) | claim 2: shaped / follow (≤ 1.10) | n |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for p in res["per_k"]:
        c = p["claims"]
        L.append("| %d | %s | %s | %s | %s | %s | %s | %s %s | %s %s | %d/%d/%d |" % (
            p["k"], ci(p["blast"]["T"]), fmt(p["blast"]["loss1"]["mean"], "%.3f"),
            ci(p["shaped"]["T"]), fmt(p["shaped"]["loss1"]["mean"], "%.4f"),
            ci(p["follow"]["T"]), fmt(p["follow"]["loss1"]["mean"], "%.4f"),
            fmt((c.get("1") or {}).get("ratio")), verdict(c.get("1")),
            fmt((c.get("2") or {}).get("ratio")), verdict(c.get("2")),
            p["blast"]["n"], p["shaped"]["n"], p["follow"]["n"]))
    L += ["", "## Claim 3: the shaped first round against the advice", "",
          "| k | advice over round 1 (Gb/s) | arrived at the receiver (Gb/s) | sender's rate (Gb/s) "
          "| arrived / advice: mean (min–max) | claim 3 (±5 %) "
          "| diagnosis: class / advice where its queue never emptied, mean (n) |",
          "|---|---|---|---|---|---|---|"]
    for p in res["per_k"]:
        rows = p["shaped"]["rows"]
        c = p["claims"].get("3")
        bl = p["shaped"]["backlogged_ratio"]
        L.append("| %d | %s | %s | %s | %s (%s–%s) | %s | %s (%d) |" % (
            p["k"], fmt(stats([r.get("advice1_bps") for r in rows])["mean"] and
                        stats([r.get("advice1_bps") for r in rows])["mean"] / 1e9),
            fmt(stats([r.get("arrive_rate1_bps") for r in rows])["mean"] and
                stats([r.get("arrive_rate1_bps") for r in rows])["mean"] / 1e9),
            fmt(stats([r.get("send_rate1_bps") for r in rows])["mean"] and
                stats([r.get("send_rate1_bps") for r in rows])["mean"] / 1e9),
            fmt((c or {}).get("ratio")), fmt((c or {}).get("min")), fmt((c or {}).get("max")),
            verdict(c), fmt(bl["mean"]), bl["n"]))
    L += ["", "## Claim 4: iperf3 -P 4 TCP, goodput after the first 2 s (Gb/s)", "",
          "| k | path | unshaped | shaped | advice | shaped / advice | unshaped / advice | claim 4 |",
          "|---|---|---|---|---|---|---|---|"]
    for p in res["per_k"]:
        for shaped, plain, path in (("tcp4-shaped", "tcp4", "no added delay"),
                                    ("tcp4-delay-shaped", "tcp4-delay", "delay line")):
            c = p["claims"].get("4 " + shaped)
            if not p[shaped]["n"]:
                continue
            g = lambda s: s["mean"] / 1e9 if s["mean"] else None  # noqa: E731
            L.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                p["k"], path, fmt(g(p[plain]["steady"])), fmt(g(p[shaped]["steady"])),
                fmt(g(p[shaped]["advice"])), fmt((c or {}).get("ratio")),
                fmt((c or {}).get("unshaped_ratio")), verdict(c)))
    return "\n".join(L) + "\n"


def plot(res, samples, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot", file=sys.stderr)
        return False
    ks = [p for p in res["per_k"] if p["shaped"].get("first_run")]
    if not ks:
        return False
    fig, axes = plt.subplots(len(ks), 1, figsize=(8, 2.3 * len(ks)), squeeze=False)
    for ax, p in zip(axes[:, 0], ks):
        run = p["shaped"]["first_run"]
        t0 = run["r1_start"]
        lo, hi = t0 - 0.3, run["r1_end"] + 0.3
        pts = [(t, rs["rbudp"]) for t, rs, _ in samples if lo <= t <= hi and "rbudp" in rs]
        if len(pts) < 2:
            continue
        ax.axvspan(0, run["r1_end"] - t0, color="0.92", label="first round")
        ax.step([t - t0 for t, _ in pts], [(r["in_force"]["rate_bps"] or 0) / 1e9 for _, r in pts],
                where="post", label="advice in force", color="tab:blue")
        xs, ys = [], []
        for (ta, a), (tb, b) in zip(pts, pts[1:]):
            ca, cb = a.get("class_stats"), b.get("class_stats")
            if not ca or not cb or tb <= ta:
                continue
            h = b["in_force"]["header_bytes_per_pkt"]
            pay = (cb["bytes"] - ca["bytes"]) - h * (cb["packets"] - ca["packets"])
            xs += [ta - t0, tb - t0]
            ys += [pay * 8 / (tb - ta) / 1e9] * 2
        ax.plot(xs, ys, color="tab:orange", lw=1.2, label="shaped: the class's payload rate, per 0.1 s")
        if run.get("arrive_rate1_bps"):
            ax.hlines(run["arrive_rate1_bps"] / 1e9, 0, run["r1_end"] - t0, colors="tab:green",
                      linestyles="--", label="first round, as the receiver measured it")
        ax.set_xlim(lo - t0, hi - t0)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("Gb/s")
        ax.set_title("k = %d" % p["k"], fontsize=9, loc="left")
    axes[0, 0].legend(fontsize=7, loc="lower center", ncol=2)
    axes[-1, 0].set_xlabel("s since the first round started")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def compact(rec):
    """A runs.jsonl record without the raw JSON the tables do not use."""
    out = {k: v for k, v in rec.items() if k not in ("send", "recv", "intervals")}
    s, r = rec.get("send") or {}, rec.get("recv") or {}
    if s:
        out["send"] = {k: s.get(k) for k in ("ok", "transfer_time_s", "rounds", "t0_mono_ns",
                                            "achieved_rate_bps", "error")}
        out["send"]["per_round"] = [{k: x.get(k) for k in ("pkts_sent", "pkts_lost", "start_s",
                                                           "blast_time_s", "rate_bps")}
                                    for x in s.get("per_round") or []]
    if r:
        out["recv"] = {"per_round": [{k: x.get(k) for k in ("pkts_sent", "pkts_received",
                                                            "rx_rate_bps")}
                                     for x in (r.get("per_round") or [])[:1]]}
    if "intervals" in rec:
        out["intervals"] = rec["intervals"]
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    runs = load_jsonl(os.path.join(outdir, "runs.jsonl"))
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    samples = status_samples(outdir)
    res = {"meta": meta, "per_k": []}
    for k in sorted({x["k"] for x in runs}):
        p = per_k(runs, samples, k)
        first = next((x for x in runs if x["k"] == k and x["tag"] == "shaped"
                      and not x.get("disturbed") and (x.get("send") or {}).get("ok")), None)
        if first:
            s = first["send"]
            r1 = s["per_round"][0]
            row = rbudp_row(first, samples)
            p["shaped"]["first_run"] = {
                "t_start": s["t0_mono_ns"] / 1e9, "t_end": first["t_end_mono"],
                "r1_start": s["t0_mono_ns"] / 1e9 + r1["start_s"],
                "r1_end": s["t0_mono_ns"] / 1e9 + r1["start_s"] + r1["blast_time_s"],
                "arrive_rate1_bps": row.get("arrive_rate1_bps")}
        res["per_k"].append(p)
    md = table(res)
    open(os.path.join(outdir, "shape.md"), "w").write(md)
    json.dump(res, open(os.path.join(outdir, "shape.json"), "w"), indent=1)
    have_plot = plot(res, samples, os.path.join(outdir, "shape.png"))
    print(md)
    if "--export" in sys.argv:
        dest = sys.argv[sys.argv.index("--export") + 1]
        os.makedirs(dest, exist_ok=True)
        for f in ("shape.md", "shape.json", "meta.json") + (("shape.png",) if have_plot else ()):
            shutil.copy(os.path.join(outdir, f), dest)
        with open(os.path.join(dest, "runs.jsonl"), "w") as f:
            for rec in runs:
                f.write(json.dumps(compact(rec)) + "\n")
        # The shaper's status, reduced to what claim 3 and the plot use.
        os.makedirs(os.path.join(dest, "shape"), exist_ok=True)
        with open(os.path.join(dest, "shape", "status.jsonl"), "w") as f:
            for t, rs, _ in samples:
                f.write(json.dumps({"mono_s": t, "receivers": [
                    {"name": n, "in_force": {k: r["in_force"][k] for k in
                                             ("mode", "rate_bps", "header_bytes_per_pkt")},
                     "class_stats": r["class_stats"] and {
                         k: r["class_stats"][k] for k in ("bytes", "packets", "polls",
                                                          "busy_polls")
                         if k in r["class_stats"]}}
                    for n, r in rs.items()]}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
