#!/usr/bin/env bash
# `rxbneckctl streams --samples FILE` (offline, no daemon, no privileges):
# the fit and the advice against an independent computation in this
# script - a Newton curve p'_n = a'n^c' + b' sampled exactly at n = 1..32,
# fitted from its exponential samples only (--expo: 1, 2, 4, ... until the
# throughput stops rising), must give back the curve at every n, its peak
# (argmax computed here) and the advice (the fewest n up to the peak
# within the tolerance of it; with --cap-bps, of the best n under the
# cap); dinda's coefficients from its own two samples; the text view and
# the plots; every bad input refused with a message naming it.
set -u
BIN=${RXB_BUILD:-build}
CTL=$BIN/rxbneckctl
T=$(mktemp -d /tmp/rxbstreams.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$CTL" ] || { echo "SKIP: $CTL not built" >&2; exit 77; }

python3 - "$T" <<'PY' || fail "writing the samples"
import sys
d = sys.argv[1]
a, b, c = 4e-21, 1.2e-17, 3.3
with open(f"{d}/newton.csv", "w") as f:
    f.write("n,throughput_bps\n")
    for n in range(1, 33):
        f.write(f"{n},{n / (a * n ** c + b) ** 0.5!r}\n")
a, b = 1e-18, 1e-16
with open(f"{d}/dinda.csv", "w") as f:
    for n in (2, 9):
        f.write(f"{n},{n / (a * n * n + b) ** 0.5!r}\n")
PY

"$CTL" streams --samples "$T/newton.csv" --expo --max-n 32 --json > "$T/expo.json" ||
	fail "--expo --json"
"$CTL" streams --samples "$T/newton.csv" --expo --max-n 32 --cap-bps 1.5G --json \
	> "$T/cap.json" || fail "--cap-bps"
"$CTL" streams --samples "$T/dinda.csv" --models dinda --json > "$T/dinda.json" ||
	fail "--models dinda"
python3 - "$T" <<'PY' || fail "the fit's numbers"
import json, sys
d = sys.argv[1]
a, b, c = 4e-21, 1.2e-17, 3.3
th = {n: n / (a * n ** c + b) ** 0.5 for n in range(1, 33)}
peak = max(th, key=lambda n: th[n])

def advice(cap, tol=0.02):
    ok = [n for n in range(1, peak + 1) if cap is None or th[n] <= cap]
    best = max(th[n] for n in ok)
    return min(n for n in ok if th[n] >= (1 - tol) * best)

doc = json.load(open(f"{d}/expo.json"))
p = doc["peers"][0]
for k in ("samples", "fit", "advice", "curve", "explore"):
    assert k in p, k
used = [s["n"] for s in p["samples"] if s["fitted"]]
# The throughput rises by more than 5 % up to 16 and falls at 32.
assert used == [1, 2, 4, 8, 16, 32], used
assert set(p["fit"]["samples_used"]) <= set(used), p["fit"]["samples_used"]
assert p["explore"]["next"] is None, p["explore"]
assert p["fit"]["model"] == "newton", p["fit"]["model"]
for n, v in p["curve"]:
    assert abs(v - th[n]) <= 1e-6 * th[n], (n, v, th[n])
adv = p["advice"]
assert adv["peak_streams"] == peak, (adv, peak)
assert adv["streams"] == advice(None), (adv, advice(None))
assert not adv["capped"] and adv["cap_bps"] is None
co = p["fit"]["coef"]
for got, want in ((co["a"], a), (co["b"], b), (co["c"], c)):
    assert abs(got - want) <= 1e-6 * want, (got, want)

adv = json.load(open(f"{d}/cap.json"))["peers"][0]["advice"]
assert adv["capped"] and adv["cap_bps"] == 1.5e9, adv
assert adv["streams"] == advice(1.5e9), (adv, advice(1.5e9))
assert adv["predicted_bps"] <= 1.5e9

co = json.load(open(f"{d}/dinda.json"))["peers"][0]["fit"]
assert co["model"] == "dinda"
assert abs(co["coef"]["a"] - 1e-18) < 1e-27 and abs(co["coef"]["b"] - 1e-16) < 1e-25, co
print("offline fit: curve, peak", peak, "advice", advice(None), "capped", advice(1.5e9))
PY

# Text: the advice and the model, as the JSON says.
"$CTL" streams --samples "$T/newton.csv" --expo --max-n 32 > "$T/text" || fail "text"
n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peers"][0]["advice"]["streams"])' "$T/expo.json")
grep -q "advice *: $n streams" "$T/text" || fail "text advice: $(cat "$T/text")"
grep -q "model *: newton" "$T/text" || fail "text model"
grep -q "sampling *: exponential" "$T/text" || fail "text sampling"

# Plots, when matplotlib is there.
if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
	for ext in png svg; do
		"$CTL" streams --samples "$T/newton.csv" --expo --plot "$T/s.$ext" > /dev/null ||
			fail "--plot $ext"
		[ -s "$T/s.$ext" ] || fail "no $ext written"
	done
	head -c 8 "$T/s.png" | grep -q PNG || fail "not a PNG"
	grep -q "<svg" "$T/s.svg" || fail "not an SVG"
fi

# Bad input: exit 2 for usage naming the option, 1 naming the file or line.
expect() {	# expect RC PATTERN ARGS...
	local rc=$1 pat=$2
	shift 2
	"$CTL" streams "$@" > /dev/null 2> "$T/err"
	local got=$?
	[ $got -eq "$rc" ] && grep -q -- "$pat" "$T/err" ||
		fail "streams $*: exit $got, '$(cat "$T/err")' (want $rc, '$pat')"
}
printf '1,10\n2,x\n' > "$T/bad.csv"
expect 1 "$T/nope.csv" --samples "$T/nope.csv"
expect 1 "line 2" --samples "$T/bad.csv"
expect 2 "--models" --samples "$T/newton.csv" --models bogus
expect 2 "--plot" --samples "$T/newton.csv" --plot "$T/x.txt"
expect 2 "--tolerance" --samples "$T/newton.csv" --tolerance 2
expect 2 "--expo" --expo
expect 2 "PEER" 10.0.0.1 --samples "$T/newton.csv"
echo "PASS: rxbneckctl streams --samples"
