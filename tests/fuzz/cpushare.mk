# Fuzz target for the kernel text the effective CPU count reads (owned by
# daemon/collect/cpushare).
FUZZERS += build/fuzz/fuzz_cpushare
FUZZ_SRCS_fuzz_cpushare := daemon/collect/cpushare.c daemon/collect/procfs.c common/util.c
FUZZ_LIBS_fuzz_cpushare := -lz
