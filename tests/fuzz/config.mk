# Fuzz target for the configuration loader (owned by daemon/config).
FUZZERS += build/fuzz/fuzz_config
FUZZ_SRCS_fuzz_config := daemon/config.c daemon/serve/sendsrv.c proto/codec.c \
                         common/parse.c common/log.c common/util.c
FUZZ_LIBS_fuzz_config := -liniparser
