#!/usr/bin/env bash
# The receiver's waits for its CPU at full resolution (perf sched), under
# the e2e testbed's load: rxbneck-recv on CPU 1 with K busy loops there,
# rxbneck-send on CPU 0 sending 200 MB transfers at RATE back to back over a
# veth pair for SECONDS, perf sched recording CPU 1. Then wakewaits.py
# compares the waits with what their log2 slots say when spread
# log-uniformly, at x = K/λ: the time the receiver's empty queue (QUEUE
# packets of 1472 bytes) takes to fill at RATE (docs/fidelity.md §6.3).
#
#   tests/e2e/wakewaits.sh [-b BUILD] [-o OUTDIR] [-q QUEUE] [-s SECONDS] -k K -r RATE
#
#   -k  busy loops on CPU 1 (1..8)       -r  the sending rate, e.g. 7G, 3000M
#   -q  the receiver's queue in packets (3640: a 4 MiB SO_RCVBUF on the
#       testbed, the daemon's queue_pkts)
#   -s  how long to record (7)           -b  the build directory (build)
#   -o  where perf's data and the timehist go (a new directory under /tmp)
#
# Needs root, perf (Debian: linux-perf), stress-ng and 2 CPUs; holds
# /tmp/rxbneck-heavy.lock while it measures.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/e2e/loadrig.inc"
loadrig_args wakewaits.sh "$@"
loadrig_up ww
perf sched record -C 1 -o "$OUT/sched.data" -- sleep "$SECS" > /dev/null 2> "$OUT/perf.err" &
PERF=$!
sleep 0.3
loadrig_transfers
wait $PERF || loadrig_die "perf sched record failed: $(tail -2 "$OUT/perf.err")"
flock -u 9
perf sched timehist -i "$OUT/sched.data" -p "$RPID" --state > "$OUT/timehist.txt" 2> /dev/null ||
	loadrig_die "perf sched timehist failed"
X_MS=$(python3 -c "import sys; print('%.4f' % (int(sys.argv[1]) * 1472 * 8 / int(sys.argv[2]) * 1e3))" \
	"$QUEUE" "$RATE_BPS")
echo "k = $K, $RATE_BPS b/s, $NXFERS transfers in ${SECS} s; K/λ = $X_MS ms ($QUEUE packets); data in $OUT"
python3 "$SRC/tests/e2e/wakewaits.py" "$OUT/timehist.txt" "$X_MS"
