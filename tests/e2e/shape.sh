#!/usr/bin/env bash
# rxbneck-shape's experiment (docs/shape.md §6): on the end-to-end testbed
# (tests/e2e/lib.sh: sender namespace, veth, rxbneckd on the receiving host,
# k CPU hogs on the receiver's CPU, 100 ms one-way delay), per k:
#
#   blast    rxbneck-send --rate 10G, a fixed-rate sender that does not follow
#   shaped   the same, with rxbneck-shape on the sender's veth
#   follow   rxbneck-send --follow, the reference: a sender that asks itself
#
# REPS of each in a shuffled order, then iperf3 -P 4 TCP for TCP_SECONDS,
# shaped and not, without added delay and over the delay line (RTT 2 x the
# delay). rxbneck-shape's --json status of every shaped run is kept (every
# 0.1 s: the advice in force and the class's counters) for claim 3 and the
# plot. Then tests/e2e/shape_analyze.py OUTDIR writes shape.md, shape.json
# and shape.png.
#
#   tests/e2e/shape.sh [-b BUILD] [-o OUTDIR] [-k "0 1 2 3"] [-n REPS]
#                      [-t TCP_REPS] [-T TCP_SECONDS] [-s SIZE] [-d DELAY_MS] [-a]
#
# Needs root; holds /tmp/rxbneck-heavy.lock one k at a time. Disturbed runs
# are marked and repeated by the e2e harness's rules (tests/e2e/lib.sh).
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KS="0 1 2 3"
REPS=3 TREPS=3 TSECS=8 ANALYZE=1
. "$SRC/tests/e2e/lib.sh"
e2e_args "b:E_BUILD o:E_OUT k:KS n:REPS t:TREPS T:TSECS s:E_SIZE d:E_DELAY_MS a=ANALYZE=0" "$@"
e2e_out_init shape
export E_BUILD E_OUT

e2e_setup_pinned
[ -x "$E_BIN/rxbneck-shape" ] || e2e_skip "$E_BIN/rxbneck-shape not built"
E_LINE_RATE=10000000000
e2e_daemon_start
mkdir -p "$E_OUT/shape" || e2e_fail "mkdir"
SIZE_BYTES=$(e2e_bytes "$E_SIZE")
RTT_MS=$((2 * E_DELAY_MS))

# The shaper's configuration: the UDP flow as rxbneck-send --follow
# announces it (1472-byte datagrams, the file, RTT 2 x the delay, 10 Gb/s),
# and iperf3's TCP flow.
cat > "$E_OUT/shape.conf" <<EOF
[shape]
state_dir = $E_TMP/shape-state
status_interval_s = 0.1
hold_s = 5
[receiver rbudp]
daemon = $E_ADDR_R:$E_CPORT
flow_port = $E_PORT
dev = $E_IF_S
payload_bytes = 1472
file_bytes = $SIZE_BYTES
rtt_ms = $RTT_MS
max_rate = $E_LINE_RATE
[receiver tcp]
daemon = $E_ADDR_R:$E_CPORT
flow_port = $E_TCP_PORT
proto = tcp
dev = $E_IF_S
payload_bytes = 1448
file_bytes = $SIZE_BYTES
rtt_ms = $RTT_MS
max_rate = $E_LINE_RATE
EOF

e2e_py - "$E_OUT/meta.json" <<PY
import json, sys
from runrec import meta_head
m = meta_head("$0 $*")
m.update({"ks": "$KS".split(), "reps": $REPS, "tcp_reps": $TREPS,
          "tcp_seconds": $TSECS, "file_size": "$E_SIZE", "file_bytes": $SIZE_BYTES,
          "one_way_delay_ms": float("$E_DELAY_MS"), "rcvbuf": "$E_RCVBUF",
          "epoch_ms": $E_EPOCH_MS, "line_rate_bps": $E_LINE_RATE,
          "tcp_delay_line": $E_DL_OK == 1, "recv_cpu": $E_RECV_CPU,
          "send_cpu": $E_SEND_CPU})
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY

SHAPE_PID=
# shape_start TAG: rxbneck-shape in the sender's namespace on the sender's
# CPU; returns once the advice is in force for both flows (or after 10 s).
shape_start() {
	ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" "$E_BIN/rxbneck-shape" \
		--config "$E_OUT/shape.conf" --json > "$E_OUT/shape/$1.jsonl" \
		2> "$E_OUT/shape/$1.err" &
	SHAPE_PID=$!
	for _ in $(seq 100); do
		/usr/bin/python3 -c '
import json, sys
l = open(sys.argv[1]).read().splitlines()
d = json.loads(l[-1]) if l else None
sys.exit(0 if d and all(r["in_force"]["mode"] == "advice" for r in d["receivers"]) else 1)' \
			"$E_OUT/shape/$1.jsonl" 2>/dev/null && return 0
		kill -0 "$SHAPE_PID" 2>/dev/null || e2e_fail "rxbneck-shape exited: $(tail -3 "$E_OUT/shape/$1.err")"
		sleep 0.1
	done
	e2e_log "  rxbneck-shape: no advice within 10 s (going on)"
}
shape_stop() {
	[ -n "$SHAPE_PID" ] || return 0
	kill -TERM "$SHAPE_PID"
	wait "$SHAPE_PID" || e2e_log "  rxbneck-shape exited $? ($(tail -2 "$E_OUT/shape/$1.err"))"
	SHAPE_PID=
	ip netns exec "$E_NS_S" tc qdisc show dev "$E_IF_S" root | grep -q "htb 7862:" &&
		e2e_fail "rxbneck-shape left its qdisc on $E_IF_S"
	return 0
}
# Only the shaper: a bare wait would also wait for the delay line, which
# e2e_cleanup stops after this.
shape_cleanup() {
	[ -n "$SHAPE_PID" ] || return 0
	kill -TERM "$SHAPE_PID" 2>/dev/null
	wait "$SHAPE_PID" 2>/dev/null
}
trap 'shape_cleanup; e2e_cleanup' EXIT

# tcp_run MODE REP: iperf3 -P 4 for TSECS s; MODE tcp4 / tcp4-delay
# (over the delay line, from its address), with "-shaped" appended when the
# shaper runs. Appends a record like e2e_tcp's to runs.jsonl.
tcp_run() {
	local mode=$1 rep=$2 src=$E_ADDR_S
	case $mode in tcp4-delay*) src=$E_ADDR_SD ;; esac
	e2e_iperf3 "$src" -P 4 -t "$TSECS"
	/usr/bin/python3 - "$E_TMP/tcp_c.json" "$E_OUT/runs.jsonl" "$E_K" "$mode" "$rep" "$E_T0" \
		"$E_T1" "$E_STEAL_PCT" <<'PY'
import json, sys
try:
    c = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    c = None
rec = {"k": int(sys.argv[3]), "mode": sys.argv[4], "tag": "tcp", "rep": int(sys.argv[5]),
       "t_start_mono": float(sys.argv[6]), "t_end_mono": float(sys.argv[7]),
       "steal_pct": int(sys.argv[8]), "rate_req_bps": None}
ok = bool(c and "end" in c and c["end"].get("sum_received"))
rec["ok"] = ok
if ok:
    sr = c["end"]["sum_received"]
    rec.update(goodput_bps=sr["bits_per_second"], seconds=sr["seconds"],
               bytes_received=sr["bytes"], retransmits=c["end"]["sum_sent"].get("retransmits"),
               intervals=[[i["sum"]["start"], i["sum"]["end"], i["sum"]["bits_per_second"]]
                          for i in c.get("intervals", [])])
else:
    rec["error"] = (c or {}).get("error") or "no iperf3 result"
with open(sys.argv[2], "a") as f:
    f.write(json.dumps(rec) + "\n")
print("k=%d %s rep %d: %s" % (rec["k"], rec["mode"], rec["rep"],
      "%.3f Gb/s, %s retransmits" % (rec["goodput_bps"] / 1e9, rec["retransmits"]) if ok
      else "FAILED " + rec["error"]), file=sys.stderr)
PY
}
tcp_point() { e2e_repeat_disturbed tcp_run "$@"; }	# tcp_point MODE REP

shuffled() {
	/usr/bin/python3 -c 'import random, sys; r = random.Random(sys.argv[1]); v = sys.argv[2:]; r.shuffle(v); print(" ".join(v))' "$@"
}

e2e_log "rxbneck-shape experiment in $E_OUT: k in {$KS}, $REPS x (blast, shaped, follow), $TREPS x TCP, file $E_SIZE, one-way delay $E_DELAY_MS ms"
for k in $KS; do
	e2e_k_begin "$k"
	c=$(e2e_wait_cb "$E_K") || e2e_log "k=$E_K: CPU $E_RECV_CPU did not settle at #C=$E_K (last $c)"
	e2e_log "k=$E_K: #C $c; one warm-up transfer"
	e2e_run fixed 10G 1 warmup
	for rep in $(seq "$REPS"); do
		for m in $(shuffled "shape-$E_K-$rep" blast shaped follow); do
			case $m in
			blast) e2e_point fixed 10G "$rep" blast ;;
			follow) e2e_point follow - "$rep" main ;;
			shaped)
				shape_start "k$E_K-r$rep"
				e2e_point fixed 10G "$rep" shaped
				shape_stop "k$E_K-r$rep" ;;
			esac
		done
	done
	for rep in $(seq "$TREPS"); do
		for m in tcp4 tcp4-shaped $([ "$E_DL_OK" = 1 ] && echo tcp4-delay tcp4-delay-shaped); do
			case $m in
			*-shaped)
				shape_start "k$E_K-$m-r$rep"
				tcp_point "$m" "$rep"
				shape_stop "k$E_K-$m-r$rep" ;;
			*) tcp_point "$m" "$rep" ;;
			esac
		done
	done
	e2e_k_end
done
e2e_daemon_stop
e2e_log "runs in $E_OUT/runs.jsonl ($(wc -l < "$E_OUT/runs.jsonl") lines)"
if [ "$ANALYZE" = 1 ]; then
	/usr/bin/python3 "$SRC/tests/e2e/shape_analyze.py" "$E_OUT" || e2e_fail "analysis failed"
fi
