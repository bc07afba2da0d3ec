#!/usr/bin/env bash
# rxbneck-shape holds an unmodified blaster to the daemon's advice:
# `iperf3 -u -b 10G` from the sender's namespace (the e2e testbed,
# tests/e2e/lib.sh: veth into the receiving host, where rxbneckd runs) to a
# UDP receiver pinned to the receiving CPU with 2 CPU hogs on it.
#
# The receiver is rxbneck-udpsink (rxbneck-recv's receive loop; it counts
# what arrived and what its socket dropped) with the system's default
# receive buffer, as iperf3's server has. One iperf3 thread sends ~0.8 Gb/s
# here, and the advice for that receiver beside 2 hogs is higher (0.97-1.05
# Gb/s: its loss is the hogs' windows, nearly flat in the rate): the losses
# and the tracking cannot be judged, and after the checks that can (what
# came is not above the advice nor the advice below the blasted drain, no
# drops in the class) the test skips. WORK_NS=6000 RCVBUF=4194304 make a
# receiver slower than iperf3 (6 us of work per datagram, a buffer that
# holds the windows) where all is judged; not the default, because how
# closely HTB holds iperf3 to the advice there depends on the sender's
# CPU (below 0.90 x in one run of 23 here; docs/shape.md §7). What the
# receiver drains while blasted, measured by the sink, is then a floor
# under its capacity (the softirq of the dropped datagrams runs on its CPU
# too, RPS).
# iperf3's client needs iperf3's server for its control connection and its
# UDP handshake: the server runs on port CTL, and an nftables rule in the
# sender's namespace sends iperf3's data datagrams (longer than 64 bytes)
# to the sink's port instead, before the qdisc. rxbneck-shape tells the
# daemon RTT 200 ms (the e2e testbed's path) so that the advice is for a
# path where losses cost a round trip.
#
# Two phases of 6 s, each starting on a quiet machine (and repeated when
# the hypervisor stole time):
#   blast    no shaping: the receiver's loss is the blast's;
#   shaped   rxbneck-shape on the sender's veth.
# Checked (the receiver's 0.5 s intervals after the first second, the
# advice in force over each, time-weighted from rxbneck-shape's status
# every 0.1 s):
#  - the advice at least 0.8 x what the receiver drained in the blast
#    (the ratio printed; above it, the loss checks below judge it);
#  - what came (iperf3's sequence numbers at the receiver: every datagram
#    that left the sender, dropped or not) is no more than the advice
#    (within 5 %), and, in the intervals where HTB held iperf3 back (at
#    least one overlimit per two packets: the class, not the sender's CPU,
#    was the constraint), between 0.90 and 1.05 x it (median): HTB's
#    dequeue runs on the sender's CPU beside iperf3, and a late one loses
#    its time (docs/shape.md §7; 0.90-0.985 x advices of 0.28-0.34 Gb/s
#    in 23 runs with WORK_NS=6000);
#  - the shaped loss below the blast's, and closer to the model's
#    prediction at the advised rate (RATE's loss) than the blast's is,
#    where the advice is below 0.9 x iperf3's own rate (else not judged);
#  - the class queued rather than dropped (no drops), its peak reported;
#  - after SIGTERM the device has its default root qdisc again.
# One iperf3 thread must be able to send faster than the advice; when it
# cannot, the shaped run is repeated, and after three the test says so and
# skips.
# The receive softirq runs on the receiver's CPU (RPS, E_RPS=1 of the e2e
# testbed): the sender's CPU then carries the sender alone.
# About a minute on a quiet machine. Exit 0 pass, 77 skip, 1 fail.
set -u
SRC=${RXB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
E_SRC=$SRC
E_BUILD=${RXB_BUILD:-$SRC/build}
E_OUT=$(mktemp -d /tmp/rxbt-shape-udp.XXXXXX) || exit 1
E_DELAY_MS=0
E_RPS=${E_RPS:-1}
E_QUIET_WAIT=${E_QUIET_WAIT:-30}
export E_BUILD E_OUT
. "$SRC/tests/e2e/lib.sh"
command -v nft > /dev/null || e2e_skip "nft (nftables) not installed"
e2e_setup
[ -x "$E_BIN/rxbneck-shape" ] && [ -x "$E_BIN/rxbneck-udpsink" ] || e2e_skip "build rxbneck-shape first"
taskset -pc "$E_SEND_CPU" $$ > /dev/null || e2e_fail "taskset"
E_K=2
WORK_NS=${WORK_NS:-0}
RCVBUF=${RCVBUF:-0}
SINK_OPTS=()
[ "$WORK_NS" = 0 ] || SINK_OPTS+=(--work-ns "$WORK_NS")
[ "$RCVBUF" = 0 ] || SINK_OPTS+=(--rcvbuf "$RCVBUF")
CTL=$((E_TCP_PORT + 1))
SHAPE_PID= SINK_PID= IPERF_S=
shape_test_cleanup() {
	local rc=$? p
	for p in $SHAPE_PID $SINK_PID $IPERF_S; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	e2e_cleanup
	if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then rm -rf "$E_OUT"; else echo "outputs kept in $E_OUT" >&2; fi
}
trap shape_test_cleanup EXIT
e2e_daemon_start

ip netns exec "$E_NS_S" nft -f - <<EOF || e2e_fail "nftables rule"
table ip rxbsh {
	chain out {
		type filter hook output priority raw;
		ip daddr $E_ADDR_R udp dport $CTL udp length > 64 udp dport set $E_PORT notrack
	}
}
EOF
taskset -c "$E_SEND_CPU" iperf3 -s -p "$CTL" -B "$E_ADDR_R" > "$E_TMP/iperf3-s.log" 2>&1 &
IPERF_S=$!
e2e_hogs 2
c=$(e2e_wait_cb 2) || e2e_log "CPU $E_RECV_CPU did not settle at #C = 2 (last $c)"

# phase NAME: sink, iperf3 for 6 s, sink stopped; a runs.jsonl record for
# the disturbance check. Sink intervals in $E_OUT/NAME.sink.jsonl.
phase() {
	local name=$1 t0 t1 tot0 st0 tot1 st1
	: > "$E_TMP/sink.err"
	"$E_BIN/rxbneck-udpsink" --port "$E_PORT" --listen "$E_ADDR_R" --cpu "$E_RECV_CPU" \
		--interval-ms 500 --iperf3 "${SINK_OPTS[@]}" > "$E_OUT/$name.sink.jsonl" 2> "$E_TMP/sink.err" &
	SINK_PID=$!
	for _ in $(seq 50); do grep -q ready "$E_TMP/sink.err" && break; sleep 0.02; done
	read -r tot0 st0 <<< "$(e2e_stat_cpu)"
	t0=$(/usr/bin/python3 -c 'import time; print(time.monotonic())')
	ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" iperf3 -u -b 10G -c "$E_ADDR_R" \
		-p "$CTL" -t 6 > "$E_OUT/$name.iperf3.txt" 2>&1 || e2e_fail "iperf3: $(tail -2 "$E_OUT/$name.iperf3.txt")"
	t1=$(/usr/bin/python3 -c 'import time; print(time.monotonic())')
	read -r tot1 st1 <<< "$(e2e_stat_cpu)"
	sleep 0.3
	kill -TERM "$SINK_PID"; wait "$SINK_PID"; SINK_PID=
	echo "{\"k\": 2, \"mode\": \"$name\", \"tag\": \"$name\", \"t_start_mono\": $t0, \"t_end_mono\": $t1, \"steal_pct\": $(( 100 * (st1 - st0) / (tot1 - tot0 + 1) ))}" \
		>> "$E_OUT/runs.jsonl"
}
# A phase that starts on a quiet machine (two epochs with nothing
# CPU-bound on the sender's CPU and only the hogs on the receiver's), on
# which nothing but the sender was CPU-bound on the sender's CPU and the
# hypervisor stole little (the e2e harness's criteria; its check of the
# receiver's CPU does not apply: a blasted receiver counts there itself).
# Up to 3 tries; returns 1 if none was clean.
quiet_phase() {
	local steal try
	for try in 1 2 3; do
		if ! e2e_quiet; then
			e2e_log "$1: the machine did not quieten within $E_QUIET_WAIT s (most on" \
				"cpu$E_SEND_CPU over 1 s: $(/usr/bin/python3 \
				"$E_SRC/tests/integration/cpu_threads.py" "$E_SEND_CPU" 1 --top 3))"
			continue
		fi
		phase "$@"
		# The e2e harness's checks, but for #C on the receiver's CPU, which
		# a blasted receiver raises by itself.
		why=$(e2e_disturbed | tr ';' '\n' | grep -e steal -e "sender's" | tr '\n' ';')
		[ -z "$why" ] && return 0
		e2e_mark_last "$why"
		e2e_log "$1: disturbed ($why)$([ $try -lt 3 ] && echo ", again")"
	done
	return 1
}

quiet_phase blast || e2e_skip "the machine was too busy for a clean blast"
DEV_ROOT=$(ip netns exec "$E_NS_S" tc qdisc show dev "$E_IF_S" root | awk 'NR == 1 {print $2, $3}')
ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" "$E_BIN/rxbneck-shape" \
	--receiver "$E_ADDR_R:$E_CPORT" --flow-port "$E_PORT" --dev "$E_IF_S" --rtt 200 \
	--status-interval 0.1 --json --state-dir "$E_TMP/shape-state" \
	> "$E_OUT/shape.jsonl" 2> "$E_OUT/shape.err" &
SHAPE_PID=$!
for _ in $(seq 100); do
	grep -q '"mode":"advice"' "$E_OUT/shape.jsonl" 2>/dev/null && break
	kill -0 "$SHAPE_PID" 2>/dev/null || e2e_fail "rxbneck-shape exited: $(tail -3 "$E_OUT/shape.err")"
	sleep 0.1
done
grep -q '"mode":"advice"' "$E_OUT/shape.jsonl" || e2e_fail "no advice from rxbneckd within 10 s"
# The analysis of one shaped run (and the blast): prints the numbers;
# exit 0 pass, 1 fail, 3 the advice within 10 % of iperf3's own rate, or
# HTB held iperf3 back in fewer than 3 intervals (iperf3 could not send
# faster than the advice): the losses or the tracking cannot be judged;
# the shaped run is repeated.
judge() {
	/usr/bin/python3 "$E_OUT/judge.py" "$E_OUT"
}
cat > "$E_OUT/judge.py" <<'PY'
import json, sys
d = sys.argv[1]
runs = [json.loads(l) for l in open(d + "/runs.jsonl")]
blast = [r for r in runs if r["mode"] == "blast" and not r.get("disturbed")][-1]
shaped = [r for r in runs if r["mode"] == "shaped" and not r.get("disturbed")][-1]
def sink(name):
    rows = [json.loads(l) for l in open("%s/%s.sink.jsonl" % (d, name))]
    final = rows[-1]     # the last attempt's: its rows follow its start
    return final, [r for r in rows if not r["final"] and r["t_start"] >= final["t_start"]]
st = [json.loads(l) for l in open(d + "/shape.jsonl") if l.startswith("{")]
st = [(s["mono_s"], s["receivers"][0]) for s in st if s["event"] == "status"]
def weighted(t0, t1, value):
    acc = dur = 0.0
    for i, (t, r) in enumerate(st):
        nxt = st[i + 1][0] if i + 1 < len(st) else t1
        a, b = max(t, t0), min(nxt, t1)
        v = value(r)
        if b > a and v is not None and r["in_force"]["mode"] == "advice":
            acc += v * (b - a)
            dur += b - a
    return acc / dur if dur else None
def rate(t0, t1):
    return weighted(t0, t1, lambda r: r["in_force"]["rate_bps"])
def held(t0, t1):
    """HTB's overlimits per packet sent in [t0, t1]: near 1 when the class
    holds every packet back (its sender is faster), near 0 when it passes
    what comes."""
    s = [r["class_stats"] for t, r in st if t0 <= t <= t1 and r["class_stats"]]
    pk = s[-1]["packets"] - s[0]["packets"] if len(s) > 1 else 0
    return (s[-1]["overlimits"] - s[0]["overlimits"]) / pk if pk else 0.0
fb, _ = sink("blast")
fs, ivs = sink("shaped")
ivs = [r for r in ivs if r["t_start"] >= fs["t_start"] + 1.0]
assert len(ivs) >= 6, "too few receiver intervals in the shaped run: %d" % len(ivs)
t0, t1 = ivs[0]["t_start"], ivs[-1]["t_end"]
adv = rate(t0, t1)
pred = weighted(t0, t1, lambda r: (r["advice"] or {}).get("loss"))
def mean_over(rows, key):
    """The receiver's intervals' @key, weighted by their lengths."""
    return sum(r[key] * (r["t_end"] - r["t_start"]) for r in rows) / sum(
        r["t_end"] - r["t_start"] for r in rows)
arrived = mean_over(ivs, "sent_bps")
per = [(r["sent_bps"] / rate(r["t_start"], r["t_end"]), held(r["t_start"], r["t_end"]))
       for r in ivs]
_, bivs = sink("blast")
bivs = [r for r in bivs if r["t_start"] >= fb["t_start"] + 1.0]
own = mean_over(bivs, "sent_bps")
drained = mean_over(bivs, "received_bps")
lb, ls = fb["loss"], fs["loss"]
cs = st[-1][1]["class_stats"]
print("blast: iperf3's datagrams came at %.3f Gb/s, loss %.3f; the receiver drained %.3f Gb/s"
      % (own / 1e9, lb, drained / 1e9))
print("shaped: advice %.3f Gb/s (the model's loss there %.4f); came at %.3f Gb/s = %.3f x the "
      "advice; loss %.4f" % (adv / 1e9, pred, arrived / 1e9, arrived / adv, ls))
print("shaped, per 0.5 s: came / advice (HTB overlimits per packet): " +
      " ".join("%.3f (%.2f)" % (x, b) for x, b in per))
print("class: %d packets, %d drops, queue peak %d bytes (%d packets)" % (
    cs["packets"], cs["drops"], cs["peak_backlog_bytes"], cs["peak_qlen"]))
print("the advice is %.3f x what the receiver drained in the blast" % (adv / drained))
assert adv >= 0.8 * drained, "the advice is below what the receiver drained while blasted"
assert arrived <= 1.05 * adv, "more than the advice arrived"
assert cs["drops"] == 0, "the class dropped packets"
# The losses compare only where the advice is well below what iperf3 sends
# unshaped: within 10 % of it the shaped run is the blast again (seen:
# advice 1.084 Gb/s, iperf3's own 1.085), and its loss says nothing of
# the shaping. Not judged then, as without headroom below.
if adv > 0.9 * own:
    print("the advice %.3f Gb/s is within 10 %% of iperf3's own rate %.3f Gb/s: "
          "the losses are not compared" % (adv / 1e9, own / 1e9))
    sys.exit(3)
assert ls < lb, "the shaped loss is not below the blast's"
assert abs(ls - pred) < abs(lb - pred), "the shaped loss is not closer to the model's than the blast's"
# Where HTB held iperf3 back (at least one overlimit per two packets), the
# class was the constraint: there what came must be the advice. Elsewhere
# the sender was slower than the advice (its CPU, shared on this host).
bind = sorted(x for x, b in per if b >= 0.5)
if len(bind) < 3:
    print("HTB held iperf3 back in %d of %d intervals (its own rate in the blast: %.3f Gb/s, "
          "the advice %.3f Gb/s): the tracking is not judged" % (len(bind), len(per), own / 1e9,
                                                                 adv / 1e9))
    sys.exit(3)
med = bind[len(bind) // 2] if len(bind) % 2 else (bind[len(bind) // 2 - 1] + bind[len(bind) // 2]) / 2
print("where HTB held iperf3 back (%d intervals): came / advice, median %.3f (%.3f-%.3f)" % (
    len(bind), med, bind[0], bind[-1]))
assert 0.90 <= med <= 1.05, "the shaped rate is not within 0.90-1.05 x the advice"
PY
for try in 1 2 3; do
	quiet_phase shaped || e2e_skip "the machine was too busy for a clean shaped run"
	judge; rc=$?
	[ $rc -eq 3 ] || break
	e2e_log "shaped run $try: no headroom to judge the rate; again"
done
[ $rc -eq 3 ] && e2e_skip "iperf3 could not send faster than the advice here: the rate's tracking not judged"
[ $rc -eq 0 ] || e2e_fail "checks failed (outputs in $E_OUT)"
kill -TERM "$SHAPE_PID"; wait "$SHAPE_PID"; rc=$?; SHAPE_PID=
[ $rc -eq 0 ] || e2e_fail "rxbneck-shape exited $rc: $(tail -3 "$E_OUT/shape.err")"
root=$(ip netns exec "$E_NS_S" tc qdisc show dev "$E_IF_S" root | awk 'NR == 1 {print $2, $3}')
[ "$root" = "$DEV_ROOT" ] || e2e_fail "root qdisc after SIGTERM: '$root', before: '$DEV_ROOT'"

e2e_log "PASS"
