#!/usr/bin/env bash
# The headline behaviour: a sender subscribed through librxbneck
# (rxbneck-watch) gets a lower RATE within about an epoch of two CPU hogs
# starting on the receiving thread's CPU.
#
# UDP traffic on loopback: an iperf3 server pinned to CPU 1 (the receiver),
# an iperf3 client pinned to CPU 0 at a fixed 400 Mb/s; rxbneckd watches the
# port with 250 ms epochs and pushes RATE every epoch (push_every_epochs=1)
# so the series is dense. Then `stress-ng --cpu 2 --taskset 1`. Checked:
#  - before: a modelled rate (not provisional), #C on the receiver's CPU ~0;
#  - after: #C ~2 in status, and the rate down by well over a third (the
#    model's receiver capacity falls to 1/(#C+1) of its own);
#  - latency from starting the hogs to the first RATE that dropped, in
#    epochs: at most 2 (the epoch the hogs start in is partly loaded).
# Other engineers' builds share this 2-CPU machine outside the heavy-test
# lock. Whether other work ran on CPU 1 is measured without the daemon
# (cpu_foreign: the time other threads than the receiver and the hogs ran
# on CPU 1):
# a measurement starts once that has stayed low for about 2 s, and one
# disturbed by other work (over 0.10 of CPU 1 in the 1.5 s before the
# hogs or with them) or by the hypervisor (the receiver's cost per
# packet, polled every 0.2 s, ranging over more than 35 % in the windows
# before and with the hogs) is repeated (up to 4 times, then the test
# skips). On an undisturbed CPU 1 a #C off before (>= 0.7) or with the
# hogs (outside 1.7-2.6) is the daemon's error.
# NET_PROBE_EVERY=N ([measure] net_probe_every, here 1): the same with the
# per-packet probes attached one epoch in N (daemon_rate_hogs_sampled.sh):
# #C comes from every epoch, so the rate must follow as fast. Learning is
# off (net_probe_learn_s = 0): the hogs would otherwise turn every epoch's
# probes on, and this is about the epochs without them.
. "$(dirname "$0")/daemon_lib.inc"

command -v stress-ng >/dev/null || skip "stress-ng not installed"
command -v iperf3 >/dev/null || skip "iperf3 not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
WATCH=$B/rxbneck-watch
[ -x "$WATCH" ] || die "build first: $WATCH"
EPOCH_MS=250
NET_EVERY=${NET_PROBE_EVERY:-1}
P=$(free_port)

write_conf "$T/d.conf" "[measure] interval_ms = $EPOCH_MS" "[measure] watch_ports = $P" \
	"[measure] net_probe_every = $NET_EVERY" "[measure] net_probe_learn_s = 0" \
	"[control] push_every_epochs = 1"
pin_shell_cpu0
start_daemon "$T/d.conf"

bg taskset -c 1 iperf3 -s -p "$P" -1 >/dev/null 2>&1
RECV=$!
sleep 0.5
bg taskset -c 0 iperf3 -u -c 127.0.0.1 -p "$P" -b 400M -l 1468 -t 600 >/dev/null 2>&1
# The subscriber: every RATE line with the wall-clock time it arrived. It
# announces a 200 ms RTT, the e2e's path: a resend round then costs enough
# that the fastest transfer sends at about the receiver's capacity. With
# RTT 0 a resend round costs nothing (seen once: 3.29 -> 4.29 Gb/s with 2
# hogs); with 20 ms the modelled T was within 2 % from 6.8 to 8.4 Gb/s
# (loss 7-24 %), the rate chosen wandered over that flat stretch and the
# ratio with the hogs came out 0.38-0.78.
bg bash -c "'$WATCH' -p $CPORT -r 200000 -s 1468 -f 1000000000 $P | \
	python3 -u -c 'import sys, time
for l in sys.stdin: print(\"%.6f %s\" % (time.time(), l.rstrip()), flush=True)' > '$T/rates.txt'"

# Traffic first: wait for modelled rates (the inputs need packets).
for _ in $(seq 100); do
	st=$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"][0]["state"])')
	[ "$st" = model ] && break
	sleep 0.1
done
[ "$st" = model ] || die "no modelled rate with traffic after 10 s (state $st): $(ctl status)"
# stage_b_input NAME: the flow's stage B model input NAME now (None if
# missing).
stage_b_input() {
	ctl status --json | python3 -c 'import json,sys
print(json.load(sys.stdin)["flows"][0]["inputs"]["stage_b"][sys.argv[1]]["value"])' "$1"
}

# One measurement: a quiet CPU 1 first (other engineers' builds share this
# machine outside the heavy-test lock), then the hogs. Exit status of the
# check: 0 pass, 1 fail, 3 disturbed by other work (retry).
attempt() {
	# The receiver's cost per packet as the daemon uses it, every 0.2 s
	# (on CPU 0, as the whole test: pin_shell_cpu0).
	( while :; do
		echo "$(date +%s.%N) $(stage_b_input cpu_ns_per_pkt)"
		sleep 0.2
	  done > "$T/cost.txt" 2>/dev/null ) &
	local poller=$!
	_bg_pids+=($poller)
	wait_quiet 6 30 cpu_foreign 1 0.25 "$RECV" ||
		{ log "CPU 1 not quiet within 30 s"; kill $poller; return 3; }
	local pre post
	pre=$(cpu_foreign 1 1.5 "$RECV") || return 1
	ctl status --json > "$T/before.json"
	T0=$(date +%s.%N)
	stress-ng --cpu 2 --taskset 1 --timeout 6s --quiet &
	local hogs=$!
	_bg_pids+=($hogs)
	sleep 2.5
	post=$(cpu_foreign 1 2.5 "$RECV" "$hogs" $(pgrep -P "$hogs")) || return 1
	ctl status --json > "$T/after.json"
	ctl status > "$T/after.txt"
	check_status_text "traffic and 2 hogs"
	wait $hogs
	kill $poller 2>/dev/null; wait $poller 2>/dev/null
	log "status with the hogs:"; sed -n '/^Flow/,/RATE/p' "$T/after.txt" >&2
	log "$(grep -c " RATE " "$T/rates.txt") RATE lines so far; last: $(tail -1 "$T/rates.txt")"
	python3 - "$T/rates.txt" "$T0" "$EPOCH_MS" "$T/before.json" "$T/after.json" "$NET_EVERY" \
		"$T/cost.txt" "$pre" "$post" <<'PY'
import json, statistics, sys
lines = [l.split() for l in open(sys.argv[1]) if " RATE " in l]
t0, epoch_s = float(sys.argv[2]), float(sys.argv[3]) / 1000
before, after = json.load(open(sys.argv[4])), json.load(open(sys.argv[5]))
series = [(float(l[0]), float(l[5]), int(l[14], 16)) for l in lines]   # time, rate, flags
pre = [r for t, r, f in series if t0 - 1.5 <= t < t0]
post = [r for t, r, f in series if t0 + 2.5 <= t < t0 + 5]
fb, fa = before["flows"][0], after["flows"][0]
cb = fb["inputs"]["stage_b"]["cpu_bound"]["value"]
ca = fa["inputs"]["stage_b"]["cpu_bound"]["value"]
other_pre, other_post = float(sys.argv[8]), float(sys.argv[9])
print(f"other work on CPU 1: {other_pre:.3f} of it before the hogs, {other_post:.3f} with them "
      f"(#C before {cb}, with the hogs {ca})")
if other_pre > 0.10 or other_post > 0.10:
    print("disturbed by other work on CPU 1")
    sys.exit(3)
assert cb is not None and cb < 0.7, f"#C {cb} on CPU 1 before the hogs, with no other work there"
assert ca is not None and 1.7 <= ca <= 2.6, f"two hogs are not #C ~ 2: {ca}"
# The receiver's capacity is 1/(#C+1) of 1/(its cost per packet). That
# cost is measured too: its medians before and with the hogs enter the
# expected fall. Under a busy hypervisor it ranged by 20-30 % within the
# windows, more at times (4754 -> 3492 ns between two snapshots), and once
# (CI) the rate rose from 2463 to 2890 Mb/s with #C 2.00 for a few seconds
# and was back at 1945 with the fitted 2398 ns at t0 + 5 s - presumably
# the saturated cost of the receiver behind the hogs for a while. A cost
# ranging by more than 35 % says nothing about #C: measure again.
cost = []
for l in open(sys.argv[7]):
    w = l.split()
    if len(w) == 2 and w[1] not in ("None", "nan"):
        cost.append((float(w[0]), float(w[1])))
cpre = [c for t, c in cost if t0 - 3 <= t < t0]
cpost = [c for t, c in cost if t0 + 2.5 <= t < t0 + 5]
if len(cpre) < 3 or len(cpost) < 3:
    print(f"disturbed: {len(cpre)} and {len(cpost)} cost samples in the windows")
    sys.exit(3)
nb, na = statistics.median(cpre), statistics.median(cpost)
lo, hi = min(cpre + cpost), max(cpre + cpost)
if hi > 1.35 * lo:
    print(f"disturbed: the receiver's cost per packet ranged {lo:.0f}-{hi:.0f} ns "
          f"(median {nb:.0f} before, {na:.0f} with the hogs)")
    sys.exit(3)
assert len(pre) >= 4 and len(post) >= 5, (len(pre), len(post))
base, low = statistics.median(pre), statistics.median(post)
drop = next(((t, r) for t, r, f in series if t >= t0 and r < 0.8 * base), None)
print(f"rate before {base/1e6:.1f} Mb/s (#C {cb:.2f}), with 2 hogs {low/1e6:.1f} Mb/s "
      f"(#C {ca:.2f}), ratio {low/base:.3f} (1/(#C+1) would be {(cb+1)/(ca+1):.3f})")
assert drop, "no RATE below 80 % of the baseline after the hogs started"
lat = drop[0] - t0
print(f"first lower RATE {drop[1]/1e6:.1f} Mb/s {lat*1000:.0f} ms after the hogs started "
      f"= {lat/epoch_s:.2f} epochs of {epoch_s*1000:.0f} ms")
assert fb["state"] == "model" and fa["state"] == "model"
# The receiver's capacity falls from 1/(cb+1) to 1/(ca+1) of its own. #C
# before is not always 0 (seen 0.01-0.55 on CPU 1 with the test's
# traffic; not ksoftirqd, which took no CPU time - the source was not
# identified), and then the expected fall is smaller. Ask for a third, or
# for the capacity ratio (with the cost per packet's own change, at most
# 20 %) plus 0.2 when that is larger.
want = max(0.65, (cb + 1) / (ca + 1) * nb / na + 0.2)
assert low < want * base, f"the rate did not fall below {want:.3f} of the baseline"
assert lat <= 2 * epoch_s + 0.05, "RATE came later than two epochs"
assert not (fa["rate"]["flags"]), fa["rate"]["flags"]
every = int(sys.argv[6])
for d in (before, after):
    m = d["measurement"]
    assert m["net_probe_every"] == every, (m["net_probe_every"], every)
print(f"per-packet probes one epoch in {every}; the status snapshots' epochs sampled: "
      f"{before['measurement']['net_sampled']}, {after['measurement']['net_sampled']}")
PY
}

retry_disturbed 4 "rate did not follow the load" \
	"CPU 1 too busy with other work for a clean measurement"
grep -q "RATE" "$T/rates.txt" || die "the subscriber got no RATE"
# No contradiction between status and senders: the one subscriber holds a
# RATE, whether or not this epoch's was pushed to it.
ctl status > "$T/final.txt"
grep -q '1 subscribed to RATE, 1 holds one' "$T/final.txt" ||
	die "status does not say the subscriber holds a RATE: $(grep -A2 'RATE ' "$T/final.txt")"
ctl senders | grep -qE " $P +rate.*b/s @[0-9]+ " || die "senders: $(ctl senders)"
stop_daemon
log "PASS"
