#!/usr/bin/python3
"""Analyse an end-to-end experiment written by tests/e2e/run.sh.

    analyze.py OUTDIR [--build BUILD] [--no-plot] [--export DIR]
    analyze.py --from-results DIR [--no-plot]

Reads OUTDIR/runs.jsonl, status.jsonl and meta.json; writes
  results.json  every run with its derived numbers and the daemon's view
                (inputs, model) at its start and during it; statistics per
                point (mean, standard deviation, 99 % confidence interval);
                the claims per k; the diagnosis of the model inputs
  table.md      the tables the docs quote
  fig4.png      transfer time vs rate per k with rxbneck's chosen rate
                marked (as Fig. 4 of Banerjee et al., docs/references.md),
                and first-round loss, measured and as the model predicted it
Prints table.md. Statistics use the undisturbed runs (run.sh); the
disturbed ones stay in results.json with the reason.

--export DIR: also write DIR/results.json without the per-epoch parts
(each run's daemon view during it, the RATEs it received, the model's
curve; about 0.5 MB instead of 4-5), and copy table.md and fig4.png there:
the files tests/e2e/results/ keeps in git.

--from-results DIR: DIR holds an analysis already made (results.json, full
or exported): write DIR/table.md (and fig4.png) from it, without the runs.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loads  # noqa: E402

# Two-sided 99 % quantiles of Student's t, by degrees of freedom.
T995 = {1: 63.657, 2: 9.925, 3: 5.841, 4: 4.604, 5: 4.032, 6: 3.707, 7: 3.499,
        8: 3.355, 9: 3.250, 10: 3.169, 11: 3.106, 12: 3.055, 13: 3.012, 14: 2.977,
        15: 2.947, 16: 2.921, 17: 2.898, 18: 2.878, 19: 2.861, 20: 2.845, 22: 2.819,
        24: 2.797, 26: 2.779, 28: 2.763, 30: 2.750, 40: 2.704, 60: 2.660, 120: 2.617}


def t995(df):
    if df <= 0:
        return float("nan")
    keys = sorted(T995)
    for k in keys:
        if df <= k:
            return T995[k]
    return 2.576


def stats(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    n = len(xs)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "ci99": None, "min": None, "max": None}
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else None
    half = t995(n - 1) * sd / math.sqrt(n) if sd is not None else None
    return {"n": n, "mean": m, "sd": sd,
            "ci99": [m - half, m + half] if half is not None else None,
            "min": min(xs), "max": max(xs)}


def load_jsonl(p):
    out = []
    if not os.path.exists(p):
        return out
    for line in open(p):
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def val(inputs, stage, key):
    try:
        v = inputs[stage][key]
        return v["value"] if isinstance(v, dict) else v
    except (KeyError, TypeError):
        return None


def cost_part(inputs, field, pattern):
    """A number beside the receiver's cost per packet: the field
    stage_b.cpu_cost.<field> of the status (docs/CONTROL.md), in whole ns
    as the tables print it; the ratio only beside a cost that is not the
    ratio itself (with basis "ratio" it is cpu_ns_per_pkt). Status records
    from daemons older than those fields (some of the runs kept in
    tests/e2e/results/ were recorded before) have the numbers only in the
    why of stage_b.cpu_ns_per_pkt, "marginal: B ns/pkt + A ns/wake-up
    (ratio R)": @pattern reads them there."""
    try:
        b = inputs["stage_b"]
    except (KeyError, TypeError):
        return None
    cost = b.get("cpu_cost") if isinstance(b, dict) else None
    if isinstance(cost, dict) and field in cost:
        v = cost[field]
        if field == "ratio_ns" and cost.get("basis") == "ratio":
            return None
        return float(round(v)) if isinstance(v, (int, float)) else None
    try:
        m = re.search(pattern, b["cpu_ns_per_pkt"]["why"])
    except (KeyError, TypeError):
        return None
    return float(m.group(1)) if m else None


def flow_of(ep, port=None):
    fl = ep.get("flows") or []
    if port is not None:
        fl = [f for f in fl if f.get("port") == port] or fl
    return fl[0] if fl else None


def daemon_view(ep, port=None):
    """The model inputs and result of one status record, flattened."""
    f = flow_of(ep, port)
    if not f:
        return None
    inp = f.get("inputs") or {}
    model = f.get("model") or {}
    rate = f.get("rate") or {}
    b = inp.get("stage_b") or {}
    a = inp.get("stage_a") or {}
    return {
        "epoch": ep.get("epoch"), "state": f.get("state"),
        "cpu_bound": val(inp, "stage_b", "cpu_bound"),
        "io_bound": val(inp, "stage_b", "io_bound"),
        "cpu_ns_per_pkt": val(inp, "stage_b", "cpu_ns_per_pkt"),
        "cpu_ns_per_pkt_ratio": cost_part(inp, "ratio_ns", r"ratio (\d+)"),
        "cpu_ns_per_wakeup": cost_part(inp, "fit_a_ns", r"\+ (\d+) ns/wake-up"),
        "cpu_ns_per_pkt_why": (b.get("cpu_ns_per_pkt") or {}).get("why"),
        "pkts_per_wakeup": val(inp, "stage_b", "pkts_per_wakeup"),
        "queue_pkts": val(inp, "stage_b", "queue_pkts"),
        "mu_net_per_s": val(inp, "stage_b", "mu_net_per_s"),
        "irq_ns_per_pkt": val(inp, "stage_b", "irq_ns_per_pkt"),
        "loss_episode_pkts": val(inp, "stage_b", "loss_episode_pkts"),
        "rate_rel_sd": val(inp, "stage_b", "rate_rel_sd"),
        "rate_rel_sd_why": (b.get("rate_rel_sd") or {}).get("why"),
        "model_loss_episode_pkts": model.get("loss_episode_pkts"),
        "stage_b_modelled": b.get("modelled"),
        "stage_a_modelled": a.get("modelled"),
        "stage_a_mu_per_s": val(inp, "stage_a", "mu_per_s"),
        "stage_a_pkts_per_poll": val(inp, "stage_a", "pkts_per_poll"),
        "stage_a_queue_pkts": val(inp, "stage_a", "queue_pkts"),
        "stage_a_dgrams_per_skb": val(inp, "stage_a", "dgrams_per_skb"),
        "confidence": inp.get("confidence"),
        "model_rate_bps": model.get("rate_bps"),
        "model_loss": model.get("loss"),
        "model_time_s": model.get("transfer_time_s"),
        "model_stages": model.get("stages"),
        "mu_net_full_per_s": ((model.get("stages") or [{}])[-1] or {}).get("mu_net_full_per_s"),
        "cpu_ns_per_pkt_kept_up": ((b.get("cpu_cost") or {}).get("kept_up_ns")),
        "cpu_ns_per_pkt_saturated": ((b.get("cpu_cost") or {}).get("saturated_ns")),
        "cpu_cost_basis": ((b.get("cpu_cost") or {}).get("basis")),
        # Where stage B's capacity came from (daemon/model/capacity.h):
        # the cost per packet, or the saturated drain mu_net was scaled to.
        "capacity_basis": (b.get("capacity") or {}).get("basis"),
        "capacity_pps": (b.get("capacity") or {}).get("pkts_per_s"),
        "capacity_cost_pps": (b.get("capacity") or {}).get("cost_pkts_per_s"),
        "drain_pps": (b.get("capacity") or {}).get("drain_pkts_per_s"),
        "rate_bps": rate.get("rate_bps"),
        "rate_flags": rate.get("flags"),
        "one_way_delay_s": (f.get("transfer") or {}).get("one_way_delay_s"),
        # The receiver's CPU: the plain #C and the effective count the
        # model's #C is taken from (weights, quotas; docs/measurement.md).
        "recv_cpu_bound": recv_cpu(ep, "cpu_bound"),
        "recv_cpu_bound_eff": recv_cpu(ep, "cpu_bound_eff"),
    }


def recv_cpu(ep, key):
    c = [x for x in ep.get("cpus") or [] if x.get("cpu") == RECV_CPU]
    return c[0].get(key) if c else None


def sock_of(ep, port):
    for s in ep.get("sockets") or []:
        if s.get("port") == port:
            return s
    return None


def derive(run, eps, port):
    """Numbers of one run, and the daemon's view before and during it."""
    d = {"k": run["k"], "mode": run["mode"], "tag": run.get("tag", "main"),
         "rep": run["rep"], "rate_req_bps": run.get("rate_req_bps"),
         "one_way_delay_ms": run.get("one_way_delay_ms"),
         "steal_pct": run.get("steal_pct"), "disturbed": run.get("disturbed"),
         "t_start_mono": run["t_start_mono"], "t_end_mono": run["t_end_mono"],
         "file_identical": run.get("file_identical")}
    if run["mode"].startswith("tcp"):
        d["ok"] = run.get("ok", False)
        d["transfer_time_s"] = run.get("transfer_time_s")
        d["goodput_bps"] = run.get("goodput_bps")
        d["retransmits"] = run.get("retransmits")
        d["error"] = run.get("error")
    else:
        s = run.get("send") or {}
        r = run.get("recv") or {}
        d["ok"] = bool(s.get("ok")) and bool(r.get("ok"))
        d["error"] = s.get("error") or r.get("error") or run.get("send_err")
        if s.get("ok"):
            pr = s["per_round"]
            d["transfer_time_s"] = s["transfer_time_s"]
            d["rounds"] = s["rounds"]
            d["pkts_sent_per_round"] = [x["pkts_sent"] for x in pr]
            d["pkts_lost_per_round"] = [x["pkts_lost"] for x in pr]
            d["loss_first_round"] = pr[0]["pkts_lost"] / pr[0]["pkts_sent"] if pr[0]["pkts_sent"] else None
            d["loss_all_rounds"] = (sum(x["pkts_lost"] for x in pr) /
                                    max(1, sum(x["pkts_sent"] for x in pr)))
            d["achieved_rate_bps"] = s.get("achieved_rate_bps")
            d["rate_round1_requested_bps"] = pr[0].get("rate_requested_bps")
            d["pause_time_s"] = s.get("pause_time_s")
            d["goodput_bps"] = s.get("goodput_bps")
            d["payload_bytes"] = s.get("payload_bytes")
            if r.get("per_round"):
                d["rx_rate_round1_bps"] = r["per_round"][0].get("rx_rate_bps")
                d["socket_drops"] = r.get("socket_drops")
            f = s.get("follow")
            if f:
                rates = f.get("rates") or []
                d["rates_pushed"] = [{"t_s": x["t_s"], "rate_bps": x["rate_bps"],
                                      "loss": x["loss"], "epoch": x["epoch"],
                                      "flags": x["flags"]} for x in rates]
                d["pause_frames"] = f.get("pause_frames")
                d["pauses_honoured"] = f.get("pauses_honoured")
                # The rate asked over round 1: the pushed rates weighted by
                # how long each was in force during the blast.
                r1 = pr[0]
                a, b = r1["start_s"], r1["start_s"] + r1["blast_time_s"]
                acc = wsum = 0.0
                for i, x in enumerate(rates):
                    lo = max(a, x["t_s"])
                    hi = min(b, rates[i + 1]["t_s"] if i + 1 < len(rates) else b)
                    if hi > lo:
                        acc += x["rate_bps"] * (hi - lo)
                        wsum += hi - lo
                d["rate_first_bps"] = r1.get("rate_requested_bps")
                d["rate_round1_mean_bps"] = acc / wsum if wsum > 0 else d["rate_first_bps"]
    # The daemon: the last epoch that ended before the run, and those during it.
    t0, t1 = run["t_start_mono"], run["t_end_mono"]
    before = [e for e in eps if e["end_ns"] / 1e9 <= t0]
    during = [e for e in eps if e["end_ns"] / 1e9 > t0 and e["start_ns"] / 1e9 < t1]
    if before:
        d["daemon_before"] = daemon_view(before[-1], port)
    d["daemon_during"] = []
    for e in during:
        v = daemon_view(e, port) or {}
        so = sock_of(e, port) or {}
        c = [x for x in e.get("cpus") or [] if x["cpu"] == RECV_CPU]
        v["epoch_s"] = (e["end_ns"] - e["start_ns"]) / 1e9
        v["cpu_bound_recv_cpu"] = c[0]["cpu_bound"] if c else None
        v["softirq_frac_recv_cpu"] = c[0].get("softirq_frac") if c else None
        v["hardirq_frac_recv_cpu"] = c[0].get("hardirq_frac") if c else None
        v["sock"] = {k: so.get(k) for k in (
            "ipproto", "pkts_in", "pkts_out", "drops", "drops_rcvbuf", "rcvbuf_bytes",
            "rcvbuf_ipproto",
            "truesize_per_pkt_bytes", "queue_pkts_cap", "recv_wakeups", "pkts_per_wakeup",
            "receiver_oncpu_ns", "cpu_ns_per_pkt")}
        d["daemon_during"].append(v)
    return d


def parse_rate(x):
    u = {"k": 1e3, "M": 1e6, "G": 1e9}
    return float(x[:-1]) * u[x[-1]] if x[-1] in u else float(x)


def daemon_rounds(outdir, meta):
    """The round model the daemon ran with: [model] rounds of the rxbneckd.conf
    the run used, else meta's "rounds", else the daemon's default (burst)."""
    sect = None
    try:
        with open(os.path.join(outdir, "rxbneckd.conf")) as f:
            for line in f:
                t = line.split("#", 1)[0].strip()
                if t.startswith("["):
                    sect = t.strip("[]").strip()
                elif sect == "model" and "=" in t:
                    k, v = (x.strip() for x in t.split("=", 1))
                    if k == "rounds":
                        return v
    except OSError:
        pass
    return meta.get("rounds", "burst")


def model_curve(build, inp, meta, rates, episode_pkts=None):
    """rxbneckctl model with the daemon's stage-B inputs and round model:
    loss, T and resend rounds per rate. episode_pkts: packets per loss
    episode (burst rounds; --loss-episode-pkts), else lost one by one."""
    ctl = os.path.join(build, "rxbneckctl")
    if not os.access(ctl, os.X_OK) or inp.get("mu_net_per_s") is None:
        return None
    size = meta["file_size"]
    rounds = meta.get("model_rounds", "burst")
    args = [ctl, "model", "--json", "--cpu-bound", "%.6g" % inp["cpu_bound"],
            "--io-bound", "0", "--mu-net", "%.9g" % (inp["mu_net_per_s"] / 1e3),
            "--queue-pkts", "%d" % round(inp["queue_pkts"]),
            "--batch", "%d" % max(1, round(inp["pkts_per_wakeup"])),
            "--batch-rule", meta.get("batch_rule", "partial"),
            "--payload", "1472", "--file-bytes", str(int(parse_size(size))),
            "--one-way-delay-ms", "%g" % meta["one_way_delay_ms"],
            "--line-rate-bps", "%d" % meta["line_rate_bps"],
            "--min-rate-bps", "%d" % parse_rate(meta["min_rate_bps"]),
            "--points", "400", "--rounds", rounds]
    if inp.get("irq_ns_per_pkt"):
        args += ["--irq-ns-per-pkt", "%.6g" % inp["irq_ns_per_pkt"]]
    # The daemon's queue-depth split ([model] queue_depth_cost): mu_full < mu.
    full = inp.get("mu_net_full_per_s")
    if full and full < inp["mu_net_per_s"] * (1 - 1e-9):
        args += ["--mu-net-full", "%.9g" % (full / 1e3)]
    if episode_pkts and rounds == "burst":
        args += ["--loss-episode-pkts", "%.6g" % max(1.0, episode_pkts)]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode:
        return {"error": out.stderr.strip(), "args": args[1:]}
    j = json.loads(out.stdout)
    curve = j["curve"]

    def at(b):
        best = min(curve, key=lambda c: abs(c["rate_bps"] - b))
        return {"rate_bps": b, "loss": best["loss"], "time_s": best["time_s"],
                "n_resend": best.get("n_resend"), "grid_rate_bps": best["rate_bps"]}
    return {"args": args[1:], "rounds": rounds,
            "bottleneck_rate_bps": j["bottleneck_rate_bps"],
            "capacity_bps": j.get("capacity_bps"), "service_rate_per_s": j.get("service_rate_per_s"),
            "at_swept": [at(b) for b in rates],
            "curve": [{"rate_bps": c["rate_bps"], "loss": c["loss"], "time_s": c["time_s"]}
                      for c in curve[::4]]}


def parse_size(s):
    u = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "k": 1e3, "M": 1e6, "G": 1e9}
    for k in ("Ki", "Mi", "Gi", "k", "M", "G"):
        if s.endswith(k):
            return float(s[:-len(k)]) * u[k]
    return float(s)


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


# The claims (docs/e2e.md §4): --follow's T at most CLAIM1_MAX x
# the best fixed rate's; at most CLAIM2_MAX x the top rate's when that
# loses more than CLAIM2_MIN_LOSS of its first round; the chosen rate within
# CLAIM3_MAX of the best rate. pool.py judges by the same bounds.
CLAIM1_MAX = 1.10
CLAIM2_MAX = 0.75
CLAIM2_MIN_LOSS = 0.05
CLAIM3_MAX = 0.15


def chosen_rate(runs):
    """The rate rxbneckd chose for a set of --follow transfers (claim 3):
    the median of their first RATE, the one each blast started with. A
    median, so that one transfer started on a stale estimate does not move
    it. analyze.py and pool.py both judge claim 3 by it."""
    return median([r.get("rate_first_bps") for r in runs
                   if isinstance(r.get("rate_first_bps"), (int, float))])


RECV_CPU = 1

# Loss episodes: runs that lost some of their first blast, but under this
# fraction (above it the queue overflows for most of the blast: one long
# episode, not a rare one), and how many it takes to give a median.
EPISODE_MAX_LOSS = 0.05
EPISODE_MIN_RUNS = 3


def episodes(runs):
    """Near the knee loss comes in episodes of hundreds to thousands of
    packets, in some transfers and not in others (docs/e2e.md §4): the
    packets lost in the first blast of each fixed-rate run that lost some
    but less than EPISODE_MAX_LOSS of it. A run's loss is taken as one
    episode (its drops are not timed), so this is an upper bound of the
    episode size; the runs that lost nothing at the same rates give how
    rare they are."""
    lossy = [d for d in runs if d["ok"] and d.get("pkts_lost_per_round")
             and 0 < (d.get("loss_first_round") or 0) < EPISODE_MAX_LOSS]
    rates = sorted({d["rate_req_bps"] for d in lossy})
    at = [d for d in runs if d["ok"] and d["rate_req_bps"] in rates]
    return {"runs": len(lossy), "runs_at_those_rates": len(at),
            "rates_bps": rates,
            "median_pkts": median([d["pkts_lost_per_round"][0] for d in lossy]),
            "pkts": sorted(d["pkts_lost_per_round"][0] for d in lossy)}


def wilson_upper(k, n, z=1.959964):
    """Upper end of the 95 % Wilson score interval of a proportion k / n."""
    if n <= 0:
        return float("nan")
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (c + h) / d)


def held_out_best(runs_by_rate):
    """The T that "pick the best fixed rate from the sweep" achieves,
    estimated without the selection bias of the minimum of noisy means.

    Leave one repeat out: choose the rate with the lowest mean T over the
    other repeats, then take that rate's T in the repeat left out.  The
    minimum over rates of the means uses the same draws to choose and to
    judge, so where loss comes in rare episodes (one lossy run costs a
    round) it is biased low; this estimate is not (it is slightly
    pessimistic: each choice sees n - 1 repeats).  runs_by_rate: {rate:
    [(rep, T), ...]}.  Returns None with fewer than 2 repeats."""
    reps = sorted({r for xs in runs_by_rate.values() for r, _ in xs})
    if len(reps) < 2:
        return None
    picked, times = [], []
    for r in reps:
        means = {}
        for rate, xs in runs_by_rate.items():
            rest = [t for q, t in xs if q != r]
            if rest:
                means[rate] = sum(rest) / len(rest)
        if not means:
            continue
        rate = min(means, key=means.get)
        held = [t for q, t in runs_by_rate[rate] if q == r]
        if held:
            picked.append(rate)
            times.extend(held)
    if not times:
        return None
    return {"time_s": stats(times), "rates_bps": picked}


def main():
    global RECV_CPU
    ap = argparse.ArgumentParser(
        description="Analyse an end-to-end experiment written by tests/e2e/run.sh "
                    "(docs/e2e.md): results.json, table.md and fig4.png in OUTDIR.")
    ap.add_argument("outdir", metavar="OUTDIR",
                    help="run.sh's output directory (runs.jsonl, status.jsonl, meta.json)")
    ap.add_argument("--build", default="build",
                    help="build directory whose rxbneckctl evaluates the model (default: build)")
    ap.add_argument("--no-plot", action="store_true", help="do not draw fig4.png")
    ap.add_argument("--export", metavar="DIR",
                    help="also write the compact copy kept in tests/e2e/results/ to DIR")
    ap.add_argument("--from-results", action="store_true",
                    help="OUTDIR holds an analysis already made (results.json, full or as "
                         "kept in tests/e2e/results/): write its table.md (and fig4.png) "
                         "from that, without the runs")
    args = ap.parse_args()
    outdir, build = args.outdir, args.build
    if args.from_results:
        return redo(outdir, not args.no_plot, ap)
    for name in ("meta.json", "runs.jsonl", "status.jsonl"):
        if not os.path.isfile(os.path.join(outdir, name)):
            ap.error("%s: no %s there (not a run.sh output directory?)" % (outdir, name))
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    meta["model_rounds"] = daemon_rounds(outdir, meta)
    RECV_CPU = meta.get("recv_cpu", 1)
    runs = load_jsonl(os.path.join(outdir, "runs.jsonl"))
    eps = [e for e in load_jsonl(os.path.join(outdir, "status.jsonl"))
           if e.get("start_ns") and e.get("end_ns")]
    eps.sort(key=lambda e: e["end_ns"])
    port = None
    for r in runs:
        if r.get("recv") and r["recv"].get("local"):
            port = int(r["recv"]["local"].rsplit(":", 1)[1])
            break
    derived = [derive(r, eps, port) for r in runs]
    rates = sorted(parse_rate(x) for x in meta["rates"])
    # The swept loads, and those of the RBUDP+ runs (a run can have only those).
    ks = sorted({int(k) for k in meta["ks"]} | {d["k"] for d in derived})

    def group(k, mode, tag, rate=None, clean=True):
        return [d for d in derived if d["k"] == k and d["mode"] == mode and d["tag"] == tag
                and (rate is None or d["rate_req_bps"] == rate)
                and (not clean or not d["disturbed"])]

    def summary(ds):
        ok = [d for d in ds if d["ok"]]
        # Loss near the knee comes in rare episodes (docs/e2e.md §4): how
        # many runs lost anything at all says more than the mean.
        return {"runs": len(ds), "failed": len(ds) - len(ok),
                "runs_lossy": sum(1 for d in ok if (d.get("loss_first_round") or 0) > 0),
                "time_s": stats([d["transfer_time_s"] for d in ok]),
                "loss_first_round": stats([d.get("loss_first_round") for d in ok]),
                "rounds": stats([d.get("rounds") for d in ok]),
                "rate_first_bps": stats([d.get("rate_first_bps") for d in ok]),
                "rate_round1_mean_bps": stats([d.get("rate_round1_mean_bps") for d in ok]),
                "pause_time_s": stats([d.get("pause_time_s") for d in ok])}

    per_k = {}
    for k in ks:
        sweep = []
        for b in rates:
            g = group(k, "fixed", "main", b)
            s = summary(g)
            s["rate_bps"] = b
            s["disturbed"] = len(group(k, "fixed", "main", b, clean=False)) - len(g)
            sweep.append(s)
        valid = [s for s in sweep if s["time_s"]["n"] and not s["failed"]]
        best = min(valid, key=lambda s: s["time_s"]["mean"]) if valid else None
        held = held_out_best({b: [(d["rep"], d["transfer_time_s"])
                                  for d in group(k, "fixed", "main", b) if d["ok"]]
                              for b in rates})
        top = sweep[-1]
        fol = summary(group(k, "follow", "main"))
        fol["disturbed"] = len(group(k, "follow", "main", clean=False)) - fol["runs"]
        # With a pause predictor: the same passes with --no-pause (the rate alone).
        fnp = summary(group(k, "follow-nopause", "main"))
        fnp["disturbed"] = len(group(k, "follow-nopause", "main", clean=False)) - fnp["runs"]
        tcp = summary(group(k, "tcp", "tcp"))
        tcp_mtu = summary(group(k, "tcp-mtu", "tcp"))
        tcpcmp = summary(group(k, "follow", "tcpcmp"))
        # TCP over the emulated path (rxbneck-delayline, run.sh -t with -d > 0).
        tcp_delay = summary(group(k, "tcp-delay", "tcp"))
        tcp_mtu_delay = summary(group(k, "tcp-mtu-delay", "tcp"))
        pz = summary(group(k, "follow", "pause"))
        npz = summary(group(k, "follow-nopause", "pause"))
        # The daemon's inputs at the start of the follow runs.
        fr = [d for d in group(k, "follow", "main") + group(k, "follow-nopause", "main")
              if d.get("daemon_before")]
        dv = {key: median([d["daemon_before"].get(key) for d in fr]) for key in (
            "cpu_bound", "cpu_ns_per_pkt", "cpu_ns_per_pkt_ratio", "cpu_ns_per_wakeup",
            "pkts_per_wakeup", "queue_pkts", "mu_net_per_s", "irq_ns_per_pkt", "model_rate_bps", "model_loss", "model_time_s", "stage_a_mu_per_s",
            "stage_a_pkts_per_poll", "stage_a_queue_pkts", "stage_a_dgrams_per_skb", "loss_episode_pkts",
            "model_loss_episode_pkts", "mu_net_full_per_s", "cpu_ns_per_pkt_kept_up",
            "cpu_ns_per_pkt_saturated", "capacity_pps", "capacity_cost_pps")}
        bases = [d["daemon_before"].get("capacity_basis") for d in fr]
        if any(bases):
            dv["capacity_from_drain"] = sum(1 for x in bases if x == "saturated_drain")
            dv["capacity_starts"] = len(bases)
        dv["queue_pkts_seen"] = sorted({d["daemon_before"].get("queue_pkts") for d in fr
                                        if d["daemon_before"].get("queue_pkts") is not None})
        claims = {}
        for name, f in (("follow", fol), ("nopause", fnp)):
            if not (best and f["time_s"]["n"]):
                continue
            tb, tf = best["time_s"]["mean"], f["time_s"]["mean"]
            claims[name + "_vs_best"] = {"t_follow": tf, "t_best": tb, "ratio": tf / tb,
                                         "holds": tf <= CLAIM1_MAX * tb}
            # Not the claim (it is judged against the minimum above), the
            # size of its selection bias: see held_out_best().
            if held:
                th = held["time_s"]["mean"]
                claims[name + "_vs_best"]["t_best_held_out"] = th
                claims[name + "_vs_best"]["ratio_held_out"] = tf / th
            tl = top["loss_first_round"]["mean"]
            if top["time_s"]["n"]:
                tt = top["time_s"]["mean"]
                claims[name + "_vs_top"] = {
                    "top_rate_bps": top["rate_bps"], "top_loss": tl, "t_top": tt,
                    "ratio": tf / tt, "applies": tl is not None and tl > CLAIM2_MIN_LOSS,
                    "holds": (tf <= CLAIM2_MAX * tt)
                    if (tl is not None and tl > CLAIM2_MIN_LOSS) else None}
        # The rate chosen, over every --follow run of the passes with PAUSE
        # and without (PAUSE does not change the rate).
        fm = [d for d in group(k, "follow", "main") + group(k, "follow-nopause", "main") if d["ok"]]
        cr = chosen_rate(fm)
        cm = stats([d.get("rate_round1_mean_bps") for d in fm])["mean"]
        if best and cr:
            claims["chosen_vs_best_rate"] = {
                "best_rate_bps": best["rate_bps"], "chosen_first_bps": cr,
                "chosen_round1_mean_bps": cm, "runs": len(fm),
                "ratio_first": cr / best["rate_bps"],
                "ratio_round1_mean": cm / best["rate_bps"] if cm else None,
                "holds": abs(cr / best["rate_bps"] - 1) <= CLAIM3_MAX}
        if pz["time_s"]["n"] and npz["time_s"]["n"]:
            claims["pause"] = {
                "loss_pause": pz["loss_first_round"]["mean"],
                "loss_nopause": npz["loss_first_round"]["mean"],
                "sd_pause": pz["time_s"]["sd"], "sd_nopause": npz["time_s"]["sd"],
                "pause_time_s": pz["pause_time_s"]["mean"],
                # Without a single PAUSE obeyed, RBUDP+ and RBUDP are the
                # same transfers: the comparison is two samples of one thing.
                "holds": None if not pz["pause_time_s"]["mean"] else
                         (pz["loss_first_round"]["mean"] < npz["loss_first_round"]["mean"] and
                          (pz["time_s"]["sd"] or 0) < (npz["time_s"]["sd"] or 0))}
        mc = model_curve(build, dv, meta, rates) if dv.get("mu_net_per_s") else None
        ep = episodes(group(k, "fixed", "main"))
        # The episode size the daemon measured (bpf/sockq.h), and its rate with it.
        ep["daemon_median_pkts"] = dv.get("loss_episode_pkts")
        ep["daemon_used_pkts"] = dv.get("model_loss_episode_pkts")
        if dv.get("loss_episode_pkts") and dv.get("mu_net_per_s"):
            md = model_curve(build, dv, meta, rates, max(1.0, dv["loss_episode_pkts"]))
            if md and "error" not in md:
                ep["model_rate_bps_daemon_m"] = md["bottleneck_rate_bps"]
                if best:
                    ep["ratio_to_best_daemon_m"] = md["bottleneck_rate_bps"] / best["rate_bps"]
        if ep["runs"] >= EPISODE_MIN_RUNS and dv.get("mu_net_per_s"):
            me = model_curve(build, dv, meta, rates, ep["median_pkts"])
            if me and "error" not in me:
                ep["model_rate_bps_one_by_one"] = mc and mc.get("bottleneck_rate_bps")
                ep["model_rate_bps"] = me["bottleneck_rate_bps"]
                if best:
                    ep["ratio_to_best"] = me["bottleneck_rate_bps"] / best["rate_bps"]
        diag = diagnose(k, derived, dv, rates, mc, parse_size(meta["file_size"]),
                        meta.get("irq_time_accounting") is False,
                        loads.expect(meta.get("load"), k))
        rec = outcomes([d for d in derived if d["k"] == k], eps, port)
        per_k[k] = {"sweep": sweep, "best": best and {"rate_bps": best["rate_bps"],
                                                      "time_s": best["time_s"]},
                    "best_held_out": held,
                    "top": {"rate_bps": top["rate_bps"], "time_s": top["time_s"],
                            "loss_first_round": top["loss_first_round"]},
                    "follow": fol, "follow_nopause": fnp, "tcp": tcp, "tcp_mtu": tcp_mtu, "follow_no_delay": tcpcmp,
                    "tcp_delay": tcp_delay, "tcp_mtu_delay": tcp_mtu_delay,
                    "pause": {"follow": pz, "follow_nopause": npz},
                    "daemon_inputs_at_follow": dv, "model_curve": mc, "loss_episodes": ep,
                    "claims": claims, "diagnosis": diag}
        if rec:
            per_k[k]["outcomes"] = rec
    res = {"meta": meta, "per_k": per_k, "runs": derived,
           "counts": {"runs": len(derived),
                      "disturbed": sum(1 for d in derived if d["disturbed"]),
                      "failed": sum(1 for d in derived if not d["ok"])}}
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = table(res)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(md)
    print(md)
    if not args.no_plot:
        plot(res, os.path.join(outdir, "fig4.png"))
    if args.export:
        export(res, outdir, args.export)


def redo(outdir, draw, ap):
    """table.md (and fig4.png) of OUTDIR from its results.json alone."""
    p = os.path.join(outdir, "results.json")
    try:
        with open(p) as f:
            res = json.load(f)
    except OSError as e:
        ap.error("%s: %s" % (p, e.strerror))
    except ValueError as e:
        ap.error("%s: not JSON: %s" % (p, e))
    if not isinstance(res, dict) or not all(x in res for x in ("meta", "per_k", "counts")):
        ap.error("%s: no meta, per_k and counts (not analyze.py's results.json?)" % p)
    md = table(res)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(md)
    print(md)
    if draw:
        plot(res, os.path.join(outdir, "fig4.png"))


def outcomes(ds, eps, port):
    """The daemon's own record of its predictions against the outcomes the
    --follow senders reported (status "predictions", daemon/model/outcome.h)
    at the end of these transfers: the last status record before the last
    of them ended (+3 s for its REPORT), its entries and their summary:
    median measured / predicted T, mean predicted and measured first-round
    loss. None without a record."""
    ts = [d["t_start_mono"] for d in ds if d.get("t_start_mono")]
    te = [d["t_end_mono"] for d in ds if d.get("t_end_mono")]
    if not ts or not te or not eps:
        return None
    t0, t1 = min(ts) * 1e9, max(te) * 1e9 + 3e9
    last = [e for e in eps if t0 <= e["end_ns"] <= t1]
    if not last:
        return None
    f = flow_of(last[-1], port) or {}
    p = f.get("predictions") or {}
    tr = [x for x in p.get("transfers") or []
          if x.get("predicted_time_s") and x.get("measured_time_s")]
    if not tr:
        return None
    ratios = [x["measured_time_s"] / x["predicted_time_s"] for x in tr]
    lp = [x["predicted_loss"] for x in tr if x.get("predicted_loss") is not None]
    lm = [x["measured_loss"] for x in tr if x.get("measured_loss") is not None]
    keep = ("predicted_rate_bps", "sent_rate_bps", "predicted_time_s", "measured_time_s",
            "predicted_loss", "measured_loss", "rounds")
    return {"n": len(tr), "time_ratio_median": median(ratios),
            "time_ratio_min": min(ratios), "time_ratio_max": max(ratios),
            "loss_predicted_mean": sum(lp) / len(lp) if lp else None,
            "loss_measured_mean": sum(lm) / len(lm) if lm else None,
            "reported": p.get("reported"),
            "transfers": [{key: x.get(key) for key in keep} for x in tr]}


def export(res, outdir, dest):
    """The compact copy of a run's results (see --export)."""
    import shutil
    os.makedirs(dest, exist_ok=True)
    for d in res["runs"]:
        d.pop("daemon_during", None)
        d.pop("rates_pushed", None)
        if d.get("daemon_before"):
            d["daemon_before"].pop("model_stages", None)
    for p in res["per_k"].values():
        if p.get("model_curve"):
            p["model_curve"].pop("curve", None)
    with open(os.path.join(dest, "results.json"), "w") as f:
        json.dump(res, f, separators=(",", ":"))
    for n in ("table.md", "fig4.png"):
        if os.path.exists(os.path.join(outdir, n)):
            shutil.copy(os.path.join(outdir, n), os.path.join(dest, n))


def run_payload(derived, k):
    """The file bytes per datagram the RBUDP runs at k used (the sender's
    payload_bytes: 1456 with protocol versions 2 and 3, 1468 with 1); the
    most common value, None without a completed run."""
    p = [d["payload_bytes"] for d in derived
         if d["k"] == k and d.get("payload_bytes")]
    return max(set(p), key=p.count) if p else None


def rounds_eq3(loss, file_bytes, payload):
    """Rounds (the first blast and the resends) of Banerjee et al.'s
    eq. (2)-(3) (docs/references.md) as solver/rbudp.c counts them with
    seed rounds: every round loses the same fraction l. A reference; the
    model's own rounds come from the solver."""
    if loss is None or loss >= 1 or not payload:
        return None
    if loss <= 0:
        return 1
    return math.ceil(math.log(payload / file_bytes) / math.log(loss)) + 1


def rounds_burst(rate_bps, drain_bps, queue_pkts, file_bytes, payload):
    """Rounds if every round is a deterministic (fluid) burst into a queue of
    queue_pkts drained at the *measured* drain_bps: a burst of n packets at
    rate_bps overflows by n (1 - drain/rate) - K, and the round with no loss
    is the last. The solver's burst rounds are this with the model's own
    capacity and the Markov queue's l and c (docs/model.md §3.2)."""
    if not drain_bps or not queue_pkts or not payload:
        return None
    n, r = math.ceil(file_bytes / payload), 1
    while r < 1000:
        lost = n * max(0.0, 1 - drain_bps / rate_bps) - queue_pkts
        if lost < 1:
            return r
        n, r = math.ceil(lost), r + 1
    return None


def diagnose(k, derived, dv, rates, mc, file_bytes, irq_in_task, ps_count=None):
    """Model inputs against what the runs measured.

    For every fixed run whose first round lost more than 2 % the receiver
    was saturated: the epochs of that run in which its socket dropped show
    the receiver's own cost per packet then (sockets[].cpu_ns_per_pkt of
    the epoch) and the share of its CPU it got (receiver on-CPU time /
    epoch; an epoch the blast covers only in part holds idle time too, so
    at 100 ms one way, where a 0.25 s blast shares its epochs with the
    delays, this share is low, and no per-packet selection removes that:
    it hardly sleeps in the blast and sleeps long after it); the
    receiver's drain rate (receiver JSON, round 1) is the capacity the model
    should have predicted. With processor sharing the model's capacity is
    1 / ((#C + 1) x cpu_ns_per_pkt) packets/s. The drain is also taken per
    epoch, in those epochs in which the receiver hardly slept (>= 400
    packets per wake-up) and had at least 0.9 of its fair share: the
    epochs a full queue covered (almost) whole, so without the blast's
    shallow-queue start that the round's drain includes. PS_COUNT: the
    load's effective count (tests/e2e/loads.py; k for busy loops), whose
    1 / (PS_COUNT + 1) is the receiver's share under the scheduler."""
    if ps_count is None:
        ps_count = k
    sat = []
    for d in derived:
        if (d["k"] != k or d["mode"] != "fixed" or d["tag"] != "main" or d["disturbed"]
                or not d["ok"] or (d.get("loss_first_round") or 0) <= 0.02):
            continue
        for e in d.get("daemon_during") or []:
            so = e.get("sock") or {}
            if not so.get("pkts_out") or not so.get("drops") or so.get("receiver_oncpu_ns") is None:
                continue
            # Without CONFIG_IRQ_TIME_ACCOUNTING the receiver's time holds
            # its part of the interrupt work on its CPU (docs/model.md):
            # its own cost is that time less the CPU's interrupt share.
            irq = (e.get("softirq_frac_recv_cpu") or 0) + (e.get("hardirq_frac_recv_cpu") or 0)
            own = 1 - irq if irq_in_task else 1
            sat.append({"rate_req_bps": d["rate_req_bps"], "epoch": e.get("epoch"),
                        "cpu_ns_per_pkt": so.get("cpu_ns_per_pkt") and so["cpu_ns_per_pkt"] * own,
                        "irq_frac": irq,
                        "share": so["receiver_oncpu_ns"] / 1e9 / e["epoch_s"],
                        "drain_pps": so["pkts_out"] / e["epoch_s"],
                        # Its fair share of the CPU, in the terms its time is in.
                        "fair_share": (1 if irq_in_task else 1 - irq) / (ps_count + 1),
                        "pkts_per_wakeup": so.get("pkts_per_wakeup")})
    drains = [d["rx_rate_round1_bps"] for d in derived
              if d["k"] == k and d["mode"] == "fixed" and d["tag"] == "main" and d["ok"]
              and not d["disturbed"] and (d.get("loss_first_round") or 0) > 0.02
              and d.get("rx_rate_round1_bps")]
    out = {"saturated_epochs": len(sat),
           "cost_ns_saturated": stats([s["cpu_ns_per_pkt"] for s in sat]),
           "share_saturated": stats([s["share"] for s in sat]),
           "irq_frac_saturated": stats([s["irq_frac"] for s in sat]),
           "ps_share": 1.0 / (ps_count + 1),
           "drain_bps_lossy_runs": stats(drains),
           "drain_bps_full_epochs": stats([1472 * 8 * s["drain_pps"] for s in sat
                                           if s["share"] >= 0.9 * s["fair_share"]
                                           and (s["pkts_per_wakeup"] or 0) >= 400]),
           "daemon_cost_ns": dv.get("cpu_ns_per_pkt"),
           "daemon_cpu_bound": dv.get("cpu_bound"),
           "model_rounds": mc.get("rounds") if mc else None}
    if dv.get("capacity_pps"):
        # The capacity the daemon's solve had (the saturated drain where it
        # took one); the cost's beside it.
        out["model_capacity_bps"] = 1472 * 8 * dv["capacity_pps"]
        if dv.get("capacity_cost_pps"):
            out["model_capacity_cost_bps"] = 1472 * 8 * dv["capacity_cost_pps"]
    elif dv.get("cpu_ns_per_pkt") and dv.get("cpu_bound") is not None:
        # Processor sharing; with interrupt time per arrival on the
        # receiver's CPU, the rate it keeps up with (solver/bneck.h).
        pps = 1 / ((dv["cpu_bound"] + 1) * dv["cpu_ns_per_pkt"] * 1e-9)
        irq = dv.get("irq_ns_per_pkt") or 0
        if irq > 0:
            pps = max(pps / (1 + pps * irq * 1e-9), pps * 0.05)
        out["model_capacity_bps"] = 1472 * 8 * pps
    if out["cost_ns_saturated"]["mean"] and dv.get("cpu_ns_per_pkt"):
        out["cost_ratio_daemon_vs_saturated"] = dv["cpu_ns_per_pkt"] / out["cost_ns_saturated"]["mean"]
    if out["drain_bps_lossy_runs"]["mean"] and out.get("model_capacity_bps"):
        out["capacity_ratio_model_vs_measured"] = out["model_capacity_bps"] / out["drain_bps_lossy_runs"]["mean"]
    # Predicted against measured first-round loss, per swept rate.
    if mc and mc.get("at_swept"):
        payload = run_payload(derived, k)
        rows = []
        for p in mc["at_swept"]:
            ls = [d.get("loss_first_round") for d in derived
                  if d["k"] == k and d["mode"] == "fixed" and d["tag"] == "main"
                  and d["rate_req_bps"] == p["rate_bps"] and d["ok"] and not d["disturbed"]]
            runs = [d for d in derived
                    if d["k"] == k and d["mode"] == "fixed" and d["tag"] == "main"
                    and d["rate_req_bps"] == p["rate_bps"] and d["ok"] and not d["disturbed"]]
            drain = out["drain_bps_lossy_runs"]["mean"]
            rows.append({"rate_bps": p["rate_bps"], "loss_model": p["loss"],
                         "time_model_s": p["time_s"], "loss_measured": stats(ls)["mean"],
                         "time_measured_s": stats([d["transfer_time_s"] for d in runs])["mean"],
                         "rounds_measured": stats([d.get("rounds") for d in runs])["mean"],
                         "rounds_eq3": rounds_eq3(p["loss"], file_bytes, payload),
                         # The first blast and the solver's resends, in the daemon's round model.
                         "rounds_model": (1 + p["n_resend"]) if p.get("n_resend") is not None else None,
                         "rounds_burst": rounds_burst(p["rate_bps"], drain, dv.get("queue_pkts"),
                                                      file_bytes, payload)})
        out["loss_model_vs_measured"] = rows
    return out


def fmt(x, f="%.3f", none="–"):
    return none if x is None else f % x


def ci(s, f="%.3f"):
    if not s or not s["n"]:
        return "–"
    if s["ci99"] is None:
        return (f % s["mean"]) + " (n=1)"
    return ("%s [%s, %s]" % (f % s["mean"], f % s["ci99"][0], f % s["ci99"][1]))


HOLDS = {True: "holds", False: "**fails**", None: "n/a"}  # a claim's verdict in the tables


def rate_table(res, ks, title, column, cell):
    """A table with one row per swept rate (Gb/s) and one column per load k:
    the @title line, the heads column % k, and cell(k, i), the text for load
    k at the i-th rate."""
    L = [title, "| rate (Gb/s) | " + " | ".join(column % k for k in ks) + " |",
         "|---|" + "---|" * len(ks)]
    for i, s0 in enumerate(res["per_k"][ks[0]]["sweep"] if ks else []):
        row = ["%.2f" % (s0["rate_bps"] / 1e9)] + [cell(k, i) for k in ks]
        L.append("| " + " | ".join(row) + " |")
    return L


def table_head(res):
    """The title and the run's conditions and counts."""
    m = res["meta"]
    L = []
    L.append("# rxbneck end-to-end experiment\n")
    L.append("File %s, one-way delay %s ms, rcvbuf %s, epoch %s ms, line rate %.2f Gb/s; "
             "%d runs (%d disturbed, kept and repeated; %d failed). Times in s, mean "
             "[99 %% CI].\n" % (m["file_size"], m["one_way_delay_ms"], m["rcvbuf"], m["epoch_ms"],
                                m["line_rate_bps"] / 1e9, res["counts"]["runs"],
                                res["counts"]["disturbed"], res["counts"]["failed"]))
    return L


def table_summary(res, ks, np_):
    """Per k: the best fixed rate; --follow (and --no-pause) against it and the top rate."""
    L = []
    L.append("## Summary per k\n")
    L.append("| k | best fixed rate (Gb/s) | T best | --follow T | follow / best |"
             + (" --no-pause T | no-pause / best |" if np_ else "")
             + " chosen rate (first; round-1 mean) | chosen / best | top-rate loss | T top | follow / top |"
             + (" no-pause / top |" if np_ else ""))
    L.append("|---" * (10 + (3 if np_ else 0)) + "|")
    for k in ks:
        p = res["per_k"][k]
        c = p["claims"]
        b = p["best"]
        cr = c.get("chosen_vs_best_rate", {})
        row = [k, fmt(b and b["rate_bps"] / 1e9, "%.2f"), ci(b and b["time_s"]),
               ci(p["follow"]["time_s"]), fmt(c.get("follow_vs_best", {}).get("ratio"), "%.2f")]
        if np_:
            row += [ci(p["follow_nopause"]["time_s"]),
                    fmt(c.get("nopause_vs_best", {}).get("ratio"), "%.2f")]
        row += ["%s; %s" % (fmt(cr.get("chosen_first_bps") and cr["chosen_first_bps"] / 1e9, "%.2f"),
                            fmt(cr.get("chosen_round1_mean_bps") and cr["chosen_round1_mean_bps"] / 1e9, "%.2f")),
                fmt(cr.get("ratio_first"), "%.2f"),
                fmt(p["top"]["loss_first_round"]["mean"], "%.3f"), ci(p["top"]["time_s"]),
                fmt(c.get("follow_vs_top", {}).get("ratio"), "%.2f")]
        if np_:
            row.append(fmt(c.get("nopause_vs_top", {}).get("ratio"), "%.2f"))
        L.append("| " + " | ".join(str(x) for x in row) + " |")
    return L


def table_claims(res, ks, np_):
    """Per k: whether each claim holds."""
    L = []
    L.append("\n## Claims\n")
    L.append("| k | follow ≤ 1.10 × best |" + (" no-pause ≤ 1.10 × best |" if np_ else "")
             + " follow ≤ 0.75 × top (if top loss > 5 %) |"
             + (" no-pause ≤ 0.75 × top |" if np_ else "") + " chosen within 15 % of best |")
    L.append("|---" * (4 + (2 if np_ else 0)) + "|")
    for k in ks:
        c = res["per_k"][k]["claims"]
        row = [k, HOLDS[c.get("follow_vs_best", {}).get("holds")]]
        if np_:
            row.append(HOLDS[c.get("nopause_vs_best", {}).get("holds")])
        row.append(HOLDS[c.get("follow_vs_top", {}).get("holds")])
        if np_:
            row.append(HOLDS[c.get("nopause_vs_top", {}).get("holds")])
        row.append(HOLDS[c.get("chosen_vs_best_rate", {}).get("holds")])
        L.append("| " + " | ".join(str(x) for x in row) + " |")
    return L


def table_held_out(res, ks):
    """The best fixed rate chosen on held-out repeats, and the lossy runs."""
    L = []
    L.append("\n## The best fixed rate without selection bias\n")
    L.append("Claim 1 compares with the lowest of the sweep's mean T, which the same noisy "
             "runs both choose and judge. *held out*: leave one repeat out, choose the rate "
             "by the other repeats' means, take its T in the one left out "
             "(`held_out_best()`); the rates so chosen.\n")
    L.append("*lossy*: runs whose first round lost anything, with the 95 % upper bound "
             "(Wilson) on the chance of that at the best rate: a clean record of a few "
             "runs allows a large one.\n")
    L.append("| k | T best (min of means) | T best, held out | rates chosen (Gb/s) | follow / best "
             "| follow / best held out | best rate: lossy (chance ≤) | --follow: lossy |")
    L.append("|---|---|---|---|---|---|---|---|")
    for k in ks:
        p = res["per_k"][k]
        h = p.get("best_held_out")
        c = p["claims"].get("follow_vs_best", {})
        b = p["best"] and [s for s in p["sweep"] if s["rate_bps"] == p["best"]["rate_bps"]][0]
        n = b["time_s"]["n"] if b else 0
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k, fmt(c.get("t_best")), ci(h and h["time_s"]),
            " ".join("%.2f" % (x / 1e9) for x in h["rates_bps"]) if h else "–",
            fmt(c.get("ratio"), "%.2f"), fmt(c.get("ratio_held_out"), "%.2f"),
            "%d of %d (%.2f)" % (b["runs_lossy"], n, wilson_upper(b["runs_lossy"], n))
            if n else "–",
            "%d of %d" % (p["follow"]["runs_lossy"], p["follow"]["time_s"]["n"])))
    return L


def table_sweep(res, ks):
    """T and first-round loss per rate and k."""

    def cell(k, i):
        s = res["per_k"][k]["sweep"][i]
        return "%s / %s; %d/%d%s" % (ci(s["time_s"]), fmt(s["loss_first_round"]["mean"], "%.3f"),
                                     s["runs_lossy"], s["time_s"]["n"],
                                     " (%d failed)" % s["failed"] if s["failed"] else "")
    return rate_table(res, ks, "\n## Sweep: T (s) mean [99 % CI] / first-round loss (mean; runs that lost "
                      "anything / runs), per rate\n", "k=%s", cell)


def table_daemon_inputs(res, ks):
    """The daemon's inputs at the --follow runs and the diagnosis, per k."""
    L = []
    L.append("\n## The daemon's inputs at the --follow runs (median) and the diagnosis\n")
    L.append("| k | #C | ns/pkt (ratio; ns/wake-up) | N | K | μ_P-Net (/s) | model rate (Gb/s) | model capacity (Gb/s) "
             "| measured drain when lossy (Gb/s) | drain, full-queue epochs (Gb/s) "
             "| cost/pkt saturated (ns) | CPU share in epochs with drops (PS: %s) |"
             % ("1/(k+1)" if res["meta"].get("load", "busy") == "busy"
                else "1/(C+1), C the effective count of %s" % res["meta"]["load"]))
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in ks:
        p = res["per_k"][k]
        dv, dg = p["daemon_inputs_at_follow"], p["diagnosis"]
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%.3f) |" % (
            k, fmt(dv.get("cpu_bound"), "%.2f"),
            "%s (%s; %s)" % (fmt(dv.get("cpu_ns_per_pkt"), "%.0f"),
                             fmt(dv.get("cpu_ns_per_pkt_ratio"), "%.0f"),
                             fmt(dv.get("cpu_ns_per_wakeup"), "%.0f")),
            fmt(dv.get("pkts_per_wakeup"), "%.1f"),
            "/".join("%d" % q for q in dv.get("queue_pkts_seen") or []) or "–",
            fmt(dv.get("mu_net_per_s"), "%.3g"),
            fmt(dv.get("model_rate_bps") and dv["model_rate_bps"] / 1e9, "%.2f"),
            fmt(dg.get("model_capacity_bps") and dg["model_capacity_bps"] / 1e9, "%.2f"),
            ci(dg["drain_bps_lossy_runs"] if dg["drain_bps_lossy_runs"]["n"] else None, "%.3g")
            if not dg["drain_bps_lossy_runs"]["n"] else
            "%.2f" % (dg["drain_bps_lossy_runs"]["mean"] / 1e9),
            "%.2f (%d)" % (dg["drain_bps_full_epochs"]["mean"] / 1e9, dg["drain_bps_full_epochs"]["n"])
            if dg.get("drain_bps_full_epochs", {}).get("n") else "–",
            fmt(dg["cost_ns_saturated"]["mean"], "%.0f"),
            fmt(dg["share_saturated"]["mean"], "%.3f"), dg["ps_share"]))
    return L


def table_loss_model(res, ks):
    """First-round loss per rate: the model's against the measured."""

    def cell(k, i):
        rows = res["per_k"][k]["diagnosis"].get("loss_model_vs_measured")
        if not rows:
            return "–"
        return "%s / %s" % (fmt(rows[i]["loss_model"], "%.3g"), fmt(rows[i]["loss_measured"], "%.3g"))
    return rate_table(res, ks, "\n## First-round loss: model (daemon's inputs at the follow runs) "
                      "vs measured\n", "k=%s model / measured", cell)


def table_episodes(res, ks):
    """Loss episodes near the knee and the model's rate with them."""
    L = []
    L.append("\n## Loss episodes near the knee, and the model's rate with them\n")
    L.append("Fixed-rate runs whose first blast lost some but less than %d %% of it: the packets "
             "each lost (taken as one episode), and the rate `rxbneckctl model` chooses with the "
             "daemon's inputs at the --follow runs when losses come one by one (as the daemon) "
             "and in episodes of the median size (`--loss-episode-pkts`).\n" % (EPISODE_MAX_LOSS * 100))
    L.append("*daemon's M*: the median episode size rxbneckd measured (rcvbuf drops less than "
             "10 ms apart, bpf/sockq.h) at the --follow starts, the size its solve used (1: one by "
             "one, `[model] loss_episodes = off`), and the model's rate with the measured M.\n")
    L.append("| k | lossy runs / runs at those rates | packets lost (median; all) | model rate one by one (Gb/s) "
             "| with episodes (Gb/s) | / best fixed rate | daemon's M: measured / used | rate with it (Gb/s) / best |")
    L.append("|---|---|---|---|---|---|---|---|")
    for k in ks:
        ep = res["per_k"][k].get("loss_episodes") or {}
        dm = "%s / %s" % (fmt(ep.get("daemon_median_pkts"), "%.0f"), fmt(ep.get("daemon_used_pkts"), "%.0f"))
        dr = "%s / %s" % (fmt(ep.get("model_rate_bps_daemon_m") and ep["model_rate_bps_daemon_m"] / 1e9, "%.2f"),
                          fmt(ep.get("ratio_to_best_daemon_m"), "%.2f"))
        if not ep.get("runs"):
            L.append("| %s | 0 | – | – | – | – | %s | %s |" % (k, dm, dr))
            continue
        L.append("| %s | %d / %d | %s; %s | %s | %s | %s | %s | %s |" % (
            k, ep["runs"], ep["runs_at_those_rates"], fmt(ep["median_pkts"], "%.0f"),
            " ".join("%d" % x for x in ep["pkts"]),
            fmt(ep.get("model_rate_bps_one_by_one") and ep["model_rate_bps_one_by_one"] / 1e9, "%.2f"),
            fmt(ep.get("model_rate_bps") and ep["model_rate_bps"] / 1e9, "%.2f"),
            fmt(ep.get("ratio_to_best"), "%.2f"), dm, dr))
    return L


def table_rounds(res, ks):
    """T and rounds, model against measured, where either loses > 1 %."""
    L = []
    rmodel = next((res["per_k"][k]["diagnosis"].get("model_rounds") for k in ks
                   if res["per_k"][k]["diagnosis"].get("model_rounds")), "burst")
    L.append("\n## Transfer time and rounds: model (%s rounds, as the daemon) vs measured, where either loses > 1 %%\n"
             % rmodel)
    L.append("Rounds counted with the first blast. *model*: 1 + the solver's N_resend at that rate, "
             "the round model of T model; *eq. 3*: Banerjee et al.'s count at the model's loss; *fluid*: "
             "the rounds if each round were a deterministic burst into K packets of buffer "
             "drained at the measured drain rate (with the lossless last one).\n")
    L.append("| k | rate (Gb/s) | loss model / measured | T model / measured (s) | rounds model / eq. 3 / fluid / measured |")
    L.append("|---|---|---|---|---|")
    for k in ks:
        for r in res["per_k"][k]["diagnosis"].get("loss_model_vs_measured") or []:
            if max(r["loss_model"] or 0, r["loss_measured"] or 0) <= 0.01:
                continue
            L.append("| %s | %.2f | %s / %s | %s / %s | %s / %s / %s / %s |" % (
                k, r["rate_bps"] / 1e9, fmt(r["loss_model"], "%.3f"), fmt(r["loss_measured"], "%.3f"),
                fmt(r["time_model_s"]), fmt(r["time_measured_s"]), fmt(r.get("rounds_model"), "%.1f"),
                fmt(r["rounds_eq3"], "%d"), fmt(r["rounds_burst"], "%d"), fmt(r["rounds_measured"], "%.1f")))
    return L


def table_tcp(res, ks):
    """TCP (no added delay) against RBUDP; none without TCP runs."""
    m = res["meta"]
    if not any(res["per_k"][k]["tcp"]["time_s"]["n"] for k in ks):
        return []
    L = []
    L.append("\n## TCP (iperf3 -n, no added delay) vs RBUDP --follow (no added delay) vs RBUDP at %s ms\n"
             % m["one_way_delay_ms"])
    L.append("| k | TCP T (TSO) | TCP T (TSO/GSO off) | RBUDP --follow T, 0 ms | RBUDP --follow T, %s ms | best fixed T, %s ms |"
             % (m["one_way_delay_ms"], m["one_way_delay_ms"]))
    L.append("|---|---|---|---|---|---|")
    for k in ks:
        p = res["per_k"][k]
        L.append("| %s | %s | %s | %s | %s | %s |" % (k, ci(p["tcp"]["time_s"]),
                                                 ci(p["tcp_mtu"]["time_s"]),
                                                 ci(p["follow_no_delay"]["time_s"]),
                                                 ci(p["follow"]["time_s"]),
                                                 ci(p["best"] and p["best"]["time_s"])))
    return L


def table_tcp_delay(res, ks):
    """TCP over the emulated path against RBUDP; none without such runs."""
    m = res["meta"]
    if not any(res["per_k"][k].get("tcp_delay", {}).get("time_s", {}).get("n") for k in ks):
        return []
    L = []
    L.append("\n## TCP over the same emulated path (rxbneck-delayline, RTT %g ms) vs RBUDP at %s ms one way\n"
             % (2 * m["one_way_delay_ms"], m["one_way_delay_ms"]))
    L.append("Ratios are TCP's mean T over RBUDP `--follow`'s (> 1: RBUDP faster).\n")
    L.append("| k | TCP T (TSO) | TCP T (TSO/GSO off) | RBUDP --follow T | best fixed T | TCP / follow | TCP (TSO off) / follow |")
    L.append("|---|---|---|---|---|---|---|")
    for k in ks:
        p = res["per_k"][k]
        f = p["follow"]["time_s"].get("mean")
        def ratio(x):
            x = x["time_s"].get("mean")
            return "%.2f" % (x / f) if x and f else "-"
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            k, ci(p["tcp_delay"]["time_s"]), ci(p["tcp_mtu_delay"]["time_s"]),
            ci(p["follow"]["time_s"]), ci(p["best"] and p["best"]["time_s"]),
            ratio(p["tcp_delay"]), ratio(p["tcp_mtu_delay"])))
    return L


def table_pause(res, allks):
    """RBUDP+ (PAUSE obeyed) against RBUDP; none without such runs."""
    if not any(res["per_k"][k]["pause"]["follow"]["time_s"]["n"] for k in allks):
        return []
    L = []
    L.append("\n## RBUDP+ (--follow, PAUSE obeyed) vs RBUDP (--follow --no-pause)\n")
    L.append("| k | mode | n | T mean [99 % CI] | T sd | first-round loss | rounds | pause time (s) |")
    L.append("|---|---|---|---|---|---|---|---|")
    for k in allks:
        for name, key in (("RBUDP+", "follow"), ("RBUDP", "follow_nopause")):
            s = res["per_k"][k]["pause"][key]
            if not s["time_s"]["n"]:
                continue
            L.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
                k, name, s["time_s"]["n"], ci(s["time_s"]), fmt(s["time_s"]["sd"], "%.4f"),
                ci(s["loss_first_round"], "%.4f"), fmt(s["rounds"]["mean"], "%.2f"),
                fmt(s["pause_time_s"]["mean"], "%.3f")))
    L.append("\n| k | first-round loss RBUDP+ / RBUDP | T sd RBUDP+ / RBUDP | PAUSE lowers loss and spread |")
    L.append("|---|---|---|---|")
    for k in allks:
        c = res["per_k"][k]["claims"].get("pause")
        if c:
            L.append("| %s | %s / %s | %s / %s | %s |" % (
                k, fmt(c["loss_pause"], "%.4f"), fmt(c["loss_nopause"], "%.4f"),
                fmt(c["sd_pause"], "%.4f"), fmt(c["sd_nopause"], "%.4f"),
                HOLDS[c["holds"]] if c["holds"] is not None else "n/a: no PAUSE obeyed"))
    return L


def table_capacity(res, ks):
    """The capacity the daemon used and its record of predictions against outcomes."""
    if not any(res["per_k"][k]["daemon_inputs_at_follow"].get("capacity_starts")
               or res["per_k"][k].get("outcomes") for k in ks):
        return []
    L = []
    L.append("\n## The capacity the daemon used, and its own record of predictions against outcomes\n")
    L.append("*capacity*: stage B's at the --follow starts (median), from the saturated drain at "
             "*drain* of them, the cost's beside it. *record*: rxbneckd's `predictions` "
             "(daemon/model/outcome.h) at the end of the k's transfers: measured / predicted T "
             "(median, range) and the mean first-round loss predicted and measured.\n")
    L.append("| k | capacity (Gb/s) | from the drain | the cost's (Gb/s) | measured drain when lossy (Gb/s) "
             "| record: transfers | T measured / predicted | first-round loss predicted / measured |")
    L.append("|---|---|---|---|---|---|---|---|")
    for k in ks:
        p = res["per_k"][k]
        dv, dg, o = p["daemon_inputs_at_follow"], p["diagnosis"], p.get("outcomes") or {}
        drain = (dg.get("drain_bps_lossy_runs") or {}).get("mean")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k, fmt(dg.get("model_capacity_bps") and dg["model_capacity_bps"] / 1e9, "%.2f"),
            "%s of %s" % (fmt(dv.get("capacity_from_drain"), "%d"), fmt(dv.get("capacity_starts"), "%d")),
            fmt(dg.get("model_capacity_cost_bps") and dg["model_capacity_cost_bps"] / 1e9, "%.2f"),
            fmt(drain and drain / 1e9, "%.2f"), fmt(o.get("n"), "%d"),
            "%s (%s-%s)" % (fmt(o.get("time_ratio_median"), "%.3f"), fmt(o.get("time_ratio_min"), "%.2f"),
                            fmt(o.get("time_ratio_max"), "%.2f")),
            "%s / %s" % (fmt(o.get("loss_predicted_mean"), "%.4f"),
                         fmt(o.get("loss_measured_mean"), "%.4f"))))
    return L


def table(res):
    """table.md of an analysis (results.json): one section a function."""
    # The loads with a sweep or --follow runs (a pause-only run has none).
    allks = sorted(res["per_k"], key=int)
    ks = [k for k in allks if any(s["time_s"]["n"] for s in res["per_k"][k]["sweep"])
          or res["per_k"][k]["follow"]["time_s"]["n"]]
    # --no-pause columns when the passes had them (a tree with a pause predictor).
    np_ = any(res["per_k"][k]["follow_nopause"]["time_s"]["n"] for k in ks)
    L = table_head(res)
    L += table_summary(res, ks, np_)
    L += table_claims(res, ks, np_)
    L += table_held_out(res, ks)
    L += table_sweep(res, ks)
    L += table_daemon_inputs(res, ks)
    L += table_loss_model(res, ks)
    L += table_episodes(res, ks)
    L += table_rounds(res, ks)
    L += table_tcp(res, ks)
    L += table_tcp_delay(res, ks)
    L += table_pause(res, allks)
    L += table_capacity(res, ks)
    return "\n".join(L) + "\n"

def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot", file=sys.stderr)
        return
    ks = sorted(res["per_k"], key=int)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    for i, k in enumerate(ks):
        p = res["per_k"][k]
        c = colors[i % len(colors)]
        pts = [s for s in p["sweep"] if s["time_s"]["n"]]
        x = [s["rate_bps"] / 1e9 for s in pts]
        y = [s["time_s"]["mean"] for s in pts]
        e = [(s["time_s"]["mean"] - s["time_s"]["ci99"][0]) if s["time_s"]["ci99"] else 0 for s in pts]
        ax.errorbar(x, y, yerr=e, color=c, marker="o", ms=3, lw=1.2, capsize=2,
                    label="k=%s fixed" % k)
        f = p["follow"]
        if f["time_s"]["n"]:
            fx = f["rate_round1_mean_bps"]["mean"] / 1e9
            ax.axvline(fx, color=c, ls=":", lw=1.2)
            ax.plot([fx], [f["time_s"]["mean"]], marker="*", ms=12, color=c, mec="k",
                    label="k=%s --follow" % k)
        f = p["follow_nopause"]
        if f["time_s"]["n"]:
            ax.plot([f["rate_round1_mean_bps"]["mean"] / 1e9], [f["time_s"]["mean"]], marker="D",
                    ms=6, color=c, mec="k", label="k=%s --follow --no-pause" % k)
        lm = p["diagnosis"].get("loss_model_vs_measured")
        lx = [s["rate_bps"] / 1e9 for s in pts]
        ly = [s["loss_first_round"]["mean"] for s in pts]
        bx.plot(lx, ly, color=c, marker="o", ms=3, lw=1.2, label="k=%s measured" % k)
        if lm:
            bx.plot([r["rate_bps"] / 1e9 for r in lm], [r["loss_model"] for r in lm], color=c,
                    ls="--", lw=1, label="k=%s model" % k)
    m = res["meta"]
    ax.set_xlabel("sending rate (Gb/s of UDP payload)")
    ax.set_ylabel("transfer time (s)")
    ax.set_title("%s file, %g ms one-way delay: fixed rates (mean, 99 %% CI);\n"
                 "dotted: rate rxbneckd chose; star: --follow, diamond: --no-pause" % (m["file_size"], m["one_way_delay_ms"]),
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    bx.set_xlabel("sending rate (Gb/s)")
    bx.set_ylabel("first-round loss")
    bx.set_title("first-round loss: measured (solid) vs model (dashed)", fontsize=9)
    bx.grid(alpha=0.3)
    bx.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print("plot: %s" % path, file=sys.stderr)


if __name__ == "__main__":
    main()
