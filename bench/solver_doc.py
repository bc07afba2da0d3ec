#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/model.md §8 from one `make bench` run.

`make bench` keeps every benchmark's output in BUILD/bench-out/<name>.txt.
This script joins the solver's three (bench_solver, model_cli, storm) into
bench/results/solver.txt, the committed record, and puts that file's text
into docs/model.md between the markers below, so the figures in the
document are the benchmark's own lines, never copied by hand.

    python3 bench/solver_doc.py BUILD      # record BUILD's run, update the doc
    python3 bench/solver_doc.py --check    # the doc matches the record
"""
import datetime
import os
import platform
import sys

PARTS = ("bench_solver", "model_cli", "storm")
RECORD = "bench/results/solver.txt"
DOC = "docs/model.md"
BEGIN = "<!-- bench/results/solver.txt: begin (bench/solver_doc.py writes this block) -->"
END = "<!-- bench/results/solver.txt: end -->"


def block(record):
    return "%s\n```\n%s```\n%s" % (BEGIN, record, END)


def doc_with(record):
    text = open(DOC).read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        sys.exit("%s: no block between the markers" % DOC)
    return text[:a] + block(record) + text[b + len(END):]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--check":
        ok = doc_with(open(RECORD).read()) == open(DOC).read()
        print("%s %s %s" % (DOC, "matches" if ok else "DIFFERS FROM", RECORD))
        return 0 if ok else 1
    out = os.path.join(sys.argv[1], "bench-out")
    parts = []
    for name in PARTS:
        path = os.path.join(out, name + ".txt")
        if not os.path.exists(path):
            sys.exit("%s: missing; run make bench first" % path)
        parts.append("=== %s\n%s" % (name, open(path).read()))
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    head = "make bench, %s; %s, %d CPUs, kernel %s\n" % (
        datetime.date.fromtimestamp(os.path.getmtime(os.path.join(out, "bench_solver.txt"))),
        cpu, os.cpu_count(), platform.release())
    record = head + "".join(parts)
    doc = doc_with(record)
    with open(RECORD, "w") as f:
        f.write(record)
    with open(DOC, "w") as f:
        f.write(doc)
    print("wrote %s and %s §8" % (RECORD, DOC))
    return 0


if __name__ == "__main__":
    sys.exit(main())
