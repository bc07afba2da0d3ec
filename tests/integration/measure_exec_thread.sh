#!/usr/bin/env bash
# A thread that calls execve() while it is not its group's leader takes the
# leader's tid (de_thread()); its own tid is never switched out again and
# /proc forgets it. The scheduler probe's record of it said "woken, waiting
# for a CPU"; charged as runnable from then on, it would hold an idle
# CPU at #C 1 as long as the daemon runs.
#
# Truth: the process is gone one second after it started. In every epoch
# that begins after that, the vanished tid must weigh nothing on any CPU,
# and CPU 1's #C, less what the record attributes to other tasks (other
# work on this machine), must be below 0.5.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need measure_exec_thread 2 "sched" taskset

tmp=$(mktemp -d /tmp/rxbt-exec.XXXXXX)
dp=
cleanup() {
	[ -n "$dp" ] && kill "$dp" 2>/dev/null && wait "$dp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

"$daemon" --measure-only --epochs 10 --interval-ms 500 --json --tasks \
	> "$tmp/epochs.jsonl" 2> "$tmp/daemon.err" &
dp=$!
# Let the probes attach and the first epoch pass.
for _ in $(seq 50); do
	[ -s "$tmp/epochs.jsonl" ] && break
	sleep 0.1
done
[ -s "$tmp/epochs.jsonl" ] || { echo "measure_exec_thread: no epoch from rxbneckd" >&2; cat "$tmp/daemon.err" >&2; exit 1; }

# On CPU 1: a second thread sleeps (so its record is a wakeup), then execs
# a short sleep; the process is gone about 0.5 s later.
taskset -c 1 python3 - "$tmp/tid" <<'PY'
import os, sys, threading, time
def run():
    with open(sys.argv[1], "w") as f:
        f.write("%d %d\n" % (threading.get_native_id(), os.getpid()))
    time.sleep(0.2)
    os.execv("/bin/sleep", ["sleep", "0.3"])
threading.Thread(target=run).start()
time.sleep(5)
PY
gone=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
wait "$dp"
rc=$?
dp=
[ $rc -eq 0 ] || { echo "measure_exec_thread: rxbneckd exited $rc" >&2; cat "$tmp/daemon.err" >&2; exit 1; }

python3 - "$tmp" "$gone" <<'PY'
import json, sys
tmp, gone_ns = sys.argv[1], int(sys.argv[2])
tid, pid = (int(x) for x in open(tmp + "/tid").read().split())
if tid == pid:
    print("measure_exec_thread: the thread is the leader?"); sys.exit(1)
ok, after = True, 0
print("exec'ing thread %d of process %d; epochs starting after it was gone:" % (tid, pid))
print(" epoch  cpu1 #C  others on cpu1  the vanished tid")
for line in open(tmp + "/epochs.jsonl"):
    e = json.loads(line)
    if e["start_ns"] < gone_ns + 200_000_000:
        continue
    after += 1
    cpu1 = [c["cpu_bound"] for c in e["cpus"] if c["cpu"] == 1][0]
    mine = others = 0.0
    for t in e.get("tasks") or []:
        w = sum(x["w"] for x in t["weights"] if x["cpu"] == 1) if t["class"] == "cpu" else 0.0
        if t["tid"] == tid:
            mine += sum(x["w"] for x in t["weights"])
        else:
            others += w
    print("%6d  %7.2f  %14.2f  %15.2f" % (e["seq"], cpu1, others, mine))
    if mine > 0.01 or cpu1 - others >= 0.5:
        ok = False
if after < 3:
    print("measure_exec_thread: only %d epochs after the process was gone" % after); sys.exit(1)
print("measure_exec_thread: %s" % ("passed" if ok else "FAILED: a gone task still counts"))
sys.exit(0 if ok else 1)
PY
