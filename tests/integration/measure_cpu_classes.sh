#!/usr/bin/env bash
# Task classes per CPU against a workload of known composition: k = 0..3
# stress-ng --cpu workers pinned to CPU 1.
#
# Truth: the k workers are CPU-bound and run on CPU 1 only. Checked, per k,
# on the median of 4 one-second epochs:
#  - CPU 1's cpu_bound, less what the record attributes to tasks that are
#    not the workers (other engineers' compilers run on this machine), is
#    k +- 0.5; and that background is really in the total: cpu_bound equals
#    the sum of the classified tasks' weights (--tasks) to 0.02;
#  - the workers add at most 0.5 to CPU 0's cpu_bound;
#  - every worker is classified CPU-bound in every epoch.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need measure_cpu_classes 2 "sched" stress-ng pgrep

tmp=$(mktemp -d /tmp/rxbt-meas-cpu.XXXXXX)
sp=
cleanup() {
	[ -n "$sp" ] && kill "$sp" 2>/dev/null && wait "$sp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

for k in 0 1 2 3; do
	: > "$tmp/workers.$k"
	if [ $k -gt 0 ]; then
		stress-ng --cpu $k --taskset 1 --timeout 60 --quiet &
		sp=$!
		for _ in $(seq 50); do
			[ "$(pgrep -P $sp | wc -l)" -ge $k ] && break
			sleep 0.1
		done
		pgrep -P $sp > "$tmp/workers.$k"
		sleep 0.5
	fi
	"$daemon" --measure-only --epochs 4 --interval-ms 1000 --json --tasks > "$tmp/k$k.json" ||
		{ echo "measure_cpu_classes: rxbneckd failed" >&2; exit 1; }
	if [ -n "$sp" ]; then
		kill $sp
		wait $sp 2>/dev/null
		sp=
	fi
done

python3 - "$tmp" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
TARGET, OTHER = 1, 0
ok = True
print(" k  cpu1 total  background  workers  |  cpu0 total  workers on cpu0")
for k in range(4):
    workers = {int(x) for x in open(f"{tmp}/workers.{k}").read().split()}
    rows = []
    for line in open(f"{tmp}/k{k}.json"):
        d = json.loads(line)
        w = {TARGET: 0.0, OTHER: 0.0}
        bg = {TARGET: 0.0, OTHER: 0.0}
        tot = {TARGET: 0.0, OTHER: 0.0}
        classes = {}
        for t in d["tasks"]:
            if t["tid"] in workers:
                classes[t["tid"]] = t["class"]
            if t["class"] != "cpu":
                continue
            for x in t["weights"]:
                if x["cpu"] in tot:
                    tot[x["cpu"]] += x["w"]
                    (w if t["tid"] in workers else bg)[x["cpu"]] += x["w"]
        cpus = {c["cpu"]: c["cpu_bound"] for c in d["cpus"]}
        for c in (TARGET, OTHER):
            if abs(cpus[c] - tot[c]) > 0.02:
                print(f"FAIL k={k}: cpu{c} cpu_bound {cpus[c]:.3f} != sum of tasks {tot[c]:.3f}")
                ok = False
        if len(workers) != k or any(classes.get(p) != "cpu" for p in workers):
            print(f"FAIL k={k}: workers {sorted(workers)} classified {classes}")
            ok = False
        rows.append((cpus[TARGET], bg[TARGET], w[TARGET], cpus[OTHER], w[OTHER]))
    med = [statistics.median(r[i] for r in rows) for i in range(5)]
    corrected = statistics.median(r[0] - r[1] for r in rows)
    print(f"{k:2d}  {med[0]:10.2f}  {med[1]:10.2f}  {med[2]:7.2f}  |  {med[3]:10.2f}  {med[4]:14.2f}")
    if abs(corrected - k) > 0.5:
        print(f"FAIL k={k}: cpu1 cpu_bound less background = {corrected:.2f}, want {k} +- 0.5")
        ok = False
    if med[4] > 0.5:
        print(f"FAIL k={k}: the workers add {med[4]:.2f} to cpu0")
        ok = False
sys.exit(0 if ok else 1)
PY
