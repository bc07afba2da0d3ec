#!/usr/bin/env bash
# Stage B against the kernel's own counters: UDP over a veth pair between two
# private network namespaces, sent faster than a receiver with a small
# SO_RCVBUF reads it.
#
# The receiver reads at a limited rate, stops reading while the sender is
# still sending (its queue fills to capacity), stays stopped after the
# sender ends (the queue holds Q packets, quietly, across an epoch
# boundary), then drains and counts the Q packets. The probes watch the
# port for the whole run. Checked:
#  - the socket's drops with reason SOCKET_RCVBUFF (drops_rcvbuf and its
#    drops_by_reason) = the namespace's UdpRcvbufErrors delta, exactly;
#  - pkts_out = UdpInDatagrams delta = what the receiver read, exactly;
#  - pkts_in = pkts_out + drops (the queue is empty at both ends), and
#    pkts_in - pkts_out - drops summed up to an epoch that ends while the
#    queue is quiet = Q (counted by the receiver when it drains), and equals
#    the change of the queue length the record gives, per epoch (enqueued -
#    dequeued, so this one holds by construction; Q is the truth);
#  - Q is within the queue capacity the record derives from rcvbuf and
#    truesize (K_B), and at least 3/4 of it (UDP frees memory in batches);
#  - the receiver thread is reported with its CPU time per packet;
#  - empty_reads = the receiver's non-blocking reads of the empty socket
#    (1000; its 1000 empty peeks are not counted), exactly;
#  - veth traffic is served by the per-CPU backlog NAPI ("(backlog)").
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_udp_drops 0 "sockq sched" ip

measure_pair meas-udp 10.252.0
port=$((30000 + $$ % 30000))

cat > "$tmp/rx.py" <<'PY'
import json, os, socket, sys, time
port, rcvbuf, rate, ctl = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
s.bind(("0.0.0.0", port))
open(ctl + ".ready", "w").close()
got, gap = 0, 1.0 / rate
s.settimeout(0.05)
while not os.path.exists(ctl + ".pause"):
    try:
        s.recv(2048)
        got += 1
    except socket.timeout:
        continue
    time.sleep(gap)
while not os.path.exists(ctl + ".drain"):
    time.sleep(0.01)
quiet_until = time.monotonic_ns()
s.setblocking(False)
drained = 0
while True:
    try:
        s.recv(2048)
        drained += 1
    except BlockingIOError:
        break
# Empty reads: the one that ended the drain, 999 more, and peeks that
# must not count (sock_recv_length with -EAGAIN, not MSG_PEEK).
empty = 1
for flags in [0] * 999 + [socket.MSG_PEEK] * 1000:
    try:
        s.recv(2048, flags)
        sys.exit("rx: read from a drained socket")
    except BlockingIOError:
        empty += flags == 0
json.dump({"got": got, "drained": drained, "tid": os.getpid(), "empty": empty,
           "quiet_until_ns": quiet_until}, open(ctl + ".out", "w"))
PY
cat > "$tmp/tx.py" <<'PY'
import socket, sys, time
dst, port, secs, size, ctl = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
buf = b"x" * size
n, end = 0, time.monotonic() + secs
while time.monotonic() < end:
    for _ in range(100):
        s.sendto(buf, (dst, port))
        n += 1
open(ctl + ".sent", "w").write("%d %d\n" % (n, time.monotonic_ns()))
PY

snmp() {	# InDatagrams RcvbufErrors of the receiver's namespace
	ip netns exec $ns_b awk '/^Udp: [0-9]/ { print $2, $6 }' /proc/net/snmp
}

ip netns exec $ns_b python3 "$tmp/rx.py" $port 16384 2000 "$tmp/ctl" &
pids+=($!)
for _ in $(seq 100); do [ -e "$tmp/ctl.ready" ] && break; sleep 0.05; done
read -r in0 rb0 < <(snmp)
"$daemon" --measure-only --epochs 7 --interval-ms 1000 --watch-port $port --json \
	> "$tmp/meas.json" &
mp=$!
pids+=($mp)
sleep 1.2
ip netns exec $ns_a python3 "$tmp/tx.py" 10.252.0.2 $port 2 200 "$tmp/ctl" &
tx=$!
pids+=($tx)
sleep 1
touch "$tmp/ctl.pause"		# stop reading: the queue fills up
wait $tx
sleep 1.6			# quiet across an epoch boundary
touch "$tmp/ctl.drain"
wait "${pids[0]}"
wait $mp || { echo "measure_udp_drops: rxbneckd failed" >&2; exit 1; }
read -r in1 rb1 < <(snmp)
echo "$((in1 - in0)) $((rb1 - rb0))" > "$tmp/snmp"

python3 - "$tmp" "$port" <<'PY'
import json, sys
tmp, port = sys.argv[1], int(sys.argv[2])
indg, rcvbuf_err = map(int, open(f"{tmp}/snmp").read().split())
rx = json.load(open(f"{tmp}/ctl.out"))
sent, sent_end_ns = map(int, open(f"{tmp}/ctl.sent").read().split())
epochs = [json.loads(l) for l in open(f"{tmp}/meas.json")]
ok = True
tot = dict(pkts_in=0, pkts_out=0, drops=0, drops_rcvbuf=0, empty_reads=0)
cum, caps, backlog, tids, cpu_per_pkt = 0, [], 0, set(), []
print("epoch  pkts_in  pkts_out    drops   rcvbuf  queue_delta  in-out-drops  cumulative")
for d in epochs:
    s = next(x for x in d["sockets"] if x["port"] == port)
    for k in tot:
        tot[k] += s[k]
    diff = s["pkts_in"] - s["pkts_out"] - s["drops"]
    cum += diff
    print(f"{d['seq']:5d}  {s['pkts_in']:7d}  {s['pkts_out']:8d}  {s['drops']:7d}  "
          f"{s['drops_rcvbuf']:7d}  {s['queue_pkts_delta']:11d}  {diff:12d}  {cum:10d}")
    if diff != s["queue_pkts_delta"]:
        print(f"FAIL epoch {d['seq']}: in-out-drops {diff} != queue change "
              f"{s['queue_pkts_delta']}")
        ok = False
    if sent_end_ns + 100_000_000 < d["end_ns"] < rx["quiet_until_ns"] and cum != rx["drained"]:
        print(f"FAIL epoch {d['seq']} ends while the queue is quiet: cumulative "
              f"{cum} != {rx['drained']} drained afterwards")
        ok = False
    if s["queue_pkts_cap"]:
        caps.append(s["queue_pkts_cap"])
    if s["pkts_out"]:
        tids.update(s["tids"])
        cpu_per_pkt.append(s["cpu_ns_per_pkt"])
    backlog += sum(n["pkts"] for n in d["napi"] if n["dev"] == "(backlog)")
quiet_epochs = [d for d in epochs if sent_end_ns + 100_000_000 < d["end_ns"] < rx["quiet_until_ns"]]
print(f"sent {sent}, receiver read {rx['got']} + drained {rx['drained']}; "
      f"UdpInDatagrams +{indg}, UdpRcvbufErrors +{rcvbuf_err}")
print(f"probes: in {tot['pkts_in']}, out {tot['pkts_out']}, empty reads {tot['empty_reads']} "
      f"(made {rx['empty']}), drops {tot['drops']} "
      f"(SOCKET_RCVBUFF {tot['drops_rcvbuf']}); K_B {caps}; backlog NAPI pkts {backlog}; "
      f"receiver tids {sorted(tids)}, cpu ns/pkt {cpu_per_pkt}")
reason = sum(d["drops_by_reason"].get("SOCKET_RCVBUFF", 0) for d in epochs)
sock_reason = sum(next(x for x in d["sockets"] if x["port"] == port)["drops_by_reason"]
                  .get("SOCKET_RCVBUFF", 0) for d in epochs)
if sock_reason != rcvbuf_err:
    print(f"FAIL: the socket's drops_by_reason SOCKET_RCVBUFF {sock_reason} != UdpRcvbufErrors")
    ok = False
if tot["drops_rcvbuf"] != rcvbuf_err:
    print("FAIL: SOCKET_RCVBUFF drops != UdpRcvbufErrors")
    ok = False
if reason < rcvbuf_err:
    print("FAIL: host-wide drops_by_reason SOCKET_RCVBUFF below UdpRcvbufErrors")
    ok = False
if not (tot["pkts_out"] == indg == rx["got"] + rx["drained"]):
    print("FAIL: pkts_out != UdpInDatagrams != packets read")
    ok = False
if tot["pkts_in"] != tot["pkts_out"] + tot["drops"] or cum != 0:
    print("FAIL: over the run pkts_in - pkts_out - drops != 0")
    ok = False
if tot["empty_reads"] != rx["empty"]:
    print(f"FAIL: empty_reads {tot['empty_reads']} != {rx['empty']} reads of the empty socket")
    ok = False
if tot["pkts_in"] != indg + rcvbuf_err:
    print("FAIL: pkts_in != UdpInDatagrams + UdpRcvbufErrors")
    ok = False
if not quiet_epochs:
    print("FAIL: no epoch ended while the queue was quiet")
    ok = False
if not caps or not (0.75 * max(caps) - 1 <= rx["drained"] <= max(caps)):
    print("FAIL: the queue held %d packets, capacity K_B %s" % (rx["drained"], caps))
    ok = False
if tids != {rx["tid"]} or not all(c and c > 0 for c in cpu_per_pkt):
    print("FAIL: receiver thread or its CPU time per packet not reported")
    ok = False
if backlog < 0.9 * tot["pkts_in"]:
    print("FAIL: the backlog NAPI did not carry the veth traffic")
    ok = False
sys.exit(0 if ok else 1)
PY
