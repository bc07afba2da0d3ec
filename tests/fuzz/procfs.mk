# Fuzz target for the collector's /proc parsers (owned by daemon/collect).
FUZZERS += build/fuzz/fuzz_procfs
FUZZ_SRCS_fuzz_procfs := daemon/collect/procfs.c common/util.c
FUZZ_LIBS_fuzz_procfs := -lz
