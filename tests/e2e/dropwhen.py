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
how many. Then the medians, against K and K/λ; how many episodes began
after a preemption (R: it left its CPU runnable, behind a backlog) and
while it was still off it; and its windows off the CPU by how it left,
preempted or asleep: how many, how many a second over the listing, their
median and longest; and its stretches behind its backlog (at least
BEHIND_MIN_CYCLES preempted cycles in a row, each with drops): how many,
how many packets a second it read in them by the wall clock and on the
CPU. First, over the whole listing, its runs on the CPU by how they ended
and its time on the CPU per packet read (printed also when nothing was
dropped). Exit 1 when the listing has no drop or no run of the receiver.
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


def arrivals(ev):
    """The arrival events' times and the packets arrived before each:
    cum[i] packets came before rxt[i], cum[-1] in all."""
    rxt = [t for t, _ in ev["rx"]]
    cum = [0]
    for _, n in ev["rx"]:
        cum.append(cum[-1] + n)
    return rxt, cum


def analyse(ev):
    """One dict per episode that follows a switch-out of the receiver."""
    outs = [t for t, _ in ev["out"]]
    rxt, cum = arrivals(ev)
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


def preempted(state):
    """Whether a switch-out's prev_state says the receiver was still
    runnable ("R", "R+" on a preemption), not asleep or blocked."""
    return state.startswith("R")


def off_cpu(ev):
    """[(index of its next switch-in in ev['in'], switch-out, state)]: each
    switch-out of the receiver that has a switch-in after it."""
    out = []
    for t, state in ev["out"]:
        j = bisect.bisect_right(ev["in"], t)
        if j < len(ev["in"]):
            out.append((j, t, state))
    return out


def runs(ev):
    """{'R': [s], 'S': [s]}: the receiver's runs on its CPU, from each
    switch-in to its next switch-out, by how the run ended (preempted, R;
    asleep, S or any other state). A switch-in with no switch-out after
    it (the listing ended) is left out."""
    outs = [t for t, _ in ev["out"]]
    out = {"R": [], "S": []}
    for t in ev["in"]:
        i = bisect.bisect_right(outs, t)
        if i < len(outs):
            out["R" if preempted(ev["out"][i][1]) else "S"].append(outs[i] - t)
    return out


def report_cost(ev):
    """The receiver's time on its CPU over the whole listing against the
    packets it read (all arrivals less all drops), whatever state it was
    in: its mean cost per packet read."""
    r = runs(ev)
    _, cum = arrivals(ev)
    got = cum[-1] - len(ev["drop"])
    on = sum(r["R"]) + sum(r["S"])
    print("over the listing: %d runs on its CPU that ended asleep (%.2f s), %d preempted "
          "(%.2f s); %d packets arrived, %d dropped: %s" % (
              len(r["S"]), sum(r["S"]), len(r["R"]), sum(r["R"]), cum[-1], len(ev["drop"]),
              "%.0f ns on its CPU a packet read" % (on / got * 1e9) if got > 0
              else "nothing read"))


def windows(ev):
    """{'R': [s], 'S': [s]}: the receiver's windows off its CPU, from each
    switch-out to its next switch-in, by how it left (preempted, R, while
    runnable; asleep, S or any other state), and the span in seconds from
    its first switch event to its last."""
    out = {"R": [], "S": []}
    for j, t, state in off_cpu(ev):
        out["R" if preempted(state) else "S"].append(ev["in"][j] - t)
    times = [t for t, _ in ev["out"]] + ev["in"]
    return out, (max(times) - min(times)) if times else 0.0


BEHIND_MIN_CYCLES = 3	# cycles in a row for a stretch behind the backlog


def behind(ev):
    """The receiver's stretches behind its backlog: runs of at least
    BEHIND_MIN_CYCLES cycles in a row (a cycle: a run on its CPU, then the
    window off it up to the next run) each of which ended in a preemption
    with drops in the window after it, so the queue was full by each run's
    start and the run read all it could. [(cycles, run_s, off_s,
    arrivals, drops)], one per stretch, from its first run's start to its last
    window's end: the packets it read are the arrivals less the drops
    (the queue's level at the two ends, at most K each, aside)."""
    rxt, cum = arrivals(ev)

    def count(times, a, b):
        return bisect.bisect_left(times, b) - bisect.bisect_left(times, a)

    cycles = [(ev["in"][j - 1], t_out, ev["in"][j], state)
              for j, t_out, state in off_cpu(ev) if j > 0]
    # Each cycle begins where the one before it ended.
    out, cur = [], []
    for c in sorted(cycles) + [None]:
        if c is not None and preempted(c[3]) and count(ev["drop"], c[1], c[2]) > 0:
            cur.append(c)
            continue
        if len(cur) >= BEHIND_MIN_CYCLES:
            a, b = cur[0][0], cur[-1][2]
            out.append((len(cur), sum(x[1] - x[0] for x in cur), sum(x[2] - x[1] for x in cur),
                        cum[bisect.bisect_left(rxt, b)] - cum[bisect.bisect_left(rxt, a)],
                        count(ev["drop"], a, b)))
        cur = []
    return out


def report_windows(rows, ev):
    """The episodes that began after a preemption, and the windows."""
    pre = [r for r in rows if preempted(r["state"])]
    off = [r for r in pre if not r["running"]]
    print("  after a preemption: %d episodes, %d of them while it was off its CPU%s" % (
        len(pre), len(off), ", median %.2f ms after it left" % (
            statistics.median(r["asleep_s"] for r in off) * 1e3) if off else ""))
    win, span = windows(ev)
    for kind, what in (("R", "preempted"), ("S", "asleep")):
        w = win[kind]
        print("  its windows off the CPU, %s: %d%s" % (what, len(w), (
            " (%.1f a second), median %.2f ms, longest %.2f ms" % (
                len(w) / span, statistics.median(w) * 1e3, max(w) * 1e3))
            if w and span > 0 else ""))
    st = behind(ev)
    if st:
        n = sum(x[0] for x in st)
        run_s = sum(x[1] for x in st)
        off_s = sum(x[2] for x in st)
        got = sum(x[3] - x[4] for x in st)
        print("  behind its backlog: %d stretches of %d or more preempted cycles with drops, "
              "%d cycles (runs %.2f ms, windows %.2f ms on average); arrivals %.0f a second, "
              "read %.0f a second of the stretches, %.0f a second on its CPU (%s)" % (
                  len(st), BEHIND_MIN_CYCLES, n, run_s * 1e3 / n, off_s * 1e3 / n,
                  sum(x[3] for x in st) / (run_s + off_s), got / (run_s + off_s), got / run_s,
                  "%.0f ns a packet" % (run_s / got * 1e9) if got > 0 else "nothing read"))


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
    if ev["in"]:
        report_cost(ev)
    if not ev["drop"] or not ev["in"]:
        print("dropwhen.py: no drop or no run of %s in %s" % (argv[2], argv[1]),
              file=sys.stderr)
        return 1
    rows = analyse(ev)
    report(rows, float(argv[4]), int(argv[5]))
    report_windows(rows, ev)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
