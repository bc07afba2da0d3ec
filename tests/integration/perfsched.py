"""The receiver's scheduler events from `perf script --ns -F
cpu,time,event,trace` text (measure_busy_receiver in measure.inc): the
second tool the sched probe's figures are checked against."""
import re


def receiver_events(path, rpid):
    """Sorted (ns, kind, state): its switch-outs ("out", prev_state),
    switch-ins ("in", None) and wake-ups ("wake", None)."""
    events = []
    for line in open(path):
        m = re.match(r"\s*\[\d+\]\s+(\d+)\.(\d+):\s+(\S+):\s+(.*)", line)
        if not m:
            continue
        t = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
        ev, rest = m.group(3), m.group(4)
        if ev == "sched:sched_switch":
            if int(re.search(r"prev_pid=(\d+)", rest).group(1)) == rpid:
                events.append((t, "out", re.search(r"prev_state=(\S+)", rest).group(1)))
            if int(re.search(r"next_pid=(\d+)", rest).group(1)) == rpid:
                events.append((t, "in", None))
        elif ev == "sched:sched_wakeup" and int(re.search(r"\bpid=(\d+)", rest).group(1)) == rpid:
            events.append((t, "wake", None))
    return sorted(events)


def windows(events):
    """Its off-CPU windows, each as (ns of the switch-out that ends the run
    after it, the probe counts it then; kind, length ns): "offcpu" after a
    preemption (switched out runnable) to the switch-in, "wake" after a
    sleep in S from the first wake-up to the switch-in."""
    out, state, t_out, first, win = [], None, None, None, None
    for t, kind, st in events:
        if kind == "out":
            if win is not None:
                out.append((t, win[0], win[1]))
            state, t_out, first, win = st, t, None, None
        elif kind == "wake":
            if state == "S" and first is None:
                first = t
        elif state is not None and state.startswith("R") and t_out is not None:
            win = ("offcpu", t - t_out)
        elif state == "S" and first is not None:
            win = ("wake", t - first)
    return out
