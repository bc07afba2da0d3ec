#!/usr/bin/env bash
# A receiver that starts between two sampled epochs (--net-probe-every 8)
# is named at once, not a sampling period later.
#
# Only the socket dequeue probe (a per-packet program, attached one epoch
# in N) can tell which thread reads a watched socket; until it does, a
# busy receiver counts as one more CPU-bound task on its CPU, and the
# model's #C is one too high. Between epochs the collector looks for new
# sockets on the watched ports (UDP sockets in /proc/net/udp, TCP listeners
# through socket diagnostics, every 100 ms) and attaches the per-packet
# programs at once when it finds one. Here, once for UDP and once for TCP:
# rxbneckd --measure-only, 250 ms epochs, one in 8 sampled; right after a
# sampled epoch a receiver binds the watched port on CPU 1 (UDP; TCP:
# listens, accepts one connection) and spins on it (non-blocking reads:
# CPU-bound), fed ~20 k writes/s of 1000 bytes on loopback from CPU 0.
# Checked, with E0 the epoch in which the socket appeared:
#  - the programs were attached out of turn in E0 (net_forced_epochs), and
#    epoch E0 + 1 is sampled although the cadence says E0 + 7 or so, and
#    names the receiver's thread;
#  - CPU 1's cpu_bound stays below 0.75 in E0 (unless the host delayed the
#    receiver's first read to the end of E0 + 1; the epoch it bound in: it
#    spins uncounted until the next look) and below 0.5 after, while the
#    receiver spins there (it is the socket's receiver instead), and from
#    E0 + 1 on its on-CPU time is reported;
#  - the cadence resumes: at most 2 of the 6 epochs after E0 + 1 sampled.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need measure_new_receiver 2 "sockq sched"

tmp=$(mktemp -d /tmp/rxbt-newrx.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

cat > "$tmp/rx.py" <<'PY'
import os, socket, sys, threading, time
proto, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if proto == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
else:
    l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", port))
    l.listen(1)
with open(out, "w") as f:
    f.write("%d %d\n" % (threading.get_native_id(), time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
# One sleep, so the scheduler probes see the thread now: a thread that
# never leaves its CPU is only accounted from its first switch-out.
time.sleep(0.001)
if proto == "tcp":
    s = l.accept()[0]
s.setblocking(False)
end = time.monotonic() + 5
first = 0
while time.monotonic() < end:
    try:
        s.recv(2048)
        if not first:
            first = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            with open(out + ".first", "w") as f:
                f.write("%d\n" % first)
    except BlockingIOError:
        pass
PY
cat > "$tmp/tx.py" <<'PY'
import socket, sys, time
proto, port = sys.argv[1], int(sys.argv[2])
end = time.monotonic() + 5
if proto == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    send = lambda b: s.sendto(b, ("127.0.0.1", port))
else:
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port))
            break
        except ConnectionRefusedError:
            time.sleep(0.002)
    send = s.send
while time.monotonic() < end:
    for _ in range(100):
        try:
            send(b"x" * 1000)
        except OSError:
            pass
    time.sleep(0.005)
PY

# run PROTO OFFSET: one receiver starting between two samples; 0 pass, 1 fail.
run() {
	local proto=$1 port=$((30000 + $$ % 30000 + $2))
	local out=$tmp/$proto
	mkdir -p "$out"
	pids=()
	"$daemon" --measure-only --epochs 40 --interval-ms 250 --net-probe-every 8 \
		--watch-port "$port" --json > "$out/epochs.jsonl" 2> "$out/daemon.log" &
	pids+=($!)

	# Wait for a sampled epoch after the first one, then start the
	# receiver: the next epoch in the cadence is then 8 epochs away.
	python3 - "$out/epochs.jsonl" <<'PY' || { echo "measure_new_receiver: $proto: no sampled epoch seen" >&2; return 1; }
import json, sys, time
end = time.monotonic() + 15
while time.monotonic() < end:
    # The daemon may be half-way through writing its last line: only
    # lines ended by a newline are whole.
    lines = open(sys.argv[1]).read().split("\n")[:-1]
    eps = [json.loads(l) for l in lines if l.strip()]
    if len(eps) >= 2 and eps[-1]["net_sampled"]:
        sys.exit(0)
    time.sleep(0.02)
sys.exit(1)
PY
	taskset -c 1 python3 "$tmp/rx.py" "$proto" "$port" "$out/rx.txt" &
	pids+=($!)
	taskset -c 0 python3 "$tmp/tx.py" "$proto" "$port" &
	pids+=($!)
	wait "${pids[1]}" "${pids[2]}"
	wait "${pids[0]}"
	pids=()
	check "$proto" "$out" "$port"
}

check() {
	python3 - "$1" "$2/epochs.jsonl" "$2/rx.txt" "$3" <<'PY'
import json, sys
proto = sys.argv[1]
eps = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
tid, t_bind = map(int, open(sys.argv[3]).read().split())
try:
    t_first = int(open(sys.argv[3] + ".first").read())
except (OSError, ValueError):
    t_first = None
port = int(sys.argv[4])
e0 = next(i for i, e in enumerate(eps) if e["end_ns"] > t_bind)
print("%s: receiver tid %d bound the port in epoch %d (of %d); sampled epochs: %s"
      % (proto, tid, eps[e0]["seq"], len(eps), [e["seq"] for e in eps if e["net_sampled"]]))
def sock(e):
    return next((s for s in e["sockets"] if s["port"] == port), None)
def cpu1(e):
    return next(c for c in e["cpus"] if c["cpu"] == 1)
for e in eps[e0:e0 + 8]:
    s = sock(e)
    print("  epoch %d: sampled %s, forced %d, cpu1 cpu_bound %.2f, tids %s, receiver_oncpu_ns %s"
          % (e["seq"], e["net_sampled"], e["net_forced_epochs"], cpu1(e)["cpu_bound"],
             s and s.get("tids"), s and s.get("receiver_oncpu_ns")))
nxt = eps[e0 + 1]
fail = []
# The receiver can only be named once it reads. On a stalled host its
# first read (for TCP: after the client's connect) can come after the
# epoch sampled out of turn, or so near its end that the probes' counters
# are read first; then the cadence names it, and only the out-of-turn
# attach is checked. So is the epoch it bound in: a host that stalls the
# receiver's start by seconds stalls other work on CPU 1 too (CI: #C 1.72
# there, first read 1821 ms after the bind).
late = t_first is None or t_first >= nxt["end_ns"] - 50e6
if late:
    print("first read %s, after or within 50 ms of the end of epoch E0 + 1: "
          "naming and epoch E0 not checked (host delay)"
          % ("never" if t_first is None else "%.0f ms after the bind" % ((t_first - t_bind) / 1e6)))
if eps[e0]["net_forced_epochs"] < 1:
    fail.append("the programs were not attached in the epoch the socket appeared")
# In the epoch it bound in, the receiver spins uncounted until the next
# look (every 100 ms: 40 % of a 250-ms epoch at most, plus the
# interpreter's start, more when a stalled host delays the look); without
# the look it would count until the cadence's next sample, the epochs after.
if not late and cpu1(eps[e0])["cpu_bound"] >= 0.75:
    fail.append("epoch E0: cpu1 cpu_bound %.2f: the receiver counted as CPU-bound"
                % cpu1(eps[e0])["cpu_bound"])
if not nxt["net_sampled"]:
    fail.append("epoch E0 + 1 not sampled")
if nxt["net_forced_epochs"] < 1:
    fail.append("no epoch sampled out of turn")
if not late and tid not in (sock(nxt) or {}).get("tids", []):
    fail.append("receiver tid %d not named in epoch E0 + 1" % tid)
# The receiver spins until 5 s after binding: 20 epochs.
busy = [e for e in eps[e0 + 1:] if e["end_ns"] < t_bind + 4.5e9]
if len(busy) < 6 and not late:
    fail.append("only %d epochs while the receiver ran" % len(busy))
for e in ([] if late else busy):
    if cpu1(e)["cpu_bound"] >= 0.5:
        fail.append("epoch %d: cpu1 cpu_bound %.2f: the receiver counted as CPU-bound"
                    % (e["seq"], cpu1(e)["cpu_bound"]))
    s = sock(e)
    if not s or not (s.get("receiver_oncpu_ns") or 0) > 0:
        fail.append("epoch %d: receiver's on-CPU time not reported" % e["seq"])
after = [e["net_sampled"] for e in eps[e0 + 2:e0 + 8]]
if sum(after) > 2:
    fail.append("the cadence did not resume: %s" % after)
if fail:
    print("FAIL (%s): %s" % (proto, "; ".join(fail[:6])))
    sys.exit(1)
print("PASS (%s)" % proto)
PY
}

rc=0
run udp 0 || rc=1
run tcp 1 || rc=1
[ $rc -eq 0 ] && echo PASS
exit $rc
