#!/usr/bin/env bash
# `rxbneckctl model --wake-max-ms MS` cuts the wake-up waits at the longest
# one (docs/model.md §2.2): with --loss-model windows and a queue that never
# overflows by itself, every swept rate's loss is ν_w E[(W − K/λ)+] computed
# here from the closed form of W log-uniform within its slots, the slot that
# holds the cap spread over [2^r ns, cap] and a slot wholly above it whole
# (a cap between the slots changes nothing); the cut never raises the loss
# and lowers it somewhere; --json reports the cap as inputs.wake_max_s (0
# without one) and the text names it. A bad value exits 2 naming the
# option. --from-status takes the daemon's offcpu_windows.wake_max_ns (a
# fake daemon answers). No root; a second or two.
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

# --from-status takes offcpu_windows.wake_max_ns from the daemon's status: a
# fake daemon on a Unix socket answers `status json` with one flow whose
# stage is the one above. 5e6 ns solves as --wake-max-ms 5; absent, null and
# 0 as no cap; a negative or non-number one fails naming the key.
cat > "$T/fake.py" <<'PY'
import os, socket, sys
srv = socket.socket(socket.AF_UNIX)
srv.bind(sys.argv[1])
srv.listen(4)
while True:
    c, _ = srv.accept()
    req = b""
    while not req.endswith(b"\n"):
        got = c.recv(256)
        if not got:
            break
        req += got
    c.sendall(b"OK\n" + open(sys.argv[2], "rb").read())
    c.close()
PY
python3 "$T/fake.py" "$T/ctl.sock" "$T/status.json" & fake=$!
trap 'kill $fake 2>/dev/null; rm -rf "$T"' EXIT
status() {	# the status document with wake_max_ns set to $1 (JSON), or absent
	python3 - "$1" "$spec" > "$T/status.json" <<'PY'
import json, sys
w = {"spec": "0/", "wake_spec": sys.argv[2]}
if sys.argv[1] != "absent":
    w["wake_max_ns"] = json.loads(sys.argv[1])
stage = {"load_independent": False, "mu_net_per_s": 1e7, "queue_pkts": 1000,
         "batch_pkts": 1, "batch_rule": "partial", "cpu_bound": 0, "io_bound": 0,
         "offcpu_windows": w}
model = {"epoch": 7, "rate_bps": 1e9, "loss": 0.01, "transfer_time_s": 5.0,
         "stages": [stage], "rounds": "seed", "loss_model": "windows", "points": 200,
         "transfer": {"payload_bytes": 1468, "file_bytes": 5e8, "one_way_delay_s": 0.1,
                      "line_rate_bps": 1e10, "min_rate_bps": 1e8}}
print(json.dumps({"flows": [{"port": 9000, "model": model}]}))
PY
}
for i in $(seq 50); do [ -S "$T/ctl.sock" ] && break; sleep 0.1; done
[ -S "$T/ctl.sock" ] || die "the fake daemon did not start"
live() {	# wake_max_ns, the offline run it must equal
	status "$1"
	"$CTL" model --socket "$T/ctl.sock" --from-status 9000 --json > "$T/live.json" ||
		die "--from-status with wake_max_ns $1"
	python3 - "$T/live.json" "$T/$2.json" <<'PY' || die "--from-status with wake_max_ns $1"
import json, sys
live, want = (json.load(open(f)) for f in sys.argv[1:])
assert live["inputs"]["wake_max_s"] == want["inputs"]["wake_max_s"], live["inputs"]
assert [p["loss"] for p in live["curve"]] == [p["loss"] for p in want["curve"]]
PY
}
live 5000000 cap5
live absent none
live null none
live 0 none
for v in -1 '"5000000"' '{}'; do
	status "$v"
	"$CTL" model --socket "$T/ctl.sock" --from-status 9000 --json >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q 'offcpu_windows.wake_max_ns' "$T/err" ||
		die "--from-status with wake_max_ns $v: exit $rc: $(cat "$T/err")"
done
echo "ctl_model_wake: ok"
