#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Which threads ran on one CPU, measured without the daemon.

    cpu_threads.py CPU SECONDS [PID|COMM...]
        the share of CPU's time over SECONDS that threads other than the
        PIDs' and those named COMM ran on it (one number, 0.000-1.000);
    cpu_threads.py CPU SECONDS --top N
        the N threads that ran most on CPU over SECONDS (comm/tid:share).

Each thread's time on a CPU comes from /proc/PID/task/TID/schedstat (ns)
and counts when the thread was on CPU at either end (its `processor`), so
a thread that floats between CPUs counts whole or not at all. The idle
exits of a CPU that a receiver keeps waking (5-30 % of it in a VM) are in
no thread and do not count. Used by the integration tests' cpu_foreign
(daemon_lib.inc) and by shape_iperf_udp.sh to say what kept a CPU busy.
"""
import os
import sys
import time


def threads(pids, names):
    """(pid, tid) -> (ns on a CPU, processor, comm) of every thread now."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit() or p in pids:
            continue
        try:
            tids = os.listdir("/proc/%s/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                run = int(open("/proc/%s/task/%s/schedstat" % (p, t)).read().split()[0])
                st = open("/proc/%s/task/%s/stat" % (p, t)).read()
                on = int(st[st.rindex(")") + 2:].split()[36])
            except (OSError, ValueError, IndexError):
                continue
            comm = st[st.index("(") + 1:st.rindex(")")]
            if comm not in names:
                out[(p, t)] = (run, on, comm)
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cpu, secs, rest = int(argv[1]), float(argv[2]), argv[3:]
    top = int(rest[1]) if rest[:1] == ["--top"] and len(rest) == 2 else 0
    if top:
        rest = []
    pids = {a for a in rest if a.isdigit()} | {str(os.getpid())}
    names = {a for a in rest if not a.isdigit()}
    t0, a = time.monotonic_ns(), threads(pids, names)
    time.sleep(secs)
    t1, b = time.monotonic_ns(), threads(pids, names)
    ran = sorted(((rb - a.get(k, (0, -1))[0], comm, k[1]) for k, (rb, on, comm) in b.items()
                  if on == cpu or a.get(k, (0, -1, ""))[1] == cpu), reverse=True)
    if top:
        print(" ".join("%s/%s:%.2f" % (comm, tid, ns / (t1 - t0)) for ns, comm, tid in ran[:top]))
    else:
        print("%.3f" % (sum(ns for ns, _, _ in ran) / (t1 - t0)))


if __name__ == "__main__":
    main(sys.argv)
