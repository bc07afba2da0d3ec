#!/usr/bin/env bash
# The stream-count experiment (docs/streams.md §6; Yildirim, Yin and Kosar's
# experiment, docs/references.md): the throughput of iperf3 -P n over an
# emulated path - 50 ms round trip (rxbneck-delayline), a 200 Mbit/s htb
# bottleneck on the sender's veth, 128 KiB socket buffers that hold each
# stream to about a window per round trip - against what rxbneckd's
# advisor, fed only the passive samples of the exponential sampling it
# asks for, advises; with k CPU hogs on the receiver's CPU.
#
#   tests/e2e/streams.sh [-b BUILD] [-o OUTDIR] [-k "0 2"] [-n REPS] [-N MAX_N]
#                        [-L "N ..."] [-t SECONDS] [-S SEED] [-a]
#
#   -k  hog counts (0 2); -n runs per n of the curve (3); -N the curve's
#   largest n (32); -L the curve's stream counts (default 1 2 3 4 6 8 12
#   16 24 32, those up to MAX_N; "all": every n from 1 to MAX_N; the
#   advised n* is always added); -t seconds counted per run (5, after 1 s
#   omitted);
#   -S seed of the curve's run order (1); -a no analysis at the end
#   (tests/e2e/streams_analyze.py OUTDIR does it).
#
# Per k, holding /tmp/rxbneck-heavy.lock (one k at a time): (A) a fresh
# rxbneckd, iperf3 -P n for the n its STREAMS advice names while it says
# EXPLORE (at most 7 transfers), its advice then; (B) the curve, -n passes
# over the curve's stream counts and the advised n*, in a shuffled order. Every run goes to runs.jsonl; a run
# during which foreign work took the receiver's or the sender's CPU is
# marked disturbed and repeated (tests/e2e/lib.sh, e2e_point's criteria).
# Output in OUTDIR (default tests/e2e/out/streams-<date>): runs.jsonl,
# advice-k*.json (the daemon's streams document after (A) and after (B)),
# status.jsonl, rxbneckd.log; then results.json, table.md and streams.png.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KS="0 2"
REPS=3 MAXN=32 SECS=5 SEED=1 ANALYZE=1 NLIST=
# The path: 25 ms each way in the harness's terms, all of it on the ACKs.
E_DELAY_MS=${E_DELAY_MS:-25}
BOTTLENECK=${BOTTLENECK:-200mbit}
WINDOW=${WINDOW:-128K}
. "$SRC/tests/e2e/lib.sh"
e2e_args "b:E_BUILD o:E_OUT k:KS n:REPS N:MAXN L:NLIST t:SECS S:SEED a=ANALYZE=0" "$@"
export E_BUILD E_DELAY_MS
# The advisor samples iperf3's port only (its cap needs it watched, which
# the harness does: watch_ports has it).
E_DAEMON_EXTRA="[streams]
ports = $E_TCP_PORT"
case $NLIST in
"") NLIST=$(for n in 1 2 3 4 6 8 12 16 24 32; do [ "$n" -le "$MAXN" ] && echo -n "$n "; done) ;;
all) NLIST=$(seq -s ' ' 1 "$MAXN") ;;
esac
for n in $NLIST; do
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le "$MAXN" ] ||
		{ echo "-L: '$n' is not a stream count in 1..$MAXN" >&2; exit 2; }
done
e2e_out_init streams

e2e_setup_pinned
[ "$E_DL_OK" = 1 ] || e2e_fail "the delay line is needed"
tc -n "$E_NS_S" qdisc add dev "$E_IF_S" root handle 1: htb default 10 &&
tc -n "$E_NS_S" class add dev "$E_IF_S" parent 1: classid 1:10 htb rate "$BOTTLENECK" \
	ceil "$BOTTLENECK" burst 64k cburst 64k quantum 60000 || e2e_fail "htb on $E_IF_S"
e2e_log "path: $((2 * E_DELAY_MS)) ms round trip, $BOTTLENECK bottleneck, -w $WINDOW"

e2e_py - "$E_OUT/meta.json" "$KS" "$REPS" "$MAXN" "$SECS" "$SEED" \
	"$BOTTLENECK" "$WINDOW" "$E_DELAY_MS" "$NLIST" <<PY
import json, platform, sys, time
from runrec import sh
a = sys.argv
json.dump({"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git_commit": sh("git rev-parse HEAD"),
           "git_dirty": bool(sh("git status --porcelain -- daemon solver ctl tests/e2e")),
           "kernel": platform.release(), "iperf3": sh("iperf3 --version | head -1"),
           "ks": [int(k) for k in a[2].split()], "reps": int(a[3]), "max_n": int(a[4]),
           "seconds": int(a[5]), "seed": int(a[6]), "bottleneck": a[7], "window": a[8],
           "rtt_ms": 2 * float(a[9]), "curve_n": [int(n) for n in a[10].split()]},
          open(a[1], "w"), indent=1)
PY

# One iperf3 run of @n streams; appends its record to runs.jsonl.
streams_run() {	# streams_run N REP PHASE
	local n=$1 rep=$2 phase=$3
	e2e_iperf3 "$E_ADDR_SD" -P "$n" -w "$WINDOW" -O 1 -t "$SECS"
	/usr/bin/python3 - "$E_TMP/tcp_c.json" "$E_OUT/runs.jsonl" "$E_K" "$n" "$rep" "$phase" \
		"$E_T0" "$E_T1" "$E_STEAL_PCT" <<'PY'
import json, sys
a = sys.argv
try:
    c = json.load(open(a[1]))
except (OSError, ValueError):
    c = {}
rec = {"k": int(a[3]), "n": int(a[4]), "rep": int(a[5]), "phase": a[6],
       "t_start_mono": float(a[7]), "t_end_mono": float(a[8]), "steal_pct": int(a[9])}
end = c.get("end") or {}
rec["ok"] = bool(end.get("sum_received"))
if rec["ok"]:
    rec["goodput_bps"] = end["sum_received"]["bits_per_second"]
    rec["retransmits"] = end.get("sum_sent", {}).get("retransmits")
else:
    rec["error"] = c.get("error") or "no iperf3 result"
print("k=%d %s n=%d rep %d: %s" % (rec["k"], rec["phase"], rec["n"], rec["rep"],
      "%.1f Mb/s, %s retransmits" % (rec["goodput_bps"] / 1e6, rec["retransmits"])
      if rec["ok"] else "FAILED " + rec["error"]), file=sys.stderr)
with open(a[2], "a") as f:
    f.write(json.dumps(rec) + "\n")
PY
}

# A run, repeated while disturbed.
streams_point() { e2e_repeat_disturbed streams_run "$@"; }	# streams_point N REP PHASE

# The daemon's advice for the sender's delayed address and iperf3's port.
advice() {
	e2e_ctl streams "$E_ADDR_SD:$E_TCP_PORT" --json
}

# (A): follow the advice while it explores; its final advice into @out.
explore() {	# explore OUT
	local frame n i
	for i in $(seq 1 7); do
		frame=$(advice | /usr/bin/python3 -c '
import json, sys
p = json.load(sys.stdin)["peers"]
f = p[0]["frame"] if p else None
if not f or not f["valid"]:
    print("explore 1")
else:
    print(("explore " if "explore" in f["flags"] else "done ") + str(f["streams"]))')
		n=${frame#* }
		[ "${frame%% *}" = done ] && break
		e2e_log "k=$E_K: the advisor asks for $n streams"
		streams_point "$n" "$i" explore
		sleep 1
	done
	advice > "$1"
	e2e_log "k=$E_K: advice after $((i - 1)) transfers: $frame"
}

exec 9> "$E_LOCK"
for k in $KS; do
	E_K=$k
	e2e_log "k=$k: waiting for the heavy-test lock"
	flock 9
	rm -rf "$E_TMP/state"	# a fresh advisor: no history
	e2e_daemon_start
	e2e_hogs "$k"
	cb=$(e2e_wait_cb "$k") || e2e_log "k=$k: #C on cpu$E_RECV_CPU did not settle at $k ($cb)"
	explore "$E_OUT/advice-k$k-explore.json"
	# The curve's counts and the advised n*, each pass in its own order.
	order=$(/usr/bin/python3 - "$E_OUT/advice-k$k-explore.json" "$NLIST" "$MAXN" <<PY
import json, random, sys
ns = sorted(set(int(n) for n in sys.argv[2].split()))
try:
    p = json.load(open(sys.argv[1]))["peers"]
    star = p[0]["frame"]["streams"] if p and p[0]["frame"]["valid"] else 0
except (OSError, ValueError, KeyError, IndexError):
    star = 0
if 1 <= star <= int(sys.argv[3]) and star not in ns:
    ns = sorted(ns + [star])
r = random.Random($SEED * 100 + $k)
print(" ".join(":".join(map(str, r.sample(ns, len(ns)))) for _ in range($REPS)))
PY
)
	rep=0
	for pass in $order; do
		rep=$((rep + 1))
		for n in ${pass//:/ }; do
			streams_point "$n" "$rep" curve
		done
	done
	advice > "$E_OUT/advice-k$k-all.json"
	e2e_hogs 0
	e2e_daemon_stop
	flock -u 9
done
cp "$E_TMP/d.conf" "$E_OUT/rxbneckd.conf"
[ "$ANALYZE" = 1 ] && /usr/bin/python3 "$SRC/tests/e2e/streams_analyze.py" "$E_OUT" "$E_BIN"
e2e_log "done: $E_OUT"
