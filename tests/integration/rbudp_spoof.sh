#!/usr/bin/env bash
# The spoofing attack of issue 34 against a real transfer: while the sender
# waits out its emulated delay, an attacker who knows the file and sees the
# sender's UDP port sends, from a raw socket with the sender's source
# address and port, altered datagrams for every 8th packet whose payload
# has the same CRC32C as the real one (what fooled protocol version 1).
# The file must arrive identical (cmp), every forged datagram must be
# counted as rejected, and the digest both tools report must be sha256sum's.
# Then the verification mode: the stored file checks out against the
# reported digest, and fails after one byte on disk is changed.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup spoof

PORT=9600
head -c 20000000 /dev/urandom > "$RB_TMP/in.bin" || fail "cannot make the input file"

cat > "$RB_TMP/spoof.py" <<'PY'
import os, random, socket, struct, subprocess, sys, time

src_ip, dst_ip, port, path, ns_r, out = sys.argv[1:7]
port = int(port)
PL, HDR = 1456, 16

def tab():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 if c & 1 else 0)
        t.append(c)
    return t
T = tab()
def crc32c(b):
    c = 0xffffffff
    for x in b:
        c = (c >> 8) ^ T[(c ^ x) & 0xff]
    return c ^ 0xffffffff

COLS = {}
def same_crc(p, check):
    """p with bytes 8..15 changed and 16..19 chosen so that CRC32C is unchanged.
    CRC is affine over GF(2): solve for the 32 bits of the 4-byte patch."""
    n = len(p)
    if n not in COLS:
        z = crc32c(bytes(n))
        cols = []
        for i in range(32):
            e = bytearray(n)
            e[16 + i // 8] = 1 << (i % 8)
            cols.append(crc32c(bytes(e)) ^ z)
        COLS[n] = (z, cols)
    zero, cols = COLS[n]
    d = bytearray(n)
    d[8:16] = os.urandom(8)
    target = crc32c(bytes(d)) ^ zero		# the patch must cancel this
    # Gaussian elimination: find x with XOR of cols[i] for bits i of x = target.
    rows = [(cols[i], 1 << i) for i in range(32)]
    basis = {}
    for v, m in rows:
        for bit in reversed(range(32)):
            if not v >> bit & 1:
                continue
            if bit in basis:
                bv, bm = basis[bit]
                v, m = v ^ bv, m ^ bm
            else:
                basis[bit] = (v, m)
                break
    x, v = 0, target
    for bit in reversed(range(32)):
        if v >> bit & 1:
            bv, bm = basis[bit]
            v, x = v ^ bv, x ^ bm
    assert v == 0
    for i in range(32):
        if x >> i & 1:
            d[16 + i // 8] ^= 1 << (i % 8)
    q = bytes(a ^ b for a, b in zip(p, d))
    assert q != p and (not check or crc32c(q) == crc32c(p))
    return q

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

data = open(path, "rb").read()
total = (len(data) + PL - 1) // PL
# Forged payloads first (pure Python is slow); the port comes later.
forgeries = [(seq, same_crc(data[seq * PL:(seq + 1) * PL], seq < 80))
             for seq in range(0, total, 8) if len(data[seq * PL:(seq + 1) * PL]) >= 20]
print("ready", flush=True)

# The sender's UDP port: the receiver's data socket is connected to it once
# SETUP_OK is out (the port also crosses the TCP connection in SETUP).
sport = None
for _ in range(400):
    o = subprocess.run(["ip", "netns", "exec", ns_r, "ss", "-Hun", "state", "established",
                        "sport = :%d" % port], capture_output=True, text=True).stdout.split()
    if len(o) >= 4 and o[-1].startswith(src_ip + ":"):
        sport = int(o[-1].rsplit(":", 1)[1])
        break
    time.sleep(0.01)
assert sport, "the receiver never connected its UDP socket"

raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
saddr, daddr = socket.inet_aton(src_ip), socket.inet_aton(dst_ip)
sent = 0
for seq, q in forgeries:
    payload = struct.pack(">II", seq, 1) + os.urandom(8) + q
    ulen = 8 + len(payload)
    pseudo = saddr + daddr + struct.pack("!BBH", 0, 17, ulen)
    udp = struct.pack("!HHHH", sport, port, ulen, 0)
    udp = struct.pack("!HHHH", sport, port, ulen, csum(pseudo + udp + payload) or 0xffff)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, random.getrandbits(16), 0x4000, 64,
                     17, 0, saddr, daddr)
    raw.sendto(ip + udp + payload, (dst_ip, 0))
    sent += 1
    if sent % 32 == 0:
        time.sleep(0.001)
open(out, "w").write("%d %d\n" % (sent, sport))
print("  spoofer: %d forged datagrams from %s:%d, same CRC32C as the real ones"
      % (sent, src_ip, sport))
PY

echo "transfer under a spoofing attack"
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
	--rcvbuf 8Mi --setup-timeout 5 --output "$RB_TMP/out.bin" > "$RB_TMP/r.json"
sleep 0.3
rbudp_bg spid ip netns exec "$RB_NS_S" python3 "$RB_TMP/spoof.py" "$RB_ADDR_S" "$RB_ADDR_R" \
	$PORT "$RB_TMP/in.bin" "$RB_NS_R" "$RB_TMP/spoof.out" > "$RB_TMP/spoof.log"
for _ in $(seq 300); do grep -q ready "$RB_TMP/spoof.log" && break; sleep 0.1; done
grep -q ready "$RB_TMP/spoof.log" || fail "the spoofer did not get ready"
# The sender blasts 1.5 s after SETUP_OK: the forged datagrams come first.
ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet --json \
	--file "$RB_TMP/in.bin" --rate 500M --one-way-delay-ms 1500 > "$RB_TMP/s.json" ||
	fail "sender failed: $(cat "$RB_TMP/s.json")"
wait "$spid" || fail "spoofer failed"
grep spoofer "$RB_TMP/spoof.log"
wait "$rpid" || fail "receiver failed: $(cat "$RB_TMP/r.json")"
cmp "$RB_TMP/in.bin" "$RB_TMP/out.bin" || fail "the received file differs"
read -r forged sport < "$RB_TMP/spoof.out"
sha=$(sha256sum < "$RB_TMP/in.bin" | cut -d' ' -f1)
python3 - "$RB_TMP/s.json" "$RB_TMP/r.json" "$forged" "$sha" <<'PY' || fail "summaries"
import json, sys
s, r = (json.loads(open(f).readline()) for f in sys.argv[1:3])
forged, sha = int(sys.argv[3]), sys.argv[4]
assert s["ok"] and r["ok"] and s["verified"] and r["digest_checked"], (s["error"], r["error"])
assert s["digest"] == r["digest"] == sha, (s["digest"], r["digest"], sha)
# Every forged datagram reached the socket (no drops) and was rejected.
assert r["socket_drops"] == 0, r["socket_drops"]
assert r["rejected"] == forged, (r["rejected"], forged)
assert r["pkts_received"] == r["total_pkts"] and r["pkts_duplicate"] == 0
print("  file identical, %d of %d forged datagrams rejected, %d rounds, sha256 %s..."
      % (r["rejected"], forged, r["rounds"], sha[:16]))
PY

echo "verification mode"
"$RB_BIN/rxbneck-recv" --verify "$RB_TMP/out.bin" --digest "$sha" || fail "--verify of the intact file"
printf '\x5a' | dd of="$RB_TMP/out.bin" bs=1 seek=12345678 conv=notrunc status=none
"$RB_BIN/rxbneck-recv" --verify "$RB_TMP/out.bin" --digest "$sha" > "$RB_TMP/v.out"
rc=$?
cat "$RB_TMP/v.out"
[ $rc -eq 1 ] && grep -q MISMATCH "$RB_TMP/v.out" || fail "a changed byte went unnoticed (exit $rc)"
[ "$("$RB_BIN/rxbneck-send" --digest-only --file "$RB_TMP/in.bin" | cut -d' ' -f1)" = "$sha" ] ||
	fail "--digest-only differs from sha256sum"
"$RB_BIN/rxbneck-recv" --verify "$RB_TMP/out.bin" --digest nothex > /dev/null 2>&1
[ $? -eq 2 ] || fail "a malformed --digest is not a usage error"
echo "PASS"
