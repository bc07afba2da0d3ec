#!/usr/bin/env bash
# The longest wait for the CPU after a wake-up, per epoch
# (sockets[].receiver.wake_max_ns), against perf sched: the kernel's own
# scheduler events recorded by a second tool, not the project's probes.
#
# Load: rxbneck-recv on CPU 1 with two busy loops there, 40 MB transfers
# at 3 Gb/s from CPU 0 back to back over a veth pair; rxbneckd
# --measure-only (500 ms epochs) and `perf sched record -k
# CLOCK_MONOTONIC` (the clock of the epochs' start_ns/end_ns) run
# together. perf sched timehist prints a line each time the receiver
# leaves its CPU, with the wait before that run; the probe counts a wait
# when that run ends too, so both put it in the same epoch.
#
# Checked, for each epoch in which the receiver slept and woke:
#  - the probe's longest wait lies between perf's longest of the waits
#    whose run ended at least 20 ms inside the epoch and perf's longest of
#    those that ended within 20 ms of it (the reader ends an epoch a little
#    after end_ns), 5 µs either way (timehist prints microseconds);
#  - the busy loops made real waits: the longest is 0.5 ms or more in at
#    least half of the epochs (else the check above would be about noise).
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_wake_max 2 "sched sockq" ip perf stress-ng taskset
recv=$build/rxbneck-recv send=$build/rxbneck-send
[ -x "$recv" ] && [ -x "$send" ] || { echo "measure_wake_max: no $recv or $send" >&2; exit 1; }

measure_pair meas-wmax 10.252.7
port=$((30000 + $$ % 30000))

stress-ng --cpu 2 --taskset 1 --timeout 30s --quiet &
pids+=($!)
ip netns exec $ns_b taskset -c 1 "$recv" --port $port --listen 10.252.7.2 --discard \
	--cpu 1 --rcvbuf 4Mi --count 0 --quiet > /dev/null 2> "$tmp/recv.err" &
pids+=($!)
sleep 1
rpid=$(pgrep -n -f "rxbneck-recv --port $port --listen 10.252.7.2") ||
	{ echo "measure_wake_max: no receiver: $(cat "$tmp/recv.err")" >&2; exit 1; }

perf sched record -k CLOCK_MONOTONIC -o "$tmp/sched.data" -- sleep 7 \
	> /dev/null 2> "$tmp/perf.err" &
perf=$!
pids+=($perf)
sleep 0.5
"$daemon" --measure-only --epochs 10 --interval-ms 500 --watch-port $port --json \
	> "$tmp/meas.json" 2> "$tmp/daemon.err" &
mp=$!
pids+=($mp)
end=$((SECONDS + 6))
while [ $SECONDS -lt $end ]; do
	ip netns exec $ns_a taskset -c 0 "$send" --to 10.252.7.2 --port $port \
		--size 40M --rate 3000000000 --quiet > /dev/null 2> "$tmp/send.err" ||
		{ echo "measure_wake_max: transfer failed: $(tail -2 "$tmp/send.err")" >&2; exit 1; }
done
wait $mp || { echo "measure_wake_max: rxbneckd failed: $(tail -3 "$tmp/daemon.err")" >&2; exit 1; }
wait $perf || { echo "measure_wake_max: perf sched record failed: $(tail -2 "$tmp/perf.err")" >&2; exit 1; }
perf sched timehist -i "$tmp/sched.data" -p "$rpid" --state > "$tmp/timehist.txt" 2> /dev/null ||
	{ echo "measure_wake_max: perf sched timehist failed" >&2; exit 1; }

python3 - "$tmp" "$port" <<'PY'
import json, sys
tmp, port = sys.argv[1], int(sys.argv[2])
M, TOL = 20e6, 5e3			# ns

# (switch-out time ns, sch delay ns, state) of each receiver run.
runs = []
for line in open(tmp + "/timehist.txt"):
    f = line.split()
    if len(f) < 7 or not f[0][0].isdigit():
        continue
    try:
        runs.append((float(f[0]) * 1e9, float(f[-3]) * 1e6, f[-1]))
    except ValueError:
        pass
# A run after a sleep in S: its sch delay is a wait after a wake-up.
wakes = [(cur[0], cur[1]) for prev, cur in zip(runs, runs[1:]) if prev[2] == "S"]
if not wakes:
    sys.exit("FAIL: perf saw no wake-up of the receiver")

def longest(lo, hi):
    return max([w for t, w in wakes if lo < t < hi], default=0.0)

ok, n, real = True, 0, 0
print("epoch   probe ms   perf inside ms   perf around ms")
for line in open(tmp + "/meas.json"):
    d = json.loads(line)
    s = next((x for x in d["sockets"] if x["port"] == port), None)
    if s is None or s["receiver"]["wake_max_ns"] is None or not s["receiver"]["wake_waits"]:
        continue
    p = s["receiver"]["wake_max_ns"]
    inner = longest(d["start_ns"] + M, d["end_ns"] - M)
    outer = longest(d["start_ns"] - M, d["end_ns"] + M)
    print("%5d   %8.3f   %14.3f   %14.3f" % (d["seq"], p / 1e6, inner / 1e6, outer / 1e6))
    n += 1
    real += p >= 0.5e6
    if not (inner - TOL <= p <= outer + TOL):
        print("FAIL epoch %d: the probe's longest wait %.3f ms is not within "
              "perf's [%.3f, %.3f] ms" % (d["seq"], p / 1e6, inner / 1e6, outer / 1e6))
        ok = False
if n < 5:
    sys.exit("FAIL: only %d epochs with the receiver's wake-ups (5 needed)" % n)
if real * 2 < n:
    print("FAIL: the longest wait was 0.5 ms or more in %d of %d epochs only" % (real, n))
    ok = False
print("%d epochs compared, %d with waits of 0.5 ms or more; perf saw %d wake-ups"
      % (n, real, len(wakes)))
sys.exit(0 if ok else 1)
PY
