# Fuzz target for the stream-count advisor's history file (owned by
# daemon/model/streams_hist), with the advisor it restores into.
FUZZERS += build/fuzz/fuzz_streams_hist
FUZZ_SRCS_fuzz_streams_hist := daemon/model/streams_hist.c daemon/model/advisor.c \
                               solver/streams.c solver/streams_fit.c \
                               common/parse.c common/log.c common/util.c
