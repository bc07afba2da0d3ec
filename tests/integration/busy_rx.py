#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A UDP receiver that never blocks: non-blocking reads in a loop, so it
is always runnable and only ever preempted (the receiver the pause-window
predictor is about, docs/pause.md). Bound to ADDR:PORT with a receive
buffer of RCVBUF bytes (the kernel doubles it). For
tests/integration/pause_predict.sh and pause_between.sh.

    busy_rx.py ADDR PORT RCVBUF
"""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(sys.argv[3]))
s.bind((sys.argv[1], int(sys.argv[2])))
s.setblocking(False)
while True:
    try:
        s.recv(65536)
    except BlockingIOError:
        pass
