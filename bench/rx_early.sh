#!/usr/bin/env bash
# The daemon's own cost of reading receiver preemptions within the epoch
# (docs/pause.md §4): while a flow has a connected sender, PAUSE enabled and
# no schedule out, rxbneckd drains the preemption ring every 10 ms instead of
# once per epoch, so that a new receiver's first schedule goes out early.
# On a receiver that is never preempted (no CPU-bound co-runners) no schedule
# ever goes out, so that is the worst case: the 10-ms reads run for as long
# as the sender stays connected.
#
# UDP datagrams (~20 000/s) over a veth pair between two namespaces to a
# blocking reader pinned to CPU 1, rxbneckd watching the port (250 ms
# epochs). Alternating windows of PERIOD seconds: no sender connected (the
# reference), then rxbneck-watch connected to the flow (10-ms reads), ...,
# ending with a reference window. Per window: the daemon's on-CPU time
# (/proc/PID/schedstat, ns) and its voluntary context switches. Printed:
# each window, the mean ms of CPU per s and wake-ups per s of each kind,
# and the ratio of the daemon's CPU time with the reads to without, with
# the added share of one CPU.
#
# With HOGS=N (N >= 1) the other case: N CPU-bound tasks share CPU 1 with
# a reader that never blocks (RBUDP+'s receiver), so the reader is
# preempted every turn and, with the sender connected, a schedule is out and
# the daemon follows the ring for the rest of the window to re-plan it when
# the receiver's phase moves (pause.md §4). The reference windows have no
# sender: no schedule, no reads within the epoch. Printed besides: the
# schedules published and re-planned per second.
#
# Needs root, python3, ip, taskset (and stress-ng with HOGS). Run by `make
# bench` under the heavy-test lock. Environment: PERIOD (10 s), PAIRS (3),
# HOGS (0).
set -u
S=${RXB_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
B=${RXB_BUILD:-$S/build}
. "$S/tests/integration/daemon_lib.inc"
period=${PERIOD:-10}
pairs=${PAIRS:-3}
hogs=${HOGS:-0}
case $period$pairs$hogs in *[!0-9]*) die "PERIOD, PAIRS and HOGS must be whole numbers" ;; esac
[ "$period" -ge 2 ] && [ "$pairs" -ge 1 ] || die "PERIOD must be >= 2 and PAIRS >= 1"
for t in ip python3 taskset; do
	command -v $t >/dev/null || skip "$t not installed"
done
[ "$hogs" -eq 0 ] || command -v stress-ng >/dev/null || skip "stress-ng not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
WATCH=$B/rxbneck-watch
[ -x "$WATCH" ] || die "build first: $WATCH"
P=$((20000 + $$ % 20000))
ns_a=rxbb-early-a$$ ns_b=rxbb-early-b$$
. "$S/tests/integration/netpair.inc"
on_exit "netpair_down $ns_a $ns_b"
netpair_up $ns_a $ns_b ea$$ eb$$ 10.254.7 || die "namespaces and veth"

mode=block
[ "$hogs" -eq 0 ] || mode=spin
bg ip netns exec $ns_b taskset -c 1 python3 "$S/tests/integration/busy_rx.py" 10.254.7.2 $P 0 $mode
[ "$hogs" -eq 0 ] || bg stress-ng --cpu "$hogs" --taskset 1 --quiet
sleep 0.3
bg ip netns exec $ns_a taskset -c 0 python3 "$S/tests/integration/udp_tx.py" 10.254.7.2 $P

write_conf "$T/d.conf" "[measure] interval_ms = 250" "[measure] watch_ports = $P"
start_daemon "$T/d.conf"
pj() { ctl status --json | python3 -c "import json,sys; f=json.load(sys.stdin)['flows'][0]; print($1)"; }
for _ in $(seq 100); do
	[ "$(pj "f['traffic']['pkts_out'] > 0")" = True ] && break
	sleep 0.1
done
[ "$(pj "f['traffic']['pkts_out'] > 0")" = True ] || die "the daemon saw no traffic on port $P"
sleep 2

# sample: on-CPU ns and voluntary switches of the daemon, one line.
sample() {
	echo "$(cut -d' ' -f1 /proc/$DPID/schedstat) $(awk '/^voluntary_ctxt_switches/ {print $2}' /proc/$DPID/status) $(date +%s%N)"
}
: > "$T/windows"
wpid=
for i in $(seq $((2 * pairs + 1))); do
	if [ $((i % 2)) -eq 0 ]; then
		"$WATCH" -p "$CPORT" -r 200 -s 1400 -f 1000000000 "$P" > "$T/watch.txt" 2>&1 &
		wpid=$!
		sleep 1	# connected, flow has its sender
		kind=reads
	else
		kind=reference
	fi
	p0=$(pj "f['pause']['published'], f['pause']['rephased']")
	a=$(sample); sleep "$period"; b=$(sample)
	p1=$(pj "f['pause']['published'], f['pause']['rephased']")
	echo "$kind $a $b $(echo "$p0 $p1" | tr -d '(),')" >> "$T/windows"
	if [ -n "$wpid" ]; then
		kill "$wpid"; wait "$wpid" 2>/dev/null
		wpid=
		sleep 1	# the sender's disconnect reaches the daemon
	fi
done
python3 - "$T/windows" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
acc = {}
print("window     daemon CPU ms/s  wake-ups/s  schedules/s  re-planned/s")
for r in rows:
    kind = r[0]
    c0, v0, t0, c1, v1, t1, pb0, rp0, pb1, rp1 = map(int, r[1:11])
    s = (t1 - t0) / 1e9
    cpu, wk = (c1 - c0) / 1e6 / s, (v1 - v0) / s
    acc.setdefault(kind, []).append((cpu, wk))
    print(f"{kind:10} {cpu:15.3f} {wk:11.1f} {(pb1 - pb0) / s:12.1f} {(rp1 - rp0) / s:13.1f}")
m = {k: (sum(x for x, _ in v) / len(v), sum(y for _, y in v) / len(v)) for k, v in acc.items()}
ref, rd = m["reference"], m["reads"]
print(f"RESULT rx_early: daemon CPU {rd[0]:.3f} ms/s with the 10-ms reads vs {ref[0]:.3f} "
      f"without (ratio {rd[0] / ref[0]:.2f}, +{(rd[0] - ref[0]) / 10:.3f} % of one CPU); "
      f"wake-ups {rd[1]:.0f}/s vs {ref[1]:.0f}/s")
PY
