#!/usr/bin/env bash
# tests/e2e/capacity_ab.sh: which stage-B capacity gives the shorter
# `--follow` transfers, [model] capacity = cost or drain? With K busy loops
# on the receiver's CPU, one daemon (so both modes see the same learned
# state) alternates the key by `rxbneckctl reload` between --follow
# transfers (ABBA order), and interleaves a fixed-rate sweep (RATES, REPS
# transfers each) to know the best fixed rate's transfer time.
#
#   sudo tests/e2e/capacity_ab.sh [-b BUILD] [-d DELAY_MS] [-k K] [-n N] [-r REPS]
#        -o OUTDIR RATE...
#
# Defaults: build, 0 ms (loopback-like: no delay line), k = 2, N = 10
# --follow transfers per mode, REPS = 2. Two fixed transfers at the
# highest RATE first overflow the socket so that the saturated drain is
# known before the first --follow one. runs.jsonl has every transfer (tag
# "cost"/"drain" for --follow, "sweep" for fixed), capacity.jsonl the
# daemon's stage_b.capacity just before each --follow transfer.
#
# Claim and rule (fixed before the runs): the drain-calibrated capacity
# gives shorter --follow transfers than the cost's under K = 2 busy loops.
# Drain wins if its median T is lower than cost's by more than 5 % and a
# one-sided Mann-Whitney test (exact, over the undisturbed transfers,
# >= 8 each) gives p < 0.1; cost wins under the mirror rule; otherwise
# the two are not told apart at this size. Each mode's median T is also
# reported against the best fixed rate's median T.
# Exit 0 done, 1 failure, 2 usage, 77 cannot run here.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
N=10 K=2 REPS=2
E_DELAY_MS=${E_DELAY_MS:-0}
. "$SRC/tests/e2e/lib.sh"
e2e_args "b:E_BUILD d:E_DELAY_MS k:K n:N o:E_OUT r:REPS" "$@"
RATES=("${E_ARGS[@]}")
if [ "${#RATES[@]}" -eq 0 ] || [ -z "$E_OUT" ]; then
	e2e_usage
fi
e2e_out_init capacity_ab
E_BUILD=$(cd "$E_BUILD" && pwd) || exit 1
export E_BUILD E_OUT

# capacity MODE: [model] capacity = MODE in the running daemon, checked.
capacity() {
	sed -i "/^capacity = /d; s/^\[model\]\$/[model]\ncapacity = $1/" "$E_TMP/d.conf"
	e2e_ctl reload > /dev/null || e2e_fail "rxbneckctl reload (capacity = $1)"
}

# snap MODE REP: the daemon's stage_b.capacity and rate now, to capacity.jsonl.
snap() {
	e2e_ctl status --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for fl in d.get("flows", []):
    b = (fl.get("inputs") or {}).get("stage_b") or {}
    if "capacity" in b:
        print(json.dumps({"mode": sys.argv[1], "rep": int(sys.argv[2]), "port": fl.get("port"),
                          "capacity": b["capacity"]}))' "$1" "$2" >> "$E_OUT/capacity.jsonl"
}

follow() {	# follow MODE REP
	capacity "$1"
	sleep "$(awk "BEGIN { print 2 * $E_EPOCH_MS / 1000 }")"
	snap "$1" "$2"
	E_LINE_RATE=10G e2e_point follow - "$2" "$1"
}

e2e_setup_pinned
e2e_daemon_start
e2e_k_begin "$K"
e2e_k_settle
top=${RATES[-1]}
for w in 1 2; do e2e_run fixed "$top" "$w" warmup; done
s=0
for rep in $(seq "$N"); do
	if [ $((rep % 2)) = 1 ]; then first=cost second=drain; else first=drain second=cost; fi
	follow "$first" "$rep"
	follow "$second" "$rep"
	if [ "$s" -lt $((${#RATES[@]} * REPS)) ]; then
		e2e_point fixed "${RATES[$((s % ${#RATES[@]}))]}" "$((s / ${#RATES[@]} + 1))" sweep
		s=$((s + 1))
	fi
done
while [ "$s" -lt $((${#RATES[@]} * REPS)) ]; do
	e2e_point fixed "${RATES[$((s % ${#RATES[@]}))]}" "$((s / ${#RATES[@]} + 1))" sweep
	s=$((s + 1))
done
e2e_k_end
e2e_daemon_stop
/usr/bin/python3 "$SRC/tests/e2e/capacity_ab.py" "$E_OUT"
