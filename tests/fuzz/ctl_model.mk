# Fuzz target for rxbneckctl model --from-status: the reader of a flow's
# solved inputs in the daemon's status document (owned by ctl/model_live).
FUZZERS += build/fuzz/fuzz_ctl_model
FUZZ_SRCS_fuzz_ctl_model := ctl/model_live.c ctl/ctl_client.c $(wildcard ctl/view/*.c) \
                            common/vfmt.c common/parse.c common/util.c \
                            solver/offwin.c solver/offwin_piece.c solver/qphase.c
FUZZ_LIBS_fuzz_ctl_model := -ljson-c -lm
