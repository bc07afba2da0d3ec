#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Senders that try to harm other senders, for tests/integration/daemon_trust.sh.

  daemon_trust.py PORT CTL_SOCKET SCENARIO FLOW

Raw protocol frames (docs/PROTOCOL.md) from chosen loopback addresses to
rxbneckd's sender port. Each scenario prints what it saw as one JSON line
and exits 1 when a check fails:

  confine   a sender of FLOW, then a second whose HELLO says it can send
            1 b/s: the first is never told a rate below 1 Gb/s, the second
            gets its own (at most 1 b/s)
  report    REPORTs about another flow and ones that do not add up: ERROR
            BAD_VALUE, the connection closed; a sound one kept, and then
            500 aborted ones back to back (the connection kept)
  squat     HELLOs for 16 unwatched ports from 127.0.0.2, held: at most 4
            served; then a sender from 127.0.0.1 for a new port is served
  hold      1024 connections from 127.0.0.3 kept alive with PING: at most
            64 served; a sender from 127.0.0.1 is served meanwhile
  idle      a sender from 127.0.0.4 and one from 127.0.0.1 that stay
            connected until stdin closes; prints how each connection ended
  admit     REFUSED is for admission only (PROTOCOL.md §8): a TCP flow is
            served, and so is a port no socket is bound to, whose RATE
            says nothing was modelled (NO_TRAFFIC, confidence 0)
  owner     with [control] flow_owner_uids = 0: a port no socket is bound
            to is REFUSED; bound by root (UDP, or a TCP listener), served
"""
import json
import select
import socket
import struct
import sys
import time

PORT, CTL, SCENARIO, FLOW = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
T_HELLO, T_ACK, T_SUB, T_PING, T_PONG, T_BYE, T_ERROR = 1, 2, 3, 4, 5, 6, 7
T_RATE, T_PAUSE, T_REPORT = 0x10, 0x11, 0x20
ERR_BAD_VALUE, ERR_NOT_ALLOWED, ERR_TOO_MANY, ERR_REFUSED = 5, 9, 10, 14
REPORT_ABORTED = 0x0001		# include/rxbneck/proto.h
FLOOD_REPORTS = 500
out = {}


def frame(ftype, payload, seq):
    return b"RXBN" + struct.pack(">BBHII", 1, ftype, 0, 16 + len(payload), seq) + payload


def hello(port, file_bytes=10**9, max_rate=0, payload=1400, rtt_us=1000, sub=1, proto=17):
    body = struct.pack(">HHBBHIIQQ", 1, port, proto, 0, sub, payload, rtt_us, file_bytes, max_rate)
    return frame(T_HELLO, body, 1)


def report(port, rounds, file_bytes, sent, resent, lost, seq=2, flags=0):
    body = struct.pack(">HHIQQQQQQ", port, flags, rounds, file_bytes, 10**6, 10**9, sent, resent,
                       lost)
    return frame(T_REPORT, body, seq)


class Conn:
    def __init__(self, src="127.0.0.1", timeout=5):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.s.bind((src, 0))
        self.s.settimeout(timeout)
        self.s.connect(("127.0.0.1", PORT))
        self.buf = b""
        self.seq = 1

    def send(self, data):
        self.s.sendall(data)

    def frame(self, timeout=5):
        """The next frame as (type, payload), or None at EOF/timeout."""
        end = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 16:
                n = struct.unpack(">I", self.buf[8:12])[0]
                if len(self.buf) >= n:
                    f, self.buf = self.buf[:n], self.buf[n:]
                    return f[5], f[16:]
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.s.settimeout(left)
            try:
                d = self.s.recv(65536)
            except (socket.timeout, ConnectionError):
                return None
            if not d:
                return None
            self.buf += d

    def until(self, want, timeout=5):
        """Frames until one of type @want; all of them."""
        seen = []
        while True:
            f = self.frame(timeout)
            if f is None:
                return seen
            seen.append(f)
            if f[0] == want:
                return seen


def rate_of(payload):
    port, flags, conf, _, bps, loss, epoch, xfer = struct.unpack(">HHHHQdQQ", payload[:40])
    return {"port": port, "flags": flags, "rate_bps": bps, "xfer_time_us": xfer,
            "confidence": conf, "epoch": epoch}


def error_of(payload):
    return struct.unpack(">H", payload[:2])[0]


def hello_answer(c, port, **kw):
    """'ack', or the error code the HELLO got, or 'none'."""
    c.send(hello(port, **kw))
    f = c.frame()
    if f is None:
        return "none"
    if f[0] == T_ACK:
        return "ack"
    return error_of(f[1]) if f[0] == T_ERROR else f"type {f[0]}"


def fail(msg):
    out["fail"] = msg
    print(json.dumps(out))
    sys.exit(1)


def confine():
    a = Conn()
    assert hello_answer(a, FLOW) == "ack"
    first = [rate_of(p) for t, p in a.until(T_RATE) if t == T_RATE]
    b = Conn()
    assert hello_answer(b, FLOW, max_rate=1, file_bytes=10**6) == "ack"
    mine = [rate_of(p) for t, p in b.until(T_RATE) if t == T_RATE]
    # Five epochs' RATEs to both (200 ms epochs; a change is pushed at once).
    later, b_later, end = [], [], time.monotonic() + 1.5
    while time.monotonic() < end:
        f = a.frame(0.1)
        if f and f[0] == T_RATE:
            later.append(rate_of(f[1]))
        g = b.frame(0.05)
        if g and g[0] == T_RATE:
            b_later.append(rate_of(g[1]))
    out.update(a_first=first, b=mine + b_later, a_later=later)
    if not first or not mine:
        fail("a sender got no RATE")
    if any(r["rate_bps"] < 10**9 for r in first + later):
        fail("the first sender was told a rate below 1 Gb/s")
    if any(r["rate_bps"] > 1 for r in mine + b_later):
        fail("the 1 b/s sender was told more than its ceiling")


def reports():
    codes = []
    for body in (report(FLOW + 1, 1, 10**6, 1000, 0, 0),        # another flow
                 report(FLOW, 2, 10**6, 10, 10**12, 0),          # resent > sent
                 report(FLOW, 1, 10**6, 2000, 0, 5000)):         # lost > first round
        c = Conn()
        assert hello_answer(c, FLOW, file_bytes=10**6, payload=1000) == "ack"
        c.send(body)
        seen = c.until(T_ERROR)
        err = [error_of(p) for t, p in seen if t == T_ERROR]
        codes.append(err[0] if err else None)
        if c.frame(3) is not None:
            fail("the connection stayed open after the ERROR")
    # A sound one is taken.
    c = Conn()
    assert hello_answer(c, FLOW, file_bytes=10**6, payload=1000) == "ack"
    c.send(report(FLOW, 2, 10**6, 1100, 100, 90))
    c.send(frame(T_PING, struct.pack(">Q", 5), 3))
    ok = any(t == T_PONG for t, _ in c.until(T_PONG))
    # A flood of aborted REPORTs (each one valid): taken, but not one log
    # line each (daemon_trust.sh counts them).
    c.send(b"".join(report(FLOW, 1, 10**6, 1000, 0, 0, seq=4 + i, flags=REPORT_ABORTED)
                    for i in range(FLOOD_REPORTS)))
    c.send(frame(T_PING, struct.pack(">Q", 6), 4 + FLOOD_REPORTS))
    flood_ok = any(t == T_PONG for t, _ in c.until(T_PONG))
    out.update(codes=codes, sound_one_kept=ok, flood_kept=flood_ok)
    if codes != [ERR_BAD_VALUE] * 3:
        fail(f"forged REPORTs not refused with BAD_VALUE: {codes}")
    if not ok:
        fail("a sound REPORT closed the connection")
    if not flood_ok:
        fail("%d aborted REPORTs closed the connection" % FLOOD_REPORTS)


def squat():
    held, answers = [], []
    for i in range(16):
        c = Conn("127.0.0.2")
        a = hello_answer(c, FLOW + 100 + i)
        answers.append(a)
        held.append(c)
    legit = Conn("127.0.0.1")
    la = hello_answer(legit, FLOW + 200)
    out.update(squatter=answers, legit=la)
    if answers.count("ack") > 4 or answers.count(ERR_REFUSED) < 12:
        fail("one address held more than 4 unwatched flows")
    if la != "ack":
        fail(f"a sender from another address was locked out: {la}")


def hold():
    conns, answers = [], {}
    for i in range(1024):
        try:
            c = Conn("127.0.0.3", timeout=5)
        except OSError as e:
            answers["connect " + e.__class__.__name__] = answers.get("connect " + e.__class__.__name__, 0) + 1
            continue
        c.send(hello(FLOW))
        conns.append(c)
    for c in conns:
        f = c.frame(5)
        k = "ack" if f and f[0] == T_ACK else (error_of(f[1]) if f and f[0] == T_ERROR else "none")
        answers[str(k)] = answers.get(str(k), 0) + 1
    for c in conns:                 # keepalive, as a holder would
        try:
            c.send(frame(T_PING, struct.pack(">Q", 1), 2))
        except OSError:
            pass
    legit = Conn("127.0.0.1")
    la = hello_answer(legit, FLOW)
    out.update(holder=answers, legit=la)
    if answers.get("ack", 0) > 64 or answers.get(str(ERR_TOO_MANY), 0) < 1024 - 64:
        fail("one address held more than 64 connections")
    if la != "ack":
        fail(f"a sender from another address was locked out: {la}")


def idle():
    far, near = Conn("127.0.0.4"), Conn("127.0.0.1")
    assert hello_answer(far, FLOW) == "ack" and hello_answer(near, FLOW) == "ack"
    print("ready", flush=True)
    sys.stdin.readline()            # the test reloads meanwhile
    res = {}
    for name, c in (("far", far), ("near", near)):
        try:
            c.send(frame(T_PING, struct.pack(">Q", 9), 2))
        except OSError:
            pass                    # closed already: its ERROR is read below
        seen = c.until(T_PONG, timeout=3)
        errs = [error_of(p) for t, p in seen if t == T_ERROR]
        res[name] = "pong" if any(t == T_PONG for t, _ in seen) else (errs[0] if errs else "none")
    out.update(res)
    if res["far"] != ERR_NOT_ALLOWED:
        fail(f"a connection the new allow-list refuses was not closed: {res['far']}")
    if res["near"] != "pong":
        fail(f"an allowed connection did not stay: {res['near']}")


def admit():
    t, u = Conn(), Conn()
    ta = hello_answer(t, FLOW + 300, proto=6)
    ua = hello_answer(u, FLOW + 301)
    rates = [rate_of(p) for k, p in u.until(T_RATE) if k == T_RATE]
    out.update(tcp=ta, unbound=ua, rate=rates[:1])
    if ta != "ack" or ua != "ack":
        fail("a TCP flow or a port without a socket was refused")
    if not rates or not rates[0]["flags"] & 4 or rates[0]["flags"] & 0x20 or \
            rates[0]["confidence"] != 0:
        fail("a port without a socket got a modelled RATE")


def owner():
    res = {"unbound": hello_answer(Conn(), FLOW + 302)}
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # An earlier test's connection in TIME_WAIT on this port must not
    # refuse the listener's bind.
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        udp.bind(("127.0.0.1", FLOW + 302))
        tcp.bind(("127.0.0.1", FLOW + 303))
    except OSError as e:
        fail(f"cannot bind the owner scenario's ports {FLOW + 302}, {FLOW + 303}: {e}")
    res["udp_bound"] = hello_answer(Conn(), FLOW + 302)
    tcp.listen(1)
    res["tcp_listening"] = hello_answer(Conn(), FLOW + 303, proto=6)
    out.update(res)
    if res != {"unbound": ERR_REFUSED, "udp_bound": "ack", "tcp_listening": "ack"}:
        fail(f"flow_owner_uids: {res}")


{"confine": confine, "report": reports, "squat": squat, "hold": hold, "idle": idle,
 "admit": admit, "owner": owner}[SCENARIO]()
print(json.dumps(out))
