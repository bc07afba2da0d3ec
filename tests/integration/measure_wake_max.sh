#!/usr/bin/env bash
# The longest wait for the CPU after a wake-up, per epoch
# (sockets[].receiver.wake_max_ns), against perf sched: the kernel's own
# scheduler events recorded by a second tool, not the project's probes.
#
# Load: rxbneck-recv on CPU 1 with two busy loops there, 40 MB transfers
# at 3 Gb/s from CPU 0 back to back over a veth pair; rxbneckd
# --measure-only (500 ms epochs) and `perf record -k CLOCK_MONOTONIC`
# (the clock of the epochs' start_ns/end_ns) of the scheduler's switches
# and wake-ups (the tracepoints the probe reads too) run together. From perf's events, each wait is timed as the probe defines
# it: from the first sched_wakeup after the receiver fell asleep (S) to
# its switch-in; and both count it when that run ends (its switch-out).
# (perf sched timehist times it from the last sched_waking instead, which
# a wake-up repeated before the receiver ran makes shorter.)
#
# Checked, for each epoch in which the receiver slept and woke:
#  - the probe's longest wait lies between perf's longest of the waits
#    whose run ended at least 20 ms inside the epoch and perf's longest of
#    those that ended within 20 ms of it (the reader ends an epoch a little
#    after end_ns), less 2 µs and plus 30 µs: the probe times the
#    switch-in at the switch itself, as perf does, but where it missed the
#    wakeup's switch-in (a wakeup before the probe saw the receiver) it
#    takes the run's switch-out less its on-CPU time by the kernel's
#    runtime counter, a few µs early;
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

perf record -k CLOCK_MONOTONIC -a -e sched:sched_switch -e sched:sched_wakeup \
	-o "$tmp/sched.data" -- sleep 7 > /dev/null 2> "$tmp/perf.err" &
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
wait $perf || { echo "measure_wake_max: perf record failed: $(tail -2 "$tmp/perf.err")" >&2; exit 1; }
perf script --ns -F cpu,time,event,trace -i "$tmp/sched.data" > "$tmp/events.txt" 2> /dev/null ||
	{ echo "measure_wake_max: perf script failed" >&2; exit 1; }

python3 - "$tmp" "$port" "$rpid" <<'PY'
import json, re, sys
tmp, port, rpid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
M, BELOW, ABOVE = 20e6, 2e3, 30e3	# ns

# The receiver's switch-outs (time, state), switch-ins and wake-ups, in ns.
outs, ins, woken = [], [], []
for line in open(tmp + "/events.txt"):
    m = re.match(r"\s*\[\d+\]\s+(\d+)\.(\d+):\s+(\S+):\s+(.*)", line)
    if not m:
        continue
    t = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
    ev, rest = m.group(3), m.group(4)
    if ev == "sched:sched_switch":
        if int(re.search(r"prev_pid=(\d+)", rest).group(1)) == rpid:
            outs.append((t, re.search(r"prev_state=(\S+)", rest).group(1)))
        if int(re.search(r"next_pid=(\d+)", rest).group(1)) == rpid:
            ins.append(t)
    elif ev == "sched:sched_wakeup" and int(re.search(r"\bpid=(\d+)", rest).group(1)) == rpid:
        woken.append(t)
# Each run after a sleep in S: the wait from the first wake-up to the
# switch-in, counted at the run's switch-out.
events = sorted([(t, "out", st) for t, st in outs] + [(t, "in", None) for t in ins] +
                [(t, "wake", None) for t in woken])
wakes, state, first, wait = [], None, None, None
for t, kind, st in events:
    if kind == "out":
        if wait is not None:
            wakes.append((t, wait))
        state, first, wait = st, None, None
    elif kind == "wake":
        if state == "S" and first is None:
            first = t
    elif state == "S" and first is not None:
        wait = t - first
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
    if not (inner - BELOW <= p <= outer + ABOVE):
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
