# SPDX-License-Identifier: GPL-2.0-or-later
"""RBUDP protocol version 3 in Python, written from docs/rbudp.md, for the
integration tests: a second implementation of the frames, the key schedule,
the datagram token and the tags (HMAC, HKDF and SHA-256 from the standard
library; UMAC-64 from libnettle through ctypes, the RFC 4418 function the
tools use), to play a misbehaving or hostile peer against the real tools."""
import ctypes
import hashlib
import hmac
import os
import socket
import struct

MAGIC = 0x52425544
VERSION = 3
HELLO, SETUP_OK, BLAST_DONE, MISSING, COMPLETE, VERIFIED, ERROR, CHALLENGE, SETUP = range(1, 10)
UNTAGGED = (HELLO, CHALLENGE, ERROR)
AUTH_CLEAR, AUTH_PSK = 0, 1
ERR_PROTOCOL, ERR_BUSY, ERR_RESOURCES, ERR_VERSION, ERR_TIMEOUT, ERR_ABORTED, ERR_AUTH = range(1, 8)
DGRAM_HDR = 16
PAYLOAD = 1456
CTL_TAG = 16
KDF_INFO = b"rxbneck rbudp 3 session keys"

_nettle = ctypes.CDLL("libnettle.so.8")


def umac64(key, nonce, msg):
    ctx = ctypes.create_string_buffer(4096)	# > sizeof(struct umac64_ctx)
    out = ctypes.create_string_buffer(8)
    _nettle.nettle_umac64_set_key(ctx, key)
    _nettle.nettle_umac64_set_nonce(ctx, ctypes.c_size_t(len(nonce)), nonce)
    _nettle.nettle_umac64_update(ctx, ctypes.c_size_t(len(msg)), msg)
    _nettle.nettle_umac64_digest(ctx, ctypes.c_size_t(8), out)
    return out.raw


def hkdf(salt, ikm, info, length):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    okm, t, i = b"", b"", 1
    while len(okm) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        okm += t
        i += 1
    return okm[:length]


class Keys:
    """Session keys of one side (docs/rbudp.md, section 4.3). Datagrams carry
    the session id (the token) without a pre-shared key, a UMAC-64 tag with one."""
    def __init__(self, ikm, nonce_s, nonce_r, sender, psk=False):
        okm = hkdf(nonce_s + nonce_r, ikm, KDF_INFO, 120)
        self.psk = psk
        self.dgram_key, self.sid = okm[:16], okm[16:24]
        s2r, r2s, self.proof_key = okm[24:56], okm[56:88], okm[88:120]
        self.tx, self.rx = (s2r, r2s) if sender else (r2s, s2r)
        self.tx_n = self.rx_n = 0

    def dgram(self, seq, rnd, payload):
        hdr = struct.pack(">II", seq, rnd)
        if not self.psk:
            return hdr + self.sid + payload
        tag = umac64(self.dgram_key, self.sid + hdr[4:] + hdr[:4], payload)
        return hdr + tag + payload

    def seal(self, fr):
        t, flags, n = struct.unpack(">HHI", fr[:8])
        hdr = struct.pack(">HHI", t, flags, n + CTL_TAG)
        tag = hmac.new(self.tx, struct.pack(">Q", self.tx_n) + hdr + fr[8:],
                       hashlib.sha256).digest()[:CTL_TAG]
        self.tx_n += 1
        return hdr + fr[8:] + tag

    def open(self, t, body):
        hdr = struct.pack(">HHI", t, 0, len(body))
        want = hmac.new(self.rx, struct.pack(">Q", self.rx_n) + hdr + body[:-CTL_TAG],
                        hashlib.sha256).digest()[:CTL_TAG]
        assert hmac.compare_digest(want, body[-CTL_TAG:]), "frame tag does not verify"
        self.rx_n += 1
        return body[:-CTL_TAG]

    def proof(self, hello_body, challenge_prefix):
        return hmac.new(self.proof_key, hello_body + challenge_prefix, hashlib.sha256).digest()


def frame(t, body):
    return struct.pack(">HHI", t, 0, len(body)) + body


def hello_body(auth, nonce, magic=MAGIC, version=VERSION):
    return struct.pack(">IHH", magic, version, auth) + nonce + bytes(8)


def setup_body(pl, total, size, digest, port, delay=0):
    return struct.pack(">HHIIQQ", port, 0, pl, total, size, delay) + digest


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


def expect_error(s, code=None, text=None):
    t, b = read_frame(s)
    assert t == ERROR, "expected ERROR, got type %d" % t
    c = struct.unpack(">I", b[:4])[0]
    msg = b[4:].decode()
    print("    ERROR %d: %s" % (c, msg))
    assert code is None or c == code, c
    assert text is None or text in msg, msg
    assert s.recv(1) == b"", "connection not closed after ERROR"
    return msg


class Sender:
    """A hand-made RBUDP sender: control connection, keys, UDP socket."""
    def __init__(self, host, port, data, pl=PAYLOAD, psk=None):
        self.host, self.port, self.data, self.pl, self.psk = host, port, data, pl, psk
        self.total = (len(data) + pl - 1) // pl
        self.tcp = socket.create_connection((host, port), timeout=10)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("0.0.0.0", 0))
        self.udp.connect((host, port))
        self.keys = None

    def handshake(self):
        nonce = os.urandom(32)
        hb = hello_body(AUTH_PSK if self.psk else AUTH_CLEAR, nonce)
        self.tcp.sendall(frame(HELLO, hb))
        t, b = read_frame(self.tcp)
        assert t == CHALLENGE and len(b) == 104, (t, b)
        magic, ver, auth = struct.unpack(">IHH", b[:8])
        assert (magic, ver) == (MAGIC, VERSION)
        nr, secret, proof = b[8:40], b[40:72], b[72:104]
        self.keys = Keys(self.psk if self.psk else secret, nonce, nr, True, bool(self.psk))
        if self.psk:
            assert hmac.compare_digest(proof, self.keys.proof(hb, b[:72])), "receiver proof"

    def setup(self, digest=None, delay=0):
        if self.keys is None:
            self.handshake()
        if digest is None:
            digest = hashlib.sha256(self.data).digest()
        self.send(SETUP, setup_body(self.pl, self.total, len(self.data), digest,
                                    self.udp.getsockname()[1], delay))
        t, b = self.read()
        assert t == SETUP_OK and len(b) == 16, (t, b)

    def send(self, t, body):
        self.tcp.sendall(self.keys.seal(frame(t, body)))

    def read(self):
        t, b = read_frame(self.tcp)
        return (t, b) if t in UNTAGGED else (t, self.keys.open(t, b))

    def pkt(self, seq, data=None, rnd=1):
        d = data if data is not None else self.data
        return self.keys.dgram(seq, rnd, d[seq * self.pl:(seq + 1) * self.pl])

    def blast(self, seqs, data=None, rnd=1):
        import time
        for i, q in enumerate(seqs):
            self.udp.send(self.pkt(q, data, rnd))
            if i % 16 == 15:
                time.sleep(0.0005)	# gentle: losses are not the point here

    def done(self, rnd, n):
        self.send(BLAST_DONE, struct.pack(">II", rnd, n))

    def finish(self, rnd, n):
        """BLAST_DONE for the last round rnd (n packets), then COMPLETE and
        VERIFIED; returns VERIFIED's status and digest."""
        import time
        time.sleep(0.05)			# let the datagrams land first
        self.done(rnd, n)
        t, b = self.read()
        assert t == COMPLETE and struct.unpack(">II", b) == (rnd, self.total), (t, b)
        t, b = self.read()
        assert t == VERIFIED, t
        return struct.unpack(">I", b[:4])[0], b[8:]


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
