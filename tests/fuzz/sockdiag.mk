# Fuzz target for the sock_diag dump parser (owned by daemon/collect/sockdiag).
FUZZERS += build/fuzz/fuzz_sockdiag
FUZZ_SRCS_fuzz_sockdiag := daemon/collect/sockdiag.c
