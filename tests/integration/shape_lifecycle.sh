#!/usr/bin/env bash
# rxbneck-shape's life cycle against a scripted daemon (rbudp-testpeer: the
# daemon's own sender server publishing a RATE schedule), in two private
# namespaces joined by a veth pair. Checked, in order:
#  - the class follows each RATE: its rate is the closed form
#    P/8 x (p + h)/p of the advice (p = 1472 payload bytes from the MTU,
#    h = 14 + 20 + 8 header bytes), as tc reads it back;
#  - the u32 filters classify: datagrams to the flow's port over IPv4 and
#    IPv6 are counted by the class, datagrams to another port are not
#    (HTB's direct queue: not shaped);
#  - the daemon killed: the last advice holds for --hold, then the
#    fallback rate; the daemon back: its advice again;
#  - a second instance on the same device is refused, the first untouched;
#  - kill -9, then a restart: the restart removes what the killed instance
#    left (its log says so), installs one class and its filters only, and
#    on SIGTERM leaves no qdisc, class or filter of its own; the same with
#    --cleanup instead of a restart;
#  - a device whose root qdisc someone else configured is refused and left
#    as it was; our qdisc removed under a running instance ends it (exit 1)
#    with the device at its default;
#  - what it never created stays as it was throughout (a clsact qdisc with
#    a filter on the shaped device, a tbf on another device);
#  - --dry-run changes nothing and prints the tc commands.
# About 40 s, no timing-sensitive measurement.
. "$(dirname "$0")/shape_lib.inc"

PEER=$B/rbudp-testpeer
[ -x "$PEER" ] || die "build first: $PEER"
CP=7440
FLOW=9000
sh_netpair_up
# Things rxbneck-shape did not create and must never touch.
in_s tc qdisc add dev "$SH_IF_S" clsact &&
in_s tc filter add dev "$SH_IF_S" egress prio 99 protocol ip u32 match ip dst 10.9.9.9/32 &&
in_s ip link add shpf0 type veth peer name shpf1 &&
in_s tc qdisc add dev shpf0 root handle 1: tbf rate 1mbit burst 10k latency 10ms ||
	die "foreign qdiscs"
foreign() {
	{ in_s tc filter show dev "$SH_IF_S" egress; in_s tc qdisc show dev shpf0;
	  in_s tc qdisc show dev "$SH_IF_S" clsact; } | grep -v "^$"
}
foreign > "$T/foreign.before"
check_foreign() { foreign | diff "$T/foreign.before" - > /dev/null || die "foreign tc state changed ($1)"; }

peer() {
	sh_bg PEER_PID in_r "$PEER" --listen "$SH_NET.2" --port $CP --flow $FLOW --allow 0.0.0.0/0 \
		--rate 0:400M --rate 2500:200M --timeout 300 --log "$T/peer.jsonl" 2>> "$T/peer.err"
}
# shape NAME ARGS...: rxbneck-shape in the sender's namespace, JSON status
# every 0.2 s into $T/NAME.jsonl, log into $T/NAME.err.
shape() {
	local name=$1
	shift
	sh_bg SHAPE_PID in_s "$SHAPE" --receiver "$SH_NET.2:$CP" --flow-port $FLOW \
		--data-addr "$SH_NET.2,fd0d::2" --dev "$SH_IF_S" --hold 1.5 --fallback 50M \
		--status-interval 0.2 --json --state-dir "$T/state" --log-level debug "$@" \
		> "$T/$name.jsonl" 2> "$T/$name.err"
}
stop_shape() {	# SIGTERM, expect exit $1 (default 0)
	kill -TERM "$SHAPE_PID"
	wait "$SHAPE_PID"
	local rc=$?
	[ "$rc" -eq "${1:-0}" ] || die "rxbneck-shape exited $rc, expected ${1:-0}"
}
# The device after a clean exit: the kernel's default root qdisc, nothing of ours.
assert_clean() {
	local root
	root=$(sh_root_qdisc "$SH_IF_S")
	[ "$root" = "noqueue 0:" ] || die "$1: root qdisc is '$root', not the default noqueue"
	in_s tc class show dev "$SH_IF_S" | grep -q . && die "$1: classes left: $(in_s tc class show dev "$SH_IF_S")"
	in_s tc filter show dev "$SH_IF_S" | grep -q . && die "$1: filters left"
	[ -e "$T/state/net-$(in_s stat -L -c %i /proc/self/ns/net)-$SH_IF_S.state" ] &&
		die "$1: state file left"
	check_foreign "$1"
	log "$1: device back to its default, foreign qdiscs and filters as they were"
}
WIRE400=$(sh_wire_bps 400e6 1472 42)
WIRE200=$(sh_wire_bps 200e6 1472 42)
WIRE50=$(sh_wire_bps 50e6 1472 42)
# class_is WIRE_BPS WHAT: the class's rate as tc reads it back, within
# tc's rounding to kbit/s.
class_is() {
	local r
	r=$(sh_class_rate "$SH_IF_S" 7862:1)
	[ -n "$r" ] && sh_near "$r" "$1" 0.0001 || die "$2: class rate ${r:-none}, expected $1 bit/s"
}

# ------------------------------------------------------------ dry run --
in_s timeout 3 "$SHAPE" --receiver "$SH_NET.2:$CP" --flow-port $FLOW --dev "$SH_IF_S" \
	--dry-run --state-dir "$T/state" > "$T/dry.out" 2> "$T/dry.err"
grep -q "would run: tc qdisc add dev $SH_IF_S root handle 7862: htb default 0" "$T/dry.out" ||
	die "dry run: no qdisc command: $(cat "$T/dry.out")"
grep -q "would run: tc filter add dev $SH_IF_S parent 7862: prio 2 protocol ip u32 .*0x00002328 0x0000ffff at 20 flowid 7862:1" \
	"$T/dry.out" || die "dry run: no filter command"
grep -q "would run: tc qdisc del dev $SH_IF_S root handle 7862:" "$T/dry.out" ||
	die "dry run: no removal at the end"
assert_clean "dry run"

# -------------------------------------------------- following the advice --
peer
shape run1
sh_wait_json "$T/run1.jsonl" 'r["in_force"]["mode"] == "advice" and r["in_force"]["rate_bps"] == 400000000' 10 ||
	die "no advice of 400 Mb/s in force: $(tail -1 "$T/run1.jsonl")"
class_is "$WIRE400" "advice 400M"
[ "$(sh_root_qdisc "$SH_IF_S")" = "htb 7862:" ] || die "root qdisc is not htb 7862:"
log "advice 400 Mb/s: class at $(sh_class_rate "$SH_IF_S" 7862:1) bit/s (closed form $WIRE400)"

# Classification: 50 datagrams to the flow (25 over IPv4, 25 over IPv6), 30 elsewhere.
in_s python3 - "$SH_NET.2" $FLOW <<'PY'
import socket, sys
a, port = sys.argv[1], int(sys.argv[2])
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for _ in range(25):
    s4.sendto(b"x" * 1000, (a, port))
    s6.sendto(b"x" * 1000, ("fd0d::2", port))
for _ in range(30):
    s4.sendto(b"y" * 1000, (a, port + 1))
PY
sleep 0.5
pk=$(sh_json "$T/run1.jsonl" 'r["class_stats"]["packets"]')
[ "$pk" = 50 ] || die "the class counted $pk packets, expected the 50 sent to port $FLOW"
direct=$(in_s tc -s qdisc show dev "$SH_IF_S" root | sed -n 's/.*direct_packets_stat \([0-9]*\).*/\1/p')
[ "${direct:-0}" -ge 30 ] || die "only ${direct:-0} packets took the direct (unshaped) path, expected >= 30"
log "classified: 50 to the flow (IPv4 and IPv6) in the class, $direct others direct"

sh_wait_json "$T/run1.jsonl" 'r["in_force"]["rate_bps"] == 200000000' 10 || die "no change to 200 Mb/s"
class_is "$WIRE200" "advice 200M"

# ------------------------------------------------------ daemon lost --
kill -TERM "$PEER_PID"; wait "$PEER_PID" 2>/dev/null
sh_wait_json "$T/run1.jsonl" 'r["in_force"]["mode"] == "hold" and r["in_force"]["rate_bps"] == 200000000 and not r["daemon"]["connected"]' 5 ||
	die "no hold of the last advice: $(tail -1 "$T/run1.jsonl")"
class_is "$WIRE200" "hold"
t0=$SECONDS
sh_wait_json "$T/run1.jsonl" 'r["in_force"]["mode"] == "fallback" and r["in_force"]["rate_bps"] == 50000000' 5 ||
	die "no fallback after the hold: $(tail -1 "$T/run1.jsonl")"
class_is "$WIRE50" "fallback"
grep -q "daemon unreachable: keeping its last advice" "$T/run1.err" || die "the hold is not logged"
grep -q "the fallback rate, 50.0 Mb/s" "$T/run1.err" || die "the fallback is not logged"
log "daemon lost: held 200 Mb/s, then the fallback 50 Mb/s ($((SECONDS - t0)) s later)"
peer
sh_wait_json "$T/run1.jsonl" 'r["in_force"]["mode"] == "advice" and r["in_force"]["rate_bps"] == 400000000 and r["daemon"]["connects"] == 2' 15 ||
	die "no advice after the daemon came back: $(tail -1 "$T/run1.jsonl")"
class_is "$WIRE400" "daemon back"
log "daemon back: advice in force again"

# ------------------------------------------------ a second instance --
FIRST=$SHAPE_PID
if in_s timeout 10 "$SHAPE" --receiver "$SH_NET.2:$CP" --flow-port $FLOW --dev "$SH_IF_S" \
	--state-dir "$T/state" > /dev/null 2> "$T/second.err"; then
	die "a second instance on the same device started"
fi
grep -q "is shaped by another rxbneck-shape (pid $FIRST)" "$T/second.err" ||
	die "second instance: $(cat "$T/second.err")"
class_is "$WIRE400" "after the refused second instance"
log "a second instance is refused: $(tail -1 "$T/second.err")"

# ------------------------------------------------------ kill -9 --
kill -KILL "$FIRST"; wait "$FIRST" 2>/dev/null
[ "$(sh_root_qdisc "$SH_IF_S")" = "htb 7862:" ] || die "kill -9 removed the qdisc?"
ls "$T"/state/*.state > /dev/null 2>&1 || die "no state file after kill -9"
shape run2
sh_wait_json "$T/run2.jsonl" 'r["in_force"]["mode"] == "advice"' 10 || die "the restart does not shape"
grep -q "removed the qdisc htb 7862: an earlier rxbneck-shape left (it had found noqueue)" "$T/run2.err" ||
	die "the restart did not report the clean-up: $(head -5 "$T/run2.err")"
[ "$(in_s tc class show dev "$SH_IF_S" | grep -c '^class')" = 1 ] || die "classes after the restart: $(in_s tc class show dev "$SH_IF_S")"
# Our filters: one u32 node per address (IPv4 at prio 2, IPv6 at 3).
[ "$(in_s tc filter show dev "$SH_IF_S" | grep -c 'flowid 7862:1')" = 2 ] || die "filters after the restart: $(in_s tc filter show dev "$SH_IF_S")"
stop_shape 0
assert_clean "kill -9, restart, SIGTERM"

# A fresh scripted daemon: the old one's schedule is spent.
kill -TERM "$PEER_PID"; wait "$PEER_PID" 2>/dev/null
peer
shape run3
sh_wait_json "$T/run3.jsonl" 'r["in_force"]["mode"] == "advice"' 10 || die "run3 does not shape"
kill -KILL "$SHAPE_PID"; wait "$SHAPE_PID" 2>/dev/null
in_s "$SHAPE" --cleanup --state-dir "$T/state" 2> "$T/cleanup.err" || die "--cleanup failed: $(cat "$T/cleanup.err")"
grep -q "removed the qdisc htb 7862:" "$T/cleanup.err" || die "--cleanup said nothing"
assert_clean "kill -9, --cleanup"

# ------------------------------------------ someone else's root qdisc --
in_s tc qdisc add dev "$SH_IF_S" root handle 1: tbf rate 1gbit burst 100k latency 5ms || die "tbf"
if in_s timeout 10 "$SHAPE" --receiver "$SH_NET.2:$CP" --flow-port $FLOW --dev "$SH_IF_S" \
	--state-dir "$T/state" > /dev/null 2> "$T/foreign.err"; then
	die "started on a device with a foreign root qdisc"
fi
grep -q "has a root qdisc tbf 1: that rxbneck-shape did not install" "$T/foreign.err" ||
	die "foreign root: $(cat "$T/foreign.err")"
[ "$(sh_root_qdisc "$SH_IF_S")" = "tbf 1:" ] || die "the foreign root qdisc was touched"
in_s tc qdisc del dev "$SH_IF_S" root || die "removing the tbf"
log "a foreign root qdisc is refused and left alone"

# ------------------------------------------ our qdisc removed under us --
kill -TERM "$PEER_PID"; wait "$PEER_PID" 2>/dev/null
peer
shape run4
sh_wait_json "$T/run4.jsonl" 'r["in_force"]["mode"] == "advice"' 10 || die "run4 does not shape"
in_s tc qdisc del dev "$SH_IF_S" root handle 7862: || die "deleting the qdisc"
for _ in $(seq 50); do kill -0 "$SHAPE_PID" 2>/dev/null || break; sleep 0.1; done
wait "$SHAPE_PID"; rc=$?
[ $rc -eq 1 ] || die "rxbneck-shape did not fail when its qdisc vanished (exit $rc)"
grep -q "is gone" "$T/run4.err" || die "no error message: $(tail -3 "$T/run4.err")"
assert_clean "qdisc removed under a running instance"
check_foreign "end"
log "PASS"
