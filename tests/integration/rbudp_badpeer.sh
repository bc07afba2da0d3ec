#!/usr/bin/env bash
# Untrusted input: a misbehaving sender (garbage, bad frames, bad values,
# malformed and foreign datagrams, corrupted data) never crashes
# rxbneck-recv, gets a clear ERROR, and leaves no file behind; a
# misbehaving receiver makes rxbneck-send fail cleanly. The peers are an
# independent Python implementation of the documented wire format
# (docs/rbudp.md), which also checks the MISSING encoding from outside.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup badpeer

PORT=9400
cat > "$RB_TMP/peer.py" <<'PY'
import os, socket, struct, sys, time

MAGIC = 0x52425544
SETUP, SETUP_OK, BLAST_DONE, MISSING, COMPLETE, VERIFIED, ERROR = range(1, 8)
M64 = (1 << 64) - 1

def crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 if c & 1 else 0)
        t.append(c)
    return t
TAB = crc_table()

def crc32c(b):
    c = 0xffffffff
    for x in b:
        c = (c >> 8) ^ TAB[(c ^ x) & 0xff]
    return c ^ 0xffffffff

def mix(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)

def digest(data, pl):
    s = 0
    for seq, off in enumerate(range(0, len(data), pl)):
        s = (s + mix((seq << 32) | crc32c(data[off:off + pl]))) & M64
    return s

def frame(t, body):
    return struct.pack(">HHI", t, 0, len(body)) + body

def setup_body(pl, total, size, dig, port, delay=0, magic=MAGIC, version=1):
    return struct.pack(">IHHIIQQQQ", magic, version, port, pl, total, size, dig, delay, 0)

def recv_exact(s, n):
    b = b""
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x:
            raise EOFError("peer closed after %d of %d bytes" % (len(b), n))
        b += x
    return b

def read_frame(s):
    t, flags, n = struct.unpack(">HHI", recv_exact(s, 8))
    return t, recv_exact(s, n)

def expect_error(s, code=None):
    t, b = read_frame(s)
    assert t == ERROR, "expected ERROR, got type %d" % t
    c = struct.unpack(">I", b[:4])[0]
    print("    ERROR %d: %s" % (c, b[4:].decode()))
    assert code is None or c == code, c
    assert s.recv(1) == b"", "connection not closed after ERROR"

class Sender:
    """A hand-made RBUDP sender: control connection and UDP socket."""
    def __init__(self, host, port, data, pl=1468):
        self.host, self.port, self.data, self.pl = host, port, data, pl
        self.total = (len(data) + pl - 1) // pl
        self.tcp = socket.create_connection((host, port), timeout=10)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("0.0.0.0", 0))
        self.udp.connect((host, port))
    def setup(self, dig=None):
        if dig is None:
            dig = digest(self.data, self.pl)
        self.tcp.sendall(frame(SETUP, setup_body(self.pl, self.total, len(self.data), dig,
                                                 self.udp.getsockname()[1])))
        t, b = read_frame(self.tcp)
        assert t == SETUP_OK and len(b) == 24, (t, b)
        assert struct.unpack(">I", b[:4])[0] == MAGIC
    def pkt(self, seq, data=None):
        d = data if data is not None else self.data
        return struct.pack(">I", seq) + d[seq * self.pl:(seq + 1) * self.pl]
    def blast(self, seqs, data=None):
        for i, q in enumerate(seqs):
            self.udp.send(self.pkt(q, data))
            if i % 16 == 15:
                time.sleep(0.0005)	# gentle: losses are not the point here
    def done(self, rnd, n):
        self.tcp.sendall(frame(BLAST_DONE, struct.pack(">II", rnd, n)))

def decode_missing(body, total):
    rnd, seg, n, rtot, enc = struct.unpack(">IIIIB", body[:17])
    assert body[17:20] == b"\0\0\0"
    data, miss = body[20:], []
    base = seg * (1 << 23)
    if enc == 0:
        for i in range(min(total - base, 1 << 23)):
            if data[i // 8] >> (i % 8) & 1:
                miss.append(base + i)
    else:
        for k in range(0, len(data), 8):
            off, ln = struct.unpack(">II", data[k:k + 8])
            miss += range(base + off, base + off + ln)
    assert len(miss) == n
    return rnd, seg, rtot, miss

def case(name):
    print("  " + name)

def bad_sender(host, port, out):
    data = os.urandom(50 * 1468 + 100)
    case("garbage bytes instead of SETUP")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(os.urandom(64))
    expect_error(s, 1)
    case("SETUP with the wrong magic")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(SETUP, setup_body(1468, 51, len(data), 0, 5000, magic=0x48545450)))
    expect_error(s, 1)
    case("SETUP of protocol version 2")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(SETUP, setup_body(1468, 51, len(data), 0, 5000, version=2)))
    expect_error(s, 4)
    case("frame header announcing 4 GiB")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(struct.pack(">HHI", SETUP, 0, 0xffffffff))
    expect_error(s, 1)
    case("SETUP whose packet count does not match")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(SETUP, setup_body(1468, 7, len(data), 0, 5000)))
    expect_error(s, 1)
    case("half a SETUP, then close")
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(frame(SETUP, setup_body(1468, 51, len(data), 0, 5000))[:20])
    s.close()
    case("BLAST_DONE for the wrong round")
    p = Sender(host, port, data); p.setup(); p.done(2, p.total); expect_error(p.tcp, 1)
    case("BLAST_DONE with the wrong packet count")
    p = Sender(host, port, data); p.setup(); p.done(1, 5); expect_error(p.tcp, 1)
    case("unknown frame type")
    p = Sender(host, port, data); p.setup(); p.tcp.sendall(frame(9, b"")); expect_error(p.tcp, 1)

    case("malformed, foreign and duplicate datagrams around a good transfer")
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
        p.udp.send(struct.pack(">I", q) + data[:1468])	# past the end
    for q in range(5):
        p.udp.send(p.pkt(q)[:-1])			# one byte short
    for _ in range(2):
        p.udp.send(p.pkt(7) + b"x" * 50)		# too long
    p.udp.send(struct.pack(">I", p.total - 1) + data[:1468])  # last packet is short
    p.blast(range(p.total))
    p.blast([0, 1, 2])					# duplicates
    time.sleep(0.05)
    expect_error(busy, 2)				# second sender turned away
    p.done(1, p.total)
    t, b = read_frame(p.tcp)
    assert t == COMPLETE and struct.unpack(">II", b) == (1, p.total), (t, b)
    t, b = read_frame(p.tcp)
    st, _, dig = struct.unpack(">IIQ", b)
    assert t == VERIFIED and st == 0 and dig == digest(data, 1468), (t, st)
    assert open(out, "rb").read() == data, "output differs"
    os.unlink(out)

    case("corrupted payload: digest mismatch, no output file")
    p = Sender(host, port, data); p.setup()
    bad = bytearray(data); bad[1468 * 10 + 5] ^= 0x40
    p.blast(range(p.total), bytes(bad))
    time.sleep(0.05)
    p.done(1, p.total)
    t, b = read_frame(p.tcp)
    assert t == COMPLETE, t
    t, b = read_frame(p.tcp)
    st, _, dig = struct.unpack(">IIQ", b)
    assert t == VERIFIED and st == 1 and dig == digest(bytes(bad), 1468), (t, st)
    assert not os.path.exists(out), "output written despite the digest mismatch"

    case("packets withheld: MISSING lists exactly them, second round completes")
    p = Sender(host, port, data); p.setup()
    held = [0, 17, 18, 19, p.total - 1]
    p.blast([q for q in range(p.total) if q not in held])
    time.sleep(0.05)
    p.done(1, p.total)
    t, b = read_frame(p.tcp)
    assert t == MISSING, t
    rnd, seg, rtot, miss = decode_missing(b, p.total)
    assert (rnd, seg, rtot, miss) == (1, 0, len(held), held), (rnd, seg, rtot, miss)
    p.blast(held)
    time.sleep(0.05)
    p.done(2, len(held))
    t, b = read_frame(p.tcp)
    assert t == COMPLETE and struct.unpack(">II", b) == (2, p.total)
    t, b = read_frame(p.tcp)
    assert t == VERIFIED and struct.unpack(">IIQ", b)[0] == 0
    assert open(out, "rb").read() == data

def bad_receiver(port, mode):
    """Accept one rxbneck-send and answer its first round wrongly."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port)); ls.listen(1)
    us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    us.bind(("0.0.0.0", port))
    print("ready", flush=True)
    s, _ = ls.accept()
    t, b = read_frame(s)
    assert t == SETUP
    total = struct.unpack(">I", b[12:16])[0]
    s.sendall(frame(SETUP_OK, struct.pack(">IHHQQ", MAGIC, 1, 0, 1 << 20, 0)))
    t, b = read_frame(s)
    assert t == BLAST_DONE
    if mode == "garbage":
        s.sendall(os.urandom(32))
    elif mode == "run-past-end":
        s.sendall(frame(MISSING, struct.pack(">IIIIB3x", 1, 0, 5, 5, 1) +
                        struct.pack(">II", total - 2, 5)))
    elif mode == "acked-again":
        s.sendall(frame(MISSING, struct.pack(">IIIIB3x", 1, 0, 1, 1, 1) +
                        struct.pack(">II", 5, 1)))
        t, b = read_frame(s)
        assert t == BLAST_DONE and struct.unpack(">II", b) == (2, 1), b
        s.sendall(frame(MISSING, struct.pack(">IIIIB3x", 2, 0, 1, 1, 1) +
                        struct.pack(">II", 7, 1)))
    time.sleep(1)

if sys.argv[1] == "sender":
    bad_sender(sys.argv[2], int(sys.argv[3]), sys.argv[4])
else:
    bad_receiver(int(sys.argv[2]), sys.argv[3])
PY

echo "rxbneck-recv against a misbehaving sender"
NSESS=13
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --json --quiet \
	--timeout 5 --count $NSESS --output "$RB_TMP/out.bin" > "$RB_TMP/recv.json" 2> "$RB_TMP/recv.err"
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
dg = runs[9]
assert dg["ok"], dg["error"]
bad = dg["dgrams_bad"]
assert bad == {"short": 3, "seq": 4, "length": 8}, bad
assert dg["pkts_duplicate"] == 3, dg["pkts_duplicate"]
assert dg["dgrams_received"] == 3 + 4 + 8 + dg["total_pkts"] + 3, dg["dgrams_received"]
assert not runs[10]["ok"] and "integrity" in runs[10]["error"], runs[10]["error"]
assert runs[11]["ok"] and runs[11]["rounds"] == 2
assert runs[12]["ok"]
assert sum(1 for r in runs if not r["ok"]) == 10
print("  %d sessions: %d failed as they should, malformed datagrams counted %s"
      % (len(runs), sum(1 for r in runs if not r["ok"]), bad))
PY
ls "$RB_TMP" | grep -q rbudp- && fail "temporary output file left behind"

echo "rxbneck-send against a misbehaving receiver"
for mode in garbage run-past-end acked-again; do
	rbudp_bg ppid ip netns exec "$RB_NS_R" python3 "$RB_TMP/peer.py" receiver $PORT $mode \
		> "$RB_TMP/peer.out"
	for _ in $(seq 50); do grep -q ready "$RB_TMP/peer.out" && break; sleep 0.1; done
	ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --size 100k \
		--rate 100M --quiet --timeout 5 > "$RB_TMP/send.out" 2> "$RB_TMP/send.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$mode: sender exit $rc, expected 1"
	grep -E "AddressSanitizer|runtime error" "$RB_TMP/send.err" && fail "$mode: sanitizer report"
	echo "  $mode: $(grep -o 'err: .*' "$RB_TMP/send.err" | head -1)"
	wait "$ppid"
done
echo "PASS"
