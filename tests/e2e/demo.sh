#!/usr/bin/env bash
# make demo: what rxbneck does for a sender, in one command (README.md).
#
#   tests/e2e/demo.sh [-b BUILD] [-s SIZE] [-d DELAY_MS] [-k HOGS]
#
# Sets up a sender network namespace joined to this host by a veth pair,
# rxbneck-recv pinned to CPU 1 with HOGS (2) CPU-bound loops on that CPU,
# rxbneckd watching the receive port, and a delayed path (the RBUDP tools'
# emulated one-way delay, DELAY_MS each way, 50 by default). Then two
# transfers of the same SIZE (200M) file of random bytes: a blast at the
# sender's top rate (10 Gb/s), and rxbneck-send --follow, which sends at
# the rate rxbneckd gives it and pauses through the windows it predicts.
# Prints both transfer times, first-round losses and rounds, the daemon's
# first rate and its prediction for the transfer, and checks that both
# received files are byte-identical to the one sent ("both transfers
# verified"). Exit 0 when both were, 1 otherwise, 77 when the machine
# lacks something (root, stress-ng, 2 CPUs).
#
# Takes the heavy-test lock (/tmp/rxbneck-heavy.lock) unless E_LOCK_HELD=1.
# A shared machine's other work on CPU 1 shows up as a slower transfer:
# run it on a quiet host.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
E_SRC=$SRC
E_BUILD=$SRC/build
HOGS=2
while getopts "b:s:d:k:" o; do
	case $o in
	b) E_BUILD=$OPTARG ;; s) E_SIZE=$OPTARG ;; d) E_DELAY_MS=$OPTARG ;; k) HOGS=$OPTARG ;;
	*) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
if [ "${E_LOCK_HELD:-0}" != 1 ]; then
	E_LOCK_HELD=1 exec flock /tmp/rxbneck-heavy.lock "$0" "$@"
fi
E_SIZE=${E_SIZE:-200M}
E_DELAY_MS=${E_DELAY_MS:-50}
E_VERIFY=1
E_OUT=$(mktemp -d /tmp/rxbneck-demo.XXXXXX) || exit 1
export E_BUILD E_OUT
. "$SRC/tests/e2e/lib.sh"
e2e_setup
on_exit_demo() { e2e_cleanup; rm -rf "$E_OUT"; }
trap on_exit_demo EXIT
taskset -pc "$E_SEND_CPU" $$ > /dev/null || e2e_fail "taskset"
e2e_log "sender namespace $E_NS_S ($E_ADDR_S) -> this host ($E_ADDR_R), one-way delay $E_DELAY_MS ms;" \
	"receiver on CPU $E_RECV_CPU with $HOGS CPU hogs; file $E_SIZE of random bytes"
e2e_daemon_start
E_K=$HOGS
e2e_hogs "$HOGS"
sleep 2
e2e_log "blast at $E_LINE_RATE b/s ..."
e2e_run fixed "$E_LINE_RATE" 1 demo
e2e_log "--follow ..."
e2e_run follow - 1 demo
e2e_hogs 0
e2e_ctl status --json > "$E_TMP/status.json" || e2e_fail "rxbneckctl status"
/usr/bin/python3 - "$E_OUT/runs.jsonl" "$E_TMP/status.json" "$E_PORT" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))
port = int(sys.argv[3])
by = {r["mode"]: r for r in runs}
def line(name, r):
    s = r.get("send") or {}
    if not s.get("ok"):
        return f"{name:<18} FAILED: {(s.get('error') or r.get('send_err', '')).strip()[-200:]}"
    r1 = s["per_round"][0]
    return (f"{name:<18} {s['transfer_time_s']:7.3f} s  {s['rounds']:3d} rounds  first-round loss "
            f"{100.0 * r1['pkts_lost'] / max(1, r1['pkts_sent']):5.1f} %  at "
            f"{r1['rate_requested_bps'] / 1e9:6.3f} Gb/s   file {'verified' if r['file_identical'] else 'DIFFERS'}")
print(line("blast (top rate)", by["fixed"]))
print(line("--follow rxbneckd", by["follow"]))
s = by["follow"].get("send") or {}
rates = (s.get("follow") or {}).get("rates") or []
if rates:
    r = rates[0]
    print(f"rxbneckd's first rate {r['rate_bps'] / 1e9:.3f} Gb/s (flags {r['flags']:#x}, confidence "
          f"{r['confidence']}), predicted first-round loss {100 * r['loss']:.1f} %; "
          f"{len(rates)} RATE frames")
for fl in st.get("flows", []):
    rep = fl.get("last_report")
    if fl.get("port") == port and rep and rep.get("model_time_s") is not None:
        print(f"its prediction for the transfer: {rep['model_time_s']:.3f} s at "
              f"{rep['model_rate_bps'] / 1e9:.3f} Gb/s; measured {rep['elapsed_s']:.3f} s")
ok = all((by.get(m) or {}).get("file_identical") is True for m in ("fixed", "follow"))
print("both transfers verified" if ok else "NOT both transfers verified")
sys.exit(0 if ok else 1)
PY
