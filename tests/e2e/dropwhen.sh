#!/usr/bin/env bash
# When the receiver's socket drops packets, against its waits for the CPU
# (docs/model.md §2.2), under the e2e testbed's load: rxbneck-recv on CPU 1
# with K busy loops there, rxbneck-send on CPU 0 sending 200 MB transfers at
# RATE back to back over a veth pair for SECONDS, perf recording every
# CPU's scheduler switches and wake-ups, the veth's receive events and the
# receive-buffer drops (kfree_skb, SOCKET_RCVBUFF). Then dropwhen.py says,
# per drop episode, how long after the receiver fell asleep on its empty
# socket the drops began, how many packets had arrived by then, and
# whether the receiver was back on its CPU; how many episodes began after
# a preemption instead; its windows off the CPU, preempted and asleep; and,
# where it fell behind its backlog (preempted cycles with drops in a row),
# how fast it read then, per second of wall time and on its CPU.
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
. "$SRC/tests/e2e/loadrig.inc"
loadrig_args dropwhen.sh "$@"
# The drop reason's number on this kernel, from the tracepoint's own table
# (before anything is set up: without tracefs there is nothing to record).
FMT=/sys/kernel/tracing/events/skb/kfree_skb/format
[ -r "$FMT" ] || FMT=/sys/kernel/debug/tracing/events/skb/kfree_skb/format
[ -r "$FMT" ] || loadrig_die "cannot read the kfree_skb tracepoint's format under" \
	"/sys/kernel/tracing or /sys/kernel/debug/tracing: is tracefs mounted?" \
	"(mount -t tracefs nodev /sys/kernel/tracing)"
RCVBUFF=$(sed -n 's/.*{ \([0-9]*\), "SOCKET_RCVBUFF" }.*/\1/p' "$FMT" 2> /dev/null || true)
[ -n "$RCVBUFF" ] || loadrig_die "no SOCKET_RCVBUFF in $FMT"
loadrig_up dw
perf record -k CLOCK_MONOTONIC -a -e sched:sched_switch -e sched:sched_wakeup \
	-e net:netif_receive_skb -e skb:kfree_skb --filter "reason == $RCVBUFF" \
	-o "$OUT/drop.data" -- sleep "$SECS" > /dev/null 2> "$OUT/perf.err" &
PERF=$!
sleep 0.3
loadrig_transfers
wait $PERF || loadrig_die "perf record failed: $(tail -2 "$OUT/perf.err")"
flock -u 9
perf script -i "$OUT/drop.data" -F cpu,time,event,trace > "$OUT/script.txt" 2> /dev/null ||
	loadrig_die "perf script failed"
echo "k = $K, $RATE_BPS b/s, $NXFERS transfers in ${SECS} s; data in $OUT"
python3 "$SRC/tests/e2e/dropwhen.py" "$OUT/script.txt" "$RPID" "$RIF" "$RATE_BPS" "$QUEUE"
