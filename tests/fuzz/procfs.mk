# Fuzz target for the collector's /proc text parsers (owned by
# daemon/collect/procfs).
FUZZERS += build/fuzz/fuzz_procfs
FUZZ_SRCS_fuzz_procfs := daemon/collect/procfs.c common/util.c
FUZZ_LIBS_fuzz_procfs := -lz
