# shellcheck shell=bash
# Helpers for the RBUDP integration tests and measurements (sourced, not run).
#
# rbudp_setup TAG      checks (root, ip, python3, binaries; exits 77 when
#                      something is missing), makes a temp dir $RB_TMP and two
#                      network namespaces joined by a veth pair: sender side
#                      $RB_NS_S ($RB_ADDR_S), receiver side $RB_NS_R
#                      ($RB_ADDR_R). Names carry TAG and the PID, so
#                      concurrent runs never collide. Everything is removed
#                      on exit (trap), also on failure.
# rbudp_bg VAR CMD...  start CMD in the background, its PID in VAR (killed
#                      on exit if still running).
# rbudp_snmp_udp NS F  a Udp counter of /proc/net/snmp inside namespace NS.
# rbudp_json FILE EXPR evaluate a Python expression on the JSON object j
#                      loaded from FILE (first line), print the result.
# fail MSG             print "FAIL: MSG" and exit 1.

RB_BIN=${RXB_BUILD:-$(pwd)/build}
RB_PIDS=()

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

rbudp_cleanup() {
	local p
	for p in "${RB_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${RB_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	[ -n "${RB_NS_S:-}" ] && ip netns del "$RB_NS_S" 2>/dev/null
	[ -n "${RB_NS_R:-}" ] && ip netns del "$RB_NS_R" 2>/dev/null
	[ -n "${RB_TMP:-}" ] && rm -rf "$RB_TMP"
	return 0
}

rbudp_netns_up() {
	local tag=$1
	RB_NS_S=rxbt-$tag-s-$$
	RB_NS_R=rxbt-$tag-r-$$
	RB_IF_S=rxs$$
	RB_IF_R=rxr$$
	RB_ADDR_S=10.231.0.1
	RB_ADDR_R=10.231.0.2
	ip netns add "$RB_NS_S" || return 1
	ip netns add "$RB_NS_R" || return 1
	ip link add "$RB_IF_S" netns "$RB_NS_S" type veth peer name "$RB_IF_R" netns "$RB_NS_R" || return 1
	ip -n "$RB_NS_S" addr add "$RB_ADDR_S/24" dev "$RB_IF_S" || return 1
	ip -n "$RB_NS_R" addr add "$RB_ADDR_R/24" dev "$RB_IF_R" || return 1
	ip -n "$RB_NS_S" link set "$RB_IF_S" up || return 1
	ip -n "$RB_NS_R" link set "$RB_IF_R" up || return 1
	ip -n "$RB_NS_S" link set lo up || return 1
	ip -n "$RB_NS_R" link set lo up || return 1
}

rbudp_setup() {
	local b
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: needs root (network namespaces)" >&2
		exit 77
	fi
	for b in ip python3 cmp sha256sum; do
		command -v "$b" >/dev/null || { echo "SKIP: $b not installed" >&2; exit 77; }
	done
	for b in rxbneck-send rxbneck-recv; do
		[ -x "$RB_BIN/$b" ] || { echo "SKIP: $RB_BIN/$b not built" >&2; exit 77; }
	done
	trap rbudp_cleanup EXIT
	RB_TMP=$(mktemp -d "/tmp/rxbt-$1.XXXXXX") || fail "mktemp"
	rbudp_netns_up "$1" || fail "cannot create the network namespaces"
}

rbudp_bg() {
	local var=$1
	shift
	"$@" &
	RB_PIDS+=($!)
	printf -v "$var" '%s' "$!"
}

rbudp_snmp_udp() {
	ip netns exec "$1" awk -v f="$2" '
		$1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Udp:" && hdr { print $col[f]; exit }' /proc/net/snmp
}

rbudp_json() {
	python3 -c 'import json,sys; j=json.loads(open(sys.argv[1]).readline()); print(eval(sys.argv[2]))' "$1" "$2"
}

# The synthetic data of rxbneck-send --size, written by an independent
# implementation (source.h documents the definition): rbudp_synth FILE BYTES
rbudp_synth() {
	python3 - "$1" "$2" <<'PY'
import sys
P = 1048573
M = (1 << 64) - 1
def mix(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
pat = b"".join(mix(((k + 1) * 0x9e3779b97f4a7c15) & M).to_bytes(8, "little")
               for k in range(P // 8 + 1))[:P]
n = int(sys.argv[2])
with open(sys.argv[1], "wb") as f:
    while n > 0:
        f.write(pat[:min(n, P)])
        n -= P
PY
}
