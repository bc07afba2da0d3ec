#!/usr/bin/env bash
# The pause-window predictor (docs/pause.md) on the real
# scheduler: a receiver thread that is always runnable (a busy-polling UDP
# reader, as RBUDP+'s saturated receive process) pinned to CPU 1 with two
# `stress-ng --cpu 1 --taskset 1` hogs, UDP datagrams over a veth pair
# between two network namespaces, rxbneckd watching the port (500 ms
# epochs) and rxbneck-watch subscribed to the flow; once with the tp_btf
# programs, once with the raw_tp fallback.
#
# Checked, over ~5 s with the hogs after ~3 s of learning:
#  - the predicted window D is within 15 % of the receiver's mean off-CPU
#    interval per switch measured independently of the daemon, from
#    /proc/<tid>/schedstat (run_delay / switch-ins; the reader never sleeps,
#    so all its off-CPU time is runqueue wait);
#  - the predicted period T_I/O + D within 15 % of that mean cycle;
#  - the hit rate of the predictor's own checks (a predicted window
#    overlapping at least half of the actual one) is at least 0.6;
#  - the subscriber got a PAUSE schedule whose window, plus the time the
#    socket queue absorbs at the rate offered, is within 15 % of the
#    measured one, and a CANCEL once the hogs are gone.
# Other engineers' builds share this 2-CPU machine outside the heavy-test
# lock: a measurement starts once CPU 1 has been quiet, and one disturbed
# by other work (over 0.10 of CPU 1 in the 5 s measured, by cpu_foreign,
# without the daemon) or by host steal above 5 % is repeated (up to 3
# times, then the test skips); undisturbed, #C must be 1.7-2.3. Exit 0 pass, 77 skip,
# else fail.
. "$(dirname "$0")/daemon_lib.inc"

. "$(dirname "$0")/pause_lib.inc"
pause_rig_up rxbt-pause-a$$ rxbt-pause-b$$ pa$$ pb$$ 10.253.0

schedstat() { cat /proc/$RX/schedstat; }

# One measurement. 0 pass, 1 fail, 3 disturbed by other work (retry).
attempt() {
	local h1 h2
	wait_quiet 4 30 cpu_foreign 1 0.25 "$RX" || { log "CPU 1 not quiet within 30 s"; return 3; }
	stress-ng --cpu 1 --taskset 1 --timeout 11s --quiet & h1=$!
	stress-ng --cpu 1 --taskset 1 --timeout 11s --quiet & h2=$!
	_bg_pids+=($h1 $h2)
	sleep 3
	ctl status --json > "$T/a.json"; schedstat > "$T/a.sched"; grep '^cpu1 ' /proc/stat > "$T/a.stat"
	wc -l < "$WF" > "$T/a.lines"
	cpu_foreign 1 5 "$RX" "$h1" "$h2" $(pgrep -P "$h1") $(pgrep -P "$h2") > "$T/other" || return 1
	ctl status --json > "$T/b.json"; schedstat > "$T/b.sched"; grep '^cpu1 ' /proc/stat > "$T/b.stat"
	wc -l < "$WF" > "$T/b.lines"
	ctl status -v > "$T/b.txt"
	check_status_text "2 hogs on the receiver's CPU"
	wait $h1 $h2
	log "status with the hogs:"; sed -n '/pause windows/,/schedules sent/p' "$T/b.txt" >&2
	# The hogs are gone: the windows stop, the schedule is cancelled.
	pause_wait_cancel "$WF"
	pause_hogs_counted "$T/other" "$T/b.json" || return $?
	python3 - "$T" "$P" "$WF" <<'PY'
import json, re, sys
T, port, wf = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fa = json.load(open(T + "/a.json"))["flows"][0]
fb = json.load(open(T + "/b.json"))["flows"][0]
pa, pb = fa["pause"], fb["pause"]
sa = [int(x) for x in open(T + "/a.sched").read().split()]
sb = [int(x) for x in open(T + "/b.sched").read().split()]
# Host steal stretches every slice in wall-clock time (the scheduler runs on
# the task clock, which steal does not advance), so the off-CPU windows
# schedstat measures grow by it while the prediction, in slices, does not:
# like other work, that disturbs the measurement rather than failing it.
ta, tb = ([int(x) for x in open(T + f"/{x}.stat").read().split()[1:]] for x in "ab")
steal = (tb[7] - ta[7]) / max(1, sum(tb[:8]) - sum(ta[:8]))
if steal > 0.05:
    print(f"disturbed by host steal on CPU 1 ({steal:.0%} of the 5 s)")
    sys.exit(3)
# Independent of the daemon: the kernel's own counters of the reader.
on_ns, wait_ns, runs = (sb[i] - sa[i] for i in range(3))
off_us, cycle_us = wait_ns / runs / 1e3, (on_ns + wait_ns) / runs / 1e3
pr = pb["prediction"]
d_us, period_us = pr["window_us"], pr["period_us"]
ck_a, ck_b = pa["check"], pb["check"]
scored = ck_b["scored"] - ck_a["scored"]
hits = ck_b["hits"] - ck_a["hits"]
hit_rate = hits / scored if scored else 0
se, de = ck_b["start_error"], ck_b["duration_error"]
s_chk = ck_b["schedule_checked"] - ck_a["schedule_checked"]
s_hit = ck_b["schedule_hits"] - ck_a["schedule_hits"]
print(f"schedstat: {runs} switch-ins, off {off_us:.0f} us, cycle {cycle_us:.0f} us per switch-in; "
      f"daemon measured off {pb['measured']['off_mean_us']:.0f} us")
print(f"predicted T_I/O {pr['t_io_us']:.0f} us ({pr['t_io_source']}), D {d_us:.0f} us = "
      f"{pr['cpu_bound']:.2f} x {pr['slice_us']:.0f} us ({pr['slice_source']}), period "
      f"{period_us:.0f} us; D/off {d_us / off_us:.3f}, period/cycle {period_us / cycle_us:.3f}")
print(f"checks in 5 s: {hits}/{scored} hits ({hit_rate:.3f}), published schedule "
      f"{s_hit}/{s_chk} ({s_hit / s_chk if s_chk else 0:.3f}); errors over the last "
      f"{min(se['n'], 256)} checks: start p50 {se['p50_abs_us']:.0f} p90 "
      f"{se['p90_abs_us']:.0f} us, duration p50 {de['p50_abs_us']:.0f} "
      f"p90 {de['p90_abs_us']:.0f} us")
# The frames the subscriber got between the two status readings.
la, lb = (int(open(T + f"/{x}.lines").read()) for x in "ab")
pauses = [l for l in open(wf).readlines()[la:lb]
          if l.startswith(f"PAUSE port {port} in")]
print(f"subscriber: {len(pauses)} PAUSE frames in 5 s; last: {pauses[-1].strip() if pauses else '-'}")
# The first schedule after the hogs start goes out within its epoch once 4
# windows are seen (docs/pause.md §4), unless the epoch ended first.
print(f"schedules sent: {pb['published']}, of them first ones within an epoch: "
      f"{pb['published_early']}, re-phased within an epoch: {pb['rephased']}")
# The sender stops only for the part of a window its socket queue cannot
# take at the rate data arrives (pause.h, pause_plan): the last frame's
# window plus that part is the predicted window.
last = pb["last"]
absorb_us = last["queue_absorbs_us"] if last else 0
print(f"last PAUSE: {last['duration_us'] if last else '-'} us, the socket queue absorbing "
      f"{absorb_us:.0f} us of the window before it at the arrival rate")
assert pb["scheduler"] in ("eevdf", "cfs"), pb["scheduler"]
assert runs > 100, "too few switch-ins of the receiver"
assert abs(d_us / off_us - 1) <= 0.15, "predicted window not within 15 % of the measured off-CPU time"
assert abs(period_us / cycle_us - 1) <= 0.15, "predicted period not within 15 % of the measured cycle"
assert scored >= 100, "too few checked predictions"
assert hit_rate >= 0.6, "hit rate below 0.6"
assert pauses, "the subscriber got no PAUSE"
assert last and not last["flags"], last
assert abs((last["duration_us"] + absorb_us) / off_us - 1) <= 0.15, \
    "last announced window + queue absorption off by > 15 %"
for l in pauses:
    m = re.search(r"for (\d+) us, period (\d+) us", l)
    assert m and 0 < int(m.group(1)) <= 1.15 * off_us, "announced window longer than the off time: " + l
    assert abs(int(m.group(2)) / cycle_us - 1) <= 0.15, "announced period off by > 15 %: " + l
assert any("cancelled" in l for l in open(wf)), "no CANCEL after the hogs left"
PY
}

# Both ways of attaching the scheduler programs (docs/measurement.md).
pin_shell_cpu0
for mode in tp_btf raw_tp; do
	log "--- attach $mode"
	write_conf "$T/d.conf" "[measure] interval_ms = $EPOCH_MS" "[measure] watch_ports = $P" \
		"[measure] attach = $mode"
	start_daemon "$T/d.conf"
	WF=$T/watch-$mode.txt
	bg bash -c "'$WATCH' -p $CPORT -r 200 -s 1400 -f 1000000000 $P > '$WF'"
	pause_wait_traffic
	retry_disturbed 3 "pause windows not predicted ($mode)" \
		"CPU 1 too busy with other work for a clean measurement"
	stop_daemon
done
log "PASS"
