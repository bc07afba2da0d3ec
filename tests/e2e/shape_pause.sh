#!/usr/bin/env bash
# rxbneck-shape's PAUSE measurement (docs/shape.md §5.1): whether a periodic
# send/pause schedule (period 4.2 ms, window 2.8 ms, 400 Mb/s between the
# windows) can be held to 1 ms by changing the HTB class from user space.
# rxbneck-shape-pausecheck in a sender namespace, a UDP sink in a receiver
# namespace (veth pair); for each mechanism (rate, charge) and sender kind
# (1472-byte datagrams, UDP GSO packets of 16), WINDOWS windows, the timer
# and the sender on CPU 0, under the heavy lock. One JSON line per case in
# OUTDIR/pause.jsonl, a table on stdout.
#
#   tests/e2e/shape_pause.sh [-b BUILD] [-o OUTDIR] [-n WINDOWS]
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build OUT= WINDOWS=500
while getopts "b:o:n:" o; do
	case $o in
	b) BUILD=$OPTARG ;; o) OUT=$OPTARG ;; n) WINDOWS=$OPTARG ;;
	*) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
BUILD=$(cd "$BUILD" && pwd)
CHECK=$BUILD/rxbneck-shape-pausecheck SINK=$BUILD/rxbneck-udpsink
[ -x "$CHECK" ] && [ -x "$SINK" ] || { echo "SKIP: build $CHECK and $SINK first" >&2; exit 77; }
[ -n "$OUT" ] || OUT=$SRC/tests/e2e/out/shape-pause-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
NS_S=rxbsp-s-$$ NS_R=rxbsp-r-$$ NET=10.235.$(($$ % 250)) PORT=9000
cleanup() {
	[ -n "${SINK_PID:-}" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
	return 0
}
trap cleanup EXIT
ip netns add "$NS_S" && ip netns add "$NS_R" &&
ip link add shp$$ netns "$NS_S" type veth peer name shq$$ netns "$NS_R" &&
ip -n "$NS_S" addr add "$NET.1/24" dev shp$$ && ip -n "$NS_R" addr add "$NET.2/24" dev shq$$ &&
ip -n "$NS_S" link set shp$$ up && ip -n "$NS_R" link set shq$$ up || { echo "FAIL: set-up" >&2; exit 1; }
ip netns exec "$NS_R" "$SINK" --port $PORT --cpu 1 > /dev/null 2>&1 &
SINK_PID=$!
exec 9> /tmp/rxbneck-heavy.lock
for mech in rate charge; do
	for gso in 1 16; do
		echo "[$(date +%T)] $mech, $gso datagram(s) per packet: waiting for the heavy-test lock" >&2
		flock 9
		ip netns exec "$NS_S" "$CHECK" --dev shp$$ --to "$NET.2" --port $PORT --cpu 0 \
			--windows "$WINDOWS" --mechanism "$mech" --gso "$gso" >> "$OUT/pause.jsonl" ||
			{ echo "FAIL: $mech/$gso" >&2; exit 1; }
		flock -u 9
	done
done
python3 - "$OUT/pause.jsonl" <<'PY'
import json, sys
print("| mechanism | datagrams per packet | windows held within 1 ms | window start error p50 / p95 (ms) "
      "| window end error p50 / p95 / max (ms) | class change late p50 / p99 (ms) |")
print("|---|---|---|---|---|---|")
for l in open(sys.argv[1]):
    d = json.loads(l)
    print("| %s | %d | %d of %d (%.0f %%) | %.2f / %.2f | %.2f / %.2f / %.1f | %.2f / %.2f |" % (
        d["mechanism"], d["gso_segs"], d["held_1ms"], d["windows"], 100 * d["held_fraction"],
        d["start_err_ms_p50"], d["start_err_ms_p95"], d["end_err_ms_p50"], d["end_err_ms_p95"],
        d["end_err_ms_max"], d["command_late_ms_p50"], d["command_late_ms_p99"]))
PY
