#!/usr/bin/env bash
# Sweep fixed RBUDP sending rates over a veth pair between two namespaces
# and print achieved rate, loss, rounds and transfer time per run.
#
#   tools/rbudp/sweep.sh [-b BUILD] [-s SIZE] [-n REPEATS] [-o OUT.jsonl]
#                        [-R "RECV ARGS"] [-S "SEND ARGS"] [-U] [-H HOGS] RATE...
#
# -H HOGS runs that many CPU-bound busy loops (stress-ng --cpu) pinned to
# the receiver's CPU for the whole sweep (the CPU-bound load of Banerjee et
# al.'s experiment, docs/references.md).
# -U turns UDP segmentation off on the sender's veth, so that with
# rxbneck-send --gso the GSO packets are cut at the sender's device (as a
# NIC with USO would) instead of travelling whole to the receiving socket.
#
# The receiver runs pinned to CPU 1 (-R can change that: it is passed after
# the defaults), the sender to CPU 0. Needs root. Holds
# /tmp/rxbneck-heavy.lock while it measures. Warns when other processes
# use the CPUs (measurements on a busy machine mean little).
set -u
build=build size=200M reps=1 out=/dev/null rargs="" sargs="" nouso=0 hogs=0
while getopts "b:s:n:o:R:S:UH:" o; do
	case $o in
	U) nouso=1 ;;
	H) hogs=$OPTARG ;;
	b) build=$OPTARG ;; s) size=$OPTARG ;; n) reps=$OPTARG ;; o) out=$OPTARG ;;
	R) rargs=$OPTARG ;; S) sargs=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD] [-s SIZE] [-n REPEATS] [-o OUT] [-R ARGS] [-S ARGS] RATE..." >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "$0: give at least one rate" >&2; exit 2; }
RXB_BUILD=$(cd "$build" && pwd)
export RXB_BUILD
. "$(dirname "$0")/testlib.sh"

busy() {	# CPU use by everything else over 1 s, in percent of the machine
	local a b
	read -r _ a1 a2 a3 a4 a5 a6 a7 _ < /proc/stat
	sleep 1
	read -r _ b1 b2 b3 b4 b5 b6 b7 _ < /proc/stat
	a=$((a1 + a2 + a3 + a5 + a6 + a7)); b=$((b1 + b2 + b3 + b5 + b6 + b7))
	echo $(( 100 * (b - a) / (b - a + b4 - a4) ))
}

exec 9> /tmp/rxbneck-heavy.lock
flock 9
rbudp_setup sweep
if [ $nouso -eq 1 ]; then
	ip netns exec "$RB_NS_S" ethtool -K "$RB_IF_S" tx-udp-segmentation off > /dev/null ||
		fail "cannot turn off tx-udp-segmentation"
fi
load=$(busy)
[ "$load" -gt 5 ] && echo "WARNING: the machine is ${load}% busy with other work" >&2
if [ "$hogs" -gt 0 ]; then
	command -v stress-ng > /dev/null || fail "-H needs stress-ng"
	rbudp_bg hpid stress-ng --quiet --cpu "$hogs" --cpu-method loop --taskset 1
	sleep 0.5
	echo "$hogs CPU hog(s) on CPU 1"
fi
# Host interference: steal time, the share of the run the hypervisor gave
# the vCPUs to someone else (/proc/stat), printed per run.
stat_cpu() { read -r _ u n sy id io irq sirq st _ < /proc/stat; echo "$((u + n + sy + id + io + irq + sirq + st)) $st"; }
printf "%-8s %-4s %10s %10s %9s %7s %9s %8s %6s\n" rate rep achieved rx_rate lost1 rounds T_s goodput steal
for rate in "$@"; do
	for rep in $(seq "$reps"); do
		read -r tot0 st0 <<< "$(stat_cpu)"
		rbudp_bg rpid ip netns exec "$RB_NS_R" taskset -c 1 "$RB_BIN/rxbneck-recv" \
			--port 9000 --discard --quiet --json $rargs > "$RB_TMP/r.json"
		sleep 0.2
		ip netns exec "$RB_NS_S" taskset -c 0 "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" \
			--port 9000 --size "$size" --rate "$rate" --quiet --json $sargs > "$RB_TMP/s.json"
		wait "$rpid"
		read -r tot1 st1 <<< "$(stat_cpu)"
		steal=$(( 100 * (st1 - st0) / (tot1 - tot0 + 1) ))
		python3 - "$RB_TMP/s.json" "$RB_TMP/r.json" "$rate" "$rep" "$load" "$out" "$steal" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).readline())
r = json.loads(open(sys.argv[2]).readline())
if not s["ok"]:
    print("%-8s %-4s FAILED: %s" % (sys.argv[3], sys.argv[4], s["error"]))
    sys.exit(0)
r1 = s["per_round"][0]
print("%-8s %-4s %10.3f %10.3f %8.2f%% %7d %9.3f %8.3f %5s%%" % (
    sys.argv[3], sys.argv[4], s["achieved_rate_bps"] / 1e9,
    r["per_round"][0]["rx_rate_bps"] / 1e9, 100.0 * r1["pkts_lost"] / r1["pkts_sent"],
    s["rounds"], s["transfer_time_s"], s["goodput_bps"] / 1e9, sys.argv[7]))
with open(sys.argv[6], "a") as f:
    f.write(json.dumps({"rate": sys.argv[3], "rep": int(sys.argv[4]), "busy_pct": int(sys.argv[5]), "steal_pct": int(sys.argv[7]),
                        "send": s, "recv": r}) + "\n")
PY
	done
done
