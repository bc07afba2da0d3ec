#!/usr/bin/env bash
# The stream-count advisor's passive samples against iperf3's own count.
# Two namespaces joined by a veth; the receiver's ACKs back to the sender's
# second address go through rxbneck-delayline (50 ms round trip, as in
# rbudp_delayline.sh), and an htb qdisc on the sender's veth is the
# bottleneck (200 Mbit/s). rxbneckd runs in the receiver's namespace and
# samples the transfers to iperf3's port by their tcp_info counters alone;
# iperf3 -P n runs for n = 1, 2, 4, 8 (2 s omitted, 8 s counted). Checked:
#  - the daemon has one peer, the sender's address and iperf3's port, with
#    a sample bucket for each n and no other (iperf3's control connection
#    is not a stream);
#  - each bucket's throughput is within 10 % of what iperf3's receiver
#    reported for that n (sum_received);
#  - the samples survive a restart (streams.state), and the text view and
#    the peer filter show them.
set -u
. "${RXB_SRC:-.}/tests/integration/netpair.inc"
BIN=${RXB_BUILD:-build}
DL=$BIN/rxbneck-delayline
RXBD=$BIN/rxbneckd
CTL=$BIN/rxbneckctl
NS_S=rxbsp-s-$$ NS_R=rxbsp-r-$$
NET=10.253.81 NET2=10.253.82
DELAY_MS=50
PORT=$((30000 + $$ % 5000))
TMP=$(mktemp -d /tmp/rxbsp.XXXXXX)
SOCK=$TMP/run/ctl.sock
pids=()
DPID=

cleanup() {
	local p
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	netpair_down "$NS_S" "$NS_R"
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[ -f "$TMP/d.log" ] && tail -20 "$TMP/d.log" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
for f in "$DL" "$RXBD" "$CTL"; do
	[ -x "$f" ] || { echo "SKIP: $f not built" >&2; exit 77; }
done
for b in iperf3 python3 tc; do
	command -v "$b" > /dev/null || { echo "SKIP: $b not installed" >&2; exit 77; }
done
[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun" >&2; exit 77; }

# The path: data on the veth through htb, the replies to $NET2.1 through the line.
netpair_up "$NS_S" "$NS_R" sps spr "$NET" || fail "netpair"
ip -n "$NS_R" link set lo up || fail "lo in $NS_R"
netpair_tun_return "$NS_S" "$NS_R" sps0 spr0 "$NET2.1" || fail "TUN set-up"
tc -n "$NS_S" qdisc add dev sps root handle 1: htb default 10 &&
tc -n "$NS_S" class add dev sps parent 1: classid 1:10 htb rate 200mbit ceil 200mbit \
	burst 64k cburst 64k quantum 60000 || fail "htb"
netpair_delayline "$DL" "$NS_S" "$NS_R" sps0 spr0 "$DELAY_MS" /dev/null "$TMP/dl.err"; rc=$?
pids+=("$NETPAIR_DL_PID")
[ $rc -eq 0 ] || fail "delay line not ready: $(cat "$TMP/dl.err")"

cat > "$TMP/d.conf" <<EOF
[daemon]
state_dir = $TMP/state
runtime_dir = $TMP/run
ctl_socket = $SOCK
[measure]
interval_ms = 500
attach = none
[control]
listen_address = 127.0.0.1
port = $((PORT + 1))
[metrics]
enabled = yes
listen = 127.0.0.1:$((PORT + 2))
[streams]
ports = $PORT
min_sample_s = 1
EOF
start_daemon() {
	ip netns exec "$NS_R" "$RXBD" -f -c "$TMP/d.conf" >> "$TMP/d.log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do [ -S "$SOCK" ] && "$CTL" -s "$SOCK" version > /dev/null 2>&1 && return; sleep 0.05; done
	fail "rxbneckd did not start"
}
stop_daemon() {
	kill -TERM "$DPID" && wait "$DPID" || fail "rxbneckd exited badly"
	DPID=
}
start_daemon
ip netns exec "$NS_R" iperf3 -s -p "$PORT" -B "$NET.2" > /dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do
	ip netns exec "$NS_R" ss -Htln "sport = :$PORT" | grep -q . && break
	sleep 0.02
done

for n in 1 2 4 8; do
	ip netns exec "$NS_S" iperf3 -c "$NET.2" -p "$PORT" -B "$NET2.1" -P "$n" -O 2 -t 8 \
		--json > "$TMP/ip$n.json" 2>&1 || fail "iperf3 -P $n: $(tail -5 "$TMP/ip$n.json")"
	sleep 1.2
done
"$CTL" -s "$SOCK" streams --json > "$TMP/s.json" || fail "streams --json"

python3 - "$TMP" "$NET2.1" "$PORT" <<'PY' || fail "passive samples against iperf3"
import json, sys
d, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(open(d + "/s.json"))
peers = doc["peers"]
assert len(peers) == 1, [(p["address"], p["port"]) for p in peers]
p = peers[0]
assert p["address"] == addr and p["port"] == port, (p["address"], p["port"])
got = {s["n"]: s for s in p["samples"]}
assert sorted(got) == [1, 2, 4, 8], sorted(got)
worst = 0
for n in (1, 2, 4, 8):
    ip = json.load(open(f"{d}/ip{n}.json"))["end"]["sum_received"]["bits_per_second"]
    s = got[n]
    err = s["throughput_bps"] / ip - 1
    worst = max(worst, abs(err))
    print(f"  n={n}: daemon {s['throughput_bps'] / 1e6:7.2f} Mb/s over {s['count']} samples "
          f"(sd {s['sd_bps'] / 1e6 if s['sd_bps'] else 0:.2f}), iperf3 {ip / 1e6:7.2f} Mb/s: "
          f"{100 * err:+.1f} %")
    assert s["origins"] == ["passive"], s["origins"]
    assert s["count"] >= 5, s
    assert abs(err) <= 0.10, f"n={n}: {100 * err:+.1f} %"
print(f"  worst {100 * worst:.1f} % (bound 10 %)")
PY

# A sender of minor 2 on the control socket: STREAMS_SAMPLE frames for
# n = 1, 2, 4 (rising) are filed under its address, and STREAMS comes back
# asking for 8 (EXPLORE); a sample beyond [streams] max_n is dropped, not an error.
ip netns exec "$NS_R" python3 - "$((PORT + 1))" "$PORT" <<'PY' || fail "STREAMS from the daemon"
import socket, struct, sys, time
cport, flow = int(sys.argv[1]), int(sys.argv[2])
seq = 0
def frame(ftype, payload):
    global seq
    seq += 1
    return b"RXBN" + struct.pack(">BBHII", 1, ftype, 0, 16 + len(payload), seq) + payload
def recv(s):
    h = b""
    while len(h) < 16:
        h += s.recv(16 - len(h))
    n = struct.unpack(">I", h[8:12])[0]
    b = b""
    while len(b) < n - 16:
        b += s.recv(n - 16 - len(b))
    return h[5], b
s = socket.create_connection(("127.0.0.1", cport), timeout=5)
s.sendall(frame(0x01, struct.pack(">HHBBHIIQQ", 2, flow, 6, 0, 0x0008, 1448, 50000, 0, 0)))
t, b = recv(s)
assert t == 0x02, t
minor, granted, accepts = struct.unpack(">HHH", b[:6])
assert minor >= 2 and granted == 0x0008 and accepts & 0x0002, (minor, granted, accepts)
for n, bps in ((1, 30e6), (2, 60e6), (4, 120e6), (5000, 1e6)):
    s.sendall(frame(0x21, struct.pack(">HHIQQ", flow, 0, min(n, 1024), int(bps), 4000000)))
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    t, b = recv(s)
    if t != 0x13:
        continue
    port, flags, n = struct.unpack(">HHI", b[:8])
    if n == 8:
        assert port == flow and flags & 0x0001, (port, flags)
        print("  a sender's samples 1, 2, 4: STREAMS asks for %d (flags 0x%x)" % (n, flags))
        break
else:
    sys.exit("no STREAMS asking for 8 streams")
PY

# The metrics endpoint: each peer's advised streams and confidence are the
# STREAMS frame's, as rxbneckctl streams --json shows them (the sender on
# 127.0.0.1 was just told 8).
"$CTL" -s "$SOCK" streams --json > "$TMP/s2.json" || fail "streams --json"
ip netns exec "$NS_R" python3 - "$TMP/s2.json" "$((PORT + 2))" "$PORT" <<'PY' || fail "metrics"
import json, re, sys, urllib.request
doc, mport, port = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
text = urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5).read().decode()
got = {}
for name in ("rxbneck_flow_advised_streams", "rxbneck_flow_streams_confidence_ratio"):
    for m in re.finditer(r'^%s\{port="(\d+)",peer="([^"]+)"\} (\S+)$' % name, text, re.M):
        got[(name, m[2], int(m[1]))] = float(m[3])
want = {}
for p in doc["peers"]:
    f = p["frame"]
    if f["valid"]:
        want[("rxbneck_flow_advised_streams", p["address"], p["port"])] = f["streams"]
        want[("rxbneck_flow_streams_confidence_ratio", p["address"], p["port"])] = \
            f["confidence"] / 1000
assert len(want) == 4 and got == want, (got, want)
assert got[("rxbneck_flow_advised_streams", "127.0.0.1", int(port))] == 8, got
print("  metrics: %d peers' advice as in the STREAMS frames" % (len(want) // 2))
PY

# A restart: the samples come back from streams.state; the filter and the text.
stop_daemon
[ -s "$TMP/state/streams.state" ] || fail "no streams.state"
start_daemon
"$CTL" -s "$SOCK" streams "$NET2.1:$PORT" > "$TMP/text" || fail "streams PEER"
grep -q "Peer $NET2.1, local port $PORT" "$TMP/text" || fail "text: $(cat "$TMP/text")"
grep -q "4 stream counts" "$TMP/text" || fail "text after restart: $(cat "$TMP/text")"
"$CTL" -s "$SOCK" streams "$NET2.1:1" --json | python3 -c \
	'import json,sys; assert json.load(sys.stdin)["peers"] == []' || fail "filter"
"$CTL" -s "$SOCK" streams 300.1.1.1 > /dev/null 2> "$TMP/err"
[ $? -eq 1 ] && grep -q BAD_ARGUMENT "$TMP/err" || fail "bad peer: $(cat "$TMP/err")"
stop_daemon
echo "PASS: streams_passive"
