#!/usr/bin/env bash
# tests/e2e/ab.sh: does a --follow transfer lose more often than a fixed-rate
# one at the same rate? With K hogs on the receiver's CPU, alternate N
# transfers at fixed RATE with N `--follow` transfers capped at RATE
# (--max-rate RATE: rxbneckd's rate when lower, else RATE), then print how
# many of each lost anything in their first round (docs/e2e.md §2).
#
#   sudo tests/e2e/ab.sh [-b BUILD] [-d DELAY_MS] [-k K] [-n N] -o OUTDIR RATE
#
# RATE as rxbneck-send takes it (3.9G). Defaults: build, 100 ms, k = 2,
# N = 20, the sender's UDP segmentation on (lib.sh; E_USO_OFF=1 turns it
# off). The set-up, the quiet-machine checks and the clean-up are
# run.sh's (tests/e2e/lib.sh); runs.jsonl in OUTDIR has every transfer.
# With E_QTRACE=1 each transfer's socket queue is traced (OUTDIR/qtrace/)
# and the traces' scheduling cycles are summed up at the end (qtrace.py
# cycles).
# Exit 0 done, 1 failure, 2 usage, 77 cannot run here.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
N=20 K=2
. "$SRC/tests/e2e/lib.sh"
e2e_args "b:E_BUILD d:E_DELAY_MS k:K n:N o:E_OUT" "$@"
RATE=${E_ARGS[0]:-}
if [ -z "$RATE" ] || [ -z "$E_OUT" ]; then
	e2e_usage
fi
E_DELAY_MS=${E_DELAY_MS:-100}
e2e_out_init ab
E_BUILD=$(cd "$E_BUILD" && pwd) || exit 1
export E_BUILD E_OUT

e2e_setup_pinned
e2e_daemon_start
e2e_k_begin "$K"
e2e_k_settle
for w in 1 2; do e2e_run fixed "$RATE" "$w" warmup; done
for rep in $(seq "$N"); do
	e2e_point fixed "$RATE" "$rep" main
	E_LINE_RATE=$RATE e2e_point follow - "$rep" main
done
e2e_k_end
e2e_daemon_stop

/usr/bin/python3 - "$E_OUT/runs.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print("mode     runs  lossy  first-round loss of the lossy ones (%)  rate asked (Gb/s)")
for mode in ("fixed", "follow"):
    ok = [r for r in runs if r["mode"] == mode and r["tag"] == "main" and not r.get("disturbed")
          and (r.get("send") or {}).get("ok")]
    r1 = [r["send"]["per_round"][0] for r in ok]
    lossy = [100.0 * x["pkts_lost"] / x["pkts_sent"] for x in r1 if x["pkts_lost"]]
    rates = [x["rate_requested_bps"] / 1e9 for x in r1]
    print("%-7s %5d  %5d  %-38s  %s" % (mode, len(ok), len(lossy),
          " ".join("%.2f" % x for x in lossy) or "-",
          "%.2f-%.2f" % (min(rates), max(rates)) if rates else "-"))
PY
if [ "$E_QTRACE" = 1 ]; then
	for mode in fixed follow; do
		echo "$mode:"
		/usr/bin/python3 "$SRC/tests/e2e/qtrace.py" cycles "$E_OUT"/qtrace/"$mode"-*-main-*.txt
	done
fi
