#!/usr/bin/env bash
# Without BPF (--attach none) the collector still reports what /proc and
# netlink give, and says it runs degraded. Run inside the receiver's
# network namespace (where /proc/net and the NIC reader look), during a UDP
# flood into a small receive buffer and with 2 stress-ng --cpu workers on
# CPU 1. Checked:
#  - degraded is true with the no_bpf flag and a reason; no probe groups;
#  - packet counts are null (unknown), not 0; the socket's drops (sk_drops
#    from /proc/net/udp) equal the namespace's UdpRcvbufErrors delta;
#    packets are seen arriving (arrivals_seen) in the epochs of the flood;
#  - the veth is listed with its ring from the configured fallback
#    (source "config", with a note) and rx_packets at least what was sent;
#  - CPU 1 counts at least the 2 workers as CPU-bound (from schedstat and
#    context-switch counts); io_bound is null with its reason unless
#    kernel.task_delayacct is on.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_degraded 2 "" ip stress-ng

measure_pair meas-deg 10.254.0
port=$((30000 + ($$ + 13) % 30000))

cat > "$tmp/rx.py" <<'PY'
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
s.bind(("0.0.0.0", int(sys.argv[1])))
open(sys.argv[2] + ".ready", "w").close()
s.settimeout(0.05)
while not os.path.exists(sys.argv[2] + ".stop"):
    try:
        s.recv(2048)
    except socket.timeout:
        continue
    time.sleep(0.0005)
PY
cat > "$tmp/tx.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n, end, buf = 0, time.monotonic() + 2, b"x" * 200
while time.monotonic() < end:
    for _ in range(100):
        s.sendto(buf, (sys.argv[1], int(sys.argv[2])))
        n += 1
print(n)
PY

ip netns exec $ns_b python3 "$tmp/rx.py" $port "$tmp/ctl" &
pids+=($!)
for _ in $(seq 100); do [ -e "$tmp/ctl.ready" ] && break; sleep 0.05; done
stress-ng --cpu 2 --taskset 1 --timeout 60 --quiet &
pids+=($!)
sleep 0.5
read -r rb0 < <(ip netns exec $ns_b awk '/^Udp: [0-9]/ { print $6 }' /proc/net/snmp)
ip netns exec $ns_b "$daemon" --measure-only --attach none --epochs 4 --interval-ms 1000 \
	--watch-port $port --json > "$tmp/meas.json" &
mp=$!
pids+=($mp)
sleep 1.2
ip netns exec $ns_a python3 "$tmp/tx.py" 10.254.0.2 $port > "$tmp/sent"
wait $mp || { echo "measure_degraded: rxbneckd failed" >&2; exit 1; }
read -r rb1 < <(ip netns exec $ns_b awk '/^Udp: [0-9]/ { print $6 }' /proc/net/snmp)
touch "$tmp/ctl.stop"
delayacct=$(cat /proc/sys/kernel/task_delayacct 2>/dev/null || echo 0)

python3 - "$tmp" "$port" "$((rb1 - rb0))" "vb$$" "$delayacct" <<'PY'
import json, statistics, sys
tmp, port, rcvbuf_err, dev, delayacct = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
sent = int(open(f"{tmp}/sent").read())
epochs = [json.loads(l) for l in open(f"{tmp}/meas.json")]
ok = True
drops, rx_packets, cpu1, seen = 0, 0, [], 0
for d in epochs:
    if not d["degraded"] or "no_bpf" not in d["degraded_flags"] or not d["degraded_reason"]:
        print(f"FAIL epoch {d['seq']}: not marked degraded: {d['degraded_flags']}")
        ok = False
    if d["probes"] or d["attach_mode"] != "none":
        print(f"FAIL epoch {d['seq']}: probes {d['probes']} attach {d['attach_mode']}")
        ok = False
    s = next(x for x in d["sockets"] if x["port"] == port)
    if s["pkts_in"] is not None or s["pkts_out"] is not None or s["cpu_ns_per_pkt"] is not None:
        print(f"FAIL epoch {d['seq']}: packet counts should be unknown: {s}")
        ok = False
    drops += s["drops"] or 0
    seen += bool(s["arrivals_seen"])
    nic = [n for n in d["nics"] if n["name"] == dev]
    if len(nic) != 1 or nic[0]["ring_source"] != "config" or not nic[0]["note"]:
        print(f"FAIL epoch {d['seq']}: {dev} not reported with its fallback: {nic}")
        ok = False
    else:
        rx_packets += nic[0]["rx_packets"]
    c = {x["cpu"]: x for x in d["cpus"]}
    if c[1]["busy_frac"] is None or c[1]["cpu_bound"] is None:
        print(f"FAIL epoch {d['seq']}: no CPU figures from /proc")
        ok = False
    else:
        cpu1.append(c[1]["cpu_bound"])
    if delayacct != "1" and (c[1]["io_bound"] is not None or "task_delayacct" not in d["degraded_reason"]):
        print(f"FAIL epoch {d['seq']}: io_bound should be unknown, with its reason")
        ok = False
print(f"sent {sent}; socket drops {drops} vs UdpRcvbufErrors +{rcvbuf_err}; "
      f"{dev} rx_packets {rx_packets}; cpu1 cpu_bound {cpu1}")
print(f"reason: {epochs[-1]['degraded_reason']}")
if drops != rcvbuf_err:
    print("FAIL: socket drops != UdpRcvbufErrors")
    ok = False
if seen < 1:
    print("FAIL: no epoch saw packets arriving (arrivals_seen)")
    ok = False
if not sent <= rx_packets <= sent + 50:
    print("FAIL: veth rx_packets do not cover what was sent")
    ok = False
if statistics.median(cpu1) < 1.5:
    print("FAIL: CPU 1 does not count the 2 workers as CPU-bound")
    ok = False
sys.exit(0 if ok else 1)
PY
