#!/usr/bin/env bash
# RBUDP transfers over a veth pair between two network namespaces, at a
# fixed rate: a 64 MB random file and 50 MB of synthetic data arrive
# byte-identical (cmp, sha256sum against an independent reference), the
# round and packet accounting of sender and receiver agree, and the pacing
# never sends faster than asked.
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup xfer

PORT=9100
RATE=1G

# check_accounting SENDER_JSON RECEIVER_JSON: rounds, sent and lost agree.
check_accounting() {
	python3 - "$1" "$2" <<'PY' || fail "accounting check"
import json, sys
s = json.loads(open(sys.argv[1]).readline())
r = json.loads(open(sys.argv[2]).readline())
assert s["ok"] and r["ok"], (s["error"], r["error"])
assert s["verified"] and r["verified"]
# The receiver hashes the file it keeps; with --discard it keeps none.
if r["output"] is not None:
    assert r["digest_checked"] and s["digest_checked"] and s["digest"] == r["digest"]
else:
    assert r["digest"] is None and not r["digest_checked"] and not s["digest_checked"]
assert r["rejected"] == 0
total = s["total_pkts"]
assert r["total_pkts"] == total and r["pkts_received"] == total
assert s["rounds"] == r["rounds"] >= 1
sr, rr = s["per_round"], r["per_round"]
assert sr[0]["pkts_sent"] == total
for i in range(len(sr)):
    assert sr[i]["pkts_sent"] == rr[i]["pkts_sent"] == rr[i]["pkts_expected"]
    assert sr[i]["pkts_lost"] == rr[i]["pkts_lost"]
    assert rr[i]["pkts_received"] + rr[i]["pkts_lost"] == rr[i]["pkts_expected"]
    if i + 1 < len(sr):
        assert sr[i + 1]["pkts_sent"] == sr[i]["pkts_lost"] > 0
assert sr[-1]["pkts_lost"] == 0
assert s["pkts_sent"] == total + sum(x["pkts_lost"] for x in sr)
# Pacing: never faster than asked (2 % for clock and rounding).
for x in sr:
    if x["pkts_sent"] > 1000:
        assert x["rate_bps"] <= 1.02 * x["rate_requested_bps"], x
print("  rounds %d, lost per round %s, first round at %.3f Gb/s (asked %.3f), T = %.3f s"
      % (s["rounds"], [x["pkts_lost"] for x in sr], sr[0]["rate_bps"] / 1e9,
         sr[0]["rate_requested_bps"] / 1e9, s["transfer_time_s"]))
PY
}

# transfer NAME RECV_ARGS -- SEND_ARGS
transfer() {
	local name=$1 rargs=() sargs=() pid rc
	shift
	while [ "$1" != "--" ]; do rargs+=("$1"); shift; done
	shift
	sargs=("$@")
	rbudp_bg pid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
		--rcvbuf 4Mi --timeout 30 "${rargs[@]}"
	sleep 0.3
	ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet \
		--json --timeout 30 "${sargs[@]}" > "$RB_TMP/$name.send.json" ||
		fail "$name: sender failed: $(cat "$RB_TMP/$name.send.json")"
	wait "$pid"
	rc=$?
	[ $rc -eq 0 ] || fail "$name: receiver exit $rc"
}

echo "random file, 64 MB, --rate $RATE"
head -c 64000001 /dev/urandom > "$RB_TMP/in.bin" || fail "cannot make the input file"
transfer file --output "$RB_TMP/out.bin" > "$RB_TMP/file.recv.json" -- \
	--file "$RB_TMP/in.bin" --rate $RATE
cmp "$RB_TMP/in.bin" "$RB_TMP/out.bin" || fail "received file differs (cmp)"
[ "$(sha256sum < "$RB_TMP/in.bin")" = "$(sha256sum < "$RB_TMP/out.bin")" ] ||
	fail "sha256 differs"
# The digest both tools report is sha256sum's.
[ "$(rbudp_json "$RB_TMP/file.send.json" 'j["digest"]')" = "$(sha256sum < "$RB_TMP/in.bin" | cut -d' ' -f1)" ] ||
	fail "the reported digest is not the file's SHA-256"
check_accounting "$RB_TMP/file.send.json" "$RB_TMP/file.recv.json"
ls "$RB_TMP" | grep -q rbudp- && fail "temporary output file left behind"

echo "synthetic data, 50 MB, --rate $RATE"
transfer synth --output "$RB_TMP/synth.bin" > "$RB_TMP/synth.recv.json" -- \
	--size 50M --rate $RATE
rbudp_synth "$RB_TMP/synth.ref" 50000000
cmp "$RB_TMP/synth.ref" "$RB_TMP/synth.bin" || fail "synthetic data differs from the reference"
check_accounting "$RB_TMP/synth.send.json" "$RB_TMP/synth.recv.json"

echo "synthetic data, 50 MB, receiver --busy-poll"
transfer busy --busy-poll --output "$RB_TMP/busy.bin" > "$RB_TMP/busy.recv.json" -- \
	--size 50M --rate $RATE
cmp "$RB_TMP/synth.ref" "$RB_TMP/busy.bin" || fail "busy-poll: data differs from the reference"
check_accounting "$RB_TMP/busy.send.json" "$RB_TMP/busy.recv.json"
[ "$(rbudp_json "$RB_TMP/busy.recv.json" 'j["busy_poll"]')" = True ] || fail "busy_poll not reported"

echo "synthetic data, 50 MB, --discard, UDP GSO (8 per send)"
transfer gso --discard > "$RB_TMP/gso.recv.json" -- --size 50M --rate $RATE --gso 8 --batch 64
check_accounting "$RB_TMP/gso.send.json" "$RB_TMP/gso.recv.json"
[ "$(rbudp_json "$RB_TMP/gso.send.json" 'j["gso_segs"]')" = 8 ] || fail "GSO not in use"
echo "PASS"
