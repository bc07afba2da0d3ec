#!/usr/bin/python3
"""When the receiver's socket drops packets, against its waits for the CPU
(docs/model.md §2.2: the queue's release after a wait).

    dropwhen.py LISTING PID DEV RATE_BPS QUEUE_PKTS

LISTING is `perf script -F cpu,time,event,trace` of sched:sched_switch,
sched:sched_wakeup, net:netif_receive_skb and skb:kfree_skb (receive-buffer
drops only) on every CPU; PID the receiving thread, DEV the receiver's
interface (its netif_receive_skb events are the arrivals), RATE_BPS the
sending rate and QUEUE_PKTS the queue K in packets.

Drops less than 1 ms apart make one episode. Per episode: how the
receiver last left its CPU before the first drop (S: asleep on its empty
socket), how long before the drop that was, the packets that arrived in
between (each event's length in packets of at most 1500 bytes), and
whether it was back on its CPU when the drops began: then the wait
from its wake-up to running, how long the drops went on after it ran, and
how many. Then the medians, against K and K/λ. Exit 1 when the listing
has no drop or no run of the receiver.
"""
import bisect
import re
import statistics
import sys

EPISODE_GAP_S = 1e-3
LINE = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)")


def parse(lines, pid, dev):
    """{'out': [(t, state)], 'wake': [t], 'in': [t], 'drop': [t],
    'rx': [(t, pkts)]}, times in seconds, each list in time order."""
    ev = {"out": [], "wake": [], "in": [], "drop": [], "rx": []}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        t, kind, rest = float(m.group(2)), m.group(3), m.group(4)
        if kind == "sched:sched_switch":
            if int(re.search(r"prev_pid=(\d+)", rest).group(1)) == pid:
                ev["out"].append((t, re.search(r"prev_state=(\S+)", rest).group(1)))
            if int(re.search(r"next_pid=(\d+)", rest).group(1)) == pid:
                ev["in"].append(t)
        elif kind == "sched:sched_wakeup":
            if int(re.search(r" pid=(\d+)", " " + rest).group(1)) == pid:
                ev["wake"].append(t)
        elif kind == "skb:kfree_skb":
            ev["drop"].append(t)
        elif kind == "net:netif_receive_skb" and re.search(r"dev=%s\b" % re.escape(dev), rest):
            n = int(re.search(r"len=(\d+)", rest).group(1))
            ev["rx"].append((t, (n + 1499) // 1500))
    for v in ev.values():
        v.sort()
    return ev


def episodes(drops):
    """[(first, last, count)] of drops less than EPISODE_GAP_S apart."""
    out = []
    for t in drops:
        if out and t - out[-1][1] <= EPISODE_GAP_S:
            out[-1] = (out[-1][0], t, out[-1][2] + 1)
        else:
            out.append((t, t, 1))
    return out


def analyse(ev):
    """One dict per episode that follows a switch-out of the receiver."""
    outs = [t for t, _ in ev["out"]]
    rxt = [t for t, _ in ev["rx"]]
    cum = [0]
    for _, n in ev["rx"]:
        cum.append(cum[-1] + n)
    rows = []
    for t0, t1, n in episodes(ev["drop"]):
        i = bisect.bisect_right(outs, t0) - 1
        if i < 0:
            continue
        t_out, state = ev["out"][i]
        j = bisect.bisect_right(ev["in"], t0) - 1
        back = j >= 0 and ev["in"][j] > t_out
        w = bisect.bisect_right(ev["wake"], t_out)
        t_wake = ev["wake"][w] if w < len(ev["wake"]) and ev["wake"][w] <= t0 else None
        row = {"state": state, "asleep_s": t0 - t_out, "drops": n,
               "pkts": cum[bisect.bisect_right(rxt, t0)] - cum[bisect.bisect_right(rxt, t_out)],
               "running": back, "wait_s": None, "after_run_s": None}
        if back and t_wake is not None:
            row["wait_s"] = ev["in"][j] - t_wake
            row["after_run_s"] = t1 - ev["in"][j]
        rows.append(row)
    return rows


def report(rows, rate_bps, queue_pkts):
    fill_ms = queue_pkts * 1472 * 8 / rate_bps * 1e3
    slept = [r for r in rows if r["state"] == "S"]
    run = [r for r in slept if r["running"] and r["wait_s"] is not None]
    print("drop episodes: %d, %d of them after the receiver slept on its socket; "
          "K = %d packets, K/lambda = %.2f ms" % (len(rows), len(slept), queue_pkts, fill_ms))
    if slept:
        print("  packets arrived from its sleep to the first drop: median %.0f (%d-%d)" % (
            statistics.median(r["pkts"] for r in slept), min(r["pkts"] for r in slept),
            max(r["pkts"] for r in slept)))
        print("  its sleep to the first drop: median %.2f ms" % (
            statistics.median(r["asleep_s"] for r in slept) * 1e3))
    print("  back on its CPU when the drops began: %d of %d" % (len(run), len(slept)))
    if run:
        print("    their waits: %.2f to %.2f ms (K/lambda less the wait: %.2f to %.2f ms); "
              "drops went on %.2f to %.2f ms after it ran" % (
                  min(r["wait_s"] for r in run) * 1e3, max(r["wait_s"] for r in run) * 1e3,
                  fill_ms - max(r["wait_s"] for r in run) * 1e3,
                  fill_ms - min(r["wait_s"] for r in run) * 1e3,
                  min(r["after_run_s"] for r in run) * 1e3,
                  max(r["after_run_s"] for r in run) * 1e3))


def main(argv):
    if len(argv) != 6:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        ev = parse(f, int(argv[2]), argv[3])
    if not ev["drop"] or not ev["in"]:
        print("dropwhen.py: no drop or no run of %s in %s" % (argv[2], argv[1]),
              file=sys.stderr)
        return 1
    report(analyse(ev), float(argv[4]), int(argv[5]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
