#!/usr/bin/python3
"""Judge tests/e2e/pause_ab.sh's transfers by its rule (stated in that script).

    pause_ab.py RUNS.jsonl [VERDICT.json]

Prints a table per mode and the verdict; writes the numbers to VERDICT.json.
Exit 0 pass, 1 fail, 3 no verdict (too few judged transfers).
"""
import json
import math
import random
import sys

BETWEEN_PAUSES = 0x0010  # RXBNECK_RATE_BETWEEN_PAUSES, include/rxbneck/proto.h
MODES = ("follow", "follow-nopause")
MIN_RUNS = 10
ALPHA = 0.05
PERMUTATIONS = 20000


def judged(runs, mode):
    return [r for r in runs if r["mode"] == mode and r["tag"] == "main"
            and not r.get("disturbed") and (r.get("send") or {}).get("ok")]


def first_round_loss(r):
    r1 = r["send"]["per_round"][0]
    return r1["pkts_lost"] / max(1, r1["pkts_sent"])


def early_flagged(r):
    """RATEs flagged BETWEEN_PAUSES that came before any PAUSE schedule."""
    f = r["send"].get("follow") or {}
    scheds = [s["received_s"] for s in f.get("schedules") or [] if not s["cancel"]]
    first = min(scheds) if scheds else math.inf
    return sum(1 for x in f.get("rates") or []
               if x["flags"] & BETWEEN_PAUSES and x["t_s"] < first)


def flagged(r):
    f = r["send"].get("follow") or {}
    return sum(1 for x in f.get("rates") or [] if x["flags"] & BETWEEN_PAUSES)


def u_statistic(a, b):
    """Mann-Whitney U of @a against @b (ties count one half)."""
    return sum((x > y) + 0.5 * (x == y) for x in a for y in b)


def mann_whitney_p(a, b):
    """Two-sided p of U by random relabelling of the pooled samples."""
    mid = len(a) * len(b) / 2
    obs = abs(u_statistic(a, b) - mid)
    pooled, rng, hits = a + b, random.Random(37), 0
    for _ in range(PERMUTATIONS):
        rng.shuffle(pooled)
        if abs(u_statistic(pooled[:len(a)], pooled[len(a):]) - mid) >= obs - 1e-12:
            hits += 1
    return (hits + 1) / (PERMUTATIONS + 1)


def fisher_p(k1, n1, k2, n2):
    """Two-sided Fisher exact p for k1 of n1 against k2 of n2."""
    k, n = k1 + k2, n1 + n2

    def pr(x):
        return math.comb(n1, x) * math.comb(n2, k - x) / math.comb(n, k)
    p0 = pr(k1)
    return min(1.0, sum(pr(x) for x in range(max(0, k - n2), min(k, n1) + 1)
                        if pr(x) <= p0 * (1 + 1e-9)))


def load_during(status_path, runs, cpu=1):
    """Median #C and #I on @cpu over the epochs that ended within @runs."""
    spans = [(r["t_start_mono"], r["t_end_mono"]) for r in runs]
    cb, io = [], []
    try:
        lines = open(status_path).read().splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        end = (e.get("end_ns") or 0) / 1e9
        if not any(a <= end <= b for a, b in spans):
            continue
        for c in e.get("cpus") or []:
            if c["cpu"] == cpu and c.get("cpu_bound") is not None:
                cb.append(c["cpu_bound"])
                io.append(c.get("io_bound") or 0)
    if not cb:
        return None
    return {"epochs": len(cb), "cpu_bound_median": sorted(cb)[len(cb) // 2],
            "io_bound_median": sorted(io)[len(io) // 2], "io_bound_max": max(io)}


def main():
    runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    out = {"modes": {}}
    out["receiver_load"] = load_during(sys.argv[1].rsplit("/", 1)[0] + "/status.jsonl"
                                       if "/" in sys.argv[1] else "status.jsonl",
                                       [r for mode in MODES for r in judged(runs, mode)])
    print("receiver CPU during the judged transfers:", out["receiver_load"])
    loss = {}
    for mode in MODES:
        ok = judged(runs, mode)
        loss[mode] = [first_round_loss(r) for r in ok]
        rates = [r["send"]["per_round"][0]["rate_requested_bps"] / 1e9 for r in ok]
        out["modes"][mode] = {
            "runs": len(ok),
            "lossy": sum(1 for x in loss[mode] if x > 0),
            "first_round_loss": loss[mode],
            "first_rate_gbps": rates,
            "pause_frames": sum((r["send"].get("follow") or {}).get("pause_frames", 0)
                                for r in ok),
            "rates_flagged_between": sum(flagged(r) for r in ok),
            "rates_flagged_before_pause": sum(early_flagged(r) for r in ok),
        }
    m = out["modes"]
    print("mode            runs lossy  first-round loss % (median, max)  first RATE Gb/s "
          "(median)  PAUSE frames  flagged RATEs (before a PAUSE)")
    for mode in MODES:
        x = m[mode]
        srt = sorted(x["first_round_loss"])
        med = srt[len(srt) // 2] * 100 if srt else float("nan")
        rts = sorted(x["first_rate_gbps"])
        print("%-15s %4d %5d  %8.3f %8.3f                 %6.3f                %5d  %d (%d)"
              % (mode, x["runs"], x["lossy"], med, 100 * max(srt or [math.nan]),
                 rts[len(rts) // 2] if rts else math.nan, x["pause_frames"],
                 x["rates_flagged_between"], x["rates_flagged_before_pause"]))
    if min(m[mode]["runs"] for mode in MODES) < MIN_RUNS:
        out["verdict"] = "no verdict: fewer than %d judged transfers in a mode" % MIN_RUNS
        code = 3
    else:
        early = sum(m[mode]["rates_flagged_before_pause"] for mode in MODES)
        pauses = sum(m[mode]["pause_frames"] for mode in MODES)
        out["claim1"] = {"flagged_before_pause": early, "pass": early == 0}
        if pauses:
            out["claim2"] = {"judged": False, "why": "%d PAUSE frames: the load does not "
                             "qualify" % pauses}
        else:
            a, b = loss["follow"], loss["follow-nopause"]
            pu = mann_whitney_p(a, b)
            pf = fisher_p(m["follow"]["lossy"], len(a), m["follow-nopause"]["lossy"], len(b))
            out["claim2"] = {"judged": True, "mann_whitney_p": pu, "fisher_p": pf,
                             "pass": pu >= ALPHA and pf >= ALPHA}
            print("claim 2: Mann-Whitney U p = %.3f, Fisher exact (lossy) p = %.3f" % (pu, pf))
        ok = out["claim1"]["pass"] and out["claim2"].get("pass", True)
        out["verdict"] = "pass" if ok else "fail"
        code = 0 if ok else 1
        print("claim 1: %d RATEs flagged BETWEEN_PAUSES before a PAUSE" % early)
        if not out["claim2"]["judged"]:
            print("claim 2: not judged (%s)" % out["claim2"]["why"])
    print("verdict:", out["verdict"])
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump(out, f, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(main())
