#!/usr/bin/env bash
# Each log2 slot's mean window and spread (sockets[].receiver.
# offcpu_slot_mean_ns / _sd_ns and wake_slot_*), against perf sched: the
# kernel's own scheduler events recorded by a second tool.
#
# Load: rxbneck-recv on CPU 1 with two busy loops there, 40 MB transfers
# at 3 Gb/s from CPU 0 back to back over a veth pair; rxbneckd
# --measure-only (500 ms epochs) and `perf record -k CLOCK_MONOTONIC` of
# the switches and wake-ups run together. From perf's events each window
# is timed as the probe defines it: after a preemption (switched out
# runnable) to the switch-in; after a sleep in S from the first wake-up to
# the switch-in. The probe's per-epoch counts and moments are pooled over
# the epochs, perf's windows over the same span (from the first epoch's
# start to the last one's end).
#
# Checked, for each slot with at least 30 windows by both counts (of the
# receiver's windows after preemption and its waits after a wake-up):
#  - the counts agree within 10 % + 5 (the span's two ends, and the probe's
#    reader ends an epoch a little after end_ns);
#  - the probe's mean lies within 2 % + 20 µs of perf's, and its standard
#    deviation within 20 % + 50 µs of perf's;
#  - the busy loops made windows of a millisecond or more in some slot
#    checked (else the check would be about noise).
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_slot_moments 2 "sched sockq" ip perf stress-ng taskset
recv=$build/rxbneck-recv send=$build/rxbneck-send
[ -x "$recv" ] && [ -x "$send" ] || { echo "measure_slot_moments: no $recv or $send" >&2; exit 1; }

measure_pair meas-mom 10.252.9
port=$((30000 + $$ % 30000))

stress-ng --cpu 2 --taskset 1 --timeout 30s --quiet &
pids+=($!)
ip netns exec $ns_b taskset -c 1 "$recv" --port $port --listen 10.252.9.2 --discard \
	--cpu 1 --rcvbuf 4Mi --count 0 --quiet > /dev/null 2> "$tmp/recv.err" &
pids+=($!)
sleep 1
rpid=$(pgrep -n -f "rxbneck-recv --port $port --listen 10.252.9.2") ||
	{ echo "measure_slot_moments: no receiver: $(cat "$tmp/recv.err")" >&2; exit 1; }

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
	ip netns exec $ns_a taskset -c 0 "$send" --to 10.252.9.2 --port $port \
		--size 40M --rate 3000000000 --quiet > /dev/null 2> "$tmp/send.err" ||
		{ echo "measure_slot_moments: transfer failed: $(tail -2 "$tmp/send.err")" >&2; exit 1; }
done
wait $mp || { echo "measure_slot_moments: rxbneckd failed: $(tail -3 "$tmp/daemon.err")" >&2; exit 1; }
wait $perf || { echo "measure_slot_moments: perf record failed: $(tail -2 "$tmp/perf.err")" >&2; exit 1; }
perf script --ns -F cpu,time,event,trace -i "$tmp/sched.data" > "$tmp/events.txt" 2> /dev/null ||
	{ echo "measure_slot_moments: perf script failed" >&2; exit 1; }

python3 - "$tmp" "$port" "$rpid" <<'PY'
import json, math, re, sys
tmp, port, rpid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

# The receiver's windows from perf, each with the time of the switch-out
# that ends the run after it (when the probe counts it).
events = []
for line in open(tmp + "/events.txt"):
    m = re.match(r"\s*\[\d+\]\s+(\d+)\.(\d+):\s+(\S+):\s+(.*)", line)
    if not m:
        continue
    t = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
    ev, rest = m.group(3), m.group(4)
    if ev == "sched:sched_switch":
        if int(re.search(r"prev_pid=(\d+)", rest).group(1)) == rpid:
            events.append((t, "out", re.search(r"prev_state=(\S+)", rest).group(1)))
        if int(re.search(r"next_pid=(\d+)", rest).group(1)) == rpid:
            events.append((t, "in", None))
    elif ev == "sched:sched_wakeup" and int(re.search(r"\bpid=(\d+)", rest).group(1)) == rpid:
        events.append((t, "wake", None))
events.sort()
kinds = {"offcpu": [], "wake": []}
state, t_out, first, win = None, None, None, None
for t, kind, st in events:
    if kind == "out":
        if win is not None:
            kinds[win[0]].append((t, win[1]))
        state, t_out, first, win = st, t, None, None
    elif kind == "wake":
        if state == "S" and first is None:
            first = t
    elif state is not None and state.startswith("R") and t_out is not None:
        win = ("offcpu", t - t_out)
    elif state == "S" and first is not None:
        win = ("wake", t - first)

# The probe's counts and sums per slot, pooled over the epochs.
probe = {k: {} for k in kinds}
span = [None, None]
for line in open(tmp + "/meas.json"):
    d = json.loads(line)
    s = next((x for x in d["sockets"] if x["port"] == port), None)
    if s is None or s["receiver"]["offcpu_hist_log2_ns"] is None:
        continue
    span[0] = d["start_ns"] if span[0] is None else span[0]
    span[1] = d["end_ns"]
    r = s["receiver"]
    for k in kinds:
        for slot, n in r[k + "_hist_log2_ns"].items():
            m = r[k + "_slot_mean_ns"].get(slot, 0.0)
            sd = r[k + "_slot_sd_ns"].get(slot, 0.0)
            c = probe[k].setdefault(int(slot), [0.0, 0.0, 0.0])
            c[0] += n
            c[1] += n * m
            c[2] += n * (sd * sd + m * m)
if span[0] is None:
    sys.exit("FAIL: no epoch saw the receiver")

ok, checked, long_ones = True, 0, 0
print("kind    slot   probe n  mean ms    sd ms |  perf n  mean ms    sd ms")
for k, wins in kinds.items():
    perf = {}
    for t, w in wins:
        if span[0] < t <= span[1] and w > 0:
            perf.setdefault(int(math.log2(w)), []).append(w)
    for slot in sorted(set(perf) | set(probe[k])):
        n, s1, s2 = probe[k].get(slot, [0.0, 0.0, 0.0])
        pw = perf.get(slot, [])
        if n < 30 or len(pw) < 30:
            continue
        pm = sum(pw) / len(pw)
        psd = math.sqrt(max(sum(w * w for w in pw) / len(pw) - pm * pm, 0.0))
        m = s1 / n
        sd = math.sqrt(max(s2 / n - m * m, 0.0))
        print("%-6s %5d %9.0f %8.3f %8.3f | %7d %8.3f %8.3f" %
              (k, slot, n, m / 1e6, sd / 1e6, len(pw), pm / 1e6, psd / 1e6))
        checked += 1
        long_ones += pm >= 1e6
        if abs(n - len(pw)) > 0.1 * len(pw) + 5:
            print("FAIL %s slot %d: %d windows by the probe, %d by perf" % (k, slot, n, len(pw)))
            ok = False
        if abs(m - pm) > 0.02 * pm + 20e3:
            print("FAIL %s slot %d: mean %.3f ms, perf's %.3f ms" % (k, slot, m / 1e6, pm / 1e6))
            ok = False
        if abs(sd - psd) > 0.2 * psd + 50e3:
            print("FAIL %s slot %d: sd %.3f ms, perf's %.3f ms" % (k, slot, sd / 1e6, psd / 1e6))
            ok = False
if checked == 0 or long_ones == 0:
    print("FAIL: %d slots compared, %d of windows of 1 ms or more" % (checked, long_ones))
    ok = False
sys.exit(0 if ok else 1)
PY
