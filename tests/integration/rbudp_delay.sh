#!/usr/bin/env bash
# Emulated one-way delay (as Banerjee et al. emulated it, docs/rbudp.md §7):
# every blast start and every feedback message is held by the delay, so a
# transfer of R rounds takes at least R x (sender delay + receiver delay)
# plus its blast times, and it grows by at least R x 2 x delay over the
# undelayed transfer. The receiver applies the sender's delay unless given
# its own.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup delay

PORT=9300
# run NAME RECV_DELAY_ARGS -- SEND_DELAY_ARGS
run() {
	local name=$1 rargs=() pid
	shift
	while [ "$1" != "--" ]; do rargs+=("$1"); shift; done
	shift
	rbudp_bg pid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
		--rcvbuf 128Ki --poll-us 1000 --discard "${rargs[@]}" > "$RB_TMP/$name.recv.json"
	sleep 0.3
	ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet \
		--json --size 20M --rate 2G "$@" > "$RB_TMP/$name.send.json" ||
		fail "$name: sender failed: $(cat "$RB_TMP/$name.send.json")"
	wait "$pid" || fail "$name: receiver failed"
}

run none --
run sym -- --one-way-delay-ms 50
run asym --one-way-delay-ms 20 -- --one-way-delay-ms 50

python3 - "$RB_TMP" <<'PY' || fail "delay check"
import json, sys
d = sys.argv[1]
SLACK_ROUND_S, SLACK_S = 0.010, 0.030	# per round; once
def load(n, side):
    return json.loads(open("%s/%s.%s.json" % (d, n, side)).readline())
base = load("none", "send")
for name, fwd, back in (("sym", 0.050, 0.050), ("asym", 0.050, 0.020)):
    s, r = load(name, "send"), load(name, "recv")
    assert s["ok"] and r["ok"]
    assert abs(s["one_way_delay_ms"] / 1e3 - fwd) < 1e-9
    assert abs(r["feedback_delay_ms"] / 1e3 - back) < 1e-9, r["feedback_delay_ms"]
    assert abs(s["feedback_delay_ms"] / 1e3 - back) < 1e-9
    rounds = s["rounds"]
    blast = sum(x["blast_time_s"] for x in s["per_round"])
    floor = rounds * (fwd + back) + blast
    print("  %s: T = %.3f s, %d rounds, floor R x (%g + %g) + blasts = %.3f s, "
          "undelayed T = %.3f s (%d rounds)"
          % (name, s["transfer_time_s"], rounds, fwd, back, floor,
             base["transfer_time_s"], base["rounds"]))
    assert s["transfer_time_s"] >= floor, "transfer faster than its delays allow"
    # And no slower than the floor plus the rounds' own work (measured 2.5
    # ms a round): a delay applied twice (+ R x delay) does not fit.
    assert s["transfer_time_s"] <= floor + SLACK_ROUND_S * rounds + SLACK_S, \
        "transfer slower than its delays and blasts explain"
    # The rounds before each blast wait for the delay: the blast starts show
    # it, each within the delays and the blasts before it plus that slack.
    done = 0.0
    for i, x in enumerate(s["per_round"]):
        assert x["start_s"] >= i * (fwd + back) + fwd - 1e-3, x
        at = i * (fwd + back) + fwd + done
        assert x["start_s"] <= at + SLACK_ROUND_S * (i + 1) + SLACK_S, (i, x, at)
        done += x["blast_time_s"]
    assert rounds > 1, "expected a lossy, multi-round transfer"
    if name == "sym" and rounds == base["rounds"]:
        assert s["transfer_time_s"] - base["transfer_time_s"] >= \
            rounds * 2 * fwd - 0.010 * rounds, "delay not honoured"
PY
echo "PASS"
