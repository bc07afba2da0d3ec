#!/usr/bin/env bash
# rxbneckd with exactly the privileges systemd/rxbneckd.service gives it:
# an unprivileged user (nobody, standing in for DynamicUser=) with the
# unit's AmbientCapabilities= as ambient, bounding and inheritable sets
# (setpriv). It must load every probe group and model a real flow (UDP on
# loopback, receiver pinned to CPU 1 with one CPU hog there). Then with no
# capability at all: it must still run, report itself degraded (no BPF),
# and flag what it publishes as DEGRADED.
#
# Not verifiable here (PID 1 is not systemd): the unit's other sandboxing
# (ProtectSystem=, SystemCallFilter=, DynamicUser= itself); the syscalls the
# daemon makes were checked against the filter with strace (docs/daemon.md).
. "$(dirname "$0")/daemon_lib.inc"

command -v setpriv >/dev/null || skip "setpriv not installed"
command -v iperf3 >/dev/null || skip "iperf3 not installed"
command -v stress-ng >/dev/null || skip "stress-ng not installed"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
UNIT=$S/systemd/rxbneckd.service
nobody_setup
[ -n "$caps" ] || die "no AmbientCapabilities= in $UNIT"
[ "$caps" = "$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")" ] || die "bounding set differs from ambient"
log "capabilities from the unit: $caps ($set_)"

P=$(free_port)
write_conf "$N/d.conf" "[measure] interval_ms = 500" "[measure] watch_ports = $P"

start_daemon_nobody "$set_"
# Its effective set is the unit's, no more and no fewer: the mask from the
# capabilities' numbers in the kernel's header, not from the daemon.
want=$(python3 - "$caps" <<'PY'
import re, sys
h = open("/usr/include/linux/capability.h").read()
bit = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define\s+(CAP_[A-Z_]+)\s+(\d+)\b", h)}
print("%016x" % sum(1 << bit[c] for c in sys.argv[1].split()))
PY
) || die "the unit's capabilities $caps: not all in linux/capability.h"
got=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$DPID/status")
[ "$got" = "$want" ] || die "CapEff $got, the unit's $caps are $want"
log "CapEff $got: the unit's $caps"
[ "$(stat -c %U "$N/state")" = nobody ] || die "state dir not the daemon user's"
bg taskset -c 1 iperf3 -s -p "$P" -1 >/dev/null 2>&1
sleep 0.5
bg taskset -c 0 iperf3 -u -c 127.0.0.1 -p "$P" -b 300M -l 1468 -t 12 >/dev/null 2>&1
bg stress-ng --cpu 1 --taskset 1 --timeout 12s --quiet
sleep 5
ctl status --json > "$T/st.json" || die "status"
check_status_text "the unit's capabilities, traffic, a hog"
python3 - "$T/st.json" <<'PY' || die "with the unit's capabilities"
import json, sys
d = json.load(open(sys.argv[1]))
m, f = d["measurement"], d["flows"][0]
print("probes", m.get("probes"), "attach", d["epoch"]["attach_mode"], "health", d["daemon"]["health"],
      d["daemon"]["degraded_reasons"], "notes", d["daemon"]["notes"])
print("flow", f["state"], "#C", f["inputs"]["stage_b"]["cpu_bound"]["value"], "rate",
      f["rate"]["rate_bps"], f["rate"]["flags"])
assert sorted(m["probes"]) == ["blkio", "netrx", "sched", "sockq"]
assert d["epoch"]["attach_mode"] in ("tp_btf", "raw_tp")
assert d["daemon"]["health"] == "ok", d["daemon"]["degraded_reasons"]
assert f["state"] == "model"
# The hog is seen, so the scheduler probe works with these capabilities.
# More than ~1: other work on CPU 1 outside the heavy-test lock (seen: a
# second engineer's pinned hog gave exactly 2.0) - not this test's subject.
c = f["inputs"]["stage_b"]["cpu_bound"]["value"]
assert 0.7 <= c < 8, c
if c > 1.3:
    print(f"note: #C {c:.2f} with one hog: other CPU-bound work on CPU 1")
assert "degraded" not in f["rate"]["flags"]
PY
stop_daemon

# No capability: degraded, and honest about it.
rm -rf "$N/run"
start_daemon_nobody ""
sleep 1.5
ctl status --json > "$T/st.json" || die "status without capabilities"
check_status_text "no capabilities"
python3 - "$T/st.json" <<'PY' || die "without capabilities"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["flows"][0]
print("no caps: health", d["daemon"]["health"], d["daemon"]["degraded_reasons"], "flow", f["state"], f["rate"]["flags"])
assert d["daemon"]["health"] == "degraded"
assert any("no BPF" in r for r in d["daemon"]["degraded_reasons"])
assert d["epoch"]["attach_mode"] == "none"
assert "degraded" in f["rate"]["flags"]
assert f["state"] in ("provisional", "stale")
PY
stop_daemon
log "PASS"
