#!/usr/bin/env bash
# The receive-buffer experiment (docs/buffer.md §5; Liu et al.'s §V:
# docs/references.md): one receiving socket, N = 1 to 35 senders at a fixed
# rate each from the sender's namespace, 0 and 2 CPU hogs on the
# receiver's CPU; a static 1 MiB buffer (UDT's), RRDA, and the
# model-sized buffer, alternating run by run.
#
#   tests/e2e/buffer.sh [-b BUILD] [-o OUTDIR] [-k "0 2"] [-N "1 10 20 30 35"]
#                       [-n REPS] [-s SECONDS] [-r RATE] [-P "static rrda model"] [-a]
#
#   -k  CPU hogs on the receiver's CPU (default "0 2")
#   -N  sender counts (default "1 10 20 30 35")
#   -n  repeats of each point (2)
#   -s  seconds each run sends (8); -r each sender's rate, bits/s (30e6)
#   -P  policies (default "static rrda model")
#   -a  no analysis at the end (tests/e2e/buffer_analyze.py OUTDIR does it)
#
# Output in OUTDIR (default tests/e2e/out/buffer-<date>): runs.jsonl (one
# line per run, disturbed ones included and marked), status.jsonl
# (rxbneckd's status each epoch, for the disturbance checks),
# rxbneckd.conf/log; then table.md and buffer.png from buffer_analyze.py.
#
# Needs root. Holds /tmp/rxbneck-heavy.lock one batch at a time: one k and
# one repeat (every N and policy once, about 3 minutes). Each run waits
# for a quiet machine and is repeated when the machine was not quiet
# (e2e_point's criteria, tests/e2e/lib.sh).
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KS="0 2"
NS_="1 10 20 30 35"
REPS=2 SECS=8 RATE=30e6 POLICIES="static rrda model" ANALYZE=1
SIZE=8192 WORK_NS=1000 RCVBUF=524288 FLOOR=64Ki
E_EPOCH_MS=250
. "$SRC/tests/e2e/lib.sh"
e2e_args "b:E_BUILD o:E_OUT k:KS N:NS_ n:REPS s:SECS r:RATE P:POLICIES a=ANALYZE=0" "$@"
export E_BUILD
e2e_out_init buffer
LOAD=$E_BUILD/rxbneck-bufload
[ -x "$LOAD" ] || e2e_skip "$LOAD not built"

e2e_setup_pinned
# 8 KiB datagrams whole: 1 MiB holds 63 of them (16 KiB charged each).
ip link set "$E_IF_R" mtu 9000 && ip -n "$E_NS_S" link set "$E_IF_S" mtu 9000 ||
	e2e_fail "cannot set the veth pair's MTU to 9000"

# buffer_conf POLICY: the daemon's file with [buffer] for POLICY.
buffer_conf() {
	local mode=apply policy=$1
	[ "$1" = static ] && { mode=off; policy=rrda; }
	{ e2e_conf_daemon; cat <<-EOF; } > "$E_TMP/d.conf"
	[measure]
	interval_ms = $E_EPOCH_MS
	net_probe_every = 1
	watch_ports = $E_PORT
	devices = $E_IF_R
	[model]
	payload_bytes = $SIZE
	[control]
	listen_address = $E_ADDR_R
	port = $E_CPORT
	allow = $E_NET.0/24
	[buffer]
	mode = $mode
	policy = $policy
	floor_bytes = $FLOOR
	allow_users = 0
	EOF
}

POLICY_NOW=
set_policy() {
	[ "$1" = "$POLICY_NOW" ] && return 0
	buffer_conf "$1"
	e2e_ctl reload > /dev/null || e2e_fail "reload for policy $1"
	POLICY_NOW=$1
}

# The daemon's CPU time so far, seconds.
daemon_cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$E_DPID/stat"
}

# buffer_run POLICY N REP: one run; appends its record to runs.jsonl.
buffer_run() {
	local pol=$1 n=$2 rep=$3 rpid c0 c1
	rm -f "$E_TMP/s.json" "$E_TMP/r.json"
	set_policy "$pol"
	e2e_bg rpid taskset -c "$E_RECV_CPU" "$LOAD" recv --port "$E_PORT" --bind "$E_ADDR_R" \
		--rcvbuf "$RCVBUF" --seconds $((SECS + 10)) --idle-ms 1500 --work-ns "$WORK_NS" \
		> "$E_TMP/r.json" 2> "$E_TMP/r.err"
	for _ in $(seq 50); do
		grep -q ready "$E_TMP/r.err" 2>/dev/null && break
		sleep 0.02
	done
	c0=$(daemon_cpu_s)
	e2e_span_begin
	ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" "$LOAD" send --to "$E_ADDR_R" \
		--port "$E_PORT" --flows "$n" --rate "$RATE" --size "$SIZE" --seconds "$SECS" \
		> "$E_TMP/s.json" 2> "$E_TMP/s.err"
	wait "$rpid" 2>/dev/null
	e2e_span_end
	c1=$(daemon_cpu_s)
	e2e_py - "$E_TMP" "$E_OUT/runs.jsonl" "$E_K" "$pol" "$n" "$rep" \
		"$E_T0" "$E_T1" "$E_STEAL_PCT" "$c0" "$c1" <<'PY'
import json, sys
from runrec import first_json
d, out = sys.argv[1], sys.argv[2]
rec = {"k": int(sys.argv[3]), "mode": sys.argv[4], "policy": sys.argv[4], "n": int(sys.argv[5]),
       "rep": int(sys.argv[6]), "t_start_mono": float(sys.argv[7]),
       "t_end_mono": float(sys.argv[8]), "steal_pct": int(sys.argv[9]),
       "daemon_cpu_s": float(sys.argv[11]) - float(sys.argv[10]),
       "send": first_json(d, "s.json"), "recv": first_json(d, "r.json")}
with open(out, "a") as f:
    f.write(json.dumps(rec) + "\n")
s, r = rec["send"] or {}, rec["recv"] or {}
if s.get("ok") and r.get("ok"):
    print("k=%d %-6s N=%2d rep %d: sent %d, drops %d (%.2f %%), goodput %.0f Mb/s, "
          "buffer mean %.2f MB peak %.2f MB, daemon %.1f %% CPU"
          % (rec["k"], rec["policy"], rec["n"], rec["rep"], s["sent_pkts"], r["drops"],
             100.0 * r["drops"] / max(1, s["sent_pkts"]), r["goodput_bps"] / 1e6,
             r["rcvbuf_mean"] / 1e6, r["rcvbuf_peak"] / 1e6,
             100.0 * rec["daemon_cpu_s"] / max(1e-9, rec["t_end_mono"] - rec["t_start_mono"])),
          file=sys.stderr)
else:
    print("k=%d %s N=%d rep %d: FAILED" % (rec["k"], rec["policy"], rec["n"], rec["rep"]),
          file=sys.stderr)
PY
}

# A point, waiting for a quiet machine and repeated while disturbed.
buffer_point() { e2e_repeat_disturbed buffer_run "$@"; }

buffer_conf static
e2e_daemon_run
e2e_log "buffer experiment in $E_OUT: k in {$KS}, N in {$NS_}, $REPS repeats, $SECS s at $RATE b/s per sender, policies {$POLICIES}"
for k in $KS; do
	for rep in $(seq "$REPS"); do
		e2e_k_begin "$k" " repeat $rep"
		c=$(e2e_wait_cb "$E_K") ||
			e2e_log "k=$E_K: CPU $E_RECV_CPU did not settle at #C=$E_K (last $c)"
		for n in $NS_; do
			for pol in $POLICIES; do
				buffer_point "$pol" "$n" "$rep"
			done
		done
		e2e_k_end
	done
done
e2e_daemon_stop
if [ "$ANALYZE" = 1 ]; then
	/usr/bin/python3 "$SRC/tests/e2e/buffer_analyze.py" "$E_OUT" --plot "$E_OUT/buffer.png" ||
		e2e_fail "analysis"
fi
e2e_log "done: $E_OUT"
