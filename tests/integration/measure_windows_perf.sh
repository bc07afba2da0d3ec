#!/usr/bin/env bash
# The receiver's off-CPU windows as the sched probe reports them, against
# perf sched: the kernel's own scheduler events recorded by a second tool,
# not the project's probes.
#
# Load: rxbneck-recv on CPU 1 with two busy loops there, 40 MB transfers
# at 3 Gb/s from CPU 0 back to back over a veth pair; rxbneckd
# --measure-only (500 ms epochs) and `perf record -k CLOCK_MONOTONIC`
# (the clock of the epochs' start_ns/end_ns) of the scheduler's switches
# and wake-ups (the tracepoints the probe reads too) run together
# (measure_busy_receiver, measure.inc). From perf's events each window is
# timed as the probe defines it (perfsched.py): after a preemption
# (switched out runnable) to the switch-in; after a sleep in S from the
# first sched_wakeup to the switch-in (perf sched timehist times it from
# the last sched_waking instead, which a wake-up repeated before the
# receiver ran makes shorter); both count it when the run after it ends.
#
# Checked, for each epoch in which the receiver slept and woke
# (sockets[].receiver.wake_max_ns):
#  - the probe's longest wait lies between perf's longest of the waits
#    whose run ended at least 20 ms inside the epoch and perf's longest of
#    those that ended within 20 ms of it (the reader ends an epoch a little
#    after end_ns), less 10 µs and plus 30 µs: the probe times the
#    wake-up and the switch-in at the same tracepoints as perf, but reads
#    the clock in its own handler (on the project's VM the probe's wait
#    was 0-4 µs longer than perf's in most epochs, up to 3 µs shorter in
#    some); where it missed the wakeup's switch-in (a wakeup before the
#    probe saw the receiver) it takes the run's switch-out less its
#    on-CPU time by the kernel's runtime counter: a few µs early, or late
#    by what that counter leaves out of the run (steal on a VM);
#  - the busy loops made real waits: the longest is 0.5 ms or more in at
#    least half of the epochs (else the check above would be about noise).
# And each log2 slot's windows (offcpu_slot_mean_ns / _sd_ns and the wake_
# pair), the probe's per-epoch counts and moments pooled over the epochs,
# perf's windows over the same span, for each slot of 2^17 ns (131 µs) or
# more with at least 30 windows by both (after preemption and after a
# wake-up alike; the shorter ones lose no packets, and the two tools'
# few-µs difference in timing moves µs-long ones across a slot's edge):
#  - the counts agree within 10 % + 5 (the span's two ends);
#  - the probe's mean lies within 2 % + 20 µs of perf's, and its standard
#    deviation within 20 % + 50 µs of perf's (the probe sums squares in
#    µs²);
#  - some slot compared holds windows of a millisecond or more.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_windows_perf 2 "sched sockq" ip perf stress-ng taskset
measure_pair meas-wperf 10.252.7
measure_busy_receiver measure_windows_perf 10.252.7

python3 - "$tmp" "$port" "$rpid" "$(dirname "$0")" <<'PY'
import json, math, sys
tmp, port, rpid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[4])
import perfsched
M, BELOW, ABOVE = 20e6, 10e3, 30e3	# ns

# The receiver's windows from perf, each with the time of the switch-out
# that ends the run after it (when the probe counts it).
kinds = {"offcpu": [], "wake": []}
for t, kind, w in perfsched.windows(perfsched.receiver_events(tmp + "/events.txt", rpid)):
    kinds[kind].append((t, w))
wakes = kinds["wake"]

# 1. The longest wait after a wake-up, per epoch.
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

# 2. Each slot's count, mean and spread: the probe's counts and sums per
# slot, pooled over the epochs.
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

checked, long_ones = 0, 0
print("kind    slot   probe n  mean ms    sd ms |  perf n  mean ms    sd ms")
for k, wins in kinds.items():
    perf = {}
    for t, w in wins:
        if span[0] < t <= span[1] and w > 0:
            perf.setdefault(int(math.log2(w)), []).append(w)
    for slot in sorted(set(perf) | set(probe[k])):
        n, s1, s2 = probe[k].get(slot, [0.0, 0.0, 0.0])
        pw = perf.get(slot, [])
        if slot < 17 or n < 30 or len(pw) < 30:
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
