#!/usr/bin/python3
"""drainlearn.py's emulation of the saturated-drain rule against the C
(daemon/model/drain.c, through tests/e2e/drain_replay.c) on a worked
sequence of epochs that takes every branch of drain_epoch() and
drain_add(): both must give the same state after every epoch (1e-12
relative), and the sequence's drain is also checked by hand.

    python3 tests/e2e/test_drainlearn.py     (needs cc; builds in a temp dir)
"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import drainlearn as dl  # noqa: E402

MS = 10**6
EPOCH = 250 * MS


def ep(i, pkts=20000, oncpu=200 * MS, z=0, wake=10, pre=0, off=0.0, ww=0, wait=0.0, drops=5,
       rcvbuf=5, counts=1, recv=1, reasons=1, dvalid=1, cpu=0, cb=3.0, eff=0.0, eff_ok=0,
       io=0.0, dt=0.25, spin=0.0, length=EPOCH):
    """One epoch, as the C driver's input line and as drainlearn's dicts."""
    start = 10**12 + i * EPOCH
    f = [dt, spin, start, start + length, pkts, oncpu, z, wake, pre, off, ww, wait, drops,
         rcvbuf, counts, recv, reasons, dvalid, cpu, cb, eff, eff_ok, io]
    s = {"pkts_out": pkts, "receiver_oncpu_ns": oncpu, "empty_reads": z, "recv_wakeups": wake,
         "receiver_preemptions": pre, "preempt_off_ns": off,
         "wake_waits": ww, "wake_wait_ns": wait,
         "drops": drops, "drops_rcvbuf": rcvbuf, "counts_valid": counts, "receivers_valid": recv,
         "reasons_valid": reasons, "drops_valid": dvalid, "ran_on": [(cpu, oncpu)]}
    e = {"start_ns": start, "end_ns": start + length, "ncpus": cpu + 1,
         "cpus": {cpu: {"cpu_bound": cb, "cpu_bound_eff": eff, "cpu_bound_eff_valid": eff_ok,
                        "io_bound": io}}}
    return " ".join(repr(x) for x in f), s, e, (spin if spin > 0 else None), dt


# Every branch: counted plain, no overflow, drops without reasons, slept
# too much, too few packets, spin taken off, spin unknown and too many
# empty reads, preempted (busy + P x o), bad preemption numbers,
# busier than the epoch, the effective count, a load change (restart),
# long idle decay, I/O-bound tasks in the load, waits after wake-ups
# (busy + W x w) and bad ones.
SEQ = [
    ep(0, pkts=8000),                          # counted, below DRAIN_MIN_PKTS
    ep(1, pkts=9000, oncpu=180 * MS),          # counted: 17000
    ep(2, drops=0, rcvbuf=0),                  # no overflow: decay only
    ep(3, reasons=0, rcvbuf=0, drops=7),       # drops without reasons: counts
    ep(4, wake=100),                           # 400 x 100 > 20000: refused
    ep(5, pkts=900, wake=1),                   # < DRAIN_MIN_EPOCH_PKTS: refused
    ep(6, z=500, spin=2000.0),                 # spin known: 1 ms off
    ep(7, z=100),                              # spin unknown, 400 x 100 > 20000: refused
    ep(8, z=10),                               # spin unknown, few empty reads: counted
    ep(9, pre=50, off=1 * MS, oncpu=150 * MS),  # busy 200 ms
    ep(10, pre=40, off=-1.0),                  # bad off-CPU interval: refused
    ep(11, oncpu=260 * MS, pre=20, off=1 * MS),  # 280 ms > 1.1 x 250: refused
    ep(12, cb=2.0, eff=3.2, eff_ok=1),         # effective count 3.2: same load
    ep(13, cb=1.0),                            # load 1: the sums start again
    ep(14, cb=1.0, pkts=25000, dt=30.0),       # after 30 s: heavy decay, ok again
    ep(15, cb=1.0, io=0.3, drops=0, rcvbuf=0, dt=2.0),  # decay only
    ep(16, cb=1.0, io=0.3, pkts=12000, oncpu=120 * MS),  # load 1.3: kept
    ep(17, cb=1.0, io=0.3, oncpu=150 * MS, ww=100, wait=0.5 * MS),  # busy 200 ms
    ep(18, cb=1.0, io=0.3, ww=5, wait=float("nan")),  # bad wait: refused
]


def build(tmp):
    exe = os.path.join(tmp, "drain_replay")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
                    "-I" + SRC, "-I" + os.path.join(SRC, "include"), "-o", exe,
                    os.path.join(HERE, "drain_replay.c"),
                    os.path.join(SRC, "daemon", "model", "drain.c"),
                    os.path.join(SRC, "solver", "ewma.c"), "-lm"], check=True)
    return exe


class TestDrainLearn(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        exe = build(cls.tmp.name)
        out = subprocess.run([exe], input="\n".join(x[0] for x in SEQ) + "\n",
                             capture_output=True, text=True, check=True)
        cls.c_rows = [l.split() for l in out.stdout.strip().split("\n")]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def close(self, a, b):
        self.assertLessEqual(abs(a - b), 1e-12 * max(1.0, abs(a), abs(b)), (a, b))

    def test_same_state_as_c(self):
        d = dl.Drain()
        self.assertEqual(len(self.c_rows), len(SEQ))
        for i, ((_, s, e, spin, dt), c) in enumerate(zip(SEQ, self.c_rows)):
            counted_py = dl.epoch(s, e, spin) is not None
            d.add(s, e, spin, dl.decay_factor(dt))
            with self.subTest(epoch=i):
                self.assertEqual(int(c[0]), int(counted_py))
                self.close(float(c[1]), d.pkts)
                self.close(float(c[2]), d.busy_ns)
                self.close(float(c[3]), d.load_pkts)
                self.assertEqual(int(c[4]), int(d.ok))
                self.assertEqual(int(c[5]), d.taken)
                self.assertEqual(int(c[6]), d.refused)
                self.assertEqual(int(c[7]), d.last_ns)
                v, _ = d.pkts_per_s()
                if c[8] == "nan":
                    self.assertIsNone(v)
                else:
                    self.close(float(c[8]), v)
        # Branches the sequence is meant to take, by hand.
        counted = [int(c[0]) for c in self.c_rows]
        self.assertEqual(counted, [1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0])
        self.assertEqual(d.refused, 6)

    def test_drain_by_hand(self):
        # Epochs 0-1 alone: 17000 packets in 380 ms, no decay within them
        # after the first (k = e^-0.05): (8000 k + 9000) / (200 k + 180) ms.
        d = dl.Drain()
        for _, s, e, spin, dt in SEQ[:2]:
            d.add(s, e, spin, dl.decay_factor(dt))
        self.assertIsNone(d.pkts_per_s()[0])  # below 20000 packets
        k = dl.decay_factor(0.25)
        self.close(d.pkts, 8000 * k + 9000)
        # Epoch 9: busy = 150 ms + 50 x 1 ms = 200 ms; epoch 17: 150 ms
        # + 100 x 0.5 ms.
        self.close(dl.epoch(SEQ[9][1], SEQ[9][2], None)[1], 200 * MS)
        self.close(dl.epoch(SEQ[17][1], SEQ[17][2], None)[1], 200 * MS)
        # Epoch 6: 200 ms - 500 x 2 us = 199 ms.
        self.close(dl.epoch(SEQ[6][1], SEQ[6][2], 2000.0)[1], 199 * MS)

    def test_learned_no_look_ahead(self):
        # A transfer is seen only once it has ended, and at its own load.
        recs = []
        for i, (rx, drops) in enumerate(((2.0e9, 100), (3.0e9, 0), (2.5e9, 50))):
            recs.append({"t_start_mono": 100.0 + 2 * i, "t_end_mono": 101.0 + 2 * i, "ok": True,
                         "pkts_sent_per_round": [136240], "pkts_lost_per_round": [10000],
                         "rx_rate_round1_bps": rx, "socket_drops": drops,
                         "daemon_before": {"cpu_bound": 3.0, "io_bound": 0}})
        got = dl.learned(recs, [(100.5, 3.0), (101.5, 3.0), (104.0, 3.0), (105.5, 3.0),
                                (105.5, 1.0), (800.0, 3.0)])
        pps = lambda bps: bps / dl.PKT_BITS
        self.assertFalse(got[0]["usable"])                  # nothing ended yet
        self.close(got[1]["drain_pps"], pps(2.0e9))
        self.close(got[2]["drain_pps"], pps(2.0e9))         # the lossless one not counted
        # Two equal packet counts, decayed by e^-(4/5) for the older one:
        # the drain is the weighted harmonic mean of the two rates.
        w = dl.decay_factor(4.0)
        want = (w + 1) / (w / pps(2.0e9) + 1 / pps(2.5e9))
        self.close(got[3]["drain_pps"], want)
        self.assertFalse(got[4]["usable"])                  # another load
        self.assertFalse(got[5]["usable"])                  # 695 s old


if __name__ == "__main__":
    unittest.main()
