#!/usr/bin/env bash
# Loss episodes (bpf/sockq.h) against the packets' own timing: in a private
# network namespace, a UDP socket that never reads, with a small SO_RCVBUF,
# is sent a burst that fills its queue and then groups of packets over
# loopback. Once the queue is full every packet is dropped inside its
# sendto() (loopback delivers in the sender's softirq), so the drops happen
# when the packets are sent: the sender's clock says where the gaps are.
# Inside a group the packets go in sub-bursts 1 ms apart, 7 ms in one
# group (one episode each, unless the host stalls the sender for 10 ms:
# then the timestamps say so); the groups are 60 ms apart, 14 ms once (an
# episode each). A gap threshold outside (7, 14) ms fails. Checked:
#  - drop_episodes summed over the epochs = the runs of sends whose gaps
#    are shorter than SOCKQ_EPISODE_GAP_NS (10 ms), counted from the
#    sender's timestamps;
#  - episodes_ended holds exactly the ended episodes' sizes, bucketed:
#    every episode's but the last (an episode ends when the next begins),
#    the episodes being those runs of sends (the fill, and each group
#    unless the sender stalled inside it) and each size the namespace's
#    UdpRcvbufErrors delta across its send runs;
#  - drops_rcvbuf summed = UdpRcvbufErrors delta;
#  - all of it with the probes attached as tp_btf and as raw_tp.
# A gap of 9 to 10 ms (a stalled sender) makes the count ambiguous: the
# run is repeated once, then skipped. Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need measure_drop_episodes 0 "sockq"

ns=rxbt-epis$$ port=$((30000 + $$ % 30000))
tmp=$(mktemp -d /tmp/rxbt-episodes.XXXXXX)
mp=
cleanup() {
	[ -n "$mp" ] && kill $mp 2>/dev/null
	wait 2>/dev/null
	ip netns del $ns 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $ns || { echo "measure_drop_episodes: ip netns add $ns failed" >&2; exit 1; }
ip -n $ns link set lo up || exit 1

cat > "$tmp/tx.py" <<'PY'
# Fill the queue, then send groups of sub-bursts; write the gaps between
# send runs and the rcvbuf drops across each run and each group.
import json, socket, sys, time
port, out = int(sys.argv[1]), sys.argv[2]
GROUPS = [300, 1000, 3000, 600]		# packets per group
BEFORE_MS = [60, 60, 14, 60]		# the gap before each group
SUB = 100				# packets per sub-burst
SUB_GAP_MS = [1, 1, 7, 1]		# the gaps inside each group
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
rx.bind(("127.0.0.1", port))
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
buf = b"x" * 200

def rcvbuf_errors():
    with open("/proc/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])

def send(n):
    """One send run: its first and last send times, the drops across it."""
    e0 = rcvbuf_errors()
    t0 = time.monotonic_ns()
    for _ in range(n):
        tx.sendto(buf, ("127.0.0.1", port))
    t1 = time.monotonic_ns()
    return t0, t1, rcvbuf_errors() - e0

runs, subs = [], []
subs.append(send(2000))			# far more than 16 KiB holds
runs.append({"what": "fill", "sent": 2000, "drops": subs[-1][2]})
def wait_ms(ms):				# busy: a sleep can overshoot
    end = subs[-1][1] + int(ms * 1e6)
    while time.monotonic_ns() < end:
        pass

for g, before, sub_gap in zip(GROUPS, BEFORE_MS, SUB_GAP_MS):
    wait_ms(before)
    e0 = rcvbuf_errors()
    for i in range(0, g, SUB):
        if i:
            wait_ms(sub_gap)
        subs.append(send(min(SUB, g - i)))
    runs.append({"what": "group", "sent": g, "drops": rcvbuf_errors() - e0})
gaps = [(b[0] - a[1]) / 1e6 for a, b in zip(subs, subs[1:])]
json.dump({"runs": runs, "gaps_ms": gaps, "sub_drops": [s[2] for s in subs],
           "end_ns": time.monotonic_ns()}, open(out, "w"))
PY

check() {
	python3 - "$tmp" "$port" "$1" <<'PY'
import json, sys
tmp, port, meas = sys.argv[1], int(sys.argv[2]), sys.argv[3]
GAP_MS = 10.0
tx = json.load(open(f"{tmp}/tx.json"))
epochs = [json.loads(l) for l in open(meas)]
gaps = tx["gaps_ms"]
# The drops of a send run lie between its timestamps, so the gap between
# two runs' drops is at least the measured one, and more only by the time
# between a drop and the clock read next to it (microseconds, unless the
# sender was preempted right there).
if any(GAP_MS - 1 <= g < GAP_MS for g in gaps):
    print("ambiguous: a gap of %.2f ms between send runs" %
          max(g for g in gaps if GAP_MS - 1 <= g < GAP_MS))
    sys.exit(2)

def bucket(n):
    b = n.bit_length() - 1
    return min(4 * b + (((n << 2) >> b) & 3), 127)

def bucket_lo(i):
    return (1 << (i // 4)) * (1 + (i % 4) / 4)

# The episodes by the sender's clock: runs of sends split at gaps of
# 10 ms or more (one per group, unless the host stalled the sender inside
# one), each as big as the drops across its runs.
sizes = [r["drops"] for r in tx["runs"]]
episodes = [tx["sub_drops"][0]]
for g, d in zip(gaps, tx["sub_drops"][1:]):
    if g >= GAP_MS:
        episodes.append(d)
    else:
        episodes[-1] += d
expect_episodes = len(episodes)
ended = {}
for s in episodes[:-1]:
    ended[bucket(s)] = ended.get(bucket(s), 0) + 1
got_episodes, got_ended, drops = 0, {}, 0
for d in epochs:
    s = next(x for x in d["sockets"] if x["port"] == port)
    got_episodes += s["drop_episodes"]
    drops += s["drops_rcvbuf"]
    if s["episodes_ended_cut"]:
        print(f"FAIL epoch {d['seq']}: episodes_ended cut")
        sys.exit(1)
    for b in s["episodes_ended"]:
        i = next(i for i in range(128) if bucket_lo(i) == b["pkts_from"])
        got_ended[i] = got_ended.get(i, 0) + b["count"]
print(f"runs {tx['runs']}")
print("gaps between send runs: %.2f..%.2f ms inside groups, %s ms between" % (
      min(gaps), max(g for g in gaps if g < GAP_MS),
      " ".join("%.2f" % g for g in sorted(g for g in gaps if g >= GAP_MS))))
print(f"episodes: {got_episodes} counted, {expect_episodes} expected; rcvbuf drops "
      f"{drops}, UdpRcvbufErrors {sum(sizes)}")
print("ended episodes by bucket start: counted %s, expected %s" %
      ({bucket_lo(i): n for i, n in sorted(got_ended.items())},
       {bucket_lo(i): n for i, n in sorted(ended.items())}))
ok = True
if got_episodes != expect_episodes:
    print("FAIL: drop_episodes != runs of sends with gaps < 10 ms")
    ok = False
if got_ended != ended:
    print("FAIL: episodes_ended != the sizes of all episodes but the last")
    ok = False
if drops != sum(sizes):
    print("FAIL: drops_rcvbuf != UdpRcvbufErrors")
    ok = False
if not all(r["drops"] == r["sent"] for r in tx["runs"][1:]):
    print("FAIL: a group was not dropped whole: the queue was not full")
    ok = False
sys.exit(0 if ok else 1)
PY
}

# Two collectors at once, one forced to each attach mode: the raw_tp
# fallback must count the same episodes.
for attempt in 1 2; do
	rm -f "$tmp"/meas-*.json "$tmp/tx.json"
	mps=()
	for mode in tp_btf raw_tp; do
		"$daemon" --measure-only --epochs 4 --interval-ms 500 --attach $mode \
			--watch-port $port --json > "$tmp/meas-$mode.json" &
		mps+=($!)
	done
	mp="${mps[*]}"
	# Their first epochs have ended: the probes are attached.
	for mode in tp_btf raw_tp; do
		for _ in $(seq 100); do [ -s "$tmp/meas-$mode.json" ] && break; sleep 0.1; done
		[ -s "$tmp/meas-$mode.json" ] ||
			{ echo "measure_drop_episodes: no epoch from rxbneckd --attach $mode" >&2; exit 1; }
	done
	ip netns exec $ns python3 "$tmp/tx.py" $port "$tmp/tx.json" ||
		{ echo "measure_drop_episodes: sender failed" >&2; exit 1; }
	for p in "${mps[@]}"; do
		wait "$p" || { echo "measure_drop_episodes: rxbneckd failed" >&2; exit 1; }
	done
	mp=
	rc=0
	for mode in tp_btf raw_tp; do
		echo "--- $mode"
		check "$tmp/meas-$mode.json"
		r=$?
		[ $r -eq 1 ] && rc=1
		[ $r -eq 2 ] && [ $rc -eq 0 ] && rc=2
	done
	[ $rc -eq 2 ] || exit $rc
done
echo "measure_drop_episodes: host too stalled for the 10 ms gap, twice" >&2
exit 77
