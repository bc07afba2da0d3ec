#!/usr/bin/env bash
# `rxbneckctl model --wake-max-ms MS` cuts the wake-up waits at the longest
# one (docs/model.md §2.2): with --loss-model windows and a queue that never
# overflows by itself, every swept rate's loss is ν_w E[(W − K/λ)+] computed
# here from the closed form of W log-uniform within its slots, the slot that
# holds the cap spread over [2^r ns, cap] and a slot wholly above it whole
# (a cap between the slots changes nothing); the cut never raises the loss
# and lowers it somewhere; --json reports the cap as inputs.wake_max_s (0
# without one) and the text names it. A bad value exits 2 naming the
# option. No root, no daemon; a second or two.
set -u
B=${RXB_BUILD:-$(pwd)/build}
CTL=$B/rxbneckctl
T=$(mktemp -d /tmp/rxbneck-wake.XXXXXX)
trap 'rm -rf "$T"' EXIT

die() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$CTL" ] || die "build first: $CTL"

# A drain of 1e7/s into 1000 packets loses nothing below 10 Gb/s: the
# waits' loss is the whole loss.
m="--json --loss-model windows --cpu-bound 0 --io-bound 0 --batch 1 --batch-rule partial"
m="$m --mu-net-per-s 1e7 --queue-pkts 1000 --payload 1468"
m="$m --line-rate-bps 10G --min-rate-bps 100M --points 200"
spec='50/21:30,22:10,24:1'	# 2.1-4.2 ms, 4.2-8.4 ms, 16.8-33.6 ms
"$CTL" model $m --wake-windows "$spec" > "$T/none.json" || die "model without a cap"
"$CTL" model $m --wake-windows "$spec" --wake-max-ms 0 > "$T/zero.json" || die "model --wake-max-ms 0"
"$CTL" model $m --wake-windows "$spec" --wake-max-ms 5 > "$T/cap5.json" || die "model --wake-max-ms 5"
for ms in 10 20; do
	"$CTL" model $m --wake-windows "$spec" --wake-max-ms $ms > "$T/cap$ms.json" ||
		die "model --wake-max-ms $ms"
done

python3 - "$T" <<'PY' || die "model --wake-max-ms numbers"
import json, math, sys

d = sys.argv[1]
ld = lambda n: json.load(open(f"{d}/{n}.json"))
NU, COUNT, K, PAYLOAD = 50.0, {21: 30.0, 22: 10.0, 24: 1.0}, 1000, 1468

def excess(a, c, x):
    # E[(W - x)+] for W log-uniform on [a, c]: the integral of (w - x) / (w ln(c/a)).
    y = max(a, x)
    return 0.0 if x >= c else ((c - y) - x * math.log(c / y)) / math.log(c / a)

def loss(lam, cap):
    x, total, s = K / lam, sum(COUNT.values()), 0.0
    for r, n in COUNT.items():
        a, b = 2.0 ** r * 1e-9, 2.0 ** (r + 1) * 1e-9
        if a < cap < b:
            b = cap
        s += n * excess(a, b, x)
    return min(1.0, NU * s / total)

runs = {"none": 0.0, "zero": 0.0, "cap5": 5e-3, "cap10": 10e-3, "cap20": 20e-3}
for name, cap in runs.items():
    j = ld(name)
    assert j["inputs"]["wake_max_s"] == cap, (name, j["inputs"]["wake_max_s"])
    for p in j["curve"]:
        want = loss(p["rate_bps"] / (8 * PAYLOAD), cap)
        assert abs(p["loss"] - want) <= 1e-9 * want + 1e-15, (name, p, want)
none = ld("none")["curve"]
# 10 ms lies in no slot that has waits, and the one above it stays whole.
for name in ("zero", "cap10"):
    assert [p["loss"] for p in ld(name)["curve"]] == [p["loss"] for p in none], name
for name in ("cap5", "cap20"):
    cut = ld(name)["curve"]
    assert all(c["loss"] <= u["loss"] for c, u in zip(cut, none)), name
    assert any(c["loss"] < 0.9 * u["loss"] for c, u in zip(cut, none)), name
print("wake-max-ms: loss at %d rates within 1e-9 of the cut closed form" % len(none))
PY

"$CTL" model --wake-windows "$spec" --wake-max-ms 5 > "$T/text" || die "model text"
grep -q 'ms on average before it ran, 5 ms at most' "$T/text" ||
	die "text does not give the longest wait: $(cat "$T/text")"

# Bad input: exit 2, the option named.
bad() {
	local rc
	"$CTL" model "$@" >/dev/null 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] || die "model $*: exit $rc, expected 2"
	grep -q -- "$1" "$T/err" || die "model $*: message does not name $1: $(cat "$T/err")"
}
bad --wake-max-ms -1
bad --wake-max-ms abc
bad --wake-max-ms nan
bad --wake-max-ms ''
echo "ctl_model_wake: ok"
