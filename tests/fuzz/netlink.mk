# Fuzz target for the netlink answers the collector parses itself: sock_diag
# dumps and ethtool replies (owned by daemon/collect).
FUZZERS += build/fuzz/fuzz_netlink
FUZZ_SRCS_fuzz_netlink := daemon/collect/sockdiag.c daemon/collect/nic.c \
                          common/log.c common/util.c
FUZZ_LIBS_fuzz_netlink := -lnl-genl-3 -lnl-route-3 -lnl-3
