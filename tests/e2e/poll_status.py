#!/usr/bin/python3
"""Record rxbneckd's status once per epoch, for diagnosing the model inputs.

    poll_status.py SOCKET OUT.jsonl [PERIOD_S]

Talks the control protocol of docs/CONTROL.md directly (one "status json"
request per connection), and writes one line per new epoch:
{"t_mono": CLOCK_MONOTONIC seconds when read, "epoch": seq, "end_ns": the
epoch's end (CLOCK_MONOTONIC ns), "cpus": [...] (with the epoch record's
cpu_bound_eff added to each), "flows": [...],
"sockets": the epoch record's watched sockets}. The epoch record's other
parts (tasks, probes, NICs) are left out to keep the file small. Runs until
killed (SIGTERM).
"""
import json
import signal
import socket
import sys
import time


def status(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(b"status json\n")
    buf = bytearray()
    while True:
        b = s.recv(65536)
        if not b:
            break
        buf += b
    s.close()
    head, _, body = bytes(buf).partition(b"\n")
    if head != b"OK":
        raise RuntimeError(head.decode(errors="replace"))
    return json.loads(body)


def main():
    path, out = sys.argv[1], sys.argv[2]
    period = float(sys.argv[3]) if len(sys.argv) > 3 else 0.1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    last = None
    with open(out, "a") as f:
        while True:
            try:
                d = status(path)
            except (OSError, RuntimeError, ValueError):
                time.sleep(period)
                continue
            t = time.monotonic()
            ep = d.get("epoch") or {}
            seq = ep.get("seq")
            if seq is not None and seq != last:
                last = seq
                m = d.get("measurement") or {}
                # The effective count (weights, quotas; docs/measurement.md)
                # is in the epoch record's CPUs only: merged into "cpus".
                eff = {c.get("cpu"): c.get("cpu_bound_eff") for c in m.get("cpus") or []}
                for c in d.get("cpus") or []:
                    c["cpu_bound_eff"] = eff.get(c.get("cpu"))
                rec = {"t_mono": t, "epoch": seq,
                       "start_ns": m.get("start_ns"), "end_ns": m.get("end_ns"),
                       "cpus": d.get("cpus"), "flows": d.get("flows"),
                       "sockets": m.get("sockets"), "napi": m.get("napi")}
                f.write(json.dumps(rec) + "\n")
                f.flush()
            time.sleep(period)


if __name__ == "__main__":
    main()
