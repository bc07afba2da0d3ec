# Fuzz target for the ethtool replies the collector parses itself (owned by
# daemon/collect; the sock_diag dumps: sockdiag.mk).
FUZZERS += build/fuzz/fuzz_netlink
FUZZ_SRCS_fuzz_netlink := daemon/collect/nic.c \
                          common/log.c common/util.c
FUZZ_LIBS_fuzz_netlink := -lnl-genl-3 -lnl-route-3 -lnl-3
