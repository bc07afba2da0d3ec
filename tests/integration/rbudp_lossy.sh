#!/usr/bin/env bash
# A lossy RBUDP transfer: a tiny receive buffer and a receiver that reads
# only every 2 ms, at a rate it cannot absorb. The file must still arrive
# byte-identical, over more than one round, and the losses must add up:
# per round between sender and receiver, and in total against the kernel's
# own count of datagrams dropped at the socket (the namespace's Udp
# RcvbufErrors and the socket's drop counter).
set -u
. "${RXB_SRC:-.}/tools/rbudp/testlib.sh"
rbudp_setup lossy

PORT=9200
drops0=$(rbudp_snmp_udp "$RB_NS_R" RcvbufErrors)
rbudp_bg rpid ip netns exec "$RB_NS_R" "$RB_BIN/rxbneck-recv" --port $PORT --quiet --json \
	--rcvbuf 64Ki --poll-us 2000 --output "$RB_TMP/out.bin" > "$RB_TMP/recv.json"
sleep 0.3
rbudp_synth "$RB_TMP/ref.bin" 30000000
ip netns exec "$RB_NS_S" "$RB_BIN/rxbneck-send" --to "$RB_ADDR_R" --port $PORT --quiet --json \
	--file "$RB_TMP/ref.bin" --rate 2G > "$RB_TMP/send.json" ||
	fail "sender failed: $(cat "$RB_TMP/send.json")"
wait "$rpid" || fail "receiver failed: $(cat "$RB_TMP/recv.json")"
drops1=$(rbudp_snmp_udp "$RB_NS_R" RcvbufErrors)

cmp "$RB_TMP/ref.bin" "$RB_TMP/out.bin" || fail "received file differs (cmp)"
python3 - "$RB_TMP/send.json" "$RB_TMP/recv.json" $((drops1 - drops0)) <<'PY' || fail "accounting"
import json, sys
s = json.loads(open(sys.argv[1]).readline())
r = json.loads(open(sys.argv[2]).readline())
kernel_drops = int(sys.argv[3])
assert s["ok"] and r["ok"] and s["digest"] == r["digest"] and r["digest_checked"]
sr, rr = s["per_round"], r["per_round"]
lost = [x["pkts_lost"] for x in sr]
print("  rounds %d, lost per round %s, T = %.3f s" % (s["rounds"], lost, s["transfer_time_s"]))
assert s["rounds"] > 1, "expected losses and more than one round"
assert lost[0] > 0 and lost[-1] == 0
for i in range(len(sr)):
    assert sr[i]["pkts_lost"] == rr[i]["pkts_lost"]
    assert sr[i]["pkts_sent"] == rr[i]["pkts_sent"]
    if i:
        assert sr[i]["pkts_sent"] == lost[i - 1]
assert s["pkts_sent"] == s["total_pkts"] + sum(lost)
# Every datagram sent was either read by the receiver or dropped by the
# kernel at the socket: nothing else can lose datagrams on this path.
unread = s["pkts_sent"] - r["dgrams_received"]
print("  sent %d, read %d, kernel RcvbufErrors %d, socket drops %d, duplicates %d"
      % (s["pkts_sent"], r["dgrams_received"], kernel_drops, r["socket_drops"],
         r["pkts_duplicate"]))
assert unread == kernel_drops == r["socket_drops"], "loss accounting disagrees with the kernel"
assert unread >= sum(lost)
PY
echo "PASS"
