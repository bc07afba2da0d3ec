# shellcheck shell=bash
# Helpers for the RBUDP integration tests and measurements (sourced, not run).
#
# rbudp_netns_up TAG: two network namespaces joined by a veth pair,
#   sender side $RB_NS_S (10.231.0.1), receiver side $RB_NS_R (10.231.0.2).
#   Names carry TAG and the shell's PID so concurrent runs never collide.
# rbudp_netns_down: delete them (call from an EXIT trap).
# rbudp_snmp_udp NS FIELD: a Udp counter of /proc/net/snmp inside NS.

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

rbudp_netns_down() {
	[ -n "${RB_NS_S:-}" ] && ip netns del "$RB_NS_S" 2>/dev/null
	[ -n "${RB_NS_R:-}" ] && ip netns del "$RB_NS_R" 2>/dev/null
	return 0
}

rbudp_snmp_udp() {
	ip netns exec "$1" awk -v f="$2" '
		$1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Udp:" && hdr { print $col[f]; exit }' /proc/net/snmp
}
