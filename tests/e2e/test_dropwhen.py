#!/usr/bin/python3
"""dropwhen.py on a made-up `perf script` listing: the drop episodes, the
receiver's state when each began, the packets that arrived since it fell
asleep, its wait and how long the drops went on after it ran, and its
windows off the CPU by how it left, all against the numbers the listing
was written with.

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
    # Back at 25 ms, preempted (runnable) at 26 ms for 4 ms: drops 3 ms
    # into that window; then back at 30 ms until the listing ends at 31 ms.
    out += [switch(1.025, 7, "R", 42), switch(1.026, 42, "R+", 7)]
    out.append(ev(1.029, "skb:kfree_skb", "skbaddr=0x5 reason: SOCKET_RCVBUFF", 0))
    out += [switch(1.030, 7, "R", 42), switch(1.031, 42, "S", 7)]
    return out


class DropWhen(unittest.TestCase):
    def test_episodes(self):
        self.assertEqual(dw.episodes([1.0, 1.0005, 1.0020, 1.0021]),
                         [(1.0, 1.0005, 2), (1.0020, 1.0021, 2)])

    def test_rows(self):
        rows = dw.analyse(dw.parse(listing(), 42, "dwr1"))
        self.assertEqual(len(rows), 4)
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
        r = rows[3]
        self.assertEqual((r["state"], r["running"], r["drops"]), ("R+", False, 1))
        self.assertAlmostEqual(r["asleep_s"], 0.003, places=9)

    def test_windows(self):
        # Off 1.000-1.007 and 1.010-1.025 asleep, 1.026-1.030 preempted;
        # the one at 1.031 has no switch-in after it. Span 1.000-1.031.
        win, span = dw.windows(dw.parse(listing(), 42, "dwr1"))
        self.assertEqual(len(win["S"]), 2)
        self.assertAlmostEqual(win["S"][0], 0.007, places=9)
        self.assertAlmostEqual(win["S"][1], 0.015, places=9)
        self.assertEqual(len(win["R"]), 1)
        self.assertAlmostEqual(win["R"][0], 0.004, places=9)
        self.assertAlmostEqual(span, 0.031, places=9)

    def test_runs(self):
        # On its CPU 1.007-1.010 (then asleep), 1.025-1.026 (preempted),
        # 1.030-1.031 (asleep); it read every arrival but the 6 drops.
        ev = dw.parse(listing(), 42, "dwr1")
        r = dw.runs(ev)
        self.assertEqual(len(r["S"]), 2)
        self.assertAlmostEqual(sum(r["S"]), 0.004, places=9)
        self.assertEqual(len(r["R"]), 1)
        self.assertAlmostEqual(r["R"][0], 0.001, places=9)
        # 300 arrivals of 10 packets from 1.00005 to 1.02995.
        _, cum = dw.arrivals(ev)
        self.assertEqual((cum[-1], len(ev["drop"])), (3000, 6))

    def test_behind(self):
        # 100 000 packets a second from 2.00005 on. The receiver runs
        # 4 ms and is preempted for 4 ms, three times, with a drop in each
        # window: one stretch behind its backlog. Before it, one such cycle
        # alone (too short a stretch); after it, a cycle that ends asleep.
        out = []
        t = 2.00005
        while t < 2.06:
            out.append(ev(t, "net:netif_receive_skb", "dev=dwr1 skbaddr=0x1 len=14720", 0))
            t += 1e-4
        out += [switch(2.000, 7, "R", 42), switch(2.004, 42, "R+", 7)]
        out.append(ev(2.006, "skb:kfree_skb", "skbaddr=0x3 reason: SOCKET_RCVBUFF", 0))
        out += [switch(2.008, 7, "R", 42), switch(2.009, 42, "S", 7)]
        for start in (2.020, 2.028, 2.036):
            out += [switch(start, 7, "R", 42), switch(start + 0.004, 42, "R+", 7)]
            out.append(ev(start + 0.006, "skb:kfree_skb", "skbaddr=0x3 reason: SOCKET_RCVBUFF", 0))
        out += [switch(2.044, 7, "R", 42), switch(2.045, 42, "S", 7), switch(2.050, 7, "R", 42)]
        st = dw.behind(dw.parse(out, 42, "dwr1"))
        self.assertEqual(len(st), 1)
        cycles, run, off, arrivals, drops = st[0]
        self.assertEqual((cycles, drops), (3, 3))
        self.assertAlmostEqual(run, 0.012, places=9)
        self.assertAlmostEqual(off, 0.012, places=9)
        # Arrival events from 2.020 to 2.044: 240 of 10 packets.
        self.assertEqual(arrivals, 2400)


if __name__ == "__main__":
    unittest.main()
