#!/usr/bin/env bash
# tests/e2e/qtrace.py, the queue trace of docs/e2e.md §2 and §4.
#
# 1. cycles: a synthetic trace built from known cycles - 20 of one tick
#    (the receiver reads 1.2 ms and empties its queue), 8 of three ticks
#    (it reads a whole 4 ms tick, 1.5 MB stay queued, 100 packets are
#    dropped in each), 20 of one tick again - must come out as built.
# 2. poll: a real transfer into a small receive buffer over a veth pair;
#    the trace's drops must equal the receiver's own count of its socket's
#    drops, its samples must be in time order with the receiver's CPU
#    time never going back, and the queue must never hold more than the
#    receive buffer allows (rcvbuf and one datagram).
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
QT=${RXB_SRC:-.}/tests/e2e/qtrace.py
command -v python3 > /dev/null || { echo "e2e_qtrace: SKIP, no python3" >&2; exit 77; }

work=$(mktemp -d /tmp/rxbt-qtrace.XXXXXX)
trap 'rm -rf "$work"' EXIT

# 1. The synthetic trace: sample every 0.4 ms, arrivals 450 bytes/us.
python3 - "$work/synth.txt" <<'PY'
import sys
out = open(sys.argv[1], "w")
t = run = q = drops = 0
STEP = 400_000		# ns
IN = 450		# bytes per us arriving
def phase(ns, on, drain_to=None, drop_at=None):
    """Advance ns: off (queue fills) or on (the receiver reads down to drain_to)."""
    global t, run, q, drops
    steps = ns // STEP
    q0 = q
    for i in range(1, steps + 1):
        t += STEP
        if on:
            run += STEP
            q = int(q0 + (drain_to - q0) * i / steps)
        else:
            q += IN * STEP // 1000
            if drop_at is not None and i == drop_at:
                drops += 100
        out.write("%d %d %d %d\n" % (t, run, q, drops))
def one_tick():
    phase(2_800_000, False)
    phase(1_200_000, True, 0)
def three_ticks():
    phase(8_000_000, False, drop_at=10)
    phase(4_000_000, True, 1_500_000)
out.write("%d %d %d %d\n" % (t, run, q, drops))
for _ in range(20): one_tick()
phase(2_800_000, False)
phase(4_000_000, True, 1_500_000)	# into the behind mode
for _ in range(8): three_ticks()
phase(2_800_000, False)
phase(1_200_000, True, 0)		# out of it
for _ in range(20): one_tick()
phase(2_800_000, False)			# a last peak
phase(1_200_000, True, 0)
PY
python3 "$QT" cycles --json "$work/synth.txt" > "$work/synth.json" ||
	{ echo "e2e_qtrace: qtrace.py cycles failed" >&2; exit 1; }
python3 - "$work/synth.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))[0]
by = {r["ticks"]: r for r in s["by_ticks"]}
def check(ok, what):
    if not ok:
        print("e2e_qtrace: synthetic: %s (%s)" % (what, json.dumps(s)), file=sys.stderr)
        sys.exit(1)
check(s["drops"] == 800, "800 drops in all")
check(1 in by and by[1]["cycles"] >= 38 and by[1]["drops"] == 0, "38+ one-tick cycles, no drops")
check(abs(by[1]["ran_ms_median"] - 1.2) < 0.05 and by[1]["left_bytes_median"] == 0,
      "one-tick cycles: 1.2 ms read, queue emptied")
check(3 in by and by[3]["cycles"] >= 7 and by[3]["drops"] >= 700, "7+ three-tick cycles, 700+ drops")
check(abs(by[3]["ran_ms_median"] - 4.0) < 0.05 and abs(by[3]["left_bytes_median"] - 1.5e6) < 1e4,
      "three-tick cycles: 4.0 ms read, 1.5 MB left")
print("  synthetic: %s" % ", ".join("%d ticks: %d cycles, %d drops" % (r["ticks"], r["cycles"], r["drops"])
                                    for r in s["by_ticks"]))
PY

rm -rf "$work"

# 2. A real trace (skips without root and ip; rbudp_setup's trap cleans up).
rbudp_setup qtrace
work=$RB_TMP
PORT=9160
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --discard --quiet --json \
	--rcvbuf 128Ki --timeout 30 > "$work/recv.json"
rbudp_bg qpid ip netns exec "$RB_NS_R" python3 "$QT" poll $PORT "$work/trace.txt" \
	2> "$work/poll.err"
sleep 0.3
ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet --json \
	--timeout 30 --size 50M --rate 3G > "$work/send.json" ||
	fail "sender failed: $(cat "$work/send.json")"
wait "$rpid" || fail "receiver failed: $(cat "$work/recv.json")"
wait "$qpid" || fail "qtrace.py poll failed: $(cat "$work/poll.err")"
python3 - "$work/trace.txt" "$work/recv.json" <<'PY' || fail "real trace"
import json, sys
rows = [[int(x) for x in l.split()] for l in open(sys.argv[1])]
r = json.loads(open(sys.argv[2]).readline())
assert len(rows) > 50, "only %d samples" % len(rows)
assert all(b[0] > a[0] for a, b in zip(rows, rows[1:])), "samples out of time order"
assert all(b[1] >= a[1] for a, b in zip(rows, rows[1:])), "CPU time went back"
peak = max(x[2] for x in rows)
assert peak > 0, "the queue never held anything"
# The kernel queues a datagram while the queue's memory is below rcvbuf, so
# the queue never holds more than rcvbuf and one datagram's truesize.
assert peak <= r["rcvbuf_bytes"] + 65536, "queue %d bytes, rcvbuf %d" % (peak, r["rcvbuf_bytes"])
drops = rows[-1][3] - rows[0][3]
if r.get("socket_drops") is not None:
    assert drops == r["socket_drops"], "trace drops %d, receiver's %d" % (drops, r["socket_drops"])
print("  real: %d samples, queue up to %d kB (rcvbuf %d kB), %d drops (receiver: %s), %d rounds"
      % (len(rows), peak // 1000, r["rcvbuf_bytes"] // 1000, drops, r.get("socket_drops"),
         r["rounds"]))
PY
echo "e2e_qtrace: PASS"
