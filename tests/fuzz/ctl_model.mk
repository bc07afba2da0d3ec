# Fuzz target for rxbneckctl model --from-status: the reader of a flow's
# solved inputs in the daemon's status document (owned by ctl/model_live),
# checked against the solver's own input checks (solver/bneck_model.c).
FUZZERS += build/fuzz/fuzz_ctl_model
FUZZ_SRCS_fuzz_ctl_model := ctl/model_live.c ctl/ctl_client.c $(wildcard ctl/view/*.c) \
                            common/vfmt.c common/parse.c common/util.c $(wildcard solver/*.c)
FUZZ_LIBS_fuzz_ctl_model := -ljson-c -llapacke -llapack -lblas -lm
