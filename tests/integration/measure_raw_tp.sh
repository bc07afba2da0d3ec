#!/usr/bin/env bash
# The raw_tp fallback against tp_btf: two collectors, one forced to each
# variant, watch the same workload at the same time - 2 stress-ng --cpu
# workers pinned to CPU 1, a UDP flood over veth into a small receive buffer
# (as in measure_udp_drops.sh) and fio random reads.
#
# Checked: both count the same packets in, out and dropped (exactly, and
# equal to the kernel's UdpInDatagrams / UdpRcvbufErrors), the same
# workers' CPU-bound weight on CPU 1 (2 +- 0.2 each, within 0.1 of each
# other), the same fio disk accesses (within 2 %) and disk service rate
# over the run (within 10 %), the same backlog NAPI packets (within 2 %: other traffic
# on the machine lands between their reads), and each reports its own
# programs' cost (*_btf, *_raw).
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/netpair.inc"
. "$(dirname "$0")/measure.inc"
measure_need measure_raw_tp 2 "" ip stress-ng fio pgrep
for mode in tp_btf raw_tp; do
	"$daemon" --measure-only --epochs 1 --interval-ms 100 --attach $mode --json 2>/dev/null |
		python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); sys.exit(0 if len(d["probes"]) == 4 else 1)' ||
		{ echo "measure_raw_tp: $mode probes cannot be loaded here" >&2; exit 77; }
done

measure_pair meas-raw 10.253.0 /var/tmp
port=$((30000 + ($$ + 7) % 30000))
fio --name=prep --filename="$tmp/data" --size=256M --rw=write --bs=1M --direct=1 \
	--output=/dev/null || { echo "measure_raw_tp: no scratch file" >&2; exit 77; }

cat > "$tmp/rx.py" <<'PY'
import os, socket, sys, time
port, ctl = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
s.bind(("0.0.0.0", port))
open(ctl + ".ready", "w").close()
s.settimeout(0.05)
got = 0
while not os.path.exists(ctl + ".stop"):
    try:
        s.recv(2048)
        got += 1
    except socket.timeout:
        continue
    time.sleep(0.0005)
s.setblocking(False)
while True:
    try:
        s.recv(2048)
        got += 1
    except BlockingIOError:
        break
open(ctl + ".got", "w").write(str(got))
PY
cat > "$tmp/tx.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end, buf = time.monotonic() + 2, b"x" * 200
while time.monotonic() < end:
    for _ in range(100):
        s.sendto(buf, (sys.argv[1], int(sys.argv[2])))
PY

ip netns exec $ns_b python3 "$tmp/rx.py" $port "$tmp/ctl" &
pids+=($!)
for _ in $(seq 100); do [ -e "$tmp/ctl.ready" ] && break; sleep 0.05; done
stress-ng --cpu 2 --taskset 1 --timeout 60 --quiet &
sp=$!
pids+=($sp)
for _ in $(seq 50); do [ "$(pgrep -P $sp | wc -l)" -ge 2 ] && break; sleep 0.1; done
pgrep -P $sp > "$tmp/workers"
read -r in0 rb0 < <(ip netns exec $ns_b awk '/^Udp: [0-9]/ { print $2, $6 }' /proc/net/snmp)

for mode in tp_btf raw_tp; do
	"$daemon" --measure-only --epochs 7 --interval-ms 1000 --watch-port $port \
		--attach $mode --json --tasks > "$tmp/$mode.json" &
	pids+=($!)
	m+=($!)
done
# Both attached once both have printed an epoch.
for _ in $(seq 100); do
	[ -s "$tmp/tp_btf.json" ] && [ -s "$tmp/raw_tp.json" ] && break
	sleep 0.05
done
fio --name=rxbt --filename="$tmp/data" --size=256M --rw=randread --direct=1 \
	--ioengine=psync --bs=128k --runtime=4 --time_based --output-format=json \
	--output="$tmp/fio.json" &
pids+=($!)
ip netns exec $ns_a python3 "$tmp/tx.py" 10.253.0.2 $port
touch "$tmp/ctl.stop"
wait "${pids[0]}"
wait "${m[@]}" || { echo "measure_raw_tp: rxbneckd failed" >&2; exit 1; }
read -r in1 rb1 < <(ip netns exec $ns_b awk '/^Udp: [0-9]/ { print $2, $6 }' /proc/net/snmp)
echo "$((in1 - in0)) $((rb1 - rb0))" > "$tmp/snmp"

python3 - "$tmp" "$port" <<'PY'
import json, statistics, sys
tmp, port = sys.argv[1], int(sys.argv[2])
indg, rcvbuf_err = map(int, open(f"{tmp}/snmp").read().split())
workers = {int(x) for x in open(f"{tmp}/workers").read().split()}
fio_ios = json.load(open(f"{tmp}/fio.json"))["jobs"][0]["read"]["total_ios"]
res = {}
for mode in ("tp_btf", "raw_tp"):
    r = dict(pkts_in=0, pkts_out=0, drops=0, drops_rcvbuf=0, backlog=0, access=0,
             weights=[], done=0, service_ns=0.0, progs=set())
    for line in open(f"{tmp}/{mode}.json"):
        d = json.loads(line)
        assert d["attach_mode"] == mode, d["attach_mode"]
        s = next(x for x in d["sockets"] if x["port"] == port)
        for k in ("pkts_in", "pkts_out", "drops", "drops_rcvbuf"):
            r[k] += s[k]
        r["backlog"] += sum(n["pkts"] for n in d["napi"] if n["dev"] == "(backlog)")
        w = sum(x["w"] for t in d["tasks"] if t["tid"] in workers and t["class"] == "cpu"
                for x in t["weights"] if x["cpu"] == 1)
        r["weights"].append(w)
        for t in d["tasks"]:
            if t["comm"] == "fio" and t["class"] == "io":
                r["access"] += max(t["iowaits"], t["disk_reqs"])
        # The disk's rate over the whole run, not a median of epochs: the
        # two collectors' epochs start at different times, and per-epoch
        # rates under a busy hypervisor differed by 13 % in medians.
        if d["disk"]["valid"] and d["disk"]["completions"]:
            r["done"] += d["disk"]["completions"]
            r["service_ns"] += d["disk"]["completions"] * d["disk"]["mean_service_ns"]
        r["progs"].update(p["prog"] for p in d["probe_cost"] if p["run_cnt"])
    r["rate"] = r["done"] / r["service_ns"] * 1e9 if r["service_ns"] else 0
    res[mode] = r
b, w = res["tp_btf"], res["raw_tp"]
ok = True
print(f"kernel: UdpInDatagrams +{indg}, UdpRcvbufErrors +{rcvbuf_err}; fio {fio_ios} I/Os")
for mode, r in res.items():
    print(f"{mode:7s} in {r['pkts_in']} out {r['pkts_out']} drops {r['drops']} "
          f"rcvbuf {r['drops_rcvbuf']} backlog {r['backlog']} workers "
          f"{statistics.median(r['weights']):.2f} fio accesses {r['access']} "
          f"disk rate {r['rate']:.0f}/s over {r['done']} completions")
for k in ("pkts_in", "pkts_out", "drops", "drops_rcvbuf"):
    if b[k] != w[k]:
        print(f"FAIL: {k} differs: tp_btf {b[k]}, raw_tp {w[k]}")
        ok = False
if b["pkts_out"] != indg or b["drops_rcvbuf"] != rcvbuf_err:
    print("FAIL: the counts do not match the kernel's UDP counters")
    ok = False
mb, mw = statistics.median(b["weights"]), statistics.median(w["weights"])
if abs(mb - 2) > 0.2 or abs(mw - 2) > 0.2 or abs(mb - mw) > 0.1:
    print("FAIL: CPU-bound weight of the 2 workers differs")
    ok = False
if not b["access"] or abs(w["access"] / b["access"] - 1) > 0.02:
    print("FAIL: fio disk accesses differ by more than 2 %")
    ok = False
if not b["rate"] or not w["rate"] or abs(w["rate"] / b["rate"] - 1) > 0.1:
    print("FAIL: disk service rates differ by more than 10 %")
    ok = False
if not b["backlog"] or abs(w["backlog"] / b["backlog"] - 1) > 0.02:
    print("FAIL: backlog NAPI packets differ by more than 2 %")
    ok = False
if not all(p.endswith("_btf") for p in b["progs"]) or not all(p.endswith("_raw") for p in w["progs"]):
    print(f"FAIL: program variants: {sorted(b['progs'])} / {sorted(w['progs'])}")
    ok = False
sys.exit(0 if ok else 1)
PY
