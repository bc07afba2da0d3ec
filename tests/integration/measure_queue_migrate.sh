#!/usr/bin/env bash
# The UDP queue's change that the sockq probe records, across a receiver's
# migration. UDP keeps two queues: softirqs append to sk_receive_queue, and
# udp_recvmsg() reads from reader_queue, splicing the other into it when it
# runs dry. The probe counts packets per CPU as they are enqueued and
# dequeued, and the queue's change is enqueued minus dequeued summed over
# the CPUs; enqueues and dequeues on different CPUs, and splices of every
# size, must not make a queue that is empty look otherwise.
#
# One process on loopback, in a private namespace, does it on purpose:
#   on CPU 1: send 8, read 1 (a splice of 8);
#   on CPU 0: read 7, send 7 (the reader queue drained on another CPU);
#   on CPU 1: read 7 (a splice of 7: 6 left).
# Truth: 15 packets in, 15 out, the queue empty before and after; the
# queue length changes the probe reports must add up to 0.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need measure_queue_migrate 2 "sockq" ip
ns=rxbt-qmig$$ port=$((30000 + $$ % 30000))
tmp=$(mktemp -d /tmp/rxbt-qmig.XXXXXX)
mp=
cleanup() {
	[ -n "$mp" ] && kill "$mp" 2>/dev/null && wait "$mp" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns" || { echo "measure_queue_migrate: ip netns add $ns failed" >&2; exit 1; }
ip -n "$ns" link set lo up || { echo "measure_queue_migrate: lo of $ns would not come up" >&2; exit 1; }

"$daemon" --measure-only --epochs 4 --interval-ms 1000 --watch-port $port --json \
	> "$tmp/meas.json" 2> "$tmp/daemon.err" &
mp=$!
sleep 1.3	# into the second epoch: the probes are attached
ip netns exec "$ns" python3 - $port <<'PY' || { echo "measure_queue_migrate: the packet dance failed" >&2; exit 1; }
import os, socket, sys
port = int(sys.argv[1])
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
rx.bind(("127.0.0.1", port))
rx.setblocking(False)
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
def on(cpu):
    os.sched_setaffinity(0, {cpu})
def send(n):
    for _ in range(n):
        tx.sendto(b"x" * 100, ("127.0.0.1", port))
def read(n):
    for _ in range(n):
        rx.recv(2048)
on(1); send(8); read(1)
on(0); read(7); send(7)
on(1); read(7)
try:
    rx.recv(2048)
    sys.exit("the queue is not empty")
except BlockingIOError:
    pass
PY
wait $mp || { echo "measure_queue_migrate: rxbneckd failed" >&2; cat "$tmp/daemon.err" >&2; exit 1; }
mp=
python3 - "$tmp/meas.json" $port <<'PY'
import json, sys
port = int(sys.argv[2])
pin = pout = qsum = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    s = next((x for x in d["sockets"] if x["port"] == port), None)
    if not s or s["pkts_in"] is None:
        continue
    pin += s["pkts_in"]
    pout += s["pkts_out"]
    qsum += s["queue_pkts_delta"] or 0
    print("epoch %d: in %d out %d queue change %s" % (d["seq"], s["pkts_in"], s["pkts_out"],
                                                      s["queue_pkts_delta"]))
ok = pin == 15 and pout == 15 and qsum == 0
print("measure_queue_migrate: in %d, out %d, queue changes add up to %d: %s"
      % (pin, pout, qsum, "PASS" if ok else "FAIL (want 15, 15, 0)"))
sys.exit(0 if ok else 1)
PY
