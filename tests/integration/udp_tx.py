#!/usr/bin/env python3
"""About 20 000 UDP datagrams/s of 1400 bytes to ADDR:PORT, in bursts of 10
every 0.5 ms, until killed. The load of tests/integration/pause_predict.sh
and bench/rx_early.sh.

    udp_tx.py ADDR PORT
"""
import socket
import sys
import time

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst, buf = (sys.argv[1], int(sys.argv[2])), b"x" * 1400
while True:
    for _ in range(10):
        s.sendto(buf, dst)
    time.sleep(0.0005)
