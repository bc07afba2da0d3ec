#!/usr/bin/env bash
# --key-file: with the same key on both ends a transfer runs (auth "psk");
# with different keys the sender refuses the receiver (its proof fails) and
# names the cause; a sender without a key, or a receiver without one, is
# refused with a clear error; strangers without the key take nothing:
# a keyless HELLO is refused at once, a silent one is dropped after
# --setup-timeout while the real sender waits; none of them uses up
# --count. In a keyed session every datagram needs its UMAC-64 tag: one
# with a changed payload, one with the session id where the tag belongs
# (what the token of a keyless session would be) and one tagged in another
# session are rejected and counted, and the file still arrives intact.
# A key file readable by others is refused.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup keyf
export RB_PY="${RXB_SRC:-.}/tools/rbudp"
PORT=9800

head -c 32 /dev/urandom > "$RB_TMP/key" && chmod 600 "$RB_TMP/key"
head -c 32 /dev/urandom > "$RB_TMP/other" && chmod 600 "$RB_TMP/other"

send() {	# send NAME [ARGS]: a 5 MB synthetic transfer; exit status kept
	local name=$1
	shift
	ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet \
		--json --size 5M --rate 500M --timeout 10 "$@" > "$RB_TMP/$name.json" \
		2> "$RB_TMP/$name.err"
}

echo "receiver with --key-file"
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
	--output "$RB_TMP/out.bin" --key-file "$RB_TMP/key" --setup-timeout 2 --count 3 \
	> "$RB_TMP/r.json" 2> "$RB_TMP/r.err"
sleep 0.3
send good --key-file "$RB_TMP/key" || fail "same key: $(cat "$RB_TMP/good.err")"
[ "$(rbudp_json "$RB_TMP/good.json" 'j["auth"]')" = psk ] || fail "not keyed by the PSK"
send wrong --key-file "$RB_TMP/other" && fail "different keys: transfer ran"
grep -q "keys differ" "$RB_TMP/wrong.err" || fail "different keys: $(cat "$RB_TMP/wrong.err")"
echo "  different keys: $(grep -o 'err: .*' "$RB_TMP/wrong.err")"
send nokey && fail "sender without a key: transfer ran"
grep -q "requires a pre-shared key" "$RB_TMP/nokey.err" || fail "no key: $(cat "$RB_TMP/nokey.err")"
echo "  sender without a key: $(grep -o 'err: .*' "$RB_TMP/nokey.err")"
# A stranger says HELLO in key mode and then nothing; the real sender waits.
ip netns exec "$RB_NS_S" python3 - "$RB_ADDR_R" $PORT "$RB_TMP/stranger.up" <<'PY' &
import os, socket, sys, time
sys.path.insert(0, os.environ["RB_PY"])
from rbudp_peer import *
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(frame(HELLO, hello_body(AUTH_PSK, os.urandom(32))))
open(sys.argv[3], "w").close()
time.sleep(5)
PY
spid=$!
# The real sender only once the stranger is connected: else (a slow
# Python start) it comes first, the receiver's --count runs out before the
# stranger, and the stranger's refusal is never written.
for _ in $(seq 100); do
	[ -e "$RB_TMP/stranger.up" ] && break
	sleep 0.05
done
[ -e "$RB_TMP/stranger.up" ] || fail "the silent stranger did not connect within 5 s"
send late --key-file "$RB_TMP/key" || fail "real sender behind a silent stranger: $(cat "$RB_TMP/late.err")"
kill "$spid" 2>/dev/null
echo "  forged datagrams in a keyed session"
ip netns exec "$RB_NS_S" python3 - "$RB_ADDR_R" $PORT "$RB_TMP/key" "$RB_TMP/out.bin" <<'PY' ||
import hashlib, os, struct, sys, time
sys.path.insert(0, os.environ["RB_PY"])
from rbudp_peer import *
psk = open(sys.argv[3], "rb").read()
psk = psk[:-1] if psk.endswith(b"\n") else psk	# as the tools read a key file
data = os.urandom(40 * PAYLOAD + 7)
p = Sender(sys.argv[1], int(sys.argv[2]), data, psk=psk)
p.setup()
other = Keys(psk, os.urandom(32), os.urandom(32), True, psk=True)
bad = bytearray(p.pkt(4)); bad[-1] ^= 0x10			# payload changed
forged = [bytes(bad),
          struct.pack(">II", 5, 1) + p.keys.sid + data[5 * PAYLOAD:6 * PAYLOAD],	# a token
          other.dgram(6, 1, data[6 * PAYLOAD:7 * PAYLOAD])]	# tagged in another session
for f in forged:
    p.udp.send(f)
p.blast(range(p.total))
status, digest = p.finish(1, p.total)
assert status == 0 and digest == hashlib.sha256(data).digest(), status
assert open(sys.argv[4], "rb").read() == data, "output differs"
PY
	fail "keyed session with forged datagrams"
wait "$rpid" || fail "receiver exit $?: $(cat "$RB_TMP/r.err")"
python3 - "$RB_TMP/r.json" <<'PY' || fail "receiver summaries"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
counted = [r for r in runs if r["counted"]]
assert len(counted) == 3 and all(r["ok"] and r["auth"] == "psk" for r in counted), runs
assert [r["rejected"] for r in counted] == [0, 0, 3], [r["rejected"] for r in counted]
others = [r for r in runs if not r["counted"]]
assert len(others) == 3 and not any(r["ok"] for r in others), others
print("  3 keyed transfers (3 forged datagrams rejected in the last); refused: %s"
      % "; ".join(r["error"] for r in others))
PY

echo "sender with --key-file, receiver without"
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --discard \
	--setup-timeout 2 > /dev/null 2>&1
sleep 0.3
send keyed --key-file "$RB_TMP/key" && fail "keyed sender to a keyless receiver: ran"
grep -q "no --key-file" "$RB_TMP/keyed.err" || fail "keyed sender: $(cat "$RB_TMP/keyed.err")"
echo "  $(grep -o 'err: .*' "$RB_TMP/keyed.err")"
kill "$rpid" 2>/dev/null

echo "a key file others can read"
chmod 644 "$RB_TMP/key"
"$RB_BIN/rxbneck-recv" --port $PORT --discard --key-file "$RB_TMP/key" 2> "$RB_TMP/perm.err"
[ $? -eq 1 ] && grep -q "chmod 600" "$RB_TMP/perm.err" || fail "mode 0644 key accepted"
echo "  $(cat "$RB_TMP/perm.err")"
echo "PASS"
