# Fuzz target for the host memory parsers (owned by daemon/collect/procmem).
FUZZERS += build/fuzz/fuzz_procmem
FUZZ_SRCS_fuzz_procmem := daemon/collect/procmem.c daemon/collect/procfs.c common/util.c
FUZZ_LIBS_fuzz_procmem := -lz
