#!/usr/bin/env python3
"""capacity_ab.py OUTDIR: the verdict of tests/e2e/capacity_ab.sh.

Reads OUTDIR/runs.jsonl (undisturbed, successful transfers) and
OUTDIR/capacity.jsonl; prints each mode's transfer times, the fixed-rate
sweep's median T per rate, and the rule's verdict (see capacity_ab.sh).
"""
import json
import statistics
import sys


def ok(r):
    return not r.get("disturbed") and (r.get("send") or {}).get("ok")


def mw_p_less(a, b):
    """Exact one-sided Mann-Whitney p of 'a tends lower than b': the share
    of the arrangements of the pooled ranks whose U (pairs with the a
    lower) is at least the observed one; no-tie null distribution (times
    in microseconds rarely tie; a tie counts half)."""
    from functools import lru_cache
    m, n = len(a), len(b)
    obs = sum(1.0 if x < y else 0.5 if x == y else 0.0 for x in a for y in b)

    @lru_cache(maxsize=None)
    def count(i, j, u):     # arrangements of i a's and j b's with U = u
        if u < 0:
            return 0
        if i == 0 or j == 0:
            return 1 if u == 0 else 0
        # the largest value is a b (adds i pairs with an a lower) or an a
        return count(i, j - 1, u - i) + count(i - 1, j, u)
    total = sum(count(m, n, u) for u in range(m * n + 1))
    hits = sum(count(m, n, u) for u in range(m * n + 1) if u >= obs - 1e-9)
    return hits / total


def main():
    out = sys.argv[1]
    runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
    caps = [json.loads(l) for l in open(out + "/capacity.jsonl")] \
        if __import__("os").path.exists(out + "/capacity.jsonl") else []
    t = {}
    for mode in ("cost", "drain"):
        rs = [r for r in runs if r["mode"] == "follow" and r["tag"] == mode and ok(r)]
        t[mode] = [r["send"]["transfer_time_s"] for r in rs]
        r1 = [r["send"]["per_round"][0] for r in rs]
        loss = [100.0 * x["pkts_lost"] / max(1, x["pkts_sent"]) for x in r1]
        rate = [x["rate_requested_bps"] / 1e9 for x in r1]
        cs = [c["capacity"] for c in caps if c["mode"] == mode]
        basis = sorted({c.get("basis") for c in cs})
        print("%-5s n=%2d  T median %.3f s  [%s]" % (mode, len(t[mode]),
              statistics.median(t[mode]) if t[mode] else float("nan"),
              " ".join("%.3f" % x for x in t[mode])))
        if rate:
            print("      first-round rate %.2f-%.2f Gb/s, loss median %.2f %%, basis %s, "
                  "capacity %s pkts/s" % (min(rate), max(rate), statistics.median(loss),
                  ",".join(str(b) for b in basis),
                  " ".join("%.0f" % (c.get("pkts_per_s") or 0) for c in cs)))
    sweep = {}
    for r in runs:
        if r["mode"] == "fixed" and r["tag"] == "sweep" and ok(r):
            sweep.setdefault(r["rate_req_bps"], []).append(r["send"]["transfer_time_s"])
    best = None
    for rate in sorted(sweep):
        m = statistics.median(sweep[rate])
        print("fixed %.2f Gb/s n=%d  T median %.3f s" % (rate / 1e9, len(sweep[rate]), m))
        if best is None or m < best[1]:
            best = (rate, m)
    if best:
        for mode in ("cost", "drain"):
            if t[mode]:
                print("%s / best fixed (%.2f Gb/s): %.3f" % (mode, best[0] / 1e9,
                      statistics.median(t[mode]) / best[1]))
    dis = sum(1 for r in runs if r.get("disturbed"))
    print("disturbed attempts: %d" % dis)
    a, b = t["drain"], t["cost"]
    if len(a) < 8 or len(b) < 8:
        print("verdict: too few undisturbed transfers (%d drain, %d cost)" % (len(a), len(b)))
        return
    ma, mb = statistics.median(a), statistics.median(b)
    p_d, p_c = mw_p_less(a, b), mw_p_less(b, a)
    print("median drain / cost %.3f; p(drain lower) %.3f, p(cost lower) %.3f"
          % (ma / mb, p_d, p_c))
    if ma < 0.95 * mb and p_d < 0.1:
        print("verdict: drain wins")
    elif mb < 0.95 * ma and p_c < 0.1:
        print("verdict: cost wins")
    else:
        print("verdict: not told apart")


main()
