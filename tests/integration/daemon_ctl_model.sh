#!/usr/bin/env bash
# `rxbneckctl model` (offline, no daemon): --json carries the documented
# keys, and its numbers agree with an independent computation in this
# script - for N = 1 the single-stage loss is the M/M/1/K closed form at
# every swept rate, E[R] = (#C + 1) / mu_P-Net with #I = 0 (also for a
# fractional #C, where the interpolation is exact), the transfer time is
# eq. (2)-(3) recomputed here, and the chosen rate is the curve's minimum;
# with strict batches of 6 (#C 2, #I 1) the loss is the strict bulk-service
# queue's at the model's service rate, solved here by GTH elimination.
# Bad input exits 2 naming the option. Rates are per second; the old
# per-millisecond options still give the same model, with a note. --csv is
# the JSON's curve; --plot writes a PNG and an SVG.
# Then against a running daemon with a sender (rxbneck-watch) and UDP
# traffic (iperf3 on loopback): --from-status PORT solves the flow's own
# inputs again and finds the daemon's rate (to 1e-6), and with #C changed
# on the command line a lower one; once the sender leaves, status lists
# the flow under learned flows, with how long ago it left.
. "$(dirname "$0")/daemon_lib.inc"

run_model() { "$CTL" model --json "$@"; }

run_model --batch 1 --batch-rule partial --cpu-bound 0 --io-bound 0 --mu-net-per-s 41600 \
	--queue-pkts 64 --payload 1468 --file-bytes 500M --one-way-delay-ms 100 \
	--line-rate-bps 1G --points 200 > "$T/c0.json" || die "model C=0"
run_model --batch 1 --batch-rule partial --cpu-bound 2 --io-bound 0 --mu-net-per-s 41600 \
	--queue-pkts 64 --points 200 > "$T/c2.json" || die "model C=2"
run_model --batch 1 --batch-rule partial --cpu-bound 1.5 --io-bound 0 --mu-net-per-s 41600 \
	--queue-pkts 64 --points 200 > "$T/c15.json" || die "model C=1.5"
run_model --batch 6 --batch-rule strict --cpu-bound 2 --io-bound 1 > "$T/seed.json" || die "model seed"

python3 - "$T/c0.json" "$T/c2.json" "$T/c15.json" "$T/seed.json" <<'PY' || die "model numbers"
import json, math, sys
from decimal import Decimal, getcontext
getcontext().prec = 50

KEYS = ("inputs", "bottleneck_rate_bps", "loss_at_bottleneck", "ln_loss_at_bottleneck",
        "transfer_time_s", "n_resend", "mean_response_s", "service_rate_per_s",
        "capacity_bps", "line_rate_loss", "line_rate_time_s", "response_quantiles_s",
        "numerics", "curve")

def mm1k(lam, mu, k):
    # M/M/1/K blocking, in 50-digit decimal: exact enough for 1e-12 relative.
    rho = Decimal(lam) / Decimal(mu)
    if rho == 1:
        return 1.0 / (k + 1)
    return float((1 - rho) * rho ** k / (1 - rho ** (k + 1)))

def rbudp(b_bps, loss, s, spkt, tprop):
    b = b_bps / 8
    n = math.log(spkt / s) / math.log(loss) if loss > 0 else 0.0
    resend = sum(s * loss ** i / b for i in range(1, math.ceil(n) + 1))
    return tprop + s / b + n * tprop + resend + (n + 1) * (s / (8 * spkt * b) + tprop)

def rel(a, b):
    return abs(a - b) / abs(b) if b else abs(a)

def check(path, c):
    d = json.load(open(path))
    for k in KEYS:
        # The response-time distribution exists for integer counts only.
        assert k in d or (k == "response_quantiles_s" and c != int(c)), f"{path}: no '{k}'"
    i = d["inputs"]
    mu_net = i["mu_net_per_s"]
    er = (c + 1) / mu_net                      # #I = 0: exact, also for fractional #C
    assert rel(d["mean_response_s"], er) < 1e-12, (d["mean_response_s"], er)
    mu = 1 / er
    assert rel(d["service_rate_per_s"], mu) < 1e-12
    assert rel(d["capacity_bps"], mu * 1 * i["payload_bytes"] * 8) < 1e-12
    k, spkt, s, tprop = i["queue_pkts"], i["payload_bytes"], i["file_bytes"], i["one_way_delay_s"]
    worst_l = worst_t = 0.0
    for p in d["curve"]:
        lam = p["rate_bps"] / (8 * spkt)
        l = mm1k(lam, mu, k)
        if l > 1e-300:
            worst_l = max(worst_l, rel(p["loss"], l))
        worst_t = max(worst_t, rel(p["time_s"], rbudp(p["rate_bps"], l, s, spkt, tprop)))
    assert worst_l < 1e-9, f"loss off by {worst_l:.2e}"
    assert worst_t < 1e-9, f"time off by {worst_t:.2e}"
    b = d["bottleneck_rate_bps"]
    lb = mm1k(b / (8 * spkt), mu, k)
    assert rel(d["loss_at_bottleneck"], lb) < 1e-9
    assert rel(d["transfer_time_s"], rbudp(b, lb, s, spkt, tprop)) < 1e-9
    assert d["transfer_time_s"] <= min(p["time_s"] for p in d["curve"]) * (1 + 1e-12), "not the minimum"
    print(f"{path.split('/')[-1]}: #C {c}: rate {b/1e6:.2f} Mb/s, loss {lb:.4g}, T {d['transfer_time_s']:.4f} s; "
          f"curve loss within {worst_l:.1e}, time within {worst_t:.1e} of the closed forms")
    return b

r0 = check(sys.argv[1], 0)
r2 = check(sys.argv[2], 2)
r15 = check(sys.argv[3], 1.5)
assert r2 < r15 < r0 or r0 == r15, (r0, r15, r2)
def gth_loss(lam, mu, k, n):
    """Blocking of the strict bulk-service queue (states 0..k; arrivals lam;
    a batch of n served at rate mu once n wait) by GTH elimination of its
    generator - no subtraction, a second method beside the solver's cut
    recursion."""
    q = [[0.0] * (k + 1) for _ in range(k + 1)]
    for i in range(k + 1):
        if i < k:
            q[i][i + 1] += lam
        if i >= n:
            q[i][i - n] += mu
    for m in range(k, 0, -1):
        s = sum(q[m][:m])
        for i in range(m):
            q[i][m] /= s
        for i in range(m):
            if q[i][m]:
                for j in range(m):
                    if j != i:
                        q[i][j] += q[i][m] * q[m][j]
    pi = [1.0] + [0.0] * k
    for m in range(1, k + 1):
        pi[m] = sum(pi[i] * q[i][m] for i in range(m))
    return pi[k] / sum(pi)

# The seed's model (#C 2, #I 1, strict batches of 6): given its service
# rate, the loss and T at its rate and along the curve are the strict bulk
# queue's (by GTH) and eq. (2)-(3); its rate is the curve's minimum.
seed = json.load(open(sys.argv[4]))
i = seed["inputs"]
assert i["batch_rule"] == "strict" and i["io_bound"] == 1 and i["batch_pkts"] == 6
mu, k, n, spkt = seed["service_rate_per_s"], i["queue_pkts"], i["batch_pkts"], i["payload_bytes"]
assert rel(seed["capacity_bps"], mu * n * spkt * 8) < 1e-12
worst_l = worst_t = 0.0
for p in seed["curve"][::50] + [{"rate_bps": seed["bottleneck_rate_bps"],
                                  "loss": seed["loss_at_bottleneck"],
                                  "time_s": seed["transfer_time_s"]}]:
    l = gth_loss(p["rate_bps"] / (8 * spkt), mu, k, n)
    if l > 1e-300:
        worst_l = max(worst_l, rel(p["loss"], l))
    worst_t = max(worst_t, rel(p["time_s"], rbudp(p["rate_bps"], l, i["file_bytes"], spkt,
                                                  i["one_way_delay_s"])))
assert worst_l < 1e-9 and worst_t < 1e-9, f"seed: loss off by {worst_l:.2e}, time by {worst_t:.2e}"
assert seed["transfer_time_s"] <= min(p["time_s"] for p in seed["curve"]) * (1 + 1e-12)
print(f"seed: rate {seed['bottleneck_rate_bps']/1e6:.1f} Mb/s; loss within {worst_l:.1e}, time "
      f"within {worst_t:.1e} of the strict bulk queue by GTH and eq. (2)-(3)")
PY

# Bad input: exit 2, the option named.
bad() {
	local rc
	"$CTL" model "$@" >/dev/null 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] || die "model $*: exit $rc, expected 2"
	grep -q -- "$1" "$T/err" || die "model $*: message does not name $1: $(cat "$T/err")"
}
bad --queue-pkts abc
bad --cpu-bound -1
bad --mu-net 0
bad --points 1
bad --batch-rule fifo
bad --bogus
bad --batch 100 --queue-pkts 64 --batch-rule strict
bad --min-rate-bps 2G --line-rate-bps 1G
bad --loss-episode-pkts 0.5 --rounds burst
bad --loss-episode-pkts 10	# seed rounds have no episodes
bad --mu-net-full-per-s 50000 --mu-net-per-s 40000	# a full queue served faster
bad --mu-net-full-per-s x
bad --mu-net-full x
bad --batch 0.4
bad --plot out.jpg
bad --csv --json
bad --socket /x
bad -s /x	# as --socket: only with --from-status
bad --status-file /x	# as --socket
bad --status-file /x --from-status 9 --socket /y	# one source of the status
bad --from-status 0
bad --payload 65508	# more than a UDP datagram holds
# Episodes of M packets: never more resend rounds than packets lost one by
# one (docs/model.md §3.2; the sums themselves are test_solver_rounds').
"$CTL" model --json --rounds burst --cpu-bound 2 > "$T/b1.json" || die "model burst"
"$CTL" model --json --rounds burst --cpu-bound 2 --loss-episode-pkts 500 > "$T/b500.json" ||
	die "model burst with episodes"
python3 - "$T/b1.json" "$T/b500.json" <<'PY' || die "model episodes"
import json, sys
b1, b5 = (json.load(open(f)) for f in sys.argv[1:])
assert b1["inputs"]["loss_episode_pkts"] == 1 and b5["inputs"]["loss_episode_pkts"] == 500
for c1, c5 in zip(b1["curve"], b5["curve"]):
    assert c1["rate_bps"] == c5["rate_bps"] and c1["loss"] == c5["loss"]
    assert c5["time_s"] <= c1["time_s"] * (1 + 1e-12), (c1, c5)
assert b5["transfer_time_s"] <= b1["transfer_time_s"] * (1 + 1e-12)
# ... and fewer somewhere: where few packets are lost.
assert any(c5["time_s"] < c1["time_s"] * (1 - 1e-6)
           for c1, c5 in zip(b1["curve"], b5["curve"]))
PY
bad --rate-rel-sd -0.1
bad --rate-rel-sd 1.5
bad --loss-model fluid
# The spread-drain loss model (docs/fidelity.md): the first blast's loss at
# every swept rate is the closed form E[(1 - K/n - C/lambda e^(sd Z))+]
# computed here, C the capacity the JSON reports (#C = #I = 0: mu N).
"$CTL" model --json --rounds burst --loss-model spread --rate-rel-sd 0.1 --cpu-bound 0 \
	--queue-pkts 3641 --batch 296 --batch-rule partial --mu-net-per-s 803.6446 \
	--payload 1472 --file-bytes 200000000 --line-rate-bps 10G --points 100 \
	> "$T/spread.json" || die "model spread"
python3 - "$T/spread.json" <<'PY' || die "model spread numbers"
import json, math, sys
j = json.load(open(sys.argv[1]))
assert j["inputs"]["loss_model"] == "spread", j["inputs"]
cap = j["capacity_bps"] / (8 * 1472)
a, sd = 1 - 3641 / (200e6 / 1472), 0.1
Phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
for c in j["curve"]:
    r = cap / (c["rate_bps"] / (8 * 1472))
    d = math.log(a / r) / sd
    want = max(0.0, a * Phi(d) - r * math.exp(sd * sd / 2) * Phi(d - sd))
    assert abs(c["first_loss"] - want) <= 1e-9 + 1e-6 * want, (c, want)
PY
# An uncertain rate (docs/model.md §3.3): the time reported is the expected
# one, 2/3 T(mu) + 1/6 T(mu e^-sqrt3 sd) + 1/6 T(mu e^sqrt3 sd), against
# three plain runs at the scaled rates, and no rate of the sweep expects
# less; at a 64 MiB buffer's figures (an end-to-end receiver at k = 1:
# K 29000, 200 MB, 100 ms one way) the rate comes off the buffer's edge.
m="--json --rounds burst --load-independent --queue-pkts 29000 --batch 64"
m="$m --payload 1472 --file-bytes 200000000 --one-way-delay-ms 100"
read -r mu mu_lo mu_hi < <(python3 -c '
import math
mu = 5.4e9 / (8 * 1472 * 64)
f = math.exp(math.sqrt(3) * 0.08)
print("%.17g %.17g %.17g" % (mu, mu / f, mu * f))')
sweep="--line-rate-bps 10G --min-rate-bps 100M --points 200"
"$CTL" model $m $sweep --mu-net-per-s "$mu" --rate-rel-sd 0.08 > "$T/usd.json" ||
	die "model --rate-rel-sd"
rate=$(python3 -c 'import json, sys; print("%.6f" % json.load(open(sys.argv[1]))["bottleneck_rate_bps"])' "$T/usd.json")
at="--min-rate-bps $rate --line-rate-bps $(python3 -c "print('%.6f' % ($rate * (1 + 1e-9)))") --points 2"
for v in mu mu_lo mu_hi; do
	"$CTL" model $m $sweep --mu-net-per-s "${!v}" > "$T/sweep_$v.json" || die "model $v"
	"$CTL" model $m $at --mu-net-per-s "${!v}" > "$T/at_$v.json" || die "model $v at $rate"
done
python3 - "$T" <<'PY' || die "model --rate-rel-sd"
import json, sys
d = sys.argv[1]
ld = lambda n: json.load(open(d + "/" + n + ".json"))
u = ld("usd")
w = {"mu": 2 / 3, "mu_lo": 1 / 6, "mu_hi": 1 / 6}
assert u["inputs"]["mu_rel_sd"] == 0.08 and ld("sweep_mu")["inputs"]["mu_rel_sd"] == 0
et = sum(w[v] * ld("at_" + v)["curve"][0]["time_s"] for v in w)
assert abs(u["transfer_time_s"] / et - 1) < 1e-9, (u["transfer_time_s"], et)
sweeps = [ld("sweep_" + v)["curve"] for v in w]
for pts in zip(*sweeps):
    e = sum(w[v] * p["time_s"] for v, p in zip(w, pts))
    assert u["transfer_time_s"] <= e * (1 + 1e-12), (u["transfer_time_s"], pts)
p = ld("sweep_mu")
assert [c["time_s"] for c in u["curve"]] == [c["time_s"] for c in p["curve"]]
assert u["bottleneck_rate_bps"] < 0.9 * p["bottleneck_rate_bps"], (u, p)
assert u["capacity_bps"] == p["capacity_bps"]
PY
# A service that slows once overflowed (docs/model.md §2.1): the full
# drain is the capacity of the slow rate alone, and the curve is the fast
# model's up to the fast capacity, the slow model's beyond it.
m="--json --rounds burst --cpu-bound 2 --queue-pkts 2000 --batch 50 --batch-rule partial"
m="$m --line-rate-bps 1.5G --points 300"
"$CTL" model $m --mu-net-per-s 4000 > "$T/fast.json" || die "model fast"
"$CTL" model $m --mu-net-per-s 3000 > "$T/slow.json" || die "model slow"
"$CTL" model $m --mu-net-per-s 4k --mu-net-full-per-s 3k > "$T/depth.json" || die "model --mu-net-full-per-s"
python3 - "$T/fast.json" "$T/slow.json" "$T/depth.json" <<'PY' || die "model --mu-net-full"
import json, sys
f, s, d = (json.load(open(x)) for x in sys.argv[1:])
assert d["inputs"]["mu_net_full_per_s"] == 3000 and f["inputs"]["mu_net_full_per_s"] == 4000
assert abs(d["capacity_full_bps"] / s["capacity_bps"] - 1) < 1e-12
assert abs(d["capacity_bps"] / f["capacity_bps"] - 1) < 1e-12
assert f["capacity_full_bps"] == f["capacity_bps"]
c = d["capacity_bps"]
n = {"below": 0, "above": 0}
for cf, cs, cd in zip(f["curve"], s["curve"], d["curve"]):
    assert cf["rate_bps"] == cd["rate_bps"] == cs["rate_bps"]
    ref = cf if cd["rate_bps"] <= c else cs
    n["below" if cd["rate_bps"] <= c else "above"] += 1
    assert cd["loss"] == ref["loss"] and cd["time_s"] == ref["time_s"], (cd, ref)
assert n["below"] > 10 and n["above"] > 10, n
PY
# A solve over the windows by rate ([model] windows_by_rate): a status
# saved by rxbneckd at k = 3 of the e2e experiment (flow 30431, ten
# pieces; the fuzz target's seed) is solved again over the same pieces to
# the daemon's own rate and time; with all rates' windows alone the rate
# is another.
tail -c +3 "$RXB_SRC/tests/fuzz/corpus/fuzz_ctl_model/windows-by-rate" > "$T/wbr.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["flows"][0]["model"]["windows_by_rate"] = []
json.dump(d, open(sys.argv[2], "w"))' "$T/wbr.json" "$T/wbr1.json"
"$CTL" model --from-status 30431 --status-file "$T/wbr.json" --json > "$T/wbr.out" ||
	die "model over the windows by rate"
"$CTL" model --from-status 30431 --status-file "$T/wbr1.json" --json > "$T/wbr1.out" ||
	die "model without the windows by rate"
python3 - "$T/wbr.out" "$T/wbr1.out" <<'PY' || die "model over the windows by rate"
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:])
live = a["from_status"]
assert len(a["windows_by_rate_at_bps"]) == 10 and b["windows_by_rate_at_bps"] == []
assert abs(a["bottleneck_rate_bps"] / live["daemon_rate_bps"] - 1) < 1e-9, (a["bottleneck_rate_bps"], live)
assert abs(a["transfer_time_s"] / live["daemon_transfer_time_s"] - 1) < 1e-9
assert abs(b["bottleneck_rate_bps"] / a["bottleneck_rate_bps"] - 1) > 0.05, (a["bottleneck_rate_bps"], b["bottleneck_rate_bps"])
# The curve steps where one piece gives way to the next, in increasing rate.
rates = [c["rate_bps"] for c in a["curve"]]
assert rates == sorted(rates) and len(rates) >= 200 - 10
print(f"windows by rate: {a['bottleneck_rate_bps']/1e9:.3f} Gb/s as the daemon's; all rates' windows {b['bottleneck_rate_bps']/1e9:.3f}")
PY
"$CTL" model --help | grep -q -- '--cpu-bound' || die "model --help"

# The old per-millisecond options: the same model, and a note naming the
# per-second option; a mean as status prints it for N.
"$CTL" model --json --mu-net 41.6 --mu-pio 4.6 --mu-disk 1.01 --io-bound 1 > "$T/ms.json" 2>"$T/ms.err" ||
	die "model --mu-net (per ms)"
grep -q -- '--mu-net-per-s 41600' "$T/ms.err" || die "no deprecation note: $(cat "$T/ms.err")"
"$CTL" model --json --mu-net-per-s 41600 --mu-pio-per-s 4600 --mu-disk-per-s 1010 --io-bound 1 > "$T/s.json" ||
	die "model --mu-net-per-s"
cmp -s "$T/ms.json" "$T/s.json" || die "per ms and per s give different models"
"$CTL" model --json --batch 5.6 --queue-pkts 64.2 > "$T/b.json" || die "model --batch 5.6"
"$CTL" model --json --batch 6 --queue-pkts 64 > "$T/b6.json" || die "model --batch 6"
cmp -s "$T/b.json" "$T/b6.json" || die "--batch 5.6 is not rounded to 6 as the daemon does"
# --csv is the JSON's curve; --plot a PNG and an SVG (python3-matplotlib).
"$CTL" model --csv --points 50 > "$T/c.csv" || die "model --csv"
"$CTL" model --json --points 50 > "$T/c.json" || die "model --json"
python3 - "$T/c.csv" "$T/c.json" <<'PY' || die "model --csv"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
curve = json.load(open(sys.argv[2]))["curve"]
assert len(rows) == len(curve) == 50, (len(rows), len(curve))
for r, c in zip(rows, curve):
    for k in ("rate_bps", "loss", "time_s", "n_resend"):
        assert abs(float(r[k]) - c[k]) <= 1e-9 * abs(c[k]), (k, r[k], c[k])
PY
"$CTL" model --points 100 --plot "$T/p.png" > /dev/null || die "model --plot png"
"$CTL" model --points 100 --rounds burst --plot "$T/p.svg" > /dev/null || die "model --plot svg"
[ "$(head -c 4 "$T/p.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] || die "--plot: not a PNG"
grep -q '<svg' "$T/p.svg" || die "--plot: not an SVG"
log "offline: PASS"

# ---------------------------------------------------------------- live --
command -v iperf3 >/dev/null || skip "iperf3 not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
WATCH=$B/rxbneck-watch
[ -x "$WATCH" ] || die "build first: $WATCH"
P=$(free_port)
# No watch_ports: the flow exists while its sender is connected.
# flow_linger_s = 0: the flow goes at the first epoch after its sender left.
write_conf "$T/d.conf" "[measure] interval_ms = 250" "[measure] flow_linger_s = 0"
start_daemon "$T/d.conf"
bg taskset -c 1 iperf3 -s -p "$P" -1 >/dev/null 2>&1
sleep 0.5
bg taskset -c 0 iperf3 -u -c 127.0.0.1 -p "$P" -b 200M -l 1468 -t 60 >/dev/null 2>&1
"$WATCH" -p "$CPORT" -r 20000 -s 1468 -f 1000000000 "$P" > "$T/watch.txt" 2>&1 &
watch=$!
_bg_pids+=($watch)
for _ in $(seq 100); do
	st=$(ctl status --json | python3 -c 'import json,sys
f=[f for f in json.load(sys.stdin)["flows"] if f["port"] == int(sys.argv[1])]
print(f[0]["state"] if f else "none")' "$P")
	[ "$st" = model ] && break
	sleep 0.1
done
[ "$st" = model ] || die "no model of flow $P after 10 s (state $st): $(ctl status)"
check_status_text "a sender and traffic"
"$CTL" -s "$SOCK" model --from-status "$P" --json > "$T/live.json" || die "model --from-status"
c=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["inputs"]["cpu_bound"])' "$T/live.json")
c2=$(python3 -c "print($c + 2)")
"$CTL" -s "$SOCK" model --from-status "$P" --cpu-bound "$c2" --json > "$T/live2.json" ||
	die "model --from-status --cpu-bound"
"$CTL" -s "$SOCK" model --from-status "$P" --loss-model queue --json > "$T/live3.json" ||
	die "model --from-status --loss-model queue"
"$CTL" model --socket "$SOCK" --from-status "$P" --csv > "$T/live.csv" || die "model --from-status --csv"
"$CTL" model --from-status "$P" -s "$SOCK" --json > "$T/live4.json" || die "model --from-status -s"
"$CTL" -s "$SOCK" model --from-status "$P" --plot "$T/live.png" > "$T/live.txt" || die "model --from-status --plot"
grep -q "rxbneckd chose" "$T/live.txt" && grep -q "^Inputs *rxbneckd's flow $P" "$T/live.txt" ||
	die "model --from-status text: $(cat "$T/live.txt")"
python3 - "$T/live.json" "$T/live2.json" "$T/live.csv" "$c2" "$T/live3.json" <<'PY' || die "model --from-status"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
q = json.load(open(sys.argv[5]))
# The bulk queue asked for on top: no windows to take loss episodes from,
# so a solve that took them from the windows takes the measured size.
assert q["inputs"]["loss_model"] == "queue" and not q["inputs"]["episodes_from_windows"], q["inputs"]
assert q["from_status"]["episodes_from_windows_dropped"] == a["inputs"]["episodes_from_windows"], \
    (q["from_status"], a["inputs"]["episodes_from_windows"])
fs = a["from_status"]
# The daemon's own inputs, solved again here: the daemon's rate and time.
rel = lambda x, y: abs(x / y - 1)
assert rel(a["bottleneck_rate_bps"], fs["daemon_rate_bps"]) < 1e-6, (a["bottleneck_rate_bps"], fs)
assert rel(a["transfer_time_s"], fs["daemon_transfer_time_s"]) < 1e-6, (a["transfer_time_s"], fs)
assert fs["overridden"] == "", fs
# Two more CPU-bound tasks on the receiver's CPU: its capacity falls to
# (C + 1) / (C + 3) of what it was, and the rate with it.
assert b["from_status"]["overridden"] == "--cpu-bound " + sys.argv[4], b["from_status"]
assert b["inputs"]["cpu_bound"] == float(sys.argv[4])
# The flow's measured off-CPU windows hold the co-runners' turns at its
# load: a changed #C drops them (the shared queue at the new load).
# b is a later status than a: windows a saw are still kept there (they
# outlive idle epochs), but b may see windows that came after a.
had = a["inputs"]["offcpu_per_s"] > 0 or a["inputs"]["wake_per_s"] > 0
assert b["from_status"]["windows_dropped"] or not had, (had, b["from_status"])
assert not a["from_status"]["windows_dropped"], a["from_status"]
if b["from_status"]["windows_dropped"]:
    assert b["inputs"]["offcpu_per_s"] == 0 and b["inputs"]["wake_per_s"] == 0, b["inputs"]
assert b["capacity_bps"] < 0.8 * a["capacity_bps"], (a["capacity_bps"], b["capacity_bps"])
assert b["bottleneck_rate_bps"] < a["bottleneck_rate_bps"], (a["bottleneck_rate_bps"], b["bottleneck_rate_bps"])
n = sum(1 for _ in open(sys.argv[3])) - 1
assert n == a["inputs"]["points"] == len(a["curve"]), (n, a["inputs"]["points"])
print(f"flow {fs['port']}: daemon {fs['daemon_rate_bps']/1e6:.1f} Mb/s, again here "
      f"{a['bottleneck_rate_bps']/1e6:.1f} Mb/s; with #C {sys.argv[4]}: {b['bottleneck_rate_bps']/1e6:.1f} Mb/s")
PY
[ "$(head -c 4 "$T/live.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] || die "--from-status --plot: not a PNG"
# The status saved to a file (and piped in): its own solve of the flow again.
ctl status --json > "$T/saved.json"
"$CTL" model --from-status "$P" --status-file "$T/saved.json" --json > "$T/file.json" ||
	die "model --status-file"
"$CTL" model --from-status "$P" --status-file - --json < "$T/saved.json" > "$T/stdin.json" ||
	die "model --status-file -"
cmp -s "$T/file.json" "$T/stdin.json" || die "--status-file FILE and - differ"
python3 - "$T/file.json" <<'PY' || die "model --status-file: not the daemon's solve"
import json, sys
a = json.load(open(sys.argv[1]))
fs = a["from_status"]
assert abs(a["bottleneck_rate_bps"] / fs["daemon_rate_bps"] - 1) < 1e-6, (a["bottleneck_rate_bps"], fs)
assert abs(a["transfer_time_s"] / fs["daemon_transfer_time_s"] - 1) < 1e-6, (a["transfer_time_s"], fs)
PY
head -c 200 "$T/saved.json" > "$T/cut.json"
"$CTL" model --from-status "$P" --status-file "$T/cut.json" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "cut.json: not a status document" "$T/err" ||
	die "--status-file of a cut document: rc $rc $(cat "$T/err")"
"$CTL" -s "$SOCK" model --from-status 1 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'no such flow' "$T/err" || die "--from-status of no flow: rc $rc $(cat "$T/err")"

# The sender leaves: the flow is gone, but listed with what it learned.
kill "$watch"; wait "$watch" 2>/dev/null
sleep 0.6
ctl status --json > "$T/left.json"
python3 - "$T/left.json" "$P" <<'PY' || die "learned flows after the sender left"
import json, sys
d, p = json.load(open(sys.argv[1])), int(sys.argv[2])
assert not [f for f in d["flows"] if f["port"] == p], "the flow is still there"
l = [x for x in d["learned_flows"] if x["port"] == p]
assert l and l[0]["origin"] == "this run" and 0 <= l[0]["left_age_s"] < 5, d["learned_flows"]
assert l[0]["cpu_ns_per_pkt"] > 0 and l[0]["last"]["rate_bps"] > 0, l[0]
PY
ctl status | grep -q "^Learned flows  : port $P: left " || die "status text: $(ctl status)"
check_status_text "the sender left"
stop_daemon
log "PASS"
