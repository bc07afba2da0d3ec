# Fuzz target for the RBUDP tools' control-frame and missing-set decoders.
FUZZERS += build/fuzz/fuzz_rbudp
FUZZ_SRCS_fuzz_rbudp := tools/rbudp/wire.c tools/rbudp/bitmap.c
