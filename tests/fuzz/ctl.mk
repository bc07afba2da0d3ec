# Fuzz target for rxbneckd's control requests and state-file lines
# (owned by daemon/ctlsrv and daemon/state).
FUZZERS += build/fuzz/fuzz_ctl
FUZZ_SRCS_fuzz_ctl := daemon/ctlsrv.c daemon/state.c daemon/model_inputs.c \
                      common/json.c common/parse.c common/log.c common/util.c
