# Fuzz target for the configuration loader (owned by daemon/config). It links
# iniparser to check that what the loader accepts means the same to it.
FUZZERS += build/fuzz/fuzz_config
FUZZ_SRCS_fuzz_config := daemon/config.c daemon/config_scan.c daemon/config_value.c \
                         daemon/config_list.c \
                         daemon/serve/sendsrv_cidr.c \
                         common/parse.c common/log.c common/util.c
FUZZ_LIBS_fuzz_config := -liniparser
