#!/usr/bin/env bash
# Robustness of rxbneckd under hostile input (docs/daemon.md §7):
# 1000 concurrent sender-protocol connections doing random, truncated and
# oversized frames, bad magic, slow loris, flow-port churn and well-behaved
# sessions (tests/integration/daemon_flood.py), plus junk on the control
# socket, and HTTP of every kind on the metrics endpoint (a fifth of the
# connections), for FLOOD_SECONDS (default 60) per phase. Throughout,
# `rxbneckctl status` must keep answering (its latency is measured) and the
# daemon's RSS must stay within the stated bound:
#
#   RSS <= RSS at start + sendsrv_memory_bound() + ctlsrv_memory_bound()
#          + [metrics] max_connections x (8 KiB request + 2 expositions) + 8 MiB
#
# (connection slots and buffers of the three servers; the 8 MiB cover the
# allocator's and libc's own), with no upward trend over the last half of
# the run; GET /metrics still answers after the flood, and answered during
# it. Phase 1 uses the normal build (memory), phase 2 the ASan+UBSan
# build (make SAN=1): it must survive the same and exit 0 on SIGTERM with
# no AddressSanitizer/LeakSanitizer report.
. "$(dirname "$0")/daemon_lib.inc"

SECS=${FLOOD_SECONDS:-60}
CONNS=${FLOOD_CONNS:-1000}
FLOOD=$(dirname "$0")/daemon_flood.py
ulimit -n 8192 || skip "cannot raise RLIMIT_NOFILE"
MPORT=$(free_port)
MCONNS=16

# scrape > FILE: GET /metrics.
scrape() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' "$MPORT"
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status"; }

# flood_start NAME: daemon_flood.py in the background (output in
# $T/flood.NAME, its pid in fpid); returns once it has had a second to
# connect.
flood_start() {
	python3 "$FLOOD" 127.0.0.1 "$CPORT" "$SOCK" "$CONNS" "$SECS" 9000 "$MPORT" \
		> "$T/flood.$1" 2> "$T/flood.$1.err" &
	fpid=$!
	_bg_pids+=($fpid)
	sleep 1
}

# flood_wait NAME: the flood client must exit 0.
flood_wait() { wait "$fpid" || die "flood client failed: $(cat "$T/flood.$1.err")"; }

# timed_status OUT: one `rxbneckctl status --json` to OUT (stderr to
# $T/err); its latency in ms in status_ms, the longest so far in maxms.
timed_status() {
	local t0 t1 rc
	t0=$(date +%s%N)
	ctl status --json > "$1" 2> "$T/err"
	rc=$?
	t1=$(date +%s%N)
	status_ms=$(( (t1 - t0) / 1000000 ))
	[ "$status_ms" -gt "$maxms" ] && maxms=$status_ms
	return "$rc"
}

# phase NAME: run the flood against the running daemon, sample status and RSS.
phase() {
	local name=$1 maxms=0 n=0 fails=0 rss status_ms fpid
	local base_kb=$(rss_kb) expo_bytes
	scrape > "$T/scrape.before" || die "GET /metrics before the flood"
	expo_bytes=$(wc -c < "$T/scrape.before")
	: > "$T/rss.$name"
	: > "$T/st.$name.jsonl"
	flood_start "$name"
	while kill -0 "$fpid" 2>/dev/null; do
		if ! timed_status "$T/st.one"; then
			fails=$((fails + 1))
			log "status failed: $(cat "$T/err")"
		fi
		cat "$T/st.one" >> "$T/st.$name.jsonl"
		n=$((n + 1))
		rss=$(rss_kb) || die "the daemon is gone"
		echo "$(date +%s.%N) $rss $status_ms" >> "$T/rss.$name"
		sleep 0.5
	done
	flood_wait "$name"
	kill -0 "$DPID" || die "the daemon died under the flood"
	ctl status --json > "$T/st.json" || die "no status after the flood"
	sleep $((MTIMEOUT + 1))	# the flood's metrics connections end
	scrape > "$T/scrape.after" || die "GET /metrics after the flood"
	grep -q '^rxbneck_metrics_requests_total{code="200"} ' "$T/scrape.after" || die "scrape after the flood"
	python3 - "$T/st.json" "$T/rss.$name" "$base_kb" "$name" "$n" "$fails" "$maxms" "$T/flood.$name" "$T/st.$name.jsonl" "$((MCONNS * (8192 + 2 * expo_bytes)))" "$T/scrape.after" <<'PY' || die "phase $name"
import json, sys
st = json.load(open(sys.argv[1]))
rows = [l.split() for l in open(sys.argv[2])]
base, name, n, fails, maxms = int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
flood = json.load(open(sys.argv[8]))
samples = [json.loads(l) for l in open(sys.argv[9]) if l.strip()]
conc = max(s["senders"]["connected"] + s["senders"]["awaiting_hello"] + s["senders"]["closing"]
           for s in samples)
lat = sorted(int(r[2]) for r in rows)
rss = [int(r[1]) for r in rows]
metrics_b = int(sys.argv[10])
bound_kb = base + (st["senders"]["mem_bound_bytes"] + st["daemon"]["ctl"]["mem_bound_bytes"] + metrics_b) // 1024 + 8192
scr = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[11]) if l.startswith("rxbneck_metrics_")}
half = len(rss) // 2
early, late = max(rss[half // 2:half] or rss), max(rss[half:])
print(f"{name}: {flood['opened']} connections opened ({flood['closed_by_daemon']} closed by the daemon), "
      f"{flood['bytes_out']/1e6:.1f} MB sent, {flood['ctl_junk']} junk ctl requests; "
      f"up to {conc} connections open at once in the daemon")
print(f"{name}: status answered {n - fails}/{n}, latency median {lat[len(lat)//2]} ms, "
      f"p99 {lat[min(len(lat)-1, int(len(lat)*0.99))]} ms, max {maxms} ms")
print(f"{name}: RSS start {base} kB, peak {max(rss)} kB, bound {bound_kb} kB "
      f"(sendsrv {st['senders']['mem_bound_bytes']//1024} kB + ctl {st['daemon']['ctl']['mem_bound_bytes']//1024} kB "
      f"+ metrics {metrics_b//1024} kB + 8 MiB); "
      f"second quarter max {early} kB, second half max {late} kB")
print(f"{name}: daemon counters: accepted {st['senders']['accepted']}, rejected full {st['senders']['rejected_full']}, "
      f"errors sent {st['senders']['errors_sent']}")
assert fails == 0, "status failed during the flood"
assert maxms < 2000, "status took more than 2 s"
assert max(rss) <= bound_kb, "RSS above the bound"
assert late <= early + 4096, "RSS still growing in the second half"
print(f"{name}: metrics endpoint: {flood['http_opened']} connections, {flood['http_200']} answers 200 "
      f"seen by the flood; the daemon says {scr})")
assert st["senders"]["accepted"] >= 1000
assert flood["http_opened"] >= 100 and flood["http_200"] >= 1, "the metrics endpoint was not flooded"
PY
}

MTIMEOUT=3
# The flood comes from one address: the per-address cap raised to the
# global one, so that the daemon holds up to 1000 connections at once
# (daemon_trust.sh tests the cap).
write_conf "$T/d.conf" "[measure] interval_ms = 250" "[measure] watch_ports = 9000" \
	"[control] hello_timeout_s = 2" "[control] idle_timeout_s = 5" \
	"[control] max_connections_per_address = 1024" "[control] max_flows_per_address = 16"
printf '[metrics]\nenabled = yes\nlisten = 127.0.0.1:%s\nmax_connections = %s\nmax_connections_per_address = %s\ntimeout_s = %s\n' \
	"$MPORT" "$MCONNS" "$MCONNS" "$MTIMEOUT" >> "$T/d.conf"

# Phase 1: the normal build.
start_daemon "$T/d.conf"
sleep 1
phase normal
stop_daemon
grep -E 'AddressSanitizer|LeakSanitizer|runtime error' "$T/daemon.log" && die "sanitizer report"

# Phase 2: the sanitizer build.
log "building the ASan+UBSan daemon (make SAN=1)"
make -C "$S" -s SAN=1 build/san/rxbneckd >"$T/make.log" 2>&1 || die "make SAN=1: $(tail "$T/make.log")"
RXBD=$S/build/san/rxbneckd
: > "$T/daemon.log"
start_daemon "$T/d.conf" ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:quarantine_size_mb=32 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
sleep 2
# ASan's shadow memory and quarantine are not the daemon's: only the
# daemon's liveness, status latency and a clean exit are checked here.
phase_san() {
	local maxms=0 n=0 status_ms fpid
	flood_start san
	while kill -0 "$fpid" 2>/dev/null; do
		timed_status /dev/null || die "status failed under the flood (ASan build): $(cat "$T/err")"
		n=$((n + 1))
		sleep 0.5
	done
	flood_wait san
	log "san: status answered $n/$n, max latency $maxms ms; flood $(cat "$T/flood.san")"
	[ $maxms -lt 3000 ] || die "status took $maxms ms"
}
phase_san
stop_daemon
if grep -E 'AddressSanitizer|LeakSanitizer|runtime error' "$T/daemon.log"; then
	die "sanitizer report (above)"
fi
log "PASS: ASan/UBSan build exited 0 with no report"
