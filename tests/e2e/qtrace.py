#!/usr/bin/env python3
"""qtrace.py: the receiver's socket queue, traced every half millisecond.

    qtrace.py poll PORT OUT [--interval-us US] [--wait-s S]
    qtrace.py cycles [--json] TRACE...

poll: wait up to S seconds (default 5) for a process named rxbneck-recv,
then until it exits write one line per sample to OUT:

    t_ns  run_ns  queue_bytes  drops

t_ns is CLOCK_MONOTONIC; run_ns the receiver's CPU time so far
(/proc/PID/schedstat, which the kernel brings up to date at each tick and
context switch only, so it moves in steps of up to a tick while the task
runs); queue_bytes and drops are the UDP socket's on PORT in /proc/net/udp
(rx_queue: the memory its queued packets hold, truesize; drops: packets it
refused). The socket must be in the namespace this runs in. The poller
costs a few per cent of one CPU: pin it beside the sender, not the
receiver.

cycles: split each trace into the receiver's scheduling cycles and count
them, and the packets lost in them, by their length in ticks. A cycle runs
from one peak of the queue (the receiver starts reading) to the next: the
receiver's turn on the CPU, then its wait while others run and the queue
fills. Without HRTICK a task is preempted at a tick only, so on a HZ=250
kernel (--tick-ms 4) with K CPU-bound tasks beside it, a receiver that
keeps up wakes, reads for a fraction of a tick and sleeps: cycles of one or
two ticks. One that has used up its share runs a whole tick and waits for
the K others' ticks: cycles of K + 1 ticks, with packets still queued at
their lowest (docs/e2e.md §2, §4).

Exit status: 0, 1 on a bad trace or no receiver, 2 on usage.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time


def find_receiver(wait_s):
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        for comm in glob.glob("/proc/[0-9]*/comm"):
            try:
                with open(comm) as f:
                    if f.read().strip() == "rxbneck-recv":
                        return comm.split("/")[2]
            except OSError:
                pass
        time.sleep(0.002)
    return None


def udp_queue(fh, port_hex):
    """(rx_queue bytes, drops) of the UDP socket bound to the port, or None."""
    fh.seek(0)
    for line in fh.read().splitlines()[1:]:
        f = line.split()
        if len(f) >= 13 and f[1].endswith(":" + port_hex):
            return int(f[4].split(":")[1], 16), int(f[12])
    return None


def cmd_poll(a):
    if not 0 < a.port < 65536:
        print("qtrace: port %d out of range" % a.port, file=sys.stderr)
        return 2
    pid = find_receiver(a.wait_s)
    if pid is None:
        print("qtrace: no rxbneck-recv within %.1f s" % a.wait_s, file=sys.stderr)
        return 1
    port_hex = "%04X" % a.port
    n = 0
    with open(a.out, "w") as out, open("/proc/net/udp") as udp:
        while True:
            t = time.monotonic_ns()
            try:
                with open("/proc/%s/schedstat" % pid) as f:
                    run_ns = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                break		# the receiver is gone
            q = udp_queue(udp, port_hex)
            if q is not None:
                out.write("%d %d %d %d\n" % (t, run_ns, q[0], q[1]))
                n += 1
            time.sleep(a.interval_us / 1e6)
    return 0 if n else 1


def load(path):
    rows = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            p = line.split()
            if len(p) != 4:
                raise ValueError("%s:%d: expected 4 fields, got %d" % (path, no, len(p)))
            rows.append([int(x) for x in p])
    return rows


def cycles(rows):
    """The cycles between the queue's peaks while it held anything."""
    busy = [i for i, r in enumerate(rows) if r[2] > 0]
    if len(busy) < 3:
        return []
    a, b = busy[0], busy[-1]
    peaks = [i for i in range(a + 1, b)
             if rows[i][2] >= rows[i - 1][2] and rows[i + 1][2] < rows[i][2]]
    out = []
    for p0, p1 in zip(peaks, peaks[1:]):
        seg = rows[p0:p1 + 1]
        out.append({
            "len_ms": (rows[p1][0] - rows[p0][0]) / 1e6,
            "ran_ms": (rows[p1][1] - rows[p0][1]) / 1e6,
            "peak_bytes": rows[p1][2],
            "min_bytes": min(r[2] for r in seg),
            "drops": rows[p1][3] - rows[p0][3],
        })
    return out


def summarize(path, tick_ms):
    """Cycles and drops by the cycle's length in ticks (rounded)."""
    cyc = cycles(load(path))
    by = {}
    for c in cyc:
        t = max(1, int(round(c["len_ms"] / tick_ms)))
        b = by.setdefault(t, {"ticks": t, "n": 0, "ran_ms": [], "left_bytes": [], "drops": 0})
        b["n"] += 1
        b["ran_ms"].append(c["ran_ms"])
        b["left_bytes"].append(c["min_bytes"])
        b["drops"] += c["drops"]
    rows = []
    for t in sorted(by):
        b = by[t]
        rows.append({"ticks": t, "cycles": b["n"],
                     "ran_ms_median": statistics.median(b["ran_ms"]),
                     "left_bytes_median": statistics.median(b["left_bytes"]),
                     "drops": b["drops"]})
    return {"trace": os.path.basename(path), "cycles": len(cyc),
            "drops": sum(c["drops"] for c in cyc), "by_ticks": rows}


def cmd_cycles(a):
    out = []
    for path in a.trace:
        try:
            out.append(summarize(path, a.tick_ms))
        except (OSError, ValueError) as e:
            print("qtrace: %s" % e, file=sys.stderr)
            return 1
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print("Per trace, per cycle length in %g-ms ticks: cycles, the receiver's CPU time "
          "(median, ms), the queue left at the cycle's lowest (median, kB), drops." % a.tick_ms)
    total = {}
    for s in out:
        cells = []
        for r in s["by_ticks"]:
            cells.append("%d: %d, %.1f, %.0f, %d" % (r["ticks"], r["cycles"], r["ran_ms_median"],
                                                    r["left_bytes_median"] / 1e3, r["drops"]))
            t = total.setdefault(r["ticks"], [0, 0])
            t[0] += r["cycles"]
            t[1] += r["drops"]
        print("%-24s %s" % (s["trace"][:24], " | ".join(cells) or "no cycles"))
    all_drops = sum(t[1] for t in total.values())
    print("all: " + " | ".join("%d ticks: %d cycles, %d drops (%.0f %%)" % (
        t, total[t][0], total[t][1], 100.0 * total[t][1] / all_drops if all_drops else 0)
        for t in sorted(total)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("poll", help="trace the receiver's socket queue and CPU time")
    p.add_argument("port", type=int)
    p.add_argument("out")
    p.add_argument("--interval-us", type=float, default=400)
    p.add_argument("--wait-s", type=float, default=5)
    c = sub.add_parser("cycles", help="the receiver's cycles in traces, and their losses")
    c.add_argument("--json", action="store_true")
    c.add_argument("--tick-ms", type=float, default=4.0, help="the kernel's tick (HZ=250: 4)")
    c.add_argument("trace", nargs="+")
    a = ap.parse_args()
    return cmd_poll(a) if a.cmd == "poll" else cmd_cycles(a)


if __name__ == "__main__":
    sys.exit(main())
