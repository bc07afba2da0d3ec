#!/usr/bin/env bash
# Configuration errors and reloads: a bad key, a bad value or a missing
# file stop start-up with a message naming FILE:LINE and the key; -t checks
# a file; SIGHUP and `rxbneckctl reload` with a bad file keep the running
# configuration (status still shows the old values) and say why; a good
# reload applies what can be applied live and lists what needs a restart.
. "$(dirname "$0")/daemon_lib.inc"

# start_fails CONF PATTERN: exit status 1, and PATTERN in the message.
start_fails() {
	local rc
	timeout 10 "$RXBD" -f -c "$1" 2>"$T/err"; rc=$?
	[ $rc -eq 1 ] || die "start with $1: exit $rc (expected 1): $(cat "$T/err")"
	grep -Eq "$2" "$T/err" || die "start with $1: message '$(cat "$T/err")' lacks /$2/"
	log "refused as expected: $(head -1 "$T/err")"
}

write_conf "$T/badkey.conf" "[measure] colour = blue"
line=$(grep -n '^colour' "$T/badkey.conf" | cut -d: -f1)
start_fails "$T/badkey.conf" "$T/badkey.conf:$line: \[measure\] colour: "

write_conf "$T/badval.conf" "[measure] interval_ms = 5"
line=$(grep -n '^interval_ms' "$T/badval.conf" | cut -d: -f1)
start_fails "$T/badval.conf" "$T/badval.conf:$line: \[measure\] interval_ms: .*10"

write_conf "$T/badval2.conf" "[control] allow = 10.1.2.3/8"
start_fails "$T/badval2.conf" "\[control\] allow: .*host bits"

start_fails "$T/missing.conf" "$T/missing.conf: .*(No such file|not found|missing)"
[ ! -e "$SOCK" ] || die "a refused start left a socket behind"

"$RXBD" -t -c "$T/badval.conf" 2>/dev/null && die "-t accepted a bad file"
write_conf "$T/d.conf" "[measure] interval_ms = 500" "[measure] watch_ports = 9000"
"$RXBD" -t -c "$T/d.conf" | grep -q ': ok$' || die "-t on a good file"
"$RXBD" --bogus 2>"$T/err"; [ $? -eq 2 ] && grep -q -- '--bogus' "$T/err" || die "bad option: not exit 2"

# The control socket's group and mode come from the configuration.
write_conf "$T/grp.conf" "[daemon] ctl_group = nogroup" "[daemon] ctl_socket_mode = 0640"
start_daemon "$T/grp.conf"
[ "$(stat -c '%G %a' "$SOCK")" = "nogroup 640" ] || die "socket: $(stat -c '%G %a' "$SOCK")"
stop_daemon
log "ctl_group/ctl_socket_mode applied: $SOCK is nogroup, 0640"

start_daemon "$T/d.conf"
wait_epochs 1
# status_val EXPR: a value from status --json ("d" is the document).
status_val() { ctl status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# SIGHUP with a bad file: the old configuration stays.
cp "$T/d.conf" "$T/good.conf"
sed -i 's/^interval_ms = 500/interval_ms = 999999/' "$T/d.conf"
kill -HUP "$DPID"
sleep 0.5
kill -0 "$DPID" || die "SIGHUP with a bad file killed the daemon"
[ "$(status_val 'd["daemon"]["epoch_ms"]')" = 500 ] || die "bad reload changed epoch_ms"
[ "$(status_val 'd["daemon"]["reload"]["ok"]')" = False ] || die "status does not say the reload failed"
status_val 'd["daemon"]["reload"]["message"]' | grep -q '\[measure\] interval_ms' ||
	die "status does not say why: $(status_val 'd["daemon"]["reload"]["message"]')"
status_val 'd["daemon"]["degraded_reasons"]' | grep -q 'reload failed' || die "health does not mention it"
grep -q 'reload failed, keeping the running configuration: .*interval_ms' "$T/daemon.log" ||
	die "the log does not say why"
log "SIGHUP with a bad file: kept 500 ms, said why"

# rxbneckctl reload with a bad file: exit 1, the reason on stderr.
ctl reload 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'FAILED .*\[measure\] interval_ms' "$T/err" || die "ctl reload: rc $rc: $(cat "$T/err")"
ctl reload --json > "$T/out" 2>/dev/null
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["code"]=="FAILED" and "interval_ms" in e["message"]' "$T/out" ||
	die "ctl reload --json error body: $(cat "$T/out")"
# A missing file on reload is the same.
mv "$T/d.conf" "$T/moved.conf"
ctl reload 2>"$T/err" && die "reload of a missing file succeeded"
grep -q "$T/d.conf" "$T/err" || die "missing file not named: $(cat "$T/err")"
[ "$(status_val 'd["daemon"]["epoch_ms"]')" = 500 ] || die "missing-file reload changed the config"
log "rxbneckctl reload with a bad or missing file: exit 1, old config kept"

# A good reload: live keys apply, restart keys are listed.
cp "$T/good.conf" "$T/d.conf"
sed -i -e 's/^interval_ms = 500/interval_ms = 250/' -e 's/^watch_ports = 9000/watch_ports = 9000 9001/' \
	-e "s/^port = $CPORT/port = $(free_port)/" "$T/d.conf"
sed -i 's/^\[daemon\]/[daemon]\nlog_level = debug/' "$T/d.conf"
ctl reload > "$T/out" || die "good reload failed: $(cat "$T/out")"
grep -q 'restart needed for \[control\] port' "$T/out" || die "restart key not listed: $(cat "$T/out")"
grep -q '\[measure\] interval_ms' "$T/out" || die "changed keys not listed: $(cat "$T/out")"
[ "$(status_val 'd["daemon"]["epoch_ms"]')" = 250 ] || die "interval_ms not applied"
[ "$(status_val 'd["daemon"]["log_level"]')" = debug ] || die "log_level not applied"
[ "$(status_val 'sorted(f["port"] for f in d["flows"])')" = "[9000, 9001]" ] || die "watch_ports not applied"
status_val 'd["daemon"]["reload"]["restart_needed"]' | grep -q '\[control\] port' || die "status: restart_needed"
# The epoch timer really runs at 250 ms now: at least 2 s / 250 ms - 2
# epochs between the two readings, at most the time from before the first
# to after the second (a loaded machine makes the status calls slow) / 250 ms + 2.
t0=$(date +%s%N); e0=$(status_val 'd["daemon"]["epochs"]'); sleep 2
e1=$(status_val 'd["daemon"]["epochs"]'); t1=$(date +%s%N)
n=$((e1 - e0)) max=$(( (t1 - t0) / 250000000 + 2 ))
[ $n -ge 6 ] && [ $n -le $max ] || die "$n epochs in $(( (t1 - t0) / 1000000 )) ms at 250 ms (expected 6..$max)"
grep -q "reload: \[measure\] interval_ms: '500' -> '250'" "$T/daemon.log" || die "the diff is not logged"
log "good reload: 250 ms epochs ($n in 2 s), ports 9000 9001, restart needed for [control] port"

# SIGHUP reloads too; removing a watched port drops its flow.
sed -i 's/^watch_ports = 9000 9001/watch_ports = 9001/' "$T/d.conf"
kill -HUP "$DPID"
sleep 0.5
[ "$(status_val '[f["port"] for f in d["flows"]]')" = "[9001]" ] || die "SIGHUP did not apply watch_ports"
# [measure] devices restarts the collector; the daemon keeps measuring.
sed -i 's/^\[measure\]/[measure]\ndevices = lo/' "$T/d.conf"
kill -HUP "$DPID"
sleep 0.3
wait_epochs 2
grep -q 'collector restarted' "$T/daemon.log" || die "collector not restarted for [measure] devices"
stop_daemon
log "PASS"
