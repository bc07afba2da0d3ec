#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A UDP receiver that never blocks: non-blocking reads in a loop, so it
is always runnable and only ever preempted (the receiver the pause-window
predictor is about, docs/pause.md). Bound to ADDR:PORT with a receive
buffer of RCVBUF bytes (the kernel doubles it; 0 leaves its default).
MODE `block` makes it an ordinary blocking reader instead, which leaves
the CPU between datagrams. For tests/integration/pause_predict.sh and
pause_between.sh, and bench/rx_early.sh (both modes).

    busy_rx.py ADDR PORT RCVBUF [spin|block]
"""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if int(sys.argv[3]):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(sys.argv[3]))
s.bind((sys.argv[1], int(sys.argv[2])))
if (sys.argv[4] if len(sys.argv) > 4 else "spin") != "block":
    s.setblocking(False)
while True:
    try:
        s.recv(65536)
    except BlockingIOError:
        pass
