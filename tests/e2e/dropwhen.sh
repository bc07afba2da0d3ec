#!/usr/bin/env bash
# When the receiver's socket drops packets, against its waits for the CPU
# (docs/model.md §2.2), under the e2e testbed's load: rxbneck-recv on CPU 1
# with K busy loops there, rxbneck-send on CPU 0 sending 200 MB transfers at
# RATE back to back over a veth pair for SECONDS, perf recording every
# CPU's scheduler switches and wake-ups, the veth's receive events and the
# receive-buffer drops (kfree_skb, SOCKET_RCVBUFF). Then dropwhen.py says,
# per drop episode, how long after the receiver fell asleep on its empty
# socket the drops began, how many packets had arrived by then, and
# whether the receiver was back on its CPU.
#
#   tests/e2e/dropwhen.sh [-b BUILD] [-o OUTDIR] [-q QUEUE] [-s SECONDS] -k K -r RATE
#
#   -k  busy loops on CPU 1 (1..8)       -r  the sending rate, e.g. 7G, 3000M
#   -q  the receiver's queue in packets (3640: a 4 MiB SO_RCVBUF on the
#       testbed, the daemon's queue_pkts)
#   -s  how long to record (7)           -b  the build directory (build)
#   -o  where perf's data and its listing go (a new directory under /tmp)
#
# Needs root, perf (Debian: linux-perf), stress-ng and 2 CPUs; holds
# /tmp/rxbneck-heavy.lock while it measures. The listing is about 50 MB.
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
die() { echo "dropwhen.sh: $*" >&2; exit 1; }
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
NS_S=rxbdw-s-$$ NS_R=rxbdw-r-$$ HOGS= RECV=
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
netpair_up "$NS_S" "$NS_R" dws$$ dwr$$ 10.251.9 || die "cannot make the veth pair"
stress-ng --cpu "$K" --taskset 1 --timeout $((SECS + 30))s --quiet &
HOGS=$!
ip netns exec "$NS_R" taskset -c 1 "$BUILD/rxbneck-recv" --port 9200 --listen 10.251.9.2 \
	--discard --cpu 1 --rcvbuf 4Mi --count 0 --quiet > /dev/null 2> "$OUT/recv.err" &
RECV=$!
sleep 1
RPID=$(pgrep -n -f "rxbneck-recv --port 9200 --listen 10.251.9.2") || die "no receiver: $(cat "$OUT/recv.err")"
# The drop reason's number on this kernel, from the tracepoint's own table.
FMT=/sys/kernel/tracing/events/skb/kfree_skb/format
[ -r "$FMT" ] || FMT=/sys/kernel/debug/tracing/events/skb/kfree_skb/format
RCVBUFF=$(sed -n 's/.*{ \([0-9]*\), "SOCKET_RCVBUFF" }.*/\1/p' "$FMT" 2> /dev/null || true)
[ -n "$RCVBUFF" ] || die "no SOCKET_RCVBUFF in the kfree_skb tracepoint's format"
perf record -k CLOCK_MONOTONIC -a -e sched:sched_switch -e sched:sched_wakeup \
	-e net:netif_receive_skb -e skb:kfree_skb --filter "reason == $RCVBUFF" \
	-o "$OUT/drop.data" -- sleep "$SECS" > /dev/null 2> "$OUT/perf.err" &
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
wait $PERF || die "perf record failed: $(tail -2 "$OUT/perf.err")"
flock -u 9
perf script -i "$OUT/drop.data" -F cpu,time,event,trace > "$OUT/script.txt" 2> /dev/null ||
	die "perf script failed"
echo "k = $K, $RATE_BPS b/s, $n transfers in ${SECS} s; data in $OUT"
python3 "$SRC/tests/e2e/dropwhen.py" "$OUT/script.txt" "$RPID" dwr$$ "$RATE_BPS" "$QUEUE"
