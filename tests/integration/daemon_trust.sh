#!/usr/bin/env bash
# What one sender can do to others, and the daemon's own files
# (issue: trust boundaries). rxbneckd without BPF (its RATEs are then the
# top of each sender's own search, which is what the confinement check
# needs), 200 ms epochs, a watched port, on loopback; the attacks come from
# other loopback addresses (127.0.0.2-4) than the legitimate sender
# (127.0.0.1). tests/integration/daemon_trust.py speaks the protocol.
# Checked:
#  - a FIFO as state/flows.state: the daemon starts (and answers) at once,
#    says why in status (health degraded, the reason), stops on SIGTERM;
#    a FIFO as state/streams.state: refused and logged, not waited on;
#  - a second sender of the same port whose HELLO says 1 b/s gets its own
#    rate and never lowers the first's (was: RATE 1 b/s pushed to both);
#  - REPORTs about another flow, with resent > sent, with more lost than
#    sent: ERROR BAD_VALUE and closed; a sound one is kept; counted; 500
#    aborted ones back to back are taken but logged at most 20 a second
#    (the sender server's limit on messages about connections);
#  - 16 HELLOs for unwatched ports from one address: 4 served, the rest
#    REFUSED, and a sender from another address still gets its new flow;
#  - 1024 connections from one address kept alive with PING: 64 served,
#    the rest TOO_MANY, another address still served;
#  - a reload that narrows [control] allow closes the open connection it
#    no longer allows (ERROR NOT_ALLOWED, logged) and keeps the others;
#  - REFUSED only for admission (PROTOCOL.md §8): a TCP flow and a port no
#    socket is bound to are served (the latter's RATE: nothing modelled);
#    with flow_owner_uids the unbound port is refused, a bound one served;
#  - status counts the refusals by reason, rxbneckctl shows them, and the
#    metrics endpoint's rxbneck_sender_refusals_total says the same.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/daemon_lib.inc"

command -v python3 >/dev/null || skip "python3 not installed"
# Below the ephemeral range (32768-60999 by default): the hold scenario's
# 1024 client sockets must not already own a port the owner scenario binds.
P=$((20000 + $$ % 12000))
MPORT=$(free_port)
PEER=$S/tests/integration/daemon_trust.py
ulimit -n 4096 || skip "cannot raise the open-file limit to 4096"

mkdir -p "$T/state"
mkfifo "$T/state/flows.state" "$T/state/streams.state"
conf() {
	write_conf "$T/d.conf" "[measure] attach = none" "[measure] interval_ms = 200" \
		"[measure] watch_ports = $P" "[control] allow = $1" "$@"
	printf '[metrics]\nenabled = yes\nlisten = 127.0.0.1:%s\n' "$MPORT" >> "$T/d.conf"
}
conf "127.0.0.0/8 ::1/128"
t0=$SECONDS
start_daemon "$T/d.conf"
log "started in $((SECONDS - t0)) s with a FIFO as flows.state"
status_json > "$T/s0.json"
jget "$T/s0.json" "d['daemon']['health']" | grep -qx degraded || die "health not degraded"
jget "$T/s0.json" "'\n'.join(d['daemon']['degraded_reasons'])" | grep -q "is a FIFO, not a regular file" ||
	die "no reason for the FIFO: $(jget "$T/s0.json" "d['daemon']['degraded_reasons']")"
grep -q "is a FIFO, not a regular file" "$T/daemon.log" || die "the FIFO is not logged"
grep -q "reading .*/streams.state: Invalid argument" "$T/daemon.log" ||
	die "the FIFO as streams.state is not logged"

for s in confine report squat hold admit; do
	t0=$SECONDS
	out=$(python3 "$PEER" "$CPORT" "$SOCK" $s $P) || die "$s: $out"
	log "$s: $out"
	[ $s = report ] || continue
	# At most 20 lines a second (LOG_BURST in sendsrv.c) for the 500 and
	# the sound one, over the seconds the scenario took (and one more).
	n=$(grep -c "transfer on port $P" "$T/daemon.log")
	max=$((20 * (SECONDS - t0 + 2)))
	[ "$n" -le "$max" ] || die "$n REPORT lines logged, more than $max"
	log "report: $n REPORT lines logged (at most $max)"
done

# A reload that narrows the allow-list, with a sender from 127.0.0.4 on.
coproc IDLE { python3 "$PEER" "$CPORT" "$SOCK" idle $P 2>&1; }
read -r -t 10 line <&"${IDLE[0]}" || die "idle senders did not connect"
[ "$line" = ready ] || die "idle senders: $line"
conf "127.0.0.1/32 ::1/128"
ctl reload >/dev/null || die "reload failed: $(ctl reload 2>&1)"
echo go >&"${IDLE[1]}"
read -r -t 15 line <&"${IDLE[0]}" || die "idle senders said nothing"
wait "$IDLE_PID" || die "allow reload: $line"
log "allow reload: $line"
grep -q "closed .* connections whose addresses the new allow-list refuses" "$T/daemon.log" ||
	die "the closing is not logged"

status_json > "$T/s1.json"
python3 - "$T/s1.json" "$MPORT" <<'PY' || die "refusals in status or metrics"
import json, re, sys, urllib.request
s = json.load(open(sys.argv[1]))["senders"]
r = s["refused"]
print(json.dumps(r))
assert r["bad_report"] == 3, r
assert r["flows_per_address"] >= 12, r
assert r["connection_limit_per_address"] >= 1024 - 64, r
assert r["closed_by_allow_reload"] >= 1, r
# Nothing is refused any more: the endpoint counts as status did.
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[2], timeout=5).read().decode()
m = {k: int(float(v)) for k, v in
     re.findall(r'^rxbneck_sender_refusals_total\{reason="([a-z_]+)"\} (\S+)$', text, re.M)}
assert m == r, ("metrics", m, "status", r)
PY
ctl status | grep -E "^ +refused: .*unwatched flows per address" >&2 ||
	die "rxbneckctl status does not show the refusals by reason"
# flow_owner_uids: the receiver must be bound, by a listed user, first.
conf "127.0.0.1/32 ::1/128" "[control] flow_owner_uids = 0"
ctl reload >/dev/null || die "reload failed: $(ctl reload 2>&1)"
out=$(python3 "$PEER" "$CPORT" "$SOCK" owner $P) || die "owner: $out"
log "owner: $out"
stop_daemon
log "PASS"
