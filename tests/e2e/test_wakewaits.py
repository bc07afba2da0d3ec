#!/usr/bin/python3
"""wakewaits.py on a made-up `perf sched timehist --state` listing: which
run's delay is a wait after a wake-up and which a window after preemption,
and its log-uniform tail and excess against a numerical integral of the
density 1 / (w ln 2) over each slot.

    python3 tests/e2e/test_wakewaits.py
"""
import math
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wakewaits as ww  # noqa: E402

HEAD = """           time    cpu  task name                       wait time  sch delay   run time  state
                        [tid/pid]                          (msec)     (msec)     (msec)
--------------- ------  ------------------------------  ---------  ---------  ---------  -----
"""


def line(t, delay_ms, state):
    return "%15.6f [0001]  rxbneck-recv[42]  %9.3f  %9.3f  %9.3f  %s\n" % (
        t, 0.5, delay_ms, 0.2, state)


def integral(a, b, x, n=200000):
    """(P(W > x), E[(W - x)+]) for W with density 1 / (w ln(b/a)) on [a, b),
    by the midpoint rule in log w."""
    tail = excess = 0.0
    h = math.log(b / a) / n
    for i in range(n):
        w = a * math.exp((i + 0.5) * h)
        if w > x:
            tail += h
            excess += (w - x) * h
    span = math.log(b / a)
    return tail / span, excess / span


class WakeWaits(unittest.TestCase):
    def test_kinds(self):
        # S then R then S: the 2nd run's delay follows a sleep, the 3rd's
        # a preemption, the 4th's a sleep; the first run has no run before.
        text = HEAD + line(1.0, 9.0, "S") + line(1.1, 2.0, "R") + \
            line(1.2, 3.0, "S") + line(1.3, 4.0, "S")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            kinds = ww.waits(ww.runs(f.name))
        finally:
            os.unlink(f.name)
        self.assertEqual(kinds["wake"], [2.0e6, 4.0e6])
        self.assertEqual(kinds["preempt"], [3.0e6])

    def test_loguniform(self):
        a, b = 2.0 ** 22, 2.0 ** 23
        for x in (0.5 * a, a, 1.3 * a, 1.9 * a, b, 2 * b):
            t, e = ww.loguniform(a, b, x)
            ti, ei = integral(a, b, x)
            self.assertAlmostEqual(t, ti, delta=1e-5)
            self.assertAlmostEqual(e, ei, delta=1e-5 * b)

    def test_compare(self):
        # Four waits in 4.2-8.4 ms, all below x = 6.1 ms: none measured
        # above it, while their slot spread log-uniformly puts
        # log2(8.39/6.1) of each above.
        ws = [4.3e6, 4.6e6, 4.9e6, 5.0e6]
        x = 6.1e6
        t, e, lt, le = ww.compare(ws, x)
        self.assertEqual((t, e), (0.0, 0.0))
        b = 2.0 ** 23
        self.assertAlmostEqual(lt, math.log2(b / x), places=12)
        self.assertGreater(le, 0.0)


if __name__ == "__main__":
    unittest.main()
