# Fuzz target for rxbneckctl's reading of the daemon's answers and its views
# (owned by ctl/view).
FUZZERS += build/fuzz/fuzz_ctl_view
FUZZ_SRCS_fuzz_ctl_view := $(wildcard ctl/view/*.c) common/vfmt.c
FUZZ_LIBS_fuzz_ctl_view := -ljson-c
