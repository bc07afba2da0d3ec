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
BUILD=$SRC/build K= RATE= QUEUE=3640 SECS=7 OUT=
usage() { sed -n '2,/^set -e/p' "$0" | sed -n 's/^# \{0,1\}//p' >&2; exit 2; }
while getopts "b:o:q:s:k:r:h" o; do
	case $o in
	b) BUILD=$(cd "$OPTARG" && pwd) ;;
	o) OUT=$OPTARG ;;
	q) QUEUE=$OPTARG ;;
	s) SECS=$OPTARG ;;
	k) K=$OPTARG ;;
	r) RATE=$OPTARG ;;
	*) usage ;;
	esac
done
die() { echo "wakewaits.sh: $*" >&2; exit 1; }
[[ $K =~ ^[1-8]$ ]] || die "-k: busy loops 1..8, not '$K'"
[[ $SECS =~ ^[0-9]+$ && $SECS -ge 2 && $SECS -le 60 ]] || die "-s: 2..60 seconds, not '$SECS'"
[[ $QUEUE =~ ^[0-9]+$ && $QUEUE -gt 0 ]] || die "-q: packets, not '$QUEUE'"
case $RATE in
*[0-9]G) RATE_BPS=$(( ${RATE%G} * 1000000000 )) ;;
*[0-9]M) RATE_BPS=$(( ${RATE%M} * 1000000 )) ;;
*[0-9]) RATE_BPS=$RATE ;;
*) die "-r: bits/s, a whole number with G or M or none, not '$RATE'" ;;
esac
[[ $RATE_BPS =~ ^[0-9]+$ && $RATE_BPS -gt 0 ]] || die "-r: '$RATE' is not a rate"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, perf sched)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs"
for b in perf stress-ng ip; do command -v $b > /dev/null || die "no $b (apt install linux-perf stress-ng iproute2)"; done
for b in rxbneck-recv rxbneck-send; do [ -x "$BUILD/$b" ] || die "build first: $BUILD/$b"; done
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/wakewaits.XXXXXX)
mkdir -p "$OUT" || die "cannot make $OUT"

. "$SRC/tests/integration/netpair.inc"
NS_S=rxbww-s-$$ NS_R=rxbww-r-$$ HOGS= RECV=
cleanup() {
	set +e
	[ -n "$HOGS" ] && kill "$HOGS" 2>/dev/null
	[ -n "$RECV" ] && kill "$RECV" 2>/dev/null
	wait 2>/dev/null
	netpair_down "$NS_S" "$NS_R"
}
trap cleanup EXIT
exec 9> /tmp/rxbneck-heavy.lock
flock 9
netpair_up "$NS_S" "$NS_R" wws$$ wwr$$ 10.251.9 || die "cannot make the veth pair"
stress-ng --cpu "$K" --taskset 1 --timeout $((SECS + 30))s --quiet &
HOGS=$!
ip netns exec "$NS_R" taskset -c 1 "$BUILD/rxbneck-recv" --port 9200 --listen 10.251.9.2 \
	--discard --cpu 1 --rcvbuf 4Mi --count 0 --quiet > /dev/null 2> "$OUT/recv.err" &
RECV=$!
sleep 1
RPID=$(pgrep -n -f "rxbneck-recv --port 9200 --listen 10.251.9.2") || die "no receiver: $(cat "$OUT/recv.err")"
perf sched record -C 1 -o "$OUT/sched.data" -- sleep "$SECS" > /dev/null 2> "$OUT/perf.err" &
PERF=$!
sleep 0.3
end=$((SECONDS + SECS - 1))
n=0
while [ $SECONDS -lt $end ]; do
	ip netns exec "$NS_S" taskset -c 0 "$BUILD/rxbneck-send" --to 10.251.9.2 --port 9200 \
		--size 200M --rate "$RATE_BPS" --quiet > /dev/null 2> "$OUT/send.err" ||
		die "transfer failed: $(tail -2 "$OUT/send.err")"
	n=$((n + 1))
done
wait $PERF || die "perf sched record failed: $(tail -2 "$OUT/perf.err")"
flock -u 9
perf sched timehist -i "$OUT/sched.data" -p "$RPID" --state > "$OUT/timehist.txt" 2> /dev/null ||
	die "perf sched timehist failed"
X_MS=$(python3 -c "import sys; print('%.4f' % (int(sys.argv[1]) * 1472 * 8 / int(sys.argv[2]) * 1e3))" \
	"$QUEUE" "$RATE_BPS")
echo "k = $K, $RATE_BPS b/s, $n transfers in ${SECS} s; K/λ = $X_MS ms ($QUEUE packets); data in $OUT"
python3 "$SRC/tests/e2e/wakewaits.py" "$OUT/timehist.txt" "$X_MS"
