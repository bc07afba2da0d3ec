#!/usr/bin/env bash
# A stranger cannot take the receiver (issue 34, item 4):
#  1. a SETUP claiming 1 GB commits no memory (receiver RSS stays small,
#     where protocol version 1 pre-faulted the gigabyte);
#  2. while that squatter sends nothing, a real sender connects: it waits
#     instead of being turned away, and is served once the squat times out
#     (--setup-timeout); the squat does not use up --count 1;
#  3. a squatter that does send authenticated datagrams, scattered over
#     the claimed gigabyte, commits about one page per datagram.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup squat
export RB_PY="${RXB_SRC:-.}/tools/rbudp"
PORT=9700

cat > "$RB_TMP/squat.py" <<'PY'
import hashlib, os, sys, time
sys.path.insert(0, os.environ["RB_PY"])
from rbudp_peer import *

host, port, hold, scatter = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
GB = 10**9

class Claim(Sender):
    """Claims a 1 GB file; only ever sends the few datagrams it chooses."""
    def __init__(self):
        Sender.__init__(self, host, port, b"")
        self.total = (GB + PAYLOAD - 1) // PAYLOAD

p = Claim()
p.handshake()
p.send(SETUP, setup_body(PAYLOAD, p.total, GB, bytes(32), p.udp.getsockname()[1]))
t, b = p.read()
assert t == SETUP_OK, t
print("setup_ok", flush=True)
if scatter:
    # One datagram every total/scatter packets: authentic, far apart.
    step = p.total // scatter
    for i in range(scatter):
        seq = i * step
        p.udp.send(p.keys.dgram(seq, 1, os.urandom(PAYLOAD)))
        if i % 64 == 63:
            time.sleep(0.002)
    print("scattered %d" % scatter, flush=True)
time.sleep(hold)
PY

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
wait_for() { for _ in $(seq 100); do grep -q "$1" "$2" && return 0; sleep 0.05; done; return 1; }

echo "squat: SETUP for 1 GB, then silence; a real sender meanwhile"
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
	--output "$RB_TMP/out.bin" --setup-timeout 2 --count 1 > "$RB_TMP/r.json" 2> "$RB_TMP/r.err"
sleep 0.3
rss0=$(rss_kib "$rpid")
rbudp_bg qpid ip netns exec "$RB_NS_S" python3 "$RB_TMP/squat.py" "$RB_ADDR_R" $PORT 6 0 \
	> "$RB_TMP/q.out"
wait_for setup_ok "$RB_TMP/q.out" || fail "the squatter's SETUP was not answered"
sleep 0.2
rss1=$(rss_kib "$rpid")
echo "  receiver RSS: $rss0 KiB idle, $rss1 KiB with 1 GB claimed"
[ "$rss1" -lt $((rss0 + 16384)) ] || fail "the claim committed memory: $rss0 -> $rss1 KiB"
t0=$(date +%s.%N)
ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet --json \
	--size 20M --rate 1G > "$RB_TMP/s.json" 2> "$RB_TMP/s.err" ||
	fail "the real sender was refused: $(cat "$RB_TMP/s.err")"
t1=$(date +%s.%N)
wait "$rpid" || fail "receiver exit $?: $(cat "$RB_TMP/r.err")"
rbudp_synth "$RB_TMP/ref.bin" 20000000
cmp "$RB_TMP/ref.bin" "$RB_TMP/out.bin" || fail "the real transfer's file differs"
python3 - "$RB_TMP/r.json" "$t0" "$t1" <<'PY' || fail "receiver summaries"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert len(runs) == 2, len(runs)
sq, real = runs
assert not sq["counted"] and not sq["ok"] and "no authenticated datagram" in sq["error"], sq
assert real["counted"] and real["ok"] and real["digest_checked"], real
waited = float(sys.argv[2]), float(sys.argv[3])
print("  squat ended: %s; the real sender waited and finished in %.2f s"
      % (sq["error"], waited[1] - waited[0]))
assert waited[1] - waited[0] < 10
PY
kill "$qpid" 2>/dev/null

echo "squat: authenticated datagrams scattered over 1 GB"
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
	--output "$RB_TMP/out2.bin" --setup-timeout 2 --timeout 2 > "$RB_TMP/r2.json" \
	2> "$RB_TMP/r2.err"
sleep 0.3
rss0=$(rss_kib "$rpid")
N=2000
rbudp_bg qpid ip netns exec "$RB_NS_S" python3 "$RB_TMP/squat.py" "$RB_ADDR_R" $PORT 1 $N \
	> "$RB_TMP/q2.out"
wait_for scattered "$RB_TMP/q2.out" || fail "the scatter did not run"
sleep 0.3
rss1=$(rss_kib "$rpid")
# A page per datagram, the ahead-of-data window (at most 2 x stored + 8 MiB
# + one 512 KiB step: recv_store.h) and 6 MiB for everything else (buffers).
bound=$(( N * 4 + 2 * N * 1456 / 1024 + 8192 + 512 + 6144 ))
echo "  receiver RSS: $rss0 -> $rss1 KiB after $N datagrams (bound $bound KiB over idle)"
[ "$((rss1 - rss0))" -le "$bound" ] || fail "memory grew more than the data justifies"
wait "$rpid"
grep -q '"counted":true' "$RB_TMP/r2.json" || fail "authenticated data did not make the session count"
echo "PASS"
