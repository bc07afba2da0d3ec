#!/usr/bin/python3
"""dropwhen.py on a made-up `perf script` listing: the drop episodes, the
receiver's state when each began, the packets that arrived since it fell
asleep, its wait and how long the drops went on after it ran, all against
the numbers the listing was written with.

    python3 tests/e2e/test_dropwhen.py
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dropwhen as dw  # noqa: E402


def ev(t, kind, rest, cpu=1):
    return "[%03d] %.6f: %s: %s\n" % (cpu, t, kind, rest)


def switch(t, prev, state, nxt):
    return ev(t, "sched:sched_switch", "prev_comm=a prev_pid=%d prev_prio=120 prev_state=%s "
              "==> next_comm=b next_pid=%d next_prio=120" % (prev, state, nxt))


def listing():
    out = [switch(1.0, 42, "S", 7), ev(1.00002, "sched:sched_wakeup",
                                       "comm=rxbneck-recv pid=42 prio=120 target_cpu=001", 0)]
    # 10 packets (14720 bytes) every 100 us from 1.00005 on; another
    # device's traffic does not count.
    t = 1.00005
    while t < 1.03:
        out.append(ev(t, "net:netif_receive_skb", "dev=dwr1 skbaddr=0x1 len=14720", 0))
        out.append(ev(t, "net:netif_receive_skb", "dev=lo skbaddr=0x2 len=14720", 0))
        t += 1e-4
    # Back on its CPU at 7 ms, drops from 7.5 ms to 7.8 ms (one episode:
    # 0.1-0.2 ms apart).
    out.append(switch(1.007, 7, "R", 42))
    for t in (1.0075, 1.0076, 1.0078):
        out.append(ev(t, "skb:kfree_skb", "skbaddr=0x3 reason: SOCKET_RCVBUFF", 0))
    # Asleep again at 10 ms; drops at 20 ms and, 1.5 ms later, a second
    # episode, both while it is still off its CPU.
    out.append(switch(1.010, 42, "S", 7))
    for t in (1.020, 1.0215):
        out.append(ev(t, "skb:kfree_skb", "skbaddr=0x4 reason: SOCKET_RCVBUFF", 0))
    return out


class DropWhen(unittest.TestCase):
    def test_episodes(self):
        self.assertEqual(dw.episodes([1.0, 1.0005, 1.0020, 1.0021]),
                         [(1.0, 1.0005, 2), (1.0020, 1.0021, 2)])

    def test_rows(self):
        rows = dw.analyse(dw.parse(listing(), 42, "dwr1"))
        self.assertEqual(len(rows), 3)
        r = rows[0]
        self.assertEqual((r["state"], r["running"], r["drops"]), ("S", True, 3))
        self.assertAlmostEqual(r["asleep_s"], 0.0075, places=9)
        # Arrivals at 1.00005 + i 0.1 ms up to 1.0075: 75 of 10 packets.
        self.assertEqual(r["pkts"], 750)
        self.assertAlmostEqual(r["wait_s"], 0.007 - 0.00002, places=9)
        self.assertAlmostEqual(r["after_run_s"], 0.0008, places=9)
        for r, asleep, pkts in ((rows[1], 0.010, 1000), (rows[2], 0.0115, 1150)):
            self.assertEqual((r["state"], r["running"], r["wait_s"]), ("S", False, None))
            self.assertAlmostEqual(r["asleep_s"], asleep, places=9)
            self.assertEqual(r["pkts"], pkts)


if __name__ == "__main__":
    unittest.main()
