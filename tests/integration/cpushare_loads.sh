#!/usr/bin/env bash
# The effective competing count (cpus[].cpu_bound_eff, daemon/collect/
# cpushare.h) against loads of known share, made by the e2e harness's own
# load functions (tests/e2e/lib.sh, E_LOAD) on CPU 1, a few seconds each.
#
# Truth, for a nice-0 receiver that would compete with them (closed forms
# of weighted fair sharing, as e2e_load_expect computes them):
#   busy      one busy loop: 1
#   nice:10   one busy loop at nice 10: 110 / 1024 = 0.107
#   nice:19   one busy loop at nice 19: 15 / 1024 = 0.015
#   quota:25  one busy loop in a cgroup held to 25 % of a CPU: 0.25 / 0.75
#   quota:25  two busy loops in that cgroup: the same 1/3 (the cap binds)
#   duty:50   stress-ng --cpu-load 50 (runnable half the wall-clock time): 0.5
#   io        one fio job of O_DIRECT random reads: 0 (I/O-bound, the
#             model's #I), and classified I/O-bound on CPU 1
# Checked on the median over 4 one-second epochs, less the median of CPU
# 1's value with no load just before (other work on the machine): within
# 0.15 of the truth for busy, duty and io, 0.05 for the niced loops (the
# plain #C says 1 for both), 0.1 for the quotas (the plain #C says 1 and 2).
# And the quota's phases (cpus[].quota_phases, cpushare_quota_phases()):
# for the 100 ms period at 25 %, one loop runs 50 ms of it at half the CPU,
# two 37.5 ms at two thirds, the receiver getting 1/2 and 1/3 (medians
# within 10 % and 0.05); no phases in most epochs under the other loads.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need cpushare_loads 2 "sched" stress-ng fio python3
E_SRC=${RXB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
E_BUILD=$build
E_RECV_CPU=1
. "$E_SRC/tests/e2e/lib.sh"
E_TMP=$(mktemp -d /tmp/rxbt-cpushare.XXXXXX) || exit 1
trap 'e2e_load_stop; rm -rf "$E_TMP"' EXIT
# This script's own shell and tools stay off CPU 1.
taskset -pc 0 $$ > /dev/null || exit 1

measure() {	# measure NAME: 4 one-second epochs into $E_TMP/NAME.json
	"$daemon" --measure-only --epochs 5 --interval-ms 1000 --json --tasks \
		> "$E_TMP/$1.json" 2> "$E_TMP/$1.err" ||
		{ echo "cpushare_loads: rxbneckd failed: $(tail -3 "$E_TMP/$1.err")" >&2; exit 1; }
}

# quiet NAME: CPU 1 had no CPU-bound work of weight in NAME's epochs (the
# median effective #C at most 0.25). The host's own processes can run
# there for seconds (one at nice -10 counts 9.3 tasks); a background
# measured while they did would be subtracted from a load they did not
# share.
quiet() {
	taskset -c 0 python3 - "$E_TMP/$1.json" <<'PY'
import json, math, statistics, sys
eps = [json.loads(l) for l in open(sys.argv[1])][1:]
v = [c["cpu_bound_eff"] for e in eps for c in e["cpus"] if c["cpu"] == 1]
v = [x for x in v if x is not None and math.isfinite(x)]
sys.exit(0 if v and statistics.median(v) <= 0.25 else 1)
PY
}

# foreign NAME: the tasks other than the load's own (stress-ng, fio) that
# the daemon classified on CPU 1 in NAME's epochs, "comm tid" each; none:
# empty. A host process that runs there for a second or more (one at
# nice -10, e.g. the VM's agent, counts 9.3) would be measured as part of
# the load.
foreign() {
	taskset -c 0 python3 - "$E_TMP/$1.json" <<'PY'
import json, sys
eps = [json.loads(l) for l in open(sys.argv[1])][1:]
seen = sorted({"%s %d" % (t["comm"], t["tid"]) for e in eps for t in e.get("tasks") or []
               if not t["comm"].startswith(("stress-ng", "fio"))
               and any(w["cpu"] == 1 and w["w"] > 0.1 for w in t["weights"])})
print(", ".join(seen))
PY
}

cases="busy:1 nice:10:1 nice:19:1 quota:25:1 quota:25:2 duty:50:1 io:1"
: > "$E_TMP/cases"
for c in $cases; do
	E_LOAD=${c%:*} k=${c##*:}
	e2e_load_check
	name=$(echo "$c" | tr ':' '_')
	for try in 1 2 3; do
		measure "base_$name"
		quiet "base_$name" && break
		echo "cpushare_loads: CPU 1 busy before $name (try $try); measuring again" >&2
		# A background that is not quiet would be subtracted from the
		# load's count, hiding whatever bias it shares with it.
		[ "$try" = 3 ] && { echo "SKIP: CPU 1 never quiet before $name" >&2; exit 77; }
		sleep 2
	done
	e2e_load "$k"
	sleep 1	# fio lays its file out first
	for try in 1 2 3; do
		measure "$name"
		other=$(foreign "$name")
		[ -z "$other" ] && break
		echo "cpushare_loads: other work on CPU 1 during $name ($other; try $try)" >&2
		[ "$try" = 3 ] && { e2e_load 0; echo "SKIP: CPU 1 never free of other work during" \
			"$name" >&2; exit 77; }
		sleep 2
	done
	e2e_load 0
	echo "$name $E_LOAD $k $(e2e_load_expect "$k")" >> "$E_TMP/cases"
done

taskset -c 0 python3 - "$E_TMP" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
CPU = 1
BOUND = {"busy": 0.15, "nice": 0.05, "quota": 0.1, "duty": 0.15, "io": 0.15}
# (period s, slow phase s, the receiver's share then) of k loops held to 25 %.
PHASES = {("quota:25", "1"): (0.1, 0.05, 0.5), ("quota:25", "2"): (0.1, 0.0375, 1 / 3)}

def epochs(name):
    out = [json.loads(l) for l in open("%s/%s.json" % (tmp, name))]
    return out[1:]      # the first epoch starts without a baseline

def cpu(e):
    return [c for c in e["cpus"] if c["cpu"] == CPU][0]

ok = True
print("%-12s %8s %8s %8s %8s %8s" % ("load", "#C", "eff", "base", "want", "io_bound"))
for line in open(tmp + "/cases"):
    name, load, k, want = line.split()
    want = float(want)
    eps, base = epochs(name), epochs("base_" + name)
    if not eps or not base:
        print("FAIL %s: no epochs" % name)
        ok = False
        continue
    eff = statistics.median(cpu(e)["cpu_bound_eff"] for e in eps)
    b = statistics.median(cpu(e)["cpu_bound_eff"] for e in base)
    plain = statistics.median(cpu(e)["cpu_bound"] for e in eps)
    io = statistics.median(cpu(e)["io_bound"] for e in eps)
    print("%-12s %8.3f %8.3f %8.3f %8.3f %8.3f" % (load + "x" + k, plain, eff, b, want, io))
    ph = [cpu(e).get("quota_phases") for e in eps]
    want_ph = PHASES.get((load, k))
    if want_ph:
        got = [p for p in ph if p]
        if len(got) * 2 <= len(ph):
            print("FAIL %s: quota phases in %d of %d epochs" % (name, len(got), len(ph)))
            ok = False
        else:
            per = statistics.median(p["period_s"] for p in got)
            slow = statistics.median(p["slow_s"] for p in got)
            share = statistics.median(p["slow_share"] for p in got)
            print("%-12s phases: period %.4f s, slow %.4f s at %.3f (want %.4f, %.4f at %.3f)"
                  % ("", per, slow, share, want_ph[0], want_ph[1], want_ph[2]))
            if abs(per - want_ph[0]) > 1e-9 or abs(slow / want_ph[1] - 1) > 0.1 or \
                    abs(share - want_ph[2]) > 0.05:
                print("FAIL %s: quota phases off" % name)
                ok = False
    elif sum(1 for p in ph if p) * 2 > len(ph):
        print("FAIL %s: quota phases in %d of %d epochs without a quota" %
              (name, sum(1 for p in ph if p), len(ph)))
        ok = False
    bound = BOUND[load.split(":")[0]]
    if abs(eff - b - want) > bound:
        print("FAIL %s: effective #C %.3f less background %.3f = %.3f, want %.3f +- %.2f"
              % (name, eff, b, eff - b, want, bound))
        ok = False
    if load == "io":
        cls = [t["class"] for e in eps for t in e.get("tasks") or []
               if t["comm"].startswith("fio") and any(w["cpu"] == CPU and w["w"] > 0.1
                                                      for w in t["weights"])]
        if io < 0.5 or not cls or cls.count("io") < 0.75 * len(cls):
            print("FAIL io: io_bound %.2f on cpu%d, fio's classes %s (want I/O-bound)"
                  % (io, CPU, sorted(set(cls))))
            ok = False
sys.exit(0 if ok else 1)
PY
