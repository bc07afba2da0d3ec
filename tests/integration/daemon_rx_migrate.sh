#!/usr/bin/env bash
# A receiver that moves between CPUs is followed without learning its
# receive path again at every move (daemon/collect/netplan.c: learn, then
# sample the per-packet probes).
#
# UDP at a fixed 20 Mb/s (light: the sender is no CPU-bound task) on
# loopback into an iperf3 server, rxbneckd watching the port with 250 ms
# epochs, learning for 2 s after a change ([measure] net_probe_learn_s =
# 2), one epoch in 8 otherwise. The server
# starts on CPU 0; once learning has ended it is moved to CPU 1 with
# taskset (every thread), then back and forth every second, eight moves in
# all. Checked, from the daemon's log ("per-packet probes: every epoch for
# 2 s (why)"):
#  - the first move starts learning once ("receiver on CPU 1 (learned on
#    CPU 0)"), and no later move does: exactly one learning start names a
#    receiver on another CPU (the daemon before this rule logged one per
#    move, "receiver moved from CPU 0 to 1");
#  - at the end the probes are back to one epoch in 8 (status).
# Other work on this shared machine can move #C on a CPU by half a task
# and start learning for that reason; such starts are printed, not failed.
. "$(dirname "$0")/daemon_lib.inc"

command -v iperf3 >/dev/null || skip "iperf3 not installed"
command -v taskset >/dev/null || skip "taskset not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
P=$(free_port)

write_conf "$T/d.conf" "[measure] interval_ms = 250" "[measure] watch_ports = $P" \
	"[measure] net_probe_every = 8" "[measure] net_probe_learn_s = 2"
start_daemon "$T/d.conf"

taskset -c 0 iperf3 -s -p "$P" -1 >/dev/null 2>&1 &
SRV=$!
_bg_pids+=($SRV)
sleep 0.5
bg iperf3 -u -c 127.0.0.1 -p "$P" -b 20M -l 1400 -t 40 >/dev/null 2>&1

# Until the flow's receiver is known and learning has ended.
learning() {
	ctl status --json | python3 -c 'import json,sys
d = json.load(sys.stdin)
f = d["flows"][0] if d["flows"] else None
known = f is not None and f["inputs"]["stage_b"]["cpu_bound"]["value"] is not None
print(1 if d["daemon"]["net_probes"]["learning"] or not known else 0)'
}
for _ in $(seq 200); do
	[ "$(learning)" = 0 ] && break
	sleep 0.1
done
[ "$(learning)" = 0 ] || die "the flow was not learned within 20 s: $(ctl status)"
log "learned; moving the receiver"
for cpu in 1 0 1 0 1 0 1 0; do
	taskset -a -p -c $cpu $SRV >/dev/null || die "taskset -a -p -c $cpu $SRV"
	sleep 1
done
# The last move's epochs, then one sampling cycle past any learning.
sleep 3
ctl status --json > "$T/status.json"
grep "per-packet probes: every epoch" "$T/daemon.log" >&2
python3 - "$T/daemon.log" "$T/status.json" <<'PY'
import json, re, sys
starts = [l for l in open(sys.argv[1]) if "per-packet probes: every epoch" in l]
moves = [l for l in starts if re.search(r"receiver (on|moved)", l)]
other = [l for l in starts if l not in moves and not re.search(r"\((start|port \d+: new flow)\)", l)]
st = json.load(open(sys.argv[2]))["daemon"]["net_probes"]
print(f"learning starts: {len(starts)}; for the receiver's CPU: {len(moves)}; "
      f"for loads (other work on the machine): {len(other)}; every now {st['every']}")
if len(moves) > 1:
    sys.exit(f"FAIL: {len(moves)} learning starts for a receiver moving between two CPUs "
             "(at most 1: the first time it reaches CPU 1)")
if not moves:
    sys.exit("FAIL: the receiver's move to CPU 1, where it had not run while the probes "
             "learned (pinned to CPU 0), started no learning")
if not other and st["every"] != 8:
    sys.exit(f"FAIL: probes one epoch in {st['every']} at the end, want 8")
PY
rc=$?
[ $rc -eq 0 ] || die "see above"
log "PASS"
