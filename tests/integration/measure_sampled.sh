#!/usr/bin/env bash
# The per-packet probes attached for one epoch in N (--net-probe-every 3),
# checked per epoch against ground truth.
#
# UDP over a veth pair between two private network namespaces. The traffic
# is confined to the middle of each epoch: the sender floods from 20 % to
# 70 % of the epoch, the receiver (16 KiB SO_RCVBUF, reading slower than
# the sender sends, so most packets are dropped) reads from 10 % to 85 %
# and drains the queue before its window ends; the queue is empty at every
# epoch boundary, when the probes are attached and detached. So for every
# epoch k: sent_k packets arrived, read_k were queued and read, and
# sent_k - read_k were dropped for lack of buffer. The workers note when
# they sent first and last and when the drain ended: on a loaded host (a
# VM whose vCPU is not running: steal) a window can spill over the
# daemon's epoch boundary (start_ns, end_ns of the epoch), or the kernel
# may deliver a sender's last packets after it (softirq deferred), and
# such an epoch (a pair whose drops are off by d and -d) is left out of
# the per-epoch count checks and said so; at least 3 sampled epochs must
# be clean, else the measurement is made again (at most 3 times). Checked:
#  - exactly the epochs 1, 4, 7, ... are sampled (net_sampled,
#    net_sampled_seq), the attach and detach times are reported;
#  - in sampled epochs the counts are exact: pkts_in = sent_k,
#    pkts_out = pkts_enqueued = read_k, drops = sent_k - read_k, the
#    backlog NAPI carried the packets, the receiver's CPU time per packet
#    is there; in the others pkts_in/pkts_out/napi are null, not 0;
#  - drops in every epoch: drops = drops_rcvbuf = sent_k - read_k, and
#    their sum = the namespace's UdpRcvbufErrors delta; over the run, what
#    was sent and neither read nor dropped at the socket was dropped at the
#    backlog (softnet_stat, 0 on a quiet host);
#  - the receiver thread and its scheduling are reported in every epoch
#    with traffic (from the latest sampled epoch's receivers);
#  - where the queue change is reported, pkts_in - pkts_out - drops
#    equals it (0 here).
# NET_PROBE_EVERY=N, STAGE_A_EVERY=M (--net-probe-every, --stage-a-every;
# default 3 and 1): the same with stage A's programs in one sampled epoch
# in M (measure_stage_a.sh): they are in exactly the epochs the rule names
# (net_stage_a), the other sampled epochs have no NAPI counts (null) but
# exact socket counts, and a NET_RX softirq share (estimated from the
# kernel's softirq count) on some CPU when packets arrived.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_sampled 0 "sockq sched netrx" ip

measure_pair meas-smp 10.253.0
port=$((30000 + $$ % 30000))
export NET_EVERY=${NET_PROBE_EVERY:-3} A_EVERY=${STAGE_A_EVERY:-1}

# Both workers wait for the schedule (first boundary, epoch length, first
# and last epoch with traffic) and act in their window of each epoch.
cat > "$tmp/worker.py" <<'PY'
import json, os, socket, sys, time
role, port, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if role == "rx":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.bind(("0.0.0.0", port))
    s.setblocking(False)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    buf = b"x" * 200
open(f"{tmp}/{role}.ready", "w").close()
while not os.path.exists(f"{tmp}/schedule"):
    time.sleep(0.01)
b1, iv, first, last = map(int, open(f"{tmp}/schedule").read().split())
lo, hi = (0.10, 0.85) if role == "rx" else (0.20, 0.70)
counts = {}
times = {}
for k in range(first, last + 1):
    start = b1 + (k - 2) * iv            # epoch k spans [b_(k-1), b_k]
    t0, t1 = start + int(lo * iv), start + int(hi * iv)
    while time.monotonic_ns() < t0:
        time.sleep(0.001)
    n = 0
    began = time.monotonic_ns()
    if role == "rx":
        while time.monotonic_ns() < t1:
            try:
                s.recv(2048)
                n += 1
            except BlockingIOError:
                time.sleep(0.0002)
                continue
            if n % 8 == 0:
                time.sleep(0.001)        # slower than the sender: drops
        while True:                      # the sender has stopped: drain
            try:
                s.recv(2048)
                n += 1
            except BlockingIOError:
                break
    else:
        while time.monotonic_ns() < t1:
            for _ in range(50):
                s.sendto(buf, ("10.253.0.2", port))
            n += 50
    counts[k] = n
    times[k] = (began, time.monotonic_ns())   # first action, last one done
json.dump({"counts": counts, "times": times}, open(f"{tmp}/{role}.out", "w"))
PY

snmp() {	# InDatagrams RcvbufErrors of the receiver's namespace
	ip netns exec $ns_b awk '/^Udp: [0-9]/ { print $2, $6 }' /proc/net/snmp
}
backlog_drops() {	# packets dropped at the per-CPU backlog, all CPUs
	python3 -c 'print(sum(int(l.split()[1], 16) for l in open("/proc/net/softnet_stat")))'
}

# attempt N: one measurement and its checks, in $tmp/aN. 0 pass, 1 fail,
# 3 too few epochs kept to their windows (a loaded host): try again.
attempt() {
	local d=$tmp/a$1
	mkdir -p "$d"
ip netns exec $ns_b python3 "$tmp/worker.py" rx $port "$d" &
echo $! >> "$tmp/pids"
ip netns exec $ns_a python3 "$tmp/worker.py" tx $port "$d" &
echo $! >> "$tmp/pids"
for _ in $(seq 100); do [ -e "$d/rx.ready" ] && [ -e "$d/tx.ready" ] && break; sleep 0.05; done
read -r in0 rb0 < <(snmp)
bl0=$(backlog_drops)

python3 - "$daemon" "$port" "$d" "$tmp/pids" <<'PY'
import json, os, subprocess, sys
daemon, port, tmp, pids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
iv_ms, epochs, first, last = 500, 17, 3, 15
p = subprocess.Popen([daemon, "--measure-only", "--epochs", str(epochs),
                      "--interval-ms", str(iv_ms), "--net-probe-every", os.environ["NET_EVERY"],
                      "--stage-a-every", os.environ["A_EVERY"],
                      "--watch-port", port, "--json"], stdout=subprocess.PIPE, text=True)
open(pids, "a").write(f"{p.pid}\n")
lines = [p.stdout.readline().strip()]
b1 = json.loads(lines[0])["end_ns"]
open(f"{tmp}/schedule.tmp", "w").write(f"{b1} {iv_ms * 1000000} {first} {last}\n")
import os
os.rename(f"{tmp}/schedule.tmp", f"{tmp}/schedule")
lines += p.stdout.read().splitlines()
open(f"{tmp}/meas.json", "w").write("\n".join(lines) + "\n")
sys.exit(p.wait() or (0 if len(lines) == epochs else 1))
PY
rc=$?
for r in rx tx; do
	for _ in $(seq 100); do [ -e "$d/$r.out" ] && break; sleep 0.1; done
done
[ $rc -eq 0 ] || { echo "measure_sampled: rxbneckd failed" >&2; return 1; }
read -r in1 rb1 < <(snmp)
echo "$((in1 - in0)) $((rb1 - rb0)) $(( $(backlog_drops) - bl0 ))" > "$d/snmp"

python3 - "$d" "$port" <<'PY'
import json, os, sys
tmp, port = sys.argv[1], int(sys.argv[2])
every, a_every = int(os.environ["NET_EVERY"]), int(os.environ["A_EVERY"])
indg, rcvbuf_err, backlog = map(int, open(f"{tmp}/snmp").read().split())
tx, rx = (json.load(open(f"{tmp}/{r}.out")) for r in ("tx", "rx"))
sent = {int(k): v for k, v in tx["counts"].items()}
read = {int(k): v for k, v in rx["counts"].items()}
epochs = [json.loads(l) for l in open(f"{tmp}/meas.json")]
ok = True

def kept_window(d):
    """Within epoch d's own boundaries (start_ns, end_ns) the workers did
    the work of epoch d only, and all of it, with 1 ms to spare at the end
    (the sender's packets are handled inside its sendto(), so its last one
    done means arrived). A stalled daemon moves the boundaries, a stalled
    worker its window."""
    me = str(d["seq"])
    for w in (tx["times"], rx["times"]):
        for k, (b, e) in w.items():
            inside = d["start_ns"] <= b and e + 1000000 <= d["end_ns"]
            overlaps = b < d["end_ns"] and e + 1000000 > d["start_ns"]
            if (k == me and not inside) or (k != me and overlaps):
                return False
    return True

def sock(d):
    return next(x for x in d["sockets"] if x["port"] == port)

# Packets the sender handed over in epoch k but the kernel delivered in
# k + 1 (the softirq deferred to ksoftirqd past the boundary on a stalled
# host): the two epochs' drops are off by d and -d while the run's sums
# stay exact. Such pairs are said and not compared one by one.
delta = {d["seq"]: (sock(d)["drops_rcvbuf"] or 0) - (sent.get(d["seq"], 0) - read.get(d["seq"], 0))
         for d in epochs}
shifted = set()
for k in delta:
    if delta[k] and delta.get(k + 1) == -delta[k]:
        shifted |= {k, k + 1}
# The same after an epoch whose workers crossed its edges: that epoch is
# not compared, so its d does not show; the extra drops in k do (CI: 23 of
# 43848 after such an epoch).
by_seq = {d["seq"]: d for d in epochs}
for k in delta:
    if delta[k] > 0 and k - 1 in by_seq and not kept_window(by_seq[k - 1]):
        shifted.add(k)

def clean(d):
    return kept_window(d) and d["seq"] not in shifted

def fail(msg):
    global ok
    print("FAIL " + msg)
    ok = False

print("epoch sampled    sent    read  pkts_in pkts_out    drops  rcvbuf  queue  napi_pkts  tids  rx_oncpu_ms")
drops_sum = 0
a_next = 1     # stage A: the first sampled epoch >= a_next, then a_every on
a_timed = False  # a stage A epoch with traffic has been (softirqs timed)
for d in epochs:
    k = d["seq"]
    s = next(x for x in d["sockets"] if x["port"] == port)
    want = (k - 1) % every == 0
    want_a = want and k >= a_next
    if want_a:
        a_next = k + a_every
    n_s, n_r = sent.get(k, 0), read.get(k, 0)
    ok_window = clean(d)
    napi = None if d["napi"] is None else sum(n["pkts"] for n in d["napi"] if n["dev"] == "(backlog)")
    print(f"{k:5d} {str(d['net_sampled']):7s} {n_s:7d} {n_r:7d} {str(s['pkts_in']):>8s} "
          f"{str(s['pkts_out']):>8s} {str(s['drops']):>8s} {str(s['drops_rcvbuf']):>7s} "
          f"{str(s['queue_pkts_delta']):>6s} {str(napi):>10s} {str(s['tids']):5s} "
          f"{(s['receiver_oncpu_ns'] or 0) / 1e6:8.1f}"
          + ("" if ok_window else "  (packets across the epoch's edge: counts not compared)"))
    if d["net_sampled"] != want or d["net_probe_every"] != every:
        fail(f"epoch {k}: net_sampled {d['net_sampled']}, expected {want}")
    if d["net_stage_a"] != want_a or d["net_stage_a_every"] != a_every:
        fail(f"epoch {k}: net_stage_a {d['net_stage_a']}, expected {want_a}")
    if d["net_sampled_seq"] != k - (k - 1) % every:
        fail(f"epoch {k}: net_sampled_seq {d['net_sampled_seq']}")
    if every > 1 and (not d["net_detach_ns"] or (k >= every and not d["net_attach_ns"])):
        fail(f"epoch {k}: attach/detach times missing")
    if s["drops"] is None or s["drops_rcvbuf"] is None or s["drops_by_reason"] is None:
        fail(f"epoch {k}: drops not reported")
        continue
    drops_sum += s["drops_rcvbuf"]
    if s["drops"] != s["drops_rcvbuf"]:
        fail(f"epoch {k}: drops {s['drops']} != drops_rcvbuf {s['drops_rcvbuf']}")
    # Every arrival was either read within the epoch or dropped.
    if ok_window and not (s["drops"] == s["drops_rcvbuf"] == n_s - n_r):
        fail(f"epoch {k}: drops {s['drops']} / rcvbuf {s['drops_rcvbuf']} != sent - read {n_s - n_r}")
    if s["drops_by_reason"].get("SOCKET_RCVBUFF", 0) != s["drops_rcvbuf"]:
        fail(f"epoch {k}: drops_by_reason {s['drops_by_reason']}")
    if want and ok_window:
        if s["pkts_in"] != n_s or s["pkts_out"] != n_r or s["pkts_enqueued"] != n_r:
            fail(f"epoch {k}: sampled counts in {s['pkts_in']} out {s['pkts_out']} "
                 f"enq {s['pkts_enqueued']} != sent {n_s}, read {n_r}")
        if want_a and (napi is None or napi < n_s):
            fail(f"epoch {k}: backlog NAPI packets {napi} < sent {n_s}")
        if not want_a and d["napi"] is not None:
            fail(f"epoch {k}: napi reported in a sampled epoch without stage A")
        if not want_a and n_s and a_timed and \
           not any((c["softirq_frac"] or 0) > 0 for c in d["cpus"]):
            fail(f"epoch {k}: no NET_RX softirq share estimated (per CPU: {[c['softirq_frac'] for c in d['cpus']]})")
        if n_r and not (s["cpu_ns_per_pkt"] and s["cpu_ns_per_pkt"] > 0):
            fail(f"epoch {k}: no CPU time per packet")
        if s["queue_pkts_delta"] is not None and \
           s["pkts_in"] - s["pkts_out"] - s["drops"] != s["queue_pkts_delta"]:
            fail(f"epoch {k}: queue change {s['queue_pkts_delta']} != in - out - drops")
    elif not want:
        for key in ("pkts_in", "pkts_out", "pkts_enqueued", "bytes_in", "queue_pkts_delta",
                    "truesize_per_pkt_bytes", "cpu_ns_per_pkt"):
            if s[key] is not None:
                fail(f"epoch {k}: {key} {s[key]} reported in an epoch not sampled")
        if d["napi"] is not None:
            fail(f"epoch {k}: napi reported in an epoch not sampled")
        if any(c["softirq_frac"] is not None for c in d["cpus"]):
            fail(f"epoch {k}: softirq_frac reported in an epoch not sampled")
    a_timed = a_timed or (want_a and n_s > 0)
    # The receiver is known from the first sampled epoch with traffic on.
    if n_r and k > 4 and not (s["tids"] and s["receiver_oncpu_ns"]):
        fail(f"epoch {k}: receiver thread or its CPU time not reported")
print(f"sent {sum(sent.values())}, read {sum(read.values())}; "
      f"UdpInDatagrams +{indg}, UdpRcvbufErrors +{rcvbuf_err}; probes' drops {drops_sum}; "
      f"backlog drops (all CPUs) +{backlog}")
if drops_sum != rcvbuf_err:
    fail("drops over the run != UdpRcvbufErrors")
if rcvbuf_err + backlog != sum(sent.values()) - sum(read.values()):
    fail("UdpRcvbufErrors + backlog drops != sent - read")
if indg != sum(read.values()):
    fail("UdpInDatagrams != packets read")
if min(sent.get(k, 1) - read.get(k, 0) for k in sent) <= 0:
    fail("an epoch without drops: the receiver kept up")
if not ok:
    sys.exit(1)
if sum(1 for d in epochs if d["net_sampled"] and sent.get(d["seq"]) and clean(d)) < 3:
    print("fewer than 3 sampled epochs with traffic in which the workers kept to their windows")
    sys.exit(3)
sys.exit(0)
PY
}

for try in 1 2 3; do
	attempt $try
	rc=$?
	[ $rc -eq 3 ] || exit $rc
	echo "measure_sampled: attempt $try: the host stalled the workers too often; again"
done
echo "FAIL: in 3 attempts, never 3 sampled epochs in which the workers kept to their windows"
exit 1
