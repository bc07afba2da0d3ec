#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Misbehaving senders for tests/integration/daemon_robust.sh.

Keeps CONNS TCP connections open to rxbneckd's sender control server for
SECONDS and, on each, does one of: random bytes, an HTTP request, a valid
HELLO followed by random or truncated frames, an oversized length, a
header left half-sent (slow loris), a HELLO for a new flow port, a full
well-behaved session (HELLO, SUBSCRIBE, PING, REPORT, BYE). Closed
connections are replaced at once. Also sends junk to the rxbneckctl
socket. With METRICS_PORT (argument 7, 0 = none), a fifth of the
connections go to the metrics endpoint instead, with HTTP of every kind:
GET /metrics, pipelined GETs, other methods and paths, oversized headers,
random bytes, a request trickled byte by byte (slow loris), bodies.
Prints one JSON line of counters at the end.
"""
import json
import os
import random
import selectors
import socket
import struct
import sys
import time

HOST, PORT, CTL, CONNS, SECONDS = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
FLOW = int(sys.argv[6]) if len(sys.argv) > 6 else 9000
MPORT = int(sys.argv[7]) if len(sys.argv) > 7 else 0
rng = random.Random(int(os.environ.get("FLOOD_SEED", "1")))
stats = {k: 0 for k in ("opened", "connect_failed", "closed_by_daemon", "frames", "bytes_out",
                        "bytes_in", "ctl_junk", "actions", "http_opened", "http_200")}
seqs = {}


def frame(ftype, payload, seq=1, length=None, magic=b"RXBN", version=1):
    n = 16 + len(payload) if length is None else length
    return magic + struct.pack(">BBHII", version, ftype, 0, n, seq) + payload


def hello(port, payload=1468, sub=3):
    name = b"flood"
    body = struct.pack(">HHBBHIIQQ", 0, port, 17, 0, sub, payload, rng.randint(0, 100000),
                       rng.randint(0, 10**9), rng.choice([0, 10**9, 10**10]))
    return frame(1, body + struct.pack(">HH", 1, len(name)) + name)


def random_frame():
    t = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 0x10, 0x11, 0x20, 0x21, 0x30, 0xff])
    body = os.urandom(rng.randint(0, 120))
    if rng.random() < 0.3:
        return frame(t, body, length=rng.choice([0, 5, 15, 16, 17, 100000, 2**32 - 1]))
    return frame(t, body)


def good_session(port):
    out = hello(port)
    out += frame(3, struct.pack(">HHI", 1, 0, 2000), seq=2)                      # SUBSCRIBE
    out += frame(4, struct.pack(">Q", rng.getrandbits(64)), seq=3)               # PING
    out += frame(0x20, struct.pack(">HHIQQQQQQ", port, 0, 3, 10**8, 10**6, 10**9,
                                   70000, 1000, 500), seq=4)                     # REPORT
    out += frame(6, struct.pack(">HH", 0, 0), seq=5)                             # BYE
    return out


def payload_for():
    k = rng.randrange(9)
    if k == 0:
        return os.urandom(rng.randint(1, 8192))
    if k == 1:
        return b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    if k == 2:
        return hello(FLOW) + b"".join(random_frame() for _ in range(rng.randint(1, 20)))
    if k == 3:
        h = hello(FLOW)
        return h[:rng.randint(1, len(h) - 1)]                                     # truncated
    if k == 4:
        return frame(1, b"", length=rng.choice([65537, 10**6, 2**31]))           # oversized
    if k == 5:
        return hello(FLOW)[:rng.randint(1, 15)]                                   # slow loris
    if k == 6:
        return hello(rng.randint(20000, 20100))                                   # new flow port
    if k == 7:
        return good_session(FLOW)
    return hello(FLOW) + frame(4, b"\x00" * 8, seq=2) * rng.randint(1, 100)       # ping storm


def http_payload():
    k = rng.randrange(8)
    get = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    if k == 0:
        return get
    if k == 1:
        return get * rng.randint(2, 20)                                           # pipelined
    if k == 2:
        return rng.choice([b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS"]) + \
            b" /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
    if k == 3:
        return b"GET /" + os.urandom(8).hex().encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    if k == 4:
        return b"GET /metrics HTTP/1.1\r\nX: " + b"a" * rng.randint(4000, 100000) + b"\r\n\r\n"
    if k == 5:
        return os.urandom(rng.randint(1, 8192))
    if k == 6:
        return get[:rng.randint(1, len(get) - 1)]                                 # slow loris
    return b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1\r\na\r\n" * 1000


sel = selectors.DefaultSelector()
conns = {}


def open_one():
    http = MPORT and rng.random() < 0.2
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect_ex((HOST, MPORT if http else PORT))
    except OSError:
        stats["connect_failed"] += 1
        s.close()
        return
    conns[s.fileno()] = [s, http_payload() if http else payload_for(), 0, http]
    stats["http_opened"] += bool(http)
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
    stats["opened"] += 1


def close(fd, by_daemon):
    s = conns.pop(fd)[0]
    sel.unregister(s)
    s.close()
    if by_daemon:
        stats["closed_by_daemon"] += 1


def ctl_junk():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.05)
    try:
        s.connect(CTL)
        s.sendall(rng.choice([os.urandom(rng.randint(1, 700)), b"status\x00json\n",
                              b"x" * 600, b"stat", b"senders json\n"]))
        stats["ctl_junk"] += 1
    except OSError:
        pass
    s.close()


end = time.monotonic() + SECONDS
next_ctl = 0.0
while time.monotonic() < end:
    while len(conns) < CONNS:
        open_one()
    for key, ev in sel.select(timeout=0.01):
        fd = key.fd
        if fd not in conns:
            continue
        c = conns[fd]
        if ev & selectors.EVENT_READ:
            try:
                data = c[0].recv(65536)
            except OSError:
                data = b""
            if not data:
                close(fd, True)
                continue
            stats["bytes_in"] += len(data)
            if c[3]:
                stats["http_200"] += data.count(b"HTTP/1.1 200 ")
        if ev & selectors.EVENT_WRITE:
            if c[2] < len(c[1]):
                try:
                    n = c[0].send(c[1][c[2]:c[2] + rng.choice([1, 7, 64, 4096, 65536])])
                    c[2] += n
                    stats["bytes_out"] += n
                except OSError:
                    close(fd, True)
                    continue
            if c[2] >= len(c[1]):
                sel.modify(c[0], selectors.EVENT_READ)
                stats["frames"] += 1
    # Now and then a connection gives up early, or starts over.
    for _ in range(20):
        if conns and rng.random() < 0.5:
            fd = rng.choice(list(conns))
            if rng.random() < 0.5:
                close(fd, False)
            else:
                c = conns[fd]
                c[1], c[2] = c[1] + (http_payload() if c[3] else payload_for()), c[2]
                sel.modify(c[0], selectors.EVENT_READ | selectors.EVENT_WRITE)
            stats["actions"] += 1
    if time.monotonic() >= next_ctl:
        ctl_junk()
        next_ctl = time.monotonic() + 0.05
for fd in list(conns):
    close(fd, False)
print(json.dumps(stats))
