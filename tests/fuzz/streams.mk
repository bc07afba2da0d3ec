# Fuzz target for the samples file of `rxbneckctl streams --samples` (owned
# by ctl/streams_csv), with the fit of what it accepts (solver/streams*).
FUZZERS += build/fuzz/fuzz_streams_csv
FUZZ_SRCS_fuzz_streams_csv := ctl/streams_csv.c solver/streams.c solver/streams_fit.c \
                              common/parse.c common/log.c common/util.c
