#!/usr/bin/env bash
# I/O-bound tasks and the disk: one fio worker doing random direct reads
# (psync, 512 KiB, queue depth 1) on a scratch file, pinned to the CPU that
# takes the disk's interrupts and run SCHED_FIFO, so that its wakeups are
# not delayed by other work on the machine (fio's latency then is the I/O
# path's, not the run queue's).
#
# Truths from fio itself, same run; the probes watch the whole fio run:
#  - the worker is I/O-bound in every epoch it ran throughout (never
#    CPU-bound) and adds 1 +- 0.2 to io_bound;
#  - its disk accesses counted by the probes (disk waits, or requests it
#    issued when the disk was faster than its going to sleep) match fio's
#    I/O count (+-5 %);
#  - disk.service_rate_per_s (over the run: epochs weighed by their
#    completions, as fio's mean is over I/Os) is within 25 % of 1 / fio's
#    mean completion latency (block_rq_issue -> complete leaves out the
#    CPU time of the syscall and wakeup around it, so it is higher);
#  - its CPU burst per disk access (mu_P-I/O's inverse) matches fio's own
#    user+system CPU time per I/O (+-35 %);
#  - the SRN's cycle, 1/mu_D + 1/mu_P-I/O, matches fio's mean completion
#    latency (+-20 %): the disk time plus the CPU time around it.
# Exit 0 pass, 77 skip, 1 fail.
set -u
. "$(dirname "$0")/measure.inc"
measure_need measure_io 0 "sched blkio" fio chrt taskset

tmp=$(mktemp -d /var/tmp/rxbt-meas-io.XXXXXX)	# on a real disk, not tmpfs
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT

if df --output=fstype "$tmp" | grep -qx tmpfs; then
	echo "measure_io: /var/tmp is tmpfs, no disk to measure" >&2
	exit 77
fi
cat /proc/interrupts > "$tmp/irq.0"
fio --name=prep --filename="$tmp/data" --size=512M --rw=write --bs=1M --direct=1 \
	--output=/dev/null || { echo "measure_io: fio could not write the scratch file" >&2; exit 77; }
cat /proc/interrupts > "$tmp/irq.1"
# Run fio on the CPU that takes the disk's interrupts (the IRQ that grew
# most while writing): completions then wake it without a cross-CPU hop.
io_cpu=$(python3 - "$tmp/irq.0" "$tmp/irq.1" <<'PY'
import sys
def read(path):
    rows = {}
    for line in open(path).readlines()[1:]:
        name, _, rest = line.partition(":")
        counts = []
        for f in rest.split():
            if not f.isdigit():
                break
            counts.append(int(f))
        rows[name.strip()] = counts
    return rows
a, b = read(sys.argv[1]), read(sys.argv[2])
best, cpu = 0, 0
for irq, cur in b.items():
    if not irq.isdigit():
        continue
    old = a.get(irq, [0] * len(cur))
    for c, (x, y) in enumerate(zip(old, cur)):
        if y - x > best:
            best, cpu = y - x, c
print(cpu)
PY
)

# The probes watch the whole fio run (started 1 s after them, 6 s long).
"$daemon" --measure-only --epochs 9 --interval-ms 1000 --json --tasks > "$tmp/meas.json" &
mp=$!
sleep 1
chrt -f 10 taskset -c "${IO_CPU:-$io_cpu}" fio --name=rxbt --filename="$tmp/data" --size=512M \
	--rw=randread --direct=1 --ioengine=psync --bs=512k --numjobs=1 \
	--runtime=6 --time_based --output-format=json --output="$tmp/fio.json" ||
	{ echo "measure_io: fio failed" >&2; kill $mp; exit 1; }
wait $mp || { echo "measure_io: rxbneckd failed" >&2; exit 1; }

python3 - "$tmp" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
job = json.load(open(f"{tmp}/fio.json"))["jobs"][0]
rd = job["read"]
clat_ns = rd["clat_ns"]["mean"]
cpu_per_io_ns = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1e6 / rd["total_ios"]
ok = True
epochs = [json.loads(l) for l in open(f"{tmp}/meas.json")]
# The fio worker: the fio thread that waited for the disk.
worker = None
for d in epochs:
    for t in d["tasks"]:
        if t["comm"] == "fio" and t["iowaits"] > 100:
            worker = t["tid"]
if worker is None:
    print("FAIL: no fio worker waiting for the disk was seen")
    sys.exit(1)
waits, weights, full = 0, [], 0
svc_ns, svc_n, cpu_ns = 0.0, 0, 0
print("epoch  fio class  present  io weight  accesses  service rate/s  burst us")
for d in epochs:
    span = d["end_ns"] - d["start_ns"]
    t = next((t for t in d["tasks"] if t["tid"] == worker), None)
    if t is None:
        continue
    # Disk accesses: its waits, or the requests it issued when the disk
    # finished some before it slept (as the collector counts them).
    acc = max(t["iowaits"], t["disk_reqs"])
    waits += acc
    cpu_ns += t["oncpu_ns"]
    w = sum(x["w"] for x in t["weights"]) if t["class"] == "io" else 0
    rate = d["disk"]["service_rate_per_s"] or 0
    burst = t["oncpu_ns"] / acc if acc else 0
    if rate and t["class"] == "io":
        # fio's latency is a mean over its I/Os: weigh epochs likewise.
        svc_ns += d["disk"]["completions"] * 1e9 / rate
        svc_n += d["disk"]["completions"]
    print(f"{d['seq']:5d}  {t['class']:9s}  {t['present_ns']/span:7.2f}  {w:9.2f}  "
          f"{acc:8d}  {rate:14.0f}  {burst/1e3:8.1f}")
    if t["class"] == "cpu":
        print(f"FAIL epoch {d['seq']}: fio worker counted CPU-bound")
        ok = False
    if t["present_ns"] < 0.99 * span:
        continue			# fio started or ended in this epoch
    full += 1
    if t["class"] != "io":
        print(f"FAIL epoch {d['seq']}: fio worker not I/O-bound")
        ok = False
    weights.append(w)
if full < 4 or not svc_n or not waits:
    print(f"FAIL: only {full} epochs with fio running throughout")
    sys.exit(1)
rate, burst = 1e9 * svc_n / svc_ns, cpu_ns / waits
weight = statistics.median(weights)
print(f"fio: {rd['total_ios']} I/Os, clat mean {clat_ns/1e3:.1f} us -> {1e9/clat_ns:.0f}/s, "
      f"CPU per I/O {cpu_per_io_ns/1e3:.1f} us")
print(f"probes: {waits} disk accesses of the worker, service rate {rate:.0f}/s "
      f"(x clat = {rate*clat_ns/1e9:.3f}), burst {burst/1e3:.1f} us, io weight {weight:.2f}")
if abs(weight - 1) > 0.2:
    print("FAIL: the worker's io_bound weight is not 1 +- 0.2")
    ok = False
if abs(waits / rd["total_ios"] - 1) > 0.05:
    print("FAIL: the worker's disk accesses differ from fio's I/O count by more than 5 %")
    ok = False
if abs(rate * clat_ns / 1e9 - 1) > 0.25:
    print("FAIL: disk.service_rate_per_s not within 25 % of 1/clat")
    ok = False
if abs(burst / cpu_per_io_ns - 1) > 0.35:
    print("FAIL: CPU burst per disk wait not within 35 % of fio's CPU time per I/O")
    ok = False
cycle = (1e9 / rate if rate else 0) + burst
print(f"cycle 1/mu_D + burst = {cycle/1e3:.1f} us vs fio clat {clat_ns/1e3:.1f} us "
      f"(ratio {cycle/clat_ns:.3f})")
if abs(cycle / clat_ns - 1) > 0.2:
    print("FAIL: 1/mu_D + CPU burst not within 20 % of fio's completion latency")
    ok = False
sys.exit(0 if ok else 1)
PY
