#!/usr/bin/env bash
# daemon/collect/nic against independent truths:
#  - eth0's rx ring and coalescing as `ethtool -g/-c eth0` print them (read only);
#  - a veth pair in two private namespaces: the "not supported" fallback and its
#    note, nic_list_devices() in the namespace, and the rx_packets delta for a
#    known number of UDP packets against /sys/class/net/<dev>/statistics;
#  - the device deleted (-ENODEV) and re-created under the same name (new
#    baseline, then exact deltas again), all with one long-lived reader.
# Driver: the --dump/--list modes of build/tests/unit/test_nic.
# Exit 0 pass, 77 skip, anything else fail. Cleans up its namespaces on exit.
set -u

build=${RXB_BUILD:-build}
drv=$build/tests/unit/test_nic
skip() { echo "nic_netlink: SKIP: $*" >&2; exit 77; }
fail() { echo "nic_netlink: FAIL: $*" >&2; exit 1; }
ok() { echo "nic_netlink: ok: $*"; }

[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -x "$drv" ] || skip "driver $drv not built"
command -v ip >/dev/null || skip "no ip(8)"
command -v ethtool >/dev/null || skip "no ethtool(8)"

NSA=rxbt-nic-$$-a
NSB=rxbt-nic-$$-b
VA=rxn$$a		# <= 15 characters for any pid
VB=rxn$$b
NPKTS=1000
drv_pid=		# our copy: bash unsets DRV_PID when the coprocess exits

cleanup() {
	[ -n "$drv_pid" ] && kill "$drv_pid" 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
}
trap cleanup EXIT

# field NAME LINE: the value of NAME=... in a driver line (note= is the rest).
field() {
	local name=$1 line=$2
	if [ "$name" = note ]; then
		printf '%s\n' "${line#*note=}"
	else
		printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$name=//p" | head -1
	fi
}

expect() {	# expect NAME WANT LINE
	local got
	got=$(field "$1" "$3")
	[ "$got" = "$2" ] || fail "$1: want '$2', got '$got' in: $3"
}

# --------------------------------------------------------------- eth0 ----
# ethtool_value CMD SECTION KEY: KEY's value (first after SECTION) in `ethtool CMD eth0`.
ethtool_value() {
	ethtool "$1" eth0 2>/dev/null | awk -v sec="$2" -v key="$3" '
		sec == "" || index($0, sec) == 1 { insec = 1 }
		insec && $1 == key { print $2; exit }'
}

if ip link show eth0 >/dev/null 2>&1; then
	line=$("$drv" --dump eth0 --fallback 4242,4243,4244) || fail "dump eth0: $line"
	expect rc 0 "$line"
	expect name eth0 "$line"
	expect ifindex "$(cat /sys/class/net/eth0/ifindex)" "$line"
	if ethtool -g eth0 >/dev/null 2>&1; then
		rx=$(ethtool_value -g "Current hardware settings:" RX:)
		rxmax=$(ethtool_value -g "Pre-set maximums:" RX:)
		[ -n "$rx" ] || fail "cannot parse ethtool -g eth0"
		if [ "$rx" = n/a ]; then
			expect ring_source config "$line"; expect rx_ring 4242 "$line"
		else
			expect ring_source device "$line"; expect rx_ring "$rx" "$line"
		fi
		[ "$rxmax" = n/a ] && rxmax=0
		expect rx_ring_max "$rxmax" "$line"
		ok "eth0 rx ring $rx (max $rxmax) matches ethtool -g"
	else
		expect ring_source config "$line"; expect rx_ring 4242 "$line"
		ok "eth0 rings unsupported per ethtool -g, fallback used"
	fi
	if ethtool -c eth0 >/dev/null 2>&1; then
		frames=$(ethtool_value -c "" rx-frames:)
		usecs=$(ethtool_value -c "" rx-usecs:)
		[ -n "$frames" ] && [ -n "$usecs" ] || fail "cannot parse ethtool -c eth0"
		[ "$frames" = n/a ] && frames=4243
		[ "$usecs" = n/a ] && usecs=4244
		expect rx_max_frames "$frames" "$line"
		expect rx_usecs "$usecs" "$line"
		if [ "$frames" = 4243 ] || [ "$usecs" = 4244 ]; then
			expect coalesce_source config "$line"
		else
			expect coalesce_source device "$line"
		fi
		ok "eth0 rx-frames $frames rx-usecs $usecs match ethtool -c"
	else
		expect coalesce_source config "$line"
		ok "eth0 coalescing unsupported per ethtool -c, fallback used"
	fi
	# First sample of a device: zero deltas.
	expect rx_packets 0 "$line"
else
	echo "nic_netlink: no eth0 here, its part is skipped"
fi

# ------------------------------------------------------------ veth pair ---
ip netns add "$NSA" || skip "cannot create network namespaces"
ip netns add "$NSB" || fail "ip netns add $NSB"
for ns in "$NSA" "$NSB"; do
	# No IPv6 (DAD, router solicitations, MLD): only our packets on the link.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 || fail "sysctl in $ns"
done

make_veth() {
	ip -n "$NSA" link add "$VA" type veth peer name "$VB" netns "$NSB" || fail "veth add"
	ip -n "$NSA" addr add 10.254.77.1/30 dev "$VA" || fail "addr A"
	ip -n "$NSB" addr add 10.254.77.2/30 dev "$VB" || fail "addr B"
	ip -n "$NSA" link set "$VA" up || fail "up A"
	ip -n "$NSB" link set "$VB" up || fail "up B"
	set_neigh
}

# Static neighbours, so no ARP on the link either (B answers our datagrams
# with ICMP port unreachable, which would need A's address). Taking a link
# down flushes them, so this runs again after every up.
set_neigh() {
	ip -n "$NSA" neigh replace 10.254.77.2 lladdr \
		"$(ip netns exec "$NSB" cat /sys/class/net/"$VB"/address)" dev "$VA" nud permanent ||
		fail "neigh A"
	ip -n "$NSB" neigh replace 10.254.77.1 lladdr \
		"$(ip netns exec "$NSA" cat /sys/class/net/"$VA"/address)" dev "$VB" nud permanent ||
		fail "neigh B"
}

sysfs_rx() {
	ip netns exec "$NSB" cat /sys/class/net/"$VB"/statistics/rx_packets
}

send_udp() {	# send_udp N: N one-byte UDP datagrams from A to B
	ip netns exec "$NSA" bash -c '
		for ((i = 0; i < '"$1"'; i++)); do
			printf x >/dev/udp/10.254.77.2/9 || exit 1
		done' || fail "sending UDP in $NSA"
}

make_veth

# The device's own answer, independently: veth refuses ring/coalesce queries.
if ip netns exec "$NSB" ethtool -g "$VB" >/dev/null 2>&1; then
	fail "ethtool -g $VB unexpectedly answered; this test assumes veth refuses"
fi

# Device list inside the namespace: exactly the veth (lo is excluded).
list=$(ip netns exec "$NSB" "$drv" --list) || fail "--list in $NSB"
[ "$list" = "$VB" ] || fail "nic_list_devices in $NSB: want '$VB', got '$list'"
ip -n "$NSB" link set "$VB" down
list=$(ip netns exec "$NSB" "$drv" --list) || fail "--list in $NSB"
[ -z "$list" ] || fail "nic_list_devices lists a down device: '$list'"
ip -n "$NSB" link set "$VB" up || fail "up B"
set_neigh
ok "nic_list_devices in a namespace: up non-loopback devices only"

# No such device.
line=$(ip netns exec "$NSB" "$drv" --dump rxbt-nodev) && fail "dump of a missing device succeeded"
expect rc -19 "$line"
ok "missing device: -ENODEV"

# One reader for the rest, like the daemon's epoch loop.
coproc DRV { exec ip netns exec "$NSB" "$drv" --dump "$VB" --fallback 512,7,33 --repeat; }
drv_pid=$DRV_PID
next_sample() {
	[ "${1:-}" = trigger ] && { echo >&"${DRV[1]}" || fail "driver gone"; }
	read -t 20 -r line <&"${DRV[0]}" || fail "no sample from the driver"
}

next_sample
expect rc 0 "$line"
expect ifindex "$(ip netns exec "$NSB" cat /sys/class/net/"$VB"/ifindex)" "$line"
expect ring_source config "$line"
expect rx_ring 512 "$line"
expect rx_ring_max 0 "$line"
expect coalesce_source config "$line"
expect rx_max_frames 7 "$line"
expect rx_usecs 33 "$line"
expect rx_packets 0 "$line"
expect note "$VB: rings, coalesce not supported by the device, configured values used" "$line"
ok "veth: fallback values, source config, note '$(field note "$line")'"

check_delta() {	# check_delta N: send N packets, compare with sysfs
	local s0 s1
	s0=$(sysfs_rx)
	send_udp "$1"
	s1=$(sysfs_rx)
	[ $((s1 - s0)) -eq "$1" ] ||
		fail "link not quiet: sysfs rx_packets delta $((s1 - s0)) for $1 packets sent"
	next_sample trigger
	expect rc 0 "$line"
	expect rx_packets "$1" "$line"
	expect rx_dropped 0 "$line"
	ok "rx_packets delta $(field rx_packets "$line") = sysfs delta $((s1 - s0)) for $1 sent"
}

check_delta "$NPKTS"

# Drops: frames of an EtherType nobody handles (0x88B5, IEEE local
# experimental) are counted in rx_dropped by the receiving stack.
if command -v python3 >/dev/null; then
	NDROP=25
	d0=$(ip netns exec "$NSB" cat /sys/class/net/"$VB"/statistics/rx_dropped)
	ip netns exec "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(46)
for _ in range(int(sys.argv[2])):
    s.send(frame)
' "$VA" "$NDROP" || fail "sending raw frames in $NSA"
	d1=$(ip netns exec "$NSB" cat /sys/class/net/"$VB"/statistics/rx_dropped)
	[ $((d1 - d0)) -eq "$NDROP" ] || fail "sysfs rx_dropped delta $((d1 - d0)) for $NDROP frames"
	next_sample trigger
	expect rx_dropped "$NDROP" "$line"
	expect rx_packets "$NDROP" "$line"
	ok "rx_dropped delta $(field rx_dropped "$line") = sysfs delta $((d1 - d0)) for $NDROP unhandled frames"
else
	echo "nic_netlink: no python3, the rx_dropped check is skipped"
fi
# Nothing sent: zero (the previous sample is the new baseline).
next_sample trigger
expect rx_packets 0 "$line"
check_delta 37

# Device gone: -ENODEV, the reader carries on.
ip -n "$NSA" link del "$VA" || fail "veth del"
next_sample trigger
expect rc -19 "$line"
ok "deleted device: -ENODEV from the running reader"

# Same name, new ifindex: new baseline (zero deltas), then exact again.
make_veth
next_sample trigger
expect rc 0 "$line"
expect rx_packets 0 "$line"
case $(field note "$line") in
*"new ifindex"*) ;;
*) fail "re-created device: no ifindex note in: $line" ;;
esac
ok "re-created device: new baseline, ifindex $(field ifindex "$line")"
check_delta 250

exec {DRV[1]}>&-
wait "$drv_pid" 2>/dev/null
drv_pid=
echo "nic_netlink: all checks passed"
exit 0
