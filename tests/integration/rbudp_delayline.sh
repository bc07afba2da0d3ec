#!/usr/bin/env bash
# rxbneck-delayline: the user-space delay that gives TCP the e2e
# experiment's emulated path. Two namespaces joined by a veth; the
# receiver's packets back to the sender's second address go through a TUN
# pair and the delay line, as in tests/e2e/lib.sh. Checked against
# independent truths:
#  - a UDP echo's round-trip time through the line is the delay (min >= D,
#    median within 3 ms of D), and well under 1 ms on the veth alone;
#  - a TCP flow with a fixed 256 KiB socket buffer cannot carry more than
#    its buffer per round trip: goodput <= 2 x 256 KiB / D (the kernel
#    doubles SO_RCVBUF), while on the veth alone the same flow goes more
#    than 5 x faster than that bound;
#  - the line drops nothing, and a missing device or a bad option fails
#    with a message that names it.
set -u
. "${RXB_SRC:-.}/tests/integration/netpair.inc"
BIN=${RXB_BUILD:-build}
DL=$BIN/rxbneck-delayline
NS_S=rxbdl-s-$$ NS_R=rxbdl-r-$$
NET=10.253.71 NET2=10.253.72
DELAY_MS=50
TMP=$(mktemp -d /tmp/rxbdl.XXXXXX)
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	netpair_down "$NS_S" "$NS_R"
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$DL" ] || { echo "SKIP: $DL not built" >&2; exit 77; }
for b in iperf3 python3; do
	command -v "$b" > /dev/null || { echo "SKIP: $b not installed" >&2; exit 77; }
done
[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun" >&2; exit 77; }

# Bad input first: a bad option exits 2 naming it; a missing device exits 1
# naming the device, and leaves no device behind.
"$DL" --from x --to y --delay-ms -3 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- --delay-ms "$TMP/err" || fail "bad --delay-ms: exit $rc, $(cat "$TMP/err")"
"$DL" --from x --delay-ms 3 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- --to "$TMP/err" || fail "missing --to: exit $rc, $(cat "$TMP/err")"
"$DL" --from x --to y --delay-ms 3 --rt-prio 0 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- --rt-prio "$TMP/err" || fail "bad --rt-prio: exit $rc, $(cat "$TMP/err")"
netpair_up "$NS_S" "$NS_R" dls dlr "$NET" || fail "netpair"
"$DL" --from nosuchdl0 --from-netns "$NS_R" --to nosuchdl1 --delay-ms 1 2> "$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q nosuchdl0 "$TMP/err" || fail "missing device: exit $rc, $(cat "$TMP/err")"
ip -n "$NS_R" link show nosuchdl0 > /dev/null 2>&1 && fail "a missing device was created"
"$DL" --from x --from-netns no-such-ns-$$ --to y --delay-ms 1 2> "$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no-such-ns-$$" "$TMP/err" || fail "missing netns: exit $rc, $(cat "$TMP/err")"

# The path: data on the veth, the receiver's replies to $NET2.1 through the line.
netpair_tun_return "$NS_S" "$NS_R" dls0 dlr0 "$NET2.1" || fail "TUN set-up"

netpair_delayline "$DL" "$NS_S" "$NS_R" dls0 dlr0 "$DELAY_MS" "$TMP/dl.json" "$TMP/dl.err" \
	--json; rc=$?
pids+=("$NETPAIR_DL_PID")
[ $rc -eq 0 ] || fail "delay line not ready: $(cat "$TMP/dl.err")"

# UDP echo: 20 probes 50 ms apart from SRC to $NET.2, round trips in ms.
echo_rtts() {	# echo_rtts NAME SRC_ADDR
	local pid
	ip netns exec "$NS_R" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 5298))
s.settimeout(10)
for _ in range(20):
    b, a = s.recvfrom(64)
    s.sendto(b, a)
' "$NET.2" &
	pid=$!
	pids+=($pid)
	sleep 0.3
	ip netns exec "$NS_S" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
s.settimeout(2)
for i in range(20):
    t0 = time.monotonic()
    s.sendto(b"%d" % i, (sys.argv[2], 5298))
    assert s.recvfrom(64)[0] == b"%d" % i
    print("%.3f" % ((time.monotonic() - t0) * 1e3))
    time.sleep(0.05)
' "$2" "$NET.2" > "$TMP/$1.rtt" || fail "UDP echo $1"
	wait "$pid" || fail "UDP echo server $1"
}
echo_rtts veth "$NET.1"
echo_rtts line "$NET2.1"

# TCP: fixed 256 KiB buffers (-w sets SO_SNDBUF and SO_RCVBUF on both ends).
tcp() {	# tcp NAME SRC_ADDR
	local pid
	ip netns exec "$NS_R" iperf3 -s -1 -p 5299 -B "$NET.2" > /dev/null 2>&1 &
	pid=$!
	pids+=($pid)
	for _ in $(seq 50); do
		ip netns exec "$NS_R" ss -Htln "sport = :5299" | grep -q . && break
		sleep 0.02
	done
	ip netns exec "$NS_S" iperf3 -c "$NET.2" -p 5299 -B "$2" -w 256K -t 3 --json \
		> "$TMP/$1.json" 2>&1 || fail "iperf3 $1: $(tail -5 "$TMP/$1.json")"
	wait "$pid" 2>/dev/null
}
tcp veth "$NET.1"
tcp line "$NET2.1"

kill "${pids[0]}"
wait "${pids[0]}" || fail "delay line exited $?: $(cat "$TMP/dl.err")"
pids=("${pids[@]:1}")

python3 - "$TMP" "$DELAY_MS" <<'PY' || fail "checks"
import json, statistics, sys
d, delay_ms = sys.argv[1], float(sys.argv[2])
def rtts(name):
    return [float(x) for x in open(d + "/" + name + ".rtt").read().split()]
line, base = rtts("line"), rtts("veth")
med = statistics.median(line)
print("  UDP echo: veth alone median %.3f ms; through the line min %.3f median %.3f "
      "max %.3f ms (%d replies), delay %g ms"
      % (statistics.median(base), min(line), med, max(line), len(line), delay_ms))
assert len(line) == 20 and len(base) == 20, "lost replies"
assert statistics.median(base) < 1.0, "the veth alone is slow"
assert min(line) >= delay_ms, "a reply came back sooner than the delay"
assert med <= delay_ms + 3.0, "the line adds more than its delay"

def goodput(name):
    j = json.load(open(d + "/" + name + ".json"))
    return j["end"]["sum_received"]["bits_per_second"]
bound = 2 * 256 * 1024 * 8 / (delay_ms / 1e3)
veth, thr = goodput("veth"), goodput("line")
print("  TCP, 256 KiB buffers: veth alone %.0f Mb/s; through the line %.1f Mb/s; "
      "bound 2 x 256 KiB / %g ms = %.1f Mb/s" % (veth / 1e6, thr / 1e6, delay_ms, bound / 1e6))
assert thr <= 1.05 * bound, "more than a window per round trip: the delay is not on the path"
assert thr >= 0.2 * bound, "the line itself throttles TCP"
assert veth >= 5 * bound, "the veth alone should be far faster than the delayed bound"

s = json.load(open(d + "/dl.json"))
print("  line: %d packets forwarded, %.1f us late on average (max %.1f us), "
      "%d dropped, peak queue %d, %.2f s CPU" % (s["forwarded_pkts"], s["late_mean_us"],
      s["late_max_us"], s["dropped_queue_full_pkts"] + s["write_error_pkts"],
      s["max_queue_pkts"], s["cpu_s"]))
assert s["forwarded_pkts"] > 20, "too few packets through the line"
assert s["dropped_queue_full_pkts"] == 0 and s["write_error_pkts"] == 0
assert abs(s["delay_ms"] - delay_ms) < 1e-9 and s["rt_prio"] == 10
PY
echo "PASS: rbudp_delayline"
