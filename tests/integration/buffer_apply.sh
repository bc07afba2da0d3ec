#!/usr/bin/env bash
# [buffer] mode = apply, policy rrda, with the privileges the systemd unit
# gives the daemon: rxbneckd runs as an unprivileged user (nobody, as for
# DynamicUser=) holding exactly systemd/rxbneckd.service's capabilities,
# in the receivers' network namespace. Two receivers (rxbneck-bufload
# recv) with a 64 KiB SO_RCVBUF (sk_rcvbuf 128 KiB) on CPU 1, two CPU hogs
# there, 8 KiB datagrams from UDP senders in the other namespace:
#   - port P1, owned by root (allow_users = 0): its sk_rcvbuf, read back
#     with ss -m every 100 ms, grows within 1 s of the first drop, its
#     drops stop growing while the load goes on (the last 2 s of load drop
#     at most a tenth of what the first second after the overflow did),
#     and it shrinks after the load stops; every change is in the log with
#     old -> new size and RRDA's values; the flow's model takes the new K.
#     (RRDA gives little back: with memory mostly free alpha is small, and
#     eq. (4) shrinks by alpha x beta |v'|: docs/buffer.md §1. It shrinks
#     only while the queue drains: P1's receiver is stopped for the last
#     0.15 s of the load so that a backlog drains after it, as a receiver
#     that falls behind at the end of a transfer does; a receiver that kept
#     up to the end leaves RRDA nothing to act on);
#   - the rxbneck_buffer_* metrics agree with `rxbneckctl buffers --json`;
#   - port P2, owned by a uid not on the allow-list: never resized, and
#     `rxbneckctl buffers` says why.
# Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/daemon_lib.inc"
. "$(dirname "$0")/netpair.inc"

command -v setpriv >/dev/null || skip "setpriv not installed"
command -v stress-ng >/dev/null || skip "stress-ng not installed"
command -v ss >/dev/null || skip "ss not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
LOAD=$B/rxbneck-bufload
[ -x "$LOAD" ] || die "build first: $LOAD"
nobody_setup

NA=rxbt-buf-a$$ NB=rxbt-buf-b$$
P1=$((20000 + $$ % 20000)) P2=$((20001 + $$ % 20000)) MPORT=$((40002 + $$ % 20000))
on_exit "netpair_down $NA $NB"
netpair_up "$NA" "$NB" bua$$ bub$$ 10.251.$(($$ % 250)) || die "namespaces"
NET=10.251.$(($$ % 250))
ip -n "$NA" link set bua$$ mtu 9000 && ip -n "$NB" link set bub$$ mtu 9000 &&
	ip -n "$NB" link set lo up || die "mtu, lo"

write_conf "$N/d.conf" "[measure] interval_ms = 500" "[measure] watch_ports = $P1 $P2" \
	"[model] payload_bytes = 8192" "[metrics] enabled = yes" \
	"[metrics] listen = 127.0.0.1:$MPORT" "[buffer] mode = apply" "[buffer] policy = rrda" \
	"[buffer] allow_users = 0"

log "daemon as nobody with $caps, in $NB"
start_daemon_nobody "$set_" ip netns exec "$NB"

bg stress-ng --quiet --cpu 2 --cpu-method loop --taskset 1 --timeout 40s
# the receivers: P1 as root, P2 as a uid nobody allowed
ip netns exec "$NB" taskset -c 1 "$LOAD" recv --port "$P1" --rcvbuf 65536 --seconds 16 \
	--work-ns 1000 --idle-ms 20000 > "$T/r1.json" 2> "$T/r1.err" &
R1=$!
ip netns exec "$NB" setpriv --reuid=54321 --regid=54321 --clear-groups \
	taskset -c 1 "$LOAD" recv --port "$P2" --rcvbuf 65536 --seconds 16 --work-ns 1000 \
	--idle-ms 20000 > "$T/r2.json" 2> "$T/r2.err" &
R2=$!
_bg_pids+=("$R1" "$R2")
sleep 1.5

# ss -m every 100 ms: time, port, rb (sk_rcvbuf), d (drops), r (held)
cat > "$T/poll.py" <<'PY'
import re, subprocess, sys, time
ns, out, dur, ports = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
t0 = time.monotonic()
with open(out, "w") as f:
    while time.monotonic() - t0 < dur:
        t = time.monotonic()
        s = subprocess.run(["ip", "netns", "exec", ns, "ss", "-H", "-u", "-a", "-m", "-n"],
                           capture_output=True, text=True).stdout
        lines = s.splitlines()
        for i, l in enumerate(lines):
            for p in ports:
                if re.search(r":%s\s" % p, l + " ") and i + 1 < len(lines):
                    m = re.search(r"r(\d+),rb(\d+).*?d(\d+)", lines[i + 1] if "skmem" in lines[i + 1] else l)
                    if m:
                        f.write("%.3f %s %s %s %s\n" % (t, p, m.group(2), m.group(3), m.group(1)))
        f.flush()
        time.sleep(max(0.0, 0.1 - (time.monotonic() - t)))
PY
python3 "$T/poll.py" "$NB" "$T/ss.txt" 16 "$P1" "$P2" &
POLL=$!
_bg_pids+=("$POLL")
sleep 1
log "load: 20 senders x 30 Mb/s to :$P1, 10 x 30 Mb/s to :$P2, 8 s"
T_LOAD=$(python3 -c "import time; print(time.monotonic())")
ip netns exec "$NA" taskset -c 0 "$LOAD" send --to "$NET.2" --port "$P1" --flows 20 \
	--rate 30e6 --size 8192 --seconds 8 > "$T/s1.json" &
S1=$!
ip netns exec "$NA" taskset -c 0 "$LOAD" send --to "$NET.2" --port "$P2" --flows 10 \
	--rate 30e6 --size 8192 --seconds 8 > "$T/s2.json" &
S2=$!
sleep 7.85
kill -STOP "$R1" || die "cannot stop P1's receiver"
wait "$S1" "$S2"
T_END=$(python3 -c "import time; print(time.monotonic())")
kill -CONT "$R1" || die "cannot resume P1's receiver"
echo "$T_LOAD $T_END" > "$T/load.txt"
sleep 5
# /metrics before and after buffers --json: a size that moved between lies within
scrape() {
	ip netns exec "$NB" python3 -c 'import sys, urllib.request as u
sys.stdout.write(u.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' \
		"$MPORT" > "$1"
}
scrape "$T/metrics0.txt" || die "GET /metrics"
ctl buffers --json > "$T/buffers.json" || die "rxbneckctl buffers --json"
scrape "$T/metrics1.txt" || die "GET /metrics"
ctl buffers -v > "$T/buffers.txt" || die "rxbneckctl buffers"
ctl status --json > "$T/status.json" || die "status"
check_status_text "after the load"
wait "$POLL"
kill "$R1" "$R2" 2>/dev/null
cat "$T/buffers.txt" >&2

python3 - "$T" "$P1" "$P2" <<'PY' || die "checks"
import json, re, sys
T, p1, p2 = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [l.split() for l in open(T + "/ss.txt")]
t_load, t_end = map(float, open(T + "/load.txt").read().split())
def series(p):
    return [(float(t), int(rb), int(d), int(r)) for t, q, rb, d, r in rows if q == p]
s1, s2 = series(p1), series(p2)
assert s1 and s2, "ss saw the receivers"
rb0 = s1[0][1]
print("P1: rb at start %d, drops %d" % (rb0, s1[0][2]))
assert rb0 == 131072, rb0
# overflow start: the first sample with more drops than at the start
t_over = next((t for t, rb, d, r in s1 if d > s1[0][2]), None)
assert t_over is not None, "P1 never dropped: no overflow to react to"
t_grow = next((t for t, rb, d, r in s1 if rb > rb0), None)
assert t_grow is not None, "P1's buffer never grew"
print("P1: first drop seen %.2f s into the load, first growth %.2f s later"
      % (t_over - t_load, t_grow - t_over))
assert t_grow - t_over <= 1.0, "grew %.2f s after the overflow began" % (t_grow - t_over)
peak = max(rb for t, rb, d, r in s1)
# the first second after the overflow began against the last 2 s of the load
def drops_at(t):
    return max([d for tt, rb, d, r in s1 if tt <= t] or [s1[0][2]])
def rb_at(t):
    return [rb for tt, rb, d, r in s1 if tt <= t][-1]
first = drops_at(t_over + 1.0) - drops_at(t_over - 0.05)
last = drops_at(t_end) - drops_at(t_end - 2.0)
print("P1: drops in the first second of overflow %d, in the last 2 s of load %d; peak rb %d"
      % (first, last, peak))
assert last <= max(first / 10.0, 0), "drops kept growing: %d in the last 2 s" % last
post = [rb for t, rb, d, r in s1 if t > t_end]
top = max(post)
print("P1: rb when the load stopped %d, largest after %d, 5 s later %d"
      % (rb_at(t_end), top, post[-1]))
assert post[-1] < top, "did not shrink after the load stopped"
assert all(rb == rb0 for t, rb, d, r in s2), "P2 (not allowed) was resized"
print("P2: rb stayed %d, drops %d" % (rb0, s2[-1][2]))
assert s2[-1][2] > s2[0][2], "P2 never overflowed: its refusal was not tested"
b = json.load(open(T + "/buffers.json"))
assert b["mode"] == "apply" and b["policy"] == "rrda"
socks = {s["port"]: s for s in b["sockets"]}
a, n = socks[int(p1)], socks[int(p2)]
assert a["changes"] >= 1 and a["owner"]["allowed"] and a["owner"]["uid"] == 0, a
assert n["changes"] == 0 and not n["owner"]["allowed"] and n["owner"]["uid"] == 54321, n
assert "not in allow_users" in (n["refused"] or ""), n["refused"]
assert b["refusals"] >= 1
# the model's K from the new size: floor(rcvbuf / truesize)
st = json.load(open(T + "/status.json"))
f = [x for x in st["flows"] if x["port"] == int(p1)][0]
k = f["inputs"]["stage_b"]["queue_pkts"]["value"]
ts = a["truesize_bytes"]
want = int(a["rcvbuf_bytes"] // ts)
print("P1: model K %s, rcvbuf %d / truesize %.0f = %d" % (k, a["rcvbuf_bytes"], ts, want))
assert k is not None and abs(k - want) <= max(1, 0.02 * want), (k, want)
# the buffer metrics: the same sockets and sizes as rxbneckctl buffers
def scrape(path):
    m = {}
    for l in open(path):
        g = re.match(r'(rxbneck_buffer_\w+)(?:\{port="(\d+)",socket="(\d+)"\})? (\S+)$', l)
        if g:
            m[(g.group(1), g.group(2) and int(g.group(2)), g.group(3) and int(g.group(3)))] = float(g.group(4))
    return m
m0, m1 = scrape(T + "/metrics0.txt"), scrape(T + "/metrics1.txt")
for s in (a, n):
    for name, key in (("rxbneck_buffer_bytes", "rcvbuf_bytes"),
                      ("rxbneck_buffer_target_bytes", "recommend_bytes")):
        k0, k1 = m0[(name, s["port"], s["inode"])], m1[(name, s["port"], s["inode"])]
        assert min(k0, k1) <= s[key] <= max(k0, k1), (name, s["port"], k0, s[key], k1)
    assert m1[("rxbneck_buffer_decision", s["port"], s["inode"])] in (-1, 0, 1)
assert m0[("rxbneck_buffer_changes_total", None, None)] <= b["changes"] <= \
    m1[("rxbneck_buffer_changes_total", None, None)], b["changes"]
print("metrics: P1 rcvbuf %d, target %d, %d changes" %
      (m1[("rxbneck_buffer_bytes", a["port"], a["inode"])],
       m1[("rxbneck_buffer_target_bytes", a["port"], a["inode"])],
       m1[("rxbneck_buffer_changes_total", None, None)]))
PY
grep -E "buffer: port $P1 socket [0-9]+ \(pid [0-9]+ .*\): rcvbuf [0-9]+ -> [0-9]+ B \(rrda grow: f=\+1 v_b=" \
	"$T/daemon.log" >/dev/null || die "no logged growth with RRDA's values"
grep -c "buffer: port $P1 socket" "$T/daemon.log" | sed 's/^/changes logged: /' >&2
grep -E "buffer: port $P2 socket [0-9]+: not resized .*not in allow_users" "$T/daemon.log" >/dev/null ||
	die "the refusal of :$P2 is not logged"
kill -TERM "$DPID"
wait "$DPID" || die "rxbneckd exited with an error"
DPID=
log "PASS"
