# Fuzz target for the /proc text sockowner reads (owned by daemon/collect/sockowner).
FUZZERS += build/fuzz/fuzz_sockowner
FUZZ_SRCS_fuzz_sockowner := daemon/collect/sockowner.c daemon/collect/procfs.c \
                            common/log.c common/util.c
FUZZ_LIBS_fuzz_sockowner := -lz
