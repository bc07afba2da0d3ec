# Fuzz target for the TCP connection dump parser (owned by daemon/collect/tcpconn),
# the netlink attributes the stream-count advisor's passive samples read.
FUZZERS += build/fuzz/fuzz_tcpconn
FUZZ_SRCS_fuzz_tcpconn := daemon/collect/tcpconn.c daemon/collect/sockdiag.c
