#!/usr/bin/python3
"""The windows loss model against fixed-rate transfers under loads that are
not busy loops (docs/fidelity.md §4: the rule, and the verdict this prints).

    fidelity_windows.py extract RUNDIR... > DATA.json
    fidelity_windows.py [--build DIR] [--data DATA.json] [--check | --write]

extract: from run.sh output directories (runs.jsonl, status.jsonl and
analyze.py's results.json), one compact record per undisturbed, completed
fixed-rate transfer of the main sweep: the load, the rate, its first-round
loss, the daemon's stage-B inputs before it (daemon_before) and the off-CPU
windows the daemon measured in the epochs that overlap the transfer's
first blast (as the sender timed it; each epoch's own histograms,
sockets[].receiver in status.jsonl, summed; rates = windows / the blast's
time): the windows after preemption, the mean run those ended,
and the waits for the CPU after a wake-up and the longest of them (where
the daemon measured it); and how many of
those epochs dropped packets without any window of about 1 ms or more.

The default (the rule of docs/fidelity.md §4.3): per transfer, rxbneckctl
model --loss-model windows with --offcpu-windows, --wake-windows (and
--wake-max-ms where the data have the longest wait) and the
mean run as --offcpu-gap-ms (and --loss-model queue, for comparison) at
those inputs with burst rounds; the stage loss at the transfer's rate is
its predicted first-round loss. --gap mean (a diagnosis) gives the model
1/rate less the mean window as the time between windows instead. Per (load, rate):
the measured mean first-round loss and the mean prediction. The model
passes when, for every load, predicted / measured lies in [0.5, 2] at every
rate whose measured mean is at least 0.5 %. --check exits 1 when
docs/fidelity.md's table differs; --write puts it there. Exit 1 when the
data or rxbneckctl cannot be read.
"""
import argparse
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fidelity  # noqa: E402

SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(HERE, "results", "offwin", "windows.json")
BEGIN = "<!-- table windows: tests/e2e/fidelity_windows.py -->"
LOSS_MIN, LOSS_LO, LOSS_HI = 0.005, 0.5, 2.0
LONG_SLOT = 20  # 2^20 ns, about 1 ms: a window much shorter loses nothing here
INPUTS = ("cpu_bound", "mu_net_per_s", "pkts_per_wakeup", "queue_pkts",
          "irq_ns_per_pkt", "mu_net_full_per_s", "model_loss_episode_pkts")


def blast_windows(status, port, b0, b1):
    """The off-CPU windows the daemon measured in the epochs that overlap
    the first blast [b0, b1] (CLOCK_MONOTONIC s; each epoch's own counts,
    sockets[].receiver.offcpu_hist_log2_ns and wake_hist_log2_ns, which a
    daemon before them lacks: ValueError): (windows per second of
    the blast, {slot: count}, epochs, the mean run the windows ended, s,
    epochs in which the socket dropped packets without any window of
    LONG_SLOT or more (after preemption or a wake-up), epochs that dropped,
    wake-up waits per second of the blast, their {slot: count}, the longest
    of them in s: 0 when no epoch measured it)."""
    hist, n, np_, run, neps, bare, lossy = {}, 0.0, 0, 0.0, 0, 0, 0
    wake, nw, wake_max = {}, 0.0, 0.0
    for s in status:
        if not (b0 < s["end_ns"] / 1e9 and s["start_ns"] / 1e9 < b1):
            continue
        socks = [k for k in s["sockets"] if k["port"] == port]
        fl = [f for f in s["flows"] if f.get("port") == port]
        if not fl or not socks:
            continue
        r = socks[0].get("receiver") or {}
        if "offcpu_hist_log2_ns" not in r:
            raise ValueError("status epoch %s has no sockets[].receiver.offcpu_hist_log2_ns "
                             "(a daemon older than the per-epoch window histograms)" % s["seq"])
        if r["offcpu_hist_log2_ns"] is None:
            continue
        off, wk = r["offcpu_hist_log2_ns"], r["wake_hist_log2_ns"]
        neps += 1
        p, rb = r.get("preemptions") or 0, r.get("run_before_preempt_ns")
        if p and rb:
            np_ += p
            run += p * rb
        if (socks[0].get("drops") or 0) > 0:
            lossy += 1
            bare += not any(int(k) >= LONG_SLOT for k in list(off) + list(wk))
        for slot, c in off.items():
            hist[slot] = hist.get(slot, 0.0) + c
            n += c
        for slot, c in wk.items():
            wake[slot] = wake.get(slot, 0.0) + c
            nw += c
        wake_max = max(wake_max, (r.get("wake_max_ns") or 0.0) / 1e9)
    return (n / (b1 - b0), hist, neps, (run / np_ / 1e9 if np_ else 0.0), bare, lossy,
            nw / (b1 - b0), wake, wake_max)


def extract(dirs):
    out = []
    for d in dirs:
        res = json.load(open(os.path.join(d, "results.json")))
        status = [json.loads(line) for line in open(os.path.join(d, "status.jsonl"))]
        meta = res["meta"]
        for u in res["runs"]:
            if u["mode"] != "fixed" or u.get("tag") != "main" or u["disturbed"] \
                    or not u.get("ok") or u.get("loss_first_round") is None \
                    or not u.get("daemon_before"):
                continue
            raw = next(json.loads(line) for line in open(os.path.join(d, "runs.jsonl"))
                       if abs(json.loads(line)["t_start_mono"] - u["t_start_mono"]) < 1e-6)
            port = int(raw["recv"]["local"].rsplit(":", 1)[1])
            r1 = raw["send"]["per_round"][0]
            b0 = raw["send"]["t0_mono_ns"] / 1e9 + r1["start_s"]
            per_s, hist, neps, gap_s, bare, lossy, wake_per_s, wake, wake_max = \
                blast_windows(status, port, b0, b0 + r1["blast_time_s"])
            out.append({
                "load": "%s x%d" % (meta["load"], u["k"]), "rate_bps": u["rate_req_bps"],
                "loss_first_round": u["loss_first_round"], "k": u["k"],
                "transfer_time_s": u["transfer_time_s"],
                "inputs": {x: u["daemon_before"].get(x) for x in INPUTS},
                "windows_per_s": round(per_s, 3), "windows_hist": hist, "epochs": neps,
                "wake_per_s": round(wake_per_s, 3), "wake_hist": wake,
                "wake_max_s": wake_max,
                # The testbed's receiver reads a UDP socket (docs/model.md §2.2).
                "queue_release_pkts": (u["daemon_before"].get("queue_pkts") or 0) // 4,
                "run_before_preempt_s": gap_s, "lossy_epochs_without_window": bare,
                "lossy_epochs": lossy,
                "file_size": meta["file_size"], "one_way_delay_ms": meta["one_way_delay_ms"]})
    json.dump(out, sys.stdout, indent=0, sort_keys=True)
    print()
    return 0


def spec(per_s, hist):
    return "%.6g/" % per_s + ",".join(
        "%s:%.6g" % (s, c) for s, c in sorted(hist.items(), key=lambda x: int(x[0])))


def predict(ctl, t, model, gap, point=False, alone=False):
    """The stage loss at the transfer's rate (point: the whole curve point,
    loss and time_s; alone: the receiver as if it had its CPU to itself
    between its windows, --cpu-bound 0)."""
    dv = dict(t["inputs"])
    if alone:
        dv["cpu_bound"] = 0
    meta = {"file_size": t["file_size"], "one_way_delay_ms": t["one_way_delay_ms"],
            "line_rate_bps": t["rate_bps"] * 1.0001}
    extra = ["--min-rate-bps", "%d" % t["rate_bps"], "--points", "2"]
    if model in ("windows", "service"):
        extra += ["--offcpu-windows", spec(t["windows_per_s"], t["windows_hist"]),
                  "--wake-windows", spec(t["wake_per_s"], t["wake_hist"])]
        if t.get("wake_max_s", 0) > 0:
            extra += ["--wake-max-ms", "%.6g" % (t["wake_max_s"] * 1e3)]
        if t.get("queue_release_pkts", 0) > 0:
            extra += ["--queue-release-pkts", "%.6g" % t["queue_release_pkts"]]
        if t.get("episodes_from_windows") and model == "service":
            extra += ["--episodes-from-windows"]
        if gap == "run" and t["run_before_preempt_s"] > 0:
            extra += ["--offcpu-gap-ms", "%.6g" % (t["run_before_preempt_s"] * 1e3)]
    c = fidelity.solve(ctl, dv, meta, model, extra)["curve"][0]
    return c if point else c["loss"]


def long_share(hist):
    """The share of a {slot: count} histogram at LONG_SLOT or more."""
    n = sum(hist.values())
    return sum(c for k, c in hist.items() if int(k) >= LONG_SLOT) / n if n else 0.0


def rows_of(ctl, data, gap):
    groups = {}
    for t in data:
        groups.setdefault((t["load"], t["rate_bps"]), []).append(t)
    rows = []
    for (load, rate), ts in sorted(groups.items()):
        n = len(ts)
        meas = sum(t["loss_first_round"] for t in ts) / n
        pw = sum(predict(ctl, t, "windows", gap) for t in ts) / n
        pq = sum(predict(ctl, t, "queue", gap) for t in ts) / n
        wps = sum(t["windows_per_s"] for t in ts) / n
        wake = sum(t["wake_per_s"] for t in ts) / n
        wake_long = sum(t["wake_per_s"] * long_share(t["wake_hist"]) for t in ts) / n
        bare = sum(t["lossy_epochs_without_window"] for t in ts)
        lossy_eps = sum(t["lossy_epochs"] for t in ts)
        judged = meas >= LOSS_MIN
        ratio = pw / meas if meas > 0 else None
        rows.append({"load": load, "rate_gbps": rate / 1e9, "n": n,
                     "lossy": sum(t["loss_first_round"] > 0 for t in ts),
                     "bare": bare, "lossy_epochs": lossy_eps,
                     "measured": meas, "windows": pw, "queue": pq, "windows_per_s": wps,
                     "wake_per_s": wake, "wake_long_per_s": wake_long,
                     "ratio": ratio, "judged": judged,
                     "pass": (not judged) or (LOSS_LO <= ratio <= LOSS_HI)})
    return rows


def table(rows):
    out = ["| load | rate Gb/s | measured first-round loss (lossy of n) | windows after "
           "preemption /s | wake-up waits /s (of them >= 1 ms) | lossy epochs without a "
           "window >= 1 ms | `windows`: loss, ratio | `queue`: loss |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "–" if r["ratio"] is None else ("**%.2f**" if r["judged"] else "%.2f") % r["ratio"]
        out.append("| %s | %.2f | %.4f (%d of %d) | %.1f | %.0f (%.2f) | %d of %d | %.4f, %s "
                   "| %.2g |" % (
            r["load"], r["rate_gbps"], r["measured"], r["lossy"], r["n"],
            r["windows_per_s"], r["wake_per_s"], r["wake_long_per_s"], r["bare"], r["lossy_epochs"], r["windows"], ratio, r["queue"]))
    fails = ["%s %.2f Gb/s x%.2f" % (r["load"], r["rate_gbps"], r["ratio"])
             for r in rows if not r["pass"]]
    out.append("")
    out.append("Ratios in bold are judged (measured loss >= 0.5 %%: within [%.1f, %.0f])." %
               (LOSS_LO, LOSS_HI))
    out.append("")
    out.append("windows %s" % ("passes" if not fails else "fails: " + "; ".join(fails)))
    return "\n".join(out)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "extract":
        return extract(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--gap", choices=("mean", "run"), default="run",
                    help="the time between windows: the mean run a preemption ended "
                    "(the daemon's, the rule's), or 1/rate less the mean window")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    ctl = os.path.join(a.build, "rxbneckctl")
    try:
        data = json.load(open(a.data))
        made = table(rows_of(ctl, data, a.gap))
        if (a.check or a.write) and a.gap != "run":
            ap.error("--check and --write take the rule's run (--gap run)")
        if a.check or a.write:
            return fidelity.check_or_write(fidelity.DOC, made, a.write, BEGIN)
    except (fidelity.Failure, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("fidelity_windows.py: %s" % e, file=sys.stderr)
        return 1
    print(made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
