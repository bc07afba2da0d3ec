#!/usr/bin/env bash
# `rxbneckctl model` (offline, no daemon): --json carries the documented
# keys, and its numbers agree with an independent computation in this
# script - for N = 1 the single-stage loss is the M/M/1/K closed form at
# every swept rate, E[R] = (#C + 1) / mu_P-Net with #I = 0 (also for a
# fractional #C, where the interpolation is exact), the transfer time is
# eq. (2)-(3) recomputed here, and the chosen rate is the curve's minimum.
# Bad input exits 2 naming the option.
. "$(dirname "$0")/daemon_lib.inc"

run_model() { "$CTL" model --json "$@"; }

run_model --batch 1 --batch-rule partial --cpu-bound 0 --io-bound 0 --mu-net 41.6 \
	--queue-pkts 64 --payload 1468 --file-bytes 500M --one-way-delay-ms 100 \
	--line-rate-bps 1G --points 200 > "$T/c0.json" || die "model C=0"
run_model --batch 1 --batch-rule partial --cpu-bound 2 --io-bound 0 --mu-net 41.6 \
	--queue-pkts 64 --points 200 > "$T/c2.json" || die "model C=2"
run_model --batch 1 --batch-rule partial --cpu-bound 1.5 --io-bound 0 --mu-net 41.6 \
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
seed = json.load(open(sys.argv[4]))
assert seed["inputs"]["batch_rule"] == "strict" and seed["inputs"]["io_bound"] == 1
# docs/model.md's worked example: #C 2, #I 1 on the Table II host -> 854.4 Mb/s.
assert abs(seed["bottleneck_rate_bps"] / 1e6 - 854.4) < 0.1, seed["bottleneck_rate_bps"]
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
bad --mu-net-full 50 --mu-net 40	# a full queue served faster
bad --mu-net-full x
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
# An uncertain rate (docs/model.md §3.3): the time reported is the expected
# one, 2/3 T(mu) + 1/6 T(mu e^-sqrt3 sd) + 1/6 T(mu e^sqrt3 sd), against
# three plain runs at the scaled rates, and no rate of the sweep expects
# less; at a 64 MiB buffer's figures (an end-to-end receiver at k = 1:
# K 29000, 200 MB, 100 ms one way) the rate comes off the buffer's edge.
m="--json --rounds burst --load-independent --queue-pkts 29000 --batch 64"
m="$m --payload 1472 --file-bytes 200000000 --one-way-delay-ms 100"
read -r mu mu_lo mu_hi < <(python3 -c '
import math
mu = 5.4e9 / (8 * 1472 * 64) / 1e3
f = math.exp(math.sqrt(3) * 0.08)
print("%.17g %.17g %.17g" % (mu, mu / f, mu * f))')
sweep="--line-rate-bps 10G --min-rate-bps 100M --points 200"
"$CTL" model $m $sweep --mu-net "$mu" --rate-rel-sd 0.08 > "$T/usd.json" ||
	die "model --rate-rel-sd"
rate=$(python3 -c 'import json, sys; print("%.6f" % json.load(open(sys.argv[1]))["bottleneck_rate_bps"])' "$T/usd.json")
at="--min-rate-bps $rate --line-rate-bps $(python3 -c "print('%.6f' % ($rate * (1 + 1e-9)))") --points 2"
for v in mu mu_lo mu_hi; do
	"$CTL" model $m $sweep --mu-net "${!v}" > "$T/sweep_$v.json" || die "model $v"
	"$CTL" model $m $at --mu-net "${!v}" > "$T/at_$v.json" || die "model $v at $rate"
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
"$CTL" model $m --mu-net 4 > "$T/fast.json" || die "model fast"
"$CTL" model $m --mu-net 3 > "$T/slow.json" || die "model slow"
"$CTL" model $m --mu-net 4 --mu-net-full 3 > "$T/depth.json" || die "model --mu-net-full"
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
"$CTL" model --help | grep -q -- '--cpu-bound' || die "model --help"
log "PASS"
