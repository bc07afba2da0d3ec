#!/usr/bin/env bash
# rxbneck-shape holds an unmodified blaster to the daemon's advice:
# `iperf3 -u -b 10G` from the sender's namespace (the e2e testbed,
# tests/e2e/lib.sh: veth into the receiving host, where rxbneckd runs) to a
# UDP receiver pinned to the receiving CPU with 2 CPU hogs on it.
#
# The receiver is rxbneck-udpsink (rxbneck-recv's receive loop; it counts
# what arrived and what its socket dropped) with the system's default
# receive buffer, as iperf3's server has. iperf3's client needs iperf3's
# server for its control connection and its UDP handshake: the server runs
# on port CTL, and an nftables rule in the sender's namespace sends iperf3's
# data datagrams (longer than 64 bytes) to the sink's port instead, before
# the qdisc. rxbneck-shape tells the daemon RTT 200 ms (the e2e testbed's
# path) so that the advice is for a path where losses cost a round trip.
#
# Two phases of 6 s, each waiting for a quiet machine and repeated when
# disturbed (the e2e harness's criteria):
#   blast    no shaping: the receiver's loss is the blast's;
#   shaped   rxbneck-shape on the sender's veth.
# Checked:
#  - the shaped arrival rate at the receiver (its 0.5 s intervals after
#    the first second) within 5 % of the advice in force over them
#    (time-weighted from rxbneck-shape's status every 0.1 s), with the
#    class binding (HTB held packets back: overlimits grew);
#  - the shaped loss below half the blast's, and closer to the model's
#    prediction at the advised rate (RATE's loss) than the blast's is;
#  - the class queued rather than dropped (no drops), its peak reported;
#  - after SIGTERM the device has its default root qdisc again.
# The sender (one iperf3 thread) must be able to exceed the advice; when
# the machine cannot (the class never binds), the test says so and skips.
# About a minute on a quiet machine. Exit 0 pass, 77 skip, 1 fail.
set -u
SRC=${RXB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
E_SRC=$SRC
E_BUILD=${RXB_BUILD:-$SRC/build}
E_OUT=$(mktemp -d /tmp/rxbt-shape-udp.XXXXXX) || exit 1
E_DELAY_MS=0
E_QUIET_WAIT=${E_QUIET_WAIT:-30}
export E_BUILD E_OUT
. "$SRC/tests/e2e/lib.sh"
command -v nft > /dev/null || e2e_skip "nft (nftables) not installed"
e2e_setup
[ -x "$E_BIN/rxbneck-shape" ] && [ -x "$E_BIN/rxbneck-udpsink" ] || e2e_skip "build rxbneck-shape first"
taskset -pc "$E_SEND_CPU" $$ > /dev/null || e2e_fail "taskset"
E_K=2
CTL=$((E_TCP_PORT + 1))
SHAPE_PID= SINK_PID= IPERF_S=
shape_test_cleanup() {
	local rc=$? p
	for p in $SHAPE_PID $SINK_PID $IPERF_S; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	e2e_cleanup
	if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then rm -rf "$E_OUT"; else echo "outputs kept in $E_OUT" >&2; fi
}
trap shape_test_cleanup EXIT
e2e_daemon_start

ip netns exec "$E_NS_S" nft -f - <<EOF || e2e_fail "nftables rule"
table ip rxbsh {
	chain out {
		type filter hook output priority raw;
		ip daddr $E_ADDR_R udp dport $CTL udp length > 64 udp dport set $E_PORT notrack
	}
}
EOF
taskset -c "$E_SEND_CPU" iperf3 -s -p "$CTL" -B "$E_ADDR_R" > "$E_TMP/iperf3-s.log" 2>&1 &
IPERF_S=$!
e2e_hogs 2
c=$(e2e_wait_cb 2) || e2e_log "CPU $E_RECV_CPU did not settle at #C = 2 (last $c)"

# phase NAME: sink, iperf3 for 6 s, sink stopped; a runs.jsonl record for
# the disturbance check. Sink intervals in $E_OUT/NAME.sink.jsonl.
phase() {
	local name=$1 t0 t1 tot0 st0 tot1 st1
	: > "$E_TMP/sink.err"
	"$E_BIN/rxbneck-udpsink" --port "$E_PORT" --listen "$E_ADDR_R" --cpu "$E_RECV_CPU" \
		--interval-ms 500 --iperf3 > "$E_OUT/$name.sink.jsonl" 2> "$E_TMP/sink.err" &
	SINK_PID=$!
	for _ in $(seq 50); do grep -q ready "$E_TMP/sink.err" && break; sleep 0.02; done
	read -r tot0 st0 <<< "$(e2e_stat_cpu)"
	t0=$(/usr/bin/python3 -c 'import time; print(time.monotonic())')
	ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" iperf3 -u -b 10G -c "$E_ADDR_R" \
		-p "$CTL" -t 6 > "$E_OUT/$name.iperf3.txt" 2>&1 || e2e_fail "iperf3: $(tail -2 "$E_OUT/$name.iperf3.txt")"
	t1=$(/usr/bin/python3 -c 'import time; print(time.monotonic())')
	read -r tot1 st1 <<< "$(e2e_stat_cpu)"
	sleep 0.3
	kill -TERM "$SINK_PID"; wait "$SINK_PID"; SINK_PID=
	echo "{\"k\": 2, \"mode\": \"$name\", \"tag\": \"$name\", \"t_start_mono\": $t0, \"t_end_mono\": $t1, \"steal_pct\": $(( 100 * (st1 - st0) / (tot1 - tot0 + 1) ))}" \
		>> "$E_OUT/runs.jsonl"
}
# A phase on a quiet machine: up to 3 tries; returns 1 if all were disturbed.
quiet_phase() {
	local why
	for try in 1 2 3; do
		e2e_quiet || e2e_log "the machine did not quieten within $E_QUIET_WAIT s"
		phase "$@"
		why=$(e2e_disturbed) && return 0
		e2e_log "$1: disturbed ($why)$([ $try -lt 3 ] && echo ", again")"
	done
	return 1
}

quiet_phase blast || e2e_skip "the machine was too busy for a clean blast"
DEV_ROOT=$(ip netns exec "$E_NS_S" tc qdisc show dev "$E_IF_S" root | awk 'NR == 1 {print $2, $3}')
ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" "$E_BIN/rxbneck-shape" \
	--receiver "$E_ADDR_R:$E_CPORT" --flow-port "$E_PORT" --dev "$E_IF_S" --rtt 200 \
	--status-interval 0.1 --json --state-dir "$E_TMP/shape-state" \
	> "$E_OUT/shape.jsonl" 2> "$E_OUT/shape.err" &
SHAPE_PID=$!
for _ in $(seq 100); do
	grep -q '"mode":"advice"' "$E_OUT/shape.jsonl" 2>/dev/null && break
	kill -0 "$SHAPE_PID" 2>/dev/null || e2e_fail "rxbneck-shape exited: $(tail -3 "$E_OUT/shape.err")"
	sleep 0.1
done
grep -q '"mode":"advice"' "$E_OUT/shape.jsonl" || e2e_fail "no advice from rxbneckd within 10 s"
binding=0
for try in 1 2 3; do
	quiet_phase shaped || e2e_skip "the machine was too busy for a clean shaped run"
	# Did the class hold packets back during this run?
	/usr/bin/python3 - "$E_OUT/shape.jsonl" "$E_OUT/runs.jsonl" <<'PY' && { binding=1; break; }
import json, sys
run = json.loads(open(sys.argv[2]).read().splitlines()[-1])
st = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
st = [s for s in st if run["t_start_mono"] <= s["mono_s"] <= run["t_end_mono"]]
ov = [s["receivers"][0]["class_stats"]["overlimits"] for s in st if s["receivers"][0]["class_stats"]]
sys.exit(0 if len(ov) > 10 and ov[-1] - ov[0] > 1000 else 1)
PY
	e2e_log "shaped run $try: the class did not bind (the sender did not exceed the advice); again"
done
[ $binding = 1 ] || e2e_skip "iperf3 could not send faster than the advice here: nothing to shape"
kill -TERM "$SHAPE_PID"; wait "$SHAPE_PID"; rc=$?; SHAPE_PID=
[ $rc -eq 0 ] || e2e_fail "rxbneck-shape exited $rc: $(tail -3 "$E_OUT/shape.err")"
root=$(ip netns exec "$E_NS_S" tc qdisc show dev "$E_IF_S" root | awk 'NR == 1 {print $2, $3}')
[ "$root" = "$DEV_ROOT" ] || e2e_fail "root qdisc after SIGTERM: '$root', before: '$DEV_ROOT'"

/usr/bin/python3 - "$E_OUT" <<'PY'
import json, sys
d = sys.argv[1]
runs = [json.loads(l) for l in open(d + "/runs.jsonl")]
blast = [r for r in runs if r["mode"] == "blast" and not r.get("disturbed")][-1]
shaped = [r for r in runs if r["mode"] == "shaped"][-1]
def sink(name, run):
    rows = [json.loads(l) for l in open("%s/%s.sink.jsonl" % (d, name))]
    # The sink's rows of the last attempt: after its own start.
    final = rows[-1]
    ivs = [r for r in rows if not r["final"] and r["t_start"] >= final["t_start"]]
    return final, ivs
st = [json.loads(l) for l in open(d + "/shape.jsonl") if l.startswith("{")]
st = [s for s in st if s["event"] == "status"]
def advice(t0, t1, key):
    """Time-weighted mean over [t0, t1] of the advice (rate_bps or loss)."""
    pts = [(s["mono_s"], s["receivers"][0]) for s in st]
    acc = dur = 0.0
    for i, (t, r) in enumerate(pts):
        nxt = pts[i + 1][0] if i + 1 < len(pts) else t1
        a, b = max(t, t0), min(nxt, t1)
        v = r["in_force"]["rate_bps"] if key == "rate" else (r["advice"] or {}).get("loss")
        if b > a and v is not None and r["in_force"]["mode"] == "advice":
            acc += v * (b - a)
            dur += b - a
    return acc / dur if dur else None
fb, _ = sink("blast", blast)
fs, ivs = sink("shaped", shaped)
ivs = [r for r in ivs if r["t_start"] >= fs["t_start"] + 1.0]
assert len(ivs) >= 6, "too few sink intervals in the shaped run: %d" % len(ivs)
arrived = sum(r["arrived_bps"] * (r["t_end"] - r["t_start"]) for r in ivs)
span = sum(r["t_end"] - r["t_start"] for r in ivs)
adv = advice(ivs[0]["t_start"], ivs[-1]["t_end"], "rate")
pred = advice(ivs[0]["t_start"], ivs[-1]["t_end"], "loss")
ratio = arrived / span / adv
lb, ls = fb["loss"], fs["loss"]
last = st[-1]["receivers"][0]
cs = last["class_stats"]
print("blast: arrived %.3f Gb/s, loss %.3f" % (fb["arrived_bps"] / 1e9, lb))
print("shaped: advice %.3f Gb/s (model's loss there %.4f); arrived %.3f Gb/s = %.3f x the "
      "advice; loss %.4f" % (adv / 1e9, pred, arrived / span / 1e9, ratio, ls))
print("shaped: per interval arrived / advice: %s" % " ".join(
    "%.3f" % (r["arrived_bps"] / advice(r["t_start"], r["t_end"], "rate")) for r in ivs))
print("class: %d packets, %d drops, queue peak %d bytes (%d packets)" % (
    cs["packets"], cs["drops"], cs["peak_backlog_bytes"], cs["peak_qlen"]))
assert abs(ratio - 1) <= 0.05, "the shaped rate is not within 5 % of the advice"
assert ls < lb / 2, "the shaped loss is not below half the blast's"
assert abs(ls - pred) < abs(lb - pred), "the shaped loss is not closer to the model's than the blast's"
assert cs["drops"] == 0, "the class dropped packets"
PY
[ $? -eq 0 ] || e2e_fail "checks failed (outputs in $E_OUT)"
e2e_log "PASS"
