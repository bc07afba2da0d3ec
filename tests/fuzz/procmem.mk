# Fuzz target for the /proc text of buffer adaptation (owned by
# daemon/collect/procmem and daemon/act/rcvbuf).
FUZZERS += build/fuzz/fuzz_procmem
FUZZ_SRCS_fuzz_procmem := daemon/collect/procmem.c daemon/act/rcvbuf.c daemon/collect/procfs.c \
                          common/util.c
FUZZ_LIBS_fuzz_procmem := -lz
