#!/usr/bin/python3
"""doctables.strata_table() on made-up runs whose answer is known by hand:
two host states, a slow one (the daemon's drain 5 Gb/s, best rate 6) and
a fast one (drain 8 Gb/s, best rate 7), and two transfers before any
drain. The split is at the median of the 39 drains (19 at 5 Gb/s, 20 at
8: the 20th, 8), the slow state below it, and each half must get
its own best rate and its own --follow transfers, and a rate with fewer
than STRATUM_MIN_PER_RATE transfers in a half must not be a best.

And doctables.rate_rule_table() on two made-up runs whose bootstrap shares
follow from a binomial by hand: at k = 1, 7 Gb/s always takes 0.50 s and
6 Gb/s 0.40 or 0.70 s (one transfer each): the pooled best is 7 (mean
0.50 against 0.55), and a resample of 6's two transfers beats it only when
it draws 0.40 twice, 1/4 of the time, so a chooser of 7 is outside +-10 %
(6/7 = 0.86) in 25 % of resamples; the --follow transfers asked 7.0 (the
median of 7.7, 6.3 and 7.0). At k = 2, 4 Gb/s always takes 0.60 s and
4.6 Gb/s 0.55 or 0.75 s: the best is 4, 4.6 wins 1/4 of the resamples and
is 1.15 x 4, outside +-10 %: 25 %; the --follow transfers asked 4.4 (of
4.2, 4.4, 4.8), 1.10 x 4. At some k: 1 - (3/4)^2 = 44 %.

    test_doctables.py      exit 0 pass, 1 fail
"""
import json
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doctables  # noqa: E402

PAYLOAD = 1456


def xfer(mode, rate_gbps, t_s, drain_gbps, lossy=False):
    d = {"k": 1, "mode": mode, "tag": "main", "ok": True, "disturbed": None,
         "rate_req_bps": rate_gbps * 1e9, "rate_first_bps": rate_gbps * 1e9,
         "transfer_time_s": t_s, "loss_first_round": 0.02 if lossy else 0.0,
         "payload_bytes": PAYLOAD,
         "daemon_before": {"drain_pps": drain_gbps * 1e9 / (PAYLOAD * 8)
                           if drain_gbps else None}}
    return d


def xfer_k(k, mode, rate_gbps, t_s):
    d = xfer(mode, rate_gbps, t_s, None)
    d["k"] = k
    return d


def rule_runs():
    a = [xfer_k(1, "fixed", 7.0, 0.50), xfer_k(1, "fixed", 6.0, 0.40),
         xfer_k(2, "fixed", 4.0, 0.60), xfer_k(2, "fixed", 4.6, 0.55),
         xfer_k(1, "follow", 7.7, 0.5), xfer_k(2, "follow", 4.2, 0.6)]
    b = [xfer_k(1, "fixed", 7.0, 0.50), xfer_k(1, "fixed", 6.0, 0.70),
         xfer_k(2, "fixed", 4.0, 0.60), xfer_k(2, "fixed", 4.6, 0.75),
         xfer_k(1, "follow", 6.3, 0.5), xfer_k(1, "follow", 7.0, 0.5),
         xfer_k(2, "follow", 4.4, 0.6), xfer_k(2, "follow", 4.8, 0.6)]
    return [a, b]


def write_runs(top, sets):
    """Each run of @sets as TOP/run-sN/results.json (seeds from 1)."""
    names = []
    for i, rs in enumerate(sets):
        names.append("run-s%d" % (i + 1))
        os.mkdir(os.path.join(top, names[-1]))
        with open(os.path.join(top, names[-1], "results.json"), "w") as f:
            json.dump({"runs": rs, "meta": {"kernel": "test"}}, f)
    return names


def check_rate_rule():
    """rate_rule_table() against the shares worked out by hand (above);
    a share is within 4 points of it (2000 resamples: sd 1 point)."""
    with tempfile.TemporaryDirectory() as top:
        table = doctables.rate_rule_table(top, [write_runs(top, rule_runs())], ks=(1, 2))
    m = re.match(r"^\| 1-2, test \| 1\.00 \(7\.00\); (\d+) % \| 1\.10 \(4\.00\); (\d+) % \| "
                 r"(\d+) % \|$", table.splitlines()[2])
    want = (25, 25, 44)
    if not m or any(abs(int(g) - w) > 4 for g, w in zip(m.groups(), want)):
        print("test_doctables: rate-rule FAIL\n%s\nwanted about %s %%" % (table, want))
        return 1
    return 0


def runs():
    slow, fast = [], []
    for i in range(6):
        slow += [xfer("fixed", 6.0, 0.50, 5.0), xfer("fixed", 7.0, 0.60, 5.0, lossy=i < 3)]
        fast += [xfer("fixed", 6.0, 0.50, 8.0), xfer("fixed", 7.0, 0.45, 8.0)]
    # 8 Gb/s: fastest of all, but only in five transfers of the fast state.
    fast += [xfer("fixed", 8.0, 0.40, 8.0) for _ in range(5)]
    slow += [xfer("fixed", 8.0, 0.90, 5.0, lossy=True) for _ in range(5)]
    slow += [xfer("follow", 6.3, 0.55, 5.0, lossy=True), xfer("follow-nopause", 6.3, 0.55, 5.0)]
    fast += [xfer("follow", 7.7, 0.44, 8.0), xfer("follow-nopause", 7.7, 0.44, 8.0),
             xfer("follow", 7.0, 0.44, 8.0)]
    before = [xfer("fixed", 7.0, 0.30, None), xfer("follow", 9.0, 0.30, None)]
    return [before + slow[:20], slow[20:] + fast]


def main():
    with tempfile.TemporaryDirectory() as top:
        names = []
        for i, rs in enumerate(runs()):
            names.append("run%d" % i)
            os.mkdir(os.path.join(top, names[-1]))
            with open(os.path.join(top, names[-1], "results.json"), "w") as f:
                json.dump({"runs": rs}, f)
        table = doctables.strata_table(top, names, 1)
    rows = table.splitlines()
    want = [
        # split at 8.00; slow: best 6 (0.500), chosen 6.3 = 1.05, T 0.55 = 1.10, 1 of 2 lossy
        r"^\| < 8\.00: 19 \| 0\.500 \(0/6\) \| 0\.600 \(3/6\) \| – \(5\) \| 6\.00: 0\.500 \| "
        r"1\.05 \(6\.30 Gb/s\); 1\.10 \(1 of 2\) \|$",
        # fast: 8 Gb/s has 5 transfers (not a best); best 7 (0.450); chosen median of
        # 7.7, 7.7, 7.0 = 7.7 = 1.10; T 0.44 / 0.45 = 0.98
        r"^\| ≥ 8\.00: 20 \| 0\.500 \(0/6\) \| 0\.450 \(0/6\) \| – \(5\) \| 7\.00: 0\.450 \| "
        r"1\.10 \(7\.70 Gb/s\); 0\.98 \(0 of 3\) \|$",
        r"^\| none yet: 2 \|",
    ]
    fails = [w for w, row in zip(want, rows[2:]) if not re.match(w, row)]
    if len(rows) != 5 or fails:
        print("test_doctables: FAIL\n%s\nwanted:\n%s" % (table, "\n".join(fails or want)))
        return 1
    if check_rate_rule():
        return 1
    print("test_doctables: pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
