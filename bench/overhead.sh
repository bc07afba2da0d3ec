#!/usr/bin/env bash
# Overhead of the measurement probes on the receive path, two ways, each
# against a reference (probes detached) measured in the same run:
#
# 1. Maximum UDP receive throughput (iperf3 -u -b 0) over a veth pair
#    between two private network namespaces. The probes are attached
#    (rxbneckd --measure-only watching the iperf3 port, as the daemon would
#    run) and detached in alternating windows of PERIOD seconds: off, on,
#    off, on, ..., off. Each window's rate is the receiver's own count of
#    datagrams delivered to sockets (Udp InDatagrams of its namespace, read
#    at the window's edges), and each attached window is paired with the
#    mean of the two detached windows around it, which cancels a slow drift
#    of the machine's speed. The paired ratios give the figure: their
#    median with a distribution-free 95 % confidence interval (order
#    statistics), and their mean with a bootstrap 95 % interval.
# 2. CPU cost per packet at a fixed offered rate below saturation (RATE),
#    in the same alternating windows: the CPU time of the sender and the
#    receiver threads (schedstat, ns) and of ksoftirqd, per CPU, and the
#    NET_RX softirq share from /proc/stat, per packet received. Sender and
#    receiver are pinned to CPUs 0 and 1; on veth the receive softirq runs
#    on the sender's CPU, inside its system calls. When the receive path is
#    CPU-bound, throughput is set by the busiest stage, so
#      ratio ~= max over CPUs of cost_off / max over CPUs of (cost_on + daemon)
#    with the daemon's own CPU time per packet charged to the busiest stage
#    (an upper bound of its share). The receive path alone (softirq ticks +
#    receiver threads, the part a host with a real NIC pays) is printed too.
# 3. BPF run-time statistics (kernel.bpf_stats_enabled) over COST_RUNS
#    daemon runs of COST_EPOCHS 1-s epochs of method 1's traffic, every
#    epoch sampled: each program's runs per packet and average ns per run.
#    A run's time includes the statistics' own clock reads and the call into
#    the program (40-90 ns on a VM, as much as a small program's work), so
#    a program that does nothing (build/bench/overhead_nop) is attached to
#    the same tracepoints in the same seconds, and each program's own work
#    is its ns per run minus the reference's. The per-packet programs
#    (PER_PACKET_TPS: the NET_RX softirq's entry and exit, napi_poll, the
#    socket enqueue and dequeue; one run per packet on veth) are judged
#    against COST_TARGET_NS (50) of own work per run: met when every run is
#    at or below, NOT met when every run is above, else not resolved. The
#    scheduler's programs run per context switch or wakeup (0.1-0.5 per
#    packet here) and are printed with their runs per packet.
# 4. The daemon's steady state, one epoch in N sampled (N = STEADY_N, the
#    daemon's default 32), from short windows. Method 1 at NET_EVERY = N
#    needs windows of N s (whole sampling cycles), a few dozen pairs an
#    hour, and on this VM a pair's ratio scatters by ~6 % whatever the
#    window length. A cycle of N 1-s epochs is N - 2 unsampled epochs (the
#    per-packet programs detached) and one unsampled epoch followed by a
#    sampled one (attached at the end of the first, detached at the end of
#    the second): exactly the cycle of N = 2. So, with the maximum-
#    throughput ratios of two kinds of attached windows of STEADY_PERIOD s
#    (alternating with detached ones, three U windows to one T):
#      U: --net-probe-every 3600, the per-packet programs detached (they
#         are attached only in the daemon's first epoch, before the window);
#      T: --net-probe-every 2, a sampling cycle every 2 s;
#    the steady state's ratio is  (1 - 2/N) mean(U) + (2/N) mean(T),  with a
#    bootstrap 95 % interval (pairs resampled within each kind). The
#    sampling's and the attach/detach's whole cost is in T, measured, not
#    assumed; the only assumption is that an epoch's cost does not reach
#    into epochs a cycle away. 2 (mean(U) - mean(T)) is printed too: what
#    one sampling cycle (a sampled epoch, an attach, a detach) costs, in
#    seconds of detached throughput.
#
# Needs root, iperf3, python3, ip. Run by `make bench` under the heavy-test
# lock; by hand: flock /tmp/rxbneck-heavy.lock bash bench/overhead.sh
# Environment:
#   SECS      seconds of method 1 (default 600: with 8-s windows, about
#             30 pairs, enough for an interval about 2 % wide)
#   CPU_SECS  seconds of method 2 (default 90)
#   PERIOD    seconds per attached or detached window (default 3 when
#             NET_EVERY and STAGE_A_EVERY are 1, else NET_EVERY x
#             STAGE_A_EVERY: whole sampling cycles)
#   RATE      method 2's offered rate in Mbit/s (default 0.5 x method 1's
#             detached median; 0.5 x a 4-s calibration if method 1 is off)
#   LEN       datagram bytes (1400)
#   PROBES    probe groups (all)
#   NET_EVERY the collector's --net-probe-every (default 1; [measure]
#             net_probe_every): per-packet programs attached one epoch in N.
#             PERIOD must then be a multiple of N, so each attached window
#             holds whole sampling cycles.
#   STAGE_A_EVERY  the collector's --stage-a-every in methods 1, 2 and 4
#             (default 8, the daemon's COLLECT_STAGE_A_EVERY): stage A's
#             programs (NET_RX softirq entry/exit, napi_poll) in one
#             sampled epoch in M, the socket programs in each. Method 3
#             attaches every program in every epoch.
#   METHODS   which of rate,cpu,cost,steady to run (default rate,cpu,cost,steady)
#   COST_RUNS, COST_EPOCHS  method 3's daemon runs (5) and epochs per run (3)
#   STEADY_N  method 4's sampling (default 32, [measure] net_probe_every's
#             default; at least 2)
#   STEADY_SECS     seconds of method 4 (default 240)
#   STEADY_PERIOD   its windows, seconds (default 4: two sampling cycles
#             of the T windows; even)
#   TARGET    the ratio to judge against (0.97)
#   OUT       also write every window and every pair to this JSON file, with
#             a fingerprint of the probe code, so that runs of the same code
#             can be pooled (bench/overhead_pool.py)
# A verdict is "met" when the interval's lower end is >= TARGET, "NOT met"
# when its upper end is below, else "not resolved".
set -u
. "$(dirname "$0")/../tests/integration/netpair.inc"
build=${RXB_BUILD:-build}
daemon=$build/rxbneckd
secs=${SECS:-600}
cpu_secs=${CPU_SECS:-90}
len=${LEN:-1400}
net_every=${NET_EVERY:-1}
case $net_every in ''|*[!0-9]*|0) echo "overhead: NET_EVERY must be a whole number >= 1" >&2; exit 2 ;; esac
a_every=${STAGE_A_EVERY:-8}
case $a_every in ''|*[!0-9]*|0) echo "overhead: STAGE_A_EVERY must be a whole number >= 1" >&2; exit 2 ;; esac
if [ $((net_every * a_every)) -eq 1 ]; then period=${PERIOD:-3}; else period=${PERIOD:-$((net_every * a_every))}; fi
case $period in ''|*[!0-9]*|0) echo "overhead: PERIOD must be a whole number >= 1" >&2; exit 2 ;; esac
if [ $((period % net_every)) -ne 0 ]; then
	echo "overhead: PERIOD ($period) must be a multiple of NET_EVERY ($net_every)" >&2; exit 2
fi
steady_n=${STEADY_N:-32}
case $steady_n in ''|*[!0-9]*|0|1) echo "overhead: STEADY_N must be a whole number >= 2" >&2; exit 2 ;; esac
steady_secs=${STEADY_SECS:-240}
steady_period=${STEADY_PERIOD:-4}
case $steady_period in ''|*[!0-9]*|0) echo "overhead: STEADY_PERIOD must be a whole number >= 2" >&2; exit 2 ;; esac
if [ $((steady_period % 2)) -ne 0 ]; then
	echo "overhead: STEADY_PERIOD ($steady_period) must be even: whole cycles of N = 2" >&2; exit 2
fi
rate=${RATE:-0}
cost_runs=${COST_RUNS:-5}
cost_epochs=${COST_EPOCHS:-3}
case $cost_runs$cost_epochs in *[!0-9]*|'') echo "overhead: COST_RUNS and COST_EPOCHS must be whole numbers" >&2; exit 2 ;; esac
[ "$cost_runs" -ge 1 ] && [ "$cost_epochs" -ge 1 ] || { echo "overhead: COST_RUNS and COST_EPOCHS must be >= 1" >&2; exit 2; }
methods=${METHODS:-rate,cpu,cost,steady}
target=${TARGET:-0.97}
out=${OUT:-}
src=$(cd "$(dirname "$0")/.." && pwd)
# What the probes' cost depends on: the BPF programs, their loaders and the
# collector that attaches and reads them.
probe_sha=$(cat "$src"/bpf/*.bpf.c "$src"/bpf/*.h "$src"/bpf/*.c "$src"/daemon/collect/collect*.c \
	"$src"/daemon/collect/sampling.c |
	sha256sum | cut -c1-16)
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$out" ] && ! : 2>/dev/null >>"$out"; then
	echo "overhead: cannot write OUT=$out" >&2; exit 2
fi

if [ "$(id -u)" -ne 0 ]; then echo "overhead: SKIPPED, needs root"; exit 0; fi
for t in iperf3 python3 ip; do
	command -v $t >/dev/null || { echo "overhead: SKIPPED, no $t"; exit 0; }
done
[ -x "$daemon" ] || { echo "overhead: no $daemon (make first)"; exit 1; }
[ -x "$build/bench/overhead_nop" ] || { echo "overhead: no $build/bench/overhead_nop (make first)"; exit 1; }

ns_a=rxbt-ova-$$ ns_b=rxbt-ovb-$$ port=$((20000 + $$ % 20000))
tmp=$(mktemp -d /tmp/rxbt-overhead.XXXXXX)
cleanup() {
	[ -s "$tmp/iperf.pid" ] && kill "$(cat "$tmp/iperf.pid")" 2>/dev/null
	netpair_down $ns_a $ns_b
	rm -rf "$tmp"
}
trap cleanup EXIT

netpair_up $ns_a $ns_b va$$ vb$$ 10.251.0 || exit 1

# Receiver on CPU 1, sender on CPU 0 (when there are two CPUs). nice -20:
# other work on the machine (nice 0) then barely moves the result.
rx_cpu=$(( $(nproc) > 1 ? 1 : 0 ))
ip netns exec $ns_b nice -n -20 iperf3 -s -J -p $port -A $rx_cpu -D -I "$tmp/iperf.pid" || exit 1
for _ in $(seq 50); do [ -s "$tmp/iperf.pid" ] && break; sleep 0.1; done
sleep 0.3

RXB_BENCH_DIR=$src/bench python3 - "$daemon" "$ns_a" "$port" "$secs" "$cpu_secs" "$period" \
	"$len" "$tmp" "${PROBES:-all}" "$net_every" "$rate" "$methods" "$target" "$rx_cpu" \
	"$out" "$probe_sha" "$commit" "$steady_n" "$steady_secs" "$steady_period" \
	"$cost_runs" "$cost_epochs" "$build/bench/overhead_nop" "$a_every" <<'PY'
import functools, json, os, signal, statistics, subprocess, sys, threading, time

_print = functools.partial(print, flush=True)     # progress as it comes
result_lines = []

def print(*a, **k):
    """print(), and RESULT lines kept for the summary at the end."""
    line = " ".join(str(x) for x in a)
    if line.startswith("RESULT"):
        result_lines.append(line)
    _print(*a, **k)
sys.path.insert(0, os.environ["RXB_BENCH_DIR"])
import overhead_stats as ost
(daemon, ns_a, port, secs, cpu_secs, period, length, tmp, probes, net_every,
 rate, methods, target, rx_cpu, out_path, probe_sha, commit, steady_n, steady_secs,
 steady_period, cost_runs, cost_epochs, nop_bin, a_every) = sys.argv[1:25]
a_every = int(a_every)
steady_n, steady_secs, steady_period = int(steady_n), int(steady_secs), int(steady_period)
cost_runs, cost_epochs = int(cost_runs), int(cost_epochs)
# Method 4's two kinds of attached window (--net-probe-every): the per-packet
# programs detached throughout (the collector's maximum, COLLECT_MAX_NET_PROBE_EVERY),
# and a sampling cycle every 2 epochs.
STEADY_U, STEADY_T = 3600, 2
# Method 3: the tracepoints that fire once per packet on the bench's path
# (on veth every datagram is its own NET_RX softirq and poll), whose
# programs are judged against COST_TARGET_NS of own work per run.
PER_PACKET_TPS = ("softirq_entry", "softirq_exit", "napi_poll", "sk_data_ready",
                  "sock_recv_length")
COST_TARGET_NS = 50
secs, cpu_secs, period, length = int(secs), int(cpu_secs), int(period), int(length)
net_every, rate, target, rx_cpu = int(net_every), float(rate), float(target), int(rx_cpu)
methods = set(methods.split(","))
srv_pid = int(open(os.path.join(tmp, "iperf.pid")).read())
tx_cpu = 0
# What OUT gets: the set-up, then each method's windows and pairs.
record = {"probe_sha": probe_sha, "commit": commit, "probes": probes,
          "net_every": net_every, "stage_a_every": a_every,
          "period_s": period, "len_bytes": length,
          "rx_cpu": rx_cpu, "tx_cpu": tx_cpu, "target": target,
          "start_unix": time.time()}

def window_rows(wins):
    """Each window's readings, with on (attached) and its --net-probe-every."""
    return [dict(d, on=bool(k), every=k or None) for k, d in wins]

# ---------------------------------------------------------------- readings
def udp_in():
    """Datagrams delivered to sockets, and receive-buffer drops, in the
    receiver's namespace."""
    with open("/proc/%d/net/snmp" % srv_pid) as f:
        rows = [l.split() for l in f if l.startswith("Udp:")]
    d = dict(zip(rows[0][1:], map(int, rows[1][1:])))
    return d["InDatagrams"], d["RcvbufErrors"]

def task_ns(pid):
    """CPU time of every thread of @pid (schedstat, ns); 0 if gone."""
    s = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                    s += int(f.read().split()[0])
            except (OSError, ValueError):
                pass
    except OSError:
        pass
    return s

ksoftirqd = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            comm = open("/proc/%s/comm" % d).read().strip()
        except OSError:
            continue
        if comm.startswith("ksoftirqd/"):
            ksoftirqd[int(comm.split("/")[1])] = int(d)

def proc_stat():
    """Per CPU: (softirq ticks, busy ticks) from /proc/stat (USER_HZ)."""
    out = {}
    with open("/proc/stat") as f:
        for l in f:
            if l.startswith("cpu") and l[3].isdigit():
                v = l.split()
                c = int(v[0][3:])
                user, nice, system, idle, iowait, irq, softirq = map(int, v[1:8])
                out[c] = (softirq, user + nice + system + irq + softirq)
    return out

HZ = os.sysconf("SC_CLK_TCK")

def foreign_daemons(ours):
    """Other rxbneckd processes: their probes are attached host-wide, so
    while one runs the "detached" windows are not probe-free."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != ours:
            try:
                if open("/proc/%s/comm" % d).read().strip() == "rxbneckd":
                    out.append(int(d))
            except OSError:
                pass
    return out

disturbed = set()

def bpf_run_ns():
    """Summed run_time_ns of every BPF program: it grows only while BPF
    run-time statistics are on (someone holds them: every program run,
    ours too, then costs two clock reads more). None without bpftool."""
    try:
        out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                             text=True, timeout=10).stdout
        return sum(p.get("run_time_ns", 0) for p in json.loads(out))
    except (OSError, ValueError, subprocess.SubprocessError):
        return None

stats_seen = [0]

def reading(client_pid, daemon_pid):
    disturbed.update(foreign_daemons(daemon_pid))
    pk, drops = udp_in()
    return {"t": time.monotonic(), "pkts": pk, "drops": drops,
            "tx": task_ns(client_pid) + task_ns(ksoftirqd.get(tx_cpu, -1)),
            "rx": task_ns(srv_pid) + (task_ns(ksoftirqd.get(rx_cpu, -1))
                                      if rx_cpu != tx_cpu else 0),
            "srv": task_ns(srv_pid),
            "daemon": task_ns(daemon_pid) if daemon_pid else 0,
            "stat": proc_stat()}

def delta(a, b):
    d = {k: b[k] - a[k] for k in ("t", "pkts", "drops", "tx", "rx", "srv", "daemon")}
    d["sirq_ns"] = sum(b["stat"][c][0] - a["stat"][c][0] for c in b["stat"]) * 1e9 / HZ
    return d

# ---------------------------------------------------------------- probes
def start_probes(every=None):
    """rxbneckd attached, the per-packet programs one epoch in @every
    (default NET_EVERY); returns the process once its first epoch is out
    (the probes have been attached for one epoch)."""
    # Method 4's T windows stand for the steady state's sampled epochs,
    # which have stage A whenever STEADY_N >= STAGE_A_EVERY.
    a = 1 if every == STEADY_T and steady_n >= a_every else a_every
    # The daemon's own epoch length, so its reading costs what it would.
    p = subprocess.Popen([daemon, "--measure-only", "--epochs", "1000000",
                          "--interval-ms", "1000", "--watch-port", port,
                          "--probes", probes, "--net-probe-every",
                          str(every or net_every), "--stage-a-every", str(a),
                          "--json", "--no-bpf-stats"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if not p.stdout.readline():
        sys.exit("overhead: rxbneckd exited before its first epoch")
    # Keep draining its output so it never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
    return p

def stop_probes(p):
    p.send_signal(signal.SIGINT)
    p.wait()

def start_client(mbps):
    c = subprocess.Popen(["ip", "netns", "exec", ns_a, "nice", "-n", "-20", "iperf3",
                          "-c", "10.251.0.2", "-p", port, "-A", str(tx_cpu), "-u",
                          "-b", "%dM" % mbps if mbps else "0", "-l", str(length),
                          "-t", "86400"]
                         # A fixed rate in small bursts (100 us apart), so the
                         # socket queue absorbs them.
                         + (["--pacing-timer", "100"] if mbps else []),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)                  # connection set-up and first packets
    return c

def stop_client(c):
    c.send_signal(signal.SIGINT)
    try:
        c.wait(timeout=10)
    except subprocess.TimeoutExpired:
        c.kill()
        c.wait()
    time.sleep(0.5)                  # the server gets ready for the next test

def alternate(client, total, kinds=(None,), win=None):
    """off, on, off, ..., off windows of @win s (default PERIOD) within
    about @total s; the attached ones run the daemon with
    --net-probe-every @kinds[0], @kinds[1], ... in turn (None: NET_EVERY).
    Returns [(kind, delta)], kind False for a detached window."""
    wins = []
    win = win or period
    end = time.monotonic() + total
    on, n_on = False, 0
    while True:
        kind = (kinds[n_on % len(kinds)] or net_every) if on else False
        p = start_probes(kind) if on else None
        a = reading(client.pid, p.pid if p else 0)
        time.sleep(win)
        r1 = bpf_run_ns()
        b = reading(client.pid, p.pid if p else 0)
        r2 = bpf_run_ns()
        if r1 is not None and r2 is not None and r2 > r1:
            stats_seen[0] += 1
        if p:
            stop_probes(p)
            n_on += 1
        wins.append((kind, delta(a, b)))
        # Always end on a detached window; an attached one needs ~2 s more
        # for the daemon's start (program load and first epoch).
        if not on and time.monotonic() + 2 * win + 3 > end:
            return wins
        on = not on

def pairs(wins, f, kind=None):
    """Each attached window's f() (of @kind only, if given) against the
    mean of its two detached neighbours: [(on value, off value)]."""
    out = []
    for i in range(1, len(wins) - 1):
        if wins[i][0] and not wins[i - 1][0] and not wins[i + 1][0] and \
           kind in (None, wins[i][0]):
            out.append((f(wins[i][1]), (f(wins[i - 1][1]) + f(wins[i + 1][1])) / 2))
    return out

# ---------------------------------------------------------------- statistics
def report(name, ratios):
    return ost.report(name, ratios, target)

print("overhead: probes %s, %d-byte datagrams, methods %s; rate and cpu: per-packet programs "
      "one epoch in %d, stage A's in one of those in %d, %d-s windows"
      % (probes, length, ",".join(sorted(methods)), net_every, a_every, period))
if foreign_daemons(0):
    print("WARNING: another rxbneckd is running (pids %s): the detached windows will not be "
          "probe-free" % " ".join(map(str, foreign_daemons(0))))

def valid():
    return " [INVALID: another rxbneckd ran]" if disturbed else ""

mbps = lambda d: d["pkts"] * length * 8 / d["t"] / 1e6

# ---------------------------------------------------------------- method 1
off_mbps = None
if "rate" in methods:
    client = start_client(0)
    wins = alternate(client, secs)
    stop_client(client)
    pr = pairs(wins, mbps)
    offs = [mbps(d) for o, d in wins if not o]
    ons = [mbps(d) for o, d in wins if o]
    off_mbps = statistics.median(offs)
    if not ons:
        sys.exit("overhead: SECS=%d leaves no attached window; at least %d s with %d-s windows"
                 % (secs, 3 * period + 4, period))
    print("max throughput: detached %d windows, median %.1f Mbit/s; attached %d, median %.1f Mbit/s"
          % (len(offs), off_mbps, len(ons), statistics.median(ons)))
    record["rate"] = {"windows": window_rows(wins), "ratios": [a / b for a, b in pr]}
    if pr:
        med, lo, hi, v = report("  attached/detached throughput", [a / b for a, b in pr])
        print("RESULT throughput ratio %.3f, 95%% CI %.3f-%.3f (target >= %.2f: %s)%s"
              % (med, lo, hi, target, v, valid()))
    else:
        print("overhead: no attached window between two detached ones")

# ---------------------------------------------------------------- method 2
if "cpu" in methods:
    if not rate:
        if off_mbps is None:
            c = start_client(0)
            a = reading(c.pid, 0)
            time.sleep(4)
            b = reading(c.pid, 0)
            stop_client(c)
            off_mbps = delta(a, b)["pkts"] * length * 8 / 4 / 1e6
        rate = 0.5 * off_mbps
    client = start_client(rate)
    wins = alternate(client, cpu_secs)
    stop_client(client)
    # The sender's CPU (and the softirq on it) handles every packet that
    # arrives, the receiver only those queued: each per its own count.
    pk = lambda d: max(d["pkts"], 1)
    arr = lambda d: max(d["pkts"] + d["drops"], 1)
    lost = sum(d["drops"] for _, d in wins) / max(1, sum(d["pkts"] + d["drops"] for _, d in wins))
    print("fixed rate %.0f Mbit/s: %.0f packets/s received, %.2f %% dropped at the socket"
          % (rate, statistics.median(d["pkts"] / d["t"] for _, d in wins), 100 * lost))
    cols = [("sender CPU %d: sender + softirq" % tx_cpu, lambda d: d["tx"] / arr(d)),
            ("receiver CPU %d: receiver threads" % rx_cpu, lambda d: d["rx"] / pk(d)),
            ("NET_RX softirq (/proc/stat ticks)", lambda d: d["sirq_ns"] / arr(d)),
            ("rxbneckd", lambda d: d["daemon"] / pk(d))]
    print("  %-38s %10s %10s" % ("CPU ns per packet (median)", "detached", "attached"))
    for name, f in cols:
        print("  %-38s %10.0f %10.0f" % (name, statistics.median(f(d) for o, d in wins if not o),
                                          statistics.median(f(d) for o, d in wins if o)))
    stage = lambda d: max(d["tx"] / arr(d), d["rx"] / pk(d))
    est, path = [], []
    for i in range(1, len(wins) - 1):
        if not (wins[i][0] and not wins[i - 1][0] and not wins[i + 1][0]):
            continue
        d_on, o1, o2 = wins[i][1], wins[i - 1][1], wins[i + 1][1]
        off_stage = (stage(o1) + stage(o2)) / 2
        est.append(off_stage / (stage(d_on) + d_on["daemon"] / pk(d_on)))
        rp = lambda d: d["sirq_ns"] / arr(d) + d["srv"] / pk(d)
        path.append(((rp(o1) + rp(o2)) / 2) / rp(d_on))
    # The probes' added cost in ns per packet, per stage: it does not
    # depend on what the reference costs (other probes attached, a slower
    # machine), the ratio does.
    for name, f in cols[:2]:
        dd = [f(wins[i][1]) - (f(wins[i - 1][1]) + f(wins[i + 1][1])) / 2
              for i in range(1, len(wins) - 1)
              if wins[i][0] and not wins[i - 1][0] and not wins[i + 1][0]]
        m = ost.median_ci(dd)
        if dd:
            print("  added ns per packet, %s: median %.0f%s" % (name, statistics.median(dd),
                  " (95%% CI %.0f..%.0f)" % (m[0], m[1]) if m else ""))
    record["cpu"] = {"rate_mbps": rate, "windows": window_rows(wins), "ratios": est,
                     "path_ratios": path}
    if est:
        report("  receive path (softirq + receiver) cost_off/cost_on", path)
        med, lo, hi, v = report("  busiest stage cost_off/(cost_on + daemon)", est)
        print("RESULT CPU-cost estimate of the throughput ratio %.3f, 95%% CI %.3f-%.3f "
              "(target >= %.2f: %s)%s" % (med, lo, hi, target, v, valid()))
    else:
        print("overhead: no attached window between two detached ones")

# ---------------------------------------------------------------- method 4
if "steady" in methods:
    client = start_client(0)
    wins = alternate(client, steady_secs, (STEADY_U, STEADY_U, STEADY_U, STEADY_T),
                     steady_period)
    stop_client(client)
    ru = [a / b for a, b in pairs(wins, mbps, STEADY_U)]
    rt = [a / b for a, b in pairs(wins, mbps, STEADY_T)]
    wu, wt = 1 - 2 / steady_n, 2 / steady_n
    print("steady state, one epoch in %d sampled (%d-s windows): %d U pairs "
          "(per-packet programs detached), %d T pairs (a sampling cycle every 2 s)"
          % (steady_n, steady_period, len(ru), len(rt)))
    record["steady"] = {"n": steady_n, "period_s": steady_period,
                        "windows": window_rows(wins), "u_ratios": ru, "t_ratios": rt}
    if len(ru) >= 2 and len(rt) >= 2:
        report("  U attached/detached", ru)
        report("  T attached/detached", rt)
        est, lo, hi = ost.strata_mean([(wu, ru), (wt, rt)])
        v = ost.verdict(lo, hi, target)
        cyc = 2 * (statistics.mean(ru) - statistics.mean(rt))
        print("  one sampling cycle costs %.3f s of detached throughput (2 (U - T))" % cyc)
        record["steady"].update({"ratio": est, "lo": lo, "hi": hi, "cycle_cost_s": cyc})
        print("RESULT steady-state throughput ratio (1 - 2/%d) U + (2/%d) T = %.3f, 95%% CI "
              "%.3f-%.3f (bootstrap within U and T; target >= %.2f: %s)%s"
              % (steady_n, steady_n, est, lo, hi, target, v, valid()))
    else:
        print("overhead: too few U or T windows between two detached ones (STEADY_SECS)")

# ---------------------------------------------------------------- method 3
# Each probe program's tracepoint (the program's name without _btf/_raw,
# where the two differ), for the do-nothing reference beside it.
TP_OF = {"irq_entry": "irq_handler_entry", "irq_exit": "irq_handler_exit",
         "sched_migrate": "sched_migrate_task", "sched_wakeup_new": "sched_wakeup_new"}
REF_TPS = ["softirq_entry", "softirq_exit", "napi_poll", "sk_data_ready", "sock_recv_length",
           "sched_switch", "sched_wakeup", "kfree_skb", "irq_handler_entry", "irq_handler_exit"]

def tp_of(prog):
    base = prog.rsplit("_", 1)[0] if prog.endswith(("_btf", "_raw")) else prog
    return TP_OF.get(base, base)

def cost_run():
    """One daemon run of COST_EPOCHS epochs, every one sampled, BPF
    statistics on, with the do-nothing programs on REF_TPS the whole time.
    Returns ({prog: [runs, ns]}, {tp: [runs, ns]}, packets/s)."""
    nop = subprocess.Popen([nop_bin] + REF_TPS, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True)
    time.sleep(0.3)                  # attached before the daemon's first epoch ends
    a, ta = udp_in()[0], time.monotonic()
    p = subprocess.Popen([daemon, "--measure-only", "--epochs", str(cost_epochs + 1),
                          "--interval-ms", "1000", "--watch-port", port, "--probes", probes,
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = p.communicate()[0].splitlines()
    b, tb = udp_in()[0], time.monotonic()
    ref_out = nop.communicate(input="")[0]
    if nop.returncode or not ref_out.strip():
        sys.exit("overhead: %s failed" % nop_bin)
    ref = {k: [v["run_cnt"], v["run_time_ns"]] for k, v in json.loads(ref_out).items()}
    cost = {}
    for line in lines[1:]:           # the first epoch began with the load
        for c in json.loads(line)["probe_cost"]:
            r = cost.setdefault(c["prog"], [0, 0])
            r[0] += c["run_cnt"]
            r[1] += c["run_time_ns"]
    return cost, ref, (b - a) / (tb - ta)

def lohi(xs):
    return "%.0f-%.0f" % (min(xs), max(xs)) if xs else "-"

if "cost" in methods:
    # Cost per event, from the kernel's BPF run-time statistics, against a
    # do-nothing program on the same tracepoint in the same seconds.
    client = start_client(0)
    runs = [cost_run() for _ in range(cost_runs)]
    stop_client(client)
    pps = statistics.median(r[2] for r in runs)
    progs = sorted({k for c, _, _ in runs for k, (n, _) in c.items() if n})
    print("BPF statistics, every epoch sampled, %d runs of %d epochs, median %.0f packets/s; "
          "ns per run, median (min-max) over the runs:" % (cost_runs, cost_epochs, pps))
    print("  %-24s %8s %14s %14s %6s %14s  %s" % ("program", "runs/pkt", "measured", "reference",
                                                  "x ref", "own", "class"))
    rows, total_own, total_raw, worst = {}, 0.0, 0.0, []
    for name in progs:
        per = [(c[name], ref.get(tp_of(name)), rate) for c, ref, rate in runs
               if c.get(name, [0])[0]]
        avg = [ns / n for (n, ns), _, _ in per]
        refs = [r[1] / r[0] for _, r, _ in per if r and r[0]]
        own = [ns / n - r[1] / r[0] for (n, ns), r, _ in per if r and r[0]]
        rpp = statistics.median(n / max(1.0, rate * cost_epochs) for (n, _), _, rate in per)
        kind = ("per packet" if tp_of(name) in PER_PACKET_TPS else
                "per scheduling event" if tp_of(name).startswith("sched_") else "other")
        rows[name] = {"tp": tp_of(name), "runs_per_pkt": rpp, "class": kind,
                      "measured_ns": avg, "reference_ns": refs, "own_ns": own}
        total_raw += rpp * statistics.median(avg)
        if own:
            total_own += rpp * statistics.median(own)
        if kind == "per packet" and own:
            worst.append((name, own))
        fmt = lambda xs: "%5.0f (%s)" % (statistics.median(xs), lohi(xs)) if xs else "-"
        xref = "%6.2f" % (statistics.median(avg) / statistics.median(refs)) if refs else "     -"
        print("  %-24s %8.3f %14s %14s %s %14s  %s" % (name, rpp, fmt(avg), fmt(refs), xref,
                                                      fmt(own), kind))
    print("  BPF ns per packet received: %.0f measured, %.0f own (reference subtracted)"
          % (total_raw, total_own))
    for name, own in worst:
        v = "met" if max(own) <= COST_TARGET_NS else \
            "NOT met" if min(own) > COST_TARGET_NS else "not resolved"
        print("RESULT own ns per run %-20s %5.1f, range %s over %d runs (target <= %d: %s)"
              % (name, statistics.median(own), lohi(own), len(own), COST_TARGET_NS, v))
    record["cost"] = {"pps": pps, "runs": cost_runs, "epochs": cost_epochs, "programs": rows}

if result_lines:
    _print("=== probe overhead summary (method 1: per-packet programs in every epoch; "
           "method 4: the daemon's steady state; method 3: own ns per run, reference "
           "subtracted)")
    for line in result_lines:
        _print("  " + line + valid() * ("own ns" not in line and "INVALID" not in line))
if stats_seen[0]:
    print("WARNING: BPF run-time statistics were on in %d windows (held by another process): "
          "each program run then costs two clock reads more" % stats_seen[0])
record["stats_on_windows"] = stats_seen[0]
record["foreign_daemons"] = sorted(disturbed)
if out_path:
    with open(out_path, "w") as f:
        json.dump(record, f, indent=1)
    print("overhead: windows and pairs written to %s" % out_path)
if disturbed:
    print("WARNING: other rxbneckd processes ran during the measurement (pids %s): their "
          "probes were attached in the detached windows too; the ratios above are not valid"
          % " ".join(map(str, sorted(disturbed))))
PY
