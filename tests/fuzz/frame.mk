# Fuzz target for the sender-protocol frame codec (owned by proto/).
FUZZERS += build/fuzz/fuzz_frame
FUZZ_SRCS_fuzz_frame := proto/codec.c
