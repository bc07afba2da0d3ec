#!/usr/bin/env bash
# Overhead of the measurement probes on the receive path.
#
# Maximum UDP receive throughput (iperf3 -u -b 0) over a veth pair between
# two private network namespaces, with the probes attached (rxbneckd
# --measure-only watching the iperf3 port, as the daemon would run) and
# detached, in the same run. Throughput on this shared 2-CPU machine moves by
# +-15 % from one second to the next with what else runs, so one long iperf3
# run is cut into 1-second intervals (the server's own report) while the
# probes are switched on and off every few seconds; each attached second is
# compared with the detached seconds around it, and the median of these
# ratios is the overhead figure (target >= 0.97). A last phase with BPF
# run-time statistics on gives each program's events and average ns per
# event (those include the statistics' own clock reads).
#
# Needs root, iperf3, python3, ip. Run by `make bench` under the heavy-test
# lock; by hand: flock /tmp/rxbneck-heavy.lock bash bench/overhead.sh
#   SECS total iperf3 seconds (default 60), PERIOD seconds per on/off window
#   (4), LEN datagram bytes (1400), PROBES groups (all), NET_EVERY the
#   collector's --net-probe-every (default 1; [measure] net_probe_every).
#
# With NET_EVERY = N > 1 the per-packet probes are attached for one 1-s
# epoch in N, so an attached window's seconds differ: the figure is then the
# mean rate over whole attached windows (PERIOD should be a multiple of N)
# against the mean of the detached seconds around each, as a median over
# the windows; the per-second median would only see unsampled seconds.
# Use PERIOD >= 2 N (e.g. NET_EVERY=8 PERIOD=16) so a window holds whole
# cycles after its 1-s margins.
set -u
build=${RXB_BUILD:-build}
daemon=$build/rxbneckd
secs=${SECS:-60}
period=${PERIOD:-4}
len=${LEN:-1400}
net_every=${NET_EVERY:-1}
case $net_every in ''|*[!0-9]*|0) echo "overhead: NET_EVERY must be a whole number >= 1" >&2; exit 2 ;; esac

if [ "$(id -u)" -ne 0 ]; then echo "overhead: SKIPPED, needs root"; exit 0; fi
for t in iperf3 python3 ip; do
	command -v $t >/dev/null || { echo "overhead: SKIPPED, no $t"; exit 0; }
done
[ -x "$daemon" ] || { echo "overhead: no $daemon (make first)"; exit 1; }

ns_a=rxbt-ova-$$ ns_b=rxbt-ovb-$$ port=$((20000 + $$ % 20000))
tmp=$(mktemp -d /tmp/rxbt-overhead.XXXXXX)
cleanup() {
	[ -s "$tmp/iperf.pid" ] && kill "$(cat "$tmp/iperf.pid")" 2>/dev/null
	ip netns del $ns_a 2>/dev/null
	ip netns del $ns_b 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add $ns_a && ip netns add $ns_b || exit 1
ip link add va$$ netns $ns_a type veth peer name vb$$ netns $ns_b || exit 1
ip -n $ns_a addr add 10.251.0.1/24 dev va$$
ip -n $ns_b addr add 10.251.0.2/24 dev vb$$
ip -n $ns_a link set va$$ up && ip -n $ns_b link set vb$$ up || exit 1

# Receiver on CPU 1, sender on CPU 0 (when there are two CPUs). nice -20:
# other work on the machine (nice 0) then barely moves the result.
rx_cpu=$(( $(nproc) > 1 ? 1 : 0 ))
ip netns exec $ns_b nice -n -20 iperf3 -s -J -p $port -A $rx_cpu -D -I "$tmp/iperf.pid" || exit 1
for _ in $(seq 50); do [ -s "$tmp/iperf.pid" ] && break; sleep 0.1; done
sleep 0.3

python3 - "$daemon" "$ns_a" "$port" "$secs" "$period" "$len" "$tmp" "${PROBES:-all}" "$net_every" <<'PY'
import json, os, signal, statistics, subprocess, sys, time

daemon, ns_a, port, secs, period, length, tmp, probes, net_every = sys.argv[1:10]
secs, period, net_every = int(secs), float(period), int(net_every)

def start_probes(extra):
    """rxbneckd attached; returns (process, time the probes were attached)."""
    # The daemon's own epoch length, so its reading costs what it would.
    p = subprocess.Popen([daemon, "--measure-only", "--epochs", "1000000",
                          "--interval-ms", "1000", "--watch-port", port,
                          "--probes", probes, "--net-probe-every", str(net_every),
                          "--json"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdout.readline()                  # first epoch: attached 1 s ago
    return p, time.monotonic() - 1.0

def stop_probes(p):
    p.send_signal(signal.SIGINT)
    p.stdout.close()
    p.wait()
    return time.monotonic()

client = subprocess.Popen(["ip", "netns", "exec", ns_a, "nice", "-n", "-20", "iperf3",
                           "-c", "10.251.0.2", "-p", port, "-A", "0", "-u", "-b", "0",
                           "-l", length, "-t", str(secs), "-i", "1", "-J",
                           "--get-server-output"], stdout=subprocess.PIPE, text=True)
t0 = time.monotonic()
windows = []                             # (start, end) with probes attached
deadline = t0 + secs
time.sleep(period)
while time.monotonic() + 2 * period < deadline:
    p, on = start_probes(["--no-bpf-stats"])
    time.sleep(max(0.0, on + period - time.monotonic()))
    windows.append((on, stop_probes(p)))
    time.sleep(period)
out = json.loads(client.communicate()[0])

# The server's per-second report; its clock starts when the test starts,
# within a few ms of t0 (connection set-up) - a margin absorbs that.
margin = 0.15
rows = []
for iv in out["server_output_json"]["intervals"]:
    s = iv["sum"]
    a, b = t0 + s["start"], t0 + s["end"]
    if b - a < 0.9:
        continue
    rate = s["bytes"] * 8 / (b - a) / 1e6
    on = any(w0 + margin <= a and b <= w1 - margin for w0, w1 in windows)
    off = all(b <= w0 - margin or a >= w1 + margin for w0, w1 in windows)
    if on or off:
        rows.append((a, rate, on))

ratios = []
for i, (a, rate, on) in enumerate(rows):
    if not on:
        continue
    near = [r for t, r, o in rows if not o and abs(t - a) <= 2 * period + 1]
    if near:
        ratios.append(rate / statistics.median(near))
offs = [r for _, r, o in rows if not o]
ons = [r for _, r, o in rows if o]
# Whole windows: the sampled and unsampled seconds of each together.
wratios = []
for w0, w1 in windows:
    inside = [r for t, r, o in rows if o and w0 <= t <= w1]
    near = [r for t, r, o in rows if not o and (w0 - period - 1 <= t <= w1 + period + 1)]
    # At least one whole sampling cycle inside the window's margins.
    if len(inside) >= min(net_every, period - 2) and near:
        wratios.append(statistics.mean(inside) / statistics.mean(near))
if wratios:
    print("per attached window (mean rate / mean of the detached seconds around it): "
          "median %.3f, min %.3f, max %.3f, n=%d"
          % (statistics.median(wratios), min(wratios), max(wratios), len(wratios)))
if net_every > 1:
    print("per-packet probes one epoch in %d: the figure is per window" % net_every)
    ratios = wratios
if not ratios:
    print("overhead: no usable intervals")
    sys.exit(1)
q = statistics.quantiles(ratios, n=4) if len(ratios) >= 4 else [min(ratios), 0, max(ratios)]
ratio = statistics.median(ratios)
print("seconds detached %d (median %.1f Mbit/s), attached %d (median %.1f Mbit/s)"
      % (len(offs), statistics.median(offs), len(ons), statistics.median(ons)))
print("attached/nearby-detached ratios: median %.3f, quartiles %.3f..%.3f, n=%d"
      % (ratio, q[0], q[-1], len(ratios)))
print("RESULT throughput ratio attached/detached = %.3f (target >= 0.97: %s)"
      % (ratio, "met" if ratio >= 0.97 else "NOT met"))

# Cost per event, from the kernel's BPF run-time statistics.
client = subprocess.Popen(["ip", "netns", "exec", ns_a, "nice", "-n", "-20", "iperf3",
                           "-c", "10.251.0.2", "-p", port, "-A", "0", "-u", "-b", "0",
                           "-l", length, "-t", "6"], stdout=subprocess.DEVNULL)
time.sleep(1)
p = subprocess.Popen([daemon, "--measure-only", "--epochs", "3", "--interval-ms", "1000",
                      "--watch-port", port, "--probes", probes, "--json"],   # every epoch sampled
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
lines = p.communicate()[0].splitlines()
client.wait()
cost = {}
for line in lines:
    for c in json.loads(line)["probe_cost"]:
        r = cost.setdefault(c["prog"], [0, 0])
        r[0] += c["run_cnt"]
        r[1] += c["run_time_ns"]
print("%-26s %12s %10s" % ("program", "events", "avg ns"))
for name, (cnt, ns) in cost.items():
    print("%-26s %12d %10s" % (name, cnt, "%.0f" % (ns / cnt) if cnt else "-"))
PY
