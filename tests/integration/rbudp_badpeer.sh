#!/usr/bin/env bash
# Untrusted input: a misbehaving sender (garbage, bad frames, bad values,
# older protocol versions, forged tags, replayed frames, malformed, forged
# and foreign datagrams - a wrong session token, another session's
# datagrams replayed -, a payload changed with the token intact, a wrong
# digest) never crashes rxbneck-recv, gets a clear ERROR, and leaves no
# file behind; a misbehaving receiver (garbage, bad MISSING sets, a forged
# tag, version 1 and 2 receivers) makes rxbneck-send fail cleanly. The
# peers are an independent Python implementation of the documented wire
# format (tools/rbudp/rbudp_peer.py, docs/rbudp.md), which also checks the
# MISSING encoding from outside.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup badpeer

PORT=9400
cat > "$RB_TMP/peer.py" <<'PY'
import hashlib, os, socket, struct, sys, time
sys.path.insert(0, os.environ["RB_PY"])
from rbudp_peer import *

def case(name):
    print("  " + name)

def handshaken(host, port, data):
    p = Sender(host, port, data)
    p.handshake()
    return p

def bad_sender(host, port, out):
    data = os.urandom(50 * 1456 + 100)
    total = 51
    dig = hashlib.sha256(data).digest()
    case("garbage bytes instead of HELLO")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(os.urandom(64))
    expect_error(s, ERR_PROTOCOL)
    case("HELLO with the wrong magic")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(HELLO, hello_body(AUTH_CLEAR, bytes(32), magic=0x48545450)))
    expect_error(s, ERR_PROTOCOL)
    case("a protocol version 1 SETUP")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(HELLO, struct.pack(">IHHIIQQQQ", MAGIC, 1, 5000, 1456, total, len(data),
                                       0, 0, 0)))
    expect_error(s, ERR_VERSION, "version 1")
    case("a protocol version 2 HELLO")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(HELLO, hello_body(AUTH_CLEAR, os.urandom(32), version=2)))
    expect_error(s, ERR_VERSION, "version 2")
    case("frame header announcing 4 GiB")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(struct.pack(">HHI", HELLO, 0, 0xffffffff))
    expect_error(s, ERR_PROTOCOL)
    case("HELLO asking for a pre-shared key this receiver does not have")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(HELLO, hello_body(AUTH_PSK, bytes(32))))
    expect_error(s, ERR_AUTH, "no --key-file")
    case("SETUP whose packet count does not match")
    p = handshaken(host, port, data)
    p.send(SETUP, setup_body(1456, 7, len(data), dig, 5000))
    expect_error(p.tcp, ERR_PROTOCOL)
    case("SETUP with a forged tag")
    p = handshaken(host, port, data)
    fr = p.keys.seal(frame(SETUP, setup_body(1456, total, len(data), dig, 5000)))
    p.tcp.sendall(fr[:-1] + bytes([fr[-1] ^ 1]))
    expect_error(p.tcp, ERR_AUTH)
    case("half a HELLO, then close")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(HELLO, hello_body(AUTH_CLEAR, bytes(32)))[:20])
    s.close()
    case("BLAST_DONE for the wrong round")
    p = Sender(host, port, data); p.setup(); p.done(2, p.total); expect_error(p.tcp, ERR_PROTOCOL)
    other_session = p.pkt(14)		# a real datagram of a session now over
    case("BLAST_DONE with the wrong packet count")
    p = Sender(host, port, data); p.setup(); p.done(1, 5); expect_error(p.tcp, ERR_PROTOCOL)
    case("BLAST_DONE replayed (its tag's counter is spent)")
    p = Sender(host, port, data); p.setup()
    fr = p.keys.seal(frame(BLAST_DONE, struct.pack(">II", 1, p.total)))
    p.tcp.sendall(fr + fr)
    expect_error(p.tcp, ERR_AUTH)
    case("unknown frame type")
    p = Sender(host, port, data); p.setup(); p.tcp.sendall(frame(10, b"")); expect_error(p.tcp, 1)

    case("malformed, forged, foreign and duplicate datagrams around a good transfer")
    p = Sender(host, port, data); p.setup()
    busy = socket.create_connection((host, port), timeout=10)
    foreign = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    foreign.connect((host, port))
    for _ in range(10):
        try:
            foreign.send(p.pkt(3))			# not from the sender's port
        except ConnectionRefusedError:
            pass				# ICMP port unreachable: filtered
    for _ in range(3):
        p.udp.send(b"\x00\x01")				# short
    for q in (p.total, p.total + 1, 0xffffffff, 1 << 31):
        p.udp.send(struct.pack(">II", q, 1) + bytes(8) + data[:1456])	# past the end
    for q in range(5):
        p.udp.send(p.pkt(q)[:-1])			# one byte short
    for _ in range(2):
        p.udp.send(p.pkt(7) + b"x" * 50)		# too long
    p.udp.send(struct.pack(">II", p.total - 1, 1) + bytes(8) + data[:1456])  # last one is short
    forged = [p.keys.dgram(12, 2, data[1456 * 12:1456 * 13])]	# a future round
    forged.append(Keys(os.urandom(32), os.urandom(32), os.urandom(32), True)
                  .dgram(13, 1, data[1456 * 13:1456 * 14]))	# another session's key
    forged.append(other_session)			# replayed from an earlier session
    good = bytearray(p.pkt(15))
    good[DGRAM_HDR - 1] ^= 0x01
    forged.append(bytes(good))				# the token one bit off
    for f in forged:
        p.udp.send(f)
    p.blast(range(p.total))
    p.blast([0, 1, 2])					# duplicates
    time.sleep(0.05)
    expect_error(busy, ERR_BUSY)			# second sender turned away
    p.done(1, p.total)
    t, b = p.read()
    assert t == COMPLETE and struct.unpack(">II", b) == (1, p.total), (t, b)
    t, b = p.read()
    st, _ = struct.unpack(">II", b[:8])
    assert t == VERIFIED and st == 0 and b[8:] == dig, (t, st)
    assert open(out, "rb").read() == data, "output differs"
    os.unlink(out)

    case("a payload changed on the way, the token intact (what an on-path attacker "
         "can do without a key): the digest catches it, no output file")
    p = Sender(host, port, data); p.setup()
    bad = bytearray(p.pkt(10)); bad[DGRAM_HDR + 5] ^= 0x40
    p.udp.send(bytes(bad))				# lands first: the real one is a duplicate
    p.blast(range(p.total))
    st, got = p.finish(1, p.total)
    assert st == 1 and got != dig, st
    assert not os.path.exists(out), "output written despite the digest mismatch"

    case("wrong digest announced: mismatch, no output file")
    p = Sender(host, port, data); p.setup(digest=hashlib.sha256(b"other").digest())
    p.blast(range(p.total))
    st, got = p.finish(1, p.total)
    assert st == 1 and got == dig, st
    assert not os.path.exists(out), "output written despite the digest mismatch"

    case("packets withheld: MISSING lists exactly them, second round completes")
    p = Sender(host, port, data); p.setup()
    held = [0, 17, 18, 19, p.total - 1]
    p.blast([q for q in range(p.total) if q not in held])
    time.sleep(0.05)
    p.done(1, p.total)
    t, b = p.read()
    assert t == MISSING, t
    rnd, seg, rtot, miss = decode_missing(b, p.total)
    assert (rnd, seg, rtot, miss) == (1, 0, len(held), held), (rnd, seg, rtot, miss)
    p.blast(held, rnd=2)
    time.sleep(0.05)
    p.done(2, len(held))
    t, b = p.read()
    assert t == COMPLETE and struct.unpack(">II", b) == (2, p.total)
    t, b = p.read()
    assert t == VERIFIED and struct.unpack(">II", b[:8])[0] == 0
    assert open(out, "rb").read() == data

def bad_receiver(port, mode):
    """Accept one rxbneck-send and answer it wrongly."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port)); ls.listen(1)
    us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    us.bind(("0.0.0.0", port))
    print("ready", flush=True)
    s, _ = ls.accept()
    t, b = read_frame(s)
    assert t == HELLO
    if mode == "v1":
        # What a version 1 receiver answers to a later version's first frame.
        s.sendall(frame(ERROR, struct.pack(">I", ERR_VERSION) +
                        b"bad SETUP: unsupported protocol version"))
        time.sleep(1)
        return
    if mode == "v2":
        assert struct.unpack(">H", b[4:6])[0] == VERSION
        s.sendall(frame(ERROR, struct.pack(">I", ERR_VERSION) +
                        b"sender speaks RBUDP protocol version 3, this receiver version 2: "
                        b"use the same release on both ends"))
        time.sleep(1)
        return
    nr, secret = os.urandom(32), os.urandom(32)
    keys = Keys(secret, b[8:40], nr, False)
    s.sendall(frame(CHALLENGE, struct.pack(">IHH", MAGIC, VERSION, AUTH_CLEAR) + nr + secret +
                    bytes(32)))
    t, b = read_frame(s)
    assert t == SETUP
    b = keys.open(t, b)
    total = struct.unpack(">I", b[8:12])[0]
    s.sendall(keys.seal(frame(SETUP_OK, struct.pack(">QQ", 1 << 20, 0))))
    t, b = read_frame(s)
    assert t == BLAST_DONE
    keys.open(t, b)
    if mode == "garbage":
        s.sendall(os.urandom(32))
    elif mode == "run-past-end":
        s.sendall(keys.seal(frame(MISSING, struct.pack(">IIIIB3x", 1, 0, 5, 5, 1) +
                                  struct.pack(">II", total - 2, 5))))
    elif mode == "forged-missing":
        fr = keys.seal(frame(MISSING, struct.pack(">IIIIB3x", 1, 0, 1, 1, 1) +
                             struct.pack(">II", 5, 1)))
        s.sendall(fr[:-1] + bytes([fr[-1] ^ 0x80]))
    elif mode == "acked-again":
        s.sendall(keys.seal(frame(MISSING, struct.pack(">IIIIB3x", 1, 0, 1, 1, 1) +
                                  struct.pack(">II", 5, 1))))
        t, b = read_frame(s)
        assert t == BLAST_DONE and struct.unpack(">II", keys.open(t, b)) == (2, 1), b
        s.sendall(keys.seal(frame(MISSING, struct.pack(">IIIIB3x", 2, 0, 1, 1, 1) +
                                  struct.pack(">II", 7, 1))))
    time.sleep(1)

if sys.argv[1] == "sender":
    bad_sender(sys.argv[2], int(sys.argv[3]), sys.argv[4])
else:
    bad_receiver(int(sys.argv[2]), sys.argv[3])
PY
export RB_PY="${RXB_SRC:-.}/tools/rbudp"

echo "rxbneck-recv against a misbehaving sender"
# Sessions that never carried an authenticated datagram do not count: the
# receiver serves the 13 refused ones, the 4 Python transfers and the real one.
NSESS=18
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --json --quiet \
	--timeout 5 --setup-timeout 1 --count 5 --output "$RB_TMP/out.bin" \
	> "$RB_TMP/recv.json" 2> "$RB_TMP/recv.err"
sleep 0.3
ip netns exec "$RB_NS_S" python3 "$RB_TMP/peer.py" sender "$RB_ADDR_R" $PORT "$RB_TMP/out.bin" ||
	fail "misbehaving-sender checks"
echo "  and a real transfer afterwards"
ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --size 5M \
	--rate 1G --quiet > /dev/null || fail "good transfer after the bad ones"
wait "$rpid"
rc=$?
[ $rc -eq 1 ] || fail "receiver exit $rc, expected 1 (some transfers failed)"
grep -E "AddressSanitizer|runtime error|Segmentation" "$RB_TMP/recv.err" && fail "sanitizer report"
python3 - "$RB_TMP/recv.json" $NSESS <<'PY' || fail "receiver summaries"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert len(runs) == int(sys.argv[2]), len(runs)
assert [r["counted"] for r in runs] == [False] * 13 + [True] * 5, [r["counted"] for r in runs]
assert not any(r["ok"] for r in runs[:13])
dg = runs[13]
assert dg["ok"], dg["error"]
bad = dg["dgrams_bad"]
assert bad == {"short": 3, "seq": 4, "length": 8}, bad
assert dg["rejected"] == 4, dg["rejected"]
assert dg["pkts_duplicate"] == 3, dg["pkts_duplicate"]
assert dg["dgrams_received"] == 3 + 4 + 8 + 4 + dg["total_pkts"] + 3, dg["dgrams_received"]
onpath = runs[14]
assert not onpath["ok"] and "integrity" in onpath["error"], onpath["error"]
assert onpath["rejected"] == 0 and onpath["pkts_duplicate"] == 1, onpath
assert not runs[15]["ok"] and "integrity" in runs[15]["error"], runs[15]["error"]
assert runs[16]["ok"] and runs[16]["rounds"] == 2
assert runs[17]["ok"] and runs[17]["digest_checked"]
print("  %d sessions: %d refused before any data, 2 integrity failures; malformed datagrams "
      "counted %s, forged ones rejected %d" % (len(runs), 13, bad, dg["rejected"]))
PY
ls "$RB_TMP" | grep -q rbudp- && fail "temporary output file left behind"

echo "rxbneck-send against a misbehaving receiver"
for mode in garbage run-past-end forged-missing acked-again v1 v2; do
	rbudp_bg ppid ip netns exec "$RB_NS_R" python3 "$RB_TMP/peer.py" receiver $PORT $mode \
		> "$RB_TMP/peer.out"
	for _ in $(seq 50); do grep -q ready "$RB_TMP/peer.out" && break; sleep 0.1; done
	ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --size 100k \
		--rate 100M --quiet --timeout 5 > "$RB_TMP/send.out" 2> "$RB_TMP/send.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$mode: sender exit $rc, expected 1"
	grep -E "AddressSanitizer|runtime error" "$RB_TMP/send.err" && fail "$mode: sanitizer report"
	echo "  $mode: $(grep -o 'err: .*' "$RB_TMP/send.err" | head -1)"
	case $mode in
	forged-missing) grep -q "failed authentication" "$RB_TMP/send.err" ||
		fail "$mode: no authentication failure reported";;
	v1|v2) grep -q "another RBUDP protocol version" "$RB_TMP/send.err" ||
		fail "$mode: the version mismatch is not named";;
	esac
	wait "$ppid"
done
echo "PASS"
