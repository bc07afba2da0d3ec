#!/usr/bin/python3
"""The receive-buffer experiment's tables, plot and verdicts (docs/buffer.md §5-6).

    buffer_analyze.py OUTDIR [--plot FILE]

Reads OUTDIR/runs.jsonl (tests/e2e/buffer.sh), leaves out the runs marked
disturbed and those whose sender or receiver failed, and per point (k, N)
and policy computes: the drop ratio (the socket's drops over the datagrams
sent, summed over the point's runs), the mean goodput, the mean of the
runs' mean buffer (sk_rcvbuf sampled every 100 ms by the receiver), the
largest peak buffer, the mean and peak memory held, and the daemon's CPU
in per cent of one CPU. Writes OUTDIR/table.md, prints it and the verdict
of each claim of docs/buffer.md §5 (exit 0 whatever they say; 1 when the
input is unusable). --include-disturbed keeps the runs marked disturbed
(a second view, written to table-all.md). --plot draws the drop ratio, goodput and mean buffer
against N (needs python3-matplotlib).
"""
import argparse
import json
import os
import sys

POLICIES = ("static", "rrda", "model")


def load(path, disturbed=False):
    runs = []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            s, v = r.get("send") or {}, r.get("recv") or {}
            if (r.get("disturbed") and not disturbed) or not s.get("ok") or not v.get("ok"):
                continue
            runs.append(r)
    return runs


def points(runs):
    """{(k, n): {policy: figures}}"""
    out = {}
    for r in runs:
        key = (r["k"], r["n"])
        p = out.setdefault(key, {}).setdefault(r["policy"], {"runs": []})
        p["runs"].append(r)
    for key, pols in out.items():
        for pol, p in pols.items():
            rs = p["runs"]
            sent = sum(r["send"]["sent_pkts"] for r in rs)
            drops = sum(r["recv"]["drops"] for r in rs)
            wall = [max(1e-9, r["t_end_mono"] - r["t_start_mono"]) for r in rs]
            p.update({
                "n_runs": len(rs),
                "drop_ratio": drops / sent if sent else float("nan"),
                "goodput_bps": sum(r["recv"]["goodput_bps"] for r in rs) / len(rs),
                "offered_bps": sum(r["send"]["offered_bps"] for r in rs) / len(rs),
                "rcvbuf_mean": sum(r["recv"]["rcvbuf_mean"] for r in rs) / len(rs),
                "rcvbuf_peak": max(r["recv"]["rcvbuf_peak"] for r in rs),
                "held_mean": sum(r["recv"]["rmem_mean"] for r in rs) / len(rs),
                "held_peak": max(r["recv"]["rmem_peak"] for r in rs),
                "daemon_cpu_pct": 100.0 * sum(r["daemon_cpu_s"] / w for r, w in zip(rs, wall))
                                  / len(rs),
            })
    return out


def pct(x, digits=2):
    return "-" if x != x else ("%.*f" % (digits, 100.0 * x))


def mb(x):
    return "%.2f" % (x / 1e6)


def table(pts):
    ks = sorted({k for k, _ in pts})
    lines = []
    for k in ks:
        ns = sorted(n for kk, n in pts if kk == k)
        lines.append("**k = %d** (%d CPU hog%s on the receiver's CPU)\n" % (k, k, "" if k == 1 else "s"))
        lines.append("| N | offered Mb/s | drop % static | rrda | model | goodput Mb/s static "
                     "| rrda | model | mean buffer MB static | rrda | model | peak MB rrda | model "
                     "| daemon CPU % static | rrda | model | runs |")
        lines.append("|" + "---:|" * 17)
        for n in ns:
            p = pts[(k, n)]
            g = lambda pol, f: p[pol][f] if pol in p else float("nan")
            row = [str(n), "%.0f" % (g("static", "offered_bps") / 1e6)]
            row += [pct(g(pol, "drop_ratio"), 3) for pol in POLICIES]
            row += ["%.1f" % (g(pol, "goodput_bps") / 1e6) for pol in POLICIES]
            row += [mb(g(pol, "rcvbuf_mean")) for pol in POLICIES]
            row += [mb(g(pol, "rcvbuf_peak")) for pol in ("rrda", "model")]
            row += ["%.2f" % g(pol, "daemon_cpu_pct") for pol in POLICIES]
            row += ["/".join(str(p[pol]["n_runs"]) if pol in p else "0" for pol in POLICIES)]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def verdicts(pts):
    out = []
    for pol in ("rrda", "model"):
        applies, miss = 0, []
        for (k, n), p in sorted(pts.items()):
            if "static" not in p or pol not in p or p["static"]["drop_ratio"] < 0.01:
                continue
            applies += 1
            if p[pol]["drop_ratio"] > p["static"]["drop_ratio"] / 10:
                miss.append("k=%d N=%d: %s %% against static %s %%" % (
                    k, n, pct(p[pol]["drop_ratio"], 3), pct(p["static"]["drop_ratio"], 3)))
        out.append("Claim 1 (%s: drops <= static/10 where static >= 1 %%): %s (holds at %d of %d points)%s"
                   % (pol, "HOLDS" if not miss else "MISSED", applies - len(miss), applies,
                      "" if not miss else "; missed at " + "; ".join(miss)))
    for pol in ("rrda", "model"):
        miss = []
        total = 0
        for (k, n), p in sorted(pts.items()):
            if "static" not in p or pol not in p:
                continue
            total += 1
            if p[pol]["goodput_bps"] < 0.99 * p["static"]["goodput_bps"]:
                miss.append("k=%d N=%d: %.1f against %.1f Mb/s" % (
                    k, n, p[pol]["goodput_bps"] / 1e6, p["static"]["goodput_bps"] / 1e6))
        out.append("Claim 2 (%s: goodput >= static - 1 %%): %s (holds at %d of %d points)%s"
                   % (pol, "HOLDS" if not miss else "MISSED", total - len(miss), total,
                      "" if not miss else "; missed at " + "; ".join(miss)))
    miss, total = [], 0
    for (k, n), p in sorted(pts.items()):
        if "rrda" not in p or "model" not in p:
            continue
        total += 1
        m, r = p["model"], p["rrda"]
        why = []
        if m["drop_ratio"] > r["drop_ratio"] + 0.001:
            why.append("drops %s %% against %s %%" % (pct(m["drop_ratio"], 3), pct(r["drop_ratio"], 3)))
        if m["rcvbuf_mean"] > r["rcvbuf_mean"]:
            why.append("mean buffer %s against %s MB" % (mb(m["rcvbuf_mean"]), mb(r["rcvbuf_mean"])))
        if why:
            miss.append("k=%d N=%d: %s" % (k, n, ", ".join(why)))
    out.append("Claim 3 (model: drops <= rrda + 0.1 pp and mean buffer <= rrda's): %s (holds at %d of %d "
               "points)%s" % ("HOLDS" if not miss else "MISSED", total - len(miss), total,
                             "" if not miss else "; missed at " + "; ".join(miss)))
    for pol in ("rrda", "model"):
        d = [p[pol]["daemon_cpu_pct"] - p["static"]["daemon_cpu_pct"]
             for p in pts.values() if pol in p and "static" in p]
        if d:
            out.append("Overhead (%s): the daemon used %+.2f %% of a CPU against static on "
                       "average (%.2f .. %.2f over the points)"
                       % (pol, sum(d) / len(d), min(d), max(d)))
    return out


def plot(pts, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot %s: no matplotlib (python3-matplotlib)" % path, file=sys.stderr)
        return 1
    ks = sorted({k for k, _ in pts})
    fig, axes = plt.subplots(3, len(ks), figsize=(5 * len(ks), 9), squeeze=False)
    style = {"static": ("tab:gray", "s"), "rrda": ("tab:blue", "o"), "model": ("tab:green", "^")}
    for j, k in enumerate(ks):
        ns = sorted(n for kk, n in pts if kk == k)
        for pol in POLICIES:
            c, m = style[pol]
            x = [n for n in ns if pol in pts[(k, n)]]
            q = [pts[(k, n)][pol] for n in x]
            axes[0][j].plot(x, [max(v["drop_ratio"], 1e-6) for v in q], color=c, marker=m, label=pol)
            axes[1][j].plot(x, [v["goodput_bps"] / 1e6 for v in q], color=c, marker=m, label=pol)
            axes[2][j].plot(x, [v["rcvbuf_mean"] / 1e6 for v in q], color=c, marker=m, label=pol)
        axes[0][j].set_yscale("log")
        axes[0][j].set_title("k = %d CPU hogs" % k)
        axes[0][j].set_ylabel("drop ratio (1e-6: none)")
        axes[1][j].set_ylabel("goodput, Mb/s")
        axes[2][j].set_ylabel("mean buffer, MB")
        axes[2][j].set_xlabel("senders N (30 Mb/s each)")
        for i in range(3):
            axes[i][j].grid(alpha=0.3)
        axes[0][j].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--plot", metavar="FILE")
    ap.add_argument("--include-disturbed", action="store_true",
                    help="keep the runs marked disturbed too (a second view, not the rule's); "
                    "writes table-all.md")
    a = ap.parse_args()
    runs = load(os.path.join(a.outdir, "runs.jsonl"), a.include_disturbed)
    if not runs:
        print("no usable runs in %s" % a.outdir, file=sys.stderr)
        return 1
    pts = points(runs)
    text = table(pts) + "\n" + "\n".join("* " + v for v in verdicts(pts)) + "\n"
    name = "table-all.md" if a.include_disturbed else "table.md"
    with open(os.path.join(a.outdir, name), "w") as f:
        f.write(text)
    print(text)
    if a.plot:
        return plot(pts, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
