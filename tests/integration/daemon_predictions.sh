#!/usr/bin/env bash
# The daemon's record of predictions against outcomes (docs/daemon.md,
# "Predictions against outcomes"): three rxbneck-send --follow transfers
# with REPORT to a receiver on loopback, then, from `rxbneckctl status
# --json`, each transfer kept with the prediction the sender was told (its
# first RATE, from the sender's own --json: rate, loss, predicted T) and
# the outcome the sender measured (T, first-round loss), and the running
# error as computed here from the senders' records. The flow's record
# stays when its senders have left and the flow is forgotten (learned
# flows), and the status text shows it without nan/inf.
. "$(dirname "$0")/daemon_lib.inc"

for b in rxbneck-recv rxbneck-send; do
	[ -x "$B/$b" ] || die "build first: $B/$b"
done
P=$(free_port)
write_conf "$T/d.conf" "[measure] interval_ms = 250" "[measure] flow_linger_s = 1"
start_daemon "$T/d.conf"

recv() { exec "$B/rxbneck-recv" "$@" > /dev/null; }
bg recv --port "$P" --discard --count 0 --rcvbuf 4Mi --quiet
sleep 0.5
for i in 1 2 3; do
	size=$((i == 2 ? 60000000 : 30000000))
	"$B/rxbneck-send" --to 127.0.0.1 --port "$P" --size $size --payload 1456 \
		--follow "127.0.0.1:$CPORT" --rtt-ms 10 --quiet --json > "$T/send$i.json" \
		2>>"$T/send.err" || die "transfer $i failed: $(tail -3 "$T/send.err")"
	sleep 0.6	# the next one after an epoch of this one's traffic
done
ctl status --json > "$T/after.json" || die "status --json"
ctl status > "$T/after.txt" || die "status"
check_status_text "after the transfers"
grep -qE "predictions +: 3 transfers" "$T/after.txt" ||
	die "no predictions line: $(cat "$T/after.txt")"
log "$(grep -E "predictions +:" "$T/after.txt" | sed 's/^ *//')"

# The senders have left: the flow lingers 1 s, then is forgotten.
for _ in $(seq 40); do
	ctl status --json > "$T/gone.json"
	jget "$T/gone.json" "any(f['port'] == $P for f in d['flows'])" | grep -q False && break
	sleep 0.25
done
ctl status > "$T/gone.txt"
check_status_text "after the flow left"
grep -qE "predictions +: 3 transfers" "$T/gone.txt" ||
	die "learned flow without its predictions: $(cat "$T/gone.txt")"

python3 - "$T" "$P" <<'PY' || die "prediction record checks"
import json, math, statistics, sys
t, port = sys.argv[1], int(sys.argv[2])
sends = [json.load(open(f"{t}/send{i}.json")) for i in (1, 2, 3)]

def close(a, b, tol):
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= tol)

def check(pred, where):
    assert pred["reported"] == 3 and pred["kept"] == 3 and pred["aborted"] == 0, pred
    ratios, lerr = [], []
    for s, e in zip(sends, pred["transfers"]):
        assert s["ok"], s
        r1 = s["per_round"][0]
        # The RATE the transfer started on: the last one the sender had
        # received when its first round began.
        r0 = [r for r in s["follow"]["rates"] if r["t_s"] <= r1["start_s"]][-1]
        assert e["file_bytes"] == s["file_bytes"], (e, s["file_bytes"])
        assert e["rtt_us"] == 10000, e
        assert e["predicted_rate_bps"] == r0["rate_bps"], (e, r0)
        assert e["predicted_confidence"] == r0["confidence"], (e, r0)
        assert e["sent_rate_bps"] == r1["rate_requested_bps"], (e, r1)
        modelled = r0["confidence"] > 0
        want_t = r0["xfer_time_s"] if modelled else None
        want_l = r0["loss"] if modelled else None
        assert close(e["predicted_time_s"], want_t, 1e-9), (e, r0)
        assert close(e["predicted_loss"], want_l, 1e-12), (e, r0)
        # The REPORT carries whole microseconds.
        assert abs(e["measured_time_s"] - s["transfer_time_s"]) <= 1.001e-6, (e, s["transfer_time_s"])
        ml = r1["pkts_lost"] / r1["pkts_sent"]
        assert abs(e["measured_loss"] - ml) <= 1e-12, (e, r1)
        assert e["rounds"] == s["rounds"], e
        if want_t:
            ratios.append(s["transfer_time_s"] / want_t)
        if want_l is not None:
            lerr.append(abs(ml - want_l) * 100)
        print(f"  {where}: {s['file_bytes']/1e6:.0f} MB, RATE {r0['rate_bps']/1e9:.3f} Gb/s "
              f"(confidence {r0['confidence']}), T predicted {want_t} s, measured "
              f"{s['transfer_time_s']:.3f} s; loss predicted {want_l}, measured {ml:.4f}")
    assert pred["time_compared"] == len(ratios) and pred["loss_compared"] == len(lerr), pred
    # Measured T is whole microseconds in the REPORT: ratios agree to 1e-4.
    if ratios:
        assert abs(pred["time_ratio_median"] - statistics.median(ratios)) <= 1e-4 * statistics.median(ratios), (pred, ratios)
        assert abs(pred["time_ratio_min"] - min(ratios)) <= 1e-4 * min(ratios), (pred, ratios)
        assert abs(pred["time_ratio_max"] - max(ratios)) <= 1e-4 * max(ratios), (pred, ratios)
    else:
        assert pred["time_ratio_median"] is None, pred
    if lerr:
        assert abs(pred["loss_error_pp_mean"] - statistics.mean(lerr)) <= 1e-9, (pred, lerr)
    return len(ratios)

fl = [f for f in json.load(open(f"{t}/after.json"))["flows"] if f["port"] == port]
assert len(fl) == 1, "flow missing"
n = check(fl[0]["predictions"], "flow")
learned = [f for f in json.load(open(f"{t}/gone.json"))["learned_flows"] if f["port"] == port]
assert len(learned) == 1, "learned flow missing"
check(learned[0]["predictions"], "learned")
# After the first transfer the flow has its own traffic: the next ones are modelled.
assert n >= 2, f"only {n} transfers had a predicted T"
PY
log "PASS"
