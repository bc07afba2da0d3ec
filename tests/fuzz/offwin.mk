# Fuzz target for the off-CPU window histogram parser and the window loss
# (owned by solver/offwin).
FUZZERS += build/fuzz/fuzz_offwin
FUZZ_SRCS_fuzz_offwin := solver/offwin.c solver/offwin_piece.c
FUZZ_LIBS_fuzz_offwin := -lm
