#!/usr/bin/env bash
# The first RATE of a flow, before its first packet (docs/daemon.md, "Before
# traffic, and after it stops"; PROTOCOL.md §6.1 PROVISIONAL). An rxbneck-recv pinned to
# CPU 1 with two CPU hogs there; rxbneck-watch subscribes as a sender would,
# with the transfer rxbneck-send then announces (1456-byte payloads, 200 MB,
# RTT 20 ms). Checked:
#  1. a fresh daemon (empty state directory): the first RATE is modelled
#     from the receiver's socket (its CPU's #C) and the default costs with
#     the daemon's own calibration of the kernel's receive path
#     (daemon/collect/recvcost.h): flags PROVISIONAL and DEFAULT_COST,
#     confidence <= 100, and
#     - within [0.75, 1.15] of the settled rate once the two costs per
#       datagram are taken out (first RATE / settled x calibrated cost /
#       the receiver's settled cost): the model's own error with the
#       defaults, mostly one datagram per wake-up (the prior; 140-320
#       measured), which lowers the rate by about 10 %;
#     - within [0.5, 1.6] of the settled rate as it is: the receiver's
#       own cost per datagram varies between runs of the same program
#       (645-1022 ns settled on the test VM) as the calibration does
#       (713-1061 ns), independently, so the plain ratio spreads by their
#       ratio (docs/daemon.md, "Before traffic");
#     both only where the receiver's settled cost is at most CAL_SPREAD_MAX
#     (1.6) times the calibration, the spread they hold at (0.66-1.34 in
#     38 runs there: first RATE 0.59-1.38 of the settled rate, 0.86-1.04
#     with the costs taken out); beyond it, on a host whose receivers pay
#     what the calibration does not see, both are printed, not judged;
#  2. the settled rate: the plain RATE in force after 10 s of
#     rxbneck-send --follow transfers (status --json). The first RATEs come
#     from costs alone, before any off-CPU window is measured: with the
#     default loss model (service) the settled rate is the windows', so
#     they are held to the rate the same settled inputs give without the
#     windows (`rxbneckctl model --from-status P --loss-model queue`, what
#     the daemon solves before it has windows); with loss = queue the two
#     are the same rate. On loopback the two differ: with two hogs the
#     windows' model advises up to the line rate (a resend round costs
#     about 10 ms, and T is flat above the receiver's drain);
#  3. a second receiver on another port, same daemon: the first RATE from
#     port 1's learned costs, PROVISIONAL, within 25 % of the settled rate;
#     where that RATE was solved with port 1's saturated drain (borrowed
#     with the costs while it is recent and at the same load:
#     daemon/model/drain.h), of the settled rate with that drain (port
#     1's inputs without the windows, the drain kept, with the second
#     port's own #C and loss-episode size);
#  4. after a restart with saved state: port 1's first RATE from its
#     history, PROVISIONAL, within 25 % of the settled rate.
# The settled rate, one snapshot, is every check's reference (with the
# drain for the second port where it had one): an attempt
# in which it was disturbed is repeated (twice, then the test skips): other
# work on CPU 1 (over 0.10 of it before the first RATE or during the
# traffic, by cpu_foreign: threads other than the test's own programs,
# measured without the daemon), or port 1's own learned costs giving first
# RATEs (second port, restart) both more than 20 % off it on the same side
# (it moved, not they). Undisturbed, #C on CPU 1 must be 1.75-2.25 then.
. "$(dirname "$0")/daemon_lib.inc"

command -v stress-ng >/dev/null || skip "stress-ng not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
for b in rxbneck-watch rxbneck-recv rxbneck-send; do
	[ -x "$B/$b" ] || die "build first: $B/$b"
done
SIZE=200000000
# exec: the background PID is the receiver's own, so the cleanup stops it.
recv() { exec "$B/rxbneck-recv" "$@" > /dev/null; }
# The test's own programs, not other work on CPU 1 (cpu_foreign).
OWN="rxbneck-recv rxbneck-send rxbneck-watch rxbneckd rxbneckctl stress-ng stress-ng-cpu"
watch() {	# watch PORT: the RATE lines of a subscriber, with arrival times
	"$B/rxbneck-watch" -p "$CPORT" -r 20000 -s 1456 -f $SIZE "$1" | python3 -u -c '
import sys, time
for l in sys.stdin: print("%.3f %s" % (time.time(), l.rstrip()), flush=True)'
}
# first_rate PORT FILE: the first RATE a new subscriber gets, as "rate flags confidence".
first_rate() {
	timeout 2 "$B/rxbneck-watch" -p "$CPORT" -r 20000 -s 1456 -f $SIZE "$1" > "$2" 2>&1
	awk '/^RATE/ { print $5, $14, $12; exit }' "$2" | sed 's|/1000||'
}
cpu1_c() { ctl status --json | python3 -c 'import json,sys
d = json.load(sys.stdin); print(d.get("cpus", d.get("measurement", {}).get("cpus"))[1]["cpu_bound"])' 2>/dev/null; }
# first_inputs PORT FILE: the inputs of the port's first RATE, on stderr;
# its cost per datagram into FILE.
first_inputs() {
	ctl status --json | python3 -c 'import json, sys
b = [f for f in json.load(sys.stdin)["flows"] if f["port"] == int(sys.argv[1])][0]["inputs"]["stage_b"]
open(sys.argv[2], "w").write("%r\n" % b["cpu_ns_per_pkt"]["value"])
print("[inputs of the first RATE] #C %.2f, %.0f ns/pkt, N %s, K %s" % (b["cpu_bound"]["value"],
      b["cpu_ns_per_pkt"]["value"], b["pkts_per_wakeup"]["value"], b["queue_pkts"]["value"]))' "$1" "$2" >&2
}

# drain_ref SECOND_JSON PORT2 PORT FILE: where the second port's first RATE
# (status SECOND_JSON) was solved with a saturated drain, which it borrows
# from port PORT with the costs (daemon/model/prior.h), PORT's settled
# inputs solved as the second port's were: with PORT's drain, without its
# off-CPU windows (a #C given on top drops them: `rxbneckctl model
# --help`), with the second port's own #C and loss-episode size (neither
# is borrowed), into FILE; else FILE empty.
drain_ref() {
	local c e out
	out=$(python3 - "$1" "$2" <<'PY'
import json, sys
fl = [f for f in json.load(open(sys.argv[1]))["flows"] if f["port"] == int(sys.argv[2])][0]
st = fl["model"]["stages"][-1]
d = st.get("sat_drain_pkts_per_s")
if fl["model"]["loss_model"] == "service" and d is not None and d > 0:
    print(repr(float(st["cpu_bound"])), repr(float(fl["model"]["loss_episode_pkts"])))
PY
) || die "drain_ref: cannot read port $2's solve in $1"
	read -r c e <<<"$out"
	: > "$4"
	[ -n "${c:-}" ] || return 0
	ctl model --from-status "$3" --cpu-bound "$c" --loss-episode-pkts "$e" --json > "$4" ||
		die "rxbneckctl model --from-status $3 --cpu-bound $c --loss-episode-pkts $e failed"
}

# check_first_rates TRAFFIC_JSON PORT FIRST1 FIRST2 FIRST3 COST_FILE QUEUE_JSON DRAIN_JSON OTHER:
# the checks above; exit status 3 when the settled rate was disturbed.
check_first_rates() {
	python3 - "$@" <<'PY'
import json, sys
# The settled rate: the plain RATE in force when the traffic ended (RATE is
# pushed only when it moves by 5 %, so the subscriber's lines are sparse).
fl = [f for f in json.load(open(sys.argv[1]))["flows"] if f["port"] == int(sys.argv[2])][0]
assert fl["state"] == "model" and fl["rate"], fl["state"]
settled = float(fl["rate"]["rate_bps"])
# Without windows: the same inputs solved as before any were measured.
q = json.load(open(sys.argv[7]))
print(f"RATE in force {settled/1e9:.3f} Gb/s; its inputs without windows give "
      f"{q['bottleneck_rate_bps']/1e9:.3f} Gb/s (the daemon's loss model: "
      f"{fl['model']['loss_model']})")
if fl["model"]["loss_model"] != "queue":
    assert q["from_status"]["episodes_from_windows_dropped"] == fl["model"]["episodes_from_windows"]
    settled = float(q["bottleneck_rate_bps"])
# Where the second port's first RATE was solved with port 1's saturated
# drain, its reference is port 1's settled inputs with the drain.
settled2 = settled
if open(sys.argv[8]).read().strip():
    settled2 = float(json.load(open(sys.argv[8]))["bottleneck_rate_bps"])
    print(f"with port {sys.argv[2]}'s saturated drain and without windows: {settled2/1e9:.3f} Gb/s "
          "(the second port's reference)")
settled_ns = float(fl["inputs"]["stage_b"]["cpu_ns_per_pkt"]["value"])
first_ns = float(open(sys.argv[6]).read())
print(f"reference {settled/1e9:.3f} Gb/s (flags {fl['rate']['flags']}, "
      f"#C {fl['inputs']['stage_b']['cpu_bound']['value']}, "
      f"cost {fl['inputs']['stage_b']['cpu_ns_per_pkt']['value']:.0f} ns/pkt, "
      f"N {fl['inputs']['stage_b']['pkts_per_wakeup']['value']})")
PROV, DEF = 0x20, 0x40
c_end = fl["inputs"]["stage_b"]["cpu_bound"]["value"]
own = [float(sys.argv[4].split()[0]) / settled2, float(sys.argv[5].split()[0]) / settled]
other = float(sys.argv[9])
print(f"other work on CPU 1 during the traffic: {other:.3f} of it; #C {c_end}")
if other > 0.10:
    print("disturbed: other work on CPU 1 during the traffic"); sys.exit(3)
assert c_end is not None and 1.75 <= c_end <= 2.25, \
    f"#C {c_end} on CPU 1 with 2 hogs and no other work there"
if all(x < 0.8 for x in own) or all(x > 1.2 for x in own):
    print("disturbed: port 1's own costs give %.3f and %.3f of the settled rate" % tuple(own))
    sys.exit(3)
# The default cost's bounds hold where the calibration is within the
# spread they were measured at; elsewhere they are printed, not judged.
CAL_SPREAD_MAX = 1.6
judge_def = settled_ns <= CAL_SPREAD_MAX * first_ns
if not judge_def:
    print(f"fresh daemon: the settled cost is {settled_ns / first_ns:.2f} x the calibration, "
          f"over {CAL_SPREAD_MAX}: its two ratios are not judged on this host")
fail = []
for name, arg, ref, lo, hi, want_def, cmax in (
        ("fresh daemon, default costs", sys.argv[3], settled, 0.5, 1.6, True, 100),
        ("second port, port 1's costs", sys.argv[4], settled2, 0.75, 1.25, False, 300),
        ("restart, this port's history", sys.argv[5], settled, 0.75, 1.25, False, 400)):
    r, f, c = arg.split()
    r, f, c = float(r), int(f, 16), int(c)
    ratio = r / ref
    judged = judge_def if want_def else True
    print(f"{name}: first RATE {r/1e9:.3f} Gb/s = {ratio:.3f} of settled, flags {f:#x}, confidence {c}")
    if not f & PROV: fail.append(f"{name}: not flagged PROVISIONAL")
    if bool(f & DEF) != want_def: fail.append(f"{name}: DEFAULT_COST {'missing' if want_def else 'set'}")
    if not 0 < c <= cmax: fail.append(f"{name}: confidence {c} not in 1..{cmax}")
    if judged and not lo <= ratio <= hi:
        fail.append(f"{name}: {ratio:.3f} of the settled rate, not in [{lo:.2f}, {hi}]")
    if want_def:
        # The default cost's own part of the ratio taken out: what is left
        # is the model's error with the other defaults.
        net = ratio * first_ns / settled_ns
        print(f"{name}: cost {first_ns:.0f} ns calibrated, {settled_ns:.0f} settled: "
              f"{net:.3f} of the settled rate at the settled cost")
        if judge_def and not 0.75 <= net <= 1.15:
            fail.append(f"{name}: {net:.3f} of the settled rate at the settled cost, not in [0.75, 1.15]")
if fail:
    print("FAIL: " + "; ".join(fail)); sys.exit(1)
PY
}

# end_attempt NBG: stop this attempt's receivers, hogs and subscriber (the
# background jobs after the first NBG).
end_attempt() {
	local p
	for p in "${_bg_pids[@]:$1}"; do kill "$p" 2>/dev/null; done
	for p in "${_bg_pids[@]:$1}"; do wait "$p" 2>/dev/null; done
	_bg_pids=("${_bg_pids[@]:0:$1}")
}

attempt() {
	local nbg=${#_bg_pids[@]} rc c0

	P=$(free_port)
	P2=$(free_port)
	[ "$P2" != "$P" ] || P2=$((P + 1))
	rm -rf "${DAEMON_DIR:-$T}/state"	# a fresh daemon: no history
	write_conf "$T/d.conf" "[measure] interval_ms = 250"
	start_daemon "$T/d.conf"
	bg recv --port "$P" --discard --cpu 1 --count 0 --rcvbuf 4Mi --quiet
	bg stress-ng --cpu 2 --taskset 1 --timeout 90s --quiet
	sleep 0.3
	other0=$(cpu_foreign 1 1.2 $OWN) || return 1
	c0=$(cpu1_c)
	log "#C on CPU 1 with the hogs: $c0 (other work there: $other0 of it)"

	read -r R1 F1 C1 <<<"$(first_rate "$P" "$T/first1.txt")"
	[ -n "${R1:-}" ] || die "no first RATE: $(cat "$T/first1.txt")"
	if ! python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 0.10)' "$other0"; then
		log "disturbed: other work took $other0 of CPU 1 before the first RATE"
		stop_daemon
		end_attempt "$nbg"
		return 3
	fi
	python3 -c 'import sys; sys.exit(not 1.75 <= float(sys.argv[1]) <= 2.25)' "${c0:-nan}" ||
		die "#C $c0 on CPU 1 with 2 hogs and no other work there ($other0)"
	log "fresh daemon: first RATE $R1 b/s flags $F1 confidence $C1"
	log "$(grep -h 'receive-cost calibration' "$T/daemon.log" | head -1)"
	first_inputs "$P" "$T/first_cost"
	check_status_text "before traffic"

	bg bash -c "$(declare -f watch); B=$B CPORT=$CPORT SIZE=$SIZE watch $P > $T/rates.txt"
	end=$((SECONDS + 11))
	cpu_foreign 1 10 $OWN > "$T/other_traffic" &
	local fpid=$!
	n=0
	while [ $SECONDS -lt $end ]; do
		"$B/rxbneck-send" --to 127.0.0.1 --port "$P" --size $SIZE --payload 1456 \
			--follow "127.0.0.1:$CPORT" --rtt-ms 20 --quiet >/dev/null 2>>"$T/send.err" ||
			die "transfer failed: $(tail -3 "$T/send.err")"
		n=$((n + 1))
	done
	TEND=$(date +%s.%N)
	wait "$fpid" || return 1
	ctl status --json > "$T/traffic.json"
	ctl model --from-status "$P" --loss-model queue --json > "$T/queue_ref.json" ||
		die "rxbneckctl model --from-status $P --loss-model queue failed"
	ctl status > "$T/traffic.txt"
	check_status_text "after traffic"
	log "$n transfers; $(grep -c RATE "$T/rates.txt") RATE lines"

	bg recv --port "$P2" --discard --cpu 1 --count 0 --rcvbuf 4Mi --quiet
	sleep 0.5
	read -r R2 F2 C2 <<<"$(first_rate "$P2" "$T/first2.txt")"
	[ -n "${R2:-}" ] || die "no first RATE on the second port: $(cat "$T/first2.txt")"
	log "second port: first RATE $R2 b/s flags $F2 confidence $C2"
	ctl status --json > "$T/second.json"
	drain_ref "$T/second.json" "$P2" "$P" "$T/drain_ref.json"

	stop_daemon
	start_daemon "$T/d.conf"
	sleep 1.5
	read -r R3 F3 C3 <<<"$(first_rate "$P" "$T/first3.txt")"
	[ -n "${R3:-}" ] || die "no first RATE after the restart: $(cat "$T/first3.txt")"
	log "after a restart: first RATE $R3 b/s flags $F3 confidence $C3"
	check_status_text "after restart"
	stop_daemon
	check_first_rates "$T/traffic.json" "$P" "$R1 $F1 $C1" "$R2 $F2 $C2" "$R3 $F3 $C3" \
		"$T/first_cost" "$T/queue_ref.json" "$T/drain_ref.json" "$(cat "$T/other_traffic")"
	rc=$?
	end_attempt "$nbg"
	return $rc
}

retry_disturbed 3 "first RATE checks" "CPU 1 too busy with other work for a clean measurement"
log "PASS"
